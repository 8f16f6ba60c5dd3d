#!/bin/bash
# run_golden.sh [HLO-OPT]: golden tests; adding one takes files, no C.
#   tests/passes/<pass>/<case>.hlo  the input; it is run through
#       hlo-opt --passes=<pass> [words of <case>.flags] <case>.hlo
#     <case>.expect.hlo  the module it must print (exit 0, compared with diff -u), or
#     <case>.err         the first line it must print on standard error, with exit 2
#     <case>.flags       optional: more hlo-opt flags, separated by white space
#   tests/ir/malformed/<case>.hlo (or a proto, <case>.hlo_module.pb, from
#     scripts/proto_cases.py) with <case>.err: hlo-opt --passes=none must
#     exit 2 and print <case>.err as its first error line.
# Runs from the repo root with relative paths, so messages name files as
# tests/ir/malformed/<case>.hlo:LINE:COL.  One line per case, then
# "golden: N passed, N failed"; exit 1 on any failure.  With TALLY set,
# appends "passed failed" to it.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness golden
opt=$(tool_path "${1:-build/hlo-opt}") || exit 2
cd "$root" || exit 2

# Sets why and returns 1 when case $1 (an input .hlo) run with passes $2 fails.
check() {
    local in=$1 passes=$2 base=${1%.hlo} rc want got
    [[ $in == *.hlo_module.pb ]] && base=${in%.hlo_module.pb}
    local -a flags=()
    if [ -f "$base.flags" ]; then
        read -r -d '' -a flags <"$base.flags"
    fi
    timeout 20 "$opt" "--passes=$passes" "${flags[@]}" "$in" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ -f "$base.expect.hlo" ]; then
        if [ $rc -ne 0 ]; then
            why="exit $rc, want 0: $(head -n 1 "$tmp/err")"
            return 1
        fi
        if ! diff -u --label "$base.expect.hlo" --label "hlo-opt output" "$base.expect.hlo" "$tmp/out" \
                >"$tmp/diff"; then
            why="output differs from $base.expect.hlo:"$'\n'$(head -n 40 "$tmp/diff")
            return 1
        fi
    elif [ -f "$base.err" ]; then
        want=$(head -n 1 "$base.err")
        got=$(head -n 1 "$tmp/err")
        if [ $rc -ne 2 ] || [ "$got" != "$want" ]; then
            why="exit $rc, want 2"$'\n'"  got:  $got"$'\n'"  want: $want"
            return 1
        fi
    else
        why="neither $base.expect.hlo nor $base.err exists"
        return 1
    fi
}

run_case() {
    why=
    if check "$1" "$2"; then
        ok "$1"
    else
        bad "$1" "$why"
    fi
}

while IFS= read -r -d '' f; do
    p=${f#tests/passes/}
    run_case "$f" "${p%%/*}"
done < <(find tests/passes -mindepth 2 -name '*.hlo' ! -name '*.expect.hlo' -print0 2>/dev/null | sort -z)
while IFS= read -r -d '' f; do
    run_case "$f" none
done < <(find tests/ir/malformed \( -name '*.hlo' -o -name '*.hlo_module.pb' \) -print0 2>/dev/null | sort -z)

# -o naming the input, however spelt, is refused and leaves the input intact.
tmpd=$(mktemp -d)
cp corpus/demo/two_layer_grads.hlo "$tmpd/m.hlo"
sum=$(cksum <"$tmpd/m.hlo")
for out in "$tmpd/m.hlo" "$tmpd/../$(basename "$tmpd")/m.hlo"; do
    "$opt" --passes=default -o "$out" "$tmpd/m.hlo" >/dev/null 2>"$tmpd/err"
    st=$?
    if [ $st -eq 2 ] && grep -q "is the input module: refusing to write over it" "$tmpd/err" &&
       [ "$(cksum <"$tmpd/m.hlo")" = "$sum" ]; then
        ok "hlo-opt -o $out: refused, the input intact"
    else
        bad "hlo-opt -o the input ($out)" "exit $st"
    fi
done
rm -rf "$tmpd"

# --graph: the demo step before and after the default pipeline, drawn.  The
# DOT names the instruction the all-gather combiner made, filled with that
# pass's colour; Graphviz (when installed) draws it as SVG; with dot out of
# reach the DOT is still written and the note says how to install it.
tmpd=$(mktemp -d)
if "$opt" --passes=default --graph="$tmpd/pair.svg" corpus/demo/transformer_step_4dev.hlo >/dev/null 2>"$tmpd/err" &&
    grep -q 'all-gather.combined\\nall-gather' "$tmpd/pair.dot" && grep -q '#77 all-gather-combiner' "$tmpd/pair.dot"; then
    if ! command -v dot >/dev/null; then
        skip "hlo-opt --graph=pair.svg drawn" "Graphviz's dot is not installed"
    elif python3 -c '
import sys, xml.dom.minidom as x
d = x.parse(sys.argv[1])
texts = [t.firstChild.data for t in d.getElementsByTagName("text") if t.firstChild]
sys.exit(d.documentElement.tagName != "svg" or "all-gather.combined" not in texts)' "$tmpd/pair.svg"; then
        ok "hlo-opt --graph=pair.svg: the DOT and a valid SVG naming the combined all-gather"
    else
        bad "hlo-opt --graph=pair.svg" "no valid SVG naming all-gather.combined: $(head -n 2 "$tmpd/err")"
    fi
else
    bad "hlo-opt --graph=pair.svg" "the DOT lacks the combined all-gather or its pass: $(head -n 2 "$tmpd/err")"
fi
mkdir "$tmpd/bin"
PATH=$tmpd/bin:/usr/bin/nonexistent "$opt" --passes=default --graph="$tmpd/nodot.svg" \
    corpus/demo/transformer_step_4dev.hlo >/dev/null 2>"$tmpd/err"
st=$?
if [ $st -eq 0 ] && [ -s "$tmpd/nodot.dot" ] && grep -q "apt-get install graphviz" "$tmpd/err"; then
    ok "hlo-opt --graph without Graphviz: the DOT written, the note says how to install it"
else
    bad "hlo-opt --graph without Graphviz" "exit $st: $(head -n 2 "$tmpd/err")"
fi
cp corpus/demo/transformer_step_4dev.hlo "$tmpd/m.dot"
"$opt" --graph="$tmpd/m.svg" "$tmpd/m.dot" >/dev/null 2>"$tmpd/err"
st=$?
if [ $st -eq 2 ] && grep -q "need files of their own" "$tmpd/err" && cmp -s "$tmpd/m.dot" corpus/demo/transformer_step_4dev.hlo; then
    ok "hlo-opt --graph whose DOT would be the input: refused, the input intact"
else
    bad "hlo-opt --graph whose DOT would be the input" "exit $st"
fi
rm -rf "$tmpd"

finish
