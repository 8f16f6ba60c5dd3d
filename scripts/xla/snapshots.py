#!/usr/bin/env python3
"""snapshots.py: hlo-run replays the snapshots XLA:CPU itself records.

For each module of the interpreter corpus (corpus/interp/NAME/module.hlo,
with its inputs beside it), XLA:CPU runs it with --xla_dump_hlo_snapshots
(xla_run.py); every HloSnapshot it writes (XLA's optimized module, the
arguments of that execution, the result it gave) is replayed with
`hlo-run --snapshot`:
  * the arguments hlo-run reads from the snapshot must be the corpus inputs
    XLA was given, bit for bit (hlo-run --save-inputs): the reader of
    XLA's literals is right;
  * the replay must run (exit 0: every output within the XLA reference's
    tolerance table, or 1: one outside, reported with where);
  * the table has two implementations, hlo-run's (src/check/tolerance.c)
    and xla_diff.py's (tolerance.py with hlo_cone.py): both must put every
    output of the replayed module in the same class.
A replay that differs is reported with its outputs; those measured so far
are XLA:CPU's departures that docs/xla-differences.md lists ("Snapshots
replayed").  The snapshot holds XLA's optimized module, so an op XLA
expands (batch-norm into rsqrt and arithmetic, rng into its global state)
is classed by its expansion; the XLA-internal custom calls of its
optimized modules (SliceToDynamic, PadToStatic, TopK) hlo-run computes
(src/interp/custom_call.c), and an output of dynamic size, which XLA
records at its runtime shape, is compared at that shape.

    snapshots.py [--build DIR] [--only REGEX] [--every K] [--json FILE]

One line per module (replayed / DIFFERS / hlo-run refuses / XLA refuses /
CLASSES DISAGREE / ARGUMENTS DIFFER / FAILED), then "snapshots: N replayed,
N differ, N class disagreements, N argument mismatches, N failed, N
refused by hlo-run, N refused by XLA"; exit 1 on a class disagreement, an
argument mismatch or a replay that failed (exit 2 or 3 other than an
unsupported op).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

REPORT = re.compile(r"^hlo-run: snapshot: (?:rank \d+: )?out(\d+) \S+: (?:within (\S+)|DIFFERS beyond (\S+)|not compared)")


def same_inputs(saved, given):
    """Are the param<p>.rank0.npy files hlo-run saved those of the corpus,
    bit for bit?"""
    import numpy as np
    files = sorted(glob.glob(os.path.join(given, "param*.rank0.npy")))
    for f in files:
        other = os.path.join(saved, os.path.basename(f))
        if not os.path.exists(other):
            return False
        a, b = np.load(f), np.load(other)
        if a.shape != b.shape or a.tobytes() != b.tobytes():
            return False
    return bool(files) or not glob.glob(os.path.join(saved, "*.npy"))


def xla_classes(xc, text):
    """The loosest class of each output under xla_diff.py's implementation."""
    from hlo_cone import output_classes
    from tolerance import loosest
    return [loosest(classes) for classes, _ in output_classes(xc, text)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only")
    ap.add_argument("--every", type=int, default=1, help="every K-th module only (make test takes a sample)")
    ap.add_argument("--json")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    from xla_run import set_xla_flags
    set_xla_flags(1)
    from jax._src.lib import xla_client as xc

    counts = {"replayed": 0, "DIFFERS": 0, "CLASSES DISAGREE": 0, "ARGUMENTS DIFFER": 0, "FAILED": 0,
              "hlo-run refuses": 0, "XLA refuses": 0}
    records = []
    work = tempfile.mkdtemp(prefix="snapshots.")
    cases = sorted(glob.glob(os.path.join(ROOT, "corpus/interp/*/module.hlo")))[::max(a.every, 1)]
    for path in cases:
        name = os.path.basename(os.path.dirname(path))
        if a.only and not re.search(a.only, name):
            continue
        dump = os.path.join(work, name)
        env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") +
                                          " --xla_dump_to=%s --xla_dump_hlo_snapshots" % dump).strip())
        r = subprocess.run([sys.executable, os.path.join(HERE, "xla_run.py"), path, "--inputs",
                            os.path.dirname(path), "--outputs", os.path.join(dump, "out")],
                           capture_output=True, text=True, env=env, timeout=600)
        snaps = sorted(glob.glob(os.path.join(dump, "*.snapshot.*.pb")))
        status, detail = "replayed", ""
        if r.returncode != 0 or not snaps:
            status = "XLA refuses"
            err = [ln for ln in r.stderr.splitlines() if ln.strip()]
            detail = (err[-1] if err else "no snapshot written")[:300]
        for snap in snaps if status == "replayed" else []:
            saved = os.path.join(dump, "args")
            run = subprocess.run([os.path.join(build, "hlo-run"), "--snapshot", snap, "--save-inputs", saved],
                                 capture_output=True, text=True, timeout=600)
            if run.returncode in (0, 1) and not same_inputs(saved, os.path.dirname(path)):
                status = "ARGUMENTS DIFFER"
                detail = "the snapshot's arguments as hlo-run read them are not the inputs XLA was given"
                break
            mine = {}
            for line in run.stdout.splitlines():
                m = REPORT.match(line)
                if m:
                    mine[int(m.group(1))] = m.group(2) or m.group(3) or "unspecified"
            if run.returncode not in (0, 1):
                err = [ln for ln in run.stderr.splitlines() if "error" in ln]
                detail = (err[0] if err else "exit %d" % run.returncode)[:300]
                status = "hlo-run refuses" if run.returncode == 2 and "unsupported op" in detail else "FAILED"
                break
            # The same module through the other implementation of the table.
            text = subprocess.run([os.path.join(build, "hlo-opt"), "--passes=none", snap], capture_output=True,
                                  text=True).stdout
            try:
                theirs = xla_classes(xc, text)
            except Exception as e:     # XLA's parser refuses our print: a difference in itself
                status, detail = "CLASSES DISAGREE", "XLA cannot read hlocheck's print: %s" % str(e)[:200]
                break
            mine_list = [mine.get(i, "?") for i in range(len(theirs))]
            if mine_list != theirs:
                status = "CLASSES DISAGREE"
                detail = "hlo-run %s, xla_diff.py %s" % (mine_list, theirs)
                break
            if run.returncode == 1:
                status = "DIFFERS"
                detail = "; ".join(ln for ln in run.stdout.splitlines() if "DIFFERS" in ln)[:400]
                break
            detail = ", ".join(sorted(set(mine_list)))
        counts[status] += 1
        records.append(dict(module=name, status=status, detail=detail, snapshots=len(snaps)))
        print("%-17s %s%s" % (status, name, (": " + detail) if detail else ""), flush=True)
        shutil.rmtree(dump, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    print("snapshots: %d replayed, %d differ, %d class disagreements, %d argument mismatches, %d failed, "
          "%d refused by hlo-run, %d refused by XLA"
          % (counts["replayed"], counts["DIFFERS"], counts["CLASSES DISAGREE"], counts["ARGUMENTS DIFFER"],
             counts["FAILED"], counts["hlo-run refuses"], counts["XLA refuses"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"counts": counts, "records": records}, f, indent=1)
    return 1 if counts["CLASSES DISAGREE"] or counts["ARGUMENTS DIFFER"] or counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
