#!/bin/bash
# test_graph.sh [--quick] [BUILD-DIR]: hlo-check --graph, the picture of a
# checked pair, end to end under mpirun.
#  * every known-unsound corpus case (--quick: one of each kind), rewritten
#    by its pass at its ranks:
#    exit 1, a valid SVG, and the first instruction whose values differ,
#    named on stdout, drawn as a node of the picture with its two values;
#  * the demo step after the default pipeline with a planted swap (a pair
#    judged by accuracy): the swapped instruction is the one marked;
#  * a loop body's accumulation planted as a subtract after
#    flip-reduce-convert-add: the accumulation marked, not the loop state;
#  * --local on a broken combine: the region boxed with its verdict;
#  * --shrink writes pair.svg beside the shrunk pair, naming its difference;
#  * a MaxText region with a planted swap of two gathered outputs, --local
#    --region (full run only): the swapped output is the one marked;
#  * the picture may not overwrite an input; a bad radius is a usage error;
#    without Graphviz the DOT is written and the note says how to install it.
# One line per case, closing "hlo-check --graph: N passed, N failed"; TALLY.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness "hlo-check --graph"
quick=false
if [ "${1:-}" = --quick ]; then
    quick=true
    shift
fi
use_build "${1:-$root/build}"
check=$build/hlo-check opt=$build/hlo-opt
py=/usr/bin/python3
mpi_flags=(--mca mpi_yield_when_idle 1)

if ! command -v dot >/dev/null; then
    skip "hlo-check --graph" "Graphviz's dot is not installed (scripts/install-deps.sh installs it)"
    finish
    exit 0
fi

# svg_names FILE BEFORE AFTER: the SVG parses, and both names are node
# labels, each with a "FIRST DIFFERENCE" line under it.
svg_names() {
    $py - "$@" <<'EOF'
import sys, xml.dom.minidom as x
d = x.parse(sys.argv[1])
assert d.documentElement.tagName == "svg", "not an SVG"
marked = set()
for g in d.getElementsByTagName("g"):
    if g.getAttribute("class") != "node":
        continue
    texts = [t.firstChild.data for t in g.getElementsByTagName("text") if t.firstChild]
    if any(t.startswith("FIRST DIFFERENCE") for t in texts):
        marked.add(texts[0])
for name in sys.argv[2:]:
    assert name in marked, "%s is not marked (marked: %s)" % (name, sorted(marked))
print("marked: " + ", ".join(sorted(marked)))
EOF
}

# The names hlo-check printed: "before X, after Y (...)".
located() { sed -n 's/^hlo-check: the first instruction whose values differ: before \([^,]*\), after \([^ ]*\) .*/\1 \2/p' "$tmp/out"; }

# ---- The unsound corpus cases

# --quick (make test): one case of each kind (a moved index, a reshape across
# shards, a changed accumulation); the full run (make validate): all of them.
cases=("$root"/corpus/*/unsound_*.hlo)
if $quick; then
    cases=("$root/corpus/aws_neuron_flip_all_gather_dynamic_slice/unsound_partition_id_index.hlo"
           "$root/corpus/aws_neuron_flip_all_gather_reshape/unsound_interleave_rows.hlo"
           "$root/corpus/aws_neuron_flip_reduce_convert_add/unsound_narrowing_f32_to_bf16.hlo")
fi
for hlo in "${cases[@]}"; do
    expect=${hlo%.hlo}.expect
    pass_dir=$(basename "$(dirname "$hlo")")
    ranks=$(sed -n 's/^ranks: *//p' "$expect" | awk '{ print $1 }')
    name="$pass_dir/$(basename "$hlo" .hlo) @ ${ranks:-2}"
    rm -f "$tmp/u.svg" "$tmp/u.dot"
    mpi_run 120 "${ranks:-2}" "$check" --passes="$pass_dir" "$hlo" --graph="$tmp/u.svg" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    b= a= got=
    read -r b a < <(located)
    if [ $rc -eq 1 ] && [ -n "${b:-}" ] && got=$(svg_names "$tmp/u.svg" "$b" "$a" 2>&1); then
        ok "$name: exit 1, the SVG marks $b / $a"
    else
        bad "$name" "exit $rc, located '${b:-} ${a:-}': ${got:-$(tail -n 2 "$tmp/err")}"
    fi
done

# ---- The demo with a planted swap

"$opt" --passes=default "$root/corpus/demo/transformer_step_4dev.hlo" -o "$tmp/demo_after.hlo" >/dev/null 2>&1
sed 's/%dtanh = f32\[16,128\] subtract(%ones, %h2)/%dtanh = f32[16,128] subtract(%h2, %ones)/' \
    "$tmp/demo_after.hlo" >"$tmp/demo_broken.hlo"
if cmp -s "$tmp/demo_after.hlo" "$tmp/demo_broken.hlo"; then
    bad "the demo with a planted swap" "the sed planted nothing: the default pipeline's output changed"
else
    mpi_run 300 4 "$check" "$root/corpus/demo/transformer_step_4dev.hlo" "$tmp/demo_broken.hlo" --trials=2 \
        --graph="$tmp/demo.svg" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    b= a= got=
    read -r b a < <(located)
    if [ $rc -eq 1 ] && [ "${b:-}" = dtanh ] && [ "${a:-}" = dtanh ] && got=$(svg_names "$tmp/demo.svg" dtanh 2>&1) &&
        grep -q "leaving out what reads a reduction" "$tmp/demo.dot"; then
        ok "the demo with dtanh's operands swapped after the passes (judged by accuracy): dtanh marked"
    else
        bad "the demo with a planted swap" "exit $rc, located '${b:-} ${a:-}': ${got:-$(tail -n 2 "$tmp/err")}"
    fi
fi

# ---- A loop body: flip-reduce-convert-add inside a while, then the loop's
# accumulating add planted as a subtract.  Judged by accuracy: the state
# the loop hands back (acc at its second run) reads the widened sum too and
# is no first difference; the mark is the accumulation itself.

hlo=$root/corpus/aws_neuron_flip_reduce_convert_add/rewrite_in_while_body.hlo
"$opt" --passes=default "$hlo" -o "$tmp/loop_after.hlo" >/dev/null 2>&1
sed 's/  %add = f32\[8\]{0} add(%all-reduce, %acc)/  %add = f32[8]{0} subtract(%all-reduce, %acc)/' \
    "$tmp/loop_after.hlo" >"$tmp/loop_broken.hlo"
mpi_run 120 4 "$check" "$hlo" "$tmp/loop_broken.hlo" --trials=2 --graph="$tmp/loop.svg" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
b= a= got=
read -r b a < <(located)
if cmp -s "$tmp/loop_after.hlo" "$tmp/loop_broken.hlo"; then
    bad "a loop body with a planted subtract" "the sed planted nothing: the default pipeline's output changed"
elif [ $rc -eq 1 ] && [ "${b:-}" = acc.next ] && [ "${a:-}" = add ] && got=$(svg_names "$tmp/loop.svg" acc.next add 2>&1); then
    ok "a loop body's accumulation planted as a subtract (judged by accuracy): acc.next / add marked, not the state it hands back"
else
    bad "a loop body with a planted subtract" "exit $rc, located '${b:-} ${a:-}': ${got:-$(tail -n 2 "$tmp/err")}"
fi

# ---- --local: regions boxed with their verdicts

# Two all-reduces, and after's combination of them handing on its outputs swapped.
reduce_pair() {  # $1: the lines that give ap and aq
    cat <<EOF
HloModule m, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
$1
  d = f32[64] subtract(ap, aq)
  ROOT r = f32[64] exponential(d)
}
EOF
}
reduce_pair "  ap = f32[64] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  aq = f32[64] all-reduce(q), replica_groups={{0,1}}, to_apply=add" >"$tmp/loc_b.hlo"
reduce_pair "  c = (f32[64], f32[64]) all-reduce(p, q), replica_groups={{0,1}}, to_apply=add
  ap = f32[64] get-tuple-element(c), index=1
  aq = f32[64] get-tuple-element(c), index=0" >"$tmp/loc_a.hlo"
mpi_run 120 2 "$check" "$tmp/loc_b.hlo" "$tmp/loc_a.hlo" --local --graph="$tmp/local.svg" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
b= a= got=
read -r b a < <(located)
if [ $rc -eq 1 ] && grep -q 'region 1: DIFFERS on free inputs' "$tmp/local.dot" && [ -n "${b:-}" ] &&
    got=$(svg_names "$tmp/local.svg" "$b" "$a" 2>&1); then
    ok "--local on a combine with its outputs swapped: the region boxed as DIFFERS, $b / $a marked"
else
    bad "--local --graph on a broken combine" "exit $rc, located '${b:-} ${a:-}': ${got:-$(tail -n 2 "$tmp/err")}"
fi

# ---- --shrink: pair.svg beside the shrunk pair

hlo=$root/corpus/aws_neuron_flip_all_gather_reshape/unsound_interleave_rows.hlo
rm -rf "$tmp/shrunk"
mpi_run 120 2 "$check" --passes=aws_neuron_flip_all_gather_reshape "$hlo" --shrink \
    --save-counterexample="$tmp/shrunk" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
b= a= got=
read -r b a < <(located)
if [ $rc -eq 1 ] && [ -s "$tmp/shrunk/pair.dot" ] && [ -n "${b:-}" ] &&
    got=$(svg_names "$tmp/shrunk/pair.svg" "$b" "$a" 2>&1); then
    ok "--shrink: pair.svg beside the shrunk pair marks $b / $a"
else
    bad "--shrink writes pair.svg" "exit $rc, located '${b:-} ${a:-}': ${got:-$(tail -n 2 "$tmp/err")}"
fi

# ---- A MaxText region with a planted swap (the full run only)

dump=$root/../shared/real-dumps/jax_gpu_maxtext_llama3_8b_ring_cp_4dev.hlo
if $quick; then
    :
elif [ ! -f "$dump" ]; then
    skip "--graph on a MaxText region" "no $dump"
else
    "$opt" --passes=default --fill-elided "$dump" -o "$tmp/mt_after.hlo" >/dev/null 2>&1
    # The combined all-gather of region_1.4_spmd: outputs 1 and 2 handed on swapped.
    awk '/^%region_1\.4_spmd/ { inside = 1 } /^}/ { inside = 0 }
         inside && /%all-gather\.1 = .*get-tuple-element\(%all-gather\.combined\), index=1/ { sub(/index=1/, "index=2") }
         inside && /%all-gather\.2 = .*get-tuple-element\(%all-gather\.combined\), index=2/ { sub(/index=2/, "index=1") }
         { print }' "$tmp/mt_after.hlo" >"$tmp/mt_broken.hlo"
    region=$(mpi_run 300 4 "$check" --local --trials=1 --fill-elided "$dump" "$tmp/mt_broken.hlo" --max-memory=1KB \
        </dev/null 2>/dev/null | sed -n 's|^region \([0-9]*\)/[0-9]* in region_1.4_spmd: all-gather,.*|\1|p' | head -n 1)
    if [ -z "$region" ] || cmp -s "$tmp/mt_after.hlo" "$tmp/mt_broken.hlo"; then
        bad "--graph on a MaxText region" "the planted swap or its region was not found (region '${region:-}')"
    else
        mpi_run 600 4 "$check" --local --region="$region" --trials=1 --fill-elided "$dump" "$tmp/mt_broken.hlo" \
            --graph="$tmp/mt.svg" </dev/null >"$tmp/out" 2>"$tmp/err"
        rc=$?
        b= a= got=
        read -r b a < <(located)
        nodes=$(grep -c '<g id="node' "$tmp/mt.svg" 2>/dev/null)
        if [ $rc -eq 1 ] && [[ ${b:-} == all-gather.[12] ]] && [ "${a:-}" = "$b" ] &&
            got=$(svg_names "$tmp/mt.svg" "$b" 2>&1) && [ "${nodes:-999}" -le 120 ]; then
            ok "a MaxText region with two gathered outputs swapped: $b marked, $nodes nodes"
        else
            bad "--graph on a MaxText region" "exit $rc, located '${b:-} ${a:-}', ${nodes:-?} nodes: ${got:-$(tail -n 2 "$tmp/err")}"
        fi
    fi
fi

# ---- Refusals and Graphviz out of reach

cp "$hlo" "$tmp/m.svg"
mpi_run 60 1 "$check" --passes=default "$tmp/m.svg" --graph="$tmp/m.svg" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--graph .*input module" "$tmp/err" && cmp -s "$hlo" "$tmp/m.svg"; then
    ok "--graph naming the input module: exit 2, the module untouched"
else
    bad "--graph naming the input" "exit $rc: $(head -n 2 "$tmp/err")"
fi
mpi_run 60 1 "$check" --passes=default "$hlo" --graph="$tmp/r.svg" --graph-radius=-2 </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--graph-radius" "$tmp/err"; then
    ok "--graph-radius=-2: a usage error naming the flag"
else
    bad "--graph-radius=-2" "exit $rc: $(head -n 2 "$tmp/err")"
fi
mkdir -p "$tmp/empty"
mpi_flags+=(-x PATH="$tmp/empty")       # the ranks find no dot; mpirun keeps its own PATH
mpi_run 120 2 "$check" --passes=aws_neuron_flip_all_gather_reshape "$hlo" --graph="$tmp/nodot.svg" \
    </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 1 ] && [ -s "$tmp/nodot.dot" ] && [ ! -e "$tmp/nodot.svg" ] && grep -q "apt-get install graphviz" "$tmp/err"; then
    ok "--graph without Graphviz: the verdict's exit 1, the DOT written, the note says how to install it"
else
    bad "--graph without Graphviz" "exit $rc: $(head -n 2 "$tmp/err")"
fi

finish
