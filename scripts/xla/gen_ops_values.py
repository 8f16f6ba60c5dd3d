"""gen_ops_values.py: element types, input values and the module builder of
gen_ops.py (the op-level generator that checks hlo-run against XLA:CPU).

  TYPES            element type name -> Ty(name, numpy dtype in memory, kind, bits)
  draw(rng, t, shape, dom)
                   an array of type t: dom "uniform" (ordinary values),
                   "boundary" (about half the elements from the type's
                   special values: NaNs of both signs with payloads, quiet and
                   signalling, +-inf, -0, subnormals, extremes, ties, integer
                   limits, shift counts at the bit width), "bits" (random bit
                   patterns), "tame" (boundary without huge finite values:
                   for sums, whose overflow then depends on the order)
  draw_index(...)  indices, mostly in range, some out of bounds (negative,
                   huge, u64 >= 2^63)
  to_file(a, t)    the array as hlo-run and xla_run.py read it (bf16 / f8 /
                   f4 as raw bits, s4 / u4 as i1 / u1, pred as b1)
  Inst             one op instance under construction: its parameters (one
                   array per rank), its lines, its called computations and
                   its array results
  assemble(...)    the HLO text of a module of instances, ROOT a tuple of
                   every instance's results
"""
import collections
import copy
import re

import ml_dtypes
import numpy as np

Ty = collections.namedtuple("Ty", "name dtype kind bits")

TYPES = {t.name: t for t in [
    Ty("pred", np.dtype(np.bool_), "pred", 8),
    Ty("s4", np.dtype(ml_dtypes.int4), "s", 4),
    Ty("s8", np.dtype(np.int8), "s", 8),
    Ty("s16", np.dtype(np.int16), "s", 16),
    Ty("s32", np.dtype(np.int32), "s", 32),
    Ty("s64", np.dtype(np.int64), "s", 64),
    Ty("u4", np.dtype(ml_dtypes.uint4), "u", 4),
    Ty("u8", np.dtype(np.uint8), "u", 8),
    Ty("u16", np.dtype(np.uint16), "u", 16),
    Ty("u32", np.dtype(np.uint32), "u", 32),
    Ty("u64", np.dtype(np.uint64), "u", 64),
    Ty("f16", np.dtype(np.float16), "f", 16),
    Ty("bf16", np.dtype(ml_dtypes.bfloat16), "f", 16),
    Ty("f32", np.dtype(np.float32), "f", 32),
    Ty("f64", np.dtype(np.float64), "f", 64),
    Ty("f8e5m2", np.dtype(ml_dtypes.float8_e5m2), "f8", 8),
    Ty("f8e4m3", np.dtype(ml_dtypes.float8_e4m3), "f8", 8),
    Ty("f8e4m3fn", np.dtype(ml_dtypes.float8_e4m3fn), "f8", 8),
    Ty("f8e4m3b11fnuz", np.dtype(ml_dtypes.float8_e4m3b11fnuz), "f8", 8),
    Ty("f8e3m4", np.dtype(ml_dtypes.float8_e3m4), "f8", 8),
    Ty("f8e5m2fnuz", np.dtype(ml_dtypes.float8_e5m2fnuz), "f8", 8),
    Ty("f8e4m3fnuz", np.dtype(ml_dtypes.float8_e4m3fnuz), "f8", 8),
    Ty("f8e8m0fnu", np.dtype(ml_dtypes.float8_e8m0fnu), "f8", 8),
    Ty("f4e2m1fn", np.dtype(ml_dtypes.float4_e2m1fn), "f8", 4),
    Ty("c64", np.dtype(np.complex64), "c", 64),
    Ty("c128", np.dtype(np.complex128), "c", 128),
]}

SINTS = ["s8", "s16", "s32", "s64"]
UINTS = ["u8", "u16", "u32", "u64"]
INTS = SINTS + UINTS
FLOATS = ["f16", "bf16", "f32", "f64"]
NARROW = ["f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4", "f8e5m2fnuz", "f8e4m3fnuz",
          "f8e8m0fnu", "f4e2m1fn"]
COMPLEX = ["c64", "c128"]
SUB_BYTE = ["s4", "u4"]
# The types XLA:CPU computes in (pred and ints and the four floats); the
# narrow floats and sub-byte ints mostly through converts and data movement.
NUMERIC = INTS + FLOATS
ALL = ["pred"] + INTS + SUB_BYTE + FLOATS + NARROW + COMPLEX
INDEX_TYPES = ["s32", "s32", "s32", "s64", "s8", "s16", "u8", "u16", "u32", "u64"]
FLOAT_PART = {"c64": "f32", "c128": "f64"}


def ty(t):
    return TYPES[t]


def int_range(t):
    info = ml_dtypes.iinfo(TYPES[t].dtype)
    return int(info.min), int(info.max)


def _mant_exp(t):
    """(mantissa bits, exponent bits) of an IEEE-like float type."""
    fi = ml_dtypes.finfo(TYPES[t].dtype)
    return int(fi.nmant), int(fi.nexp)


def _bits_dtype(bits):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]


def nan_patterns(t):
    """Bit patterns of NaNs of an f16/bf16/f32/f64 type: quiet and signalling,
    with and without payloads, both signs."""
    bits = TYPES[t].bits
    m, e = _mant_exp(t)
    exp = ((1 << e) - 1) << m
    quiet = 1 << (m - 1)
    pay = 0x5 if m < 12 else 0x12345
    mants = [quiet, quiet | pay, pay, 1, (1 << m) - 1]      # quiet, quiet+payload, signalling...
    out = []
    for sign in (0, 1 << (bits - 1)):
        out += [sign | exp | mm for mm in mants]
    return out


def float_specials(t):
    """Special values of an f16/bf16/f32/f64 type, as an array of the type."""
    dt = TYPES[t].dtype
    fi = ml_dtypes.finfo(dt)
    tiny, sub, mx = float(fi.tiny), float(fi.smallest_subnormal), float(fi.max)
    vals = [0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 0.1, mx, -mx, tiny, -tiny, sub, -sub,
            tiny - sub, -(tiny - sub), 3 * sub, float("inf"), float("-inf"), 1 + float(fi.eps),
            2.0 ** 31, -2.0 ** 31, 2.0 ** 31 - 64, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e10,
            255.5, 256.0, -128.5, -129.0, 65504.0, 65520.0, 127.5, 32767.5, -32768.5, 4294967295.0]
    with np.errstate(over="ignore"):
        a = np.array(vals, dtype=np.float64).astype(dt)
    neg_zero = np.array([-0.0]).astype(dt)
    bits = np.array(nan_patterns(t), dtype=_bits_dtype(TYPES[t].bits)).view(dt)
    return np.concatenate([a, neg_zero, neg_zero, bits])


def int_specials(t):
    lo, hi = int_range(t)
    b = TYPES[t].bits
    cand = [lo, hi, 0, 1, -1, lo + 1, hi - 1, 2, 3, b - 1, b, b + 1, 2 * b, 63, 64, 65, 127, 128, 255, 256,
            32767, 32768, 65535, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, -2, -b, -128]
    keep = sorted({v for v in cand if lo <= v <= hi})
    return np.array(keep, dtype=object)


def _uniform(rng, t, n):
    k = TYPES[t].kind
    if k == "pred":
        return rng.random(n) < 0.5
    if k in "su":
        lo, hi = int_range(t)
        if TYPES[t].bits > 8 and rng.random() < 0.5:
            lo, hi = max(lo, -1000), min(hi, 1000)
        return np.array([int(v) for v in rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64)]
                        if hi < 2 ** 63 else [int(v) for v in rng.integers(0, 2 ** 64, size=n, dtype=np.uint64)],
                        dtype=object)
    if t == "f8e8m0fnu":        # powers of two only, no sign
        return np.ldexp(1.0, rng.integers(-12, 12, size=n))
    if k == "f8":
        mx = float(ml_dtypes.finfo(TYPES[t].dtype).max)
        return rng.uniform(-min(mx, 8.0), min(mx, 8.0), size=n)
    return rng.uniform(-4, 4, size=n) * np.where(rng.random(n) < 0.2, 64.0, 1.0)


def _bits(rng, t, n):
    b = TYPES[t].bits
    if b == 4:
        return rng.integers(0, 16, size=n).astype(np.uint8)
    return rng.integers(0, 2 ** b, size=n, dtype=np.uint64).astype(_bits_dtype(b))


def draw(rng, t, shape, dom="uniform"):
    """An array of element type t (in its in-memory numpy dtype) of shape."""
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    T = TYPES[t]
    if T.kind == "c":
        part = FLOAT_PART[t]
        re, im = draw(rng, part, shape, dom), draw(rng, part, shape, dom)
        out = np.zeros(shape, T.dtype)
        out.real, out.imag = re, im         # not re + 1j * im: inf * 1j is nan + inf j
        return out
    if T.kind == "f8":
        if dom in ("boundary", "bits", "tame") and rng.random() < 0.8:
            # every bit pattern of a narrow float is a boundary case
            raw = _bits(rng, t, n).astype(np.uint8)
            return raw.view(T.dtype).reshape(shape)
        with np.errstate(over="ignore"):
            return _uniform(rng, t, n).astype(np.float64).astype(T.dtype).reshape(shape)
    if dom == "bits" and T.kind == "f":
        return _bits(rng, t, n).view(T.dtype).reshape(shape)
    vals = _uniform(rng, t, n)
    if dom in ("boundary", "tame", "bits") and n:
        if T.kind == "f":
            sp = float_specials(t)
            if dom == "tame":
                with np.errstate(invalid="ignore"):
                    sp = sp[~(np.abs(sp.astype(np.float64)) > 4)]
            pick = rng.random(n) < 0.5
            idx = rng.integers(0, len(sp), size=n)
            out = np.where(pick, sp[idx], vals.astype(T.dtype))
            return out.astype(T.dtype).reshape(shape)
        if T.kind in "su":
            sp = int_specials(t)
            pick = rng.random(n) < 0.5
            idx = rng.integers(0, len(sp), size=n)
            vals = np.where(pick, sp[idx], vals)
    if T.kind in "su":
        return np.array([int(v) for v in vals], dtype=object).astype(T.dtype).reshape(shape) if n else \
            np.zeros(shape, T.dtype)
    with np.errstate(over="ignore"):
        return np.asarray(vals).astype(np.float64 if T.kind == "f" else T.dtype).astype(T.dtype).reshape(shape)


def draw_index(rng, t, shape, bound, oob=0.25):
    """Indices of type t: uniform in [0, bound] with probability 1 - oob,
    else an out-of-range value (negative, just past, huge, the type's limits,
    u64 >= 2^63)."""
    lo, hi = int_range(t)
    n = int(np.prod(shape, dtype=np.int64))
    out = []
    for _ in range(n):
        if rng.random() >= oob:
            v = int(rng.integers(0, max(bound, 0) + 1))
        else:
            cand = [-1, -2, -bound - 3, bound + 1, bound + 7, hi, lo, hi - 1, 2 ** 31, 2 ** 63, 2 ** 63 + 5,
                    2 ** 64 - 1, 2 ** 32 - 1, 2 ** 31 + 5, -2 ** 31]
            cand = [c for c in cand if lo <= c <= hi]
            v = cand[int(rng.integers(0, len(cand)))]
        out.append(min(max(v, lo), hi))
    return np.array(out, dtype=object).astype(TYPES[t].dtype).reshape(shape) if n else np.zeros(shape, TYPES[t].dtype)


def to_file(a, t):
    """The array as the .npy both tools read for a parameter of type t."""
    T = TYPES[t]
    if t in ("s4",):
        return a.astype(np.int8)
    if t in ("u4",):
        return a.astype(np.uint8)
    if T.kind == "f8" or t == "bf16":
        if T.bits == 4:
            return a.view(np.uint8)
        return np.asarray(a, order="C").view(_bits_dtype(T.bits))   # not ascontiguousarray: 0-d stays 0-d
    return np.asarray(a, order="C")


def flush_subnormals(a, t):
    """a with its subnormals made zeros of their sign, for the types XLA:CPU
    flushes (f32, f64, bf16; and the parts of c64 / c128).  f16 is computed
    in f32 by XLA:CPU, where its subnormals are normal numbers: kept."""
    if t in COMPLEX:
        p = FLOAT_PART[t]
        out = a.copy()
        out.real, out.imag = flush_subnormals(a.real.copy(), p), flush_subnormals(a.imag.copy(), p)
        return out
    if t not in ("f32", "f64", "bf16") or a.size == 0:
        return a
    tiny = float(ml_dtypes.finfo(a.dtype).tiny)
    with np.errstate(invalid="ignore"):
        w = a.astype(np.float64)
    sub = (w != 0) & (np.abs(w) < tiny)
    if not sub.any():
        return a
    out = a.copy()
    out[sub] = np.copysign(np.zeros(1), w[sub]).astype(a.dtype)
    return out


# ---------------------------------------------------------------------------
# Shapes as HLO text

def shp(t, dims, layout=None):
    """'f32[2,3]' or 'f32[2,3]{0,1}' (layout: minor_to_major)."""
    s = "%s[%s]" % (t, ",".join(str(d) for d in dims))
    if layout is not None:
        s += "{%s}" % ",".join(str(d) for d in layout)
    return s


def tuple_shp(shapes):
    return "(" + ", ".join(shapes) + ")"


def random_dims(rng, rank=None, max_elems=48, empty=0.06, max_dim=6):
    """Random dimensions: rank 0..4, sometimes an empty dimension."""
    if rank is None:
        rank = int(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4]))
    dims = [int(rng.integers(1, max_dim + 1)) for _ in range(rank)]
    while int(np.prod(dims, dtype=np.int64)) > max_elems:
        i = int(np.argmax(dims))
        dims[i] = max(1, dims[i] // 2)
    if rank and rng.random() < empty:
        dims[int(rng.integers(0, rank))] = 0
    return dims


def random_layout(rng, rank, p=0.35):
    """None (the default layout) or a permuted minor_to_major."""
    if rank < 2 or rng.random() >= p:
        return None
    return [int(x) for x in rng.permutation(rank)]


# ---------------------------------------------------------------------------
# One op instance

class Inst:
    """An op instance: parameters (one array per rank), the instructions of
    the entry computation that compute its results, the computations they
    call.  Names are prefixed with the instance's slot (%o3.) so that
    instances mix in one module and any subset of them forms a module."""

    def __init__(self, key, slot, rng, ranks, kind):
        self.key = key              # the op table's name of the generator
        self.slot = slot
        self.rng = rng
        self.ranks = ranks
        self.kind = kind            # the case's input kind: uniform / boundary / bits
        self.pre = "o%d." % slot
        self.params = []            # (name, shape text, type, [array per rank], domain)
        self.lines = []
        self.comps = []             # computation texts
        self.shapes = {}            # value name -> shape text
        self.results = []           # (name, shape text, element type)
        self.opcode = key           # the opcode under test, for the counts
        self.desc = ""              # its attributes and types, for the reports
        # explanations to try when a result differs: (cause, side, lines,
        # comps): the same results computed another way (lines or comps
        # replacing the instance's own), run by side "hlo" or "xla"
        self.variants = []
        self._n = 0

    # -- names and values
    def fresh(self, base):
        self._n += 1
        return "%%%s%s%d" % (self.pre, base.replace("-", "_"), self._n)

    def param(self, t, dims, dom=None, values=None, per_rank=True):
        """A parameter of type t: values (one array, or a list per rank), or
        drawn from dom (default: the case's kind) on every rank."""
        name = self.fresh("p")
        dom = dom or self.kind
        if values is None:
            arrays = [draw(self.rng, t, dims, dom) for _ in range(self.ranks if per_rank else 1)]
            if not per_rank:
                arrays = arrays * self.ranks
        elif isinstance(values, list):
            arrays = values
        else:
            arrays = [values] * self.ranks
        s = shp(t, dims)
        self.params.append((name, s, t, arrays, dom))
        self.shapes[name] = s
        return name

    def index_param(self, t, dims, bound, oob=0.25):
        vals = [draw_index(self.rng, t, dims, bound, oob) for _ in range(self.ranks)]
        return self.param(t, dims, dom="index", values=vals)

    def op(self, shape, opcode, operands, attrs="", base=None):
        n = self.fresh(base or opcode)
        ops = ", ".join("%s %s" % (self.shapes[o], o) for o in operands)
        self.lines.append("  %s = %s %s(%s)%s" % (n, shape, opcode, ops, (", " + attrs) if attrs else ""))
        self.shapes[n] = shape
        return n

    def const(self, t, text):
        n = self.fresh("c")
        self.lines.append("  %s = %s[] constant(%s)" % (n, t, text))
        self.shapes[n] = "%s[]" % t
        return n

    def gte(self, tup, index, shape):
        return self.op(shape, "get-tuple-element", [tup], "index=%d" % index, base="gte")

    def out(self, name, etype):
        self.results.append((name, self.shapes[name], etype))

    # -- called computations
    def comp(self, base, params, root_shape, body):
        """A computation: params [(name, shape)], body(lines, names) fills
        the lines and returns the root's text ('shape op(...)...')."""
        cname = "%%%s%s" % (self.pre, base)
        k = 1
        while any(c.startswith(cname + "_%d " % k) for c in self.comps):
            k += 1
        cname = "%s_%d" % (cname, k)
        lines = []
        names = []
        for i, (pn, ps) in enumerate(params):
            n = "%s.%s" % (cname, pn)
            names.append(n)
            lines.append("  %s = %s parameter(%d)" % (n, ps, i))
        root = body(lines, names, cname)
        lines.append("  ROOT %s.root = %s" % (cname, root))
        sig = ", ".join("%s: %s" % (pn, ps) for pn, ps in params)
        self.comps.append("%s (%s) -> %s {\n%s\n}\n" % (cname, sig, root_shape, "\n".join(lines)))
        return cname

    def binary_comp(self, op, t, base=None):
        """(x: t[], y: t[]) -> t[] { op(x, y) }"""
        s = "%s[]" % t
        cname = self.comp(base or op.replace("-", "_"), [("x", s), ("y", s)], s,
                          lambda lines, n, c: "%s %s(%s %s, %s %s)" % (s, op, s, n[0], s, n[1]))
        return cname

    def select_fold_variant(self, cname, t, op, operands=()):
        """A variant of a collective's max/min reducer cname: acc = (x OP acc)
        ? x : acc from the identity (a NaN accumulator read as the identity,
        which is where a fold from the first value and one from the identity
        part).  NaN operands are then dropped and -0 / +0 go by order: the
        cause 'select-fold' when hlo-run then agrees with XLA."""
        self.variant("select-fold", "hlo", lambda: self.copy_with(comps=self._select_fold(cname, t, op),
                                                                   lines=self._identity_for_nan(t, op, operands)))

    def _identity_for_nan(self, t, op, operands):
        """The instance's lines with each collective operand's NaNs made the
        identity first: what the select fold gives a group of one (which
        never calls the reducer)."""
        lines = []
        ident = "-inf" if op == "maximum" else "inf"
        rename = {}
        for x in operands:
            s = self.shapes[x]
            dims = s[s.index("["):s.index("]") + 1]
            b = "%s.sf" % x
            lines += ["  %s.id = %s[] constant(%s)" % (b, t, ident),
                      "  %s.idb = %s broadcast(%s[] %s.id), dimensions={}" % (b, s, t, b),
                      "  %s.nan = pred%s compare(%s %s, %s %s), direction=NE" % (b, dims, s, x, s, x),
                      "  %s = %s select(pred%s %s.nan, %s %s.idb, %s %s)" % (b, s, dims, b, s, b, s, x)]
            rename[x] = b
        for ln in self.lines:
            for x, b in rename.items():
                ln = re.sub(re.escape(x) + r"(?=[,)])", b, ln)
            lines.append(ln)
        return lines

    def _select_fold(self, cname, t, op):
        s = "%s[]" % t
        ident = "-inf" if op == "maximum" else "inf"
        out = []
        for c in self.comps:
            if not c.startswith(cname + " "):
                out.append(c)
                continue
            acc, x = "%s.x" % cname, "%s.y" % cname
            body = ["  %s = %s parameter(0)" % (acc, s), "  %s = %s parameter(1)" % (x, s),
                    "  %s.id = %s constant(%s)" % (cname, s, ident),
                    "  %s.nan = pred[] compare(%s %s, %s %s), direction=NE" % (cname, s, acc, s, acc),
                    "  %s.a = %s select(pred[] %s.nan, %s %s.id, %s %s)" % (cname, s, cname, s, cname, s, acc),
                    "  %s.take = pred[] compare(%s %s, %s %s.a), direction=%s"
                    % (cname, s, x, s, cname, "GT" if op == "maximum" else "LT"),
                    "  ROOT %s.root = %s select(pred[] %s.take, %s %s, %s %s.a)" % (cname, s, cname, s, x, s, cname)]
            out.append("%s (x: %s, y: %s) -> %s {\n%s\n}\n" % (cname, s, s, s, "\n".join(body)))
        return out

    def compare_comp(self, types, direction, ctype=None, key=0):
        """A sort comparator over len(types) operands comparing operand key."""
        params = []
        for i, t in enumerate(types):
            params += [("a%d" % i, "%s[]" % t), ("b%d" % i, "%s[]" % t)]
        t = types[key]
        extra = (", type=%s" % ctype) if ctype else ""
        return self.comp("cmp", params, "pred[]",
                         lambda lines, n, c: "pred[] compare(%s[] %s, %s[] %s), direction=%s%s"
                         % (t, n[2 * key], t, n[2 * key + 1], direction, extra))

    def leaves(self):
        return len(self.results)

    def variant(self, cause, side, make):
        """make() -> a copy of this instance computing the same results
        another way (copy_with)."""
        self.variants.append((cause, side, make))

    def copy_with(self, lines=None, comps=None):
        c = copy.copy(self)
        c.lines = lines if lines is not None else self.lines
        c.comps = comps if comps is not None else self.comps
        return c

    def nan_dropping_variant(self, cname, t):
        """A variant whose max/min reducer cname returns the other operand
        when one is NaN (C's fmax/fmin): the cause 'drops NaN' when hlo-run
        then agrees with XLA."""
        self.variant("drops-nan", "hlo", lambda: self.copy_with(comps=self._nan_dropping(cname, t)))

    def _nan_dropping(self, cname, t):
        s = "%s[]" % t
        comps = []
        for c in self.comps:
            m = re.match(r"^(%s \(x: [^)]*\) -> \S+ \{\n)(.*?)(  ROOT (\S+) = \S+ (maximum|minimum)\((.*)\)\n\}\n)$"
                         % re.escape(cname), c, re.S)
            if not m:
                comps.append(c)
                continue
            x, y = "%s.x" % cname, "%s.y" % cname
            body = [m.group(2).rstrip("\n"),
                    "  %s.m = %s %s(%s %s, %s %s)" % (cname, s, m.group(5), s, x, s, y),
                    "  %s.nx = pred[] compare(%s %s, %s %s), direction=NE" % (cname, s, x, s, x),
                    "  %s.ny = pred[] compare(%s %s, %s %s), direction=NE" % (cname, s, y, s, y),
                    "  %s.a = %s select(pred[] %s.ny, %s %s, %s %s.m)" % (cname, s, cname, s, x, s, cname),
                    "  ROOT %s.root = %s select(pred[] %s.nx, %s %s, %s %s.a)" % (cname, s, cname, s, y, s, cname)]
            comps.append(m.group(1) + "\n".join(body) + "\n}\n")
        return comps


def assemble(name, insts, replicas=None, partitions=None):
    """The module text of the instances, and [(param file stem, type, arrays
    per rank)] in parameter order."""
    header = "HloModule %s" % name
    if replicas is not None:
        header += ", replica_count=%d" % replicas
    if partitions is not None:
        header += ", num_partitions=%d" % partitions
    comps, body, params, sig, results = [], [], [], [], []
    for inst in insts:
        comps += inst.comps
        for pname, pshape, t, arrays, dom in inst.params:
            k = len(params)
            body.append("  %s = %s parameter(%d)" % (pname, pshape, k))
            sig.append("p%d: %s" % (k, pshape))
            params.append((k, t, arrays, dom))
        body += inst.lines
        results += inst.results
    rshape = tuple_shp([s for _, s, _ in results])
    body.append("  ROOT %%root = %s tuple(%s)" % (rshape, ", ".join("%s %s" % (s, n) for n, s, _ in results)))
    text = "%s\n\n%s\nENTRY %%main (%s) -> %s {\n%s\n}\n" % (header, "\n".join(comps), ", ".join(sig), rshape,
                                                           "\n".join(body))
    return text, params
