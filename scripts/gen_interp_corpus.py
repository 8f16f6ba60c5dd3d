#!/usr/bin/python3
"""gen_interp_corpus.py: writes corpus/interp/, the interpreter's op corpus.

Run offline with Debian's python3 and numpy (no ml_dtypes needed):

    /usr/bin/python3 scripts/gen_interp_corpus.py

Each case is a directory corpus/interp/<case>/ holding
  module.hlo                  the module (its entry computation is run)
  param<p>.rank0.npy          the inputs, in the dtype hlo-run reads
                              (bf16 as f32 holding bf16 values, pred as bool)
  expected/out<i>.rank0.npy   the expected value of leaf i of the root
                              (bf16 written as f32, as hlo-run writes it)
  compare                     how scripts/run_interp_corpus.sh compares:
                              "exact" (bitwise, any NaN equals any NaN),
                              "ulp N" (in ulps of the output type),
                              "rtol X" (|got - want| <= X |want|) or
                              "maxrel X" (|got - want| <= X max|want|)

Every expected value is computed here, from the semantics of
../shared/spec/hlo-reference.md section 5 (and XLA's evaluator where the
reference is silent), with numpy, Python integers and fractions.  Nothing is
ever computed by running our interpreter.  Conventions:
  * f16 and bf16 ops compute in f32 and round (nearest even) to the type once
    per op; bf16 rounding is done here on the f32 bits.
  * Integer arithmetic is done on Python ints and wrapped to the type.
  * Reductions fold sequentially (acc = init, then acc = f(acc, x) in
    row-major order), rounding to the element type after every step, so they
    compare exactly.
  * Transcendentals are evaluated in f64 (numpy / Python's math, i.e. glibc)
    and rounded to the type; they compare within a few ulps.
  * Dots use exact rational sums rounded once (data chosen so that any
    summation order gives the same bits, except the one rtol case).
Inputs are drawn from numpy Generators seeded by the case name (crc32), so
the output is the same on every run.  The corpus directory is rewritten
from scratch.
"""
import math
import os
import shutil
import sys
import zlib
from fractions import Fraction

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus", "interp")

# --------------------------------------------------------------------------
# Element types

NP = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
}
BITS = {"pred": 8, "s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32,
        "u64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64}
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
# (precision in bits incl. the implicit one, min normal exponent, max exponent)
FMT = {"f16": (11, -14, 15), "bf16": (8, -126, 127), "f32": (24, -126, 127),
       "f64": (53, -1022, 1023)}

NAN = float("nan")
INF = float("inf")


def signed(t):
    return t.startswith("s")


def int_range(t):
    b = BITS[t]
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if signed(t) else (0, (1 << b) - 1)


def wrap(v, t):
    """Python int v reduced modulo 2^bits into t's range."""
    b = BITS[t]
    v &= (1 << b) - 1
    if signed(t) and v >= 1 << (b - 1):
        v -= 1 << b
    return v


def bf16(x):
    """f32 array -> f32 array rounded to bf16 (nearest even, on the bits).
    NaN stays NaN (quietened, sign kept); overflow goes to inf."""
    x = np.asarray(x, dtype=np.float32)
    shape = x.shape
    x = x.reshape(-1)
    b = x.view(np.uint32).astype(np.uint64)
    u = np.uint64
    r = ((b + u(0x7FFF) + ((b >> u(16)) & u(1))) >> u(16)) << u(16)
    r = np.where(np.isnan(x), (b | u(0x400000)) & u(0xFFFF0000), r)
    return (r & u(0xFFFFFFFF)).astype(np.uint32).view(np.float32).reshape(shape)


def to_type(t, x):
    """Round an f32 (or f64 for f32/f64) array to element type t's storage."""
    if t == "bf16":
        return bf16(np.asarray(x, np.float32))
    return np.asarray(x).astype(NP[t])


def arr(t, vals, shape=None):
    """An array of element type t from Python values (ints wrap; floats round)."""
    if t == "pred":
        a = np.array(vals, dtype=np.bool_)
    elif t in INTS:
        flat = np.array(vals, dtype=object).reshape(-1)
        a = np.array([wrap(int(v), t) for v in flat], dtype=NP[t]).reshape(np.shape(vals))
    else:
        with np.errstate(over="ignore"):        # values beyond the type become inf
            a = np.array(vals, dtype=np.float32 if t == "bf16" else NP[t])
        if t == "bf16":
            a = bf16(a)
    return a.reshape(shape) if shape is not None else a


def f32_of(t, a):
    """The exact f32 (or f64 for f64) value of a float array of type t."""
    return a.astype(np.float64) if t == "f64" else a.astype(np.float32)


def round_frac(q, t):
    """Fraction (or int) q rounded to nearest even in float type t, as a
    Python float (exact: every type here fits in a double).  Overflow -> inf."""
    p, emin, emax = FMT[t]
    if isinstance(q, float) and q == 0:
        return q                      # keeps the sign of zero
    q = Fraction(q)
    if q == 0:
        return 0.0
    s = -1.0 if q < 0 else 1.0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - p + 1)
    m = a / ulp
    n = math.floor(m)
    rem = m - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    r = n * ulp
    if r > (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax:
        return s * INF
    return s * float(r)


def seeded(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


# --------------------------------------------------------------------------
# Modules

def shape_str(t, dims, layout=None):
    s = f"{t}[{','.join(str(d) for d in dims)}]"
    return s + ("{" + ",".join(str(d) for d in layout) + "}" if layout is not None else "")


def arr_shape(t, a):
    return shape_str(t, a.shape)


class Module:
    """A module under construction: helper computations, then an ENTRY whose
    instructions are added in order; text(roots) closes it."""

    def __init__(self, name):
        self.name = name
        self.comps = []
        self.params = []
        self.lines = []
        self.shapes = {}
        self.n = 0

    def comp(self, text):
        if text not in self.comps:
            self.comps.append(text)

    def param(self, shape):
        i = len(self.params)
        nm = f"%p{i}"
        self.params.append(shape)
        self.lines.append(f"{nm} = {shape} parameter({i})")
        self.shapes[nm] = shape
        return nm

    def op(self, shape, opcode, *operands, attrs=None):
        nm = f"%{opcode.replace('-', '_')}.{self.n}"
        self.n += 1
        args = ", ".join(f"{self.shapes[o]} {o}" for o in operands)
        line = f"{nm} = {shape} {opcode}({args})"
        if attrs:
            line += ", " + attrs
        self.lines.append(line)
        self.shapes[nm] = shape
        return nm

    def constant(self, shape, literal):
        nm = f"%constant.{self.n}"
        self.n += 1
        self.lines.append(f"{nm} = {shape} constant({literal})")
        self.shapes[nm] = shape
        return nm

    def tuple(self, *operands):
        return self.op("(" + ", ".join(self.shapes[o] for o in operands) + ")", "tuple", *operands)

    def text(self, roots):
        lines = list(self.lines)
        if len(roots) == 1 and lines[-1].startswith(roots[0] + " = "):
            root = roots[0]
        else:
            root = self.tuple(*roots)
            lines = list(self.lines)
        lines[-1] = "ROOT " + lines[-1]
        sig = ", ".join(f"p{i}: {s}" for i, s in enumerate(self.params))
        out = [f"HloModule {self.name}", ""]
        for c in self.comps:
            out += [c.strip("\n"), ""]
        out.append(f"ENTRY %main ({sig}) -> {self.shapes[root]} {{")
        out += ["  " + ln for ln in lines]
        out.append("}")
        return "\n".join(out) + "\n"


def binary_comp(name, opcode, t):
    """%name (x: t[], y: t[]) -> t[] { ROOT opcode(x, y) }"""
    return f"""
%{name} (x: {t}[], y: {t}[]) -> {t}[] {{
  %{name}.x = {t}[] parameter(0)
  %{name}.y = {t}[] parameter(1)
  ROOT %{name}.r = {t}[] {opcode}({t}[] %{name}.x, {t}[] %{name}.y)
}}"""


CASES = []


def case(name, text, params, outs, compare="exact"):
    """Registers a case: the module text, the input arrays (parameter order),
    the expected arrays (one per leaf of the root) and the compare mode."""
    CASES.append((name, text, params, outs, compare))


# --------------------------------------------------------------------------
# Elementwise helpers

def elementwise_case(name, types, ops, params, compare="exact"):
    """One parameter per entry of types (shape from params); ops is a list of
    (out_type, opcode, [param indices], attrs, expected array)."""
    m = Module(name)
    ps = [m.param(arr_shape(t, a)) for t, a in zip(types, params)]
    roots, outs = [], []
    for out_t, opcode, idx, attrs, want in ops:
        dims = params[idx[0]].shape if idx else want.shape
        if opcode == "select":
            dims = params[idx[1]].shape
        if opcode == "clamp":
            dims = params[idx[1]].shape
        roots.append(m.op(shape_str(out_t, dims), opcode, *[ps[i] for i in idx], attrs=attrs))
        outs.append(want)
    case(name, m.text(roots), params, outs, compare)


def fl(t, fn, *args):
    """Elementwise float op with HLO rounding: f16/bf16 compute in f32 and round
    once; f32/f64 compute natively.  fn gets numpy arrays."""
    with np.errstate(all="ignore"):
        if t in ("f16", "bf16"):
            r = fn(*[a.astype(np.float32) for a in args])
            return to_type(t, np.asarray(r, np.float32))
        r = fn(*[a.astype(NP[t]) for a in args])
        return np.asarray(r).astype(NP[t])


def transc(t, fn, *args):
    """A transcendental: evaluated in f64 from the exact inputs and rounded to
    f32 (for f32 and narrower, which then round to t) or kept (f64)."""
    with np.errstate(all="ignore"):
        r = np.asarray(fn(*[a.astype(np.float64) for a in args]), np.float64)
        if t == "f64":
            return r
        return to_type(t, r.astype(np.float32))


def per_elem(fn):
    """Wraps a Python float function for arrays (NaN in, NaN out handled by fn)."""
    def g(*arrays):
        b = np.broadcast_arrays(*arrays)
        flat = [x.reshape(-1) for x in b]
        return np.array([fn(*vals) for vals in zip(*[x.tolist() for x in flat])],
                        np.float64).reshape(b[0].shape)
    return g


def float_specials(t):
    """Edge values for float type t: NaNs, infinities, signed zeros, halves,
    a subnormal, values near rounding boundaries."""
    sub = {"f16": 1e-7, "bf16": 1e-39, "f32": 1e-40, "f64": 1e-310}[t]
    near_half = {"f16": 0.4998, "bf16": 0.498, "f32": 0.49999997, "f64": 0.49999999999999994}[t]
    vals = [NAN, -NAN, INF, -INF, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.7, -3.2,
            sub, -sub, near_half, -near_half, 123.456, -7.0, 1.0, -1.0, 100.5, 4.0]
    return arr(t, vals)


def libm(math_fn, np_fn):
    """Elementwise: glibc's double function through Python's math module (so
    f64 results are the C library's), numpy's where math raises (domain
    errors, overflow: NaN, infinities)."""
    def one(*xs):
        try:
            return math_fn(*xs)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(np_fn(*[np.float64(x) for x in xs]))
    return per_elem(one)


def ieee_max(x, y):
    """StableHLO's maximum (IEEE 754-2019 maximum): a NaN operand wins (lhs
    first), +0 counts as greater than -0 (max(-0, +0) = +0 in either order)."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    tie = np.where(np.signbit(x), y, x)
    return np.where(np.isnan(x), x, np.where(np.isnan(y), y, np.where(x < y, y, np.where(y < x, x, tie))))


def ieee_min(x, y):
    """StableHLO's minimum: a NaN operand wins (lhs first), -0 < +0."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    tie = np.where(np.signbit(x), x, y)
    return np.where(np.isnan(x), x, np.where(np.isnan(y), y, np.where(y < x, y, np.where(x < y, x, tie))))


def int_binary(op, t, a, b):
    lo, hi = int_range(t)
    bits = BITS[t]
    mask = (1 << bits) - 1
    if op == "add":
        return wrap(a + b, t)
    if op == "subtract":
        return wrap(a - b, t)
    if op == "multiply":
        return wrap(a * b, t)
    if op == "divide":
        if b == 0:
            return -1 if signed(t) else hi
        if signed(t) and a == lo and b == -1:
            return lo
        q = abs(a) // abs(b)
        return -q if (a < 0) != (b < 0) else q
    if op == "remainder":
        if b == 0:
            return a
        if signed(t) and a == lo and b == -1:
            return 0
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    if op == "maximum":
        return max(a, b)
    if op == "minimum":
        return min(a, b)
    if op == "power":
        if b == 0 or a == 1:
            return 1
        if b < 0:          # 1 / a^-b truncated toward zero (StableHLO's reference)
            return (-1 if b % 2 else 1) if a == -1 else 0
        return wrap(pow(a, b, 1 << bits), t)
    if op == "and":
        return wrap((a & mask) & (b & mask), t)
    if op == "or":
        return wrap((a & mask) | (b & mask), t)
    if op == "xor":
        return wrap((a & mask) ^ (b & mask), t)
    amount = b & mask          # shift amounts are read as unsigned
    if op == "shift-left":
        return 0 if amount >= bits else wrap((a & mask) << amount, t)
    if op == "shift-right-logical":
        return 0 if amount >= bits else wrap((a & mask) >> amount, t)
    if op == "shift-right-arithmetic":
        sa = wrap(a, "s" + str(bits))      # the signed reading of the bits
        return wrap(-1 if sa < 0 else 0, t) if amount >= bits else wrap(sa >> amount, t)
    raise ValueError(op)


def total_order_key(t, a):
    """Sign-magnitude bits mapped to ordered integers: -NaN < -inf < ... < -0 < +0 < ... < NaN."""
    if t == "f64":
        i = a.view(np.int64).astype(object)
        m = (1 << 63) - 1
    elif t == "f16":
        i = a.view(np.int16).astype(object)
        m = (1 << 15) - 1
    else:                      # f32 and bf16 (an f32 holding the bf16 value)
        i = a.view(np.int32).astype(object)
        m = (1 << 31) - 1
    return np.array([v if v >= 0 else v ^ m for v in i.reshape(-1)], dtype=object).reshape(a.shape)


# --------------------------------------------------------------------------
# Reduction and window helpers

def fold(t, op, init, xs):
    """Sequential left fold in element type t (rounding after every step)."""
    acc = init
    for x in xs:
        acc = apply_scalar(t, op, acc, x)
    return acc


def apply_scalar(t, op, a, b):
    if t in INTS:
        return int_binary(op, t, int(a), int(b))
    if t == "pred":
        return {"and": a and b, "or": a or b}[op]
    fn = {"add": np.add, "multiply": np.multiply, "maximum": ieee_max, "minimum": ieee_min}[op]
    ct = np.float64 if t == "f64" else np.float32
    r = fn(np.array(a, ct), np.array(b, ct))
    return to_type(t, np.asarray(r, ct)).reshape(())[()]


def window_attr(size, stride, pad, lhs_dil, rhs_dil):
    parts = ["size=" + "x".join(map(str, size))]
    if any(s != 1 for s in stride):
        parts.append("stride=" + "x".join(map(str, stride)))
    if any(p != (0, 0) for p in pad):
        parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pad))
    if any(v != 1 for v in lhs_dil):
        parts.append("lhs_dilate=" + "x".join(map(str, lhs_dil)))
    if any(v != 1 for v in rhs_dil):
        parts.append("rhs_dilate=" + "x".join(map(str, rhs_dil)))
    return "window={" + " ".join(parts) + "}"


# --------------------------------------------------------------------------
# Operand data

def dyadic(g, t, shape, lo=-8, hi=8, den=4):
    """Small multiples of 1/den: every product and partial sum is exact, so
    any summation order gives the same bits."""
    return arr(t, (g.integers(lo * den, hi * den + 1, shape) / den).astype(np.float32))


# --------------------------------------------------------------------------
# Tuples and control flow

def fam_tuple_gte():
    """tuple (nested), get-tuple-element, a nested tuple root (leaves in order)."""
    name = "tuple_get_tuple_element_nested"
    m = Module(name)
    a = arr("f32", [1.0, 2.0])
    b = arr("s8", -4)
    c = arr("pred", [[True, False]])
    pa, pb, pc = m.param("f32[2]"), m.param("s8[]"), m.param("pred[1,2]")
    inner = m.tuple(pa, pb)
    outer = m.op("((f32[2], s8[]), pred[1,2])", "tuple", inner, pc)
    g0 = m.op("(f32[2], s8[])", "get-tuple-element", outer, attrs="index=0")
    g01 = m.op("s8[]", "get-tuple-element", g0, attrs="index=1")
    g1 = m.op("pred[1,2]", "get-tuple-element", outer, attrs="index=1")
    g00 = m.op("f32[2]", "get-tuple-element", g0, attrs="index=0")
    neg = m.op("f32[2]", "negate", g00)
    root = m.op("((s8[], f32[2]), pred[1,2], f32[2])", "tuple",
                m.tuple(g01, neg), g1, g00)
    case(name, m.text([root]), [a, b, c], [b.copy(), -a, c.copy(), a.copy()])


def fam_call_fusion():
    """call and fusion (single and tuple-shaped output) run their computation."""
    name = "call_and_fusion"
    m = Module(name)
    m.comp("""
%fma (a: f32[4], b: f32[4]) -> f32[4] {
  %fma.a = f32[4] parameter(0)
  %fma.b = f32[4] parameter(1)
  %fma.m = f32[4] multiply(f32[4] %fma.a, f32[4] %fma.b)
  ROOT %fma.r = f32[4] add(f32[4] %fma.m, f32[4] %fma.a)
}""")
    m.comp("""
%fused (x: f32[4], y: s32[4]) -> (f32[4], s32[4]) {
  %fused.x = f32[4] parameter(0)
  %fused.y = s32[4] parameter(1)
  %fused.c = f32[4] convert(s32[4] %fused.y)
  %fused.s = f32[4] subtract(f32[4] %fused.x, f32[4] %fused.c)
  %fused.n = s32[4] negate(s32[4] %fused.y)
  ROOT %fused.t = (f32[4], s32[4]) tuple(f32[4] %fused.s, s32[4] %fused.n)
}""")
    m.comp("""
%fused_scale (x: f32[4]) -> f32[4] {
  %fused_scale.x = f32[4] parameter(0)
  %fused_scale.k = f32[] constant(0.5)
  %fused_scale.b = f32[4] broadcast(f32[] %fused_scale.k), dimensions={}
  ROOT %fused_scale.r = f32[4] multiply(f32[4] %fused_scale.x, f32[4] %fused_scale.b)
}""")
    g = seeded(name)
    a = dyadic(g, "f32", (4,))
    b = dyadic(g, "f32", (4,))
    y = arr("s32", [1, -2, 3, 2147483647])
    pa, pb, py = m.param("f32[4]"), m.param("f32[4]"), m.param("s32[4]")
    c = m.op("f32[4]", "call", pa, pb, attrs="to_apply=%fma")
    f = m.op("(f32[4], s32[4])", "fusion", c, py, attrs="kind=kLoop, calls=%fused")
    f0 = m.op("f32[4]", "get-tuple-element", f, attrs="index=0")
    f1 = m.op("s32[4]", "get-tuple-element", f, attrs="index=1")
    s = m.op("f32[4]", "fusion", f0, attrs="kind=kOutput, calls=%fused_scale")
    call_v = (a * b + a).astype(np.float32)
    sub = (call_v - y.astype(np.float32)).astype(np.float32)
    case(name, m.text([c, s, f1]), [a, b, y],
         [call_v, (sub * np.float32(0.5)).astype(np.float32), arr("s32", [-1, 2, -3, -2147483647])])


def fam_while():
    """while: a counted loop carrying (s32 counter, f32 vector, bf16 scalar),
    rounding every step; and a loop whose condition is false at once."""
    name = "while_counted_and_zero_trip"
    m = Module(name)
    m.comp("""
%cond (s: (s32[], f32[3], bf16[])) -> pred[] {
  %cond.s = (s32[], f32[3], bf16[]) parameter(0)
  %cond.i = s32[] get-tuple-element((s32[], f32[3], bf16[]) %cond.s), index=0
  %cond.n = s32[] constant(7)
  ROOT %cond.lt = pred[] compare(s32[] %cond.i, s32[] %cond.n), direction=LT
}""")
    m.comp("""
%body (s: (s32[], f32[3], bf16[])) -> (s32[], f32[3], bf16[]) {
  %body.s = (s32[], f32[3], bf16[]) parameter(0)
  %body.i = s32[] get-tuple-element((s32[], f32[3], bf16[]) %body.s), index=0
  %body.x = f32[3] get-tuple-element((s32[], f32[3], bf16[]) %body.s), index=1
  %body.z = bf16[] get-tuple-element((s32[], f32[3], bf16[]) %body.s), index=2
  %body.one = s32[] constant(1)
  %body.i1 = s32[] add(s32[] %body.i, s32[] %body.one)
  %body.k = f32[] constant(1.1)
  %body.kb = f32[3] broadcast(f32[] %body.k), dimensions={}
  %body.x1 = f32[3] multiply(f32[3] %body.x, f32[3] %body.kb)
  %body.x2 = f32[3] add(f32[3] %body.x1, f32[3] %body.x)
  %body.zk = bf16[] constant(0.3)
  %body.z1 = bf16[] add(bf16[] %body.z, bf16[] %body.zk)
  ROOT %body.r = (s32[], f32[3], bf16[]) tuple(s32[] %body.i1, f32[3] %body.x2, bf16[] %body.z1)
}""")
    i0, i9 = arr("s32", 0), arr("s32", 9)
    x = arr("f32", [1.0, -0.3, 1e30])
    z = arr("bf16", 1.0)
    pi0, pi9, px, pz = m.param("s32[]"), m.param("s32[]"), m.param("f32[3]"), m.param("bf16[]")
    shape = "(s32[], f32[3], bf16[])"
    t0 = m.tuple(pi0, px, pz)
    t9 = m.tuple(pi9, px, pz)
    w0 = m.op(shape, "while", t0, attrs="condition=%cond, body=%body")
    w9 = m.op(shape, "while", t9, attrs="condition=%cond, body=%body")
    xs, zs = x.copy(), np.float32(z)
    k = np.float32(1.1)
    zk = bf16(np.float32(0.3))[()]
    for _ in range(7):
        xs = ((xs * k).astype(np.float32) + xs).astype(np.float32)
        zs = bf16(np.float32(zs + zk))[()]
    case(name, m.text([w0, w9]), [i0, i9, x, z],
         [arr("s32", 7), xs, np.array(zs, np.float32), arr("s32", 9), x.copy(), z.copy()])


def fam_conditional():
    """conditional: pred form (both branches) and indexed form with in-range,
    negative and too-large indices (the last two run the last branch)."""
    name = "conditional_pred_and_index"
    m = Module(name)
    for nm, body in [("neg", "negate(f32[3] %neg.x)"), ("dbl", "add(f32[3] %dbl.x, f32[3] %dbl.x)"),
                     ("ident", "copy(f32[3] %ident.x)"), ("sq", "multiply(f32[3] %sq.x, f32[3] %sq.x)")]:
        m.comp(f"""
%{nm} (x: f32[3]) -> f32[3] {{
  %{nm}.x = f32[3] parameter(0)
  ROOT %{nm}.r = f32[3] {body}
}}""")
    x = arr("f32", [1.5, -2.0, 3.0])
    y = arr("f32", [4.0, 0.5, -1.0])
    params = [x, y]
    px, py = m.param("f32[3]"), m.param("f32[3]")
    roots, outs = [], []
    for v in [True, False]:
        pv = arr("pred", v)
        pp = m.param("pred[]")
        params.append(pv)
        roots.append(m.op("f32[3]", "conditional", pp, px, py,
                          attrs="true_computation=%neg, false_computation=%dbl"))
        outs.append(-x if v else y + y)
    branches = [lambda v: -v, lambda v: v + v, lambda v: v.copy(), lambda v: v * v]
    for k in [0, 1, 2, -1, 4, -2147483648]:
        kv = arr("s32", k)
        pk = m.param("s32[]")
        params.append(kv)
        roots.append(m.op("f32[3]", "conditional", pk, px, py, px, py,
                          attrs="branch_computations={%neg, %dbl, %ident, %sq}"))
        b = k if 0 <= k < 4 else 3
        outs.append(branches[b]([x, y, x, y][b]).astype(np.float32))
    case(name, m.text(roots), params, outs)


def fam_map():
    """map applies a scalar computation elementwise (two operands, rank 2; and a
    unary one on s16 that wraps)."""
    name = "map_binary_and_unary"
    g = seeded(name)
    m = Module(name)
    m.comp("""
%mx2 (x: f32[], y: f32[]) -> f32[] {
  %mx2.x = f32[] parameter(0)
  %mx2.y = f32[] parameter(1)
  %mx2.m = f32[] maximum(f32[] %mx2.x, f32[] %mx2.y)
  ROOT %mx2.r = f32[] add(f32[] %mx2.m, f32[] %mx2.x)
}""")
    m.comp("""
%sq16 (x: s16[]) -> s16[] {
  %sq16.x = s16[] parameter(0)
  ROOT %sq16.r = s16[] multiply(s16[] %sq16.x, s16[] %sq16.x)
}""")
    a = arr("f32", g.standard_normal((2, 3)).astype(np.float32))
    b = arr("f32", g.standard_normal((2, 3)).astype(np.float32))
    a[0, 0] = NAN
    c = arr("s16", [300, -200, 181, 182, 32767])
    pa, pb, pc = m.param("f32[2,3]"), m.param("f32[2,3]"), m.param("s16[5]")
    r1 = m.op("f32[2,3]", "map", pa, pb, attrs="dimensions={0,1}, to_apply=%mx2")
    r2 = m.op("s16[5]", "map", pc, attrs="dimensions={0}, to_apply=%sq16")
    w1 = (ieee_max(a, b) + a).astype(np.float32)
    w2 = arr("s16", [wrap(int(v) * int(v), "s16") for v in c.tolist()])
    case(name, m.text([r1, r2]), [a, b, c], [w1, w2])


def fam_opt_barrier_after_all():
    """opt-barrier is the identity on a tuple; after-all makes tokens and
    add-dependency passes its value through."""
    name = "opt_barrier_after_all"
    m = Module(name)
    a = arr("f32", [1.0, NAN])
    b = arr("u32", 77)
    pa, pb = m.param("f32[2]"), m.param("u32[]")
    t = m.tuple(pa, pb)
    ob = m.op("(f32[2], u32[])", "opt-barrier", t)
    o0 = m.op("f32[2]", "get-tuple-element", ob, attrs="index=0")
    o1 = m.op("u32[]", "get-tuple-element", ob, attrs="index=1")
    tk0 = m.op("token[]", "after-all")
    tk1 = m.op("token[]", "after-all", tk0)
    tk2 = m.op("token[]", "after-all", tk0, tk1)
    d = m.op("f32[2]", "add-dependency", o0, tk2)
    n = m.op("f32[2]", "negate", d)
    case(name, m.text([n, o1]), [a, b], [-a, b.copy()])


# --------------------------------------------------------------------------
# sort, gather, scatter

def cmp_comp(name, t, direction, extra=""):
    return f"""
%{name} (a: {t}[], b: {t}[]) -> pred[] {{
  %{name}.a = {t}[] parameter(0)
  %{name}.b = {t}[] parameter(1)
  ROOT %{name}.r = pred[] compare({t}[] %{name}.a, {t}[] %{name}.b), direction={direction}{extra}
}}"""


def stable_sort_along(keys, axis, key_fn, others=()):
    """Stable sort of keys (and others, permuted alike) along axis by key_fn."""
    keys = np.moveaxis(keys, axis, -1)
    outs = [np.empty_like(keys)] + [np.empty_like(np.moveaxis(o, axis, -1)) for o in others]
    moved = [np.moveaxis(o, axis, -1) for o in others]
    for idx in np.ndindex(*keys.shape[:-1]):
        row = keys[idx]
        order = sorted(range(row.shape[0]), key=lambda j: key_fn(row[j]))
        outs[0][idx] = row[order]
        for k, o in enumerate(moved):
            outs[k + 1][idx] = o[idx][order]
    return [np.moveaxis(o, -1, axis).copy() for o in outs]


def fam_sort():
    """sort: stable ascending f32 (-0 and +0 and duplicates keep their order),
    TOTALORDER over NaNs/infinities/zeros, multi-operand descending on a
    rank-2 array along dim 1, along dim 0 with u16 keys, by |x|, and an
    empty array."""
    g = seeded("sort")
    # 1. ascending, LT: ties (including -0 == +0) keep input order.
    name = "sort_f32_stable_lt"
    m = Module(name)
    m.comp(cmp_comp("lt_f32", "f32", "LT"))
    x = arr("f32", [3.0, -0.0, 1.0, 0.0, -2.0, 1.0, -0.0, 7.5, -INF, INF])
    idx = arr("s32", list(range(10)))
    px, pi = m.param("f32[10]"), m.param("s32[10]")
    m.comp("""
%lt_key (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %lt_key.a = f32[] parameter(0)
  %lt_key.b = f32[] parameter(1)
  %lt_key.c = s32[] parameter(2)
  %lt_key.d = s32[] parameter(3)
  ROOT %lt_key.r = pred[] compare(f32[] %lt_key.a, f32[] %lt_key.b), direction=LT
}""")
    r1 = m.op("f32[10]", "sort", px, attrs="dimensions={0}, is_stable=true, to_apply=%lt_f32")
    r2 = m.op("(f32[10], s32[10])", "sort", px, pi,
              attrs="dimensions={0}, is_stable=true, to_apply=%lt_key")
    w = stable_sort_along(x, 0, lambda v: float(v), [idx])
    case(name, m.text([r1, r2]), [x, idx], [w[0], w[0], w[1]])

    # 2. TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
    name = "sort_f32_totalorder"
    m = Module(name)
    m.comp(cmp_comp("lt_total", "f32", "LT", ", type=TOTALORDER"))
    x = arr("f32", [NAN, 1.0, -0.0, -NAN, 0.0, -INF, INF, -1.0, 2.5, -0.0])
    px = m.param("f32[10]")
    r = m.op("f32[10]", "sort", px, attrs="dimensions={0}, is_stable=true, to_apply=%lt_total")
    key = total_order_key("f32", x)
    order = sorted(range(10), key=lambda j: key[j])
    case(name, m.text([r]), [x], [x[order].copy()])

    # 3. Multi-operand, descending by s32 keys along dim 1, three operands.
    name = "sort_multi_operand_desc_dim1"
    m = Module(name)
    m.comp("""
%gt_key3 (a: s32[], b: s32[], c: f32[], d: f32[], e: u8[], f: u8[]) -> pred[] {
  %gt_key3.a = s32[] parameter(0)
  %gt_key3.b = s32[] parameter(1)
  %gt_key3.c = f32[] parameter(2)
  %gt_key3.d = f32[] parameter(3)
  %gt_key3.e = u8[] parameter(4)
  %gt_key3.f = u8[] parameter(5)
  ROOT %gt_key3.r = pred[] compare(s32[] %gt_key3.a, s32[] %gt_key3.b), direction=GT
}""")
    k = arr("s32", g.integers(-3, 3, (3, 8)))
    v = arr("f32", g.standard_normal((3, 8)).astype(np.float32))
    u = arr("u8", np.tile(np.arange(8), (3, 1)))
    pk, pv, pu = m.param("s32[3,8]"), m.param("f32[3,8]"), m.param("u8[3,8]")
    r = m.op("(s32[3,8], f32[3,8], u8[3,8])", "sort", pk, pv, pu,
             attrs="dimensions={1}, is_stable=true, to_apply=%gt_key3")
    w = stable_sort_along(k, 1, lambda a: -int(a), [v, u])
    case(name, m.text([r]), [k, v, u], w)

    # 4. Along dim 0, u16 keys (values above 32767 sort as unsigned), a
    #    comparator on the second operand (s8), and sorting by |x|.
    name = "sort_dim0_and_custom_comparators"
    m = Module(name)
    m.comp(cmp_comp("lt_u16", "u16", "LT"))
    m.comp("""
%by_second (a: f32[], b: f32[], c: s8[], d: s8[]) -> pred[] {
  %by_second.a = f32[] parameter(0)
  %by_second.b = f32[] parameter(1)
  %by_second.c = s8[] parameter(2)
  %by_second.d = s8[] parameter(3)
  ROOT %by_second.r = pred[] compare(s8[] %by_second.c, s8[] %by_second.d), direction=LT
}""")
    m.comp("""
%by_abs (a: f64[], b: f64[]) -> pred[] {
  %by_abs.a = f64[] parameter(0)
  %by_abs.b = f64[] parameter(1)
  %by_abs.x = f64[] abs(f64[] %by_abs.a)
  %by_abs.y = f64[] abs(f64[] %by_abs.b)
  ROOT %by_abs.r = pred[] compare(f64[] %by_abs.x, f64[] %by_abs.y), direction=LT
}""")
    ku = arr("u16", g.integers(0, 65536, (5, 2)))
    ku[1, 0] = ku[3, 0]
    fv = arr("f32", g.standard_normal(7).astype(np.float32))
    sk = arr("s8", [5, -3, 5, 127, -128, 0, -3])
    dv = arr("f64", [-3.0, 2.0, -1.0, 1.0, 0.5, -2.0, 3.0, -0.5])
    pku, pfv, psk, pdv = m.param("u16[5,2]"), m.param("f32[7]"), m.param("s8[7]"), m.param("f64[8]")
    r1 = m.op("u16[5,2]", "sort", pku, attrs="dimensions={0}, is_stable=true, to_apply=%lt_u16")
    r2 = m.op("(f32[7], s8[7])", "sort", pfv, psk,
              attrs="dimensions={0}, is_stable=true, to_apply=%by_second")
    r3 = m.op("f64[8]", "sort", pdv, attrs="dimensions={0}, is_stable=true, to_apply=%by_abs")
    empty = np.zeros((2, 0), np.uint16)
    pem = m.param("u16[2,0]")
    r4 = m.op("u16[2,0]", "sort", pem, attrs="dimensions={1}, is_stable=true, to_apply=%lt_u16")
    w1 = stable_sort_along(ku, 0, int)[0]
    w2 = stable_sort_along(sk, 0, int, [fv])
    w3 = stable_sort_along(dv, 0, abs)[0]
    case(name, m.text([r1, r2, r3, r4]), [ku, fv, sk, dv, empty], [w1, w2[1], w2[0], w3, empty.copy()])


def fam_sort_key_types():
    """Sort keys that a double cannot tell apart (u64 above 2^63 and s64 near
    2^60 differing by 1), f16 keys under TOTALORDER (NaNs of both signs,
    zeros), bf16 keys under LT (zeros of both signs tie: stable)."""
    name = "sort_wide_int_and_narrow_float_keys"
    m = Module(name)
    m.comp(cmp_comp("lt_u64", "u64", "LT"))
    m.comp(cmp_comp("gt_s64", "s64", "GT"))
    m.comp(cmp_comp("lt_f16_total", "f16", "LT", ", type=TOTALORDER"))
    m.comp(cmp_comp("lt_bf16", "bf16", "LT"))
    u = arr("u64", [(1 << 64) - 1, (1 << 64) - 2, (1 << 63) + 1, 1 << 63, 5, (1 << 63) - 1,
                    (1 << 64) - 3, 0])
    sv = arr("s64", [(1 << 60) + 1, 1 << 60, -(1 << 60), -(1 << 60) - 1, (1 << 60) + 2, 3,
                     -(1 << 63), (1 << 63) - 1])
    h = arr("f16", [NAN, -0.0, 1.0, -NAN, 0.0, -INF, 65504.0, -1.0, 6e-8, INF])
    b = arr("bf16", [0.0, -1.0, -0.0, 2.0, 0.0, -0.0, -1.0, 1.5])
    pu, ps, ph, pb = (m.param(arr_shape(t, v)) for t, v in
                      zip(["u64", "s64", "f16", "bf16"], [u, sv, h, b]))
    roots = [m.op("u64[8]", "sort", pu, attrs="dimensions={0}, is_stable=true, to_apply=%lt_u64"),
             m.op("s64[8]", "sort", ps, attrs="dimensions={0}, is_stable=true, to_apply=%gt_s64"),
             m.op("f16[10]", "sort", ph, attrs="dimensions={0}, is_stable=true, to_apply=%lt_f16_total"),
             m.op("bf16[8]", "sort", pb, attrs="dimensions={0}, is_stable=true, to_apply=%lt_bf16")]
    hk = total_order_key("f16", h)
    outs = [np.array(sorted(u.tolist()), np.uint64), np.array(sorted(sv.tolist(), reverse=True), np.int64),
            h[sorted(range(10), key=lambda j: hk[j])].copy(),
            stable_sort_along(b, 0, float)[0]]
    case(name, m.text(roots), [u, sv, h, b], outs)


def gather_ref(operand, indices, offset_dims, collapsed, start_index_map, ivd, slice_sizes):
    """XLA gather (no batching dims); start indices clamped so the slice fits."""
    idx = indices[..., None] if ivd == indices.ndim else indices
    batch_shape = [idx.shape[d] for d in range(idx.ndim) if d != ivd]
    offset_op_dims = [d for d in range(operand.ndim) if d not in collapsed]
    out_rank = len(batch_shape) + len(offset_dims)
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    out_shape = [0] * out_rank
    for i, d in enumerate(batch_out):
        out_shape[d] = batch_shape[i]
    for i, d in enumerate(offset_dims):
        out_shape[d] = slice_sizes[offset_op_dims[i]]
    out = np.empty(out_shape, operand.dtype)
    for oi in np.ndindex(*out_shape):
        G = [oi[d] for d in batch_out]
        vec = []
        for k in range(idx.shape[ivd]):
            full = list(G)
            full.insert(ivd, k)
            vec.append(int(idx[tuple(full)]))    # by value (u64 >= 2^63 is past every dim)
        start = [0] * operand.ndim
        for k, d in enumerate(start_index_map):
            start[d] = vec[k]
        pos = [min(max(start[d], 0), operand.shape[d] - slice_sizes[d]) for d in range(operand.ndim)]
        for i, d in enumerate(offset_dims):
            pos[offset_op_dims[i]] += oi[d]
        out[oi] = operand[tuple(pos)]
    return out


def ilist(v):
    return "{" + ",".join(map(str, v)) + "}"


def fam_gather():
    """gather: row gather (embedding lookup), 2-D index vectors with clamped
    starts, index_vector_dim = rank (implicit), offset dims before batch dims,
    s64/u32 indices, a bf16 operand.  Indices are read as signed 64-bit, as
    the reference says for dynamic-slice and as XLA's evaluator reads every
    index (Literal::GetIntegralAsS64): u64 2^64-1 is -1 and clamps to 0."""
    specs = [
        ("gather_rows_embedding", "f32", (5, 3), "s32", [3, 0, 4, 3], [1], [0], [0], 1, (1, 3)),
        ("gather_2d_clamped", "s32", (4, 5), "s32", [[0, 0], [3, 4], [-1, 2], [2, -7], [1, 1]],
         [1, 2], [], [0, 1], 1, (2, 3)),
        ("gather_implicit_index_dim", "bf16", (6, 4), "s64", [[5, 0], [2, 9]], [2], [0], [0], 2,
         (1, 4)),
        ("gather_offset_first_ivd0", "f64", (3, 4, 2), "u32", [[2, 0, 1], [1, 3, 0]], [0, 1], [1],
         [1, 0], 0, (2, 1, 2)),
        ("gather_scalar_index_collapse_all", "u8", (7,), "s32", 4, [], [0], [0], 0, (1,)),
        ("gather_u64_indices_by_value", "s32", (5,), "u64", [[(1 << 64) - 1], [3], [1 << 63], [1]],
         [1], [], [0], 1, (2,)),
    ]
    for name, ot, oshape, it, ivals, offset, collapsed, sim, ivd, sizes in specs:
        g = seeded(name)
        if ot in INTS:
            op = arr(ot, g.integers(0, 100, oshape))
        elif ot == "f64":
            op = g.standard_normal(oshape)
        else:
            op = to_type(ot, g.standard_normal(oshape).astype(np.float32))
        ind = arr(it, ivals)
        want = gather_ref(op, ind, offset, collapsed, sim, ivd, sizes)
        m = Module(name)
        po, pi = m.param(arr_shape(ot, op)), m.param(arr_shape(it, ind))
        attrs = (f"offset_dims={ilist(offset)}, collapsed_slice_dims={ilist(collapsed)}, "
                 f"start_index_map={ilist(sim)}, index_vector_dim={ivd}, slice_sizes={ilist(sizes)}")
        r = m.op(arr_shape(ot, want), "gather", po, pi, attrs=attrs)
        case(name, m.text([r]), [op, ind], [want])


def scatter_ref(operand, indices, updates, uwd, iwd, sdod, ivd, combine):
    """XLA scatter (no batching dims): per scatter position (row-major), the
    window is skipped when any part of it falls outside the operand, otherwise
    operand = combine(operand, update) over the window (row-major)."""
    out = operand.copy()
    idx = indices[..., None] if ivd == indices.ndim else indices
    scatter_dims = [d for d in range(updates.ndim) if d not in uwd]
    win_op_dims = [d for d in range(operand.ndim) if d not in iwd]
    wsize = [1] * operand.ndim
    for i, d in enumerate(win_op_dims):
        wsize[d] = updates.shape[uwd[i]]
    for G in np.ndindex(*[updates.shape[d] for d in scatter_dims]):
        vec = []
        for k in range(idx.shape[ivd]):
            full = list(G)
            full.insert(ivd, k)
            vec.append(int(idx[tuple(full)]))    # by value (u64 >= 2^63 is past every dim)
        start = [0] * operand.ndim
        for k, d in enumerate(sdod):
            start[d] = vec[k]
        if any(start[d] < 0 or start[d] + wsize[d] > operand.shape[d] for d in range(operand.ndim)):
            continue
        for W in np.ndindex(*[updates.shape[d] for d in uwd]):
            ui = [0] * updates.ndim
            for k, d in enumerate(scatter_dims):
                ui[d] = G[k]
            for k, d in enumerate(uwd):
                ui[d] = W[k]
            pos = list(start)
            for k, d in enumerate(win_op_dims):
                pos[d] += W[k]
            out[tuple(pos)] = combine(out[tuple(pos)], updates[tuple(ui)])
    return out


def fam_scatter():
    """scatter: add with duplicate indices, replace with out-of-bounds windows
    skipped, 2-D windows from 2-D index vectors, a non-commutative combiner
    applied in update order."""
    specs = [
        ("scatter_add_duplicates", "f32", (5, 3), "s32", [1, 3, 1, 0], (4, 3), [1], [0], [0], 1,
         "add"),
        ("scatter_replace_out_of_bounds", "s32", (6,), "s32", [[2], [9], [-1], [5], [-6]], (5,),
         [], [0], [0], 1, "replace"),
        ("scatter_2d_windows", "s64", (4, 5), "s32", [[0, 0], [2, 3], [3, 3], [1, 1]],
         (4, 2, 2), [1, 2], [], [0, 1], 1, "add"),
        ("scatter_u8_order_sensitive", "u8", (4,), "s64", [[1], [1], [3], [1]], (4,), [], [0],
         [0], 1, "horner"),
        ("scatter_bf16_implicit_index_dim", "bf16", (3, 4), "u32", [2, 0], (2, 4), [1], [0], [0],
         1, "add"),
    ]
    for name, t, oshape, it, ivals, ushape, uwd, iwd, sdod, ivd, comb in specs:
        g = seeded(name)
        if t == "f32":
            op, upd = dyadic(g, t, oshape), dyadic(g, t, ushape)
        elif t == "bf16":
            op, upd = dyadic(g, t, oshape, den=2), dyadic(g, t, ushape, den=2)
        else:
            op, upd = arr(t, g.integers(0, 50, oshape)), arr(t, g.integers(1, 50, ushape))
        ind = arr(it, ivals)
        if name == "scatter_bf16_implicit_index_dim":
            ivd = 1             # indices u32[2]: index_vector_dim = rank = 1
        m = Module(name)
        comp = f"comb_{t}"
        if comb == "add":
            m.comp(binary_comp(comp, "add", t))
            fn = (lambda a, b, t=t: apply_scalar(t, "add", a, b))
        elif comb == "replace":
            m.comp(f"""
%{comp} (a: {t}[], b: {t}[]) -> {t}[] {{
  %{comp}.a = {t}[] parameter(0)
  ROOT %{comp}.b = {t}[] parameter(1)
}}""")
            fn = (lambda a, b: b)
        else:
            m.comp(f"""
%{comp} (a: {t}[], b: {t}[]) -> {t}[] {{
  %{comp}.a = {t}[] parameter(0)
  %{comp}.b = {t}[] parameter(1)
  %{comp}.k = {t}[] constant(3)
  %{comp}.m = {t}[] multiply({t}[] %{comp}.a, {t}[] %{comp}.k)
  ROOT %{comp}.r = {t}[] add({t}[] %{comp}.m, {t}[] %{comp}.b)
}}""")
            fn = (lambda a, b, t=t: wrap(int(a) * 3 + int(b), t))
        want = scatter_ref(op, ind, upd, uwd, iwd, sdod, ivd, fn)
        po, pi, pu = m.param(arr_shape(t, op)), m.param(arr_shape(it, ind)), m.param(arr_shape(t, upd))
        attrs = (f"update_window_dims={ilist(uwd)}, inserted_window_dims={ilist(iwd)}, "
                 f"scatter_dims_to_operand_dims={ilist(sdod)}, index_vector_dim={ivd}, "
                 f"to_apply=%{comp}")
        r = m.op(arr_shape(t, op), "scatter", po, pi, pu, attrs=attrs)
        case(name, m.text([r]), [op, ind, upd], [want])


# --------------------------------------------------------------------------
# Larger shapes: the blocked, vectorised and BLAS paths (still small files)

def fam_sort_large():
    """Sorts long enough for the merge passes: 1500 s32 keys with many
    duplicates carrying their positions (stability), and f32 rows sorted
    descending along dim 1 with zeros of both signs (equal under GT)."""
    name = "sort_large_stable"
    g = seeded(name)
    m = Module(name)
    m.comp("""
%lt_s32_pos (a: s32[], b: s32[], c: s32[], d: s32[]) -> pred[] {
  %lt_s32_pos.a = s32[] parameter(0)
  %lt_s32_pos.b = s32[] parameter(1)
  %lt_s32_pos.c = s32[] parameter(2)
  %lt_s32_pos.d = s32[] parameter(3)
  ROOT %lt_s32_pos.r = pred[] compare(s32[] %lt_s32_pos.a, s32[] %lt_s32_pos.b), direction=LT
}""")
    m.comp(cmp_comp("gt_f32", "f32", "GT"))
    k = arr("s32", g.integers(0, 20, 1500))
    pos = np.arange(1500, dtype=np.int32)
    f = g.integers(-4, 5, (2, 700)).astype(np.float32)
    f[f == 0] = np.where(g.integers(0, 2, int(np.sum(f == 0))) == 1, -0.0, 0.0).astype(np.float32)
    f[0, 100] = INF
    pk, pp, pf = m.param("s32[1500]"), m.param("s32[1500]"), m.param("f32[2,700]")
    r1 = m.op("(s32[1500], s32[1500])", "sort", pk, pp,
              attrs="dimensions={0}, is_stable=true, to_apply=%lt_s32_pos")
    r2 = m.op("f32[2,700]", "sort", pf, attrs="dimensions={1}, is_stable=true, to_apply=%gt_f32")
    w1 = stable_sort_along(k, 0, int, [pos])
    w2 = stable_sort_along(f, 1, lambda v: -float(v))[0]
    case(name, m.text([r1, r2]), [k, pos, f], [w1[0], w1[1], w2])


def fam_gather_scatter_rows():
    """Row gathers and scatters over larger tables (the row-copy paths): an
    embedding lookup with clamped indices, scatter-add of rows with
    duplicates and skipped out-of-bounds rows, scatter-replace of rows."""
    name = "gather_scatter_rows_large"
    g = seeded(name)
    m = Module(name)
    m.comp(binary_comp("add_f32", "add", "f32"))
    m.comp("""
%take_s32 (a: s32[], b: s32[]) -> s32[] {
  %take_s32.a = s32[] parameter(0)
  ROOT %take_s32.b = s32[] parameter(1)
}""")
    table = dyadic(g, "f32", (100, 16))
    gi = arr("s32", np.concatenate([g.integers(0, 100, 56), [-5, 100, 250, 99]]))
    acc = dyadic(g, "f32", (50, 16))
    si = arr("s32", np.concatenate([g.integers(0, 50, 76), [50, -1, 1000, 49]]))
    upd = dyadic(g, "f32", (80, 16))
    ints = arr("s32", g.integers(-1000, 1000, (30, 8)))
    ri = arr("s32", np.concatenate([g.permutation(30)[:20], [30, -2]]))
    rupd = arr("s32", g.integers(-1000, 1000, (22, 8)))
    params = [table, gi, acc, si, upd, ints, ri, rupd]
    types = ["f32", "s32", "f32", "s32", "f32", "s32", "s32", "s32"]
    ps = [m.param(arr_shape(t, v)) for t, v in zip(types, params)]
    gat = ("offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
           "slice_sizes={1,16}")
    sca = "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
    roots = [m.op("f32[60,16]", "gather", ps[0], ps[1], attrs=gat),
             m.op("f32[50,16]", "scatter", ps[2], ps[3], ps[4], attrs=sca + ", to_apply=%add_f32"),
             m.op("s32[30,8]", "scatter", ps[5], ps[6], ps[7], attrs=sca + ", to_apply=%take_s32")]
    outs = [gather_ref(table, gi, [1], [0], [0], 1, (1, 16)),
            scatter_ref(acc, si, upd, [1], [0], [0], 1, lambda a, b: np.float32(a + b)),
            scatter_ref(ints, ri, rupd, [1], [0], [0], 1, lambda a, b: b)]
    case(name, m.text(roots), params, outs)


# --------------------------------------------------------------------------
# Less common forms

def gather_batched_ref(operand, indices, obd, sibd, sim, collapsed, ivd, sizes):
    """gather with operand_batching_dims / start_indices_batching_dims, offset
    dims last (the layout used here): out[G..., offsets...]."""
    idx = indices[..., None] if ivd == indices.ndim else indices
    bshape = [idx.shape[d] for d in range(idx.ndim) if d != ivd]
    off_dims = [d for d in range(operand.ndim) if d not in collapsed and d not in obd]
    out = np.empty(bshape + [sizes[d] for d in off_dims], operand.dtype)
    for G in np.ndindex(*bshape):
        full = list(G)
        full.insert(ivd, 0)
        start = [0] * operand.ndim
        for k, d in enumerate(sim):
            f = list(full)
            f[ivd] = k
            start[d] = min(max(int(idx[tuple(f)]), 0), operand.shape[d] - sizes[d])
        for od, idim in zip(obd, sibd):
            start[od] = full[idim]
        for O in np.ndindex(*[sizes[d] for d in off_dims]):
            pos = list(start)
            for k, d in enumerate(off_dims):
                pos[d] += O[k]
            out[G + O] = operand[tuple(pos)]
    return out


def fam_gather_scatter_batching():
    """gather and scatter with batching dims (operand_batching_dims /
    input_batching_dims), and a variadic (two-operand) scatter."""
    name = "gather_scatter_batching_variadic"
    g = seeded(name)
    m = Module(name)
    m.comp(binary_comp("add_s32", "add", "s32"))
    m.comp("""
%add_pair (a: s32[], b: f32[], c: s32[], d: f32[]) -> (s32[], f32[]) {
  %add_pair.a = s32[] parameter(0)
  %add_pair.b = f32[] parameter(1)
  %add_pair.c = s32[] parameter(2)
  %add_pair.d = f32[] parameter(3)
  %add_pair.s = s32[] add(s32[] %add_pair.a, s32[] %add_pair.c)
  %add_pair.m = f32[] maximum(f32[] %add_pair.b, f32[] %add_pair.d)
  ROOT %add_pair.r = (s32[], f32[]) tuple(s32[] %add_pair.s, f32[] %add_pair.m)
}""")
    op = arr("f32", g.standard_normal((2, 5, 3)).astype(np.float32))
    gi = arr("s32", [[[4], [0], [7]], [[2], [-1], [2]]])            # [2,3,1]
    sop = arr("s32", g.integers(0, 100, (2, 6)))
    si = arr("s32", [[1, 5, 1], [0, 0, 9]])                          # [2,3]: batch 2, 3 each
    su = arr("s32", g.integers(1, 10, (2, 3)))
    v0 = arr("s32", g.integers(0, 10, (5,)))
    v1 = dyadic(g, "f32", (5,))
    vi = arr("s32", [[0], [4], [0], [9]])
    vu0 = arr("s32", [1, 2, 3, 4])
    vu1 = dyadic(g, "f32", (4,))
    params = [op, gi, sop, si, su, v0, v1, vi, vu0, vu1]
    types = ["f32", "s32", "s32", "s32", "s32", "s32", "f32", "s32", "s32", "f32"]
    ps = [m.param(arr_shape(t, v)) for t, v in zip(types, params)]
    r1 = m.op("f32[2,3,3]", "gather", ps[0], ps[1],
              attrs="offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
                    "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, "
                    "slice_sizes={1,1,3}")
    w1 = gather_batched_ref(op, gi, [0], [0], [1], [1], 2, (1, 1, 3))
    r2 = m.op("s32[2,6]", "scatter", ps[2], ps[3], ps[4],
              attrs="update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
                    "input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, "
                    "to_apply=%add_s32")
    w2 = sop.copy()
    for b in range(2):
        for j in range(3):
            k = int(si[b, j])
            if 0 <= k < 6:
                w2[b, k] = wrap(int(w2[b, k]) + int(su[b, j]), "s32")
    r3 = m.op("(s32[5], f32[5])", "scatter", ps[5], ps[6], ps[7], ps[8], ps[9],
              attrs="update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                    "index_vector_dim=1, to_apply=%add_pair")
    w30, w31 = v0.copy(), v1.copy()
    for j in range(4):
        k = int(vi[j, 0])
        if 0 <= k < 5:
            w30[k] = wrap(int(w30[k]) + int(vu0[j]), "s32")
            w31[k] = ieee_max(w31[k], vu1[j])
    case(name, m.text([r1, r2, r3]), params, [w1, w2, w30, w31])


def fam_conditional_tuple():
    """conditional whose branches take different operand types and return a
    tuple; a call nested in a branch; a while whose body calls a fusion."""
    name = "conditional_tuple_nested_calls"
    m = Module(name)
    m.comp("""
%sum3 (v: f32[3]) -> f32[] {
  %sum3.v = f32[3] parameter(0)
  %sum3.z = f32[] constant(0)
  ROOT %sum3.r = f32[] reduce(f32[3] %sum3.v, f32[] %sum3.z), dimensions={0}, to_apply=%sum3_add
}""")
    m.comps.insert(0, binary_comp("sum3_add", "add", "f32"))
    m.comp("""
%br_f (v: f32[3]) -> (f32[], s32[]) {
  %br_f.v = f32[3] parameter(0)
  %br_f.s = f32[] call(f32[3] %br_f.v), to_apply=%sum3
  %br_f.k = s32[] constant(-1)
  ROOT %br_f.r = (f32[], s32[]) tuple(f32[] %br_f.s, s32[] %br_f.k)
}""")
    m.comp("""
%br_i (w: s32[2]) -> (f32[], s32[]) {
  %br_i.w = s32[2] parameter(0)
  %br_i.s = s32[1] slice(s32[2] %br_i.w), slice={[1:2]}
  %br_i.a = s32[] reshape(s32[1] %br_i.s)
  %br_i.z = f32[] constant(0.25)
  ROOT %br_i.r = (f32[], s32[]) tuple(f32[] %br_i.z, s32[] %br_i.a)
}""")
    x = arr("f32", [0.5, 1.25, -3.0])
    w = arr("s32", [7, 42])
    pt, pf = arr("pred", True), arr("pred", False)
    px, pw, ppt, ppf = m.param("f32[3]"), m.param("s32[2]"), m.param("pred[]"), m.param("pred[]")
    c1 = m.op("(f32[], s32[])", "conditional", ppt, px, pw,
              attrs="true_computation=%br_f, false_computation=%br_i")
    c2 = m.op("(f32[], s32[])", "conditional", ppf, px, pw,
              attrs="true_computation=%br_f, false_computation=%br_i")
    case(name, m.text([c1, c2]), [x, w, pt, pf],
         [arr("f32", -1.25), arr("s32", -1), arr("f32", 0.25), arr("s32", 42)])


# --------------------------------------------------------------------------
# Writing

def check_param(a):
    assert isinstance(a, np.ndarray), type(a)
    assert a.dtype in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                       np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                       np.complex128), a.dtype


def extra_families():
    """The families of scripts/interp_families/*.py, in file-name order.  Each
    such file defines families(g) returning a list of functions to call; g is
    this module, whose helpers (Module, case, seeded, to_type, ...) they use."""
    import importlib.util
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interp_families")
    fams = []
    for fn in sorted(os.listdir(here)) if os.path.isdir(here) else []:
        if not fn.endswith(".py"):
            continue
        spec = importlib.util.spec_from_file_location("interp_families." + fn[:-3],
                                                      os.path.join(here, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fams += mod.families(sys.modules[__name__])
    return fams


def write_all():
    families = [fam_tuple_gte, fam_call_fusion, fam_while, fam_conditional, fam_map,
                fam_opt_barrier_after_all, fam_sort, fam_gather, fam_scatter, fam_sort_large,
                fam_gather_scatter_rows, fam_gather_scatter_batching, fam_conditional_tuple,
                fam_sort_key_types] + extra_families()
    for f in families:
        f()
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    for name, text, params, outs, compare in CASES:
        d = os.path.join(ROOT, name)
        os.makedirs(os.path.join(d, "expected"))
        with open(os.path.join(d, "module.hlo"), "w") as f:
            f.write(text)
        for i, a in enumerate(params):
            a = np.asarray(a)
            check_param(a)
            np.save(os.path.join(d, f"param{i}.rank0.npy"), a)
        for i, a in enumerate(outs):
            a = np.asarray(a)
            check_param(a)
            if a.dtype.kind == "f" and np.isnan(a).any():
                # numpy's NaN signs and payloads vary from run to run (SIMD
                # paths); every compare mode takes any NaN for any NaN.
                a = a.copy()
                a[np.isnan(a)] = np.nan
            np.save(os.path.join(d, "expected", f"out{i}.rank0.npy"), a)
        with open(os.path.join(d, "compare"), "w") as f:
            f.write(compare + "\n")
    with open(os.path.join(ROOT, "README.md"), "w") as f:
        f.write(README.format(n=len(CASES)))
    print(f"gen_interp_corpus: wrote {len(CASES)} cases to {os.path.normpath(ROOT)}")


README = """# corpus/interp/

The interpreter's op corpus: {n} cases, each a directory holding `module.hlo`,
its inputs `param<p>.rank0.npy`, the expected outputs `expected/out<i>.rank0.npy`
and `compare` (`exact`, `ulp N`, `rtol X` or `maxrel X`).  Generated, inputs and
expected values alike, by `scripts/gen_interp_corpus.py` with numpy alone (never by
running our interpreter): edit the generator and rerun it with
`/usr/bin/python3 scripts/gen_interp_corpus.py` rather than editing files here.
`scripts/run_interp_corpus.sh` (part of `make test`) runs each module with
`hlo-run --inputs` and compares.
"""


if __name__ == "__main__":
    if len(sys.argv) > 1:
        raise SystemExit("usage: gen_interp_corpus.py (no arguments)")
    write_all()
