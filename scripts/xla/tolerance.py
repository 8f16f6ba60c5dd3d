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
    "accumulation": ("scaled ulp", 64),
    "unspecified": (None, None),
}
ORDER = ["exact", "contraction", "transcendental", "accumulation", "unspecified"]   # loosest last

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
    kind = hlo.dtype.kind
    if kind == "c":     # (re, im) pairs; atleast_1d: a 0-d array cannot be viewed as two
        a = np.atleast_1d(hlo).view(hlo.real.dtype).reshape(hlo.shape + (2,))
        b = np.atleast_1d(xla).view(xla.real.dtype).reshape(xla.shape + (2,))
        return compare(a, b, elem_type, cls)
    measure, tol = TOLERANCE[cls]
    if kind != "f" or measure == "bitwise":
        if kind == "f":
            iv = INT_VIEW[hlo.dtype.itemsize]
            bad = ~((np.isnan(hlo) & np.isnan(xla)) | (hlo.view(iv) == xla.view(iv)))
        else:
            bad = hlo != xla
        return _verdict(hlo, xla, bad, 0 if not bad.any() else None)
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
    bad = special | (dist > tol)
    return _verdict(hlo, xla, bad, worst)


def _verdict(hlo, xla, bad, dist):
    n = int(np.count_nonzero(bad))
    if n == 0:
        return True, dist, ""
    first = tuple(int(v) for v in np.argwhere(bad)[0])
    return False, dist, "%d of %d elements, first %s: hlo-run %r, XLA %r" % (
        n, bad.size, list(first), hlo[first].item(), xla[first].item())
