"""unary.py: elementwise unary cases for gen_interp_corpus.py.

abs negate sign floor ceil round-nearest-afz round-nearest-even sqrt copy
is-finite on every float type over the specials of g.float_specials, exact
(g.fl: f16 and bf16 compute in f32 and round once); the transcendentals
(exponential ... erf) evaluated in f64 by glibc through Python's math
(g.libm) and rounded to the type, compared within 1 ulp (f16, bf16) or 2;
abs negate sign not popcnt count-leading-zeros on every integer type, on
Python ints wrapped to the type.
"""
import math

import numpy as np

NAN = float("nan")
INF = float("inf")


def sign_f(x):
    return np.where(np.isnan(x) | (x == 0), x, np.copysign(np.ones_like(x), x))


def round_afz(x):
    t = np.trunc(x)
    frac = np.abs(x - t)
    r = np.where(frac >= 0.5, t + np.copysign(np.ones_like(x), x), t)
    return np.where(np.isfinite(x), np.copysign(r, x), x)


def fam_unary_float_exact(g):
    """abs negate sign floor ceil round-* is-finite sqrt copy: exact in every float type."""
    for t in g.FLOATS:
        name = f"unary_{t}_exact"
        rng = g.seeded(name)
        extra = g.to_type(t, (rng.standard_normal(8) * 10).astype(np.float32)) if t != "f64" \
            else rng.standard_normal(8) * 10
        a = np.concatenate([g.float_specials(t), extra.astype(g.NP[t])])
        ops = [
            ("abs", np.abs), ("negate", np.negative), ("sign", sign_f), ("floor", np.floor),
            ("ceil", np.ceil), ("round-nearest-afz", round_afz),
            ("round-nearest-even", np.rint), ("sqrt", np.sqrt), ("copy", lambda x: x),
        ]
        spec = [(t, op, [0], None, g.fl(t, fn, a)) for op, fn in ops]
        spec.append(("pred", "is-finite", [0], None, np.isfinite(g.f32_of(t, a))))
        g.elementwise_case(name, [t], spec, [a])


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def transcendentals(g):
    """(opcode, f64 reference function) of each unary transcendental."""
    return [
        ("exponential", g.libm(math.exp, np.exp)), ("exponential-minus-one", g.libm(math.expm1, np.expm1)),
        ("log", g.libm(math.log, np.log)), ("log-plus-one", g.libm(math.log1p, np.log1p)),
        ("rsqrt", lambda x: 1.0 / np.sqrt(x)), ("cbrt", g.libm(math.cbrt, np.cbrt)),
        ("tanh", g.libm(math.tanh, np.tanh)), ("logistic", logistic),
        ("sine", g.libm(math.sin, np.sin)), ("cosine", g.libm(math.cos, np.cos)),
        ("tan", g.libm(math.tan, np.tan)), ("erf", g.per_elem(math.erf)),
    ]


def fam_unary_float_transc(g):
    """exp expm1 log log1p rsqrt cbrt tanh logistic sin cos tan erf, within a few ulps."""
    for t in g.FLOATS:
        name = f"unary_{t}_transcendental"
        rng = g.seeded(name)
        special = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 1e-3, -1e-3, 0.5, 6.0, -6.0, 2.0, 7.5,
                   12.0, -20.0]
        rnd = (rng.uniform(-4, 4, 10)).astype(np.float32)
        a = g.arr(t, special + rnd.tolist())
        spec = [(t, op, [0], None, g.transc(t, fn, a)) for op, fn in transcendentals(g)]
        g.elementwise_case(name, [t], spec, [a], compare="ulp 1" if t in ("f16", "bf16") else "ulp 2")


def int_unary(g, op, t, v):
    lo, hi = g.int_range(t)
    mask = (1 << g.BITS[t]) - 1
    if op == "abs":
        return g.wrap(abs(v), t)
    if op == "negate":
        return g.wrap(-v, t)
    if op == "sign":
        return (v > 0) - (v < 0)
    if op == "not":
        return g.wrap(~v, t)
    if op == "popcnt":
        return bin(v & mask).count("1")
    if op == "count-leading-zeros":
        return g.BITS[t] - (v & mask).bit_length()
    raise ValueError(op)


def fam_unary_int(g):
    """abs negate sign not popcnt count-leading-zeros on every integer type
    (one case for the signed types, one for the unsigned)."""
    for group, types in [("signed", g.INTS[:4]), ("unsigned", g.INTS[4:])]:
        name = f"unary_{group}_ints"
        rng = g.seeded(name)
        m = g.Module(name)
        params, roots, outs = [], [], []
        for t in types:
            lo, hi = g.int_range(t)
            vals = [0, 1, -1, 2, lo, hi, lo + 1, hi - 1, 0x55, 1 << (g.BITS[t] - 2)]
            vals += [int(x) for x in rng.integers(lo, hi, 6, dtype=g.NP[t], endpoint=True)]
            a = g.arr(t, vals)
            pa = m.param(g.arr_shape(t, a))
            params.append(a)
            for op in ["abs", "negate", "sign", "not", "popcnt", "count-leading-zeros"]:
                roots.append(m.op(g.arr_shape(t, a), op, pa))
                outs.append(g.arr(t, [int_unary(g, op, t, int(v)) for v in a.tolist()]))
        g.case(name, m.text(roots), params, outs)


def families(g):
    return [lambda: fam_unary_float_exact(g), lambda: fam_unary_float_transc(g),
            lambda: fam_unary_int(g)]
