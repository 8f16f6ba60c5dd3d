#!/bin/bash
# validate.sh [--prove] [BUILD-DIR] [RANKS...]: the validation suite (spec/tools.md).
# Runs `hlo-check --passes=default` on every module of corpus/ at 1, 2, 4 and
# 8 ranks (or the ranks its .expect allows, or its header fixes), and compares
# the outcome with the expectation beside the module:
#   kind exact | precision | none (or no .expect): equivalent, exit 0;
#   kind unsound: faithful mode finds a counterexample (exit 1), and in
#   --pass-mode=sound the flip declines: `hlo-opt --pass-mode=sound` with that
#   pass leaves the module unchanged and hlo-check passes (exit 0).
# With --prove, every check also runs hlo-check --prove and the proof must
# agree: kind exact (and none, with an .expect) PROVED EQUIVALENT, kind
# precision NOT EXACT, kind unsound REFUTED with both expressions printed
# (or, for a precision-changing flip, NOT EXACT and less accurate), and the
# sound-mode run of an unsound case proved (or not exact).
# Corpus modules that need their own inputs (corpus/interp/) are checked by
# run_interp_corpus.sh instead.  One line per case, closing
# "validate: N passed, N failed"; exit 1 on any failure.  With TALLY set,
# appends "passed failed" to it.
set -uo pipefail

prove=()
if [ "${1:-}" = --prove ]; then
    prove=(--prove)
    shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
want_ranks=${*:-1 2 4 8}
check=$build/hlo-check opt=$build/hlo-opt
[ -x "$check" ] && [ -x "$opt" ] || { echo "validate: build first (make)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root" || exit 2

field() { sed -n "s/^$2: *//p" "$1" 2>/dev/null | head -n 1; }

# The rank counts a module runs at: its .expect's list, else the device count
# its header fixes, else all of want_ranks.
ranks_of() {
    local hlo=$1 exp=$2 list fixed r p
    list=$(field "$exp" ranks | tr ',' ' ')
    if [ -z "$list" ]; then
        r=$(sed -n '1s/.*replica_count=\([0-9]*\).*/\1/p' "$hlo")
        p=$(sed -n '1s/.*num_partitions=\([0-9]*\).*/\1/p' "$hlo")
        [ -n "$r$p" ] && fixed=$(( ${r:-1} * ${p:-1} ))
        list=${fixed:-$want_ranks}
    fi
    for n in $list; do
        case " $want_ranks " in *" $n "*) echo "$n" ;; esac
    done
}

mpi() {
    local n=$1
    shift
    local extra=()
    [ "$n" -gt 2 ] && extra=(--mca mpi_yield_when_idle 1)
    timeout 300 mpirun --oversubscribe "${extra[@]}" -np "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
}

pass=0 fail=0
report() {
    if [ "$1" = ok ]; then
        pass=$((pass + 1))
        echo "ok   $2"
    else
        fail=$((fail + 1))
        echo "FAIL $2: $3"
        sed 's/^/    /' "$tmp/out" | grep -v '^    *$' | tail -n 8
        grep -v -e '^-*$' -e 'Primary job' -e 'non-zero exit' -e 'mpirun detected' -e 'the job to be' \
            -e 'Process name' -e 'Exit code' -e 'Per user-direction' "$tmp/err" | sed 's/^/    /' | head -n 8
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

validate_one() {
    local hlo=$1 exp=${1%.hlo}.expect kind n rc flip want
    kind=$(field "$exp" kind)
    flip=$(field "$exp" pass)
    case $kind in
    exact) want=proved ;;
    precision) want=not_exact ;;
    *) want=proved; [ -f "$exp" ] || want=proved_or_not_exact ;;
    esac
    local what=${prove[*]:+proved }
    for n in $(ranks_of "$hlo" "$exp"); do
        local name="$hlo @ $n"
        mpi "$n" "$check" --passes=default --trials=2 "${prove[@]}" "$hlo"
        rc=$?
        if [ "$kind" != unsound ]; then
            if [ $rc -ne 0 ]; then
                report fail "$name" "want equivalent (exit 0), got exit $rc"
            elif ! proof_is "$want"; then
                report fail "$name" "want the proof to say $want"
            else
                report ok "$name (equivalent${prove[*]:+, $want})"
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
        mpi "$n" "$check" --passes=default --pass-mode=sound --trials=2 "${prove[@]}" "$hlo"
        rc=$?
        if [ $rc -eq 0 ] && declines_in_sound_mode "$hlo" "$flip" && proof_is proved_or_not_exact; then
            report ok "$name (${what}refuted in faithful mode, declined in sound mode)"
        else
            report fail "$name" "sound mode: want no rewrite by $flip and exit 0${prove[*]:+ (proved)}, got exit $rc"
        fi
    done
}

while IFS= read -r -d '' hlo; do
    validate_one "${hlo#./}"
done < <(find corpus -name '*.hlo' -not -path 'corpus/interp/*' -print0 | sort -z)

[ -n "${TALLY:-}" ] && echo "$pass $fail" >>"$TALLY"
echo "validate: $pass passed, $fail failed"
[ $fail -eq 0 ]
