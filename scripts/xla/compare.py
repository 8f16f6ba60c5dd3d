#!/usr/bin/env python3
"""compare.py: compares two output directories of out<i>.rank<r>.npy (hlo-run's
and xla_run.py's).

    compare.py A_DIR B_DIR [--module M.hlo] [--mode exact | --mode ulp N | --mode rtol X]
               [--mode maxrel X] [--show K] [--quiet]

Every out<i>.rank<r>.npy in either directory is compared: same dtype and
shape, then the values under the mode (default exact: bitwise, any NaN
equals any NaN; ulp N: NaN where NaN, infinities equal, zeros of the same
sign, else at most N ulps apart; rtol X: |a - b| <= X |b|).  With --module,
the result leaf types are read from the ENTRY line so that bf16 / f8 leaves
(written as f32) get their ulps counted in their own type.  For each
differing file: the count, the largest ulp distance and the first K
differing elements (index, A value, B value).
Prints one line per file, then "compare: N agree, N differ"; exit 0 when
all agree, 1 otherwise, 2 on bad usage.
"""
import argparse
import os
import re
import sys

import numpy as np

INT_VIEW = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
NARROW_BITS = {"bf16": (16, 8)}     # f32-stored type -> (bits, mantissa incl. hidden)


def ordered(a, t):
    """Float bits as integers ordered like the values (-0 and +0 both 0); bf16
    values (f32 storage) use their top 16 bits."""
    if t == "bf16" and a.dtype == np.float32:
        i = (a.view(np.uint32) >> 16).astype(np.uint16).view(np.int16).astype(np.int64)
        m = (1 << 15) - 1
    else:
        i = a.view(INT_VIEW[a.dtype.itemsize]).astype(np.int64)
        m = (1 << (8 * a.dtype.itemsize - 1)) - 1
    return np.where(i < 0, -(i & m), i)


def parts(a):
    return a.view(a.real.dtype).reshape(a.shape + (2,))


def mismatch(a, b, mode, t):
    """(mask of differing elements, ulp distance array or None)."""
    if b.dtype.kind == "c":
        if mode[0] in ("rtol", "maxrel"):
            with np.errstate(all="ignore"):
                err = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
                mag = np.abs(b.astype(np.complex128))
                fin = np.isfinite(mag)
                bound = mag if mode[0] == "rtol" else (np.max(mag[fin]) if np.any(fin) else 0.0)
                return ~(err <= float(mode[1]) * bound) & ~(np.isnan(a) & np.isnan(b)), None
        m, d = mismatch(parts(a), parts(b), mode, t)
        return np.any(m, axis=-1), (np.max(d, axis=-1) if d is not None else None)
    if b.dtype.kind not in "f":
        return a != b, None
    an, bn = np.isnan(a), np.isnan(b)
    with np.errstate(all="ignore"):
        fin = np.isfinite(a) & np.isfinite(b)
        dist = np.where(fin, np.abs(ordered(a, t) - ordered(b, t)), 0)
        if mode[0] == "exact":
            iv = INT_VIEW[b.dtype.itemsize]
            return ~((an & bn) | (a.view(iv) == b.view(iv))), dist
        if mode[0] == "ulp":
            zero_sign = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
            return ((an != bn) | (~an & ~bn & ~fin & (a != b)) | (fin & (dist > int(mode[1]))) | zero_sign), dist
        if mode[0] in ("rtol", "maxrel"):
            err = np.abs(a.astype(np.float64) - b.astype(np.float64))
            mag = np.abs(b.astype(np.float64))
            bfin = np.isfinite(b)
            bound = mag if mode[0] == "rtol" else (np.max(mag[bfin]) if np.any(bfin) else 0.0)
            return ((an != bn) | (~bfin & ~bn & (a != b)) | (bfin & ~(err <= float(mode[1]) * bound))), dist
    raise ValueError("bad mode %r" % (mode,))


def leaf_types(module):
    if not module:
        return []
    text = open(module).read()
    sig = re.search(r"^ENTRY[^\n]*->(.*)$", text, re.M)
    return re.findall(r"([a-z][a-z0-9]*)\[", sig.group(1)) if sig else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--module")
    ap.add_argument("--mode", nargs="+", default=["exact"])
    ap.add_argument("--show", type=int, default=3)
    ap.add_argument("--quiet", action="store_true", help="print only the differing files")
    o = ap.parse_args()
    if o.mode[0] not in ("exact", "ulp", "rtol", "maxrel") or len(o.mode) != (1 if o.mode[0] == "exact" else 2):
        sys.stderr.write("compare: --mode exact | ulp N | rtol X | maxrel X\n")
        return 2
    types = leaf_types(o.module)
    pat = re.compile(r"out(\d+)\.rank(\d+)\.npy")
    names = sorted({f for d in (o.a, o.b) if os.path.isdir(d) for f in os.listdir(d) if pat.fullmatch(f)},
                   key=lambda f: tuple(int(x) for x in pat.fullmatch(f).groups())[::-1])
    agree = differ = 0
    for f in names:
        i = int(pat.fullmatch(f).group(1))
        t = types[i] if i < len(types) else "?"
        pa, pb = os.path.join(o.a, f), os.path.join(o.b, f)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print("DIFFER %s (%s): only in %s" % (f, t, o.a if os.path.exists(pa) else o.b))
            differ += 1
            continue
        a, b = np.load(pa), np.load(pb)
        if a.dtype != b.dtype or a.shape != b.shape:
            print("DIFFER %s (%s): %s %s vs %s %s" % (f, t, a.dtype, a.shape, b.dtype, b.shape))
            differ += 1
            continue
        if a.size == 0:
            agree += 1
            if not o.quiet:
                print("agree  %s (%s, empty)" % (f, t))
            continue
        bad, dist = mismatch(a, b, o.mode, t)
        n = int(np.sum(bad))
        if n == 0:
            agree += 1
            if not o.quiet:
                print("agree  %s (%s%s)" % (f, t, list(a.shape)))
            continue
        differ += 1
        worst = ""
        if dist is not None:
            worst = ", max ulp among finite %d" % int(np.max(np.where(bad, dist, 0)))
        print("DIFFER %s (%s%s): %d of %d elements%s" % (f, t, list(a.shape), n, a.size, worst))
        for idx in np.argwhere(bad)[:o.show]:
            idx = tuple(int(v) for v in idx)
            print("    at %s: %r vs %r" % (list(idx), a[idx], b[idx]))
    print("compare: %d agree, %d differ" % (agree, differ))
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
