#!/bin/bash
# sweep_interp.sh [CASE...]: runs corpus/interp/<case>/module.hlo (default: every
# case) on hlo-run and on xla_run.py (one device), one case at a time at
# nice 19, and compares XLA's outputs with hlo-run's (exact) and with the
# case's expected/ (under its compare mode).  Outputs stay in $OUT
# (default /tmp/xla_sweep/<case>/{hlo,xla}); one line per case, then totals.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PY:-$root/build/xla-venv/bin/python}
out=${OUT:-/tmp/xla_sweep}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=($(ls "$root/corpus/interp" | grep -v README))
n_same=0 n_diff=0 n_xerr=0 n_herr=0
for c in "${cases[@]}"; do
    d=$root/corpus/interp/$c
    o=$out/$c
    rm -rf "$o"; mkdir -p "$o"
    nice -n 19 timeout 120 mpirun --oversubscribe -np 1 "$root/build/hlo-run" "$d/module.hlo" \
        --inputs "$d" --outputs "$o/hlo" >/dev/null 2>"$o/hlo.err" </dev/null
    hrc=$?
    s=$(date +%s.%N)
    nice -n 19 timeout 300 "$py" "$root/scripts/xla/xla_run.py" "$d/module.hlo" --inputs "$d" \
        --outputs "$o/xla" --time >/dev/null 2>"$o/xla.err" </dev/null
    xrc=$?
    e=$(date +%s.%N)
    mode=$(cat "$d/compare")
    if [ $xrc -ne 0 ]; then
        n_xerr=$((n_xerr + 1))
        printf 'XLA-ERR  %-48s rc=%d %s\n' "$c" $xrc "$(grep -m1 xla_run "$o/xla.err" | cut -c1-200)"
        continue
    fi
    if [ $hrc -ne 0 ]; then
        n_herr=$((n_herr + 1)); printf 'HLO-ERR  %-48s rc=%d\n' "$c" $hrc; continue
    fi
    "$py" "$root/scripts/xla/compare.py" "$o/hlo" "$o/xla" --module "$d/module.hlo" --quiet --show 4 >"$o/vs_hlo" 2>&1
    r1=$?
    "$py" "$root/scripts/xla/compare.py" "$d/expected" "$o/xla" --module "$d/module.hlo" --mode $mode --quiet --show 4 >"$o/vs_expected" 2>&1
    r2=$?
    t=$(grep -o 'compile [0-9.]*' "$o/xla.err" | cut -d' ' -f2)
    if [ $r1 -eq 0 ]; then
        n_same=$((n_same + 1)); v=SAME
    else
        n_diff=$((n_diff + 1)); v=DIFFER
    fi
    printf '%-8s %-48s vs-expected(%s)=%s compile=%ss wall=%.2fs\n' $v "$c" "$mode" \
        "$([ $r2 -eq 0 ] && echo ok || echo FAIL)" "${t:-?}" "$(echo "$e - $s" | bc)"
done
echo "sweep: $n_same same as hlo-run (exact), $n_diff differ, $n_xerr XLA errors, $n_herr hlo-run errors"
