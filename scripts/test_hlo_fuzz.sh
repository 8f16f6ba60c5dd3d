#!/bin/bash
# test_hlo_fuzz.sh [BUILD-DIR]: hlo-fuzz end to end under mpirun.
#  * a fixed-seed slice (HLO_FUZZ_SLICE, 30, modules per pass, both modes, at 2 and 4 ranks)
#    of every pass finds nothing on the passes as they are;
#  * the same seed and index give the same module; another seed another;
#  * planted bugs are found: one that changes values, one that changes only
#    what the matcher accepts, a pass that crashes and one that hangs (each
#    built by scripts/mutation_test.py from one mutated file); a finding is
#    saved with the module, the rewritten one, the recipe with each site's
#    expectation, the one site that shows it, and a command that replays it
#    (exit 1 with the bug, 0 without);
#  * --json parses and adds up; bad usage is exit 2;
#  * --recipe draws the module its draws give; a bad draw is exit 2 with its
#    place; --guided in a build without coverage hooks says how to get one;
#  * make fuzz-coverage's accounting of untaken branches names those no
#    entry of docs/fuzz-coverage.md covers, stale entries and wrong counts.
# One line per case, closing "hlo-fuzz: N passed, N failed"; TALLY support.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness hlo-fuzz
use_build "${1:-$root/build}"
fuzz=$build/hlo-fuzz
py=/usr/bin/python3
mpi_flags=(--mca mpi_yield_when_idle 1)

bad_context() { sed 's/^/    /' "$tmp/out" "$tmp/err" | tail -n 8; }
mpi() {
    local n=$1
    shift
    mpi_run 600 "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
}

passes="flip-ag-dynamic-slice flip-ag-convert flip-ag-reshape flip-ag-binary flip-reduce-convert-add flip-rs-transpose
        ag-combiner rs-combiner ar-combiner"

# ---- the slice: nothing found on the real passes (HLO_FUZZ_SLICE modules
# per pass and rank count: 30, or fewer where the build is slow, as under
# ASan in make test's asan-subset)
slice=${HLO_FUZZ_SLICE:-30}
for p in $passes; do
    for n in 2 4; do
        mpi "$n" "$fuzz" --passes="$p" --count="$slice" --seed=7 --out "$tmp/f-$p-$n"
        st=$?
        if [ $st -eq 0 ] && grep -q "$slice modules on $n ranks.*: 0 findings" "$tmp/out"; then
            ok "$p at $n ranks: $slice modules, 0 findings"
        else
            bad "$p at $n ranks" "exit $st"
        fi
    done
done

# ---- determinism
mpi 1 "$fuzz" --passes=default --index=5 --seed=3 --print && cp "$tmp/out" "$tmp/a.hlo"
mpi 1 "$fuzz" --passes=default --index=5 --seed=3 --print && cp "$tmp/out" "$tmp/b.hlo"
mpi 1 "$fuzz" --passes=default --index=5 --seed=4 --print && cp "$tmp/out" "$tmp/c.hlo"
if cmp -s "$tmp/a.hlo" "$tmp/b.hlo" && ! cmp -s "$tmp/a.hlo" "$tmp/c.hlo" && grep -q "^// site 0:" "$tmp/a.hlo" &&
   "$build/hlo-opt" --passes=none "$tmp/a.hlo" >/dev/null 2>&1; then
    ok "--print: same seed and index, same module (a valid one, recipe as comments); another seed, another"
else
    bad "--print determinism" "modules differ or do not parse"
fi

# ---- planted bugs
mutant() {  # mutant NAME-SUBSTRING [flags for mutation_test.py]
    local what=$1
    shift
    rm -rf "$tmp/mut"
    $py "$root/scripts/mutation_test.py" --build "$build" --out "$tmp/mut" --only "$what" "$@" >"$tmp/out" 2>"$tmp/err"
}
for m in "the new all-gather drops its channel_id" "power joins the nine binaries" \
         "sound mode takes narrowing converts" "the new scatter dim is perm"; do
    if mutant "$m" --count 100 && grep -q "^FOUND" "$tmp/out"; then
        ok "planted bug found: $m"
    else
        bad "planted bug: $m" "not found"
    fi
done

# The last finding's directory, from the channel_id mutant, replayed.
mutant "the new all-gather drops its channel_id" --count 40
d=$(ls -d "$tmp"/mut/findings/flip-ag-convert-* 2>/dev/null | head -n 1)
if [ -n "$d" ] && [ -s "$d/before.hlo" ] && [ -s "$d/after.hlo" ] && grep -q "expect: faithful" "$d/recipe.txt" &&
   grep -q "^findings:" "$d/recipe.txt" && grep -q "hlo-fuzz --passes=flip-ag-convert" "$d/command.txt"; then
    ok "a finding is saved with before.hlo, after.hlo, recipe.txt (expectations, findings) and command.txt"
else
    bad "finding directory" "${d:-none} incomplete"
fi
replay=$(grep "hlo-fuzz --passes" "$d/command.txt" 2>/dev/null | sed 's/^mpirun --oversubscribe -np \([0-9]*\) hlo-fuzz/\1/')
n=${replay%% *} args=${replay#* }
mpi "$n" "$tmp/mut/hlo-fuzz-mutant" $args --out "$tmp/replay"
st_mut=$?
mpi "$n" "$fuzz" $args --out "$tmp/replay2"
st_real=$?
if [ -n "$replay" ] && [ $st_mut -eq 1 ] && [ $st_real -eq 0 ]; then
    ok "command.txt replays the finding: exit 1 with the bug, 0 on the real pass"
else
    bad "replay" "mutant exit $st_mut, real exit $st_real (${replay:-no command})"
fi
if ls "$tmp"/mut/findings/*/site.hlo >/dev/null 2>&1 &&
   grep -q "shrunk: site [0-9]* alone" "$tmp"/mut/findings/*/recipe.txt; then
    ok "a finding is cut to the one site that shows it (site.hlo)"
else
    bad "site shrink" "no site.hlo"
fi

# A pass that leaves an invalid module: hlo-fuzz saves it and blames the
# pass; hlo-opt (with the same bug) exits 3 naming the pass, not the input.
mutant "the new scatter dim is perm" --count 40
d=$(grep -l "pass-error" "$tmp"/mut/findings/*/recipe.txt 2>/dev/null | head -n 1)
d=${d%/recipe.txt}
"$tmp/mut/hlo-fuzz-mutant-opt" --passes=flip-rs-transpose "$d/before.hlo" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ -n "$d" ] && [ -s "$d/after.hlo" ] && [ $st -eq 3 ] &&
   grep -q "^error: pass aws_neuron_flip_reduce_scatter_transpose (#104) left an invalid module, a bug in the pass" "$tmp/err"; then
    ok "a pass that leaves an invalid module: saved, and hlo-opt exits 3 naming the pass"
else
    bad "invalid module after a pass" "exit $st, ${d:-no pass-error finding}"
fi

for m in crashes hangs; do
    if mutant "the pass $m" --count 3 --pass-timeout 1 && grep -q "^FOUND" "$tmp/out" &&
       grep -rq "$([ $m = crashes ] && echo crash: || echo hang:)" "$tmp"/mut/findings/*/recipe.txt; then
        ok "a pass that $m is a finding, and the run goes on"
    else
        bad "pass that $m" "not reported"
    fi
done

# ---- JSON and usage
mpi 2 "$fuzz" --passes=flip-ag-convert,ag-combiner --count=6 --json="$tmp/f.json" --out "$tmp/fj"
if $py -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert j['modules'] == 6 and j['findings'] == 0 and j['ranks'] == 2
assert sum(p['modules'] for p in j['passes']) == 12      # 2 passes x 2 modes, 3 modules each
assert {p['mode'] for p in j['passes']} == {'faithful', 'sound'}
" "$tmp/f.json" 2>"$tmp/err"; then
    ok "--json parses and adds up"
else
    bad "--json" "$(cat "$tmp/err")"
fi
# ---- recipes of draws (--recipe replays a --guided finding's draws.txt)
printf 'stream 0: 0 1 2\nstream 1: 5 5 5 5 5 5 5 5\n' >"$tmp/draws.txt"
mpi 1 "$fuzz" --passes=flip-ag-convert --index=5 --seed=3 --print --recipe="$tmp/draws.txt" && cp "$tmp/out" "$tmp/r1.hlo"
mpi 1 "$fuzz" --passes=flip-ag-convert --index=5 --seed=3 --print && cp "$tmp/out" "$tmp/r0.hlo"
if [ -s "$tmp/r1.hlo" ] && ! cmp -s "$tmp/r0.hlo" "$tmp/r1.hlo" && "$build/hlo-opt" --passes=none "$tmp/r1.hlo" >/dev/null 2>&1; then
    ok "--recipe: the module its draws give, a valid one, not the one seed and index alone give"
else
    bad "--recipe" "no module, an invalid one, or the plain one"
fi
printf 'stream 0: 1\nstream 3: 12 zz\n' >"$tmp/bad-draws.txt"
mpi 2 "$fuzz" --passes=flip-ag-convert --index=5 --recipe="$tmp/bad-draws.txt"
st=$?
if [ $st -eq 2 ] && grep -q "bad-draws.txt:2:14: error: a draw is a hexadecimal number" "$tmp/err"; then
    ok "--recipe with a bad draw: exit 2 at its line and column"
else
    bad "--recipe with a bad draw" "exit $st"
fi
mpi 2 "$fuzz" --passes=flip-ag-convert --count=1 --guided
st=$?
if [ $st -eq 2 ] && grep -q "make fuzz-guided" "$tmp/err"; then
    ok "--guided without the coverage hooks: exit 2 naming make fuzz-guided"
else
    bad "--guided in a plain build" "exit $st"
fi

for args in "--passes=no-such-pass" "--trials=0" "module.hlo" "--print" "--pass-mode=both-ways" "--recipe=x.txt" \
            "--index=1 --recipe=x.txt --count-blocks"; do
    mpi 2 "$fuzz" $args --count=1
    st=$?
    if [ $st -eq 2 ] && [ -s "$tmp/err" ]; then ok "bad usage '$args': exit 2"; else bad "usage '$args'" "exit $st"; fi
done

# ---- the coverage accounting (scripts/coverage_report.py --accounted):
# a gcovr report of one file with three untaken branches on two lines,
# against lists that account for them, miss one, hold a stale entry, or
# count wrong.
cat >"$tmp/cov.json" <<'JSON'
{"files": [{"file": "src/passes/x.c", "functions": [{"name": "f", "lineno": 1, "execution_count": 1}],
  "lines": [{"line_number": 2, "count": 1, "branches": [{"count": 0}, {"count": 3}, {"count": 0}]},
            {"line_number": 3, "count": 1, "branches": [{"count": 1}, {"count": 0}]},
            {"line_number": 9, "count": 1, "branches": [{"count": 1}, {"count": 1}]}]}]}
JSON
account() {     # account NAME WANT-EXIT WANT-TEXT ENTRY...
    local name=$1 want=$2 text=$3
    shift 3
    printf '%s\n' "$@" >"$tmp/doc.md"
    $py "$root/scripts/coverage_report.py" "$tmp/cov.json" --accounted "$tmp/doc.md" >"$tmp/out" 2>"$tmp/err"
    local st=$?
    if [ $st -eq "$want" ] && grep -q -- "$text" "$tmp/out"; then ok "coverage accounting: $name"; else bad "coverage accounting: $name" "exit $st"; fi
}
account "every branch accounted for, one line split by #k" 0 "3 of 3 untaken branches, by 3 entries; 1 of them reachable" \
    '- `src/passes/x.c:2#2` f, 1 branch: reachable: a module reaches it' \
    '- `src/passes/x.c:2` f, 1 branch: out-of-memory: an allocation fails' \
    '- `src/passes/x.c:3` f, 1 branch: unreachable: the verifier refuses it'
account "a branch no entry accounts for is named" 1 "x.c:3: branch 1 of 2 never taken" \
    '- `src/passes/x.c:2` f, 2 branches: unreachable: both'
account "an entry whose branches are taken now is stale" 1 "stale entry" \
    '- `src/passes/x.c:2-3` f, 3 branches: unreachable: all three' \
    '- `src/passes/x.c:9` f, 1 branch: unreachable: taken since'
account "an entry that counts wrong is named" 1 "says 1 branches" \
    '- `src/passes/x.c:2-3` f, 1 branch: unreachable: one, it says'

finish
