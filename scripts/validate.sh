#!/bin/bash
# validate.sh [--prove] [--ranks 1,2,4,8] [--passes P] [--junit F] [--json F] [--build DIR] [DIR|FILE...]
# The validation suite (spec/tools.md), on the corpus or on your own modules.
# Runs `hlo-check --passes=P` (default: the default pipeline) on every module
# at each of --ranks (default 1,2,4,8; a module whose header fixes its device
# count runs at that count only, the others are skipped with a note), and
# compares the outcome with the expectation beside the module (M.expect for
# M.hlo):
#   kind exact | precision | none, or no .expect: equivalent, exit 0;
#   kind unsound: faithful mode finds a counterexample (exit 1), and in
#   --pass-mode=sound the flip declines: `hlo-opt --pass-mode=sound` with that
#   pass leaves the module unchanged and hlo-check passes (exit 0).
# With no paths, the corpus (corpus/, but corpus/interp/, whose modules need
# their own inputs: run_interp_corpus.sh); with paths, every .hlo, .txt and .pb (XLA's binary forms)
# module under each directory, and each file given.  A module that cannot
# run at a rank count (its replica groups name more devices) is skipped
# there with the reason.
# With --prove, every check also runs hlo-check --prove and the proof must
# agree: kind exact (and none, with an .expect) PROVED EQUIVALENT, kind
# precision NOT EXACT, kind unsound REFUTED with both expressions printed
# (or, for a precision-changing flip, NOT EXACT and less accurate), and the
# sound-mode run of an unsound case proved (or not exact).
# One line per case and rank count, closing "validate: N passed, N failed"
# (and skipped); --junit F and --json F write the cases for CI; progress on a
# terminal.  Exit 0 when every case went as expected, 1 when one did not, 2
# on bad usage.  With TALLY set, appends "passed failed" to it.
# (Older form, still accepted: validate.sh [--prove] [BUILD-DIR] [RANKS...].)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness validate

usage() {
    echo "usage: scripts/validate.sh [--prove] [--ranks 1,2,4,8] [--passes P] [--junit F] [--json F] [--build DIR] [DIR|FILE...]" >&2
    [ -n "${1:-}" ] && echo "validate: $1" >&2
    exit 2
}
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
prove=() passes=default junit='' json='' build='' want_ranks='' paths=()
while [ $# -gt 0 ]; do
    case $1 in
    --prove) prove=(--prove) ;;
    --ranks|--passes|--junit|--json|--build)
        [ $# -ge 2 ] || usage "$1 needs a value"
        case $1 in
        --ranks) want_ranks=$2 ;; --passes) passes=$2 ;; --junit) junit=$(abspath "$2") ;;
        --json) json=$(abspath "$2") ;; --build) build=$(abspath "$2") ;;
        esac
        shift ;;
    --ranks=*) want_ranks=${1#*=} ;;
    --passes=*) passes=${1#*=} ;;
    --junit=*) junit=$(abspath "${1#*=}") ;;
    --json=*) json=$(abspath "${1#*=}") ;;
    --build=*) build=$(abspath "${1#*=}") ;;
    -h|--help) usage ;;
    -*) usage "unknown flag $1" ;;
    *)
        if [ -z "$build" ] && [ ${#paths[@]} -eq 0 ] && [ -d "$1" ] && [ -x "$1/hlo-check" ]; then
            build=$(abspath "$1")                   # the older form's BUILD-DIR
        elif [[ $1 =~ ^[0-9]+$ ]] && [ ! -e "$1" ]; then
            want_ranks="$want_ranks $1"             # the older form's RANKS
        elif [ -e "$1" ]; then
            paths+=("$(abspath "$1")")
        else
            usage "no such file or directory: $1"
        fi ;;
    esac
    shift
done
want_ranks=$(echo "${want_ranks:-1 2 4 8}" | tr ',' ' ')
for n in $want_ranks; do [[ $n =~ ^[1-9][0-9]*$ ]] || usage "--ranks: '$n' is not a rank count"; done
use_build "${build:-$root/build}" hlo-check hlo-opt
check=$build/hlo-check opt=$build/hlo-opt
cd "$root" || exit 2

field() { sed -n "s/^$2: *//p" "$1" 2>/dev/null | head -n 1; }

# A module's first line of text: a proto's as hlo-opt prints it.
header_of() {
    case $1 in
    *.pb) "$build/hlo-opt" --passes=none "$1" 2>/dev/null | head -n 1 ;;
    *) head -n 1 "$1" ;;
    esac
}

# x.expect beside x.hlo, x.txt or a proto x.hlo_module.pb, x.hlo.pb,
# x.snapshot.pb, x.pb.
expect_of() {
    local b=$1
    case $b in
    *.hlo_module.pb) b=${b%.hlo_module.pb} ;;
    *.hlo.pb) b=${b%.hlo.pb} ;;
    *.snapshot.pb) b=${b%.snapshot.pb} ;;
    *) b=${b%.*} ;;
    esac
    echo "$b.expect"
}

# The rank counts a module runs at: its .expect's list, else the device count
# its header fixes, else all of want_ranks.  A header's count not among
# want_ranks is noted as a skip.
ranks_of() {
    local hlo=$1 exp=$2 list fixed r p
    list=$(field "$exp" ranks | tr ',' ' ')
    if [ -z "$list" ]; then
        header_of "$hlo" >"$tmp/header"
        r=$(sed -n '1s/.*replica_count=\([0-9]*\).*/\1/p' "$tmp/header")
        p=$(sed -n '1s/.*num_partitions=\([0-9]*\).*/\1/p' "$tmp/header")
        [ -n "$r$p" ] && fixed=$(( ${r:-1} * ${p:-1} ))
        list=${fixed:-$want_ranks}
    fi
    for n in $list; do
        case " $want_ranks " in *" $n "*) echo "$n" ;; esac
    done
}

# Where the cases go for --junit / --json: one record per case.
cases=$tmp/cases.tsv
: >"$cases"
record() {  # record STATUS NAME MESSAGE SECONDS
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(printf '%s' "$3" | tr '\t\n' '  ')" "$4" >>"$cases"
}

mpi() {
    local n=$1
    shift
    local mpi_flags=()
    [ "$n" -gt 2 ] && mpi_flags=(--mca mpi_yield_when_idle 1)
    mpi_run 300 "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
}

started=$(date +%s.%N)
since() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
bad_context() {
    sed 's/^/    /' "$tmp/out" | grep -v '^    *$' | tail -n 8
    grep -v -e '^-*$' -e 'Primary job' -e 'non-zero exit' -e 'mpirun detected' -e 'the job to be' \
        -e 'Process name' -e 'Exit code' -e 'Per user-direction' "$tmp/err" | sed 's/^/    /' | head -n 8
}
report() {
    progress_clear
    if [ "$1" = ok ]; then
        record pass "$2" "" "$(since)"
        ok "$2"
    elif [ "$1" = skip ]; then
        record skip "$2" "$3" 0
        skip "$2" "$3"
    else
        record fail "$2" "$3" "$(since)"
        bad "$2" "$3"
    fi
}

# The flip named by the .expect must not fire in sound mode.
declines_in_sound_mode() {
    local hlo=$1 flip=$2
    "$opt" --passes="$flip" --pass-mode=sound "$hlo" >"$tmp/sound.hlo" 2>/dev/null &&
        "$opt" --passes=none "$hlo" >"$tmp/none.hlo" 2>/dev/null &&
        cmp -s "$tmp/sound.hlo" "$tmp/none.hlo"
}

# With --prove: does the proof's verdict in $tmp/out match what the case
# expects (proved, not_exact, refuted, proved_or_not_exact)?
proof_is() {
    [ ${#prove[@]} -eq 0 ] && return 0
    local last
    last=$(grep '^hlo-check: \(PROVED\|REFUTED\|NOT EXACT\|NOT PROVED\)' "$tmp/out" | tail -n 1)
    case $1 in
    any) return 0 ;;
    proved) [[ $last == "hlo-check: PROVED EQUIVALENT"* ]] ;;
    not_exact) [[ $last == "hlo-check: NOT EXACT"* ]] ;;
    proved_or_not_exact) [[ $last == "hlo-check: PROVED EQUIVALENT"* || $last == "hlo-check: NOT EXACT"* ]] ;;
    refuted)
        if [[ $last == "hlo-check: REFUTED"* ]]; then
            grep -q '^  before: ' "$tmp/out" && grep -q '^  after: ' "$tmp/out"
        else
            [[ $last == "hlo-check: NOT EXACT"* ]] && grep -q '^hlo-check: LESS ACCURATE' "$tmp/out"
        fi ;;
    esac
}

# A run that could not start at this rank count (the module's groups or
# header need other devices): skipped, not failed.
cannot_run_here() {
    [ "$1" -eq 2 ] && grep -q -e 'replica_groups name' -e 'devices per group' -e 'do not cover device' \
        -e 'world size' -e 'devices, but' -e 'ranks were started' "$tmp/err"
}

# Progress on a terminal: case k of n, on stderr.
progress_clear() { [ -t 2 ] && printf '\r\033[K' >&2; return 0; }
progress() { [ -t 2 ] && printf '\r[%d/%d] %s' "$1" "$2" "$3" >&2; return 0; }

# The proof's verdict in $tmp/out, in a word.
proof_said() {
    local last
    last=$(grep '^hlo-check: \(PROVED\|REFUTED\|NOT EXACT\|NOT PROVED\)' "$tmp/out" | tail -n 1)
    case $last in
    "hlo-check: PROVED EQUIVALENT"*) echo proved ;;
    "hlo-check: NOT EXACT"*) echo not_exact ;;
    "hlo-check: NOT PROVED"*) echo not_proved ;;
    *) echo "no proof" ;;
    esac
}

validate_one() {
    local hlo=$1 exp kind n rc flip want shown=${1#"$root"/}
    exp=$(expect_of "$1")
    kind=$(field "$exp" kind)
    flip=$(field "$exp" pass)
    case $kind in
    exact) want=proved ;;
    precision) want=not_exact ;;
    *) want=proved; [ -f "$exp" ] || want=any ;;    # without an .expect, the sampled verdict decides
    esac
    local what=${prove[*]:+proved }
    local runs
    runs=$(ranks_of "$hlo" "$exp")
    if [ -z "$runs" ]; then
        report skip "$shown" "its header or .expect fixes rank counts other than --ranks ${want_ranks// /,}"
        return
    fi
    if [ -z "$(field "$exp" ranks)" ]; then    # a header that fixes the count: the other counts are noted
        for n in $want_ranks; do
            case " $(echo $runs) " in *" $n "*) ;; *) report skip "$shown @ $n" "its header fixes $runs devices" ;; esac
        done
    fi
    for n in $runs; do
        local name="$shown @ $n"
        progress "$done_modules" "$n_modules" "$name"
        mpi "$n" "$check" --passes="$passes" --trials=2 "${prove[@]}" "$hlo"
        rc=$?
        if cannot_run_here $rc; then
            report skip "$name" "cannot run at $n ranks: $(grep -m 1 'error:' "$tmp/err" | sed 's/.*error: //')"
            continue
        fi
        if [ "$kind" != unsound ]; then
            if [ $rc -ne 0 ]; then
                report fail "$name" "want equivalent (exit 0), got exit $rc"
            elif ! proof_is "$want"; then
                report fail "$name" "want the proof to say $want"
            else
                local said=$want
                [ "$want" = any ] && said=$(proof_said)
                report ok "$name (equivalent${prove[*]:+, $said})"
            fi
            continue
        fi
        if [ $rc -ne 1 ]; then
            report fail "$name" "known unsound: want a counterexample in faithful mode (exit 1), got exit $rc"
            continue
        fi
        if ! proof_is refuted; then
            report fail "$name" "known unsound: want the proof to say REFUTED with both expressions"
            continue
        fi
        mpi "$n" "$check" --passes="$passes" --pass-mode=sound --trials=2 "${prove[@]}" "$hlo"
        rc=$?
        if [ $rc -eq 0 ] && declines_in_sound_mode "$hlo" "$flip" && proof_is proved_or_not_exact; then
            report ok "$name (${what}refuted in faithful mode, declined in sound mode)"
        else
            report fail "$name" "sound mode: want no rewrite by $flip and exit 0${prove[*]:+ (proved)}, got exit $rc"
        fi
    done
}

# The modules: the corpus, or every .hlo / .txt under the paths given.
modules=$tmp/modules
if [ ${#paths[@]} -eq 0 ]; then
    find "$root/corpus" -name '*.hlo' -not -path "$root/corpus/interp/*" -print0 | sort -z >"$modules"
else
    for p in "${paths[@]}"; do
        if [ -d "$p" ]; then
            find "$p" -type f \( -name '*.hlo' -o -name '*.txt' -o -name '*.pb' \) -print0 | sort -z
        else
            printf '%s\0' "$p"
        fi
    done >"$modules"
fi
n_modules=$(tr -cd '\0' <"$modules" | wc -c)
[ "$n_modules" -gt 0 ] || { echo "validate: no .hlo, .txt or .pb modules under ${paths[*]}" >&2; exit 2; }
done_modules=0
while IFS= read -r -d '' hlo; do
    done_modules=$((done_modules + 1))
    validate_one "$hlo"
done <"$modules"
progress_clear

# ---- Reports for CI
xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }
if [ -n "$junit" ]; then
    {
        echo '<?xml version="1.0" encoding="UTF-8"?>'
        echo '<testsuites>'
        echo "  <testsuite name=\"hlocheck validate --passes=$(printf '%s' "$passes" | xml)\" tests=\"$((pass + fail + skip))\" failures=\"$fail\" skipped=\"$skip\">"
        while IFS=$'\t' read -r st name msg secs; do
            printf '    <testcase classname="validate" name="%s" time="%s">' "$(printf '%s' "$name" | xml)" "$secs"
            case $st in
            fail) printf '<failure message="%s"/>' "$(printf '%s' "$msg" | xml)" ;;
            skip) printf '<skipped message="%s"/>' "$(printf '%s' "$msg" | xml)" ;;
            esac
            echo '</testcase>'
        done <"$cases"
        echo '  </testsuite>'
        echo '</testsuites>'
    } >"$junit.tmp.$$" && mv "$junit.tmp.$$" "$junit"
fi
if [ -n "$json" ]; then
    /usr/bin/python3 - "$cases" "$passes" "$pass" "$fail" "$skip" >"$json.tmp.$$" <<'PY' && mv "$json.tmp.$$" "$json"
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(json.dumps({"passes": sys.argv[2], "passed": int(sys.argv[3]), "failed": int(sys.argv[4]),
                  "skipped": int(sys.argv[5]),
                  "cases": [{"status": r[0], "case": r[1], "message": r[2]} for r in rows]}, indent=1))
PY
fi

finish
