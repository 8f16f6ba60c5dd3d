#!/usr/bin/env python3
"""gen_ops.py: the op-level generator of issue 23 (items 4 and 5): random
modules of single ops (and, at 2, 4 or 8 devices, of collectives) run by
hlo-run and by XLA:CPU on the same inputs, every output compared under
tolerance.py's table and hlo_cone.py's class.

    gen_ops.py [--seed S] [--count N | --seconds T] [--ops REGEX]
               [--devices 1,2,4,8] [--per-module K] [--only-case K]
               [--out DIR] [--json FILE] [--build DIR] [--jobs J] [--keep]

Case k of seed S is one module of K op instances (ROOT a tuple of their
results) and its inputs, drawn from numpy Generators seeded by (S, k) and
(S, k, slot): the same on every run, whatever --count, --seconds or --jobs
(--only-case K reruns case K alone).  Case k runs at the device count
devices[k % len(devices)]; one device draws single-device ops
(gen_ops_table.OPS "one"), more draw collectives ("many").  --ops REGEX keeps
the generators whose name matches (e.g. 'gather|scatter', 'all-reduce').

A module that hlo-run or XLA does not run is split into its instances, each
run alone.  Every output leaf belongs to one instance; a leaf that differs is
  ftz               explained: with every f32/f64/bf16 subnormal input made a
                    zero of its sign, hlo-run agrees with XLA once subnormal
                    outputs are flushed too (XLA:CPU runs with FTZ/DAZ)
  wide-collectives  explained: hlo-run agrees with XLA once each bf16/f16
                    all-reduce / reduce-scatter sums in f32 and rounds once
  int-power         explained: XLA:CPU's integer power, which uses the low 6
                    bits of the exponent and reads an unsigned exponent with
                    its top bit set as negative, gives XLA's value at every
                    differing element, and exact wrapping power gives
                    hlo-run's
  complex-fma       explained: XLA's complex multiply with one product of
                    re = ac - bd (or im) fused (its subnormal parts flushed
                    or not), computed exactly, gives XLA's
  fma               explained: a map of x*y - x computed with the multiply
                    fused (one rounding) gives XLA's, and with two roundings
                    hlo-run's (in cancellation the two roundings part by more
                    than the contraction tolerance's 2 ulps)
  select-fold, conv-padding-products
                    explained: the instance computed another way by hlo-run
                    (a max/min collective's reducer as XLA:CPU folds it; the
                    convolution's padding as an explicit pad) agrees with XLA
  documented        a departure of XLA:CPU found here, checked by hand and
                    listed in docs/xla-differences.md, that the instance fits
                    (KNOWN_DEVIATIONS)
  unexplained       saved under --out DIR/<case>_o<slot>/ (module.hlo of that
                    instance alone when it still differs alone, in/, hlo/,
                    xla/, command.txt)
and an instance is "refused" when XLA refuses or crashes on it (XLA's message
kept) and "hlo-run refuses" when hlo-run exits non-zero on an instance XLA
runs (a finding).

Prints one line per disagreement and per refusal, then a summary; --json
writes every record.  Exit 1 when anything is unexplained or refused by
hlo-run only, 2 on bad usage, else 0.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import sys
import threading
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np                      # noqa: E402
import explain                          # noqa: E402
import hlo_cone                         # noqa: E402
import tolerance                        # noqa: E402
from gen_ops_table import OPS           # noqa: E402
from gen_ops_values import Inst, TYPES, assemble, flush_subnormals, to_file   # noqa: E402
import hlo_side                         # noqa: E402
from hlo_side import first_line, one_line   # noqa: E402
from xla_pool import XlaPool            # noqa: E402
from xla_run import set_xla_flags       # noqa: E402

KINDS = ["uniform", "uniform", "boundary", "boundary", "boundary", "bits"]


# ---------------------------------------------------------------------------
# Cases

class Case:
    def __init__(self, name, k, n_dev, R, P, kind, insts, errors):
        self.name, self.k, self.n_dev, self.R, self.P = name, k, n_dev, R, P
        self.kind, self.insts, self.errors = kind, insts, errors


def device_grids(n):
    """(replicas, partitions) splits of n devices."""
    return [(r, n // r) for r in range(1, n + 1) if n % r == 0]


def build_case(seed, k, devices, per_module, keys_one, keys_many):
    rng = np.random.default_rng([seed, k, 0])
    n = devices[k % len(devices)]
    keys = keys_one if n == 1 else keys_many
    kind = KINDS[int(rng.integers(len(KINDS)))]
    R, P = (1, 1)
    if n > 1:
        grids = device_grids(n)
        # mostly all replicas, then a mix (2x2, 2x4, 4x2, 1xN)
        R, P = grids[-1] if rng.random() < 0.45 else grids[int(rng.integers(len(grids)))]
    weights = np.array([OPS[key][1] for key in keys], dtype=np.float64)
    picks = [keys[int(i)] for i in rng.choice(len(keys), size=per_module, p=weights / weights.sum())] if keys else []
    insts, errors = [], []
    for slot, key in enumerate(picks):
        I = Inst(key, slot, np.random.default_rng([seed, k, slot + 1]), n, kind)
        I.grid = (R, P)
        I.channel = slot + 1
        try:
            OPS[key][0](I)
        except Exception as e:      # a generator bug: say so, keep going
            errors.append("generator %s failed: %r" % (key, e))
            continue
        if I.results:
            insts.append(I)
    return Case("s%d_c%d" % (seed, k), k, n, R, P, kind, insts, errors)


# ---------------------------------------------------------------------------
# Running one module on both sides

def write_inputs(params, d, flush=False):
    """The .npy inputs; flush: subnormals made zeros (False when none was)."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    changed = False
    for k, t, arrays, dom in params:
        for r, a in enumerate(arrays):
            if flush:
                b = flush_subnormals(a, t)
                changed = changed or b is not a
                a = b
            np.save(os.path.join(d, "param%d.rank%d.npy" % (k, r)), to_file(a, t), allow_pickle=False)
    return changed


class Runner:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.pool = XlaPool(sys.executable)      # the venv's python runs this script
        self.xla_lock = threading.Lock()
        self.parse_lock = threading.Lock()
        set_xla_flags(1)
        from jax._src.lib import xla_client as xc
        self.xc = xc

    def hlo_cmd(self, n, module, inputs, outputs, R, P):
        return hlo_side.hlo_run_cmd(self.build, n, module, outputs, R, P, inputs)

    def hlo_run(self, n, module, inputs, outputs, R, P):
        return hlo_side.hlo_run(self.build, n, module, outputs, R, P, inputs)

    def xla_run(self, module, inputs, outputs, R, P):
        shutil.rmtree(outputs, ignore_errors=True)
        with self.xla_lock:
            return self.pool.run(module, inputs, outputs, R, P, timeout=self.a.xla_timeout)

    def run_module(self, case, insts, d):
        """Both sides on the module of insts in directory d."""
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        grid = (case.R, case.P) if case.n_dev > 1 else (None, None)
        text, params = assemble("gen_%s" % case.name.replace("-", "_"), insts, *grid)
        module = os.path.join(d, "module.hlo")
        with open(module, "w") as f:
            f.write(text)
        write_inputs(params, os.path.join(d, "in"))
        hrc, herr = self.hlo_run(case.n_dev, module, os.path.join(d, "in"), os.path.join(d, "hlo"), case.R, case.P)
        xres = self.xla_run(module, os.path.join(d, "in"), os.path.join(d, "xla"), case.R, case.P)
        return dict(text=text, params=params, module=module, d=d, hrc=hrc, herr=herr, xres=xres, insts=insts,
                    grid=grid)

    def close(self):
        self.pool.close()


# ---------------------------------------------------------------------------
# XLA:CPU's departures no experiment here can reproduce, each found by this
# generator, checked by hand and listed in docs/xla-differences.md ("Found by
# the op generator") with a reproducer: a differing leaf of an instance that
# fits one is "documented", not explained.

def _types(I):
    return {p[2] for p in I.params}


def _floats(I):
    """Every float parameter as float64 values (complex as its parts), with
    the tiny (smallest normal) of its own type."""
    for p in I.params:
        t = p[2]
        if not (t.startswith("f") or t in ("bf16", "c64", "c128")):
            continue
        for a in p[3]:
            v = np.asarray(a)
            if v.dtype.kind == "c":
                v = np.atleast_1d(v).view(v.real.dtype)
            tiny = {"f16": 2.0 ** -14, "bf16": 2.0 ** -126, "f32": 2.0 ** -126, "c64": 2.0 ** -126}.get(t, 2.0 ** -1022)
            with np.errstate(invalid="ignore"):
                yield v.astype(np.float64), tiny


def _has_nan(I):
    return any(np.isnan(v).any() for v, _ in _floats(I))


def _has_nonfinite(I):
    return any((~np.isfinite(v)).any() for v, _ in _floats(I))


def _has_subnormal(I):
    return any(((v != 0) & (np.abs(v) < tiny)).any() for v, tiny in _floats(I))


KNOWN_DEVIATIONS = [    # (cause, predicate over the instance)
    ("xla-sub-byte-all-gather", lambda I: I.opcode.startswith("all-gather") and _types(I) & {"s4", "u4", "s2", "u2"}),
    ("xla-variadic-all-gather", lambda I: I.opcode.startswith("all-gather") and len(I.params) > 1
     and " dim 0 " not in I.desc),
    ("xla-batch-group-nan", lambda I: I.opcode == "convolution" and "batch_group_count" in I.desc and _has_nan(I)),
    ("xla-feature-group-nan", lambda I: I.opcode == "convolution" and "feature_group_count" in I.desc
     and _has_nan(I)),
    ("xla-f4-to-int", lambda I: I.opcode == "convert" and I.desc.startswith("f4e2m1fn->") and
     I.desc.split("->")[1].split()[0] in INT_TYPES),
    ("xla-s1-convert", lambda I: I.opcode == "convert" and "->s1->" in I.desc),
    ("xla-sub-byte-bit-count", lambda I: I.opcode in ("popcnt", "count-leading-zeros") and
     _types(I) & {"s4", "s2", "s1"}),
    ("xla-subnormal-cbrt", lambda I: I.opcode == "cbrt" and _has_subnormal(I)),
    ("xla-complex-log-subnormal", lambda I: I.opcode in ("log", "log-plus-one") and _types(I) & {"c64", "c128"}
     and _has_subnormal(I)),
    ("f64-through-f32", lambda I: I.opcode == "convert" and I.desc.split()[0].startswith("f64->")
     and I.desc.split()[0].split("->")[1] in NARROW_FLOATS and _has_outside_f32_normal(I)),
    ("nan-to-f4-sign", lambda I: I.opcode == "convert" and I.desc.split()[0].endswith("->f4e2m1fn") and _has_nan(I)),
    ("complex-nonfinite", lambda I: _types(I) & {"c64", "c128"} and _has_nonfinite(I)),
    ("select-and-scatter-ties", lambda I: I.opcode == "select-and-scatter" and _padded_window(I.desc)
     and (_has_ties(I) or _has_nan(I))),
    ("xla-subnormal-power", lambda I: I.opcode == "power" and I.params[0][2] in REAL_FLOATS
     and _param_has(I, 0, lambda v, tiny: (v != 0) & (np.abs(v) < tiny))),
    ("pow-nan-zero", lambda I: I.opcode == "power" and I.params[0][2] in REAL_FLOATS
     and _param_has(I, 0, lambda v, tiny: np.isnan(v)) and _param_has(I, 1, lambda v, tiny: v == 0)),
    ("xla-atan2-subnormal", lambda I: I.opcode == "atan2" and _has_subnormal(I)),
    ("xla-complex-small-imag", lambda I: I.opcode in ("sine", "cosine") and I.params[0][2] in ("c64", "c128")
     and _complex_part_has(I, lambda im: (im != 0) & (np.abs(im) < 2.0 ** -8))),
    ("complex-overflow", lambda I: I.opcode in ("divide", "power") and I.params[0][2] in ("c64", "c128")
     and _complex_part_has(I, lambda im: np.abs(im) > (2.0 ** 64 if I.params[0][2] == "c64" else 2.0 ** 512),
                           real_too=True)),
    ("xla-totalorder-snan", lambda I: I.opcode in ("sort", "compare") and "TOTALORDER" in I.desc and _has_snan(I)),
    ("xla-subnormal-log", lambda I: I.opcode == "log" and I.params[0][2] in REAL_FLOATS and _has_subnormal(I)),
    ("xla-log1p-f64", lambda I: I.opcode == "log-plus-one" and I.params[0][2] == "f64"
     and _param_has(I, 0, lambda v, tiny: (v > -0.4142) & (v < -0.358))),
    ("xla-reduce-precision-subnormal", lambda I: I.opcode == "reduce-precision" and I.params[0][2] in ("f16", "bf16")
     and _has_subnormal(I)),
    ("ftz-intermediate", lambda I: I.opcode in ("all-reduce", "reduce-scatter") and I.desc.startswith("multiply ")
     and _partial_products_subnormal(I)),
    ("batch-norm-cancellation", lambda I: I.opcode == "batch-norm-training"
     and (I.params[0][2] in ("f16", "bf16") or _constant_feature(I))),
    ("xla-complex-sqrt-signed-zero", lambda I: I.opcode in ("sqrt", "rsqrt") and I.params[0][2] in ("c64", "c128")
     and _complex_part_has(I, lambda im: np.signbit(im) & (np.abs(im) < (2.0 ** -126 if I.params[0][2] == "c64"
                                                                         else 2.0 ** -1022)))),
]

REAL_FLOATS = {"f16", "bf16", "f32", "f64"}


def _param_has(I, k, test):
    """Whether parameter k of I (a float) holds an element test(values as
    f64, the type's smallest normal) picks."""
    if k >= len(I.params):
        return False
    p = I.params[k]
    tiny = {"f16": 2.0 ** -14, "bf16": 2.0 ** -126, "f32": 2.0 ** -126}.get(p[2], 2.0 ** -1022)
    with np.errstate(invalid="ignore"):
        return any(bool(np.asarray(test(np.asarray(a).astype(np.float64), tiny)).any()) for a in p[3])


def _complex_part_has(I, test, real_too=False):
    """Whether a complex parameter of I has an imaginary part (or, with
    real_too, any part) that test picks."""
    for p in I.params:
        if p[2] not in ("c64", "c128"):
            continue
        for a in p[3]:
            a = np.asarray(a)
            parts = [a.imag, a.real] if real_too else [a.imag]
            with np.errstate(invalid="ignore"):
                if any(bool(np.asarray(test(v.astype(np.float64))).any()) for v in parts):
                    return True
    return False


def _partial_products_subnormal(I):
    """Whether the products of a parameter's per-rank arrays, folded in rank
    order, pass through the subnormal range of f32 / f64 (XLA:CPU flushes
    such an intermediate to zero, hlo-run keeps it)."""
    for p in I.params:
        if p[2] not in ("f32", "f64"):
            continue
        tiny = 2.0 ** -126 if p[2] == "f32" else 2.0 ** -1022
        acc = None
        with np.errstate(all="ignore"):
            for a in p[3]:
                a = np.asarray(a).astype(np.float64)
                acc = a if acc is None else acc * a
                if ((acc != 0) & (np.abs(acc) < tiny)).any():
                    return True
    return False


def _constant_feature(I):
    """Whether batch-norm-training's operand has a feature whose elements
    are all equal (one element per feature among them): its variance is 0,
    which XLA:CPU's E[x^2] - E[x]^2 can make negative."""
    m = re.search(r"feature_index=(\d+)", I.desc) or re.search(r"\bfeature (\d+)", I.desc)
    if not m or not I.params:
        return False
    f = int(m.group(1))
    for a in I.params[0][3]:
        a = np.asarray(a).astype(np.float64)
        if a.ndim <= f:
            continue
        per = np.moveaxis(a, f, 0).reshape(a.shape[f], -1)
        if per.shape[1] and (per == per[:, :1]).all(axis=1).any():
            return True
    return False


SNAN_BITS = {"bf16": (np.uint16, 0x7F80, 0x007F, 0x0040), "f16": (np.uint16, 0x7C00, 0x03FF, 0x0200)}


def _has_snan(I):
    """Whether a bf16 or f16 parameter holds a signalling NaN (exponent all
    ones, a nonzero fraction with its top bit clear)."""
    for p in I.params:
        if p[2] not in SNAN_BITS:
            continue
        dt, exp, frac, quiet = SNAN_BITS[p[2]]
        for a in p[3]:
            b = np.asarray(a).view(dt).astype(np.int64)
            if (((b & exp) == exp) & ((b & frac) != 0) & ((b & quiet) == 0)).any():
                return True
    return False


def _padded_window(desc):
    m = re.search(r"pad=([-\d_x]+)", desc)
    return bool(m) and any(int(v) != 0 for v in re.findall(r"-?\d+", m.group(1)))


def _has_ties(I):
    """The operand (the first parameter) holds some value twice."""
    a = np.asarray(I.params[0][3][0]).astype(np.float64).ravel()
    a = a[~np.isnan(a)]
    return np.unique(a).size < a.size
NARROW_FLOATS = {"bf16", "f16", "f8e4m3fn", "f8e5m2", "f8e4m3", "f8e3m4", "f8e4m3b11fnuz", "f8e4m3fnuz",
                 "f8e5m2fnuz", "f8e8m0fnu", "f4e2m1fn"}


def _has_outside_f32_normal(I):
    """The operand (an f64 parameter) holds a nonzero value below f32's
    smallest normal (XLA:CPU flushes f32 subnormals) or past its largest
    finite value."""
    a = np.abs(np.asarray(I.params[0][3][0]).astype(np.float64).ravel())
    a = a[np.isfinite(a) & (a != 0)]
    return bool(((a < 2.0 ** -126) | (a > 3.4028234663852886e38)).any())


INT_TYPES = {"s1", "s2", "s4", "s8", "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16", "u32", "u64"}


def known_deviation(I):
    """The cause of KNOWN_DEVIATIONS that fits instance I, or None."""
    for cause, fits in KNOWN_DEVIATIONS:
        if fits(I):
            return cause
    return None


# ---------------------------------------------------------------------------
# Comparing and explaining

def load(d, i, r):
    p = os.path.join(d, "out%d.rank%d.npy" % (i, r))
    return np.load(p) if os.path.exists(p) else None


def compare_leaf(hdir, xdir, i, n_dev, cls, etype, flush=False):
    """[(rank, detail)] of the ranks where leaf i differs, and the largest distance."""
    return tolerance.compare_ranks(hdir, xdir, "out%d" % i, n_dev, etype, cls,
                                   (lambda a: explain.flush(a, f16=True)) if flush else None)


def wrap_int(v, t):
    bits = TYPES[t].bits
    v &= (1 << bits) - 1
    if t[0] == "s" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def xla_int_power(b, e, t):
    """XLA:CPU's integer power (ElementalIrEmitter::EmitIntegerPow as jaxlib
    0.10.2 runs it, /tmp/semantics/report.md 9): the exponent read as signed;
    negative: 1 for base 1, +-1 by parity for base -1, else 0; otherwise
    only its low 6 bits are used."""
    bits = TYPES[t].bits
    es = e - (1 << bits) if e >= 1 << (bits - 1) else e
    if es < 0:
        if b == 1:
            return 1
        if wrap_int(b, t) == -1 or (t[0] == "u" and b == (1 << bits) - 1):
            return wrap_int(-1 if es % 2 else 1, t)
        return 0
    return wrap_int(pow(b, es & 63, 1 << bits), t)


def explain_int_power(inst, leaf_i, run, n_dev):
    """True when every differing element of an integer power instance is
    XLA's 6-bit exponent and hlo-run's exact wrapping power."""
    if inst.opcode != "power" or len(inst.params) != 2:
        return False
    t = inst.params[0][2]
    if TYPES[t].kind not in "su":
        return False
    for r in range(n_dev):
        h, x = load(os.path.join(run["d"], "hlo"), leaf_i, r), load(os.path.join(run["d"], "xla"), leaf_i, r)
        base, exp = inst.params[0][3][r], inst.params[1][3][r]
        for idx in np.argwhere(h != x):
            idx = tuple(idx)
            b, e = int(base[idx]), int(exp[idx])
            eu = e & ((1 << TYPES[t].bits) - 1)
            if int(x[idx]) != xla_int_power(b, eu, t):
                return False
            exact = wrap_int(pow(b, e, 1 << TYPES[t].bits), t) if e >= 0 else None
            if exact is not None and int(h[idx]) != exact:
                return False
            if e >= 0 and eu < 64 and not (t[0] == "u" and eu >= 1 << (TYPES[t].bits - 1)):
                return False        # a small exponent: not this cause
    return True


def _round_to(x, dtype):
    """A Fraction rounded once to dtype (f32 / f64), nearest even."""
    if dtype == np.float64:
        return float(x)
    # through f64 is exact only when f64 holds it: take the two f32 neighbours
    f = np.float32(float(x))
    cands = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1))


def explain_complex_multiply(inst, leaf_i, run, n_dev):
    """True when, at every differing element of a complex multiply, each of
    XLA's parts is one of the results of computing ac - bd (ad + bc) with one
    of the products fused into the subtraction (one FMA, XLA:CPU's
    contraction, /tmp/semantics/report.md 5) or without, and hlo-run's is the
    unfused one."""
    if inst.opcode != "multiply" or len(inst.params) != 2 or inst.params[0][2] not in ("c64", "c128"):
        return False
    part = np.float32 if inst.params[0][2] == "c64" else np.float64
    for r in range(n_dev):
        h, x = load(os.path.join(run["d"], "hlo"), leaf_i, r), load(os.path.join(run["d"], "xla"), leaf_i, r)
        A, B = inst.params[0][3][r], inst.params[1][3][r]
        bad = ~((h == x) | (np.isnan(h.real) & np.isnan(x.real)) | (np.isnan(h.imag) & np.isnan(x.imag)))
        for idx in np.argwhere(np.atleast_1d(bad)).reshape(-1, max(h.ndim, 1)):
            idx = tuple(idx) if h.ndim else ()
            a, b, c, d = A[idx].real, A[idx].imag, B[idx].real, B[idx].imag
            if not all(np.isfinite([a, b, c, d])):
                return False
            tiny = 2.0 ** -126 if part == np.float32 else 2.0 ** -1022
            exact = [Fraction(float(v)) for v in (a, b, c, d)]
            # XLA:CPU also flushes subnormal inputs (ftz): its value may be
            # the fused or plain one of the flushed parts
            flushed = [Fraction(0) if abs(float(v)) < tiny else f for v, f in zip((a, b, c, d), exact)]
            for k, hv, xv in ((0, h[idx].real, x[idx].real), (1, h[idx].imag, x[idx].imag)):
                if hv == xv:
                    continue        # this part agrees (an overflow to inf on both sides among them)
                xla_values, plain = set(), None
                for n, F in enumerate((exact, flushed)):
                    p, q, sign = (F[0] * F[2], F[1] * F[3], -1) if k == 0 else (F[0] * F[3], F[1] * F[2], 1)
                    rp, rq = Fraction(float(_round_to(p, part))), Fraction(float(_round_to(q, part)))
                    unfused = _round_to(rp + sign * rq, part)
                    plain = unfused if n == 0 else plain
                    xla_values |= {unfused, _round_to(p + sign * rq, part), _round_to(rp + sign * q, part)}
                if hv != plain or xv not in xla_values:
                    return False
    return True


def explain_map_fma(inst, leaf_i, run, n_dev):
    """True when inst is a map of multiply then subtract (x*y - x) on f32 or
    f64 and, at every differing element, XLA's value is x*y - x rounded once
    (the multiply fused into the subtraction, XLA:CPU's contraction) and
    hlo-run's is the product rounded, then the difference."""
    t = inst.params[0][2] if inst.params else None
    if inst.opcode != "map" or "multiply then subtract" not in inst.desc or t not in ("f32", "f64"):
        return False
    part = np.float32 if t == "f32" else np.float64
    for r in range(n_dev):
        h, x = load(os.path.join(run["d"], "hlo"), leaf_i, r), load(os.path.join(run["d"], "xla"), leaf_i, r)
        A, B = np.asarray(inst.params[0][3][r]), np.asarray(inst.params[1][3][r])
        bad = ~((h == x) | (np.isnan(h) & np.isnan(x)))
        for idx in np.argwhere(np.atleast_1d(bad)).reshape(-1, max(h.ndim, 1)):
            idx = tuple(idx) if h.ndim else ()
            a, b = A[idx], B[idx]
            if not (np.isfinite(a) and np.isfinite(b)):
                return False
            p = Fraction(float(a)) * Fraction(float(b))
            plain = _round_to(Fraction(float(_round_to(p, part))) - Fraction(float(a)), part)
            if h[idx] != plain or x[idx] != _round_to(p - Fraction(float(a)), part):
                return False
    return True


class Stats:
    def __init__(self):
        self.modules = 0
        self.instances = collections.Counter()     # opcode -> instances
        self.kinds = collections.Counter()         # input kind -> parameters
        self.leaves = collections.Counter()        # status -> leaves
        self.diff = collections.Counter()          # (opcode, cause) -> instances
        self.records = []
        self.lines = []
        self.worst = {}
        self.errors = []

    def merge(self, o):
        self.modules += o.modules
        for a in ("instances", "kinds", "leaves", "diff"):
            getattr(self, a).update(getattr(o, a))
        self.records += o.records
        self.lines += o.lines
        self.errors += o.errors
        for k, v in o.worst.items():
            if k not in self.worst or v[0] > self.worst[k][0]:
                self.worst[k] = v


class Checker:
    def __init__(self, a):
        self.a = a
        self.run = Runner(a)
        self.work = os.path.abspath(a.work)
        self.out = os.path.abspath(a.out)

    def check_case(self, case):
        st = Stats()
        st.modules = 1
        st.errors += ["%s: %s" % (case.name, e) for e in case.errors]
        for I in case.insts:
            st.instances[I.opcode] += 1
            for p in I.params:
                st.kinds[p[4]] += 1
        d = os.path.join(self.work, case.name)
        run = self.run.run_module(case, case.insts, d)
        if run["hrc"] == 0 and run["xres"].status == 0:
            self.compare(case, case.insts, run, st)
        elif len(case.insts) > 1:
            # one instance (or more) the other side does not run: each alone
            for I in case.insts:
                sub = self.run.run_module(case, [I], os.path.join(d, "o%d" % I.slot))
                self.alone(case, I, sub, st)
        else:
            self.alone(case, case.insts[0], run, st)
        if not self.a.keep:
            shutil.rmtree(d, ignore_errors=True)
        return st

    def alone(self, case, I, run, st):
        if run["hrc"] == 0 and run["xres"].status == 0:
            self.compare(case, [I], run, st)
            return
        x = run["xres"]
        if run["hrc"] != 0 and x.status == 0:
            msg = "hlo-run exit %d: %s" % (run["hrc"], first_line(run["herr"]))
            self.record(st, "HLO-RUN REFUSES", case, I, None, msg, cause="hlo-run refuses")
            self.save(case, [I], run, "hlo-run refuses: " + msg)
        else:
            msg = ("XLA exit %d: %s" % (x.status, one_line(x.message, 400))) if x.status else "XLA ran it"
            if run["hrc"] != 0:
                msg += "; hlo-run exit %d: %s" % (run["hrc"], first_line(run["herr"]))
            self.record(st, "refused", case, I, None, msg, cause="refused")

    def record(self, st, status, case, I, leaf, detail, cause, **extra):
        st.records.append(dict(status=status, case=case.name, k=case.k, slot=I.slot, opcode=I.opcode, desc=I.desc,
                               leaf=leaf, cause=cause, detail=detail, devices=case.n_dev, **extra))
        st.diff[(I.opcode, cause)] += 1
        st.lines.append("%-15s %s o%d %s%s [%s]: %s" % (status, case.name, I.slot, I.opcode,
                                                      "" if leaf is None else " leaf %d" % leaf, I.desc, detail))

    def compare(self, case, insts, run, st):
        with self.run.parse_lock:
            try:
                classes = hlo_cone.output_classes(self.run.xc, run["text"])
                parsed = hlo_cone.Module(self.run.xc, run["text"])
            except Exception as e:
                st.errors.append("%s: outputs not classified: %r" % (case.name, e))
                return
        hdir, xdir = os.path.join(run["d"], "hlo"), os.path.join(run["d"], "xla")
        leaf, todo = 0, []
        for I in insts:
            for j in range(I.leaves()):
                cls_set, etype = classes[leaf]
                cls = tolerance.loosest(cls_set)
                if cls == "accumulation":
                    etype = tolerance.measure_type(cls_set, etype)
                if cls == "unspecified":
                    st.leaves["not compared"] += 1
                else:
                    problems, worst = compare_leaf(hdir, xdir, leaf, case.n_dev, cls, etype)
                    if not problems and tolerance.TOLERANCE[cls][0] not in ("bitwise", None):
                        if worst > self.run_worst(st, cls):
                            st.worst[cls] = (worst, "%s o%d %s" % (case.name, I.slot, I.opcode))
                    if problems:
                        todo.append((I, leaf, cls, etype, problems))
                    else:
                        st.leaves["agree"] += 1
                leaf += 1
        if not todo:
            return
        causes = self.explain(case, run, parsed, todo)
        for I, leaf, cls, etype, problems in todo:
            detail = "%s %s: %s" % (etype, cls, "; ".join("rank %d: %s" % p for p in problems[:2]))
            cause = causes.get(leaf)
            known = None if cause else known_deviation(I)
            if cause:
                st.leaves["explained"] += 1
                self.record(st, "explained", case, I, leaf, detail, cause=cause)
            elif known:
                st.leaves["documented"] += 1
                self.record(st, "documented", case, I, leaf, detail, cause=known)
            else:
                st.leaves["unexplained"] += 1
                self.record(st, "UNEXPLAINED", case, I, leaf, detail, cause="unexplained")
                self.save_unexplained(case, I, run, detail)

    @staticmethod
    def run_worst(st, cls):
        return st.worst.get(cls, (-1.0,))[0]

    def explain(self, case, run, parsed, todo):
        """{leaf: cause} for the differing leaves an explainer accounts for."""
        found = {}
        d = run["d"]
        # ftz: hlo-run again on flushed inputs (when an input was
        # subnormal), its outputs and XLA's compared with subnormals flushed
        hds = [os.path.join(d, "hlo")]
        if write_inputs(run["params"], os.path.join(d, "in.ftz"), flush=True):
            rc, _ = self.run.hlo_run(case.n_dev, run["module"], os.path.join(d, "in.ftz"), os.path.join(d, "hlo.ftz"),
                                     case.R, case.P)
            if rc == 0:
                hds.append(os.path.join(d, "hlo.ftz"))
        for I, leaf, cls, etype, _ in todo:
            if explain.ftz_explains(hds, os.path.join(d, "xla"), leaf, case.n_dev, cls, etype):
                found[leaf] = "ftz"
        left = [t for t in todo if t[1] not in found]
        if left and case.n_dev > 1:
            wide = explain.widen_collectives(run["text"], explain.operand_shapes(parsed))
            if wide:
                path = os.path.join(d, "module.wide.hlo")
                with open(path, "w") as f:
                    f.write(wide)
                hd = os.path.join(d, "hlo.wide")
                rc, _ = self.run.hlo_run(case.n_dev, path, os.path.join(d, "in"), hd, case.R, case.P)
                for I, leaf, cls, etype, _ in left:
                    if rc == 0 and not compare_leaf(hd, os.path.join(d, "xla"), leaf, case.n_dev, cls, etype)[0]:
                        found[leaf] = "wide-collectives"
        for I, leaf, cls, etype, _ in todo:
            if leaf not in found and explain_int_power(I, leaf, run, case.n_dev):
                found[leaf] = "int-power"
            if leaf not in found and explain_complex_multiply(I, leaf, run, case.n_dev):
                found[leaf] = "complex-fma"
            if leaf not in found and explain_map_fma(I, leaf, run, case.n_dev):
                found[leaf] = "fma"
        # the instance's own variants: the same results computed another way
        # by one side; the cause when that side then agrees with the other
        by_inst = collections.OrderedDict()
        for I, leaf, cls, etype, _ in todo:
            if leaf not in found and I.variants:
                by_inst.setdefault(I.slot, (I, []))[1].append((leaf, cls, etype))
        insts = run["insts"]
        for slot, (I, leaves) in by_inst.items():
            for v, (cause, side, make) in enumerate(I.variants):
                leaves = [x for x in leaves if x[0] not in found]
                if not leaves:
                    break
                vd = os.path.join(d, "variant%d.%d" % (slot, v))
                os.makedirs(vd, exist_ok=True)
                text, _ = assemble("gen_%s_variant" % case.name, [make() if i is I else i for i in insts],
                                   *run["grid"])
                path = os.path.join(vd, "module.hlo")
                with open(path, "w") as f:
                    f.write(text)
                if side == "hlo":
                    rc, _ = self.run.hlo_run(case.n_dev, path, os.path.join(d, "in"), os.path.join(vd, "out"),
                                             case.R, case.P)
                    pair = (os.path.join(vd, "out"), os.path.join(d, "xla"))
                else:
                    rc = self.run.xla_run(path, os.path.join(d, "in"), os.path.join(vd, "out"), case.R, case.P).status
                    pair = (os.path.join(d, "hlo"), os.path.join(vd, "out"))
                for leaf, cls, etype in leaves:
                    if rc == 0 and not compare_leaf(pair[0], pair[1], leaf, case.n_dev, cls, etype)[0]:
                        found[leaf] = cause
                # both at once: the variant on the flushed inputs, subnormal outputs flushed
                left = [x for x in leaves if x[0] not in found]
                if side == "hlo" and left and os.path.isdir(os.path.join(d, "hlo.ftz")):
                    rc, _ = self.run.hlo_run(case.n_dev, path, os.path.join(d, "in.ftz"),
                                             os.path.join(vd, "out.ftz"), case.R, case.P)
                    for leaf, cls, etype in left:
                        if rc == 0 and not compare_leaf(os.path.join(vd, "out.ftz"), os.path.join(d, "xla"), leaf,
                                                        case.n_dev, cls, etype, flush=True)[0]:
                            found[leaf] = cause + " + ftz"
        return found

    # -- saving reproducers
    def save_unexplained(self, case, I, run, detail):
        """The instance alone when it still differs alone, else the module."""
        key = "%s_o%d" % (case.name, I.slot)
        if getattr(self, "_saved", None) is None:
            self._saved = set()
        if key in self._saved:
            return
        self._saved.add(key)
        alone = os.path.join(self.work, key + ".alone")
        sub = self.run.run_module(case, [I], alone)
        still = False
        if sub["hrc"] == 0 and sub["xres"].status == 0:
            try:
                with self.run.parse_lock:
                    classes = hlo_cone.output_classes(self.run.xc, sub["text"])
                for j, (cls_set, etype) in enumerate(classes):
                    cls = tolerance.loosest(cls_set)
                    if cls == "accumulation":
                        etype = tolerance.measure_type(cls_set, etype)
                    if cls != "unspecified" and compare_leaf(os.path.join(alone, "hlo"), os.path.join(alone, "xla"),
                                                             j, case.n_dev, cls, etype)[0]:
                        still = True
            except Exception:
                still = False
        self.save(case, [I] if still else case.insts, sub if still else run, detail, key=key,
                  note=None if still else "the instance alone agrees: this is the whole module")
        shutil.rmtree(alone, ignore_errors=True)

    def save(self, case, insts, run, detail, key=None, note=None):
        key = key or "%s_o%d" % (case.name, insts[0].slot)
        dst = os.path.join(self.out, key)
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
        shutil.copy(run["module"], os.path.join(dst, "module.hlo"))
        for sub in ("in", "hlo", "xla"):
            if os.path.isdir(os.path.join(run["d"], sub)):
                shutil.copytree(os.path.join(run["d"], sub), os.path.join(dst, sub))
        rel = os.path.relpath(dst, ROOT)
        hcmd = self.run.hlo_cmd(case.n_dev, rel + "/module.hlo", rel + "/in", rel + "/hlo", case.R, case.P)
        hcmd[hcmd.index(os.path.join(self.run.build, "hlo-run"))] = os.path.relpath(
            os.path.join(self.run.build, "hlo-run"), ROOT)
        with open(os.path.join(dst, "command.txt"), "w") as f:
            f.write("# %s: %s\n" % (key, detail))
            if note:
                f.write("# %s\n" % note)
            f.write("# from the repository root; regenerate with: build/xla-venv/bin/python scripts/xla/gen_ops.py "
                    "--seed %d --only-case %d --devices %s --per-module %d%s\n"
                    % (self.a.seed, case.k, self.a.devices, self.a.per_module,
                       (" --ops '%s'" % self.a.ops) if self.a.ops else ""))
            f.write("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HLOCHECK_THREADS=1 %s\n" % " ".join(hcmd))
            f.write("build/xla-venv/bin/python scripts/xla/xla_run.py %s/module.hlo --inputs %s/in --outputs %s/xla "
                    "--replicas %d --partitions %d\n" % (rel, rel, rel, case.R, case.P))
            f.write("# then compare %s/hlo/out<i>.rank<r>.npy with %s/xla/out<i>.rank<r>.npy\n" % (rel, rel))

    def close(self):
        self.run.close()


# ---------------------------------------------------------------------------

def summary(st, seconds, out):
    print("gen-ops: %d modules, %d op instances, %.0f s" % (st.modules, sum(st.instances.values()), seconds))
    print("  instances per opcode: " + ", ".join("%s %d" % kv for kv in sorted(st.instances.items())))
    print("  parameters by input kind: " + ", ".join("%s %d" % kv for kv in sorted(st.kinds.items())))
    print("  output leaves: " + ", ".join("%s %d" % kv for kv in sorted(st.leaves.items())))
    for cls in tolerance.ORDER:
        if cls in st.worst:
            m, tol = tolerance.TOLERANCE[cls]
            print("  largest %s distance: %.3g %s (tolerance %s) at %s" % (cls, st.worst[cls][0], m, tol,
                                                                           st.worst[cls][1]))
    by_cause = collections.Counter()
    for (op, cause), n in st.diff.items():
        by_cause[cause] += n
    print("  disagreements by cause (leaves; refusals per instance): " +
          (", ".join("%s %d" % kv for kv in sorted(by_cause.items())) or "none"))
    for (op, cause), n in sorted(st.diff.items()):
        print("    %-22s %-18s %d" % (op, cause, n))
    for e in st.errors:
        print("  error: " + e)
    bad = by_cause["unexplained"] + by_cause["hlo-run refuses"]
    if bad:
        print("  reproducers under %s" % out)
    lv = st.leaves
    print("gen-ops: %d agree, %d explained, %d documented, %d unexplained, %d refused by XLA, %d refused by hlo-run"
          % (lv["agree"], lv["explained"], lv["documented"], lv["unexplained"], by_cause["refused"],
             by_cause["hlo-run refuses"]))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--count", type=int, help="cases to run (default 20 without --seconds)")
    g.add_argument("--seconds", type=float, help="run cases until this many seconds have passed")
    ap.add_argument("--only-case", type=int, metavar="K", help="run case K alone")
    ap.add_argument("--ops", help="only generators whose name matches this regex (see gen_ops_table.OPS)")
    ap.add_argument("--devices", default="1", help="device counts, e.g. 1,2,4,8 (case k runs at devices[k %% n])")
    ap.add_argument("--per-module", type=int, default=8, metavar="K", help="op instances per module (default 8)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build/gen-ops"), help="where reproducers go")
    ap.add_argument("--json")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=None, help="scratch directory (default OUT/work)")
    ap.add_argument("--keep", action="store_true", help="keep every case's scratch files")
    ap.add_argument("--jobs", type=int, default=2, help="cases in flight (hlo-run of one overlaps XLA of another)")
    ap.add_argument("--xla-timeout", type=int, default=120)
    ap.add_argument("--list", action="store_true", help="print the generators and exit")
    a = ap.parse_args()
    if a.list:
        for k, (fn, w, where) in OPS.items():
            print("%-22s weight %-4g %s" % (k, w, where))
        return 0
    try:
        devices = [int(x) for x in a.devices.split(",") if x.strip()]
        rx = re.compile(a.ops) if a.ops else None
    except (ValueError, re.error) as e:
        sys.stderr.write("gen-ops: bad --devices or --ops: %s\n" % e)
        return 2
    if not devices or any(n < 1 or n > 64 for n in devices) or a.per_module < 1:
        sys.stderr.write("gen-ops: --devices takes counts 1..64, --per-module a positive count\n")
        return 2
    keys_one = [k for k, v in OPS.items() if v[2] == "one" and (not rx or rx.search(k))]
    keys_many = [k for k, v in OPS.items() if v[2] == "many" and (not rx or rx.search(k))]
    want = set(devices)
    if (1 in want and not keys_one) or (want - {1} and not keys_many):
        sys.stderr.write("gen-ops: --ops %r leaves no generator for %s\n"
                         % (a.ops, "one device" if 1 in want and not keys_one else "several devices"))
        return 2
    if not os.access(os.path.join(a.build, "hlo-run"), os.X_OK):
        sys.stderr.write("gen-ops: no hlo-run in %s: build first (make)\n" % a.build)
        return 2
    a.work = a.work or os.path.join(a.out, "work")
    os.makedirs(a.work, exist_ok=True)
    if a.only_case is not None:
        ks = iter([a.only_case])
    elif a.seconds is not None:
        ks = iter(range(10 ** 9))
    else:
        ks = iter(range(a.count if a.count is not None else 20))
    checker = Checker(a)
    total = Stats()
    t0 = time.perf_counter()
    deadline = t0 + a.seconds if a.seconds is not None else None
    lock = threading.Lock()

    def next_case():
        with lock:
            if deadline is not None and time.perf_counter() > deadline:
                return None
            k = next(ks, None)
        return None if k is None else build_case(a.seed, k, devices, a.per_module, keys_one, keys_many)

    def worker():
        out = []
        while True:
            case = next_case()
            if case is None:
                return out
            try:
                st = checker.check_case(case)
            except Exception as e:      # a bug here: say so, keep going
                st = Stats()
                st.errors.append("%s: gen_ops failed: %r" % (case.name, e))
            with lock:
                for ln in st.lines:
                    print(ln, flush=True)
            out.append(st)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = [ex.submit(worker) for _ in range(max(1, a.jobs))]
            for f in futs:
                for st in f.result():
                    total.merge(st)
    finally:
        checker.close()
    bad = summary(total, time.perf_counter() - t0, a.out)
    if a.json:
        tmp = a.json + ".tmp.%d" % os.getpid()
        with open(tmp, "w") as f:
            json.dump({"seed": a.seed, "devices": devices, "modules": total.modules,
                       "instances": dict(total.instances), "input_kinds": dict(total.kinds),
                       "leaves": dict(total.leaves),
                       "disagreements": [dict(opcode=o, cause=c, count=n) for (o, c), n in total.diff.items()],
                       "worst": {k: {"distance": v[0], "at": v[1]} for k, v in total.worst.items()},
                       "records": total.records, "errors": total.errors}, f, indent=1, default=str)
        os.replace(tmp, a.json)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
