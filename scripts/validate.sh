#!/bin/bash
# validate.sh [BUILD-DIR] [RANKS...]: the validation suite (spec/tools.md).
# Runs `hlo-check --passes=default` on every module of corpus/ at 1, 2, 4 and
# 8 ranks (or the ranks its .expect allows, or its header fixes), and compares
# the outcome with the expectation beside the module:
#   kind exact | precision | none (or no .expect): equivalent, exit 0;
#   kind unsound: faithful mode finds a counterexample (exit 1), and in
#   --pass-mode=sound the flip declines: `hlo-opt --pass-mode=sound` with that
#   pass leaves the module unchanged and hlo-check passes (exit 0).
# Corpus modules that need their own inputs (corpus/interp/) are checked by
# run_interp_corpus.sh instead.  One line per case, closing
# "validate: N passed, N failed"; exit 1 on any failure.  With TALLY set,
# appends "passed failed" to it.
set -uo pipefail

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

validate_one() {
    local hlo=$1 exp=${1%.hlo}.expect kind n rc flip
    kind=$(field "$exp" kind)
    flip=$(field "$exp" pass)
    for n in $(ranks_of "$hlo" "$exp"); do
        local name="$hlo @ $n"
        mpi "$n" "$check" --passes=default --trials=2 "$hlo"
        rc=$?
        if [ "$kind" != unsound ]; then
            [ $rc -eq 0 ] && report ok "$name (equivalent)" || report fail "$name" "want equivalent (exit 0), got exit $rc"
            continue
        fi
        if [ $rc -ne 1 ]; then
            report fail "$name" "known unsound: want a counterexample in faithful mode (exit 1), got exit $rc"
            continue
        fi
        mpi "$n" "$check" --passes=default --pass-mode=sound --trials=2 "$hlo"
        rc=$?
        if [ $rc -eq 0 ] && declines_in_sound_mode "$hlo" "$flip"; then
            report ok "$name (refuted in faithful mode, declined in sound mode)"
        else
            report fail "$name" "sound mode: want no rewrite by $flip and exit 0, got exit $rc"
        fi
    done
}

while IFS= read -r -d '' hlo; do
    validate_one "${hlo#./}"
done < <(find corpus -name '*.hlo' -not -path 'corpus/interp/*' -print0 | sort -z)

[ -n "${TALLY:-}" ] && echo "$pass $fail" >>"$TALLY"
echo "validate: $pass passed, $fail failed"
[ $fail -eq 0 ]
