#!/bin/bash
# run_real_dumps.sh [--local] [BUILD-DIR]: every real program of
# ../shared/real-dumps, at its device count, run and checked.
#   * run: hlo-run on hlo-run's seeded inputs (--outputs to a temporary
#     directory), custom calls the interpreter does not implement run as
#     opaque functions (--opaque-custom-calls), elided constants filled
#     (--fill-elided); it must exit 0 and write an output per rank, or be
#     refused before running for its memory (exit 2, "needs an estimated").
#   * check: hlo-check --passes=default on the same device count; the
#     default pipeline must keep every program equivalent.  A program too big
#     to check whole is checked with --local (only with --local: the MaxText
#     steps take minutes each), each region at its real shapes; regions that
#     need more than this machine has are listed with their need.
#   - Device counts come from the README's table ("any" runs at 2, 8 and
#     32); a module listed in scripts/known-invalid-inputs.txt is skipped
#     with the error recorded there; a module whose .src.md says "N
#     partitions" runs as --replicas 1 --partitions N; a module that takes
#     partition-id as an entry parameter (the Neuron bridge lowers it to
#     `%partition-id.2 = u32[] parameter(7)`) gets numpy inputs with that
#     parameter set to the rank's partition id (hlo-check --inputs).
#   - 32-rank runs need --mca mpi_yield_when_idle 1 on a small machine and
#     are skipped when less than 4 GB is free.
# One line per program and rank count (ok / FAIL / skip, what ran, seconds,
# verdict), then "real-dumps: N passed, N failed"; exit 1 on any failure.
# With TALLY set, appends "passed failed" to it.  Without
# ../shared/real-dumps everything is skipped with a note.
set -uo pipefail
export LC_ALL=C
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness real-dumps

local_too=false
if [ "${1:-}" = --local ]; then
    local_too=true
    shift
fi
use_build "${1:-$root/build}" hlo-run hlo-check
run=$build/hlo-run check=$build/hlo-check opt=$build/hlo-opt
dumps=$root/../shared/real-dumps
invalid=$root/scripts/known-invalid-inputs.txt
limit=300           # seconds for a whole run or check
local_limit=2400    # seconds for a --local check

if [ ! -f "$dumps/README.md" ]; then
    echo "skip real-dumps: ../shared/real-dumps not found next to the repo"
    finish --skips-apart
fi

mpi_flags=(--mca mpi_yield_when_idle 1)
python=/usr/bin/python3

# "file devices" for every row of the README's table.
awk -F'|' '/^\| *[A-Za-z0-9_]+\.hlo *\|/ {
    f = $2; d = $5
    gsub(/ /, "", f)
    if (match(d, /[0-9]+/)) d = substr(d, RSTART, RLENGTH)
    else if (d ~ /any/) d = "any"
    else d = "?"
    print f, d
}' "$dumps/README.md" >"$tmp/list"
[ -s "$tmp/list" ] || { bad real-dumps "no modules found in $dumps/README.md"; finish --skips-apart; }

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
now() { date +%s.%N; }
since() { echo "$1 $(now)" | awk '{ printf "%.1f", $2 - $1 }'; }
# The message of a refusal for memory, cut to its figures.
need_of() { grep -o 'needs an estimated [0-9.]* [kMGTP]*B per rank' "$1" | head -n 1 | sed 's/needs an estimated //'; }

# run_one NAME HLO RANKS FLAGS...: hlo-run; sets run_note, returns 0 ok, 1 failed, 2 too big.
run_one() {
    local name=$1 hlo=$2 np_=$3 rc t0 nfiles missing=0 r
    shift 3
    t0=$(now)
    mpi_run "$limit" "$np_" "$run" "$hlo" "$@" --opaque-custom-calls --fill-elided \
        --outputs "$tmp/out" </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ $rc -eq 2 ] && grep -q 'needs an estimated' "$tmp/stderr"; then
        run_note="too big to run whole ($(need_of "$tmp/stderr"))"
        rm -rf "$tmp/out"
        return 2
    fi
    nfiles=$(find "$tmp/out" -name '*.npy' 2>/dev/null | wc -l)
    for ((r = 0; r < np_; r++)); do [ -f "$tmp/out/out0.rank$r.npy" ] || missing=$((missing + 1)); done
    rm -rf "$tmp/out"
    if [ $rc -eq 0 ] && [ $missing -eq 0 ]; then
        run_note="run $(since "$t0") s, $nfiles outputs"
        return 0
    fi
    run_note=$(grep -v 'note:' "$tmp/stderr" | grep -m 1 -i 'error' || head -n 1 "$tmp/stderr")
    [ $rc -eq 124 ] && run_note="timed out after $limit s"
    [ $rc -eq 0 ] && run_note="exit 0 but $missing ranks wrote no out0"
    run_note="hlo-run exit $rc: $run_note"
    return 1
}

# check_one HLO RANKS FLAGS...: hlo-check --passes=default; sets check_note,
# returns 0 equivalent, 1 failed, 2 too big to check whole.
check_one() {
    local hlo=$1 np_=$2 rc t0
    shift 2
    t0=$(now)
    mpi_run "$limit" "$np_" "$check" --passes=default --trials=2 --fill-elided "$hlo" "$@" \
        </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ $rc -eq 2 ] && grep -q 'needs an estimated' "$tmp/stderr"; then
        check_note="too big to check whole ($(need_of "$tmp/stderr"))"
        return 2
    fi
    local verdict
    verdict=$(grep -m 1 '^hlo-check: [A-Z]' "$tmp/stdout" | sed 's/^hlo-check: //')
    if [ $rc -eq 0 ]; then
        check_note="check: $verdict, $(since "$t0") s"
        grep -q '^opaque custom calls' "$tmp/stdout" &&
            check_note="$check_note, opaque: $(sed -n 's/^opaque custom calls.*one): //p' "$tmp/stdout")"
        return 0
    fi
    check_note="hlo-check exit $rc: ${verdict:-$(grep -m 1 -i error "$tmp/stderr")}"
    [ $rc -eq 124 ] && check_note="hlo-check timed out after $limit s"
    return 1
}

# local_one HLO RANKS FLAGS...: hlo-check --local; sets check_note, returns
# 0 every region equivalent, 3 some regions need more than this machine,
# 1 failed.
local_one() {
    local hlo=$1 np_=$2 rc t0
    shift 2
    t0=$(now)
    mpi_run "$local_limit" "$np_" "$check" --passes=default --local --trials=1 --fill-elided \
        "$hlo" "$@" </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    local regions eq notrun largest
    regions=$(sed -n 's/^hlo-check --local: .*: \([0-9]*\) regions\{0,1\} where they differ$/\1/p' "$tmp/stdout")
    eq=$(grep -c '^region .*: EQUIVALENT' "$tmp/stdout")
    notrun=$(grep -c '^region .*: NOT RUN' "$tmp/stdout")
    largest=$(grep '^region .*: EQUIVALENT' "$tmp/stdout" | grep -o '[0-9.]* [kMGT]*B per rank x [0-9]* ranks' |
              sort -t' ' -k2,2 -k1,1g | awk '{ u = index("BkMGT", substr($2, 1, 1)); k = u * 10000 + $1
                                               if (k > best) { best = k; line = $0 } } END { print line }')
    local summary="--local: ${regions:-?} regions, $eq equivalent${largest:+ (largest $largest)}"
    [ "$notrun" -gt 0 ] && summary="$summary, $notrun need more than this machine (their needs and mpirun lines are in the log)"
    summary="$summary, $(since "$t0") s"
    if [ $rc -eq 0 ]; then
        check_note=$summary
        return 0
    fi
    if [ $rc -eq 2 ] && grep -q '^hlo-check: NOT CHECKED' "$tmp/stdout" && [ "$notrun" -gt 0 ]; then
        check_note=$summary
        grep '^region .*: NOT RUN' "$tmp/stdout" | cut -c1-400 | sed 's/^/    /'
        return 3
    fi
    check_note="hlo-check --local exit $rc: $(grep -m 1 '^hlo-check:' "$tmp/stdout" || grep -m 1 -i error "$tmp/stderr") ($summary)"
    [ $rc -eq 124 ] && check_note="hlo-check --local timed out after $local_limit s ($summary)"
    return 1
}

n=0
while read -r file devs; do
    name=${file%.hlo}
    hlo=$dumps/$file
    if [ ! -f "$hlo" ]; then
        bad "$name" "$file listed in the README but missing"; continue
    fi
    known=$(awk -F'\t' -v f="../shared/real-dumps/$file" '$1 == f { print $2 }' "$invalid" 2>/dev/null)
    if [ -n "$known" ]; then
        skip "$name ($devs ranks)" "known invalid input (scripts/known-invalid-inputs.txt): ${known//\{\}/$file}"
        continue
    fi
    case $devs in
        any) counts="2 8 32" ;;
        ''|*[!0-9]*) bad "$name" "device count '$devs' not understood"; continue ;;
        *) counts=$devs ;;
    esac
    parts=$(sed -n 's/.*\*\*Devices:\*\* *\([0-9][0-9]*\) partitions.*/\1/p' "$dumps/$name.src.md" 2>/dev/null | head -n 1)
    pid=$(sed -n '/^ENTRY/,/^}/s/.*%partition-id[.0-9]* = u32\[\] parameter(\([0-9][0-9]*\)).*/\1/p' "$hlo" | head -n 1)
    rewrites=$("$opt" --passes=default --stats "$hlo" 2>&1 >/dev/null | awk '/fired/ { for (i = 1; i < NF; i++) if ($i == "fired") s += $(i + 1) } END { print s + 0 }')
    for np_ in $counts; do
        n=$((n + 1))
        what="$np_ ranks, $rewrites rewrites"
        flags=()
        p=1
        if [ -n "$parts" ]; then
            if [ "$parts" -ne "$np_" ]; then
                skip "$name ($np_ ranks)" "its .src.md says $parts partitions"; continue
            fi
            flags+=(--replicas 1 --partitions "$parts")
            p=$parts
            what="$what, $parts partitions"
        fi
        if [ "$np_" -gt 8 ] && [ "$(mem_avail_mb)" -lt 4096 ]; then
            skip "$name ($what)" "only $(mem_avail_mb) MB available; $np_ oversubscribed ranks want about 4 GB"
            continue
        fi
        check_flags=("${flags[@]}")
        if [ -n "$pid" ]; then
            mkdir -p "$tmp/in$n"
            if ! gen_inputs "$hlo" "$tmp/in$n" "$np_" "$p" "$pid" 2>"$tmp/generr"; then
                bad "$name ($what)" "input generation: $(tail -n 1 "$tmp/generr")"; continue
            fi
            flags+=(--inputs "$tmp/in$n")
            check_flags+=(--inputs "$tmp/in$n")
            what="$what, param$pid = partition id"
        fi
        label="$name ($what)"
        run_one "$name" "$hlo" "$np_" "${flags[@]}"
        run_rc=$?
        if [ $run_rc -eq 1 ]; then
            bad "$label" "$run_note"; rm -rf "$tmp/in$n"; continue
        fi
        check_one "$hlo" "$np_" "${check_flags[@]}"
        check_rc=$?
        if [ $check_rc -eq 2 ] && ! $local_too; then
            ok "$label: $run_note; $check_note: --local checks it (scripts/run_real_dumps.sh --local, make validate)"
        elif [ $check_rc -eq 2 ]; then
            whole=$check_note
            local_one "$hlo" "$np_" "${flags[@]}"
            local_rc=$?
            if [ $local_rc -eq 1 ]; then
                bad "$label" "$run_note; $whole; $check_note"
            else
                ok "$label: $run_note; $whole; $check_note"
            fi
        elif [ $check_rc -eq 0 ]; then
            ok "$label: $run_note; $check_note"
        else
            bad "$label" "$run_note; $check_note"
        fi
        rm -rf "$tmp/in$n"
    done
done <"$tmp/list"
finish --skips-apart
