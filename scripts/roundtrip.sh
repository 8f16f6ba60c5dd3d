#!/bin/bash
# roundtrip.sh [HLO-OPT]: the parse/print fixpoint of every module we have:
# corpus/**/*.hlo of this repo and, when ../shared sits beside the repo, every
# .hlo under shared/peer-corpus and shared/real-dumps.  With P = `hlo-opt
# --passes=none`, for each module x: b = P(x), c = P(b), d = P(c); each step
# must exit 0 within 20 s, and b, c and d must be identical, i.e.
# print(parse(print(parse(x)))) == print(parse(x)).
# Prints one line per failure and a closing "roundtrip: N passed, N failed";
# exits 1 on any failure.  With TALLY set, appends "passed failed" to it.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness roundtrip
opt=$(tool_path "${1:-$root/build/hlo-opt}") || exit 2
shared=$(dirname "$0")/../../shared

modules=()
while IFS= read -r -d '' f; do modules+=("$f"); done \
    < <(find "$root/corpus" -name '*.hlo' -print0 2>/dev/null | sort -z)
if [ -d "$shared" ]; then
    shared=$(cd "$shared" && pwd)
    while IFS= read -r -d '' f; do modules+=("$f"); done \
        < <(find "$shared/peer-corpus" "$shared/real-dumps" -name '*.hlo' -print0 2>/dev/null | sort -z)
else
    echo "roundtrip: note: no shared/ beside the repo; checking corpus/ only"
    shared=/nonexistent
fi

# Sets why and returns 1 when module $1 is not a fixpoint after one print.
check() {
    local in=$1 step rc
    for step in b c d; do
        timeout 20 "$opt" --passes=none "$in" </dev/null >"$tmp/$step" 2>"$tmp/err"
        rc=$?
        if [ $rc -ne 0 ]; then
            [ $rc -eq 124 ] && why="print $step: timed out after 20 s" \
                            || why="print $step: exit $rc: $(head -c 200 "$tmp/err" | tr '\n' ' ')"
            return 1
        fi
        in=$tmp/$step
    done
    for step in c d; do
        if ! cmp -s "$tmp/b" "$tmp/$step"; then
            why="print $step differs from print b ($(cmp "$tmp/b" "$tmp/$step" 2>&1 | sed "s|$tmp/||g"))"
            return 1
        fi
    done
}

# A known-invalid input passes when it fails with exactly its recorded error.
expected_error() {
    awk -F '\t' -v n="$1" '!/^#/ && $1 == n { print $2 }' "$root/scripts/known-invalid-inputs.txt"
}

check_invalid() {
    local f=$1 want=$2 got
    timeout 20 "$opt" --passes=none "$f" </dev/null >/dev/null 2>"$tmp/err"
    local rc=$?
    got=$(head -n 1 "$tmp/err")
    want=${want//\{\}/$f}
    [ $rc -eq 2 ] && [ "$got" = "$want" ] && return 0
    why="known-invalid input: exit $rc, '$got', want exit 2 and '$want'"
    return 1
}

for f in "${modules[@]}"; do
    case $f in
        "$root"/*) name=${f#"$root"/} ;;
        "$shared"/*) name=../shared/${f#"$shared"/} ;;
        *) name=$f ;;
    esac
    why=
    want=$(expected_error "$name")
    if [ -n "$want" ]; then
        if check_invalid "$f" "$want"; then
            ok "$name: rejected as recorded (not valid HLO, see scripts/known-invalid-inputs.txt)"
        else
            bad "$name" "$why"
        fi
        continue
    fi
    if check "$f"; then
        pass=$((pass + 1))     # silent: one line per failure only
    else
        bad "$name" "$why"
    fi
done

finish
