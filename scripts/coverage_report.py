#!/usr/bin/env python3
"""coverage_report.py: the report of make fuzz-coverage, from gcovr's JSON.

    coverage_report.py GCOVR.json [--untaken FILE] [--accounted DOC]

gcovr (from Debian) reads the gcov counters; this prints what gcovr's text
report leaves out: line and branch coverage per file *and per function*
(a line belongs to the function whose first line is the nearest above it),
and every branch never taken as file:line (branch k of n).  --untaken
writes that list to FILE too, one branch per line, for the next run to
compare against.

--accounted DOC reads the branches accounted for in DOC
(docs/fuzz-coverage.md), one entry per line:
    - `src/passes/FILE.c:LINE` FUNCTION, N branches: KIND: reason
with LINE also FIRST-LAST, or LINE#k,k for only those branches of the
line (gcovr's k of "branch k of n"; an entry without # takes the untaken
branches of its lines that no # entry names).  KIND is unreachable,
out-of-memory, or reachable (a module reaches it that hlo-fuzz does not
generate yet).  It reports the untaken branches no entry accounts for,
the entries whose lines hold none (stale: a generator case reaches them
now, or the code moved) and those whose N is not the count they hold;
exit 1 when there is any.
"""
import argparse
import json
import re
import sys

ENTRY = re.compile(r"^- `(src/passes/[\w.]+\.c):(\d+)(?:-(\d+))?(?:#([\d,]+))?` [\w ,]*?(\d+) branch(?:es)?: ([\w-]+)")


def read_accounted(path):
    """[(file, first, last, doc line number, branches, kind, which)] from
    the doc's list; kind is the reason's first word ("reachable" for those
    still to be generated); which is the set of branch numbers an entry of
    one line names after '#' (gcovr's k of "branch k of n"), or None: then
    it takes the untaken branches of its lines that no '#' entry names."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = ENTRY.match(line)
            if m:
                first = int(m.group(2))
                which = set(int(k) for k in m.group(4).split(",")) if m.group(4) else None
                out.append((m.group(1), first, int(m.group(3) or first), n, int(m.group(5)), m.group(6).lower(),
                            which))
    return out


def pct(hit, total):
    return "%5.1f%%" % (100.0 * hit / total) if total else "    -"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--untaken")
    ap.add_argument("--accounted")
    a = ap.parse_args()
    with open(a.json) as f:
        data = json.load(f)
    untaken = []
    where = []          # (file, line, k) of each untaken branch
    tot = [0, 0, 0, 0]
    print("%-52s %7s %7s  %s" % ("file / function", "lines", "branches", "taken/total"))
    for fe in sorted(data["files"], key=lambda e: e["file"]):
        funcs = sorted(fe.get("functions", []), key=lambda fn: fn["lineno"])
        per = {fn["name"]: [0, 0, 0, 0, fn["execution_count"]] for fn in funcs}
        filesum = [0, 0, 0, 0]
        for ln in fe["lines"]:
            if ln.get("gcovr/noncode") or ln.get("gcovr/excluded"):
                continue
            owner = None
            for fn in funcs:
                if fn["lineno"] <= ln["line_number"]:
                    owner = fn["name"]
            br = ln.get("branches", [])
            taken = sum(1 for b in br if b["count"] > 0)
            row = [1, 1 if ln["count"] > 0 else 0, len(br), taken]
            for i in range(4):
                filesum[i] += row[i]
                if owner:
                    per[owner][i] += row[i]
            for k, b in enumerate(br):
                if b["count"] == 0:
                    where.append((fe["file"], ln["line_number"], k))
                    untaken.append("%s:%d: branch %d of %d never taken%s (in %s)"
                                   % (fe["file"], ln["line_number"], k, len(br),
                                      "" if ln["count"] else "; the line never ran", owner or "?"))
        for i in range(4):
            tot[i] += filesum[i]
        print("%-52s %7s %7s  %d/%d" % (fe["file"], pct(filesum[1], filesum[0]), pct(filesum[3], filesum[2]),
                                        filesum[3], filesum[2]))
        for fn in funcs:
            p = per[fn["name"]]
            print("  %-50s %7s %7s  %d/%d%s" % (fn["name"], pct(p[1], p[0]), pct(p[3], p[2]), p[3], p[2],
                                                 "" if p[4] else "  (never called)"))
    print("%-52s %7s %7s  %d/%d" % ("total", pct(tot[1], tot[0]), pct(tot[3], tot[2]), tot[3], tot[2]))
    print("\n%d branches never taken:" % len(untaken))
    for u in untaken:
        print("  " + u)
    if a.untaken:
        with open(a.untaken, "w") as f:
            f.write("".join(u + "\n" for u in untaken))
    if not a.accounted:
        return 0
    entries = read_accounted(a.accounted)
    used = [0] * len(entries)
    loose = []
    for u, (file, line, k) in zip(untaken, where):
        named = [i for i, e in enumerate(entries)
                 if e[6] is not None and e[0] == file and e[1] <= line <= e[2] and k in e[6]]
        hit = named or [i for i, e in enumerate(entries) if e[6] is None and e[0] == file and e[1] <= line <= e[2]]
        for i in hit:
            used[i] += 1
        if not hit:
            loose.append(u)
    stale = [e for e, n in zip(entries, used) if n == 0]
    miscounted = [(e, n) for e, n in zip(entries, used) if n and n != e[4]]
    to_do = sum(n for e, n in zip(entries, used) if e[5] == "reachable")
    print("\naccounted for in %s: %d of %d untaken branches, by %d entries; %d of them reachable, "
          "not yet generated" % (a.accounted, len(untaken) - len(loose), len(untaken), len(entries), to_do))
    print("%d untaken branches not accounted for%s" % (len(loose), ":" if loose else ""))
    for u in loose:
        print("  " + u)
    for e in stale:
        print("stale entry %s:%d: %s:%d%s holds no untaken branch"
              % (a.accounted, e[3], e[0], e[1], "-%d" % e[2] if e[2] != e[1] else ""))
    for e, n in miscounted:
        print("entry %s:%d says %d branches; %s:%d%s holds %d untaken"
              % (a.accounted, e[3], e[4], e[0], e[1], "-%d" % e[2] if e[2] != e[1] else "", n))
    return 1 if loose or stale or miscounted else 0


if __name__ == "__main__":
    sys.exit(main())
