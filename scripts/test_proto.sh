#!/bin/bash
# test_proto.sh [BUILD-DIR]: modules in XLA's binary forms (HloModuleProto,
# HloProto, HloSnapshot), read by every tool, from the cases
# scripts/proto_cases.py builds byte by byte (no XLA needed; with the XLA
# environment, scripts/xla/xla_syntax.py also reads XLA's own proto of
# every corpus module, in make test's xla-cases):
#   * the committed cases are what proto_cases.py writes;
#   * each of tests/ir/proto/ prints through hlo-opt exactly as its HLO text
#     does, with its note (which kind was read, what was not carried);
#   * hlo-run gives the same results on the proto, on the text and on the
#     proto through standard input, at the case's device count;
#   * hlo-check takes a proto before and a text after (and the reverse):
#     the verdict is the one the two texts get, and a text that computes
#     otherwise differs; ci-gate.sh gates a folder of protos;
#   * the broken protos of tests/ir/malformed/ end in exit 2 with their
#     error line (the field path in the place of line:col) in hlo-run and
#     hlo-check as in hlo-opt (run_golden.sh): never a crash or a hang.
# One line per case, then "proto: N passed, N failed"; exit 1 on any
# failure.  With TALLY set, appends "passed failed" to it.
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ -x "$build/hlo-opt" ] && [ -x "$build/hlo-run" ] && [ -x "$build/hlo-check" ] ||
    { echo "proto: no $build/hlo-opt: build first (make)" >&2; exit 2; }
build=$(cd "$build" && pwd)
cd "$root" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
run() { timeout 60 mpirun --oversubscribe -n "$@"; }

if python3 scripts/proto_cases.py --check >"$tmp/check" 2>&1; then
    ok "the committed cases are what scripts/proto_cases.py writes"
else
    bad "proto_cases.py --check" "$(cat "$tmp/check")"
fi

for pb in tests/ir/proto/*.pb; do
    base=${pb%%.*} name=$(basename "$pb")
    timeout 20 "$build/hlo-opt" --passes=none "$pb" >"$tmp/a.out" 2>"$tmp/a.err"
    rc=$?
    timeout 20 "$build/hlo-opt" --passes=none "$base.hlo" >"$tmp/b.out" 2>/dev/null
    if [ $rc -ne 0 ]; then
        bad "$name" "hlo-opt exit $rc: $(head -n 1 "$tmp/a.err")"
    elif ! cmp -s "$tmp/a.out" "$tmp/b.out"; then
        bad "$name" "the proto prints otherwise than its text:"$'\n'"$(diff "$tmp/b.out" "$tmp/a.out" | head -n 10)"
    elif ! cmp -s "$tmp/a.err" "$base.note"; then
        bad "$name" "note: got '$(cat "$tmp/a.err")', want '$(cat "$base.note")'"
    else
        ok "$name: prints as its text, with its note"
    fi
done

# hlo-run: the same results from the proto, the text and standard input.
for spec in add_f32.hlo_module.pb:1 replica_groups.hlo_module.pb:4 while_scheduled.hlo_module.pb:1 \
            add_f32_snapshot.snapshot.pb:2; do
    n=${spec##*:} pb=tests/ir/proto/${spec%:*}
    run "$n" "$build/hlo-run" --seed 5 "$pb" >"$tmp/a.out" 2>"$tmp/a.err"
    ra=$?
    run "$n" "$build/hlo-run" --seed 5 "${pb%%.*}.hlo" >"$tmp/b.out" 2>/dev/null
    run "$n" "$build/hlo-run" --seed 5 - <"$pb" >"$tmp/c.out" 2>/dev/null
    if [ $ra -ne 0 ]; then
        bad "hlo-run $pb @ $n" "exit $ra: $(grep -m1 error "$tmp/a.err")"
    elif ! [ -s "$tmp/a.out" ] || ! cmp -s "$tmp/a.out" "$tmp/b.out" || ! cmp -s "$tmp/a.out" "$tmp/c.out"; then
        bad "hlo-run $pb @ $n" "results differ between the proto, the text and standard input (or none)"
    else
        ok "hlo-run $pb @ $n: the proto, its text and standard input give the same results"
    fi
done

# hlo-check: forms mixed in a pair; the verdict is the texts'.
g=tests/ir/proto
run 4 "$build/hlo-check" "$g/replica_groups.hlo" "$g/replica_groups.hlo" >"$tmp/t.out" 2>&1
rt=$?
run 4 "$build/hlo-check" "$g/replica_groups.hlo_module.pb" "$g/replica_groups.hlo" >"$tmp/p.out" 2>&1
rp=$?
run 4 "$build/hlo-check" "$g/replica_groups.hlo" "$g/replica_groups.hlo_module.pb" >"$tmp/q.out" 2>&1
rq=$?
vt=$(grep -m1 '^hlo-check: [A-Z]' "$tmp/t.out") vp=$(grep -m1 '^hlo-check: [A-Z]' "$tmp/p.out")
vq=$(grep -m1 '^hlo-check: [A-Z]' "$tmp/q.out")
if [ $rt -eq 0 ] && [ $rp -eq 0 ] && [ $rq -eq 0 ] && [ -n "$vt" ] && [ "$vt" = "$vp" ] && [ "$vt" = "$vq" ]; then
    ok "hlo-check: a proto against its text (both ways) @ 4: $vp"
else
    bad "hlo-check proto against text" "exits $rt $rp $rq: '$vt' '$vp' '$vq'"
fi
sed 's/add(%x, %c)/add(%y, %c)/' "$g/add_f32.hlo" >"$tmp/other.hlo"
timeout 20 "$build/hlo-check" "$g/add_f32.hlo_module.pb" "$tmp/other.hlo" >"$tmp/d.out" 2>&1
rd=$?
if [ $rd -eq 1 ]; then
    ok "hlo-check: a proto against a text that computes otherwise: exit 1"
else
    bad "hlo-check proto against a different text" "exit $rd, want 1: $(tail -n 1 "$tmp/d.out")"
fi

# ci-gate (and validate.sh under it) takes a folder of protos.
mkdir -p "$tmp/gate"
cp tests/ir/proto/add_f32.hlo_module.pb tests/ir/proto/replica_groups.hlo_module.pb \
   tests/ir/proto/while_scheduled.hlo_module.pb "$tmp/gate/"
scripts/ci-gate.sh --build "$build" --out "$tmp/gate-reports" --ranks 1,4 "$tmp/gate" >"$tmp/gate.out" 2>&1
rg=$?
if [ $rg -eq 0 ] && grep -q '^validate: 5 passed, 0 failed, 1 skipped' "$tmp/gate.out"; then
    ok "ci-gate: a folder of protos at 1 and 4 ranks: $(grep '^validate:' "$tmp/gate.out")"
else
    bad "ci-gate on protos" "exit $rg: $(tail -n 3 "$tmp/gate.out")"
fi

# Broken protos: exit 2 and the error line in hlo-run and hlo-check, run as
# one rank without mpirun (MPI's singleton: mpirun takes seconds to end a
# job that failed).
for pb in tests/ir/malformed/*.hlo_module.pb; do
    name=$(basename "$pb" .hlo_module.pb)
    want=$(head -n 1 "${pb%.hlo_module.pb}.err")
    why=
    for tool in hlo-run "hlo-check --passes=default"; do
        # shellcheck disable=SC2086
        timeout 20 "$build/"$tool "$pb" >/dev/null 2>"$tmp/e.txt"
        rc=$?
        got=$(grep -m1 -F "error:" "$tmp/e.txt")
        if [ $rc -ne 2 ]; then
            why="$tool exit $rc, want 2: $(head -n 1 "$tmp/e.txt")"
            break
        elif [ "$got" != "$want" ]; then
            why="$tool"$'\n'"  got:  $got"$'\n'"  want: $want"
            break
        fi
    done
    if [ -z "$why" ]; then
        ok "$name: exit 2 in hlo-run and hlo-check, at its field"
    else
        bad "$name" "$why"
    fi
done

echo "proto: $pass passed, $fail failed"
[ -n "${TALLY:-}" ] && echo "$pass $fail" >>"$TALLY"
[ $fail -eq 0 ]
