#!/usr/bin/env python3
"""bench_xla.py: hlo-run's time against XLA:CPU's on the same module, the
same inputs, the same device count and machine, for make bench.

    bench_xla.py BUILD OUT [MODULE:DEVICES ...]

For each module (printed by hlo-opt --fill-elided first: elided constants
filled, which XLA needs): hlo-run draws inputs once (--save-inputs), then runs on
them with --time (the interpreter's own seconds, the slowest rank per
instruction kind; process start-up and parsing left out), and xla_run.py
runs it on the same files, compiling once and executing three times (the
fastest counts; compile time printed apart).  One line per module in
bench.sh's form

    NAME: ours X s, limit Y s (XLA:CPU execute, compile Z s), ratio R (target none)

then where hlo-run's time goes, by op class (dot/convolution, reductions,
element-wise, data movement, collectives, control), as shares of its total.
The interpreter is not expected to beat a compiler: the ratio says how far
it is and the classes say where.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CLASSES = [
    ("dot/convolution", {"dot", "convolution", "fft", "cholesky", "triangular-solve"}),
    ("reductions", {"reduce", "reduce-window", "select-and-scatter", "scatter", "sort", "batch-norm-training",
                    "batch-norm-inference", "batch-norm-grad"}),
    ("collectives", {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                     "collective-broadcast", "all-reduce-start", "all-gather-start", "collective-permute-start",
                     "send", "recv", "ragged-all-to-all"}),
    ("data movement", {"reshape", "transpose", "broadcast", "slice", "dynamic-slice", "dynamic-update-slice",
                       "concatenate", "pad", "reverse", "gather", "copy", "bitcast", "iota", "get-tuple-element",
                       "tuple", "parameter", "constant"}),
    ("control", {"while", "conditional", "call", "fusion", "map"}),
]


def op_class(op):
    for name, ops in CLASSES:
        if op in ops:
            return name
    return "element-wise"


def mpirun(n):
    cmd = ["mpirun", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "-np", str(n)]
    return cmd[:1] + ["--allow-run-as-root"] + cmd[1:] if os.geteuid() == 0 else cmd


def run(cmd, **kw):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, **kw)


def bench(build, out, module, n):
    name = os.path.basename(module)[:-4]
    if name == "module":                    # corpus/interp/<case>/module.hlo
        name = os.path.basename(os.path.dirname(module))
    d = os.path.join(out, "xla-" + name)
    os.makedirs(d, exist_ok=True)
    # XLA cannot run elided constants: both run the module with them
    # filled (hlo-opt --fill-elided, the values hlo-run would draw), as
    # xla_diff.py runs the real dumps
    filled = os.path.join(d, "module.hlo")
    r = run([os.path.join(build, "hlo-opt"), module, "--passes=none", "--fill-elided", "--seed", "0",
             "-o", filled])
    if r.returncode != 0:
        return "%s: hlo-opt --fill-elided failed: %s" % (name, r.stderr.strip().splitlines()[-1:])
    module = filled
    hlo_run = [os.path.join(build, "hlo-run"), module]
    pre = mpirun(n) if n > 1 else []
    r = run(pre + hlo_run + ["--save-inputs", d + "/in", "--outputs", d + "/hlo0"])
    if r.returncode != 0:
        return "%s: hlo-run could not run it: %s" % (name, r.stderr.strip().splitlines()[-1:])
    r = run(pre + hlo_run + ["--inputs", d + "/in", "--outputs", d + "/hlo", "--time", "--threads", "1"])
    if r.returncode != 0:
        return "%s: hlo-run --time failed: %s" % (name, r.stderr.strip().splitlines()[-1:])
    per_op = {}
    for op, secs in re.findall(r"^\s+([a-z][a-z0-9\-]*)\s+\d+\s+([0-9.]+)\s+[0-9.]+%$", r.stdout, re.M):
        per_op[op] = float(secs)
    ours = sum(per_op.values())
    x = run([sys.executable, os.path.join(HERE, "xla_run.py"), module, "--inputs", d + "/in", "--outputs",
             d + "/xla", "--ranks", str(n), "--time", "--repeat", "3"])
    m = re.search(r"compile ([0-9.]+).*execute ([0-9.]+)", x.stderr)
    if x.returncode != 0 or not m:
        lines = [ln for ln in x.stderr.strip().splitlines() if ln.strip()]
        return "%s: XLA:CPU could not run it: %s" % (name, lines[-1] if lines else "exit %d" % x.returncode)
    compile_s, execute_s = float(m.group(1)), float(m.group(2))
    by_class = {}
    for op, secs in per_op.items():
        by_class[op_class(op)] = by_class.get(op_class(op), 0.0) + secs
    split = ", ".join("%s %.0f%%" % (c, 100 * s / ours) for c, s in sorted(by_class.items(), key=lambda kv: -kv[1])
                      if ours > 0 and s / ours >= 0.005)
    return ("hlo-run vs XLA:CPU, %s, %d device%s: ours %.4f s, limit %.4f s (XLA:CPU execute, best of 3; "
            "compile %.3f s apart), ratio %.1f (target none)\n  hlo-run's time by op class: %s"
            % (name, n, "" if n == 1 else "s", ours, execute_s, compile_s, ours / max(execute_s, 1e-9), split))


def main():
    if len(sys.argv) < 4:
        sys.stderr.write("usage: bench_xla.py BUILD OUT MODULE:DEVICES ...\n")
        return 2
    build, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for spec in sys.argv[3:]:
        module, n = spec.rsplit(":", 1)
        print(bench(build, out, module, int(n)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
