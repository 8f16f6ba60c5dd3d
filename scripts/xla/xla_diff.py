#!/usr/bin/env python3
"""xla_diff.py: every module hlo-run runs, through hlo-run (under mpirun, one
rank per device) and XLA:CPU (one process, N devices) on the same inputs at
the same device count, every output compared under tolerance.py's table.

    xla_diff.py [--sets interp,passes,demo,peer,real,fuzz] [--quick]
                [--max-devices 8] [--fuzz-count N] [--seed S] [--dist D]
                [--only REGEX] [--json FILE] [--build DIR] [--work DIR] [--keep]

One line per module and output (agree / DIFFER / documented / refused /
not run), the largest distance measured per tolerance class, then

    xla-diff: N agree, N differ (N documented, N unexplained), N refused by XLA, N not run

A difference is "documented" when docs/xla-differences.md's table of known
differing outputs names its module and output with a cause; every other one
is unexplained.  Exit 1 when any difference is unexplained or a module XLA
runs is refused by hlo-run, 2 on bad usage, else 0.  A module XLA refuses
(a custom call it lacks, a syntax its StableHLO path rejects) is counted
with XLA's message, never hidden.
"""
import argparse
import concurrent.futures
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np                      # noqa: E402
import explain                          # noqa: E402
import hlo_side                         # noqa: E402
from hlo_side import first_line, one_line   # noqa: E402
import hlo_cone                         # noqa: E402
import module_sets                      # noqa: E402
import tolerance                        # noqa: E402
from xla_pool import XlaPool            # noqa: E402
from xla_run import device_grid, header_counts, set_xla_flags   # noqa: E402

SETS = ["interp", "passes", "demo", "peer", "real", "fuzz"]
DOC = os.path.join(ROOT, "docs/xla-differences.md")


def known_differences(path):
    """[(glob over module names, set of outputs or None for all, cause)] from
    the doc's table rows `| pattern | outputs | cause |` under the heading
    'Known differing outputs' (outputs: out3, out5 or a range out33-out92)."""
    rows, inside = [], False
    if not os.path.exists(path):
        return rows
    for line in open(path):
        if line.startswith("## "):
            inside = line.strip().lower().startswith("## known differing outputs")
            continue
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|", line)
        if inside and m:
            outs = m.group(2).strip()
            which = None if outs in ("*", "all") else set()
            for o in outs.split(",") if which is not None else []:
                r = re.fullmatch(r"\s*out(\d+)-out(\d+)\s*", o)          # a range: out33-out92
                which |= {"out%d" % k for k in range(int(r.group(1)), int(r.group(2)) + 1)} if r else {o.strip()}
            rows.append((m.group(1), which, m.group(3).strip()))
    return rows


def documented(rows, name, output):
    bare = re.sub(r"@\d+$", "", name)
    for pat, outs, cause in rows:
        if (fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(bare, pat)) and \
                (outs is None or output in outs):
            return cause
    return None


class Report:
    """What one job found: its lines, in order, and its counts."""

    def __init__(self, known):
        self.known = known
        self.lines, self.records = [], []
        self.counts = {"agree": 0, "documented": 0, "unexplained": 0, "refused": 0, "not run": 0}
        self.worst = {}             # class -> (distance, where)

    def say(self, status, name, detail, output=None, **extra):
        key = {"DIFFER": "unexplained"}.get(status, status)
        self.counts[key] += 1
        self.records.append(dict(status=status, module=name, output=output, detail=detail, **extra))
        self.lines.append("%-10s %s%s%s" % (status, name, (" " + output) if output else "",
                                            (": " + detail) if detail else ""))

    def difference(self, name, output, detail, **extra):
        cause = documented(self.known, name, output or "module")
        if cause:
            self.say("documented", name, detail + " [" + cause + "]", output, **extra)
        else:
            self.say("DIFFER", name, detail, output, **extra)

    def measured(self, cls, dist, where):
        if cls not in self.worst or dist > self.worst[cls][0]:
            self.worst[cls] = (dist, where)

    def merge(self, other):
        self.lines += other.lines
        self.records += other.records
        for k, v in other.counts.items():
            self.counts[k] += v
        for cls, (dist, where) in other.worst.items():
            self.measured(cls, dist, where)


DEVICE_COUNT_ERRORS = ("devices per group", "do not cover device", "ranks were started", "devices, but")


class Diff:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.work = os.path.abspath(a.work)
        self.known = known_differences(DOC)
        self.pool = XlaPool(sys.executable)
        self.xla_lock = threading.Lock()
        set_xla_flags(1)
        from jax._src.lib import xla_client as xc
        self.xc = xc
        self.parse_lock = threading.Lock()

    def prepare(self, job, d):
        """The module both run: the file itself, or hlo-opt's rewrite of it."""
        if job.prepare is None:
            return job.path, None
        out = os.path.join(d, "module.hlo")
        cmd = [os.path.join(self.build, "hlo-opt"), job.path, "-o", out]
        cmd += ["--passes=" + job.passes] if job.prepare == "after" else \
               ["--passes=none", "--fill-elided", "--seed", str(self.a.seed)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, "hlo-opt exit %d: %s" % (r.returncode, first_line(r.stderr))
        return out, None

    def hlo_run(self, n, module, outputs, R, P, inputs=None, save_inputs=None):
        return hlo_side.hlo_run(self.build, n, module, outputs, R, P, inputs, save_inputs, self.a.seed, self.a.dist)

    def one(self, job):
        t0 = time.perf_counter()
        rep = self.one_job(job)
        rep.seconds = time.perf_counter() - t0
        return rep

    def one_job(self, job):
        rep = Report(self.known)
        if job.prepare and job.prepare.startswith("skip: "):
            rep.say("not run", job.name, job.prepare[6:])
            return rep
        d = os.path.join(self.work, re.sub(r"[^\w.@-]+", "_", job.name))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        module, why = self.prepare(job, d)
        if module is None:
            rep.say("not run", job.name, why)
            return rep
        text = open(module).read()
        name = job.name
        for n in (job.devices,) + tuple(job.others):
            name = re.sub(r"@\d+$", "@%d" % n, job.name)
            R, P = device_grid(*header_counts(text), 0, 0, n)
            if R * P != n:
                rep.say("not run", name, "its header wants %d x %d devices, not %d" % (R, P, n))
                return rep
            if n > self.a.max_devices:
                rep.say("not run", name, "%d devices, more than --max-devices %d" % (n, self.a.max_devices))
                return rep
            inputs = job.inputs or os.path.join(d, "in")
            hrc, herr = self.hlo_run(n, module, os.path.join(d, "hlo"), R, P, job.inputs, inputs)
            if not (hrc == 2 and any(e in herr for e in DEVICE_COUNT_ERRORS)):
                break
        if hrc != 0 and not os.path.isdir(inputs):
            xres = None         # hlo-run stopped before the inputs: XLA has nothing to run on
        else:
            with self.xla_lock:
                xres = self.pool.run(module, inputs, os.path.join(d, "xla"), R, P, timeout=self.a.xla_timeout)
        if hrc != 0:
            msg = "hlo-run exit %d: %s" % (hrc, first_line(herr))
            if xres is None:
                rep.say("not run", name, msg + " (before drawing inputs: XLA not tried)")
            elif xres.status != 0:
                rep.say("refused", name, msg + ("; XLA: " + one_line(xres.message, 300) if xres else ""))
            else:
                rep.difference(name, None, "hlo-run refuses a module XLA runs: " + msg)
            return rep
        if xres.status != 0:
            rep.say("refused", name, "XLA exit %d: %s" % (xres.status, one_line(xres.message)))
            return rep
        try:
            with self.parse_lock:
                parsed = hlo_cone.Module(self.xc, text)
                classes = hlo_cone.output_classes(self.xc, text)
        except Exception as e:      # XLA ran it, so its parser took it
            rep.say("not run", name, "not compared: its outputs could not be classified: %r" % (e,))
            return rep
        run = dict(n=R * P, module=module, inputs=inputs, R=R, P=P, parsed=parsed, text=text)
        self.compare(rep, name, d, classes, run)
        if not self.a.keep:
            shutil.rmtree(d, ignore_errors=True)
        return rep

    def compare_output(self, d, hlo_dir, out, n_dev, cls, etype, flush=False):
        """(problems, largest distance) of one output over every rank."""
        problems, worst = tolerance.compare_ranks(hlo_dir, os.path.join(d, "xla"), out, n_dev, etype, cls,
                                                  (lambda a: explain.flush(a, f16=True)) if flush else None)
        return ["rank %d: %s" % p for p in problems], worst

    def explain(self, d, run, todo):
        """{output: cause} for the differing outputs an explainer accounts
        for (explain.py); todo maps each to (class, element type)."""
        found = {}
        ftz_in = explain.scratch(d, "in.ftz")
        hlo_dirs = [os.path.join(d, "hlo")]
        if explain.flushed_inputs(run["inputs"], ftz_in):
            rc, _ = self.hlo_run(run["n"], run["module"], os.path.join(d, "hlo.ftz"), run["R"], run["P"], ftz_in)
            if rc == 0:
                hlo_dirs.append(os.path.join(d, "hlo.ftz"))
        for out, (cls, etype) in todo.items():
            if explain.ftz_explains(hlo_dirs, os.path.join(d, "xla"), int(out[3:]), run["n"], cls, etype):
                found[out] = "explained: XLA:CPU flushes subnormals to zero (ftz)"
        left = {o: v for o, v in todo.items() if o not in found}
        wide = explain.widen_collectives(run["text"], explain.operand_shapes(run["parsed"])) if left else None
        if wide:
            path = os.path.join(d, "module.wide.hlo")
            with open(path, "w") as f:
                f.write(wide)
            hlo_dir = os.path.join(d, "hlo.wide")
            rc, _ = self.hlo_run(run["n"], path, hlo_dir, run["R"], run["P"], run["inputs"])
            for out, (cls, etype) in left.items():
                if rc == 0 and not self.compare_output(d, hlo_dir, out, run["n"], cls, etype)[0]:
                    found[out] = "explained: XLA:CPU sums bf16/f16 all-reduce and reduce-scatter in f32 (wide-collectives)"
        return found

    def compare(self, rep, name, d, classes, run):
        pat = re.compile(r"out(\d+)\.rank(\d+)\.npy")
        outputs = set()
        for side in ("hlo", "xla"):
            sd = os.path.join(d, side)
            for f in (os.listdir(sd) if os.path.isdir(sd) else []):
                m = pat.fullmatch(f)
                if m:
                    outputs.add(int(m.group(1)))
        results = {}
        for i in sorted(outputs):
            out = "out%d" % i
            cls_set, etype = classes[i] if i < len(classes) else ({"exact"}, "?")
            cls = tolerance.loosest(cls_set)
            if cls == "accumulation":
                etype = tolerance.measure_type(cls_set, etype)
            if cls == "unspecified":
                results[out] = None
                continue
            problems, worst = self.compare_output(d, os.path.join(d, "hlo"), out, run["n"], cls, etype)
            results[out] = (cls, etype, problems, worst)
        todo = {o: (r[0], r[1]) for o, r in results.items() if r and r[2]}
        causes = self.explain(d, run, todo) if todo else {}
        for out, r in results.items():
            if r is None:
                rep.say("not run", name, "not compared: its value is the implementation's own (rng)", out)
                continue
            cls, etype, problems, worst = r
            measure, tol = tolerance.TOLERANCE[cls]
            how = "%s %s, %s" % (etype, cls, measure) + (" <= %s" % tol if tol else "")
            if measure != "bitwise":
                how += ", max %.3g" % worst
                if not problems:    # the largest distance among outputs within tolerance
                    rep.measured(cls, worst, "%s %s" % (name, out))
            extra = dict(cls=cls, type=etype, distance=worst)
            detail = "%s; %s" % (how, "; ".join(problems[:2]))
            if problems and out in causes:
                rep.say("documented", name, detail + " [" + causes[out] + "]", out, **extra)
            elif problems:
                rep.difference(name, out, detail, **extra)
            else:
                rep.say("agree", name, how, out, **extra)

    def close(self):
        self.pool.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--quick", action="store_true", help="one device count per pass-corpus module")
    ap.add_argument("--max-devices", type=int, default=8)
    ap.add_argument("--fuzz-count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dist", default="uniform", help="hlo-run --dist of the drawn inputs")
    ap.add_argument("--only", help="only the modules whose name matches this regex")
    ap.add_argument("--json")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build/xla-diff"))
    ap.add_argument("--keep", action="store_true", help="keep every module's inputs and outputs")
    ap.add_argument("--xla-timeout", type=int, default=300)
    ap.add_argument("--verbose", action="store_true", help="print each module's seconds")
    ap.add_argument("--quiet", action="store_true", help="leave out the lines of outputs that agree")
    ap.add_argument("--jobs", type=int, default=2, help="modules in flight at once (default 2)")
    a = ap.parse_args()
    sets = [s for s in a.sets.split(",") if s]
    bad = [s for s in sets if s not in SETS]
    if bad:
        sys.stderr.write("xla-diff: unknown set %s (sets: %s)\n" % (", ".join(bad), ",".join(SETS)))
        return 2
    for tool in ("hlo-run", "hlo-opt", "hlo-fuzz"):
        if not os.access(os.path.join(a.build, tool), os.X_OK):
            sys.stderr.write("xla-diff: no %s in %s: build first (make)\n" % (tool, a.build))
            return 2
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    jobs = []
    os.makedirs(a.work, exist_ok=True)
    for s in sets:
        if s == "interp":
            jobs += module_sets.interp_jobs(ROOT)
        elif s == "passes":
            jobs += module_sets.passes_jobs(ROOT, a.quick, a.max_devices)
        elif s == "demo":
            jobs += module_sets.demo_jobs(ROOT)
        elif s in ("peer", "real"):
            if not os.path.isdir(shared):
                print("skip %s: ../shared not found next to the repository" % s)
                continue
            jobs += module_sets.peer_jobs(shared) if s == "peer" else module_sets.real_jobs(shared)
        elif s == "fuzz":
            jobs += module_sets.fuzz_jobs(a.build, a.work, a.fuzz_count, a.seed + 1)
    if a.only:
        jobs = [j for j in jobs if re.search(a.only, j.name)]
    diff = Diff(a)
    total = Report(diff.known)
    t0 = time.perf_counter()
    # hlo-run of one job overlaps XLA of another (XLA runs one job at a
    # time); reports print in job order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        try:
            for rep in ex.map(diff.one, jobs):
                for line in rep.lines:
                    if not (a.quiet and line.startswith("agree ")):
                        print(line, flush=True)
                if a.verbose:
                    print("  (%.1f s)" % rep.seconds)
                total.merge(rep)
        finally:
            diff.close()
    c = total.counts
    for cls in tolerance.ORDER:
        if cls in total.worst:
            measure, tol = tolerance.TOLERANCE[cls]
            print("largest %s distance: %.3g %s (tolerance %s) at %s"
                  % (cls, total.worst[cls][0], measure, tol, total.worst[cls][1]))
    print("xla-diff: %d agree, %d differ (%d documented, %d unexplained), %d refused by XLA, %d not run; "
          "%d modules in %.0f s" % (c["agree"], c["documented"] + c["unexplained"], c["documented"],
                                    c["unexplained"], c["refused"], c["not run"], len(jobs),
                                    time.perf_counter() - t0))
    if a.json:
        tmp = a.json + ".tmp.%d" % os.getpid()
        with open(tmp, "w") as f:
            json.dump({"counts": c, "worst": {k: {"distance": v[0], "at": v[1]} for k, v in total.worst.items()},
                       "records": total.records}, f, indent=1, default=str)
        os.replace(tmp, a.json)
    return 1 if c["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
