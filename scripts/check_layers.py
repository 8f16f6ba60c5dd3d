#!/usr/bin/env python3
"""check_layers.py: the modules of src/ include each other one way only
(make layers; HACKING.md section 1 draws the map).

Each file src/<module>/<file>.{c,h} may include the headers of its own
module and of the modules ALLOWED names for it; a few single files have a
named exception (EXCEPTIONS).  A header belongs to the module whose folder
holds it (gen/ holds protoc's output, which only src/ir may include).
Prints every include that crosses a layer the wrong way as
file:line: includes HEADER (module M), and the module graph's edges;
exit 1 if any.

usage: scripts/check_layers.py [SRC_DIR]   (default: src)
       scripts/check_layers.py --self-test  (the check on a small tree of its own)
With TALLY set, appends "passed failed" to that file (make test's tally)."""
import os
import re
import sys

import source_check

# Who may include whom: tools -> check, fuzz, cli -> collectives ->
# interp, passes -> ir.  passes sees only the IR.
ALLOWED = {
    "ir": {"gen"},
    "interp": {"ir"},
    "passes": {"ir"},
    "collectives": {"interp", "ir"},
    "cli": {"collectives", "interp", "ir"},
    "check": {"collectives", "interp", "ir"},
    "fuzz": {"check", "collectives", "passes", "interp", "ir"},
    "tools": {"check", "fuzz", "cli", "collectives", "passes", "interp", "ir"},
}
# One file, one more module, and why.
EXCEPTIONS = {
    ("check", "per_pass.c"): {"passes"},        # --per-pass runs the pipeline
    ("check", "given_inputs.c"): {"cli"},       # --inputs F0,F1: cli_list_item()
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def header_homes(root):
    """header basename -> module folder holding it."""
    homes = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".h", ".def")):
                homes[f] = os.path.relpath(d, root).split(os.sep)[0]
    return homes


def crossings(src, show=True):
    """(files checked, wrong-way includes), printing each."""
    root = os.path.dirname(os.path.abspath(src))
    homes = header_homes(src)
    gen = os.path.join(root, "gen")
    if os.path.isdir(gen):
        for f in os.listdir(gen):
            homes.setdefault(f, "gen")
    checked, bad, edges = 0, 0, set()
    for d, _, files in sorted(os.walk(src)):
        module = os.path.relpath(d, src).split(os.sep)[0]
        if module == ".":
            continue
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            checked += 1
            text = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
            for m in INCLUDE.finditer(text):
                home = homes.get(os.path.basename(m.group(1)))
                if home is None or home == module:
                    continue
                edges.add((module, home))
                if home in ALLOWED.get(module, set()) | EXCEPTIONS.get((module, f), set()):
                    continue
                bad += 1
                if show:
                    line = text.count("\n", 0, m.start()) + 1
                    print(f"{os.path.join(d, f)}:{line}: includes {m.group(1)} (module {home}), "
                          f"which {module} may not")
    if show:
        print("layers: " + ", ".join(f"{a} -> {b}" for a, b in sorted(edges)))
    return checked, bad


SELF_TEST = {
    "ir/ir.h": "",
    "interp/interp.h": '#include "ir.h"\n',
    "interp/eval.c": '#include "interp.h"\n#include "pass.h"\n',
    "passes/pass.h": '#include "ir.h"\n',
    "check/per_pass.c": '#include "pass.h"\n',
    "check/check.c": '#include "pass.h"\n',
}


def self_test():
    """interp/eval.c including pass.h and check/check.c including pass.h
    are wrong; check/per_pass.c's is its exception."""
    return source_check.self_test("layers", SELF_TEST, crossings, (6, 2), "checked, wrong way")


if __name__ == "__main__":
    sys.exit(source_check.main("layers", crossings, self_test,
                               lambda n, bad: f"{n} files, {bad} includes the wrong way"))
