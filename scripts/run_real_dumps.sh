#!/bin/bash
# run_real_dumps.sh [HLO-RUN]: the real programs of ../shared/real-dumps that
# its README marks interp or interp+id, run by hlo-run at their device counts
# on hlo-run's seeded random inputs (--outputs to a temporary directory, so
# nothing big is printed); each must exit 0 and write an output per rank.
#   - The list, device counts and verdicts are read from the README's table;
#     a device count of "any" runs at 2, 8 and 32 ranks.
#   - A module listed in scripts/known-invalid-inputs.txt is skipped with the
#     error recorded there.
#   - A module whose .src.md says "N partitions" runs as --replicas 1
#     --partitions N (the header has no counts; the collectives use global
#     device ids).
#   - A module that takes partition-id as an entry parameter (the Neuron
#     bridge lowers `partition-id` to `%partition-id.2 = u32[] parameter(7)`)
#     gets its inputs from numpy via --inputs: that parameter = the rank's
#     partition id as a u32 scalar, the others random (seeded).
#   - 32-rank runs need --mca mpi_yield_when_idle 1 on a small machine and
#     about 25 MB per rank; they are skipped when less than 4 GB is free.
# One line per run (ok / FAIL / skip, exit status, seconds), skips counted on
# their own line, then "real-dumps: N passed, N failed"; exit 1 on any
# failure.  With TALLY set, appends "passed failed" to it.  Without
# ../shared/real-dumps everything is skipped with a note.
set -uo pipefail
export LC_ALL=C

root=$(cd "$(dirname "$0")/.." && pwd)
run=${1:-$root/build/hlo-run}
[ -x "$run" ] || { echo "real-dumps: no $run: build first (make)" >&2; exit 2; }
run=$(cd "$(dirname "$run")" && pwd)/$(basename "$run")
dumps=$root/../shared/real-dumps
invalid=$root/scripts/known-invalid-inputs.txt
limit=60    # seconds per run

pass=0 fail=0 skip=0
finish() {
    [ -n "${TALLY:-}" ] && echo "$pass $fail" >>"$TALLY"
    [ $skip -gt 0 ] && echo "real-dumps: $skip skipped"
    echo "real-dumps: $pass passed, $fail failed"
    [ $fail -eq 0 ]
    exit
}
if [ ! -f "$dumps/README.md" ]; then
    echo "skip real-dumps: ../shared/real-dumps not found next to the repo"
    finish
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun_cmd=(mpirun --oversubscribe --mca mpi_yield_when_idle 1)
[ "$(id -u)" -eq 0 ] && mpirun_cmd+=(--allow-run-as-root)
python=/usr/bin/python3

# "file devices" for every table row whose verdict cell is interp or interp+id.
awk -F'|' '/^\| *[A-Za-z0-9_]+\.hlo *\|/ {
    f = $2; d = $5; v = $8
    gsub(/ /, "", f); gsub(/^ +| +$/, "", v)
    if (v != "interp" && v != "interp+id") next
    if (match(d, /[0-9]+/)) d = substr(d, RSTART, RLENGTH)
    else if (d ~ /any/) d = "any"
    else d = "?"
    print f, d
}' "$dumps/README.md" >"$tmp/list"
[ -s "$tmp/list" ] || { echo "FAIL real-dumps: no interp modules found in $dumps/README.md"; fail=1; finish; }

# gen_inputs MODULE DIR RANKS PARTITIONS PID_PARAM: .npy inputs for every entry
# parameter, random except parameter PID_PARAM = partition id of the rank.
gen_inputs() {
    "$python" - "$@" <<'EOF'
import re, sys
import numpy as np
module, out, ranks, parts, pid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
text = open(module).read()
entry = text[text.index("\nENTRY"):]
entry = entry[:entry.index("\n}")]
params = {}
for m in re.finditer(r"=\s*([a-z]+[0-9]*)\[([0-9,]*)\](?:\{[0-9,]*\})?\s+parameter\((\d+)\)", entry):
    t, dims, p = m.group(1), m.group(2), int(m.group(3))
    params[p] = (t, tuple(int(x) for x in dims.split(",") if x))
if sorted(params) != list(range(len(params))) or pid not in params:
    sys.exit(f"entry parameters {sorted(params)}: cannot generate inputs")
for r in range(ranks):
    g = np.random.default_rng([r, 12345])
    for p, (t, shape) in params.items():
        if p == pid:
            assert t == "u32" and shape == (), (t, shape)
            a = np.array(r % parts, dtype=np.uint32)
        elif t in ("f32", "f64", "f16"):
            a = g.uniform(-1, 1, shape).astype({"f32": np.float32, "f64": np.float64, "f16": np.float16}[t])
        elif t == "bf16":   # written as f32 values that bf16 holds exactly
            a = g.uniform(-1, 1, shape).astype(np.float32).reshape(-1)
            a = (a.view(np.uint32) & 0xFFFF0000).view(np.float32).reshape(shape)
        elif t == "pred":
            a = g.integers(0, 2, shape).astype(bool)
        elif re.fullmatch(r"[su](8|16|32|64)", t):
            a = g.integers(0, 8, shape).astype(("int" if t[0] == "s" else "uint") + t[1:])
        else:
            sys.exit(f"parameter {p}: type {t} not handled")
        np.save(f"{out}/param{p}.rank{r}.npy", a)
EOF
}

mem_avail_mb() { awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo; }

n=0
while read -r file devs; do
    name=${file%.hlo}
    hlo=$dumps/$file
    if [ ! -f "$hlo" ]; then
        fail=$((fail + 1)); echo "FAIL $name: $file listed in the README but missing"; continue
    fi
    known=$(awk -F'\t' -v f="../shared/real-dumps/$file" '$1 == f { print $2 }' "$invalid" 2>/dev/null)
    if [ -n "$known" ]; then
        skip=$((skip + 1))
        echo "skip $name ($devs ranks): known invalid input (scripts/known-invalid-inputs.txt): ${known//\{\}/$file}"
        continue
    fi
    case $devs in
        any) counts="2 8 32" ;;
        ''|*[!0-9]*) fail=$((fail + 1)); echo "FAIL $name: device count '$devs' not understood"; continue ;;
        *) counts=$devs ;;
    esac
    parts=$(sed -n 's/.*\*\*Devices:\*\* *\([0-9][0-9]*\) partitions.*/\1/p' "$dumps/$name.src.md" 2>/dev/null | head -n 1)
    pid=$(sed -n '/^ENTRY/,/^}/s/.*%partition-id[.0-9]* = u32\[\] parameter(\([0-9][0-9]*\)).*/\1/p' "$hlo" | head -n 1)
    for np_ in $counts; do
        n=$((n + 1))
        what="$np_ ranks"
        flags=()
        p=1
        if [ -n "$parts" ]; then
            if [ "$parts" -ne "$np_" ]; then
                skip=$((skip + 1)); echo "skip $name ($what): its .src.md says $parts partitions"; continue
            fi
            flags+=(--replicas 1 --partitions "$parts")
            p=$parts
            what="$what, $parts partitions"
        fi
        if [ "$np_" -gt 8 ] && [ "$(mem_avail_mb)" -lt 4096 ]; then
            skip=$((skip + 1))
            echo "skip $name ($what): only $(mem_avail_mb) MB available; $np_ oversubscribed ranks want about 4 GB"
            continue
        fi
        if [ -n "$pid" ]; then
            mkdir -p "$tmp/in$n"
            if ! gen_inputs "$hlo" "$tmp/in$n" "$np_" "$p" "$pid" 2>"$tmp/generr"; then
                fail=$((fail + 1)); echo "FAIL $name ($what): input generation: $(tail -n 1 "$tmp/generr")"; continue
            fi
            flags+=(--inputs "$tmp/in$n")
            what="$what, param$pid = partition id"
        fi
        label="$name ($what)"
        out=$tmp/out$n
        t0=$(date +%s.%N)
        timeout $limit "${mpirun_cmd[@]}" -np "$np_" "$run" "$hlo" "${flags[@]}" --outputs "$out" \
            </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
        rc=$?
        secs=$(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }')
        nfiles=$(find "$out" -name '*.npy' 2>/dev/null | wc -l)
        missing=0
        for ((r = 0; r < np_; r++)); do [ -f "$out/out0.rank$r.npy" ] || missing=$((missing + 1)); done
        if [ $rc -eq 0 ] && [ $missing -eq 0 ]; then
            pass=$((pass + 1)); echo "ok   $label: exit 0, ${secs} s, $nfiles output files"
        else
            fail=$((fail + 1))
            msg=$(grep -v '^hlo-run: note:' "$tmp/stderr" | grep -m 1 -i 'error' || head -n 1 "$tmp/stderr")
            [ $rc -eq 124 ] && msg="timed out after $limit s"
            [ $rc -eq 0 ] && msg="exit 0 but $missing ranks wrote no out0"
            echo "FAIL $label: exit $rc, ${secs} s: $msg"
        fi
        rm -rf "$out" "$tmp/in$n"
    done
done <"$tmp/list"
finish
