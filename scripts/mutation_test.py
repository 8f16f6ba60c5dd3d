#!/usr/bin/env python3
"""Mutation testing of hlo-fuzz: plant one bug at a time in src/passes/,
rebuild hlo-fuzz with that one file (build/ is untouched), run it on the pass the
bug is in, and count the bugs it finds.  Every mutant is reverted, also on
Ctrl-C.

usage: scripts/mutation_test.py [--ranks N] [--count N] [--only SUBSTR] [--build DIR] [--out DIR]
(after make: it links against DIR/libhlocheck.a)

Each mutant below is (pass alias, file, text to replace, replacement, what it
breaks).  "semantic" mutants change what some module computes; "matcher"
mutants make a pass rewrite where the spec says it must not, or decline where
it must, even if the values happen to agree.  Both must be found."""
import argparse
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
     "instr->operands[0]->n_operands == 1;",
     "instr->operands[0]->n_operands == 1 && instr->shape->type != IR_TYPE_PRED;",
     "matcher: declines converts to pred"),
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     "    (void)ctx;\n",
     "    (void)ctx;\n    if (instr->op == IR_OP_CONVERT && instr->shape->type == IR_TYPE_F16)\n        for (;;) {}\n",
     "harness: the pass hangs on a convert to f16"),
    ("flip-ag-convert", "src/passes/flip_all_gather_convert.c",
     "    (void)ctx;\n",
     "    (void)ctx;\n    if (instr->op == IR_OP_CONVERT && instr->shape->type == IR_TYPE_F16)\n"
     "        *(volatile int *)0 = 1;\n",
     "harness: the pass crashes on a convert to f16"),
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
    # the combiners
    ("ar-combiner", "src/passes/combine.c",
     "    if (reaches(e, b))\n        return CLOSE_REACHABILITY;\n",
     "",
     "semantic: the reachability guard is gone (cycles)"),
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
    # #104
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


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)


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
        c = run(["mpicc"] + san + ["-o", exe, f"{build}/obj/src/tools/hlo_{tool}.o", obj, lib, "-lopenblas", "-lm"])
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--only", default="")
    ap.add_argument("--pass-timeout", default="30")
    ap.add_argument("--build", default="build", help="the build whose library and hlo-fuzz object to link")
    ap.add_argument("--out", default="/tmp/hlo-mutants", help="where hlo-fuzz saves the mutants' findings")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    # a kill must still put the pass file back (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    exe = os.path.join(a.out, "hlo-fuzz-mutant")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    found = total = 0
    for alias, path, old, new, what in MUTANTS:
        if a.only and a.only not in alias and a.only not in what:
            continue
        full = os.path.join(ROOT, path)
        orig = open(full).read()
        if orig.count(old) != 1:
            print(f"STALE  {alias}: {what} (the text to replace is not in {path} exactly once)")
            continue
        total += 1
        try:
            open(full, "w").write(orig.replace(old, new))
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
        finally:
            open(full, "w").write(orig)
        sys.stdout.flush()
    print(f"mutation: {found} of {total} planted bugs found")
    return 0 if found == total else 1


if __name__ == "__main__":
    sys.exit(main())
