#!/usr/bin/env python3
"""Mutation testing of hlo-fuzz: plant one bug at a time in src/passes/,
rebuild hlo-fuzz with that one file (build/ is untouched), run it on the pass the
bug is in, and count the bugs it finds.  Every mutant is reverted, also on
Ctrl-C.

usage: scripts/mutation_test.py [--ranks N] [--count N] [--only SUBSTR] [--build DIR] [--out DIR] [--prove]
(after make: it links against DIR/libhlocheck.a)

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


def build_tools(path, build, out, tools):
    """The given tools (out-<tool>) with the mutated pass file linked ahead of the library."""
    incs = [f"-Isrc/{d}" for d in sorted(os.listdir(os.path.join(ROOT, "src"))) if d != "tools"]
    obj = out + ".o"
    lib = os.path.join(ROOT, build, "libhlocheck.a")
    c = run(["mpicc", "-std=c11", "-O1", "-D_POSIX_C_SOURCE=200809L"] + incs + ["-c", path, "-o", obj])
    for tool in tools:
        if c.returncode != 0:
            return c
        c = run(["mpicc", "-o", f"{out}-{tool}", f"{build}/obj/src/tools/hlo_{tool}.o", obj, lib, "-lopenblas", "-lm"])
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
        orig = open(full).read()
        if orig.count(old) != 1:
            print(f"STALE  {alias}: {what}")
            continue
        total += 1
        try:
            open(full, "w").write(orig.replace(old, new))
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
        finally:
            open(full, "w").write(orig)
        sys.stdout.flush()
    print(f"mutation --prove: {total} mutants: {refuted} refuted, {invalid} caught by the verifier first, {proved} "
          f"kept every reached module's function (proved or not proved), {unreached} reached no module, {bad} wrong")
    return 0 if bad == 0 else 1


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
    ap.add_argument("--prove", action="store_true", help="test hlo-check --prove on the corpus instead of hlo-fuzz")
    ap.add_argument("--fuzz-modules", type=int, default=25, help="with --prove: hlo-fuzz modules per pass added")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    # a kill must still put the pass file back (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    exe = os.path.join(a.out, "hlo-fuzz-mutant")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if a.prove:
        return prove_mutants(a, env)
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
