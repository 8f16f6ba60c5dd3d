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

The cases are written by the family modules scripts/interp_families/*.py
(one per op family; its README.md says how one is written), each calling
case() with this module's helpers: element types and rounding, Module (the
HLO text), numpy references shared by several families.  This file loads
them in file-name order and writes the corpus.

Every expected value is computed in Python, from the semantics of
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
# Operand data and attribute text

def dyadic(rng, t, shape, lo=-8, hi=8, den=4):
    """Small multiples of 1/den drawn from rng: every product and partial sum
    is exact, so any summation order gives the same bits."""
    return arr(t, (rng.integers(lo * den, hi * den + 1, shape) / den).astype(np.float32))


def ilist(v):
    return "{" + ",".join(map(str, v)) + "}"


# --------------------------------------------------------------------------
# Writing

def check_param(a):
    assert isinstance(a, np.ndarray), type(a)
    assert a.dtype in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                       np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                       np.complex128), a.dtype


def all_families():
    """The families of scripts/interp_families/*.py, in file-name order.  Each
    such file defines families(g) returning a list of functions to call; g is
    this module, whose helpers (Module, case, seeded, to_type, ...) they use."""
    import importlib.util
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interp_families")
    fams = []
    for fn in sorted(os.listdir(here)):
        if not fn.endswith(".py"):
            continue
        spec = importlib.util.spec_from_file_location("interp_families." + fn[:-3],
                                                      os.path.join(here, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fams += mod.families(sys.modules[__name__])
    return fams


def write_all():
    for f in all_families():
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
