#!/usr/bin/env python3
"""check_sections.py: every prototype a header lists under a section that
names a source file is defined in that file (make sections).

A header in src/ groups its prototypes in sections.  A section starts at a
comment that opens with a file name (`/* parse.c: ...`, `/* ---- coll.c:
...`, `/* eval_dot.c */`) or that ends with file names in parentheses
(`/* One module (run.c) */`, `/* Per pass (gen_flips.c, gen_reduce.c): */`,
globs allowed); the title line right after a `/* ------ */` rule starts a
section too, one naming no file when it names none (`/* Literals */`).
Each prototype (a declaration with a parameter list, at the top level,
outside typedefs and macros) in a section naming files must be defined,
not static, in one of them.  Prints every one that is not, as
header:line: name: listed under FILES, defined in FILE; exit 1 if any.

usage: scripts/check_sections.py [SRC_DIR]   (default: src)
       scripts/check_sections.py --self-test  (the check on a small tree of its own)
With TALLY set, appends "passed failed" to that file (make test's tally)."""
import fnmatch
import os
import re
import sys

import source_check

RULE = re.compile(r"^/\*\s*-{10,}\s*\*/\s*$")
LEADING = re.compile(r"^/\*\s*(?:-+\s*)?([\w*]+\.c)\b(?::|\s|\*/|$)")
TRAILING = re.compile(r"\(([\w*]+\.c(?:\s*,\s*[\w*]+\.c)*)\)[.:]?\s*\*/\s*$")
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*\n?\{", re.M)
DECL_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def definitions(src):
    """name -> set of file basenames that define it (not static)."""
    where = {}
    for d, _, files in os.walk(src):
        for f in files:
            if f.endswith(".c"):
                text = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
                for m in DEFINITION.finditer(text):
                    if m.group(1) not in ("if", "for", "while", "switch", "return", "sizeof"):
                        where.setdefault(m.group(1), set()).add(f)
    return where


def section_files(line, after_rule):
    """The files a comment line names as its section, [] for a section naming
    none, None when the line starts no section."""
    m = LEADING.match(line)
    if m:
        return [m.group(1)]
    m = TRAILING.search(line)
    if m and line.startswith("/*"):
        return [s.strip() for s in m.group(1).split(",")]
    if after_rule and line.startswith("/*") and not RULE.match(line):
        return []
    return None


def prototypes(path):
    """(line, name, files) of every prototype of the header, files being the
    section's file names ([] or None when unnamed)."""
    out, files, after_rule = [], None, False
    depth, in_comment, in_macro, decl, decl_line = 0, False, False, "", 0
    for no, raw in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        line = raw.rstrip("\n")
        if in_macro:
            in_macro = line.endswith("\\")
            continue
        if not in_comment and depth == 0 and not decl and line.startswith("/*"):
            named = section_files(line, after_rule)
            if named is not None:
                files = named
            after_rule = bool(RULE.match(line))
        elif line.strip():
            after_rule = False
        if not in_comment and depth == 0 and not decl and line.startswith("#"):
            in_macro = line.endswith("\\")
            continue
        # the code of the line, comments dropped
        code, i = "", 0
        while i < len(line):
            if in_comment:
                j = line.find("*/", i)
                if j < 0:
                    i = len(line)
                else:
                    in_comment, i = False, j + 2
            elif line.startswith("/*", i):
                in_comment, i = True, i + 2
            elif line.startswith("//", i):
                break
            else:
                code += line[i]
                i += 1
        for ch in code:
            if depth == 0 and not decl and ch.isspace():
                continue
            if depth == 0 and not decl:
                decl_line = no
            if depth == 0:
                decl += ch
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and "(" in decl.split("{")[0]:
                    decl = ""   # a function defined in the header (static inline): no prototype
            elif ch == ";" and depth == 0:
                text = " ".join(decl.split())
                decl = ""
                if "(" in text and not text.startswith(("typedef", "extern \"C\"")) and "=" not in text.split("(")[0]:
                    m = DECL_NAME.search(text)
                    if m and not text.startswith("struct") and "(*" not in text.split(m.group(1))[0]:
                        out.append((decl_line, m.group(1), files))
        if decl and depth == 0:
            decl += " "
        if depth > 0 and decl and "(" not in decl:
            decl = ""      # a struct, enum or union body: no prototype
    return out


def misplaced(src, show=True):
    """(prototypes checked, misplaced) over the headers of src."""
    where = definitions(src)
    bad = checked = 0
    for d, _, hs in sorted(os.walk(src)):
        for h in sorted(hs):
            if not h.endswith(".h"):
                continue
            path = os.path.join(d, h)
            for line, name, files in prototypes(path):
                if not files:
                    continue
                checked += 1
                defined = where.get(name, set())
                if not any(fnmatch.fnmatch(f, pat) for f in defined for pat in files):
                    bad += 1
                    if show:
                        print(f"{path}:{line}: {name}: listed under {', '.join(files)}, defined in "
                              f"{', '.join(sorted(defined)) or 'no source file'}")
    return checked, bad


SELF_TEST = {
    "a.h": "/* ---------------------------------------------------------------- */\n"
           "/* a.c: the first                                                    */\n\n"
           "int a_one(int x);\n/* b.c: a doc comment naming its file */\nint b_two(void);\n"
           "static inline int a_inline(int x) { return x; }\nint a_three(const char *s,\n            int n);\n"
           "/* Grouped (c*.c) */\nvoid c_four(void);\n"
           "/* ---------------------------------------------------------------- */\n"
           "/* Unnamed                                                          */\nvoid anywhere(void);\n",
    "a.c": "int a_one(int x)\n{\n    return x;\n}\n\nint b_two(void)\n{\n    return 2;\n}\n",
    "b.c": "int a_three(const char *s, int n)\n{\n    return n;\n}\n",
    "c_x.c": "void c_four(void)\n{\n}\n",
}


def self_test():
    """b_two under b.c but defined in a.c, a_three under b.c but defined
    there (a doc comment naming its file starts a section): one misplaced of
    four checked; the inline function and the unnamed section not checked."""
    return source_check.self_test("sections", SELF_TEST, misplaced, (4, 1), "checked, misplaced")


if __name__ == "__main__":
    sys.exit(source_check.main("sections", misplaced, self_test,
                               lambda n, bad: f"{n} prototypes under a section naming their file, {bad} misplaced"))
