"""tolerance.py: how xla_diff.py compares one output of hlo-run with XLA:CPU's.

The one table of tolerances.  An output is compared under the loosest class
its cone holds (hlo_cone.py); integer, pred and other non-float outputs are
always compared bitwise, whatever the cone.

  class           measure       tolerance  why XLA:CPU may legitimately differ
  exact           bitwise       0          HLO fixes the bits: integer and pred ops, data
                                           movement, compare/select, converts, correctly
                                           rounded float ops (+ - * / sqrt), sort, gather,
                                           collectives' data movement
  contraction     ulp           2          it fuses a multiply and an add into one FMA
                                           (one rounding instead of two), per element
  transcendental  ulp           4          its own approximations of exp, log, tanh, sin,
                                           pow, erf, rsqrt, ... per element
  complex         magnitude ulp 16         complex divide, abs, sign, exp, log, sqrt, sin, ...:
                                           its own algorithms (C's Annex G here); each part
                                           in ulps of the element's larger part (a part
                                           near zero carries the other's rounding)
  complex-power   magnitude ulp 4096       complex power, exp(b log a) by either side: its
                                           error grows with |b log a|
  batch-norm      scaled ulp    1024       batch-norm-*: XLA expands them with its own
                                           formula (E[x^2] - E[x]^2 for the variance)
  accumulation    scaled ulp    64         its reduction, dot and all-reduce orders: the
                                           distance in ulps of the output's largest
                                           magnitude (a sum's rounding error scales with
                                           the sum of the magnitudes, not with the
                                           element), ulps of the narrowest type the cone
                                           accumulates in (measure_type)
  unspecified     not compared  -          rng's values are the implementation's

Everywhere: any NaN equals any NaN (HLO does not fix NaN payloads of
arithmetic); a NaN against a number, or infinities against a finite value
or each other, differ under every measure; -0 against +0 differs only in
the exact class.  xla_diff.py prints the largest measured distance per
class, so a tolerance that is too loose or too tight shows.
"""
import numpy as np

TOLERANCE = {          # class: (measure, tolerance)
    "exact": ("bitwise", 0),
    "contraction": ("ulp", 2),
    "transcendental": ("ulp", 4),
    "complex": ("magnitude ulp", 16),
    "accumulation": ("scaled ulp", 64),
    "batch-norm": ("scaled ulp", 1024),
    "complex-power": ("magnitude ulp", 4096),
    "unspecified": (None, None),
}
ORDER = ["exact", "contraction", "transcendental", "complex", "accumulation", "batch-norm", "complex-power",
         "unspecified"]     # loosest last

INT_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
MANTISSA = {"bf16": 8, "f16": 11, "f32": 24, "f64": 53, "f8e5m2": 3, "f8e4m3fn": 4, "f8e4m3": 4,
            "f8e4m3b11fnuz": 4, "f8e5m2fnuz": 3, "f8e4m3fnuz": 4, "f8e3m4": 5, "f4e2m1fn": 2,
            "f8e8m0fnu": 1, "c64": 24, "c128": 53}


def loosest(classes):
    return max((c for c in classes if c in TOLERANCE), key=ORDER.index, default="exact")


def measure_type(classes, elem_type):
    """The type whose ulp an accumulation's distance is measured in: the
    narrowest of the output's type and the types its cone accumulates in (a
    bf16 sum summed in another order is a bf16 ulp off, and an f32 output
    computed from it inherits that)."""
    types = [elem_type] + [c[8:] for c in classes if c.startswith("acctype:")]
    known = [t for t in types if t in MANTISSA]
    return min(known, key=MANTISSA.get) if known else elem_type


def _ordered(a, mant):
    """Float values as integers ordered like the values, in steps of one ulp
    of a type with mant mantissa bits (incl. the hidden one); -0 and +0 both
    0.  Values of narrow types come widened to f32 and are exact there."""
    wide = a.astype(np.float64)
    i = wide.view(np.int64)
    shift = 53 - mant
    i = np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)
    return i >> shift if shift else i


def ulp_of(x, mant):
    """The spacing of the type at |x| (x > 0 finite), in float64."""
    e = np.floor(np.log2(np.maximum(np.abs(x), np.finfo(np.float64).tiny)))
    return np.ldexp(1.0, (e - (mant - 1)).astype(np.int64))


def compare(hlo, xla, elem_type, cls):
    """(agrees, distance, detail) for one output on one rank: distance is the
    measured distance under the class's measure (0 when bitwise equal),
    detail says where and what differs."""
    if hlo.shape != xla.shape or hlo.dtype != xla.dtype:
        return False, None, "hlo-run %s %s, XLA %s %s" % (hlo.dtype, hlo.shape, xla.dtype, xla.shape)
    if hlo.size == 0:
        return True, 0, ""
    bad, dist = _measure(hlo, xla, elem_type, cls)
    return _verdict(hlo, xla, bad, dist)


def bad_elements(hlo, xla, elem_type, cls):
    """The mask of hlo's elements that differ from xla's beyond the class's
    tolerance (of shape hlo.shape; a complex element when either part does)."""
    if hlo.size == 0:
        return np.zeros(hlo.shape, bool)
    return _measure(hlo, xla, elem_type, cls)[0]


def _measure(hlo, xla, elem_type, cls):
    """(mask of differing elements, largest distance or None)."""
    kind = hlo.dtype.kind
    measure, tol = TOLERANCE[cls]
    if kind == "c":     # (re, im) pairs; atleast_1d: a 0-d array cannot be viewed as two
        a = np.atleast_1d(hlo).view(hlo.real.dtype).reshape(hlo.shape + (2,))
        b = np.atleast_1d(xla).view(xla.real.dtype).reshape(xla.shape + (2,))
        bad, dist = _magnitude(a, b, elem_type, tol) if measure == "magnitude ulp" else \
            _measure(a, b, elem_type, cls)
        return np.any(bad, axis=-1), dist
    if measure == "magnitude ulp":      # a real output of a complex op (abs): per element
        measure = "ulp"
    if kind != "f" or measure == "bitwise":
        if kind == "f":
            iv = INT_VIEW[hlo.dtype.itemsize]
            bad = ~((np.isnan(hlo) & np.isnan(xla)) | (hlo.view(iv) == xla.view(iv)))
        else:
            bad = hlo != xla
        return bad, 0 if not bad.any() else None
    mant = MANTISSA.get(elem_type, np.finfo(hlo.dtype).nmant + 1)
    hn, xn = np.isnan(hlo), np.isnan(xla)
    fin = np.isfinite(hlo) & np.isfinite(xla)
    special = (hn != xn) | (~fin & ~(hn & xn) & (hlo != xla))
    if measure == "ulp":
        dist = np.where(fin, np.abs(_ordered(hlo, mant) - _ordered(xla, mant)), 0)
    else:   # scaled ulp: |a - b| in ulps of the output's largest finite magnitude
        finite_h = np.abs(hlo[np.isfinite(hlo)].astype(np.float64))
        scale = ulp_of(np.max(finite_h) if finite_h.size else 1.0, mant)
        with np.errstate(all="ignore"):
            dist = np.where(fin, np.abs(hlo.astype(np.float64) - xla.astype(np.float64)) / scale, 0)
    worst = float(np.max(dist)) if dist.size else 0.0
    return special | (dist > tol), worst


def _magnitude(a, b, elem_type, tol):
    """Complex parts (last axis of 2) in ulps of each element's larger part
    (hlo-run's), the part type's ulp: (mask, largest distance)."""
    mant = MANTISSA.get(elem_type, np.finfo(a.dtype).nmant + 1)
    an, bn = np.isnan(a), np.isnan(b)
    fin = np.isfinite(a) & np.isfinite(b)
    special = (an != bn) | (~fin & ~(an & bn) & (a != b))
    with np.errstate(all="ignore"):
        big = np.max(np.where(np.isfinite(a), np.abs(a.astype(np.float64)), 0), axis=-1, keepdims=True)
        scale = ulp_of(np.where(big > 0, big, np.finfo(a.dtype).tiny), mant)
        dist = np.where(fin, np.abs(a.astype(np.float64) - b.astype(np.float64)) / scale, 0)
    worst = float(np.max(dist)) if dist.size else 0.0
    return special | (dist > tol), worst


def _verdict(hlo, xla, bad, dist):
    n = int(np.count_nonzero(bad))
    if n == 0:
        return True, dist, ""
    first = tuple(int(v) for v in np.argwhere(bad)[0])
    return False, dist, "%d of %d elements, first %s: hlo-run %r, XLA %r" % (
        n, bad.size, list(first), hlo[first].item(), xla[first].item())


def compare_ranks(hlo_dir, xla_dir, out, n_dev, elem_type, cls, flush=None):
    """Output out (out<i>) of hlo-run (files in hlo_dir) against XLA's (in
    xla_dir), rank by rank: ([(rank, detail)] where they differ, the largest
    distance).  flush: a function applied to both first (explain.flush)."""
    import os
    problems, worst = [], 0.0
    for r in range(n_dev):
        ph = os.path.join(hlo_dir, "%s.rank%d.npy" % (out, r))
        px = os.path.join(xla_dir, "%s.rank%d.npy" % (out, r))
        if not (os.path.exists(ph) and os.path.exists(px)):
            problems.append((r, "only %s wrote it" % ("hlo-run" if os.path.exists(ph) else "XLA")))
            continue
        a, b = np.load(ph), np.load(px)
        if a.ndim == 0 and a.dtype.kind == "c":
            # compare and explain.flush cannot view a 0-d complex as its parts
            a, b = a.reshape(1), b.reshape(1)
        if flush:
            a, b = flush(a), flush(b)
        ok, dist, detail = compare(a, b, elem_type, cls)
        if dist is not None:
            worst = max(worst, dist)
        if not ok:
            problems.append((r, detail))
    return problems, worst
