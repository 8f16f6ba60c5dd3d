#!/bin/bash
# fuzz_passes.sh [BUILD-DIR]: hlo-fuzz on every pass, both modes, at 1, 2, 4
# and 8 ranks, then on all nine together (the sound pipeline of all of them
# on each module) at 2 and 4, FUZZ_SECONDS (default 15) per run, seed
# FUZZ_SEED (default: a new one each run, printed).  Findings go to
# BUILD-DIR/fuzz-findings/, a JSON summary per rank count beside them.
# Exit 1 when anything was found.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
secs=${FUZZ_SECONDS:-15}
seed=${FUZZ_SEED:-$(date +%s)}
out=$build/fuzz-findings
passes="flip-ag-dynamic-slice flip-ag-convert flip-ag-reshape flip-ag-binary flip-reduce-convert-add flip-rs-transpose
        ag-combiner rs-combiner ar-combiner"
echo "fuzz-passes: seed $seed, $secs s per pass and rank count, findings under $out"
st=0
for n in 1 2 4 8; do
    for p in $passes; do
        mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$n" "$build/hlo-fuzz" --passes="$p" --pass-mode=both \
            --seconds="$secs" --seed="$seed" --out "$out" --json "$build/fuzz-$p-$n.json" </dev/null |
            grep '^hlo-fuzz:' || st=1
        [ "${PIPESTATUS[0]}" -eq 0 ] || st=1
    done
done
# All nine at once at 2 and 4 ranks: each module is aimed at one pass, and
# then the whole pipeline runs on it in sound mode (every other module with
# --iterate), where the passes meet each other's output.
all=$(echo $passes | tr ' ' ',')
for n in 2 4; do
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$n" "$build/hlo-fuzz" --passes="$all" --pass-mode=both \
        --seconds="$secs" --seed="$seed" --out "$out" --json "$build/fuzz-pipeline-$n.json" </dev/null |
        grep '^hlo-fuzz:' || st=1
    [ "${PIPESTATUS[0]}" -eq 0 ] || st=1
done
[ $st -eq 0 ] && echo "fuzz-passes: nothing found" || echo "fuzz-passes: findings saved under $out"
exit $st
