#!/bin/bash
# precision-sweep.sh [BUILD-DIR]: `make precision`.  The flip-reduce-convert-add
# (#102) demo, the transformer training step of scripts/make_transformer_step.py,
# checked at 2, 4, 8 and 16 ranks (oversubscribed) for the uniform, normal and
# wide input distributions.  From each run's --json it takes the accumulation
# sites' error against the exact sum, in f32 ulps: before the rewrite the
# gradients accumulate in bf16 (the reduce-scatter's own type), after it in
# f32.  Writes BUILD/precision/sweep.dat (ranks dist max_before max_after
# mean_before mean_after, the max and mean over the sites, one block per
# distribution) and, with gnuplot
# (installed by scripts/install-deps.sh gnuplot-nox), precision.svg and
# precision.png: max and mean error versus rank count, one line per
# distribution and side, log scale.  Exit 1 if a check fails.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$build/precision
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
python3 "$root/scripts/make_transformer_step.py" "$out" 2 4 8 16 || exit 1
: >"$out/runs.txt"
for n in 2 4 8 16; do
    for dist in uniform normal wide; do
        json=$out/step_${n}dev.$dist.json
        if ! timeout 600 mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np $n "$build/hlo-check" \
                --passes=default --trials=4 --dist=$dist --json="$json" "$out/transformer_step_${n}dev.hlo" \
                </dev/null >"$out/step_${n}dev.$dist.txt" 2>&1; then
            echo "precision-sweep: the check at $n ranks ($dist) failed: $out/step_${n}dev.$dist.txt" >&2
            exit 1
        fi
        echo "$n $dist $json" >>"$out/runs.txt"
    done
done
python3 - "$out/runs.txt" >"$out/sweep.dat" <<'PY' || exit 1
import json, sys
print("# ranks dist max_before max_after mean_before mean_after  (f32 ulps at the terms' magnitude; max and mean over the sites)")
print("# one block per distribution (gnuplot's index): uniform, normal, wide")
runs = [l.split() for l in open(sys.argv[1])]
order = ["uniform", "normal", "wide"]
runs.sort(key=lambda r: (order.index(r[1]), int(r[0])))
last = None
for n, dist, path in runs:
    if last is not None and dist != last:
        print("\n")
    last = dist
    sites = [s for s in json.load(open(path))["sites"] if s["measured"]]
    if not sites:
        sys.exit(f"precision-sweep: {path}: no measured site")
    mx = lambda side: max(s[side]["max_ulp"] for s in sites)
    mn = lambda side: sum(s[side]["mean_ulp"] for s in sites) / len(sites)
    print(n, dist, mx("error_before"), mx("error_after"), mn("error_before"), mn("error_after"))
PY
cat "$out/sweep.dat"
if ! command -v gnuplot >/dev/null; then
    echo "precision-sweep: gnuplot is missing (scripts/install-deps.sh gnuplot-nox): no picture" >&2
    exit 1
fi
# A zero error has no place on a log axis: it is drawn at the floor.
plot() {
    cat <<GP
set multiplot layout 1,2 title "flip-reduce-convert-add on the transformer step: gradient accumulation error vs ranks"
set xlabel "ranks (devices in the reduce-scatter group)"
set ylabel "error, f32 ulps at the terms' magnitude (0 drawn at 1e-6)"
set logscale xy
set xrange [1.6:20]
set xtics (2, 4, 8, 16)
set format y "10^{%L}"
set key below font ",9" maxrows 3
set grid
lo(x) = x > 1e-6 ? x : 1e-6
f = "$out/sweep.dat"
D = "uniform normal wide"
set title "max over elements"
plot for [i=1:3] f index (i-1) using 1:(lo(\$3)) with linespoints lw 2 lc i pt 7 title "bf16 accumulation (before), ".word(D, i), \
     for [i=1:3] f index (i-1) using 1:(lo(\$4)) with linespoints lw 2 lc i dt 2 pt 6 title "f32 accumulation (after), ".word(D, i)
set title "mean over elements"
plot for [i=1:3] f index (i-1) using 1:(lo(\$5)) with linespoints lw 2 lc i pt 7 title "bf16 accumulation (before), ".word(D, i), \
     for [i=1:3] f index (i-1) using 1:(lo(\$6)) with linespoints lw 2 lc i dt 2 pt 6 title "f32 accumulation (after), ".word(D, i)
unset multiplot
GP
}
{ echo 'set terminal svg size 1400,680 dynamic'; echo "set output '$out/precision.svg'"; plot; } | gnuplot || exit 1
{ echo 'set terminal pngcairo size 1400,680'; echo "set output '$out/precision.png'"; plot; } | gnuplot || exit 1
echo "precision-sweep: $out/precision.svg, $out/precision.png"
