#!/bin/bash
# test_hlo_check.sh [BUILD-DIR]: hlo-check end to end under mpirun.
#  * identical modules are equivalent at 1, 2, 4 and 8 ranks;
#  * a changed constant, a swapped operand, an off-by-one slice, a wrong
#    gather order and a wrong group are each caught (exit 1) at every rank
#    count where they change the function, and not reported where they don't;
#  * a counterexample saved with --save-counterexample replays with
#    hlo-run --inputs, and equals hlo-run --seed <the trial's seed>;
#  * mismatched signatures are input errors (exit 2) naming the parameter;
#  * --per-pass names the first pass that breaks equivalence; --shrink keeps
#    the failing output only, replaces what both modules compute alike by
#    parameters or constants, and writes a pair that still differs with the
#    command that shows it;
#  * the same seed gives the same bits, also under other MPI algorithms;
#  * opaque custom calls are functions of their operands (named in the
#    header; off with --opaque-custom-calls=false), elided constants an
#    error unless --fill-elided;
#  * --local checks each region on its own (one group for all on fewer
#    ranks), confirms a difference on free inputs on the whole pair when it
#    fits, and writes the regions with --regions-dir; regions over entry
#    parameters alone (swapped operands) differ, exit 1;
#  * the default trials find compare GT against GE (the copies trial), which
#    64 trials of --dist=uniform miss;
#  * outputs too big to hold twice are compared by digest, with the same
#    first difference; a pair over even that is refused before it runs;
#  * --json and --junit parse; on the transformer step at 2, 4 and 8 ranks
#    the bf16 accumulation's error is larger than f32's, with numbers.
# One line per case, closing "hlo-check: N passed, N failed"; TALLY support.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness hlo-check
use_build "${1:-$root/build}"
check=$build/hlo-check run=$build/hlo-run
py=/usr/bin/python3
mpi_flags=(--mca mpi_yield_when_idle 1)

bad_context() { sed 's/^/    /' "$tmp/out" | tail -n 5; }
mpi() {
    local n=$1
    shift
    mpi_run 300 "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
}

# The reference module for n ranks; mutations edit one line of it.
module() {
    local n=$1 gather_groups=$2 reduce_groups=$3
    cat <<EOF
HloModule m

%add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[8,4] parameter(0)
  q = f32[8,4] parameter(1)
  c = f32[] constant(2)
  cb = f32[8,4] broadcast(c), dimensions={}
  m = f32[8,4] multiply(p, cb)
  s = f32[8,4] subtract(m, q)
  ar = f32[8,4] all-reduce(s), replica_groups=$reduce_groups, to_apply=%add
  sl = f32[4,4] slice(s), slice={[0:4], [0:4]}
  g = f32[$((4 * n)),4] all-gather(sl), replica_groups=$gather_groups, dimensions={0}
  ROOT t = (f32[8,4], f32[$((4 * n)),4]) tuple(ar, g)
}
EOF
}

all_ranks() { local n=$1 s="{{" k; for ((k = 0; k < n; k++)); do s+="$k"; [ $k -lt $((n - 1)) ] && s+=","; done; echo "$s}}"; }
reversed() { local n=$1 s="{{" k; for ((k = n - 1; k >= 0; k--)); do s+="$k"; [ $k -gt 0 ] && s+=","; done; echo "$s}}"; }
# Pairs {0,1},{2,3},... (singletons for one rank): differs from {} when n > 2.
pairs() {
    local n=$1 s="{" k
    if [ "$n" -eq 1 ]; then echo "{{0}}"; return; fi
    for ((k = 0; k < n; k += 2)); do s+="{$k,$((k + 1))}"; [ $((k + 2)) -lt $n ] && s+=","; done
    echo "$s}"
}

expect_exit() {  # name, n, want, before, after
    local name=$1 n=$2 want=$3
    mpi "$n" "$check" "$4" "$5" --trials=2
    local rc=$?
    if [ $rc -eq "$want" ]; then ok "$name @ $n (exit $want)"; else bad "$name @ $n" "exit $rc, want $want"; fi
}

for n in 1 2 4 8; do
    module "$n" '{}' '{}' >"$tmp/ref$n.hlo"
    expect_exit "identical modules" "$n" 0 "$tmp/ref$n.hlo" "$tmp/ref$n.hlo"
    module "$n" "$(all_ranks "$n")" '{}' >"$tmp/same$n.hlo"
    expect_exit "{} vs the explicit group of all (same function)" "$n" 0 "$tmp/ref$n.hlo" "$tmp/same$n.hlo"
    sed 's/constant(2)/constant(3)/' "$tmp/ref$n.hlo" >"$tmp/const$n.hlo"
    expect_exit "changed constant" "$n" 1 "$tmp/ref$n.hlo" "$tmp/const$n.hlo"
    sed 's/subtract(m, q)/subtract(q, m)/' "$tmp/ref$n.hlo" >"$tmp/swap$n.hlo"
    expect_exit "swapped operand" "$n" 1 "$tmp/ref$n.hlo" "$tmp/swap$n.hlo"
    sed 's/slice={\[0:4\], \[0:4\]}/slice={[1:5], [0:4]}/' "$tmp/ref$n.hlo" >"$tmp/slice$n.hlo"
    expect_exit "off-by-one slice" "$n" 1 "$tmp/ref$n.hlo" "$tmp/slice$n.hlo"
    module "$n" "$(reversed "$n")" '{}' >"$tmp/order$n.hlo"
    expect_exit "wrong gather order" "$n" $([ "$n" -gt 1 ] && echo 1 || echo 0) "$tmp/ref$n.hlo" "$tmp/order$n.hlo"
    module "$n" '{}' "$(pairs "$n")" >"$tmp/group$n.hlo"
    expect_exit "wrong group" "$n" $([ "$n" -gt 2 ] && echo 1 || echo 0) "$tmp/ref$n.hlo" "$tmp/group$n.hlo"
done

# A counterexample replays: saved inputs through hlo-run reproduce the
# reported difference, and equal the trial seed's random inputs.
mpi 4 "$check" "$tmp/ref4.hlo" "$tmp/const4.hlo" --seed=7 --save-counterexample="$tmp/cex" --json="$tmp/cex.json"
seed=$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["difference"]["seed"])' "$tmp/cex.json" 2>/dev/null)
if [ -n "$seed" ] && mpi 4 "$run" "$tmp/ref4.hlo" --inputs "$tmp/cex" --outputs "$tmp/o_replay" &&
   mpi 4 "$run" "$tmp/ref4.hlo" --seed "$seed" --outputs "$tmp/o_seed" &&
   mpi 4 "$run" "$tmp/const4.hlo" --inputs "$tmp/cex" --outputs "$tmp/o_after" &&
   diff -r "$tmp/o_replay" "$tmp/o_seed" >/dev/null && ! diff -r "$tmp/o_replay" "$tmp/o_after" >/dev/null; then
    ok "counterexample replays with hlo-run --inputs and equals --seed $seed"
else
    bad "counterexample replay" "seed '$seed'"
fi

# Mismatched signatures: exit 2, the message names the parameter.
sed 's/  q = f32\[8,4\] parameter(1)/  q64 = f64[8,4] parameter(1)\n  q = f32[8,4] convert(q64)/' \
    "$tmp/ref2.hlo" >"$tmp/q64.hlo"
mpi 2 "$check" "$tmp/ref2.hlo" "$tmp/q64.hlo"
rc=$?
if [ $rc -eq 2 ] && grep -q "parameter 1 differs" "$tmp/err" && [ "$(grep -c 'parameter 1 differs' "$tmp/err")" -eq 1 ]; then
    ok "mismatched parameter: exit 2, named once"
else
    bad "mismatched parameter" "exit $rc; $(head -c 300 "$tmp/err")"
fi

# Determinism: the same module and seed give the same bits run after run and
# whatever algorithms Open MPI picks for its collectives underneath.
step=$root/corpus/demo/transformer_step_4dev.hlo
mpi 4 "$run" "$step" --seed 3 --outputs "$tmp/det_a" && mpi 4 "$run" "$step" --seed 3 --outputs "$tmp/det_b" &&
    mpi 4 --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_alltoall_algorithm 2 \
        --mca coll_tuned_allgather_algorithm 2 --mca coll_tuned_alltoallv_algorithm 1 \
        --mca coll_tuned_allgatherv_algorithm 2 "$run" "$step" --seed 3 --outputs "$tmp/det_c"
rc=$?
if [ $rc -eq 0 ] && diff -r "$tmp/det_a" "$tmp/det_b" >/dev/null && diff -r "$tmp/det_a" "$tmp/det_c" >/dev/null; then
    ok "same seed, same bits: twice and with other MPI collective algorithms"
else
    bad "determinism" "exit $rc"
fi

# --shrink keeps only the failing output (here the second: the first does
# not read the changed constant) and writes a pair that reproduces.
sed 's/  ROOT t = (f32\[8,4\], f32\[\([0-9]*\),4\]) tuple(ar, g)/  n = f32[8,4] negate(q)\n  ROOT t = (f32[8,4], f32[8,4]) tuple(n, ar)/' \
    "$tmp/ref2.hlo" >"$tmp/two_out.hlo"
sed 's/constant(2)/constant(3)/' "$tmp/two_out.hlo" >"$tmp/two_out_const.hlo"
mpi 2 "$check" "$tmp/two_out.hlo" "$tmp/two_out_const.hlo" --shrink --save-counterexample="$tmp/shrunk"
rc=$?
if [ $rc -eq 1 ] && grep -q "kept output 1 of 2" "$tmp/out" && grep -q "(still different)" "$tmp/out" &&
   ! grep -q negate "$tmp/shrunk/before.hlo"; then
    mpi 2 "$check" "$tmp/shrunk/before.hlo" "$tmp/shrunk/after.hlo" --inputs "$tmp/shrunk"
    rc2=$?
    if [ $rc2 -eq 1 ] && [ -f "$tmp/shrunk/command.txt" ] && [ -f "$tmp/shrunk/param0.rank1.npy" ]; then
        ok "--shrink: the failing output alone, with its inputs and command, still differs"
    else
        bad "--shrink" "the written pair gives exit $rc2"
    fi
else
    bad "--shrink" "exit $rc"
fi

# Runs the first command of DIR/command.txt (a shrunk pair's check) from
# $tmp, output in $tmp/out; its exit code.
replay() {
    local cmd
    cmd=$(head -n 1 "$1/command.txt")
    (cd "$tmp" && PATH=$build:$PATH OMPI_MCA_mpi_yield_when_idle=1 timeout 300 bash -c "$cmd" </dev/null >"$tmp/out" 2>"$tmp/err")
}

# --shrink cuts a chain down to the instructions whose values differ: what
# both compute alike becomes a parameter holding its per-rank value (a
# constant when it is one small value on every rank), unused parameters go,
# the element-wise rest shrinks to the failing element (scalars; all-reduce
# too, as it is element-wise across ranks), and the written command
# reproduces the difference from the written files.
shrink_module() {
    cat <<EOF
HloModule chain, replica_count=4

%add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[8,4] parameter(0)
  q = f32[8,4] parameter(1)
  r = f32[8,4] parameter(2)
  e1 = f32[8,4] exponential(p)
  a1 = f32[8,4] add(e1, q)
  k = f32[] constant(4)
  sk = f32[] sqrt(k)
  c = f32[] constant($1)
  x = f32[] add(sk, c)
  xb = f32[8,4] broadcast(x), dimensions={}
  m = f32[8,4] multiply(a1, xb)
  t1 = f32[8,4] tanh(r)
  s = f32[8,4] subtract(m, t1)
  ar = f32[8,4] all-reduce(s), replica_groups={}, to_apply=%add
  n = f32[8,4] negate(ar)
  ROOT t = (f32[8,4], f32[8,4]) tuple(q, n)
}
EOF
}
shrink_module 2 >"$tmp/chain_b.hlo"
shrink_module 3 >"$tmp/chain_a.hlo"
mpi 4 "$check" "$tmp/chain_b.hlo" "$tmp/chain_a.hlo" --shrink --save-counterexample="$tmp/chain"
rc=$?
sb=$tmp/chain/before.hlo
if [ $rc -eq 1 ] && grep -q "2 instructions replaced by parameters, 1 by constants; 3 unused parameters dropped" "$tmp/out" &&
   grep -q "cut to element \[0,0\] of the output, as scalars" "$tmp/out" &&
   grep -q "shrunk from 16 + 16 to 9 + 9 instructions (still different)," "$tmp/out" &&
   ! grep -qE "exponential|tanh|sqrt|%p = |%q = |%r = " "$sb" && grep -q "%a1 = f32\[\] parameter(0)" "$sb" &&
   grep -q "%t1 = f32\[\] parameter(1)" "$sb" && grep -q "all-reduce" "$sb" && grep -q "%sk = f32\[\] constant(2)" "$sb" &&
   [ -f "$tmp/chain/param1.rank3.npy" ] && [ ! -f "$tmp/chain/param2.rank0.npy" ]; then
    replay "$tmp/chain"
    rc2=$?
    if [ $rc2 -eq 1 ] && grep -q "given inputs" "$tmp/out"; then
        ok "--shrink: a chain cut to its differing instructions; command.txt reproduces it"
    else
        bad "--shrink chain replay" "command.txt gives exit $rc2"
    fi
else
    bad "--shrink chain" "exit $rc"
fi

# --shrink cuts the rank count: once the collectives and replica-ids are
# gone (here the replica-id test becomes a parameter), the failing rank's
# inputs alone show the difference, written as rank 0's for mpirun -np 1.
one_rank_module() {
    cat <<EOF
HloModule one, replica_count=4

ENTRY e {
  p = f32[8] parameter(0)
  r = u32[] replica-id()
  two = u32[] constant(2)
  is2 = pred[] compare(r, two), direction=EQ
  isb = pred[8] broadcast(is2), dimensions={}
  c = f32[] constant($1)
  cb = f32[8] broadcast(c), dimensions={}
  m = f32[8] multiply(p, cb)
  ROOT s = f32[8] select(isb, m, p)
}
EOF
}
one_rank_module 2 >"$tmp/one_b.hlo"
one_rank_module 3 >"$tmp/one_a.hlo"
mpi 4 "$check" "$tmp/one_b.hlo" "$tmp/one_a.hlo" --shrink --save-counterexample="$tmp/one"
rc=$?
if [ $rc -eq 1 ] && grep -q "from 4 ranks to 1 (rank 2's inputs alone show it)" "$tmp/out" &&
   grep -q "replica_count=1" "$tmp/one/before.hlo" && ! grep -q "replica-id" "$tmp/one/before.hlo" &&
   [ -f "$tmp/one/param0.rank0.npy" ] && [ ! -f "$tmp/one/param0.rank1.npy" ] &&
   grep -q "^mpirun --oversubscribe -np 1 hlo-check" "$tmp/one/command.txt"; then
    mpi 1 "$check" "$tmp/one/before.hlo" "$tmp/one/after.hlo" --inputs "$tmp/one"
    rc2=$?
    if [ $rc2 -eq 1 ]; then
        ok "--shrink: cut to one rank, the failing rank's inputs reproduce it under mpirun -np 1"
    else
        bad "--shrink one rank" "the one-rank pair gives exit $rc2"
    fi
else
    bad "--shrink one rank" "exit $rc"
fi

# --shrink cuts shapes to what the failing element depends on: #92's
# known-unsound case (an all-gather and a dynamic-slice at a per-partition
# offset) loses the partition-id, which becomes a per-rank parameter; the
# gathered input shrinks to the one shard row the element reads (the
# run-time offsets keep their dimensions whole) and the output to that
# element; its one group of 4 keeps the 4 ranks.
mpi 4 "$check" --passes=default --shrink --save-counterexample="$tmp/ds" \
    "$root/corpus/aws_neuron_flip_all_gather_dynamic_slice/unsound_partition_id_index.hlo"
rc=$?
if [ $rc -eq 1 ] && grep -q "shrunk from 8 + 8 to 7 + 7 instructions (still different), written" "$tmp/out" &&
   grep -q "shapes cut to what element \[2,0,0\] of the output depends on" "$tmp/out" &&
   grep -q "num_partitions=4" "$tmp/ds/before.hlo" && grep -q "%x = f32\[1,8,8\] parameter(0)" "$tmp/ds/before.hlo" &&
   grep -q "ROOT .* = f32\[1,1,1\] slice" "$tmp/ds/after.hlo" &&
   grep -q "all-gather" "$tmp/ds/before.hlo" && ! grep -q "partition-id" "$tmp/ds/before.hlo" &&
   [ -f "$tmp/ds/param1.rank3.npy" ]; then
    ok "--shrink: a gather-dependent difference cut to the failing element's shard, its 4 ranks kept"
else
    bad "--shrink cuts shapes" "exit $rc"
fi

# --shrink cuts the rank count to the failing rank's groups: the pair
# differs only in the order of group {2,3}, so ranks 2 and 3 alone, as 0
# and 1 with their inputs, show it under mpirun -np 2.
cat >"$tmp/groups_b.hlo" <<'EOF'
HloModule swapped, replica_count=4

ENTRY %main (x: f32[2,4]) -> f32[2,8] {
  %x = f32[2,4]{1,0} parameter(0)
  %e = f32[2,4]{1,0} exponential(%x)
  %ag = f32[2,8]{1,0} all-gather(%e), replica_groups={{0,1},{2,3}}, dimensions={1}
  ROOT %t = f32[2,8]{1,0} negate(%ag)
}
EOF
sed 's/{2,3}}/{3,2}}/' "$tmp/groups_b.hlo" >"$tmp/groups_a.hlo"
mpi 4 "$check" "$tmp/groups_b.hlo" "$tmp/groups_a.hlo" --shrink --save-counterexample="$tmp/groups"
rc=$?
want=$(grep -o "rank 2, output 0, element \[0,0\]: before [^ ]*, after [^ ]*" "$tmp/out" | sed 's/rank 2/rank 0/')
if [ $rc -eq 1 ] && grep -q "and from 4 ranks to 2 (the ranks the failing one hears from" "$tmp/out" &&
   grep -q "replica_count=2" "$tmp/groups/before.hlo" && grep -q "replica_groups={{1,0}}" "$tmp/groups/after.hlo" &&
   [ -f "$tmp/groups/param0.rank1.npy" ] && [ ! -f "$tmp/groups/param0.rank2.npy" ] &&
   grep -q "^mpirun --oversubscribe -np 2 hlo-check" "$tmp/groups/command.txt" && [ -n "$want" ]; then
    replay "$tmp/groups"
    rc2=$?
    if [ $rc2 -eq 1 ] && grep -qF "$want" "$tmp/out"; then
        ok "--shrink: cut from 4 ranks to the failing rank's group of 2, renumbered; command.txt shows the same values"
    else
        bad "--shrink group replay" "command.txt gives exit $rc2"
    fi
else
    bad "--shrink to a group" "exit $rc"
fi

# --per-pass --shrink on every known-unsound corpus case (kind unsound in
# its .expect, at its rank count) under the whole default pipeline: the
# guilty pass is the one the .expect names, the written pair has at most 10 instructions on each side, and its
# command.txt replays the difference (exit 1).  A pair judged by accuracy
# has no bitwise difference to shrink: --compare=exact then shrinks one.
entry_instrs() { awk '/^ENTRY/ { on = 1; next } on && /^}/ { on = 0 } on && / = / { n++ } END { print n + 0 }' "$1"; }
for exp in $(grep -l '^kind: unsound' $(find "$root/corpus" -name '*.expect' | sort)); do
    hlo=${exp%.expect}.hlo name=$(basename "${exp%.expect}") flip=$(sed -n 's/^pass: *//p' "$exp")
    n=$(sed -n 's/^ranks: *//p' "$exp" | cut -d, -f1)
    dir=$tmp/unsound_$name extra=()
    mpi "$n" "$check" --passes=default --per-pass --shrink --save-counterexample="$dir" "$hlo"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "judged by accuracy, with no bitwise difference to keep" "$tmp/out"; then
        extra=(--compare=exact)
        mpi "$n" "$check" --passes=default --per-pass --shrink "${extra[@]}" --save-counterexample="$dir" "$hlo"
        rc=$?
    fi
    if [ $rc -ne 1 ] || ! grep -q "first pass that breaks equivalence is #[0-9]* $flip\$" "$tmp/out" ||
       ! grep -q "(still different)" "$tmp/out" || [ ! -f "$dir/before.hlo" ]; then
        bad "--per-pass --shrink $name @ $n" "exit $rc"
        continue
    fi
    counts=$(grep -o "shrunk from [0-9]* + [0-9]* to [0-9]* + [0-9]*" "$tmp/out" | sed 's/shrunk //')
    nb=$(entry_instrs "$dir/before.hlo") na=$(entry_instrs "$dir/after.hlo")
    replay "$dir"
    rc2=$?
    if [ "$nb" -le 10 ] && [ "$na" -le 10 ] && [ $rc2 -eq 1 ]; then
        ok "--per-pass --shrink $name @ $n${extra[*]:+ ${extra[*]}}: $flip named, $counts instructions, replays"
    else
        bad "--per-pass --shrink $name @ $n" "$nb + $na instructions (want <= 10 each), replay exit $rc2"
    fi
done

# --shrink on a pair judged by accuracy says why it has nothing to shrink;
# --compare=exact shrinks its first bitwise difference instead.
narrow=$root/corpus/aws_neuron_flip_reduce_convert_add/unsound_narrowing_f32_to_bf16.hlo
mpi 4 "$check" --passes=default --shrink --save-counterexample="$tmp/acc" "$narrow"
rc=$?
if [ $rc -eq 1 ] && grep -q "judged by accuracy, with no bitwise difference to keep" "$tmp/out" && [ ! -e "$tmp/acc" ]; then
    mpi 4 "$check" --passes=default --shrink --compare=exact --save-counterexample="$tmp/acc" "$narrow"
    rc2=$?
    if [ $rc2 -eq 1 ] && grep -q "(still different)" "$tmp/out" && [ -f "$tmp/acc/before.hlo" ]; then
        ok "--shrink: an accuracy verdict is explained; --compare=exact shrinks the bitwise difference"
    else
        bad "--shrink --compare=exact" "exit $rc2"
    fi
else
    bad "--shrink on an accuracy verdict" "exit $rc"
fi

# --inputs with a file missing (or of the wrong shape) is an input error
# naming the file, exit 2, said once.
mpi 2 "$check" "$tmp/chain_b.hlo" "$tmp/chain_a.hlo" --inputs "$tmp/no_such_dir"
rc=$?
if [ $rc -eq 2 ] && [ "$(grep -c "no_such_dir/param0.rank0.npy: error: cannot open" "$tmp/err")" -eq 1 ]; then
    ok "--inputs: a missing file is exit 2, named once"
else
    bad "--inputs missing file" "exit $rc; $(head -c 300 "$tmp/err")"
fi

# --per-pass names the first pass that breaks equivalence.
mpi 4 "$check" --passes=default --per-pass --trials=2 \
    "$root/corpus/aws_neuron_flip_all_gather_dynamic_slice/unsound_partition_id_index.hlo"
rc=$?
if [ $rc -eq 1 ] && grep -q "first pass that breaks equivalence is #92 aws_neuron_flip_all_gather_dynamic_slice" "$tmp/out"; then
    ok "--per-pass blames #92 on its known-unsound case"
else
    bad "--per-pass" "exit $rc"
fi
mpi 4 "$check" --passes=default --per-pass --trials=1 "$root/corpus/demo/transformer_step_4dev.hlo"
rc=$?
if [ $rc -eq 0 ] && grep -q "EQUIVALENT after every pass" "$tmp/out" && [ "$(grep -c ' equivalent$' "$tmp/out")" -ge 3 ]; then
    ok "--per-pass: every pass of the demo's pipeline keeps it equivalent"
else
    bad "--per-pass on the demo" "exit $rc"
fi

# Opaque custom calls: a function of their operands, named in the header.
opaque_module() {  # $1: the custom call's operand
    cat <<EOF
HloModule m, replica_count=2

%add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  r0 = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=%add
  r1 = f32[4] all-reduce(q), replica_groups={{0,1}}, to_apply=%add
  m = f32[4] multiply(r0, r1)
  ROOT c = (f32[4], f32[2]) custom-call($1), custom_call_target="te_fused_attn_forward_ffi", backend_config="{}"
}
EOF
}
opaque_module m >"$tmp/op_b.hlo"
opaque_module r0 >"$tmp/op_a.hlo"
mpi 2 "$check" --passes=default "$tmp/op_b.hlo" --trials=2
rc=$?
if [ $rc -eq 0 ] && grep -q "EQUIVALENT" "$tmp/out" && grep -q "opaque custom calls.*: te_fused_attn_forward_ffi" "$tmp/out"; then
    ok "opaque custom call: the combined all-reduces keep its operand, equivalent; the target is named"
else
    bad "opaque custom call, default pipeline" "exit $rc"
fi
mpi 2 "$check" "$tmp/op_b.hlo" "$tmp/op_a.hlo" --trials=2
rc=$?
if [ $rc -eq 1 ] && grep -q "DIFFERENT" "$tmp/out"; then
    ok "opaque custom call fed another operand: different"
else
    bad "opaque custom call, other operand" "exit $rc"
fi
mpi 2 "$check" --passes=default "$tmp/op_b.hlo" --opaque-custom-calls=false
rc=$?
if [ $rc -eq 2 ] && grep -q 'op_b.hlo:[0-9]*:[0-9]*: error: unsupported op: custom-call with target "te_fused_attn_forward_ffi"' "$tmp/err"; then
    ok "--opaque-custom-calls=false: unsupported, exit 2, located"
else
    bad "--opaque-custom-calls=false" "exit $rc; $(head -c 300 "$tmp/err")"
fi

# Accuracy needs the oracle, and the oracle cannot see through opaque calls:
# either is refused rather than judged.
mpi 2 "$check" --passes=default "$root/corpus/demo/transformer_step_2dev.hlo" --trials=1 --oracle=none
rc=$?
if [ $rc -eq 2 ] && grep -q "judged by accuracy against the f64 oracle: --oracle=none goes with" "$tmp/err" &&
    ! grep -q "AT LEAST AS ACCURATE" "$tmp/out"; then
    ok "a precision change with --oracle=none: refused (exit 2), not judged"
else
    bad "--oracle=none on a precision change" "exit $rc"
fi
sed 's/  ROOT %result = \(.*\)tuple(\(.*\), %loss)$/  %loss.k = f32[] custom-call(%loss), custom_call_target="opaque_loss"\n  ROOT %result = \1tuple(\2, %loss.k)/' \
    "$root/corpus/demo/transformer_step_2dev.hlo" >"$tmp/demo_opaque.hlo"
mpi 2 "$check" --passes=default "$tmp/demo_opaque.hlo" --trials=1
rc=$?
if [ $rc -eq 2 ] && grep -q "the f64 oracle cannot see through opaque custom calls (opaque_loss)" "$tmp/err"; then
    ok "a precision change feeding an opaque custom call: no accuracy judgement (exit 2)"
else
    bad "oracle and opaque calls" "exit $rc"
fi

# Elided constants: an error, or with --fill-elided the same values in both modules.
cat >"$tmp/el.hlo" <<'EOF'
HloModule el, replica_count=2

%add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[8] parameter(0)
  w = f32[8] constant({...})
  m = f32[8] multiply(p, w)
  r0 = f32[8] all-reduce(m), replica_groups={{0,1}}, to_apply=%add
  r1 = f32[8] all-reduce(w), replica_groups={{0,1}}, to_apply=%add
  ROOT t = (f32[8], f32[8]) tuple(r0, r1)
}
EOF
mpi 2 "$check" --passes=default "$tmp/el.hlo" --trials=2
rc=$?
if [ $rc -eq 2 ] && grep -q "el.hlo:11:3: error: constant w is elided" "$tmp/err"; then
    ok "elided constant without --fill-elided: exit 2, located"
else
    bad "elided constant" "exit $rc; $(head -c 300 "$tmp/err")"
fi
mpi 2 "$check" --passes=default "$tmp/el.hlo" --trials=2 --fill-elided
rc=$?
if [ $rc -eq 0 ] && grep -q "EQUIVALENT" "$tmp/out" && [ "$(grep -c "note: el: 1 elided constant ({...}) filled.*: w" "$tmp/err")" -eq 1 ]; then
    ok "--fill-elided: equivalent, one note"
else
    bad "--fill-elided" "exit $rc; $(head -c 300 "$tmp/err")"
fi

# Outputs that do not fit twice: before's kept as block digests; the first
# difference found all the same (here in the third 2^20-element block).
lean_module() {  # $1: extra instructions before the all-reduce, $2: its operand
    cat <<EOF
HloModule lean, replica_count=2

%add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[3000000] parameter(0)
  n = f32[3000000] negate(p)
$1
  ROOT r = f32[3000000] all-reduce($2), replica_groups={{0,1}}, to_apply=%add
}
EOF
}
lean_module "" n >"$tmp/lean_b.hlo"
lean_module "  five = f32[1] constant({5})
  at = s32[] constant(2500000)
  u = f32[3000000] dynamic-update-slice(n, five, at)" u >"$tmp/lean_a.hlo"
mpi 2 "$check" "$tmp/lean_b.hlo" "$tmp/lean_a.hlo" --trials=1
grep '^difference' "$tmp/out" >"$tmp/lean_whole"
mpi 2 "$check" "$tmp/lean_b.hlo" "$tmp/lean_a.hlo" --trials=1 --max-memory=80MB
rc=$?
if [ $rc -eq 1 ] && grep -q "kept as 64-bit digests" "$tmp/out" && grep -q 'element \[2500000\]' "$tmp/out" &&
    [ "$(grep '^difference' "$tmp/out")" = "$(cat "$tmp/lean_whole")" ]; then
    ok "--max-memory between the lean and the whole need: digests, the same first difference"
else
    bad "digest comparison" "exit $rc"
fi
mpi 2 "$check" "$tmp/lean_b.hlo" "$tmp/lean_b.hlo" --trials=2 --max-memory=80MB
rc=$?
if [ $rc -eq 0 ] && grep -q "kept as 64-bit digests" "$tmp/out" && grep -q EQUIVALENT "$tmp/out"; then
    ok "digest comparison of equal outputs: equivalent"
else
    bad "digest comparison, equal" "exit $rc"
fi
mpi 2 "$check" "$tmp/lean_b.hlo" "$tmp/lean_a.hlo" --trials=1 --max-memory=50MB
rc=$?
if [ $rc -eq 2 ] && grep -q "error: checking the pair needs an estimated [0-9.]* MB per rank, more than --max-memory=50 MB" "$tmp/err"; then
    ok "below even the lean need: refused before running, exit 2"
else
    bad "--max-memory refusal" "exit $rc; $(head -c 300 "$tmp/err")"
fi

# An output that is an input module is refused; the module is intact.
cp "$root/corpus/demo/two_layer_grads.hlo" "$tmp/in.hlo"
sum=$(cksum <"$tmp/in.hlo")
mpi 2 "$check" --passes=default --json="$tmp/in.hlo" "$tmp/in.hlo"
rc=$?
if [ $rc -eq 2 ] && grep -q "is an input module: refusing to write over it" "$tmp/err" &&
   [ "$(cksum <"$tmp/in.hlo")" = "$sum" ]; then
    ok "--json naming the input module: refused, exit 2, the module intact"
else
    bad "--json over the input" "exit $rc"
fi

# --local: each region where the modules differ, checked on its own.
mpi 4 "$check" --passes=default --local --trials=2 "$root/corpus/demo/transformer_step_4dev.hlo"
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^region .*CHANGES PRECISION' "$tmp/out")" -eq 2 ] &&
    grep -q '^hlo-check: AT LEAST AS ACCURATE' "$tmp/out"; then
    ok "--local on the demo: the accumulation-type regions judged on the whole pair, at least as accurate"
else
    bad "--local on the demo" "exit $rc"
fi
mpi 4 "$check" --passes=default --local --trials=2 \
    "$root/corpus/aws_neuron_flip_all_gather_dynamic_slice/unsound_partition_id_index.hlo"
rc=$?
if [ $rc -eq 1 ] && grep -q '^region 1/1 .*DIFFERS on free inputs' "$tmp/out" && grep -q '^hlo-check: DIFFERENT' "$tmp/out" &&
    ! grep -q EQUIVALENT "$tmp/out"; then
    ok "--local on a known-unsound rewrite: the region differs, confirmed on the whole pair"
else
    bad "--local on the unsound case" "exit $rc"
fi
# Two combined all-reduces behind a big computation: the whole pair does
# not fit --max-memory, its one region does; one group of 2 stands for all.
local_module() {  # $1: the combined all-reduce's second output index
    cat <<EOF
HloModule loc, replica_count=4

%add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[2000000] parameter(0)
  q = f32[2000000] parameter(1)
  x1 = f32[2000000] multiply(p, q)
  x2 = f32[2000000] add(x1, p)
  x3 = f32[2000000] subtract(x2, q)
  s = f32[8] slice(x3), slice={[0:8]}
  t = f32[8] slice(x2), slice={[8:16]}
  c = (f32[8], f32[8]) all-reduce(s, t), replica_groups={{0,1},{2,3}}, to_apply=%add
  r0 = f32[8] get-tuple-element(c), index=0
  r1 = f32[8] get-tuple-element(c), index=$1
  m = f32[8] multiply(r0, r1)
  ROOT o = (f32[8], f32[2000000]) tuple(m, x3)
}
EOF
}
local_module 1 >"$tmp/loc_a.hlo"
sed -e 's/  c = (f32\[8\], f32\[8\]) all-reduce(s, t).*/  r0 = f32[8] all-reduce(s), replica_groups={{0,1},{2,3}}, to_apply=%add\n  r1 = f32[8] all-reduce(t), replica_groups={{0,1},{2,3}}, to_apply=%add/' \
    -e '/get-tuple-element(c)/d' "$tmp/loc_a.hlo" >"$tmp/loc_b.hlo"
local_module 0 >"$tmp/loc_bad.hlo"
mpi 4 "$check" "$tmp/loc_b.hlo" "$tmp/loc_a.hlo" --trials=2
rc_whole=$?
mpi 4 "$check" "$tmp/loc_b.hlo" "$tmp/loc_a.hlo" --trials=2 --max-memory=20MB
rc_refused=$?
mpi 4 "$check" "$tmp/loc_b.hlo" "$tmp/loc_a.hlo" --local --trials=2 --max-memory=20MB --regions-dir="$tmp/regions"
rc=$?
if [ $rc_whole -eq 0 ] && [ $rc_refused -eq 2 ] && [ $rc -eq 0 ] &&
    grep -q '^region 1/1 .*one group of 2 of its 4 devices stands for all.* x 2 ranks: EQUIVALENT' "$tmp/out" &&
    grep -q '^hlo-check: EQUIVALENT (--local: 1 region' "$tmp/out"; then
    ok "--local: a pair over --max-memory, its region on one group of 2 ranks: equivalent"
else
    bad "--local under --max-memory" "exit $rc (whole $rc_whole, refused $rc_refused)"
fi
mpi 4 "$check" "$tmp/regions/region1.before.hlo" "$tmp/regions/region1.after.hlo" --trials=2
rc=$?
if [ $rc -eq 0 ] && grep -q EQUIVALENT "$tmp/out" && [ "$(grep -c 'local.input.[0-9]* = .* parameter(' "$tmp/regions/region1.before.hlo")" -eq 2 ]; then
    ok "--regions-dir: the region's modules (its two inputs as parameters) check on their own"
else
    bad "--regions-dir" "exit $rc"
fi
mpi 4 "$check" "$tmp/loc_b.hlo" "$tmp/loc_bad.hlo" --local --trials=2 --max-memory=20MB
rc=$?
if [ $rc -eq 1 ] && grep -q '^region 1/1 .*DIFFERS on free inputs' "$tmp/out" &&
    grep -q '^hlo-check: DIFFERENT on free inputs in 1 region (not confirmed' "$tmp/out"; then
    ok "--local: swapped outputs of the combined all-reduce differ in the region (exit 1)"
else
    bad "--local on a broken combine" "exit $rc"
fi

# --local on one-instruction modules over entry parameters (it once exited 3:
# the region kept the parameter instructions), and the default trials on a
# boundary rewrite (GT against GE: independent draws never make p equal q).
pq_module() {  # $1: the root instruction
    printf 'HloModule m, replica_count=2\n\nENTRY main {\n  p = f32[16] parameter(0)\n  q = f32[16] parameter(1)\n  ROOT r = %s\n}\n' "$1"
}
pq_module 'f32[16] subtract(p, q)' >"$tmp/pq_a.hlo"
pq_module 'f32[16] subtract(q, p)' >"$tmp/pq_b.hlo"
mpi 2 "$check" "$tmp/pq_a.hlo" "$tmp/pq_b.hlo" --local
rc=$?
if [ $rc -eq 1 ] && grep -q '^difference: trial 0 .*element \[0\]: before .*, after ' "$tmp/out" &&
    grep -q '^hlo-check: DIFFERENT' "$tmp/out"; then
    ok "--local: subtract(p, q) against subtract(q, p) over entry parameters differs (exit 1, the element)"
else
    bad "--local on swapped parameters" "exit $rc"
fi
pq_module 'f32[16] add(p, q)' >"$tmp/pq_c.hlo"
pq_module 'f32[16] add(q, p)' >"$tmp/pq_d.hlo"
mpi 2 "$check" "$tmp/pq_c.hlo" "$tmp/pq_d.hlo" --local
rc=$?
if [ $rc -eq 0 ] && grep -q 'the differences do not occur on the module' "$tmp/out"; then
    ok "--local: add(p, q) against add(q, p): regions differ on free inputs, the whole pair is equivalent"
else
    bad "--local on commuted add" "exit $rc"
fi
pq_module 'pred[16] compare(p, q), direction=GT' >"$tmp/pq_gt.hlo"
pq_module 'pred[16] compare(p, q), direction=GE' >"$tmp/pq_ge.hlo"
mpi 2 "$check" "$tmp/pq_gt.hlo" "$tmp/pq_ge.hlo"
rc=$?
if [ $rc -eq 1 ] && grep -q '^inputs: mixed (uniform, copies' "$tmp/out" &&
    grep -q '^difference: trial 1 (input seed [0-9]*, copies)' "$tmp/out"; then
    ok "default trials: compare GT against GE differs on the copies trial, named in the report"
else
    bad "GT against GE by default" "exit $rc"
fi
mpi 2 "$check" "$tmp/pq_gt.hlo" "$tmp/pq_ge.hlo" --dist=uniform --trials=64
rc=$?
if [ $rc -eq 0 ] && grep -q '^inputs: uniform$' "$tmp/out"; then
    ok "--dist=uniform alone: 64 independent trials miss GT against GE (why the default mixes kinds)"
else
    bad "GT against GE, uniform" "exit $rc"
fi

# The transformer step: bf16 accumulation measurably worse than f32's.
for n in 2 4 8; do
    mpi "$n" "$check" --passes=default "$root/corpus/demo/transformer_step_${n}dev.hlo" --trials=2 \
        --json="$tmp/t$n.json" --junit="$tmp/t$n.xml"
    rc=$?
    verdict=$($py - "$tmp/t$n.json" "$tmp/t$n.xml" <<'EOF' 2>&1
import json, sys, xml.dom.minidom
r = json.load(open(sys.argv[1]))
xml.dom.minidom.parse(sys.argv[2])
s = r["sites"]
assert r["judged_by"] == "accuracy" and r["equivalent"], "not judged by accuracy or not passing"
assert len(s) == 2 and all(x["accumulation_before"] == "bf16" and x["accumulation_after"] == "f32" for x in s), s
assert all(x["error_before"]["max_ulp"] > 100 * max(x["error_after"]["max_ulp"], 0.01) for x in s), s
print("bf16 max %.3g ulp vs f32 max %.3g ulp" % (s[0]["error_before"]["max_ulp"], s[0]["error_after"]["max_ulp"]))
EOF
)
    if [ $rc -eq 0 ] && [[ $verdict == bf16* ]]; then
        ok "transformer step @ $n: $verdict; json and junit parse"
    else
        bad "transformer step @ $n" "exit $rc: $verdict"
    fi
done

# A reducer that is not op(p0, p1) (here add(a, a)) is not measured: the
# f64 redo of the site is a plain sum, which such a reducer does not compute
# (its sites were once measured against one, and judged by it).
cat >"$tmp/same_param.hlo" <<'EOF'
HloModule same_param, replica_count=2

%twice (a: bf16[], b: bf16[]) -> bf16[] {
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(1)
  ROOT %s = bf16[] add(%a, %a)
}

ENTRY %main (g: bf16[8], p: (f32[8])) -> f32[8] {
  %g = bf16[8] parameter(0)
  %p = (f32[8]) parameter(1)
  %acc = f32[8] get-tuple-element(%p), index=0
  %r = bf16[8] all-reduce(%g), replica_groups={}, to_apply=%twice
  %c = f32[8] convert(%r)
  ROOT %sum = f32[8] add(%c, %acc)
}
EOF
mpi 2 "$check" --passes=flip-reduce-convert-add "$tmp/same_param.hlo" --trials=2 --json="$tmp/same.json"
rc=$?
measured=$($py -c 'import json,sys; s=json.load(open(sys.argv[1]))["sites"]; print(len(s), [x["measured"] for x in s])' "$tmp/same.json" 2>&1)
if [ "$measured" = "1 [False]" ] && grep -q "not measured" "$tmp/out"; then
    ok "a reducer add(a, a) is not measured as a sum (exit $rc)"
else
    bad "a reducer add(a, a)" "exit $rc: $measured"
fi

# A site inside a while body (gradient accumulation, as real programs put
# #102's target): measured at every execution of the loop's all-reduce,
# 3 iterations x 2 trials x 4 ranks, bf16 against f32 accumulation.
mpi 4 "$check" --passes=flip-reduce-convert-add "$root/corpus/aws_neuron_flip_reduce_convert_add/rewrite_in_while_body.hlo" \
    --trials=2 --json="$tmp/loop.json"
rc=$?
verdict=$($py - "$tmp/loop.json" <<'EOF' 2>&1
import json, sys
s = json.load(open(sys.argv[1]))["sites"]
assert len(s) == 1 and s[0]["measured"] and s[0]["executions"] == 3 * 2 * 4, s
assert s[0]["error_before"]["max_ulp"] > 10 * max(s[0]["error_after"]["max_ulp"], 0.01), s
print("measured at %d executions: bf16 max %.3g ulp vs f32 max %.3g ulp" % (
    s[0]["executions"], s[0]["error_before"]["max_ulp"], s[0]["error_after"]["max_ulp"]))
EOF
)
if [ $rc -eq 0 ] && [[ $verdict == measured* ]] && grep -q "24 executions" "$tmp/out"; then
    ok "a site in a while body @ 4: $verdict"
else
    bad "a site in a while body @ 4" "exit $rc: $verdict"
fi

finish
