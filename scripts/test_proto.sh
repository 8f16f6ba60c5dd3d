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
#     hlo-check as in hlo-opt (run_golden.sh): never a crash or a hang;
#   * writing (hlo-opt -o x.hlo_module.pb, --output-format=proto): every
#     module of the corpus, the pass tests, the peer corpus and the real
#     dumps written, read back and written again gives the same bytes and
#     the same text (one line per set); the committed cases' texts, which
#     are canonical, come back identical; a proto on standard output runs in
#     hlo-run as its text does; a rewrite written as a proto gets the same
#     hlo-check verdict as its text; what has no place in a proto (elided
#     constants, a channel_id of 0) is exit 2 naming the instruction,
#     with an existing output file left as it was;
#   * snapshots replayed (hlo-run --snapshot, one per rank): the cases of
#     tests/ir/snapshot/ (proto_cases.py: within and beyond the exact and
#     transcendental tolerances, two ranks, no result, an argument of the
#     wrong shape) exit as their .want says with its line; hlo-check
#     --inputs takes a snapshot's arguments.
# One line per case, then "proto: N passed, N failed"; exit 1 on any
# failure.  With TALLY set, appends "passed failed" to it.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness proto
export OMPI_MCA_rmaps_base_oversubscribe=1
use_build "${1:-$root/build}" hlo-opt hlo-run hlo-check
cd "$root" || exit 2

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
    mpi_run 60 "$n" "$build/hlo-run" --seed 5 "$pb" >"$tmp/a.out" 2>"$tmp/a.err"
    ra=$?
    mpi_run 60 "$n" "$build/hlo-run" --seed 5 "${pb%%.*}.hlo" >"$tmp/b.out" 2>/dev/null
    mpi_run 60 "$n" "$build/hlo-run" --seed 5 - <"$pb" >"$tmp/c.out" 2>/dev/null
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
mpi_run 60 4 "$build/hlo-check" "$g/replica_groups.hlo" "$g/replica_groups.hlo" >"$tmp/t.out" 2>&1
rt=$?
mpi_run 60 4 "$build/hlo-check" "$g/replica_groups.hlo_module.pb" "$g/replica_groups.hlo" >"$tmp/p.out" 2>&1
rp=$?
mpi_run 60 4 "$build/hlo-check" "$g/replica_groups.hlo" "$g/replica_groups.hlo_module.pb" >"$tmp/q.out" 2>&1
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
TALLY= scripts/ci-gate.sh --build "$build" --out "$tmp/gate-reports" --ranks 1,4 "$tmp/gate" >"$tmp/gate.out" 2>&1
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

# --- Writing ---------------------------------------------------------------

# Each set: write, read, write again; the bytes and the text must hold still.
shared=$(cd "$root/.." && pwd)/shared
roundtrip_set() {   # NAME FILE...
    local name=$1 n=0 same=0 refused=0 first=''
    shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        timeout 20 "$build/hlo-opt" --passes=none "$f" >/dev/null 2>&1 || continue   # not a module we read
        n=$((n + 1))
        timeout 20 "$build/hlo-opt" --passes=none "$f" -o "$tmp/w1.hlo_module.pb" 2>"$tmp/w.err"
        rc=$?
        if [ $rc -ne 0 ]; then
            if [ $rc -eq 2 ] && grep -q "cannot be written as an HloModuleProto: the constant's values are elided" "$tmp/w.err"; then
                refused=$((refused + 1))
                continue
            fi
            first=${first:-"$f: $(grep -m1 error "$tmp/w.err")"}
            continue
        fi
        timeout 20 "$build/hlo-opt" --passes=none "$tmp/w1.hlo_module.pb" >"$tmp/q.hlo" 2>/dev/null &&
        timeout 20 "$build/hlo-opt" --passes=none "$tmp/q.hlo" -o "$tmp/w2.hlo_module.pb" 2>/dev/null &&
        timeout 20 "$build/hlo-opt" --passes=none "$tmp/w2.hlo_module.pb" >"$tmp/r.hlo" 2>/dev/null
        if [ $? -eq 0 ] && cmp -s "$tmp/w1.hlo_module.pb" "$tmp/w2.hlo_module.pb" && cmp -s "$tmp/q.hlo" "$tmp/r.hlo"; then
            same=$((same + 1))
        else
            first=${first:-"$f: written, read and written again, it changed"}
        fi
    done
    if [ $n -eq 0 ]; then
        echo "skip $name: no modules (${1:-none given})"
    elif [ -z "$first" ]; then
        ok "write $name: $same of $n hold still through proto, text, proto ($refused with elided constants refused)"
    else
        bad "write $name" "$first"
    fi
}
roundtrip_set corpus corpus/*/*.hlo
roundtrip_set real-dumps "$shared"/real-dumps/*.hlo
roundtrip_set fuzz-regressions tests/libfuzzer/regressions/*.hlo
# PROTO_QUICK (make asan-subset): the sets above only, the rest being the
# same code on more modules, which the plain build has just taken.
if [ -z "${PROTO_QUICK:-}" ]; then
    roundtrip_set interp-corpus corpus/interp/*/module.hlo
    roundtrip_set pass-tests tests/passes/*/*.hlo
    roundtrip_set peer-corpus "$shared"/peer-corpus/*/*.hlo
fi

# Canonical text (the cases' texts are as XLA prints) comes back identical.
why=
for t in tests/ir/proto/*.hlo; do
    timeout 20 "$build/hlo-opt" --passes=none "$t" >"$tmp/p.hlo" 2>/dev/null
    timeout 20 "$build/hlo-opt" --passes=none --output-format=proto "$t" 2>/dev/null |
        timeout 20 "$build/hlo-opt" --passes=none - >"$tmp/q.hlo" 2>/dev/null
    cmp -s "$tmp/p.hlo" "$tmp/q.hlo" || { why="$t:"$'\n'"$(diff "$tmp/p.hlo" "$tmp/q.hlo" | head -n 6)"; break; }
done
if [ -z "$why" ]; then
    ok "write: the cases' canonical texts come back identical through a proto on standard output"
else
    bad "write: canonical text" "$why"
fi

# A proto on standard output runs as its text does.
m=corpus/aws_neuron_flip_all_gather_dynamic_slice/rewrite_gather_last_dim.hlo
"$build/hlo-opt" --passes=none --output-format=proto "$m" 2>/dev/null >"$tmp/m.pb"
mpi_run 60 2 "$build/hlo-run" --seed 3 - <"$tmp/m.pb" >"$tmp/a.out" 2>/dev/null
ra=$?
mpi_run 60 2 "$build/hlo-run" --seed 3 "$m" >"$tmp/b.out" 2>/dev/null
if [ $ra -eq 0 ] && [ -s "$tmp/a.out" ] && cmp -s "$tmp/a.out" "$tmp/b.out"; then
    ok "write: hlo-opt --output-format=proto | hlo-run - @ 2 gives the text's results"
else
    bad "write: proto on standard output" "hlo-run exit $ra, or its results differ from the text's"
fi

# A rewrite handed back as a proto: hlo-check gives the text pair's verdict.
for spec in aws_neuron_flip_all_gather_convert/rewrite_convert_chain:0 \
            aws_neuron_flip_all_gather_dynamic_slice/unsound_replica_id_index:1; do
    want=${spec##*:} m=corpus/${spec%:*}.hlo
    n=$(sed -n 's/^ranks: *\([0-9]*\).*/\1/p' "${m%.hlo}.expect" | head -n 1)
    n=${n:-2}
    "$build/hlo-opt" "$m" -o "$tmp/in.hlo_module.pb" --passes=none 2>/dev/null
    "$build/hlo-opt" "$tmp/in.hlo_module.pb" -o "$tmp/out.hlo_module.pb" 2>/dev/null
    "$build/hlo-opt" "$m" -o "$tmp/out.hlo" 2>/dev/null
    mpi_run 60 "$n" "$build/hlo-check" "$tmp/in.hlo_module.pb" "$tmp/out.hlo_module.pb" >"$tmp/p.out" 2>&1
    rp=$?
    mpi_run 60 "$n" "$build/hlo-check" "$m" "$tmp/out.hlo" >"$tmp/t.out" 2>&1
    rt=$?
    vp=$(grep -m1 '^hlo-check: [A-Z]' "$tmp/p.out") vt=$(grep -m1 '^hlo-check: [A-Z]' "$tmp/t.out")
    if [ $rp -eq "$want" ] && [ $rt -eq "$want" ] && [ -n "$vp" ] && [ "$vp" = "$vt" ]; then
        ok "write: ${spec%:*} rewritten into a proto @ $n: hlo-check exit $rp as for the texts: $vp"
    else
        bad "write: ${spec%:*} as a proto pair" "exits $rp (proto) $rt (text), want $want: '$vp' '$vt'"
    fi
done

# What has no place in a proto: exit 2 at the instruction; -o left alone.
printf 'kept\n' >"$tmp/kept.hlo_module.pb"
printf 'HloModule e\n\nENTRY %%main {\n  %%c = f32[4] constant({...})\n  ROOT %%n = f32[4] negate(%%c)\n}\n' >"$tmp/elided.hlo"
printf 'HloModule a, replica_count=2\n\n%%add {\n  %%x = f32[] parameter(0)\n  %%y = f32[] parameter(1)\n  ROOT %%s = f32[] add(%%x, %%y)\n}\n\nENTRY %%main {\n  %%p = f32[4] parameter(0)\n  %%s = ((f32[4]), f32[2]) reduce-scatter-start(%%p), replica_groups={{0,1}}, dimensions={0}, to_apply=%%add\n  ROOT %%d = f32[2] reduce-scatter-done(%%s)\n}\n' >"$tmp/async.hlo"
printf 'HloModule c, replica_count=2\n\nENTRY %%main {\n  %%a = f32[2] parameter(0)\n  ROOT %%g = f32[4] all-gather(%%a), channel_id=0, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true\n}\n' >"$tmp/channel0.hlo"
for spec in "elided:4:the constant's values are elided" "channel0:5:channel_id=0\: a proto has no form for it"; do
    IFS=: read -r name line what <<<"$spec"
    timeout 20 "$build/hlo-opt" --passes=none "$tmp/$name.hlo" -o "$tmp/kept.hlo_module.pb" >/dev/null 2>"$tmp/e.txt"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "^$tmp/$name.hlo:$line:[0-9]*: error: %.*cannot be written as an HloModuleProto: $what" "$tmp/e.txt" &&
       [ "$(cat "$tmp/kept.hlo_module.pb")" = kept ]; then
        ok "write: $name refused at $name.hlo:$line, exit 2, the existing output kept"
    else
        bad "write: $name" "exit $rc: $(head -n 1 "$tmp/e.txt")"
    fi
done

# XLA's short async form: written with the computation XLA's parser makes
# for it (async-start calls=%async_wrapped), it runs as the text does.
timeout 20 "$build/hlo-opt" --passes=none "$tmp/async.hlo" -o "$tmp/async.hlo_module.pb" 2>/dev/null
timeout 20 "$build/hlo-opt" --passes=none "$tmp/async.hlo_module.pb" >"$tmp/async.out" 2>/dev/null
mpi_run 60 2 "$build/hlo-run" --seed 4 "$tmp/async.hlo_module.pb" >"$tmp/a.out" 2>/dev/null
ra=$?
mpi_run 60 2 "$build/hlo-run" --seed 4 "$tmp/async.hlo" >"$tmp/b.out" 2>/dev/null
if [ $ra -eq 0 ] && [ -s "$tmp/a.out" ] && cmp -s "$tmp/a.out" "$tmp/b.out" &&
   grep -q 'async-start(%p), calls=%async_wrapped' "$tmp/async.out" &&
   grep -q 'ROOT %reduce-scatter = f32\[2\]{0} reduce-scatter(%async_param)' "$tmp/async.out"; then
    ok "write: reduce-scatter-start/-done become async-start calling %async_wrapped; hlo-run @ 2 as the text"
else
    bad "write: the short async form" "hlo-run exit $ra; the proto reads as:"$'\n'"$(head -n 20 "$tmp/async.out")"
fi

# --- Snapshots replayed ------------------------------------------------------

# Each case of tests/ir/snapshot/: its exit status and a line it prints.
for want in tests/ir/snapshot/*.want; do
    base=${want%.want} name=$(basename "${want%.want}")
    status=$(head -n 1 "$want") line=$(sed -n 2p "$want")
    if [ -f "$base.snapshot.pb" ]; then
        n=1
        timeout 30 "$build/hlo-run" --snapshot "$base.snapshot.pb" >"$tmp/s.out" 2>&1
        rc=$?
    else
        n=$(find tests/ir/snapshot -name "$name.rank*.snapshot.pb" | wc -l)
        files=$(seq 0 $((n - 1)) | sed "s|.*|$base.rank&.snapshot.pb|" | paste -sd, -)
        mpi_run 60 "$n" "$build/hlo-run" --snapshot "$files" >"$tmp/s.out" 2>&1
        rc=$?
    fi
    if [ $rc -eq "$status" ] && grep -qF -- "$line" "$tmp/s.out"; then
        ok "snapshot $name @ $n: exit $rc, $(grep -m1 -F -- "$line" "$tmp/s.out" | cut -c1-90)"
    else
        bad "snapshot $name @ $n" "exit $rc (want $status), want the line '$line' in:"$'\n'"$(head -n 8 "$tmp/s.out")"
    fi
done

# A snapshot records one device's run: one per rank, the same program in each.
s0=tests/ir/snapshot/two_ranks.rank0.snapshot.pb
mpi_run 60 2 "$build/hlo-run" --snapshot "$s0" >"$tmp/s.out" 2>&1
r1=$?
mpi_run 60 2 "$build/hlo-run" --snapshot "$s0,tests/ir/snapshot/add.snapshot.pb" >"$tmp/t.out" 2>&1
r2=$?
timeout 30 "$build/hlo-run" --snapshot tests/ir/proto/add_f32.hlo_module.pb >"$tmp/u.out" 2>&1
r3=$?
if [ $r1 -eq 2 ] && grep -q 'gives 1 snapshot for 2 ranks' "$tmp/s.out" && [ $r2 -eq 2 ] &&
   grep -q 'snapshots hold different modules' "$tmp/t.out" && [ $r3 -eq 2 ] &&
   grep -q 'is HloModuleProto, not an HloSnapshot' "$tmp/u.out"; then
    ok "snapshot: one for two ranks, two of different programs and a module that is none: exit 2 each"
else
    bad "snapshot usage" "exits $r1 $r2 $r3: $(head -n 1 "$tmp/s.out") | $(grep -m1 error "$tmp/t.out") | $(head -n 2 "$tmp/u.out")"
fi

# hlo-check takes a snapshot's arguments as its inputs (one trial).
sed 's/add(%x, %c)/multiply(%x, %c)/' tests/ir/proto/add_f32.hlo >"$tmp/mul.hlo"
timeout 30 "$build/hlo-check" --inputs tests/ir/snapshot/add.snapshot.pb tests/ir/proto/add_f32.hlo "$tmp/mul.hlo" \
    >"$tmp/c.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'trial 0 (given inputs), rank 0, output 0, element \[0\]: before 1.5, after 0.5' "$tmp/c.out"; then
    ok "hlo-check --inputs SNAPSHOT: the recorded arguments (x[0] = 0.5): before 1.5, after 0.5, exit 1"
else
    bad "hlo-check --inputs SNAPSHOT" "exit $rc: $(grep -m1 -E 'difference|error' "$tmp/c.out")"
fi

finish
