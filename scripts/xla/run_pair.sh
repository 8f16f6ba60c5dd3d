#!/bin/bash
# run_pair.sh MODULE.hlo N [SEED]: random inputs for N ranks (gen_inputs.py),
# then hlo-run under mpirun -np N and xla_run.py on N devices on the same
# inputs, then compare.py (exact).  Files in ${OUT:-/tmp/xla_pair}/<module>.N/.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PY:-$root/build/xla-venv/bin/python}
m=$1 n=$2 seed=${3:-0}
o=${OUT:-/tmp/xla_pair}/$(basename "$m" .hlo).$n
rm -rf "$o"; mkdir -p "$o"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nice -n 19 "$py" "$root/scripts/xla/gen_inputs.py" "$m" --ranks "$n" --out "$o/in" --seed "$seed" || exit 2
nice -n 19 mpirun --oversubscribe -np "$n" "$root/build/hlo-run" "$m" --inputs "$o/in" --outputs "$o/hlo" \
    >"$o/hlo.out" 2>"$o/hlo.err" </dev/null
hrc=$?
nice -n 19 "$py" "$root/scripts/xla/xla_run.py" "$m" --inputs "$o/in" --outputs "$o/xla" --ranks "$n" --time \
    >"$o/xla.out" 2>"$o/xla.err" </dev/null
xrc=$?
echo "== $(basename "$m") at $n ranks: hlo-run rc=$hrc xla_run rc=$xrc; $(grep -o 'compile [0-9.]*' "$o/xla.err")"
[ $hrc -ne 0 ] && head -3 "$o/hlo.err"
[ $xrc -ne 0 ] && head -3 "$o/xla.err"
[ $hrc -eq 0 ] && [ $xrc -eq 0 ] && "$py" "$root/scripts/xla/compare.py" "$o/hlo" "$o/xla" --module "$m" --quiet
