#!/usr/bin/env python3
"""Mutation testing of hlo-fuzz: plant one bug at a time in src/passes/,
rebuild hlo-fuzz with that one file (build/ is untouched), run it on the pass the
bug is in, and count the bugs it finds.  Every mutant is reverted, also on
Ctrl-C.

usage: scripts/mutation_test.py [--ranks N] [--count N] [--only SUBSTR] [--build DIR] [--out DIR] [--prove]
       scripts/mutation_test.py --checker [--quick] [--only SUBSTR] [--out DIR]
(after make: it links against DIR/libhlocheck.a)

With --checker it tests the checker's own tests instead: each of
CHECKER_MUTANTS (planted in src/check/: comparisons, agreement, verdicts,
digests, the random inputs, --local's numbering, the proof's hashes,
--shrink) is built in a copy of the tree (DIR/repo) and run against make
test's checker suites, fastest first, until one fails (KILLED); a mutant no
suite kills is SURVIVED unless CHECKER_EQUIVALENT argues why it cannot
change a verdict.  A table closes the run; exit 1 on any survivor.

With --prove it tests hlo-check --prove instead: each mutant's hlo-opt is run
on the corpus, XLA's tests (../shared/peer-corpus) and --fuzz-modules
modules hlo-fuzz generates for its pass (with their recipes' flags) to find the
modules the planted bug reaches (its rewrite differs from the correct
one's); the mutant's hlo-check --passes=ALIAS --prove runs on them.  A
mutant is REFUTED when some reached module is; INVALID when the pass's own
checks or the pipeline's verifier stop it (exit 3) before any check; PROVED when every reached
module is proved (the mutation kept the function: listed for a look); a
proof that a trial contradicts is an internal error (exit 3) and fails the
run, as does a mutant whose sampled check finds a difference the proof does
not refute.

Each mutant below is (pass alias, file, text to replace, replacement, what it
breaks).  "semantic" mutants change what some module computes; "matcher"
mutants make a pass rewrite where the spec says it must not, or decline where
it must, even if the values happen to agree.  Both must be found."""
import argparse
import contextlib
import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MUTANTS = [
    # #96
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     "    expand_copy_typed_attrs(m, g, gather);\n",
     "    expand_copy_typed_attrs(m, g, gather);\n    ir_set_channel_id(m, g, -1);\n",
     "semantic: the new all-gather drops its channel_id (group mode changes)"),
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     "instr->operands[0]->n_operands == 1 &&",
     "instr->operands[0]->n_operands == 1 && instr->shape->type != IR_TYPE_PRED &&",
     "matcher: declines converts to pred"),
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     "    (void)ctx;\n",
     "    (void)ctx;\n    if (instr->op == IR_OP_CONVERT && instr->shape->type == IR_TYPE_BF16)\n        for (;;) {}\n",
     "harness: the pass hangs on a convert to bf16"),
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     "    (void)ctx;\n",
     "    (void)ctx;\n    if (instr->op == IR_OP_CONVERT && instr->shape->type == IR_TYPE_BF16)\n"
     "        *(volatile int *)0 = 1;\n",
     "harness: the pass crashes on a convert to bf16"),
    # #96 over bounded dynamic shapes (issue 26)
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     " &&\n           ir_shape_same_dim_kinds(instr->shape, instr->operands[0]->shape);\n",
     ";\n",
     "matcher: a static convert over a bounded all-gather is flipped"),
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     "           ir_shape_same_dim_kinds(instr->shape, instr->operands[0]->shape);\n",
     "           !ir_shape_is_dynamic(instr->shape);\n",
     "matcher: every dynamic shape is declined"),
    # #98
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "           ir_replica_groups_equal(&a->info->replica_groups, &b->info->replica_groups) &&\n",
     "",
     "semantic: the two all-gathers' groups are not compared"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "case IR_OP_REMAINDER: case IR_OP_SUBTRACT:",
     "case IR_OP_REMAINDER: case IR_OP_SUBTRACT: case IR_OP_POWER:",
     "matcher: power joins the nine binaries"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "    if (expand_fresh_channel_widens(ctx->m, a))\n",
     "    if (0)\n",
     "semantic: the fresh channel_id guard is gone"),
    # #97
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "    ng->lists[IR_LIST_DIMENSIONS].v[0] = e;\n",
     "    ng->lists[IR_LIST_DIMENSIONS].v[0] = d;\n",
     "semantic: the new all-gather keeps the old dimension"),
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "    if (expand_sound(ctx) && !keeps_shards_whole(&map, g->shape, d))\n",
     "    if (expand_sound(ctx) && keeps_shards_whole(&map, g->shape, d))\n",
     "matcher: the sound-mode guard is inverted"),
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "    return others <= 1;\n",
     "    return others <= 2;\n",
     "matcher: a merge may take two other dims into the gather dim"),
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "    if (map->count[d] != 1)\n        return false;\n",
     "",
     "matcher: a split gather dim is accepted"),
    # #92
    ("flip-ag-dynamic-slice", "src/passes/flip_all_gather_dynamic_slice.c",
     "    if (expand_sound(ctx) && !indices_from_constants(instr))\n",
     "    if (0)\n",
     "matcher: sound mode takes device-dependent indices"),
    ("flip-ag-dynamic-slice", "src/passes/flip_all_gather_dynamic_slice.c",
     "cut_dims(instr, g->lists[IR_LIST_DIMENSIONS].v[0], &cuts_d) <= 1 || cuts_d",
     "cut_dims(instr, g->lists[IR_LIST_DIMENSIONS].v[0], &cuts_d) < 1 || cuts_d",
     "matcher: one cut dim is enough"),
    ("flip-ag-dynamic-slice", "src/passes/flip_all_gather_dynamic_slice.c",
     "    if (x->op == IR_OP_CONSTANT)\n",
     "    if (x->op == IR_OP_CONSTANT || x->op == IR_OP_PARTITION_ID)\n",
     "matcher: partition-id counts as a constant"),
    ("flip-ag-dynamic-slice", "src/passes/flip_all_gather_dynamic_slice.c",
     "    slice->lists[IR_LIST_DYNAMIC_SLICE_SIZES].v[d] = local;\n",
     "    slice->lists[IR_LIST_DYNAMIC_SLICE_SIZES].v[d] = local > 1 ? local - 1 : local;\n",
     "semantic: the local extent is one short"),
    # #97 with a 0 in the shapes (issue 26)
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "    if (n <= 0)\n        return expand_decline(ctx, \"empty shard, cannot size the local reshape\");\n",
     "",
     "matcher: an empty shard is rewritten with a group size read off 0 / 0"),
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "    if (rest_a != rest_b || rest_a == 0) {\n",
     "    if (rest_a != rest_b) {\n",
     "matcher: CommonFactors without its rule for rests of 0 elements"),
    # a root that is itself a combined member, its partner dead (issue 26)
    ("ar-combiner", "src/passes/combine.c",
     "    if (p >= 0 && rw->repl[p])\n        comp->root = rw->repl[p];\n",
     "",
     "semantic: a root that is a combined member is not replaced"),
    # unbounded dims (issue 26): hlo-fuzz reads such sites without running them
    ("ar-combiner", "src/passes/combine.c",
     "    return *bytes >= 0 && *bytes <= e->limits.max_bytes;\n",
     "    return *bytes <= e->limits.max_bytes;\n",
     "matcher: a result of unknown size (an unbounded dim) gets a key"),
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "        if (s->dims[i] < 0)\n            return false;\n",
     "",
     "matcher: an unbounded dim counts as a static one"),
    # #92's sound guard follows only the listed ops, within its budget (docs/fuzz-coverage.md, "Rulings")
    ("flip-ag-dynamic-slice", "src/passes/flip_all_gather_dynamic_slice.c",
     "    case IR_OP_REVERSE: case IR_OP_TUPLE: case IR_OP_GET_TUPLE_ELEMENT:\n",
     "    case IR_OP_REVERSE: case IR_OP_TUPLE: case IR_OP_GET_TUPLE_ELEMENT: case IR_OP_REDUCE:\n",
     "matcher: sound mode follows an index through a reduce"),
    ("flip-ag-dynamic-slice", "src/passes/flip_all_gather_dynamic_slice.c",
     "    int budget = 256;\n",
     "    int budget = 1 << 20;\n",
     "matcher: sound mode walks an index DAG without a budget"),
    # #98: the two all-gathers must agree on every flag
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "           a->info->bools[IR_BOOL_CONSTRAIN_LAYOUT] == b->info->bools[IR_BOOL_CONSTRAIN_LAYOUT] &&\n",
     "",
     "matcher: constrain_layout may differ"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "           a->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS] == b->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS] &&\n",
     "",
     "matcher: use_global_device_ids may differ"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "           ca.present == cb.present && (!ca.present || ca.v == cb.v) &&\n",
     "           (!ca.present || !cb.present || ca.v == cb.v) &&\n",
     "matcher: one all-gather may have a channel_id and the other none"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "           same_text(ir_raw_attr_get(a, \"sharding\"), ir_raw_attr_get(b, \"sharding\"));\n",
     "           true;\n",
     "matcher: the shardings may differ"),
    # the combiners
    ("ar-combiner", "src/passes/combine.c",
     "    if (reaches(e, b))\n        return CLOSE_REACHABILITY;\n",
     "",
     "semantic: the reachability guard is gone (cycles)"),
    ("rs-combiner", "src/passes/combine.c",
     "        .flag1 = instr->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS],\n",
     "        .flag1 = false,\n",
     "matcher: the all-reduce / reduce-scatter key leaves out use_global_device_ids"),
    ("ag-combiner", "src/passes/combine_all_gather.c",
     "        .flag1 = instr->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS],\n",
     "        .flag1 = false,\n",
     "matcher: the all-gather key leaves out use_global_device_ids"),
    ("ar-combiner", "src/passes/combine.c",
     "    return *bytes >= 0 && *bytes <= e->limits.max_bytes;\n",
     "    return *bytes >= 0 && *bytes < e->limits.max_bytes;\n",
     "matcher: a member exactly as big as the byte limit gets no key"),
    ("ar-combiner", "src/passes/combine.c",
     "           op == IR_OP_AND || op == IR_OP_OR;\n",
     "           op == IR_OP_AND || op == IR_OP_OR || op == IR_OP_SUBTRACT || op == IR_OP_XOR;\n",
     "matcher: a reducer of another binary op (subtract, xor) counts as trivial"),
    ("ar-combiner", "src/passes/combine.c",
     "    for (int i = 0; i < n; i++) {\n        const char *s = ir_raw_attr_get(group[i], \"sharding\");\n",
     "    for (int i = 0; i < n - 1; i++) {\n        const char *s = ir_raw_attr_get(group[i], \"sharding\");\n",
     "semantic: the combined op's tuple sharding leaves out its last member's"),
    ("ar-combiner", "src/passes/combine.c",
     "    if (bk->n_members >= e->limits.max_count)\n",
     "    if (bk->n_members > e->limits.max_count)\n",
     "matcher: a group may hold one member more than the count limit"),
    ("rs-combiner", "src/passes/combine.c",
     "    if (bytes > e->limits.max_bytes - bk->bytes)\n",
     "    if (bytes >= e->limits.max_bytes - bk->bytes)\n",
     "matcher: the byte limit is exclusive"),
    ("ag-combiner", "src/passes/combine.c",
     "        if (c->skips_while_under_fsdp && opt->neuron_fsdp && scan.in_while[scan.comps[i]->id])\n",
     "        if (0)\n",
     "matcher: --neuron-fsdp no longer skips while bodies"),
    ("ar-combiner", "src/passes/combine.c",
     "    if (scan.constrained) {\n",
     "    if (0) {\n",
     "matcher: a constrain_layout member no longer gates the pass off"),
    ("rs-combiner", "src/passes/combine.c",
     "        x->n_control_predecessors > 0 || e->at[p].ctrl_succ)\n",
     "        x->n_control_predecessors > 0)\n",
     "semantic: a control predecessor of another instruction is combined"),
    ("ag-combiner", "src/passes/combine.c",
     "    return best < min_rank ? best : 0;\n",
     "    return best;\n",
     "semantic: the combined dim is not checked against the lowest-rank member"),
    ("ag-combiner", "src/passes/combine_all_gather.c",
     "        .type = instr->shape->type,\n",
     "        .type = IR_TYPE_F32,\n",
     "semantic: the all-gather key ignores the element type"),
    ("ag-combiner", "src/passes/combine_all_gather.c",
     "    bool keyed = opt->mode == PASS_MODE_SOUND || partitions;\n",
     "    bool keyed = partitions;\n",
     "matcher: sound mode no longer keys channel_id presence"),
    ("ag-combiner", "src/passes/combine.c",
     "        if (count[d] > count[best])\n",
     "        if (count[d] >= count[best])\n",
     "matcher: a tie of gather dims goes to the larger one"),
    # reducers that are not trivial though op is at the root (issue 26)
    ("ar-combiner", "src/passes/combine.c",
     "    bool params = a->op == IR_OP_PARAMETER && b->op == IR_OP_PARAMETER && a != b;\n",
     "    bool params = a->op == IR_OP_PARAMETER && b->op == IR_OP_PARAMETER;\n",
     "matcher: op(a, a) counts as a trivial reducer"),
    ("rs-combiner", "src/passes/combine.c",
     "    if (!comp || comp->n_params != 2 || comp->n_instrs != 3 || !comp->root)\n",
     "    if (!comp || comp->n_params != 2 || !comp->root || comp->root->n_operands != 2)\n"
     "        return IR_OP_COUNT;\n"
     "    if (is_reducer_op(comp->root->op) && (comp->root->operands[0]->op == IR_OP_PARAMETER ||\n"
     "                                          comp->root->operands[1]->op == IR_OP_PARAMETER))\n"
     "        return comp->root->op;\n"
     "    if (1)\n",
     "matcher: a reducer is trivial when its root is op with a parameter operand (op(a, c), op(a, negate(b)))"),
    # scheduled modules (issue 26): the combiners walk the schedule
    ("ag-combiner", "src/passes/pipeline.c",
     "    if (comp->module->is_scheduled) {\n",
     "    if (0) {\n",
     "matcher: a scheduled module is walked in XLA's post order, not in its schedule"),
    ("ar-combiner", "src/passes/pipeline.c",
     "    if (comp->module->is_scheduled) {\n",
     "    if (comp->module->is_scheduled && comp->n_instrs > 40) {\n",
     "matcher: a small scheduled computation is walked in post order"),
    # fusions (issue 26): no pass visits a computation a fusion calls
    ("flip-ag-convert", "src/passes/pipeline.c",
     "        if (!fused[m->computations[i]->id])\n",
     "        if (1)\n",
     "scan: the computations fusions call are walked too"),
    # groups cut unevenly (issue 26): the same ids in the same order hash alike
    ("ar-combiner", "src/passes/combine.c",
     "           a->channel == b->channel && strcmp(a->tag, b->tag) == 0 &&\n"
     "           ir_replica_groups_equal(a->groups, b->groups);\n",
     "           a->channel == b->channel && strcmp(a->tag, b->tag) == 0;\n",
     "matcher: keys with equal hashes are taken as equal without comparing their groups"),
    # reducers of mixed types (issue 26): a retype keeps what is not of the narrow type
    ("flip-reduce-convert-add", "src/passes/expand.c",
     "    bool retype = src->shape->type == from;\n",
     "    bool retype = src->shape->type == from || src->op == IR_OP_CONSTANT;\n",
     "semantic: the reducer's constants of another type (pred) are retyped too"),
    # 1s in #97's shapes (issue 26): a 1 merged with the gather dim is no "other non-1 dim"
    ("flip-ag-reshape", "src/passes/flip_all_gather_reshape.c",
     "        others += k != d && map->block[k] == map->block[d] && in->dims[k] != 1;\n",
     "        others += k != d && map->block[k] == map->block[d];\n",
     "matcher: 1s merged with the gather dim count among the other dims"),
    # control edges (issue 26): a replaced instruction's successors wait for its replacement
    ("flip-ag-reshape", "src/passes/expand.c",
     "    for (int k = 0; k < instr->n_control_predecessors; k++) {\n",
     "    for (int k = 0; k < 0; k++) {\n",
     "semantic: a control edge from a replaced instruction is not moved to its replacement"),
    # layouts (issue 26): #98 compares the shapes with their layouts
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "           same_layout(a->shape, b->shape) &&\n",
     "",
     "matcher: two all-gathers laid out differently count as identical"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "    return (!a && !b) || (a && b && strcmp(a, b) == 0);\n",
     "    return (!a && !b) || (a && (!b || strcmp(a, b) == 0));\n",
     "matcher: a sharding on the first all-gather only counts as the same"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "    return (!a && !b) || (a && b && strcmp(a, b) == 0);\n",
     "    return (!a && !b) || (a && b);\n",
     "matcher: any two shardings count as the same"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "    return a->has_layout ? a->minor_to_major[i] : a->rank - 1 - i;\n",
     "    return a->has_layout ? a->minor_to_major[i] : -1;\n",
     "matcher: an absent layout differs from the default one"),
    ("flip-ag-binary", "src/passes/flip_all_gathers_binary.c",
     "    return same_text(a->has_layout ? a->layout_tail : NULL, b->has_layout ? b->layout_tail : NULL);\n",
     "    return true;\n",
     "matcher: a tiling is not compared"),
    ("flip-rs-transpose", "src/passes/flip_reduce_scatter_transpose.c",
     "    return op->op == IR_OP_REDUCE_SCATTER && op->n_operands == 1 && producer_matches(op->operands[0]);\n",
     "    return (op->op == IR_OP_REDUCE_SCATTER || op->op == IR_OP_ALL_REDUCE) && op->n_operands == 1 &&\n"
     "           producer_matches(op->operands[0]);\n",
     "matcher: a transpose over an all-reduce is taken for one over a reduce-scatter"),
    # the helpers #102 and #104 share (expand.c)
    ("flip-reduce-convert-add", "src/passes/expand.c",
     "    if (instr->op == IR_OP_PARAMETER)\n        return true;\n    if (instr->op == IR_OP_CONSTANT)\n",
     "    if (instr->op != IR_OP_CALL)\n        return true;\n    if (instr->op == IR_OP_CONSTANT)\n",
     "matcher: a reducer holding an array constant, a slice or a reshape is retyped"),
    ("flip-reduce-convert-add", "src/passes/expand.c",
     "        if (cache->orig[i] == comp && cache->to[i] == to)\n",
     "        if (cache->to[i] == to)\n",
     "semantic: retyped reducers are cached by type alone (two reducers share one copy)"),
    ("flip-rs-transpose", "src/passes/expand.c",
     "        k = every_value_kept(from, to) ? 1 : -1;\n",
     "        k = ir_type_info[to].exponent_bits >= ir_type_info[from].exponent_bits ? 1 : -1;\n",
     "matcher: the widening test reads the exponent alone (f16 -> bf16 counts as widening)"),
    ("flip-reduce-convert-add", "src/passes/expand.c",
     "        k = every_value_kept(from, to) ? 1 : -1;\n",
     "        k = ir_type_info[to].mantissa_bits >= ir_type_info[from].mantissa_bits ? 1 : -1;\n",
     "matcher: the widening test reads the mantissa alone (f8e5m2 -> f8e4m3fn counts as widening)"),
    ("flip-reduce-convert-add", "src/passes/expand.c",
     "        instr->info->literal = retype_literal(m, src->info->literal, shape, from);\n",
     "        instr->info->literal = retype_literal(m, src->info->literal, shape, to);\n",
     "semantic: a retyped reducer's constant is read as the wide type"),
    ("flip-reduce-convert-add", "src/passes/expand.c",
     "        k = every_value_kept(from, to) ? 1 : -1;\n",
     "        k = ir_type_info[to].exponent_bits >= ir_type_info[from].exponent_bits &&\n"
     "            ir_type_info[to].mantissa_bits >= ir_type_info[from].mantissa_bits &&\n"
     "            (ir_type_info[to].has_inf || !ir_type_info[from].has_inf) &&\n"
     "            (ir_type_info[to].has_sign || !ir_type_info[from].has_sign) ? 1 : -1;\n",
     "matcher: the widening test reads the widths, not the values (f8e4m3fn -> f8e4m3fnuz loses 448)"),
    ("flip-rs-transpose", "src/passes/expand.c",
     "        if (isnan(v) ? !isnan(w) : (w != v || signbit(w) != signbit(v)))\n",
     "        if (!isnan(v) && w != v)\n",
     "matcher: the widening test lets the sign of zero go (f4e2m1fn -> f8e4m3fnuz loses -0)"),
    # #102
    ("flip-reduce-convert-add", "src/passes/flip_reduce_convert_add.c",
     "    if (sound && !expand_is_widening_float(p.reduce->shape->type, p.convert->shape->type))\n",
     "    if (0)\n",
     "matcher: sound mode takes narrowing converts"),
    ("flip-reduce-convert-add", "src/passes/flip_reduce_convert_add.c",
     "    r->info->comps[IR_COMP_TO_APPLY] = wide_reducer(ctx, &p);\n",
     "",
     "semantic: the new reduction keeps the narrow reducer"),
    ("flip-reduce-convert-add", "src/passes/flip_reduce_convert_add.c",
     "    if (!p->convert || !p->gte || !ir_op_is(p->gte->operands[0], IR_OP_PARAMETER))\n",
     "    if (!p->convert || !p->gte)\n",
     "matcher: the accumulator need not come from a parameter"),
    ("flip-reduce-convert-add", "src/passes/flip_reduce_convert_add.c",
     "    if (expand_fresh_channel_widens(ctx->m, p.reduce) && (sound || p.reduce->op == IR_OP_REDUCE_SCATTER))\n",
     "    if (expand_fresh_channel_widens(ctx->m, p.reduce) && p.reduce->op == IR_OP_REDUCE_SCATTER)\n",
     "semantic: sound mode widens an all-reduce's group"),
    ("flip-reduce-convert-add", "src/passes/flip_reduce_convert_add.c",
     "    if (!wide_reducer(ctx, &p))\n        return expand_decline(ctx, \"reduction computation cannot be retyped\");\n",
     "",
     "matcher: a reducer with no form in the wide type (and over a float) is not declined"),
    # #104
    ("flip-rs-transpose", "src/passes/flip_reduce_scatter_transpose.c",
     "    return x->op == IR_OP_GET_TUPLE_ELEMENT && ir_op_is(x->operands[0], IR_OP_PARAMETER);\n",
     "    return x->op == IR_OP_GET_TUPLE_ELEMENT;\n",
     "matcher: an element of any tuple counts as the parameter's"),
    ("flip-rs-transpose", "src/passes/flip_reduce_scatter_transpose.c",
     "    rs->lists[IR_LIST_DIMENSIONS].v[0] = nd;\n",
     "    rs->lists[IR_LIST_DIMENSIONS].v[0] = perm->v[d];\n",
     "semantic: the new scatter dim is perm[d], not its inverse"),
    ("flip-rs-transpose", "src/passes/flip_reduce_scatter_transpose.c",
     "        return is_gte_of_parameter(src->operands[0]) || is_gte_of_parameter(src->operands[1]);\n",
     "        return true;\n",
     "matcher: any add is a producer"),
    ("flip-rs-transpose", "src/passes/flip_reduce_scatter_transpose.c",
     "        return ir_op_is(src->operands[0], IR_OP_DYNAMIC_UPDATE_SLICE);\n",
     "        return true;\n",
     "matcher: any reshape is a producer"),
    ("flip-rs-transpose", "src/passes/flip_reduce_scatter_transpose.c",
     "    if (c.convert && expand_sound(ctx) && !expand_is_widening_float(c.rs->shape->type, c.convert->shape->type))\n",
     "    if (c.convert && expand_sound(ctx) && expand_is_widening_float(c.rs->shape->type, c.convert->shape->type))\n",
     "matcher: the sound-mode guard is inverted"),
]


@contextlib.contextmanager
def planted(full, old, new):
    """The file with old replaced by new for the block; put back after it,
    also on Ctrl-C or a kill (main turns SIGTERM into KeyboardInterrupt)."""
    orig = open(full).read()
    open(full, "w").write(orig.replace(old, new))
    try:
        yield
    finally:
        open(full, "w").write(orig)


def run(cmd, **kw):
    kw.setdefault("cwd", ROOT)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def build_tools(path, build, out, tools):
    """The given tools (out-<tool>) with the mutated pass file linked ahead of the library."""
    incs = [f"-Isrc/{d}" for d in sorted(os.listdir(os.path.join(ROOT, "src"))) if d != "tools"]
    obj = out + ".o"
    lib = os.path.join(ROOT, build, "libhlocheck.a")
    c = run(["mpicc", "-std=c11", "-O1", "-D_POSIX_C_SOURCE=200809L"] + incs + ["-c", path, "-o", obj])
    for tool in tools:
        if c.returncode != 0:
            return c
        c = run(["mpicc", "-o", f"{out}-{tool}", f"{build}/obj/src/tools/hlo_{tool}.o", obj, lib, "-lopenblas", "-lprotobuf-c", "-lm"])
    return c


def corpus_modules():
    """(path, ranks) of every module a mutant may reach."""
    mods = []
    for base in ("corpus", os.path.join("..", "shared", "peer-corpus")):
        for d, _, files in sorted(os.walk(os.path.join(ROOT, base))):
            if "interp" in d.split(os.sep):
                continue
            for f in sorted(files):
                if not f.endswith(".hlo"):
                    continue
                path = os.path.join(d, f)
                text = open(path).read(4000)
                ranks = None
                exp = path[:-4] + ".expect"
                if os.path.exists(exp):
                    for line in open(exp):
                        if line.startswith("ranks:"):
                            ranks = int(line.split(":")[1].split(",")[0])
                head = text.splitlines()[0] if text else ""
                r = p = None
                for word in head.replace(",", " ").split():
                    if word.startswith("replica_count="):
                        r = int(word.split("=")[1])
                    if word.startswith("num_partitions="):
                        p = int(word.split("=")[1])
                if ranks is None and (r or p):
                    ranks = (r or 1) * (p or 1)
                mods.append((path, ranks))
    return mods


def fuzz_modules(a, alias, n):
    """(path, ranks, flags) of n modules hlo-fuzz generates for alias (its
    sites, at the devices and with the flags its recipe says)."""
    mods = []
    d = os.path.join(a.out, "fuzz")
    os.makedirs(d, exist_ok=True)
    for k in range(n):
        r = run([f"{a.build}/hlo-fuzz", f"--passes={alias}", f"--index={k}", "--print"])
        if r.returncode != 0:
            continue
        path = os.path.join(d, f"{alias}-{k}.hlo")
        open(path, "w").write(r.stdout)
        ranks, flags = 1, []
        for line in r.stdout.splitlines():
            if line.startswith("// devices:"):
                w = line.split()
                ranks = int(w[2]) * int(w[5])
            if line.startswith("// flags:"):
                flags = line.split()[2:]
        mods.append((path, ranks, flags))
    return mods


def prove_mutants(a, env):
    """--prove: see the module docstring."""
    exe = os.path.join(a.out, "mutant")
    good = {}
    corpus = [(m, n, []) for m, n in corpus_modules()]
    fuzzed = {}
    refuted = proved = unreached = bad = total = invalid = 0
    for alias, path, old, new, what in MUTANTS:
        if what.startswith("harness") or (a.only and a.only not in alias and a.only not in what):
            continue
        if alias not in fuzzed:
            fuzzed[alias] = fuzz_modules(a, alias, a.fuzz_modules)
        mods = corpus + fuzzed[alias]
        for m, _, fl in mods:
            if (alias, m) not in good:
                good[(alias, m)] = run([f"{a.build}/hlo-opt", f"--passes={alias}", *fl, m]).stdout
        full = os.path.join(ROOT, path)
        if open(full).read().count(old) != 1:
            print(f"STALE  {alias}: {what}")
            continue
        total += 1
        with planted(full, old, new):
            b = build_tools(path, a.build, exe, ("opt", "check"))
            if b.returncode != 0:
                print(f"NOBUILD {alias}: {what}\n{b.stderr[-2000:]}")
                bad += 1
                continue
            reached = [(m, n, fl) for m, n, fl in mods
                       if run([f"{exe}-opt", f"--passes={alias}", *fl, m], timeout=30).stdout != good[(alias, m)]]
            verdicts = []
            for m, n, fl in reached[:8]:
                for np_ in ([n] if n else [4, 2, 8]):
                    r = run(["timeout", "120", "mpirun", "--oversubscribe", "-np", str(np_), f"{exe}-check",
                             f"--passes={alias}", *fl, "--prove", "--trials=4", "--fill-elided", m], env=env)
                    if r.returncode != 2:
                        break
                last = [l for l in r.stdout.splitlines() if l.startswith("hlo-check: ")]
                status = next((w for w in ("REFUTED", "PROVED", "NOT EXACT", "NOT PROVED")
                               if any(l.startswith("hlo-check: " + w) for l in last)), f"exit {r.returncode}")
                if r.returncode == 3 and "a hashing rule is unsound" not in r.stderr:
                    status = "INVALID"      # the pass's own checks or the pipeline's verifier caught it first
                if r.returncode == 3 and "a hashing rule is unsound" in r.stderr:
                    status = "PROOF CONTRADICTED"
                verdicts.append((os.path.relpath(m, ROOT), r.returncode, status))
            if not reached:
                unreached += 1
                print(f"UNREACHED {alias}: {what}")
                continue
            wrong = [v for v in verdicts if (v[1] == 3 and v[2] != "INVALID") or
                     (v[1] == 1 and v[2] not in ("REFUTED", "NOT EXACT"))]
            if wrong:
                bad += 1
                print(f"UNSOUND {alias}: {what}: {wrong}")
            elif any(v[2] == "REFUTED" or (v[1] == 1 and v[2] == "NOT EXACT") for v in verdicts):
                refuted += 1
                print(f"REFUTED {alias}: {what}: {[v for v in verdicts if v[1] == 1][0]}")
            elif any(v[2] == "INVALID" for v in verdicts):
                invalid += 1
                print(f"INVALID {alias}: {what}: the verifier rejects its rewrite of {len(reached)} modules")
            else:
                proved += 1
                print(f"KEPT   {alias}: {what}: reached {len(reached)} modules, {verdicts}")
        sys.stdout.flush()
    print(f"mutation --prove: {total} mutants: {refuted} refuted, {invalid} caught by the verifier first, {proved} "
          f"kept every reached module's function (proved or not proved), {unreached} reached no module, {bad} wrong")
    return 0 if bad == 0 else 1


# ---------------------------------------------------------------------------
# --checker: mutants of the checker itself (src/check/ and what its verdicts
# rest on), each run against make test's checker suites until one fails.
# (file, text to replace, replacement, what it breaks)

CHECKER_MUTANTS = [
    # compare.c: how two elements agree
    ("src/check/compare.c", "return memcmp(a, b, es) == 0 || (is_float && is_nan(t, a) && is_nan(t, b));",
     "return memcmp(a, b, es) == 0 || (is_float && (is_nan(t, a) || is_nan(t, b)));",
     "exact: one NaN agrees with any value"),
    ("src/check/compare.c", "return memcmp(a, b, es) == 0 || (is_float && is_nan(t, a) && is_nan(t, b));",
     "return memcmp(a, b, es > 1 ? es - 1 : es) == 0 || (is_float && is_nan(t, a) && is_nan(t, b));",
     "exact: the top byte (sign, exponent) is not compared"),
    ("src/check/compare.c", "if (tol->mode == CHECK_EXACT && memcmp(a->data, b->data, (size_t)n * es) == 0)\n        return -1;",
     "if (tol->mode == CHECK_EXACT && memcmp(a->data, b->data, (size_t)(n > 1 ? n - 1 : n) * es) == 0)\n        return -1;",
     "first difference: the last element is left out of the fast path"),
    ("src/check/compare.c", "    for (int64_t i = 0; i < n; i++)\n        if (!check_elements_agree(",
     "    for (int64_t i = 1; i < n; i++)\n        if (!check_elements_agree(",
     "first difference: element 0 is never reported"),
    ("src/check/compare.c", "return fabs(x - y) <= tol->atol + tol->rtol * fabs(y);",
     "return fabs(x - y) <= tol->atol + tol->rtol * fabs(y) + 1e-6;",
     "tolerance: an absolute 1e-6 slack beyond --atol/--rtol"),
    ("src/check/compare.c", "return na && nb ? 0 : INFINITY;", "return 0;",
     "ulp distance: a NaN against a number is 0 ulps"),
    ("src/check/compare.c", "return bits & sign ? -mag : mag;", "return mag;",
     "ulp distance: the sign is ignored"),
    ("src/check/compare.c", "a.nonfinite += !(v == w || (isnan(v) && isnan(w)));", "a.nonfinite += 0;",
     "accuracy: non-finite misses are not counted"),
    # check.c: trials, agreement, verdicts
    ("src/check/check.c", "    for (int i = 0; i < r->n_out; i++) {\n        int64_t k = check_first_difference",
     "    for (int i = 1; i < r->n_out; i++) {\n        int64_t k = check_first_difference",
     "the first output is never compared"),
    ("src/check/check.c", "coll_allreduce_i64(r->c, &key, 1, COLL_MIN);", "coll_allreduce_i64(r->c, &key, 1, COLL_MAX);",
     "agreement: a difference found on some ranks only is lost"),
    ("src/check/check.c", "rep->equivalent = rep->by_accuracy ? rep->accuracy_ok : !rep->diff.found;",
     "rep->equivalent = rep->by_accuracy ? rep->accuracy_ok : rep->diff.trial >= 0;",
     "verdict: always equivalent when compared bitwise"),
    ("src/check/check.c", "return ma <= mb * (1 + 1e-9) + 1e-300 && a->nonfinite <= b->nonfinite;",
     "return ma <= mb * 2 + 1e-300 && a->nonfinite <= b->nonfinite;",
     "accuracy: twice the error still counts as at least as accurate"),
    ("src/check/check.c", "return ma <= mb * (1 + 1e-9) + 1e-300 && a->nonfinite <= b->nonfinite;",
     "return ma <= mb * (1 + 1e-9) + 1e-300;",
     "accuracy: more non-finite results still count as at least as accurate"),
    ("src/check/check.c", "interp_set_rng_seed(s->it, seed);      /* the trial's seed",
     "interp_set_rng_seed(s->it, seed ^ (uint64_t)(uintptr_t)s->m);      /* the trial's seed",
     "the two modules draw different rng streams"),
    ("src/check/check.c", "rep->by_accuracy = r->tol.mode == CHECK_AUTO && rep->precision_changing;",
     "rep->by_accuracy = r->tol.mode == CHECK_AUTO;",
     "every pair judged by accuracy (non-float outputs never compared)"),
    ("src/check/check.c", "rep->by_accuracy = r->tol.mode == CHECK_AUTO && rep->precision_changing;",
     "rep->by_accuracy = false;",
     "a precision change compared bitwise"),
    ("src/check/check.c", "rep->dist = r->opt->dist == CHECK_DIST_MIXED && rep->by_accuracy ? CHECK_DIST_UNIFORM : r->opt->dist;",
     "rep->dist = CHECK_DIST_UNIFORM;",
     "the default trials draw uniform values only"),
    ("src/check/check.c", "p->status = !p->differs ? CHECK_PROOF_PROVED : rep->diff.found ? CHECK_PROOF_REFUTED : CHECK_PROOF_NOT_PROVED;",
     "p->status = !p->differs || !rep->diff.found ? CHECK_PROOF_PROVED : CHECK_PROOF_REFUTED;",
     "--prove: differing hashes no trial confirms count as PROVED"),
    ("src/check/check.c", "    if (rep->precision_changing) {\n        p->status = CHECK_PROOF_NOT_EXACT;",
     "    if (rep->precision_changing && rep->n_sites > 1) {\n        p->status = CHECK_PROOF_NOT_EXACT;",
     "--prove: a single precision-changing site is proved like an exact rewrite"),
    ("src/check/check.c", "if (ok && !rep->by_accuracy && !coll_all_ok(c, !rep->diff.found))",
     "if (ok && !rep->by_accuracy && !coll_all_ok(c, !rep->diff.found || rep->trials_run < 2))",
     "trials go on after a difference on trial 0 (report only)"),
    ("src/check/check.c", "    r->trial_dist = check_trial_dist(r->rep->dist, t);",
     "    r->trial_dist = check_trial_dist(r->rep->dist, t + 1);",
     "the difference names another trial's kind (its inputs cannot be drawn again)"),
    # digest.c: outputs compared by block hashes
    ("src/check/digest.c", "hi = lo + DIGEST_BLOCK < n ? lo + DIGEST_BLOCK : n;",
     "hi = lo + DIGEST_BLOCK < n ? lo + DIGEST_BLOCK - 1 : n;",
     "digest: the last element of each full block is not hashed"),
    ("src/check/digest.c", "hi = lo + DIGEST_BLOCK < n ? lo + DIGEST_BLOCK : n;",
     "hi = lo + DIGEST_BLOCK < n ? lo + DIGEST_BLOCK : n - 1;",
     "digest: the last element of the last block is not hashed"),
    ("src/check/digest.c", "            if (f != f)\n                memcpy(p + 4 * i, &(uint32_t){ 0x7fc00000u }, 4);",
     "            if (f != f || f == 0)\n                memcpy(p + 4 * i, &(uint32_t){ 0x7fc00000u }, 4);",
     "digest: f32 zeros hashed as NaN (+-0 and NaN against 0 hidden)"),
    ("src/check/digest.c", "return check_hash_bytes((uint64_t)block, bits, (size_t)(hi - lo) * esize);",
     "return check_hash_bytes((uint64_t)block, bits, (size_t)(hi - lo) * esize / 2);",
     "digest: only the first half of each block is hashed"),
    # random_inputs.c: the inputs every verdict rests on
    ("src/check/random_inputs.c", "        if (d->dist == CHECK_DIST_COPIES) {\n            fill_elem(&base, t, any_kind(&base), p);",
     "        if (d->dist == CHECK_DIST_COPIES) {\n            fill_elem(&d->own, t, any_kind(&d->own), p);",
     "copies: every parameter draws its own values"),
    ("src/check/random_inputs.c", "            if (c == 0) {\n                negate_elem(t, p);",
     "            if (c == 0) {\n                (void)negate_elem;",
     "pairs: no negated partner (no +-0 pairs)"),
    ("src/check/random_inputs.c", "            if (i % 4 == 0)\n                memset(p, 0, bytes);",
     "            if (i % 4 == 0)\n                (void)bytes;",
     "pairs: no zero base"),
    ("src/check/random_inputs.c", "    if (c == 0 && float_has_nan(t))\n        return NAN;",
     "    if (c == 0 && float_has_nan(t))\n        return 1.0;",
     "edges: no NaN drawn"),
    ("src/check/random_inputs.c", "            if (float_has_nan(t))\n                f[n++] = NAN;\n            f[n++] = float_has_neg",
     "            if (float_has_nan(t))\n                f[n++] = 1.0;\n            f[n++] = float_has_neg",
     "edges: no NaN at the head of the table"),
    ("src/check/random_inputs.c", "                f[n++] = NAN;       /* parameter 1's second element",
     "                f[n++] = 1.0;       /* parameter 1's second element",
     "edges: no NaN for the second parameter's table entries"),
    ("src/check/random_inputs.c", "        const int64_t e[7] = { is_signed ? lo : max, -1, max, 0, 1, lo + 1, max - 1 };",
     "        const int64_t e[7] = { is_signed ? lo + 1 : max - 1, -1, max - 1, 0, 1, lo + 1, max - 1 };",
     "edges: no integer limit in the table"),
    ("src/check/random_inputs.c", "            static const double small[] = { -0.5, 2.5, -1.5, 0.5, 1, -2, 4 };",
     "            static const double small[] = { -1, 2, -1, 1, 1, -2, 4 };",
     "small: no half in the table"),
    ("src/check/random_inputs.c", "        const int64_t e[7] = { 3, bits, bits - 1, bits + 1, -1, 1, 2 };",
     "        const int64_t e[7] = { 3, bits - 1, bits - 1, bits - 2, -1, 1, 2 };",
     "small: no shift count at or past the width in the table"),
    ("src/check/random_inputs.c", "                ir_elem_set_f64(t, p, tf[i + d->param]);\n            else\n"
     "                ir_elem_set_i64(t, p, tv[i + d->param]);",
     "                ir_elem_set_f64(t, p, tf[i]);\n            else\n                ir_elem_set_i64(t, p, tv[i]);",
     "tables: every parameter starts at the same entry"),
    ("src/check/random_inputs.c", "    if (c == 1 && float_has_neg_zero(t))\n        return -0.0;",
     "    if (c == 1 && float_has_neg_zero(t))\n        return 0.0;",
     "edges: no -0 of its own"),
    ("src/check/random_inputs.c", "        v = (double)rng_int(r, -8, 8) / 2;", "        v = (double)rng_int(r, -8, 8);",
     "small: no halves"),
    ("src/check/random_inputs.c", "        v = bits - 1 + rng_int(r, 0, 2);", "        v = bits - 1;",
     "small: no shift count at or past the width"),
    ("src/check/random_inputs.c", "    const int64_t pick[7] = { lo, lo + 1, -1, 0, 1, hi - 1, hi };",
     "    const int64_t pick[7] = { lo + 1, lo + 1, -1, 0, 1, hi - 1, hi - 1 };",
     "extreme: no integer minimum or maximum"),
    ("src/check/random_inputs.c", "        const uint64_t pick[7] = { 0, 1, 2, max / 2, max / 2 + 1, max - 1, max };",
     "        const uint64_t pick[7] = { 0, 1, 2, max / 2, max / 2 + 1, max - 1, max - 1 };",
     "extreme: no unsigned maximum"),
    ("src/check/random_inputs.c", "    return dist == CHECK_DIST_MIXED ? mixed_kinds[(trial < 0 ? 0 : trial) % 8] : dist;",
     "    return dist == CHECK_DIST_MIXED ? mixed_kinds[(trial < 0 ? 0 : trial) % 4] : dist;",
     "mixed: only the first four kinds"),
    ("src/check/random_inputs.c", "    bool out_of_range = rng_next(r) >> 63;", "    bool out_of_range = false;",
     "index parameters always in range (no clamping exercised)"),
    ("src/check/random_inputs.c", "    rng_from_key(r, splitmix(splitmix(splitmix(seed) ^ (uint64_t)rank) ^ (uint64_t)param));",
     "    rng_from_key(r, splitmix(splitmix(splitmix(seed) ^ (uint64_t)rank) ^ (uint64_t)(param > 0)));",
     "parameters after the first share one stream"),
    ("src/check/random_inputs.c", "    rng_from_key(r, splitmix(splitmix(splitmix(seed) ^ (uint64_t)rank) ^ (uint64_t)param));",
     "    rng_from_key(r, splitmix(splitmix(splitmix(seed)) ^ (uint64_t)param));",
     "every rank draws the same inputs"),
    # oracle.c and sites.c: the f64 oracle and the sites a verdict by accuracy rests on
    ("src/check/oracle.c", "static bool widens(IrElemType t)\n{\n    return ir_type_is_float(t);",
     "static bool widens(IrElemType t)\n{\n    return ir_type_is_float(t) && t != IR_TYPE_BF16;",
     "oracle: bf16 is not widened (the oracle rounds like the module it judges)"),
    ("src/check/oracle.c", "    if (!widens(t) || s->type != IR_TYPE_F64) {\n        memcpy(w->data, v->data, value_bytes(v));",
     "    if (!widens(t) || t == IR_TYPE_F32 || s->type != IR_TYPE_F64) {\n        memcpy(w->data, v->data, value_bytes(v));",
     "oracle: f32 inputs copied as bits into the f64 run"),
    ("src/check/sites.c", "            if (is_reduction(comp->instrs[i]))\n                sites_of(",
     "            if (is_reduction(comp->instrs[i]) && c < 0)\n                sites_of(",
     "sites: no reduction's accumulation change is found"),
    # local_values.c and local_regions.c: --local's value numbers and regions
    ("src/check/local_values.c", "    for (int k = 0; k < in->n_operands; k++)\n        strbuf_printf(key, \" %d\", nb->vn[side][in->operands[k]->id]);",
     "    if (in->n_operands == 2 && nb->vn[side][in->operands[0]->id] > nb->vn[side][in->operands[1]->id])\n"
     "        strbuf_printf(key, \" %d %d\", nb->vn[side][in->operands[1]->id], nb->vn[side][in->operands[0]->id]);\n"
     "    else\n    for (int k = 0; k < in->n_operands; k++)\n        strbuf_printf(key, \" %d\", nb->vn[side][in->operands[k]->id]);",
     "--local: every two-operand op numbered as if commutative"),
    ("src/check/local_values.c", "    return op == IR_OP_RNG || op == IR_OP_RNG_GET_AND_UPDATE_STATE ||",
     "    return op == IR_OP_RNG_GET_AND_UPDATE_STATE ||",
     "--local: rng numbered like any function of its operands"),
    ("src/check/local_values.c", "        strbuf_printf(key, \"|elided %d\", nb->next);", "        strbuf_printf(key, \"|elided\");",
     "--local: elided constants numbered alike"),
    ("src/check/local_values.c", "(unsigned long long)check_hash_bytes(0x6c69740000000001ULL, lit->data, (size_t)bytes),\n"
     "                      (unsigned long long)check_hash_bytes(0x9e3779b97f4a7c15ULL, lit->data, (size_t)bytes));",
     "(unsigned long long)check_hash_bytes(0x6c69740000000001ULL, lit->data, (size_t)bytes / 2),\n"
     "                      (unsigned long long)check_hash_bytes(0x9e3779b97f4a7c15ULL, lit->data, (size_t)bytes / 2));",
     "--local: big constants keyed by their first half"),
    ("src/check/local_values.c", "        !ir_shape_equal(b->shape, a->shape) || is_unrepeatable(b->op) || b->op == IR_OP_PARAMETER ||",
     "        !ir_shape_equal(b->shape, a->shape) || is_unrepeatable(b->op) ||",
     "--local: two parameters of one shape matched as one value"),
    ("src/check/local_regions.c", "            if (check_shared(an, y, s) && an->param_free[s][y->id] && !an->counter[s][y->id])",
     "            if (check_shared(an, y, s) && !an->counter[s][y->id])",
     "--local: shared values that read parameters pulled into the region"),
    ("src/check/local_values.c", "    int64_t hi = dir == IR_CMP_LE ? bound + 1 : bound;", "    int64_t hi = bound;",
     "--local: a counter compared LE misses its last value"),
    ("src/check/local_regions.c", "    if (x->op == IR_OP_PARAMETER)\n        return;     /* a parameter is never computed",
     "    if (x->op == IR_OP_PARAMETER && x->id < 0)\n        return;     /* a parameter is never computed",
     "--local: a parameter output kept as a region member (the crash this issue fixed)"),
    # prove*.c: the proof's hashes
    ("src/check/prove_ops.c", "    case IR_OP_MAXIMUM: case IR_OP_MINIMUM:\n        return integral;",
     "    case IR_OP_MAXIMUM: case IR_OP_MINIMUM:\n        return true;",
     "--prove: float add/multiply/max/min operands put in canonical order"),
    ("src/check/prove_ops.c", "        return (dir == IR_CMP_EQ || dir == IR_CMP_NE) && !ir_type_is_complex(t);",
     "        return !ir_type_is_complex(t);",
     "--prove: every comparison treated as symmetric"),
    ("src/check/prove_hash.c", "    ir_print_semantic_attrs(&b, instr);\n    mix_text(&m, &b);",
     "    if (instr->op != IR_OP_COMPARE)\n        ir_print_semantic_attrs(&b, instr);\n    mix_text(&m, &b);",
     "--prove: the element-wise signature leaves out compare's direction and type"),
    ("src/check/prove_hash.c", "    ir_print_semantic_attrs(b, instr);\n    mix_text(m, b);",
     "    if (instr->op != IR_OP_SORT)\n        ir_print_semantic_attrs(b, instr);\n    mix_text(m, b);",
     "--prove: sort's attributes left out of its signature"),
    ("src/check/prove_hash.c", "            pmix_u64(&m, (uint64_t)(int64_t)pos);", "            pmix_u64(&m, 0);",
     "--prove: a called computation's operand order left out of its fingerprint"),
    ("src/check/prove_hash.c", "    ir_print_semantic_attrs(b, instr);\n    mix_text(m, b);",
     "    if (instr->op != IR_OP_COMPARE)\n        ir_print_semantic_attrs(b, instr);\n    mix_text(m, b);",
     "--prove: a comparator's direction left out of its fingerprint"),
    ("src/check/prove_hash.c", "    pmix_u64(m, (uint64_t)instr->op);\n    ir_shape_print(b, instr->shape, true);",
     "    pmix_u64(m, (uint64_t)(instr->op == IR_OP_MINIMUM ? IR_OP_MAXIMUM : instr->op));\n"
     "    ir_shape_print(b, instr->shape, true);",
     "--prove: minimum fingerprinted as maximum in called computations"),
    # opaque.c, prove_run.c, prove_coll.c, per_pass.c, report.c
    ("src/check/opaque.c", "    return ir_shape_is_array(s) ? check_hash_bytes(h, v->data, value_bytes(v)) : h;",
     "    return ir_shape_is_array(s) ? check_hash_bytes(h, v->data, value_bytes(v) / 2) : h;",
     "opaque calls: keyed by the first half of each operand's bytes"),
    ("src/check/opaque.c", "    h = hash_str(h, ir_raw_attr_get(instr, \"backend_config\"));",
     "    (void)hash_str;",
     "opaque calls: the backend_config is not part of the key"),
    ("src/check/prove_run.c", "    r->choices++;\n    if (!any_tainted(h))\n        return;",
     "    r->choices++;\n    if (!any_tainted(h) || h)\n        return;",
     "--prove: no decision is ever counted (a conditional proof said unconditional)"),
    ("src/check/prove_coll.c", "                at += (idx[d] + (scatter && d == dim ? position * chunk : 0)) * strides[d];",
     "                at += (idx[d] + (scatter && d == dim ? 0 * chunk : 0)) * strides[d];",
     "--prove: every rank's reduce-scatter hashes the first chunk"),
    ("src/check/per_pass.c", "            out->broken = out->n_steps - 1;",
     "            out->broken = out->n_steps > 1 ? out->n_steps - 2 : 0;",
     "--per-pass: the pass before the guilty one is named"),
    ("src/check/report.c", "                                        : (rep->equivalent ? \"EQUIVALENT\" : \"DIFFERENT\");",
     "                                        : (rep->trials_run ? \"EQUIVALENT\" : \"DIFFERENT\");",
     "report: the summary line says EQUIVALENT whatever the verdict"),
    # shrink: cuts kept only when the pair still differs
    ("src/check/shrink_loop.c", "    if (made && d2.found) {", "    if (made) {",
     "--shrink: a cut kept after the pair no longer differs"),
    ("src/check/shrink_loop.c", "        if (coll_all_ok(c, ok) && d2.found) {", "        if (coll_all_ok(c, ok)) {",
     "--shrink: a rank cut kept after the pair no longer differs"),
    ("src/check/shrink.c", "        coll_allreduce_i64(c, flags, 2 * cs->n, COLL_MIN);",
     "        coll_allreduce_i64(c, flags, 2 * cs->n, COLL_MAX);",
     "--shrink: a value equal on some rank replaced as if equal on every rank"),
]

# Survivors argued equivalent: what, why it cannot change a verdict.
CHECKER_EQUIVALENT = {
    "--shrink: a rank cut kept after the pair no longer differs":
        "the rank cut keeps the failing rank's function by construction (check_rank_subset closes the ranks under "
        "every collective's groups of both modules, refuses replica-id, partition-id and point-to-point ops, and "
        "the inputs move with their ranks), so the cut pair differs whenever the pair does; the re-check is a "
        "guard against a renumbering bug, which no valid pair reaches",
}


def checker_suites(build):
    """make test's checker suites, fastest first: (name, commands)."""
    t = f"{build}/tests"
    mpi = ["mpirun", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
    return [
        ("check unit tests", [[f"{t}/check_test_{n}"] for n in
                              ("boundaries", "verdicts", "proof_signature", "random_inputs", "compare", "prove",
                               "opaque")]),
        ("test_local, test_check_agreement (2, 4 ranks)",
         [mpi + ["-np", str(n), f"{t}/collectives_test_{name}"] for name in ("local", "check_agreement") for n in (2, 4)]),
        ("test_prove.sh", [["scripts/test_prove.sh", build]]),
        ("test_hlo_check.sh", [["scripts/test_hlo_check.sh", build]]),
        ("validate.sh --prove", [["scripts/validate.sh", "--prove", build]]),
        ("test_validate.sh", [["scripts/test_validate.sh", build]]),
        ("test_hlo_fuzz.sh", [["scripts/test_hlo_fuzz.sh", build]]),
    ]


def checker_mutants(a, env):
    """--checker: see CHECKER_MUTANTS.  Works on a copy of the tree (out/repo,
    with out/shared beside it), so the checkout and its build stay as they are."""
    import shutil
    import time
    repo = os.path.join(a.out, "repo")
    shared = os.path.join(a.out, "shared")
    ignore = shutil.ignore_patterns(".git", "build", "build-asan", "build-fuzz")
    if os.path.isdir(repo):
        shutil.rmtree(repo)
    shutil.copytree(ROOT, repo, ignore=ignore, symlinks=True)
    if not os.path.exists(shared):
        os.symlink(os.path.join(os.path.dirname(ROOT), "shared"), shared)
    build = os.path.join(repo, "build")
    bins = [f"build/tests/check_test_{n}" for n in
            ("boundaries", "verdicts", "proof_signature", "random_inputs", "compare", "prove", "opaque")]
    bins += ["build/tests/collectives_test_local", "build/tests/collectives_test_check_agreement"]
    make = ["make", "-C", repo, "--no-print-directory", "-j2", "all"] + bins
    r = run(make)
    if r.returncode != 0:
        print(f"the copy does not build:\n{r.stderr[-2000:]}")
        return 2
    suites = checker_suites(build)
    if a.quick:
        suites = suites[:2]
    rows, killed, survived, argued = [], 0, 0, 0
    for path, old, new, what in CHECKER_MUTANTS:
        if a.only and a.only not in path and a.only not in what:
            continue
        full = os.path.join(repo, path)
        if open(full).read().count(old) != 1:
            print(f"STALE  {path}: {what}")
            continue
        start = time.time()
        with planted(full, old, new):
            b = run(make)
            if b.returncode != 0:
                rows.append((path, what, "does not build"))
                print(f"NOBUILD {path}: {what}\n{b.stderr[-1500:]}")
                continue
            by = None
            for name, cmds in suites:
                for cmd in cmds:
                    limit = "900" if cmd[0].startswith("scripts/") else "120"     # a hang fails too
                    if run(["timeout", limit] + cmd, env=dict(env, CI=""), cwd=repo).returncode != 0:
                        by = name
                        break
                if by:
                    break
        secs = time.time() - start
        if by:
            killed += 1
            rows.append((path, what, f"killed by {by}"))
            print(f"KILLED   {path}: {what}: by {by} ({secs:.0f} s)")
        elif what in CHECKER_EQUIVALENT:
            argued += 1
            rows.append((path, what, "survives, equivalent: " + CHECKER_EQUIVALENT[what]))
            print(f"EQUIV    {path}: {what}: {CHECKER_EQUIVALENT[what]}")
        else:
            survived += 1
            rows.append((path, what, "SURVIVED"))
            print(f"SURVIVED {path}: {what} ({secs:.0f} s)")
        sys.stdout.flush()
    run(make)      # the copy's build back to the unmutated sources
    print("\n| file | mutant | result |\n|---|---|---|")
    for path, what, res in rows:
        print(f"| {os.path.basename(path)} | {what} | {res} |")
    print(f"mutation --checker: {len(rows)} mutants: {killed} killed, {argued} argued equivalent, "
          f"{survived} survived")
    return 0 if survived == 0 else 1

def build_mutant(path, build, out):
    """hlo-fuzz (out) and hlo-opt (out + "-opt") with the mutated pass file
    compiled on its own and linked ahead of the library, whose copy of that
    file is then not pulled in."""
    incs = [f"-Isrc/{d}" for d in sorted(os.listdir(os.path.join(ROOT, "src"))) if d != "tools"]
    obj = out + ".o"
    lib = os.path.join(ROOT, build, "libhlocheck.a")
    # a sanitizer build (make asan) links only with the same sanitizers
    san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"] if b"__asan_" in open(lib, "rb").read() else []
    c = run(["mpicc", "-std=c11", "-O1", "-D_POSIX_C_SOURCE=200809L"] + san + incs + ["-c", path, "-o", obj])
    for tool, exe in (("fuzz", out), ("opt", out + "-opt")):
        if c.returncode != 0:
            return c
        c = run(["mpicc"] + san + ["-o", exe, f"{build}/obj/src/tools/hlo_{tool}.o", obj, lib, "-lopenblas", "-lprotobuf-c", "-lm"])
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--only", default="")
    ap.add_argument("--pass-timeout", default="30")
    ap.add_argument("--build", default="build", help="the build whose library and hlo-fuzz object to link")
    ap.add_argument("--out", default="/tmp/hlo-mutants", help="where hlo-fuzz saves the mutants' findings")
    ap.add_argument("--prove", action="store_true", help="test hlo-check --prove on the corpus instead of hlo-fuzz")
    ap.add_argument("--fuzz-modules", type=int, default=25, help="with --prove: hlo-fuzz modules per pass added")
    ap.add_argument("--checker", action="store_true",
                    help="mutants of the checker (src/check/) against make test's checker suites instead")
    ap.add_argument("--quick", action="store_true", help="with --checker: the cmocka suites only")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    # a kill must still put the pass file back (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    exe = os.path.join(a.out, "hlo-fuzz-mutant")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if a.prove:
        return prove_mutants(a, env)
    if a.checker:
        return checker_mutants(a, env)
    found = total = 0
    for alias, path, old, new, what in MUTANTS:
        if a.only and a.only not in alias and a.only not in what:
            continue
        full = os.path.join(ROOT, path)
        if open(full).read().count(old) != 1:
            print(f"STALE  {alias}: {what} (the text to replace is not in {path} exactly once)")
            continue
        total += 1
        with planted(full, old, new):
            b = build_mutant(path, a.build, exe)
            if b.returncode != 0:
                print(f"NOBUILD {alias}: {what}\n{b.stderr[-2000:]}")
                continue
            # a hanging pass costs its timeout on every module: few modules, a short timeout
            harness = what.startswith("harness")
            count, timeout = (min(a.count, 5), "2") if harness else (a.count, a.pass_timeout)
            r = run(["mpirun", "--oversubscribe", "-np", str(a.ranks), exe, f"--passes={alias}",
                     f"--count={count}", f"--pass-timeout={timeout}", "--out", os.path.join(a.out, "findings"),
                     "--json", os.path.join(a.out, "fuzz.json")], env=env)
            last = [l for l in r.stdout.splitlines() if l.startswith("hlo-fuzz:")]
            hit = r.returncode != 0 and "findings" in (last[-1] if last else "")
            found += hit
            print(f"{'FOUND ' if hit else 'MISSED'} {alias}: {what}: {last[-1] if last else r.stderr[-300:]}")
        sys.stdout.flush()
    print(f"mutation: {found} of {total} planted bugs found")
    return 0 if found == total else 1


if __name__ == "__main__":
    sys.exit(main())
