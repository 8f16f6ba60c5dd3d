#!/usr/bin/env python3
"""coverage_report.py: the report of make fuzz-coverage, from gcovr's JSON.

    coverage_report.py GCOVR.json [--untaken FILE]

gcovr (from Debian) reads the gcov counters; this prints what gcovr's text
report leaves out: line and branch coverage per file *and per function*
(a line belongs to the function whose first line is the nearest above it),
and every branch never taken as file:line (branch k of n).  --untaken
writes that list to FILE too, one branch per line, for the next run to
compare against.
"""
import argparse
import json
import sys


def pct(hit, total):
    return "%5.1f%%" % (100.0 * hit / total) if total else "    -"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--untaken")
    a = ap.parse_args()
    with open(a.json) as f:
        data = json.load(f)
    untaken = []
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
