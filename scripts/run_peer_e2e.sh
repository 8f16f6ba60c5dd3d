#!/bin/bash
# run_peer_e2e.sh [HLO-RUN]: XLA's own end-to-end collective tests, run by
# hlo-run on real MPI ranks and compared bit for bit with XLA's values.
#   tests/collectives/peer_e2e/<case>/  (written by scripts/gen_peer_e2e.py
#   from the .expect.md sidecars; see that script for the format)
#     case.txt                   module <path under ../shared/peer-corpus>,
#                                ranks <R>, replace <old>|<new> (applied in
#                                order to a temporary copy of the module: the
#                                upstream template's placeholders), source ...
#     param<p>.rank<r>.npy       the inputs (the same literal on every replica)
#     expected/out<i>.rank<r>.npy  what replica r must produce for leaf i
# Each case runs `mpirun -np R hlo-run <peer module> --inputs <case>
# --outputs <tmp>`; the peer module is read in place from
# ../shared/peer-corpus (relative to the repo root), never copied.  Outputs
# are compared with numpy: same set of files, dtype, shape and bits (NaN
# equals NaN).  A case.txt line "skip <reason>" lists the case as skipped.
# One line per case, then "peer-e2e: N passed, N failed"; exit 1 on any
# failure.  With TALLY set, appends "passed failed" to it.  Without
# ../shared/peer-corpus every case is skipped with a note (exit 0).
set -uo pipefail
export LC_ALL=C
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness peer-e2e
run=$(tool_path "${1:-$root/build/hlo-run}") || exit 2
cases=$root/tests/collectives/peer_e2e
peer=$root/../shared/peer-corpus

if [ ! -d "$peer" ]; then
    echo "skip peer-e2e: ../shared/peer-corpus not found next to the repo (the peer modules are not copied into it)"
    finish --skips-apart
fi
python=/usr/bin/python3
if ! "$python" -c 'import numpy' 2>/dev/null; then
    echo "skip peer-e2e: $python has no numpy (apt-get install python3-numpy)"
    finish --skips-apart
fi

mpi_flags=(--mca mpi_yield_when_idle 1)
# Cases that ran (exit 0) are compared in one numpy pass at the end; the
# others are reported as they happen.  $tmp/results holds one line per case
# in case order: "skip NAME: why", "FAIL NAME: why" or
# "cmp<TAB>NAME<TAB>CASEDIR<TAB>OUTDIR".
: >"$tmp/results"
n=0
for dir in "$cases"/*/; do
    dir=${dir%/}
    name=$(basename "$dir")
    [ -f "$dir/case.txt" ] || continue
    n=$((n + 1))
    module='' ranks='' why_skip=''
    replaces=()
    while read -r key rest; do
        case $key in
            module)  module=$rest ;;
            ranks)   ranks=$rest ;;
            replace) replaces+=("$rest") ;;
            skip)    why_skip=$rest ;;
        esac
    done <"$dir/case.txt"
    if [ -n "$why_skip" ]; then
        echo "skip $name: $why_skip" >>"$tmp/results"
        continue
    fi
    src=$peer/$module
    if [ -z "$module" ] || [ -z "$ranks" ] || [ ! -f "$src" ]; then
        echo "FAIL $name: bad case.txt or missing peer module '${module:-?}'" >>"$tmp/results"
        continue
    fi
    hlo=$src
    if [ ${#replaces[@]} -gt 0 ]; then
        text=$(cat "$src")
        for r in "${replaces[@]}"; do
            old=${r%%|*} new=${r#*|}
            if [[ $text != *"$old"* ]]; then
                echo "FAIL $name: replace '$old' does not occur in $module" >>"$tmp/results"
                continue 2
            fi
            text=${text//"$old"/"$new"}
        done
        hlo=$tmp/$n.hlo
        printf '%s\n' "$text" >"$hlo"
    fi
    out=$tmp/out$n
    mpi_run 60 "$ranks" "$run" "$hlo" --inputs "$dir" --outputs "$out" \
        </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ $rc -ne 0 ]; then
        msg=$(grep -v '^hlo-run: note:' "$tmp/stderr" | grep -m 1 'error' || head -n 1 "$tmp/stderr")
        [ $rc -eq 124 ] && msg="timed out after 60 s"
        echo "FAIL $name: hlo-run exit $rc on $ranks ranks: $msg" >>"$tmp/results"
        continue
    fi
    printf 'cmp\t%s\t%s\t%s\n' "$name" "$dir" "$out" >>"$tmp/results"
done

if ! "$python" - "$tmp/results" <<'EOF' >"$tmp/report" 2>&1; then
import os, sys
import numpy as np

def same_bits(a, b):
    if a.dtype.kind == "f":
        an, bn = np.isnan(a), np.isnan(b)
        if not (an == bn).all():
            return False
        ua = a.view(f"u{a.itemsize}")
        ub = b.view(f"u{b.itemsize}")
        return bool((ua[~an] == ub[~bn]).all())
    return bool((a == b).all())

for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line.startswith("cmp\t"):
        print(line)
        continue
    _, name, case, out = line.split("\t")
    exp_dir = os.path.join(case, "expected")
    want = sorted(os.listdir(exp_dir))
    got = sorted(os.listdir(out)) if os.path.isdir(out) else []
    why = None
    if want != got:
        why = f"output files {got}, expected {want}"
    else:
        for f in want:
            e = np.load(os.path.join(exp_dir, f))
            g = np.load(os.path.join(out, f))
            if e.dtype != g.dtype or e.shape != g.shape:
                why = f"{f}: got {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"
                break
            if not same_bits(e, g):
                why = f"{f}: got {g.tolist()}, expected {e.tolist()}"
                break
    print(f"ok   {name}" if why is None else f"FAIL {name}: {why}")
EOF
    echo "peer-e2e: the numpy comparison failed" >&2
    cat "$tmp/report"
    fail=1
    finish --skips-apart
fi
cat "$tmp/report"
pass=$(grep -c '^ok ' "$tmp/report")
fail=$(grep -c '^FAIL ' "$tmp/report")
skip=$(grep -c '^skip ' "$tmp/report")
finish --skips-apart
