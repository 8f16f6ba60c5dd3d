#!/usr/bin/env python3
"""zoo.py: real compiler output on demand (make zoo).  Each program of
programs.py, at each size and device count, is partitioned by XLA's SPMD
partitioner (jax.jit with shardings over N CPU devices), compiled and run by
XLA:CPU; what it emitted and ran is written for hlo-run and hlo-check.

    zoo.py [--out build/zoo] [--programs a,b] [--sizes small,large]
           [--devices 2,4,8] [--seed 0]

  <out>/<program>-<size>-<N>dev/
    partitioned.hlo   the module after SPMD partitioning (XLA's dump
                      *after_spmd-partitioning*): one program per partition,
                      collectives explicit; what the Neuron passes rewrite
    optimized.hlo     the module XLA:CPU compiled it into (compiled.as_text())
    in/param<p>.rank<r>.npy   the arguments XLA ran on, device r's shard
                      (hlo-run's --inputs naming; bf16 as its raw bits <u2)
    xla/out<i>.rank<r>.npy    XLA's results, device r's shard (hlo-run's
                      --outputs naming; bf16 widened to <f4)
    case.json         program, size, devices, seed, XLA's compile and run times

Device r of the mesh (its flat order) is partition r and hlo-run's rank r.
XLA runs with --xla_allow_excess_precision=false, as xla_run.py does, so that
its bf16 results are rounded where the HLO says (docs/xla-differences.md).
One child process per device count (the count is fixed when jax starts).

Exit: 0 all written; 1 a program failed to build, compile or run (named, the
others still written); 2 bad usage.  Needs the venv of
scripts/install-deps.sh xla.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = ("small", "large")
DEVICES = (2, 4, 8)


def case_name(program, size, n):
    return "%s-%s-%ddev" % (program, size, n)


def xla_flags(n, dump):
    return " ".join([
        "--xla_force_host_platform_device_count=%d" % n,
        "--xla_dump_to=" + dump,
        "--xla_dump_hlo_pass_re=spmd-partitioning",
        "--xla_allow_excess_precision=false",
    ])


def save(path, a):
    """np.save through a temporary file, so that a reader never sees half."""
    import numpy as np
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        np.save(f, np.asarray(a, order="C"), allow_pickle=False)
    os.replace(tmp, path)


def shards_by_device(x, devices):
    """[numpy array of device d's shard for d in devices] of a jax array."""
    import numpy as np
    by_id = {s.device.id: s for s in x.addressable_shards}
    return [np.asarray(by_id[d.id].data) for d in devices]


def as_input(a):
    """An argument shard as hlo-run reads it: bf16 as its raw bits."""
    import numpy as np
    import ml_dtypes
    if a.dtype == ml_dtypes.bfloat16:
        return a.view(np.uint16)
    return a


def as_output(a):
    """A result shard as hlo-run writes it: bf16 widened to f32 (exact)."""
    import numpy as np
    import ml_dtypes
    if a.dtype == ml_dtypes.bfloat16:
        return a.astype(np.float32)
    return a


def partitioned_dump(dump, seen, module_name):
    """The after-spmd-partitioning file of module_name new since seen."""
    found = [f for f in glob.glob(os.path.join(dump, "*after_spmd-partitioning*.txt"))
             if f not in seen and (".%s." % module_name) in os.path.basename(f)]
    if len(found) != 1:
        raise RuntimeError("expected one module %s after spmd-partitioning in the dump, found %d"
                           % (module_name, len(found)))
    return found[0]


def write_case(prog, size, devices, seed, out, dump):
    """Builds, compiles and runs one program; writes its directory (whole,
    or not at all)."""
    d = os.path.join(out, case_name(prog.name, size, len(devices)))
    tmp = d + ".tmp.%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        write_files(prog, size, devices, seed, tmp, dump)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(d, ignore_errors=True)
    os.replace(tmp, d)
    return d


def write_files(prog, size, devices, seed, tmp, dump):
    import numpy as np
    import jax
    os.makedirs(os.path.join(tmp, "in"))
    os.makedirs(os.path.join(tmp, "xla"))
    rng = np.random.default_rng([seed, len(devices), SIZES.index(size)])
    fn, args = prog.build(size, devices, rng)
    seen = set(glob.glob(os.path.join(dump, "*")))
    t = time.perf_counter()
    lowered = fn.lower(*args)
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t
    optimized = compiled.as_text()
    part = partitioned_dump(dump, seen, optimized.split(None, 2)[1].rstrip(","))
    shutil.copyfile(part, os.path.join(tmp, "partitioned.hlo"))
    with open(os.path.join(tmp, "optimized.hlo"), "w") as f:
        f.write(optimized)
    # jax drops arguments the program does not use: the module's parameters
    # are the kept ones, in order
    flat_args = jax.tree_util.tree_leaves(args)
    kept = sorted(lowered._lowering.compile_args["kept_var_idx"])
    if lowered._lowering.const_args:
        raise RuntimeError("jax hoisted %d constants into arguments: not supported"
                           % len(lowered._lowering.const_args))
    for p, k in enumerate(kept):
        for r, a in enumerate(shards_by_device(flat_args[k], devices)):
            save(os.path.join(tmp, "in", "param%d.rank%d.npy" % (p, r)), as_input(a))
    t = time.perf_counter()
    result = jax.block_until_ready(compiled(*args))
    run_s = time.perf_counter() - t
    leaves = jax.tree_util.tree_leaves(result)
    for i, x in enumerate(leaves):
        for r, a in enumerate(shards_by_device(x, devices)):
            save(os.path.join(tmp, "xla", "out%d.rank%d.npy" % (i, r)), as_output(a))
    meta = dict(program=prog.name, doc=prog.doc, size=size, devices=len(devices), seed=seed,
                parameters=len(kept), outputs=len(leaves),
                xla_compile_seconds=round(compile_s, 3), xla_run_seconds=round(run_s, 4),
                jax=jax.__version__)
    with open(os.path.join(tmp, "case.json"), "w") as f:
        json.dump(meta, f, indent=1)


def child(a):
    """One device count: jax starts here with that many devices."""
    n = a.child
    dump = tempfile.mkdtemp(prefix="zoo-dump-")
    os.environ["XLA_FLAGS"] = xla_flags(n, dump)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    import jax
    jax.config.update("jax_platforms", "cpu")
    sys.path.insert(0, HERE)
    import programs
    devices = sorted(jax.devices(), key=lambda x: x.id)[:n]
    failed = 0
    try:
        for name in a.programs:
            for size in a.sizes:
                t = time.perf_counter()
                try:
                    d = write_case(programs.PROGRAMS[name], size, devices, a.seed, a.out, dump)
                    print("zoo: %-40s written (%.1f s)" % (os.path.basename(d), time.perf_counter() - t),
                          flush=True)
                except Exception as e:      # one program's failure does not stop the others
                    failed += 1
                    print("zoo: %-40s FAILED: %s: %s" % (case_name(name, size, n), type(e).__name__,
                                                       str(e).splitlines()[0] if str(e) else ""), flush=True)
    finally:
        shutil.rmtree(dump, ignore_errors=True)
    return 1 if failed else 0


def program_names():
    sys.path.insert(0, HERE)
    import programs
    return list(programs.PROGRAMS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="build/zoo")
    ap.add_argument("--programs", help="comma-separated (default: all)")
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--devices", default=",".join(map(str, DEVICES)))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true", help="the programs, one a line")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    known = program_names()
    if a.list:
        print("\n".join(known))
        return 0
    a.programs = a.programs.split(",") if a.programs else known
    a.sizes = a.sizes.split(",")
    for p in a.programs:
        if p not in known:
            ap.error("--programs: no program %r (there are: %s)" % (p, ", ".join(known)))
    for s in a.sizes:
        if s not in SIZES:
            ap.error("--sizes: %r is not one of %s" % (s, ", ".join(SIZES)))
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    if a.child:
        return child(a)
    try:
        counts = [int(x) for x in a.devices.split(",")]
    except ValueError:
        ap.error("--devices: a comma-separated list of device counts, not %r" % a.devices)
    if any(n < 1 for n in counts):
        ap.error("--devices: counts must be at least 1")
    st = 0
    for n in counts:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(n), "--out", a.out,
               "--programs", ",".join(a.programs), "--sizes", ",".join(a.sizes), "--seed", str(a.seed)]
        rc = subprocess.call(cmd, stdin=subprocess.DEVNULL)
        if rc != 0:
            if rc not in (0, 1):
                print("zoo: the run at %d devices ended with exit %d" % (n, rc), flush=True)
            st = 1
    return st


if __name__ == "__main__":
    sys.exit(main())
