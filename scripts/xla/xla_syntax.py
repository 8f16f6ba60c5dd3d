#!/usr/bin/env python3
"""xla_syntax.py: hlocheck reads what XLA's parser reads, with the same
meaning.  For every module (the corpus, the interpreter corpus, the golden
pass tests, XLA's own test modules, the real dumps, hlo-fuzz's modules):

  1. XLA's parser reads the file (A);
  2. hlocheck reads it and prints it (hlo-opt --passes=none), and XLA's
     parser reads that print (B);
  3. hlocheck reads XLA's own print of A, prints it, and XLA reads that (C);
  4. hlocheck reads the HloModuleProto XLA serializes A to (the bytes of a
     `*.hlo_module.pb`), prints it, and XLA reads that print (D);
  5. hlocheck writes the file as an HloModuleProto (hlo-opt -o
     x.hlo_module.pb) and XLA reads that proto (E), and the same after the
     default passes: XLA reads hlocheck's proto of the rewritten module as
     it reads hlocheck's text of it (F).

A, B, C, D and E (and F's two) must be the same module instruction by instruction: computation,
name, opcode, operands, shape and layout, every attribute and called
computation, as XLA prints each instruction (metadata left out: it has no
meaning), and the same module header (replica and partition counts, entry
layout, input/output aliasing).  XLA takes no replica count from a proto, so
D is held to the module XLA itself makes of its proto, and E to A without
the replica and partition counts.

    xla_syntax.py [--build DIR] [--only REGEX] [--fuzz-count N] [--json FILE]

One line per module (same / DIFFER / hlocheck refuses / XLA refuses), then
"xla-syntax: N same, N differ, N refused by hlocheck only, N refused by XLA";
exit 1 when a module differs or hlocheck refuses what XLA's parser reads.
A module XLA refuses is counted with XLA's message.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from xla_run import set_xla_flags     # noqa: E402

METADATA = re.compile(r", metadata=\{(?:[^{}\"]|\"(?:[^\"\\\\]|\\\\.)*\")*\}")
ZERO = re.compile(r"(?<![\w.])-0(?![\w.])")
HEADER_KEYS = ("replica_count", "num_partitions", "entry_computation_layout", "input_output_alias")


def modules(build, work, fuzz_count):
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    files = sorted(glob.glob(os.path.join(ROOT, "corpus/*/*.hlo")))
    files += sorted(glob.glob(os.path.join(ROOT, "corpus/interp/*/module.hlo")))
    files += sorted(glob.glob(os.path.join(ROOT, "tests/passes/*/*.hlo")))
    files += sorted(glob.glob(os.path.join(shared, "peer-corpus/*/*.hlo")))
    files += sorted(glob.glob(os.path.join(shared, "real-dumps/*.hlo")))
    d = os.path.join(work, "fuzz")
    os.makedirs(d, exist_ok=True)
    for k in range(fuzz_count):
        r = subprocess.run([os.path.join(build, "hlo-fuzz"), "--seed", "7", "--index", str(k), "--print"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            path = os.path.join(d, "fuzz_7_%d.hlo" % k)
            with open(path, "w") as f:
                f.write(r.stdout)
            files.append(path)
    return files


class Syntax:
    def __init__(self, build, work):
        set_xla_flags(1)
        from jax._src.lib import xla_client as xc
        self.xc, self.build, self.work = xc, build, work

    def xla(self, text):
        """(XLA's module, None) or (None, XLA's message)."""
        try:
            return self.xc.hlo.hlo_module_from_text(text), None
        except Exception as e:
            return None, " | ".join(str(e).splitlines())[:400]

    def hlocheck_print(self, text, suffix=".hlo"):
        """(hlocheck's print, None) or (None, its first error line); text
        is HLO text, or bytes (a serialized proto)."""
        mode = "wb" if isinstance(text, bytes) else "w"
        with tempfile.NamedTemporaryFile(mode, suffix=suffix, dir=self.work, delete=False) as f:
            f.write(text)
        try:
            r = subprocess.run([os.path.join(self.build, "hlo-opt"), "--passes=none", f.name],
                               capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        if r.returncode != 0:
            err = [ln for ln in r.stderr.splitlines() if ln.strip()]
            return None, (err[0] if err else "exit %d" % r.returncode)
        return r.stdout, None

    @staticmethod
    def meaning(hm):
        """{(computation, instruction): its text without metadata} and the header."""
        instrs = {}
        for c in hm.computations():
            for i in c.instructions():
                instrs[(c.name, i.name)] = METADATA.sub("", i.to_string())
        first = hm.to_string().splitlines()[0]
        header = {k: v for k, v in re.findall(r"\b(%s)=(\{.*?\}(?=,\s*\w+=|$)|[^,]+)" % "|".join(HEADER_KEYS),
                                               first)}
        return instrs, header

    @staticmethod
    def anonymous(instrs):
        """The instructions of each computation as a multiset of their texts
        with every %name erased: what is left when names are set aside."""
        out = {}
        for (comp, _), text in instrs.items():
            text = re.sub(r"%[\w.-]+", "%_", text)
            out.setdefault(comp, []).append(ZERO.sub("0", text) if " constant(" in text else text)
        return {c: sorted(v) for c, v in out.items()}

    @staticmethod
    def first_difference(a, b):
        ia, ha = a
        ib, hb = b
        for k in HEADER_KEYS:
            if ha.get(k) != hb.get(k):
                return "header %s: %s against %s" % (k, ha.get(k), hb.get(k))
        for key in ia:
            if key not in ib:
                return "%s/%s is missing" % key
            if ia[key] != ib[key]:
                return "%s/%s: %s  against  %s" % (key[0], key[1], ia[key][:200], ib[key][:200])
        for key in ib:
            if key not in ia:
                return "%s/%s appears" % key
        return None

    def read_back(self, want, text, what, suffix=".hlo"):
        """(status, detail) of hlocheck reading text, printing it, and XLA
        reading that print, against want (the meaning XLA gave the module)."""
        printed, err = self.hlocheck_print(text, suffix)
        if printed is None:
            return "hlocheck refuses", what + err
        b, why = self.xla(printed)
        if b is None:
            return "DIFFER", "XLA cannot read hlocheck's print of %s%s" % (what, why)
        diff = self.first_difference(want, self.meaning(b))
        return ("DIFFER", "hlocheck's print of %s%s" % (what, diff)) if diff else ("same", "")

    def check(self, path):
        """(status, detail): same, DIFFER, hlocheck refuses, XLA refuses."""
        text = open(path, errors="replace").read()
        a, why = self.xla(text)
        if a is None:
            mine, err = self.hlocheck_print(text)
            return "XLA refuses", why + ("; hlocheck refuses too: " + err if err else "; hlocheck reads it")
        want = self.meaning(a)
        status, detail = self.read_back(want, text, "the file: ")
        if status != "same":
            return status, detail
        status, detail = self.read_back(want, a.to_string(), "XLA's print of it: ")
        if status != "same":
            return status, detail
        proto = a.as_serialized_hlo_module_proto()
        from_proto = self.xc.hlo.HloModule.from_serialized_hlo_module_proto(proto)
        status, detail = self.read_back(self.meaning(from_proto), proto, "XLA's HloModuleProto of it: ",
                                        ".hlo_module.pb")
        if status != "same":
            return status, detail
        return self.written_proto(want, path)

    def written_proto(self, want, path):
        """E: XLA reads the HloModuleProto hlocheck writes of the file."""
        out = os.path.join(self.work, "written.hlo_module.pb")
        r = subprocess.run([os.path.join(self.build, "hlo-opt"), "--passes=none", path, "-o", out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            err = [ln for ln in r.stderr.splitlines() if ln.strip() and "note:" not in ln]
            return "hlocheck refuses", "writing it as a proto: " + (err[0] if err else "exit %d" % r.returncode)
        try:
            with open(out, "rb") as f:
                b = self.xc.hlo.HloModule.from_serialized_hlo_module_proto(f.read())
        except Exception as e:
            return "DIFFER", "XLA cannot read hlocheck's proto of it: " + " | ".join(str(e).splitlines())[:300]
        instrs, header = want
        # XLA takes no replica count from a proto; and where the text gives no
        # entry_computation_layout, XLA's parser makes one of the default
        # layouts when the header sets replica_count or num_partitions and of
        # the entry's own layouts otherwise, while the proto says the entry's own.
        skip = ["replica_count", "num_partitions"]
        if "entry_computation_layout" not in open(path, errors="replace").read().split("\n", 1)[0]:
            skip.append("entry_computation_layout")
        header = {k: v for k, v in header.items() if k not in skip}
        mine = self.meaning(b)
        mine = (mine[0], {k: v for k, v in mine[1].items() if k not in skip})
        # XLA's text parser reads a constant written -0 as +0 (docs/xla-differences.md,
        # minus-zero-constant); the proto carries the sign.
        def signless(m):
            return ({k: ZERO.sub("0", v) if " constant(" in v else v for k, v in m[0].items()}, m[1])
        diff = self.first_difference(signless((instrs, header)), signless(mine))
        if diff and self.anonymous(instrs) == self.anonymous(mine[0]) and header == mine[1]:
            diff = None     # the same but for the names XLA's parser gave instructions (name.N)
        if diff:
            return "DIFFER", "hlocheck's proto of it: " + diff
        return self.rewritten_proto(path, skip)

    def rewritten_proto(self, path, skip):
        """F: after the default passes, XLA reads hlocheck's proto as its text."""
        out = os.path.join(self.work, "rewritten.hlo_module.pb")
        hlo_opt = [os.path.join(self.build, "hlo-opt"), "--passes=default", path]
        r = subprocess.run(hlo_opt + ["-o", out], capture_output=True, text=True)
        t = subprocess.run(hlo_opt, capture_output=True, text=True)
        if r.returncode != 0 or t.returncode != 0:
            return "same", ""       # the passes refuse the module either way: nothing to write
        want, why = self.xla(t.stdout)
        if want is None:
            return "DIFFER", "XLA cannot read hlocheck's text of the rewritten module: " + why
        try:
            with open(out, "rb") as f:
                b = self.xc.hlo.HloModule.from_serialized_hlo_module_proto(f.read())
        except Exception as e:
            return "DIFFER", "XLA cannot read hlocheck's proto of the rewritten module: " + \
                " | ".join(str(e).splitlines())[:300]
        def cut(m):
            return ({k: ZERO.sub("0", v) if " constant(" in v else v for k, v in m[0].items()},
                    {k: v for k, v in m[1].items() if k not in skip})
        a, m = cut(self.meaning(want)), cut(self.meaning(b))
        diff = self.first_difference(a, m)
        if diff and self.anonymous(a[0]) == self.anonymous(m[0]) and a[1] == m[1]:
            diff = None     # the same but for the names XLA's parser gave instructions
        return ("DIFFER", "hlocheck's proto of the rewritten module: " + diff) if diff else ("same", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build/xla-syntax"))
    ap.add_argument("--only")
    ap.add_argument("--fuzz-count", type=int, default=20)
    ap.add_argument("--json")
    ap.add_argument("--quiet", action="store_true", help="leave out the modules that are the same")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    syn = Syntax(os.path.abspath(a.build), a.work)
    counts = {"same": 0, "DIFFER": 0, "hlocheck refuses": 0, "XLA refuses": 0}
    records = []
    for path in modules(a.build, a.work, a.fuzz_count):
        shown = os.path.relpath(path, os.path.dirname(ROOT))
        if a.only and not re.search(a.only, shown):
            continue
        status, detail = syn.check(path)
        counts[status] += 1
        records.append(dict(module=shown, status=status, detail=detail))
        if not (a.quiet and status == "same"):
            print("%-17s %s%s" % (status, shown, (": " + detail) if detail else ""), flush=True)
    print("xla-syntax: %d same, %d differ, %d refused by hlocheck only, %d refused by XLA"
          % (counts["same"], counts["DIFFER"], counts["hlocheck refuses"], counts["XLA refuses"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"counts": counts, "records": records}, f, indent=1)
    return 1 if counts["DIFFER"] or counts["hlocheck refuses"] else 0


if __name__ == "__main__":
    sys.exit(main())
