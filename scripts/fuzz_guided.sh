#!/bin/bash
# fuzz_guided.sh: what coverage feedback buys hlo-fuzz, measured.
# Builds hlocheck into build-guided/ with every basic block of src/passes/
# calling hlo-fuzz's coverage hook (make GUIDED=1), then runs each pass,
# both modes, at FUZZ_RANKS (default 4) ranks, FUZZ_SECONDS (default 30)
# each, seed FUZZ_SEED (default 1), twice: --count-blocks (every module
# drawn afresh, the blocks of the passes counted) and --guided (the recipes
# that reach new blocks kept and mutated).  One line per pass: the blocks
# each run reached, and the modules each ran.  Findings of either go to
# build-guided/fuzz-findings/; exit 1 when anything was found.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
build=build-guided
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
secs=${FUZZ_SECONDS:-30}
seed=${FUZZ_SEED:-1}
ranks=${FUZZ_RANKS:-4}
out=$build/fuzz-findings
mkdir -p "$build"
make --no-print-directory BUILD=$build GUIDED=1 -j"$(nproc)" "$build/hlo-fuzz" >"$build/build.log" 2>&1 ||
    { echo "fuzz-guided: the build failed (see $build/build.log)" >&2; tail -5 "$build/build.log" >&2; exit 2; }
passes="flip-ag-dynamic-slice flip-ag-convert flip-ag-reshape flip-ag-binary flip-reduce-convert-add flip-rs-transpose
        ag-combiner rs-combiner ar-combiner"
echo "fuzz-guided: seed $seed, $ranks ranks, $secs s per pass and run"
printf '%-24s %14s %14s %10s %10s\n' pass "blocks plain" "blocks guided" "modules" "guided"
st=0
total_plain=0 total_guided=0
for p in $passes; do
    declare -A blocks=() modules=()
    for how in count-blocks guided; do
        log=$build/fuzz-$p-$how.log
        mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$ranks" "$build/hlo-fuzz" --passes="$p" \
            --pass-mode=both --seconds="$secs" --seed="$seed" --out "$out" --"$how" </dev/null >"$log" 2>&1
        rc=$?
        [ $rc -eq 0 ] || st=1
        [ $rc -le 1 ] || { echo "fuzz-guided: hlo-fuzz --$how on $p ended with exit $rc (see $log)" >&2; }
        blocks[$how]=$(sed -n 's/^hlo-fuzz --[a-z-]*: \([0-9]*\) blocks.*/\1/p' "$log")
        modules[$how]=$(sed -n 's/^hlo-fuzz: \([0-9]*\) modules.*/\1/p' "$log")
    done
    printf '%-24s %14s %14s %10s %10s\n' "$p" "${blocks[count-blocks]:-?}" "${blocks[guided]:-?}" \
        "${modules[count-blocks]:-?}" "${modules[guided]:-?}"
    total_plain=$((total_plain + ${blocks[count-blocks]:-0}))
    total_guided=$((total_guided + ${blocks[guided]:-0}))
done
echo "fuzz-guided: blocks reached, summed over the passes: $total_plain without feedback, $total_guided with" \
     "(the same blocks may count for several passes)"
[ $st -eq 0 ] && echo "fuzz-guided: nothing found" || echo "fuzz-guided: findings (or errors) under $out and $build/*.log"
exit $st
