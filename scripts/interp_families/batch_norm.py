"""batch_norm.py: batch-norm-training, -inference and -grad cases.

Two kinds of case:

* "exact": the expected values emulate XLA's BatchNormExpander op by op in
  numpy: every op of the expansion rounded to the element type (f16/bf16
  computed in f32 and rounded once per op), the sums left folds from 0 over
  the non-feature positions in row-major order, the variance as
  E[x^2] - E[x]^2, rsqrt as 1/sqrt in f32 (f64 for f64), the element count
  and epsilon (an f32, as XLA keeps it) converted to the type.  These pin the
  formula and the rounding to the bit, in f16, bf16, f32 and f64.

* "ref": the expected values are the mathematical batch norm evaluated in
  long double (two-pass variance, 64-bit mantissa), and the tolerance is an
  a-priori bound: the same expansion is run through a first-order running
  error analysis (each rounded op adds at most u |result| on top of the
  propagated errors of its inputs, u = 2^-p of the type; a fold of n terms
  therefore accumulates up to ~n u sum|terms|; rsqrt adds its derivative
  times the input error and three roundings), giving a bound e_i for every
  output element.  The case's rtol is max_i e_i / |want_i| (inputs are
  chosen so that no output is near zero, which a relative tolerance could not
  handle), rounded up.  The generator checks that the exact emulation meets
  |emulation_i - want_i| <= e_i, element by element.  These check the op
  against the mathematics with a tolerance that follows from the algorithm,
  not from trial and error.
"""
import math

import numpy as np

U = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 2.0 ** -24, "f64": 2.0 ** -53}
U32 = 2.0 ** -24
LD = np.longdouble


# --------------------------------------------------------------------------
# The expansion, op by op in the element type

class Expansion:
    """The ops of BatchNormExpander in element type t; arrays are in the
    moved layout [..., F] (feature dim last), per-feature arrays [F]."""

    def __init__(self, g, t):
        self.g, self.t = g, t

    def op(self, fn, *args):
        return self.g.fl(self.t, fn, *args)

    def add(self, a, b):
        return self.op(np.add, a, b)

    def sub(self, a, b):
        return self.op(np.subtract, a, b)

    def mul(self, a, b):
        return self.op(np.multiply, a, b)

    def div(self, a, b):
        return self.op(np.divide, a, b)

    def rsqrt(self, a):
        return self.op(lambda v: np.ones_like(v) / np.sqrt(v), a)

    def fold(self, xm):
        """Left fold of add from 0 over the leading positions, row-major."""
        rows = xm.reshape(-1, xm.shape[-1])
        acc = self.g.arr(self.t, np.zeros(xm.shape[-1]))
        for r in rows:
            acc = self.add(acc, r)
        return acc

    def const(self, v):
        return self.g.arr(self.t, float(v))


def count_of(xm):
    return int(np.prod(xm.shape[:-1], dtype=np.int64))


def eps_of(g, t, text):
    """XLA keeps epsilon as an f32 (parsed as a double, then narrowed)."""
    return g.arr(t, float(np.float32(float(text))))


def training_exact(g, t, xm, scale, offset, eps):
    e = Expansion(g, t)
    n = e.const(count_of(xm))
    mean = e.div(e.fold(xm), n)
    var = e.sub(e.div(e.fold(e.mul(xm, xm)), n), e.mul(mean, mean))
    rs = e.rsqrt(e.add(var, eps))
    out = e.add(e.mul(e.mul(e.sub(xm, mean), rs), scale), offset)
    return out, mean, var


def inference_exact(g, t, xm, scale, offset, mean, var, eps):
    e = Expansion(g, t)
    k = e.mul(scale, e.rsqrt(e.add(var, eps)))
    shift = e.sub(offset, e.mul(mean, k))
    return e.add(e.mul(xm, k), shift)


def grad_exact(g, t, xm, scale, mean, var, dy, eps):
    e = Expansion(g, t)
    n = e.const(count_of(xm))
    ve = e.add(var, eps)
    rs = e.rsqrt(ve)
    xmm = e.sub(xm, mean)
    s = e.fold(e.mul(dy, xmm))
    sdy = e.fold(dy)
    c = e.div(e.mul(scale, rs), n)
    i6 = e.sub(e.sub(e.mul(dy, n), sdy), e.div(e.mul(s, xmm), ve))
    return e.mul(c, i6), e.mul(s, rs), sdy


# --------------------------------------------------------------------------
# The same expansion under a running error bound, and the math reference

class Bounded:
    """A value (long double) and a bound on the error of the computed one."""

    def __init__(self, v, e=None):
        self.v = np.asarray(v, LD)
        self.e = np.zeros(self.v.shape, LD) if e is None else np.asarray(e, LD)


class BoundedOps:
    """First-order bounds: an op rounded once adds u |result| to the
    propagated error; products keep the cross term, quotients and rsqrt use
    the worst divisor the input error allows."""

    def __init__(self, t):
        self.t = t
        self.u = LD(U[t])

    def rounded(self, v, e, u=None):
        u = self.u if u is None else u
        return Bounded(v, e + u * (np.abs(v) + e))

    def add(self, a, b):
        return self.rounded(a.v + b.v, a.e + b.e)

    def sub(self, a, b):
        return self.rounded(a.v - b.v, a.e + b.e)

    def mul(self, a, b):
        return self.rounded(a.v * b.v, np.abs(a.v) * b.e + np.abs(b.v) * a.e + a.e * b.e)

    def div(self, a, b):
        low = np.abs(b.v) - b.e
        assert np.all(low > 0), "divisor not bounded away from zero"
        q = a.v / b.v
        return self.rounded(q, (a.e + np.abs(q) * b.e) / low)

    def rsqrt(self, a):
        low = a.v - a.e
        assert np.all(low > 0), "rsqrt argument not bounded away from zero"
        r = 1 / np.sqrt(a.v)
        # f32 sqrt and divide (f64 for f64), then the type
        u = 2 * self.u if self.t == "f64" else 2 * LD(U32) + (self.u if self.t in ("f16", "bf16") else 0)
        return self.rounded(r, a.e / (2 * low * np.sqrt(low)), u)

    def fold(self, xm):
        rows_v = xm.v.reshape(-1, xm.v.shape[-1])
        rows_e = xm.e.reshape(-1, xm.e.shape[-1])
        acc = Bounded(np.zeros(xm.v.shape[-1]))
        for rv, re in zip(rows_v, rows_e):
            acc = self.add(acc, Bounded(rv, re))
        return acc


def ex(a):
    return Bounded(np.asarray(a, np.float64))


def training_bound(t, xm, scale, offset, eps):
    b = BoundedOps(t)
    x, n = ex(xm), ex(count_of(xm))
    mean = b.div(b.fold(x), n)
    var = b.sub(b.div(b.fold(b.mul(x, x)), n), b.mul(mean, mean))
    rs = b.rsqrt(b.add(var, ex(eps)))
    out = b.add(b.mul(b.mul(b.sub(x, mean), rs), ex(scale)), ex(offset))
    return out, mean, var


def inference_bound(t, xm, scale, offset, mean, var, eps):
    b = BoundedOps(t)
    k = b.mul(ex(scale), b.rsqrt(b.add(ex(var), ex(eps))))
    shift = b.sub(ex(offset), b.mul(ex(mean), k))
    return (b.add(b.mul(ex(xm), k), shift),)


def grad_bound(t, xm, scale, mean, var, dy, eps):
    b = BoundedOps(t)
    n, d = ex(count_of(xm)), ex(dy)
    ve = b.add(ex(var), ex(eps))
    rs = b.rsqrt(ve)
    xmm = b.sub(ex(xm), ex(mean))
    s = b.fold(b.mul(d, xmm))
    sdy = b.fold(d)
    c = b.div(b.mul(ex(scale), rs), n)
    i6 = b.sub(b.sub(b.mul(d, n), sdy), b.div(b.mul(s, xmm), ve))
    return b.mul(c, i6), b.mul(s, rs), sdy


def ld(a):
    return np.asarray(a, np.float64).astype(LD)


def training_ref(xm, scale, offset, eps):
    x = ld(xm)
    axes = tuple(range(x.ndim - 1))
    mean = x.mean(axis=axes)
    var = ((x - mean) ** 2).mean(axis=axes)
    return (x - mean) / np.sqrt(var + ld(eps)) * ld(scale) + ld(offset), mean, var


def inference_ref(xm, scale, offset, mean, var, eps):
    return ((ld(xm) - ld(mean)) * ld(scale) / np.sqrt(ld(var) + ld(eps)) + ld(offset),)


def grad_ref(xm, scale, mean, var, dy, eps):
    x, d = ld(xm), ld(dy)
    axes = tuple(range(x.ndim - 1))
    n = LD(count_of(xm))
    ve = ld(var) + ld(eps)
    r = 1 / np.sqrt(ve)
    xc = x - ld(mean)
    s = (d * xc).sum(axis=axes)
    sdy = d.sum(axis=axes)
    gx = ld(scale) * r / n * (n * d - sdy - xc * s / ve)
    return gx, s * r, sdy


# --------------------------------------------------------------------------
# Cases

OPS = {
    "training": ("batch-norm-training", ["scale", "offset"], training_exact, training_bound, training_ref),
    "inference": ("batch-norm-inference", ["scale", "offset", "mean", "variance"], inference_exact,
                  inference_bound, inference_ref),
    "grad": ("batch-norm-grad", ["scale", "mean", "variance", "grad_output"], grad_exact, grad_bound, grad_ref),
}


def module(g, name, op, t, x, fi, feats, eps_text):
    """The module: parameters x and the per-feature (or x-shaped) operands,
    one batch-norm op as the root."""
    opcode = OPS[op][0]
    m = g.Module(name)
    ps = [m.param(g.arr_shape(t, x))] + [m.param(g.arr_shape(t, a)) for a in feats]
    xs, fs = g.arr_shape(t, x), g.shape_str(t, [x.shape[fi]])
    shape = xs if op == "inference" else f"({xs}, {fs}, {fs})"
    r = m.op(shape, opcode, *ps, attrs=f"epsilon={eps_text}, feature_index={fi}")
    return m.text([r])


def moved(a, fi):
    return np.moveaxis(a, fi, -1)


def back(a, fi, ndim):
    return np.ascontiguousarray(np.moveaxis(np.asarray(a), -1, fi) if np.ndim(a) == ndim else a)


def run_exact(g, op, t, x, fi, feats, eps_text):
    """The expansion's results, in the operand's layout."""
    ins = [moved(a, fi) if a.shape == x.shape else a for a in feats]
    outs = OPS[op][2](g, t, moved(x, fi), *ins, eps_of(g, t, eps_text))
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [back(o, fi, x.ndim) for o in outs]


def stored(t, a):
    """An expected array in the dtype hlo-run writes, rounded to t (bf16
    only from the exact cases, whose values are bf16 already, held in f32)."""
    return np.asarray(a).astype({"bf16": np.float32, "f16": np.float16, "f32": np.float32,
                                 "f64": np.float64}[t])


def exact_case(g, name, op, t, x, fi, feats, eps_text="0.001"):
    outs = run_exact(g, op, t, x, fi, feats, eps_text)
    g.case(name, module(g, name, op, t, x, fi, feats, eps_text), [x] + feats, [stored(t, o) for o in outs])


def ref_case(g, name, op, t, x, fi, feats, eps_text, limit):
    """Against the long-double reference within the bound's rtol (checked to
    be below limit, and met by the exact emulation element by element)."""
    eps = eps_of(g, t, eps_text)
    ins = [moved(a, fi) if a.shape == x.shape else a for a in feats]
    want = [back(w, fi, x.ndim) for w in OPS[op][4](moved(x, fi), *ins, eps)]
    bound = [back(b.e, fi, x.ndim) for b in OPS[op][3](t, moved(x, fi), *ins, eps)]
    emu = run_exact(g, op, t, x, fi, feats, eps_text)
    rtol = 0.0
    for w, e, got in zip(want, bound, emu):
        assert np.all(np.abs(w) > 0), f"{name}: an expected value is zero"
        err = np.abs(got.astype(np.float64).astype(LD) - w)
        assert np.all(err <= e), f"{name}: the emulation exceeds the bound"
        rtol = max(rtol, float(np.max(e / np.abs(w))))
    # the expected values are stored rounded to t: another u |want| at most
    rtol = (rtol + U[t]) / (1 - U[t])
    assert rtol < limit, f"{name}: rtol {rtol} above {limit}"
    outs = [stored(t, np.asarray(w, np.float64)) for w in want]
    g.case(name, module(g, name, op, t, x, fi, feats, eps_text), [x] + feats, outs,
           "rtol %.3g" % (rtol * 1.02))


def normal(g, rng, t, shape, mu=0.0, sigma=1.0, clip=3.5):
    v = np.clip(rng.standard_normal(shape), -clip, clip) * sigma + mu
    return g.arr(t, v) if t != "f64" else v.astype(np.float64)


def per_feature(g, t, vals):
    return g.arr(t, np.asarray(vals, np.float64))


def batch_stats(g, t, x, fi):
    """The batch mean and (two-pass) variance, rounded to t."""
    xm = ld(moved(x, fi))
    axes = tuple(range(xm.ndim - 1))
    mean = xm.mean(axis=axes)
    var = ((xm - mean) ** 2).mean(axis=axes)
    return per_feature(g, t, mean.astype(np.float64)), per_feature(g, t, var.astype(np.float64))


def grad_output(g, rng, t, x, fi, a, b):
    """dy = g' + a + b (x - mean) per feature, g' a pattern of magnitude
    0.6..1.4 with random signs made orthogonal to 1 and to x - mean: then
    grad_x is about c N g', bounded away from zero, and grad_offset,
    grad_scale (about N a and N b var r) are too."""
    xm = moved(x, fi).astype(np.float64)
    flat = xm.reshape(-1, xm.shape[-1])
    xc = flat - flat.mean(axis=0)
    pat = rng.uniform(0.6, 1.4, flat.shape) * rng.choice([-1.0, 1.0], flat.shape)
    pat = pat - pat.mean(axis=0)
    pat = pat - xc * (pat * xc).sum(axis=0) / (xc * xc).sum(axis=0)
    dy = pat + np.asarray(a) + np.asarray(b) * xc
    dy = np.ascontiguousarray(np.moveaxis(dy.reshape(xm.shape), -1, fi))
    return g.arr(t, dy) if t != "f64" else dy


def fam_batch_norm_training(g):
    """batch-norm-training, exact: rank 1 to 4, feature_index first, middle
    and last, every float type; the real dump's f32[768,4] with epsilon=1e-05;
    E[x^2] - E[x]^2 cancelling to a negative variance (NaN outputs with
    epsilon=0, where a two-pass variance would be positive); f16 with more
    than 65504 elements per feature (the count converts to inf); 256
    features."""
    specs = [
        ("batch_norm_training_f32_rank4_fi1", "f32", (2, 3, 4, 5), 1, "0.001"),
        ("batch_norm_training_f64_rank2_fi0", "f64", (6, 5), 0, "0.001"),
        ("batch_norm_training_f16_rank3_fi2", "f16", (4, 3, 5), 2, "0.001"),
        ("batch_norm_training_bf16_rank2_fi1", "bf16", (12, 3), 1, "0.001"),
        ("batch_norm_training_bf16_rank1", "bf16", (6,), 0, "0.01"),
        ("batch_norm_training_f32_gpt2_768x4", "f32", (768, 4), 1, "1e-05"),
        ("batch_norm_training_f32_many_features", "f32", (3, 256), 1, "0.001"),
    ]
    for name, t, shape, fi, eps in specs:
        rng = g.seeded(name)
        f = shape[fi]
        x = normal(g, rng, t, shape, 0.5, 2.0)
        feats = [normal(g, rng, t, (f,), 1.0, 0.5), normal(g, rng, t, (f,))]
        exact_case(g, name, "training", t, x, fi, feats, eps)
    name = "batch_norm_training_f32_cancellation"
    rng = g.seeded(name)
    x = g.arr("f32", 3000.0 + rng.uniform(-1, 1, (64, 8)) * 0.05)
    feats = [g.arr("f32", np.linspace(1.0, 2.0, 8)), g.arr("f32", np.linspace(-1.0, 1.0, 8))]
    outs = run_exact(g, "training", "f32", x, 1, feats, "0")
    assert np.any(outs[2] < 0), "the cancellation case should give a negative variance"
    exact_case(g, name, "training", "f32", x, 1, feats, "0")
    name = "batch_norm_training_f16_count_overflows"
    rng = g.seeded(name)
    x = g.arr("f16", rng.uniform(-1, 1, (65536, 1)))
    exact_case(g, name, "training", "f16", x, 1, [g.arr("f16", [1.0]), g.arr("f16", [0.25])], "0.001")


def fam_batch_norm_inference(g):
    """batch-norm-inference, exact: rank 1 to 4, feature_index not last,
    every float type; 512 features, so that rsqrt's two f32 roundings show."""
    specs = [
        ("batch_norm_inference_f32_rank3_fi1", "f32", (3, 4, 5), 1),
        ("batch_norm_inference_bf16_rank2_fi0", "bf16", (5, 7), 0),
        ("batch_norm_inference_f16_rank4_fi3", "f16", (2, 3, 2, 4), 3),
        ("batch_norm_inference_f64_rank1", "f64", (9,), 0),
        ("batch_norm_inference_f32_many_features", "f32", (2, 512), 1),
        ("batch_norm_inference_bf16_many_features", "bf16", (512, 2), 0),
    ]
    for name, t, shape, fi in specs:
        rng = g.seeded(name)
        f = shape[fi]
        x = normal(g, rng, t, shape, 0.5, 2.0)
        var = g.arr(t, rng.uniform(0.25, 4.0, f)) if t != "f64" else rng.uniform(0.25, 4.0, f)
        feats = [normal(g, rng, t, (f,), 1.0, 0.5), normal(g, rng, t, (f,)), normal(g, rng, t, (f,)), var]
        exact_case(g, name, "inference", t, x, fi, feats)


def fam_batch_norm_grad(g):
    """batch-norm-grad, exact: rank 1 to 4, feature_index first, middle and
    last, every float type, with mean and variance the batch's own."""
    specs = [
        ("batch_norm_grad_f32_rank4_fi1", "f32", (2, 3, 4, 4), 1),
        ("batch_norm_grad_f64_rank2_fi1", "f64", (10, 3), 1),
        ("batch_norm_grad_f16_rank3_fi0", "f16", (3, 4, 5), 0),
        ("batch_norm_grad_bf16_rank2_fi1", "bf16", (16, 2), 1),
        ("batch_norm_grad_f32_rank1", "f32", (5,), 0),
    ]
    for name, t, shape, fi in specs:
        rng = g.seeded(name)
        f = shape[fi]
        x = normal(g, rng, t, shape, 0.5, 2.0)
        mean, var = batch_stats(g, t, x, fi)
        dy = normal(g, rng, t, shape)
        exact_case(g, name, "grad", t, x, fi, [normal(g, rng, t, (f,), 1.0, 0.5), mean, var, dy])


def fam_batch_norm_reference(g):
    """All three ops against the long-double reference, within the a-priori
    error bound (see the file's docstring): f32 and f64, and f16 training
    with 16 elements per feature.  Offsets keep outputs away from zero."""
    name = "batch_norm_training_f32_ref"
    rng = g.seeded(name)
    x = np.moveaxis(normal(g, rng, "f32", (8, 16, 3), np.array([0.5, -2.0, 3.0]), np.array([1.0, 2.0, 0.5])), 2, 1)
    feats = [per_feature(g, "f32", [1.5, -0.75, 2.0]), per_feature(g, "f32", [10.0, -10.0, 20.0])]
    ref_case(g, name, "training", "f32", np.ascontiguousarray(x), 1, feats, "0.001", 1e-3)
    name = "batch_norm_training_f64_ref"
    rng = g.seeded(name)
    x = normal(g, rng, "f64", (4, 5, 6, 3), np.array([1.0, -0.5, 2.0]), np.array([0.5, 1.0, 3.0]))
    ref_case(g, name, "training", "f64", x, 3, [per_feature(g, "f64", [2.0, 0.5, -1.0]),
                                               per_feature(g, "f64", [-8.0, 5.0, 12.0])], "1e-05", 1e-11)
    name = "batch_norm_training_f16_ref"
    rng = g.seeded(name)
    x = normal(g, rng, "f16", (16, 2), np.array([1.0, -0.5]), np.array([1.0, 0.5]))
    ref_case(g, name, "training", "f16", x, 1, [per_feature(g, "f16", [1.0, 1.0]),
                                               per_feature(g, "f16", [16.0, -16.0])], "0.001", 0.1)
    for t, limit in (("f32", 1e-4), ("f64", 1e-12)):
        name = f"batch_norm_inference_{t}_ref"
        rng = g.seeded(name)
        x = normal(g, rng, t, (5, 4, 3, 2), 0.0, 1.0)
        feats = [per_feature(g, t, [1.0, -2.0, 0.5]), per_feature(g, t, [9.0, 7.0, -6.0]),
                 per_feature(g, t, [0.25, -0.5, 0.125]), per_feature(g, t, [1.5, 0.75, 2.0])]
        ref_case(g, name, "inference", t, x, 2, feats, "0.001", limit)
    for t, shape, fi, limit in (("f32", (4, 3, 16), 1, 1e-3), ("f64", (3, 40), 0, 1e-11)):
        name = f"batch_norm_grad_{t}_ref"
        rng = g.seeded(name)
        f = shape[fi]
        x = normal(g, rng, t, shape, 0.5, 2.0)
        mean, var = batch_stats(g, t, x, fi)
        dy = grad_output(g, rng, t, x, fi, np.linspace(0.5, 0.9, f), np.linspace(0.3, -0.4, f))
        scale = per_feature(g, t, np.linspace(1.25, -0.75, f))
        ref_case(g, name, "grad", t, x, fi, [scale, mean, var, dy], "0.001", limit)


def families(g):
    return [lambda: fam_batch_norm_training(g), lambda: fam_batch_norm_inference(g),
            lambda: fam_batch_norm_grad(g), lambda: fam_batch_norm_reference(g)]
