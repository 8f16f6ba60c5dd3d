#!/usr/bin/env python3
"""zoo_check.py: the zoo's programs (zoo.py's directories) through hlocheck
(make zoo-check; make test runs a slice).

    zoo_check.py [--zoo build/zoo] [--build build] [--generate]
                 [--programs a,b] [--sizes small,large] [--devices 2,4,8]
                 [--table FILE] [--json FILE] [--quiet]

For each <program>-<size>-<N>dev directory:
  run     hlo-run at N ranks on partitioned.hlo and on optimized.hlo, on the
          arguments XLA ran on, every output of every rank against XLA's
          (scripts/xla/tolerance.py's table, each output under the class of
          its cone: exact where HLO fixes the bits)
  passes  hlo-opt --passes=default --stats on partitioned.hlo: what each
          pass did to real partitioner output
  check   hlo-check --passes=default --prove at N ranks in both pass modes
          (--local when the pair needs more memory than a rank has): the
          sampled verdict and the proof's
A case fails when hlo-run differs from XLA beyond the table (a long f32 sum
past it is measured against the module run in f64: oracle_explains), refuses
what XLA ran, or when the sound mode's rewrite is not equivalent (or less accurate).
A faithful-mode difference the sound mode does not make is one of the
Neuron matchers' known unsoundnesses: reported as such, not a failure.

--generate runs zoo.py first for the same selection.  The last line:
  zoo-check: C cases, K ok, F failed; run: A agree (S outputs past the table by
  summation order, documented), D differ; check: E equivalent (sound),
  U faithful unsound, P proved, N not proved; T s
Exit 0 when no case failed, 1 otherwise, 2 bad usage.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "xla"))
import hlo_side            # noqa: E402
import tolerance           # noqa: E402
from zoo import SIZES, DEVICES, case_name   # noqa: E402

COLLECTIVE = re.compile(r"\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute|"
                        r"collective-broadcast)(?:-start)?\(")
INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s", re.M)
PASS_LINE = re.compile(r"^\s*(#\d+)\s+(\S+)\s+fired (\d+)", re.M)
CHECK_SECONDS = 900


def env():
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def collectives(text):
    """{opcode: count} of a module's collectives (async starts counted once)."""
    out = {}
    for op in COLLECTIVE.findall(text):
        out[op] = out.get(op, 0) + 1
    return out


def same_array(a, b):
    """Two .npy files hold the same shape, type and bits."""
    import numpy as np
    try:
        x, y = np.load(a), np.load(b)
    except (OSError, ValueError):
        return False
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()


class Case:
    def __init__(self, d):
        self.dir = d
        self.name = os.path.basename(d)
        with open(os.path.join(d, "case.json")) as f:
            self.meta = json.load(f)
        self.n = self.meta["devices"]
        with open(os.path.join(d, "partitioned.hlo")) as f:
            self.text = f.read()
        self.problems = []      # what makes the case fail
        self.notes = []         # what is reported without failing it
        self.row = dict(case=self.name, program=self.meta["program"], size=self.meta["size"], devices=self.n,
                        instructions=len(INSTRUCTION.findall(self.text)), collectives=collectives(self.text))


class Checker:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        from jax._src.lib import xla_client as xc
        import hlo_cone
        self.xc, self.hlo_cone = xc, hlo_cone
        self.totals = dict(agree=0, documented=0, differ=0, equivalent=0, unsound=0, proved=0, not_proved=0)

    # ---- run: hlo-run against XLA
    def run(self, case, module):
        path = os.path.join(case.dir, module + ".hlo")
        out = os.path.join(case.dir, "hlo-run." + module)
        t = time.perf_counter()
        rc, err = hlo_side.hlo_run(self.build, case.n, path, out, 1, case.n, inputs=os.path.join(case.dir, "in"),
                                   timeout=CHECK_SECONDS)
        case.row["hlo_run_seconds_" + module] = round(time.perf_counter() - t, 2)
        if rc != 0:
            case.problems.append("hlo-run %s exit %d: %s" % (module, rc, hlo_side.first_line(err)))
            self.totals["differ"] += 1
            return "refused"
        with open(path) as f:
            text = f.read()
        classes = self.hlo_cone.output_classes(self.xc, text)
        outs = case.meta["outputs"]
        if len(classes) != outs:
            case.problems.append("%s: %d result leaves, XLA returned %d outputs" % (module, len(classes), outs))
            self.totals["differ"] += 1
            return "differ"
        bad = []
        loosest = "exact"
        same_bits = True
        for i, (cls_set, etype) in enumerate(classes):
            cls = tolerance.loosest(cls_set)
            if cls == "accumulation":
                etype = tolerance.measure_type(cls_set, etype)
            if cls == "unspecified":
                case.notes.append("%s out%d not compared: rng" % (module, i))
                continue
            loosest = max(loosest, cls, key=tolerance.ORDER.index)
            problems, _ = tolerance.compare_ranks(out, os.path.join(case.dir, "xla"), "out%d" % i, case.n, etype, cls)
            same_bits = same_bits and all(same_array(os.path.join(out, f), os.path.join(case.dir, "xla", f))
                                          for f in ("out%d.rank%d.npy" % (i, r) for r in range(case.n)))
            if problems:
                bad.append((i, cls, "out%d (%s %s) rank %d: %s" % ((i, etype, cls) + problems[0])))
        if bad:
            bad, documented = self.oracle_explains(case, module, out, bad)
            self.totals["documented"] += len(documented)
            for _, _, text in documented:
                case.notes.append("hlo-run %s, documented (summation order, docs/xla-differences.md): %s"
                                  % (module, text))
            if not bad:
                self.totals["agree"] += 1
                return "agree (%s; %s)" % (loosest, "summation order documented" if documented else
                                           "within XLA's own error from the f64 value past the table")
        if bad:
            case.problems.append("hlo-run %s differs from XLA: %s" % (module, "; ".join(b[2] for b in bad[:2])))
            self.totals["differ"] += 1
            return "differ"
        self.totals["agree"] += 1
        return "same bits" if same_bits else "agree (%s)" % loosest

    # ---- the f64 value, for differences in accumulation order
    def oracle_explains(self, case, module, out, bad):
        """(unexplained, documented) entries of bad (output, class, text).
        A long f32 sum may differ from XLA's by more than the table allows:
        HLO leaves a reduction's order open, hlo-run folds left in one
        accumulator while XLA:CPU keeps several partial sums, and the error
        of a sum grows with its number of terms and with cancellation, which
        no fixed tolerance knows.  Each such output is measured against the
        value the same module computes with every float type widened to f64:
        hlo-run no farther from it than XLA, or apart from XLA by less than
        XLA's own distance from it (an ill-conditioned element, say an
        AdamW update dividing by a tiny second moment: both are as right as
        the computation allows), on every rank, agrees; farther,
        but by less than 2^-12 of the output's largest magnitude (rounding
        error of a long sum, not a wrong operation: those are percent-sized)
        is the documented departure "summation order"; anything else stays
        a difference."""
        if any(cls != "accumulation" for _, cls, _ in bad):
            return bad, []
        wide = os.path.join(case.dir, "oracle." + module)
        if not os.path.isdir(wide) and not self.run_oracle(case, module, wide):
            return bad, []
        import numpy as np
        left, documented = [], []
        for i, cls, text in bad:
            err_h = err_x = apart = scale = 0.0
            for r in range(case.n):
                f = "out%d.rank%d.npy" % (i, r)
                h, x, o = (np.load(os.path.join(d, f)).astype(np.float64)
                           for d in (out, os.path.join(case.dir, "xla"), wide))
                if h.shape != o.shape or not np.all(np.isfinite(o)):
                    err_h = np.inf
                    break
                err_h, err_x = max(err_h, np.abs(h - o).max()), max(err_x, np.abs(x - o).max())
                apart = max(apart, np.abs(h - x).max())
                scale = max(scale, np.abs(o).max())
            how = "; from the f64 value: hlo-run %.3g, XLA %.3g (of %.3g)" % (err_h, err_x, scale)
            if err_h <= err_x or apart <= err_x:
                continue        # no farther than XLA, or apart by less than XLA's own error
            if err_h <= scale * 2.0 ** -12:
                documented.append((i, cls, text + how))
            else:
                left.append((i, cls, text + how))
        return left, documented

    def run_oracle(self, case, module, wide):
        """hlo-run on the module widened to f64 (every float type, the
        arguments converted exactly), outputs in wide."""
        import numpy as np
        with open(os.path.join(case.dir, module + ".hlo")) as f:
            text = re.sub(r"\b(?:bf16|f16|f32)\[", "f64[", f.read())
        text = re.sub(r", entry_computation_layout=\{(?:[^{}]|\{[^{}]*\})*\}", "", text, count=1)
        path = os.path.join(case.dir, module + ".f64.hlo")
        with open(path, "w") as f:
            f.write(text)
        inputs = os.path.join(case.dir, "in.f64")
        os.makedirs(inputs, exist_ok=True)
        import ml_dtypes
        for name in os.listdir(os.path.join(case.dir, "in")):
            a = np.load(os.path.join(case.dir, "in", name))
            if a.dtype == np.uint16 and self.is_bf16_param(case, name):
                a = a.view(ml_dtypes.bfloat16)
            if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
                a = a.astype(np.float64)
            np.save(os.path.join(inputs, name), a)
        rc, _ = hlo_side.hlo_run(self.build, case.n, path, wide, 1, case.n, inputs=inputs, timeout=CHECK_SECONDS)
        return rc == 0

    @staticmethod
    def is_bf16_param(case, name):
        """Parameter p of the entry is declared bf16 (zoo.py writes those as raw bits)."""
        p = int(re.match(r"param(\d+)\.", name).group(1))
        m = re.search(r"^\s*%?[\w.\-]+ = bf16\[[^\n]*? parameter\(" + str(p) + r"\)", case.text, re.M)
        return m is not None

    # ---- passes: what fired
    def passes(self, case):
        r = subprocess.run([os.path.join(self.build, "hlo-opt"), os.path.join(case.dir, "partitioned.hlo"),
                            "--passes=default", "--stats", "-o", os.path.join(case.dir, "after.hlo")],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            case.problems.append("hlo-opt exit %d: %s" % (r.returncode, hlo_side.first_line(r.stderr)))
            return {}
        fired = {num: int(k) for num, _, k in PASS_LINE.findall(r.stderr) if int(k)}
        with open(os.path.join(case.dir, "after.hlo")) as f:
            case.row["collectives_after"] = collectives(f.read())
        return fired

    # ---- check: hlo-check through the default pipeline
    def check(self, case, mode):
        report = os.path.join(case.dir, "check.%s.json" % mode)
        base = hlo_side.mpirun_cmd(case.n) + [
            os.path.join(self.build, "hlo-check"), "--passes=default", os.path.join(case.dir, "partitioned.hlo"),
            "--pass-mode=" + mode, "--prove", "--json=" + report]
        t = time.perf_counter()
        local = False
        r = self.check_run(base)
        if r.returncode == 2 and "--local" in r.stderr:
            local = True        # the whole pair does not fit: region by region
            r = self.check_run(base + ["--local"])
        seconds = time.perf_counter() - t
        if r.returncode not in (0, 1) or not os.path.exists(report):
            return dict(verdict="error", detail="hlo-check exit %d: %s" % (r.returncode, hlo_side.first_line(r.stderr)),
                        seconds=seconds, local=local)
        with open(report) as f:
            rep = json.load(f)
        os.unlink(report)
        proof = (rep.get("proof") or {}).get("status", "none")
        if rep.get("equivalent"):
            verdict = "equivalent"
        else:
            verdict = "less accurate" if rep.get("judged_by") == "accuracy" else "different"
        sites = [x for x in rep.get("sites", []) if x.get("measured")]
        if sites:
            verdict_sites = "%d sites measured at %d executions, max error %.3g -> %.3g ulp" % (
                len(sites), sum(x["executions"] for x in sites), max(x["error_before"]["max_ulp"] for x in sites),
                max(x["error_after"]["max_ulp"] for x in sites))
        else:
            verdict_sites = ""
        said = [ln for ln in r.stdout.splitlines() if ln.startswith("hlo-check: ") and "(" in ln and " vs " not in ln]
        return dict(verdict=verdict, proof=proof, seconds=seconds, local=local, sites=verdict_sites,
                    detail=(said[0] if said else hlo_side.first_line(r.stderr)) +
                    ("; " + verdict_sites if verdict_sites else ""))

    def check_run(self, cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=CHECK_SECONDS,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(cmd, 3, "", "hlo-check did not finish within %d s" % CHECK_SECONDS)

    def one(self, case):
        t = time.perf_counter()
        case.row["run_partitioned"] = self.run(case, "partitioned")
        case.row["run_optimized"] = self.run(case, "optimized")
        case.row["fired"] = self.passes(case)
        for mode in ("faithful", "sound"):
            case.row[mode] = self.check(case, mode)
        sound, faithful = case.row["sound"], case.row["faithful"]
        if sound["verdict"] != "equivalent":
            case.problems.append("sound passes: %s (%s)" % (sound["verdict"], sound["detail"]))
        else:
            self.totals["equivalent"] += 1
        if faithful["verdict"] == "error":
            case.problems.append("faithful passes: %s" % faithful["detail"])
        elif faithful["verdict"] != "equivalent" and sound["verdict"] == "equivalent":
            case.notes.append("faithful passes %s, the sound guards hold: %s" % (faithful["verdict"], faithful["detail"]))
            self.totals["unsound"] += 1
        for m in (sound, faithful):
            if m.get("proof") == "proved":
                self.totals["proved"] += 1
            elif m["verdict"] != "error":
                self.totals["not_proved"] += 1
        case.row["seconds"] = round(time.perf_counter() - t, 1)
        case.row["problems"], case.row["notes"] = case.problems, case.notes


def describe(case):
    r = case.row
    fired = ", ".join("%s x%d" % kv for kv in sorted(r["fired"].items())) or "none fired"
    checks = "; ".join("%s %s, %s%s" % (m, r[m]["verdict"], r[m].get("proof", "-"), " (--local)" if r[m]["local"] else "")
                       for m in ("faithful", "sound"))
    return "run %s / %s; passes: %s; %s" % (r["run_partitioned"], r["run_optimized"], fired, checks)


def table(rows):
    """The README's table: one line per case."""
    out = ["| program | size | devices | instructions | collectives | passes fired | faithful | sound | "
           "hlo-run vs XLA | time (s) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        coll = ", ".join("%s %d" % kv for kv in sorted(r["collectives"].items())) or "-"
        fired = ", ".join("%s x%d" % kv for kv in sorted(r["fired"].items())) or "-"
        verdict = {m: "%s, %s" % (r[m]["verdict"], str(r[m].get("proof", "-")).replace("_", " "))
                   for m in ("faithful", "sound")}
        if r["sound"].get("sites"):
            verdict["sound"] += " (#102: %s)" % r["sound"]["sites"]
        out.append("| %s | %s | %d | %d | %s | %s | %s | %s | %s | %.0f |" % (
            r["program"], r["size"], r["devices"], r["instructions"], coll, fired, verdict["faithful"],
            verdict["sound"], "%s / %s" % (r["run_partitioned"], r["run_optimized"]), r["seconds"]))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default="build/zoo")
    ap.add_argument("--build", default="build")
    ap.add_argument("--generate", action="store_true", help="run zoo.py first for the same selection")
    ap.add_argument("--programs")
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--devices", default=",".join(map(str, DEVICES)))
    ap.add_argument("--table", help="write the markdown table here")
    ap.add_argument("--json", help="write every case's row here")
    ap.add_argument("--quiet", action="store_true", help="print only failed cases and the last line")
    a = ap.parse_args()
    t0 = time.perf_counter()
    if a.generate:
        cmd = [sys.executable, os.path.join(HERE, "zoo.py"), "--out", a.zoo, "--sizes", a.sizes, "--devices", a.devices]
        if a.programs:
            cmd += ["--programs", a.programs]
        subprocess.call(cmd, stdin=subprocess.DEVNULL)     # a failed program shows as a missing case below
    sys.path.insert(0, HERE)
    import programs
    names = a.programs.split(",") if a.programs else list(programs.PROGRAMS)
    wanted = [case_name(p, s, int(n)) for p in names for s in a.sizes.split(",") for n in a.devices.split(",")]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    checker = Checker(a)
    rows, failed = [], 0
    for name in wanted:
        d = os.path.join(a.zoo, name)
        if not os.path.exists(os.path.join(d, "case.json")):
            print("FAIL %s: no case (make zoo writes it; zoo.py said why it could not)" % name, flush=True)
            failed += 1
            continue
        case = Case(d)
        checker.one(case)
        rows.append(case.row)
        if case.problems:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(case.problems)), flush=True)
        elif not a.quiet:
            print("ok   %s: %s (%.0f s)" % (name, describe(case), case.row["seconds"]), flush=True)
        for note in case.notes:
            if not a.quiet:
                print("     %s: %s" % (name, note), flush=True)
    if a.table:
        with open(a.table, "w") as f:
            f.write(table(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    t = checker.totals
    print("zoo-check: %d cases, %d ok, %d failed; run: %d agree (%d outputs past the table by summation order, "
          "documented), %d differ; check: %d equivalent (sound), %d faithful unsound, %d proved, %d not proved; "
          "%.0f s" % (
              len(wanted), len(wanted) - failed, failed, t["agree"], t["documented"], t["differ"], t["equivalent"],
              t["unsound"],
              t["proved"], t["not_proved"], time.perf_counter() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
