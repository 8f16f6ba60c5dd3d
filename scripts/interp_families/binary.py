"""binary.py: elementwise binary cases for gen_interp_corpus.py.

add subtract multiply divide remainder maximum minimum on every float type
with NaN in either operand, infinities, signed zeros, division by zero and
overflow (exact; maximum and minimum are IEEE 754-2019's, g.ieee_max and
g.ieee_min); power and atan2 in f64 rounded to the type (ulps); every integer
binary op on every integer type through g.int_binary (Python ints wrapped to
the type: division by zero, INT_MIN / -1, shifts by the bit width and more);
pred logic, power, maximum/minimum and compare.
"""
import math

import numpy as np

NAN = float("nan")
INF = float("inf")


def fam_binary_float_exact(g):
    """add subtract multiply divide remainder maximum minimum with NaN in either
    operand, infinities, signed zeros, division by zero and overflow."""
    big = {"f16": 60000.0, "bf16": 3e38, "f32": 3e38, "f64": 1.5e308}
    tiny = {"f16": 2.0 ** -14, "bf16": 2.0 ** -126, "f32": 2.0 ** -126, "f64": 2.0 ** -1022}
    for t in g.FLOATS:
        name = f"binary_{t}_exact"
        rng = g.seeded(name)
        pairs = [(NAN, 1.0), (1.0, NAN), (NAN, -NAN), (INF, -INF), (INF, INF), (-0.0, -0.0),
                 (-0.0, 0.0), (0.0, -0.0), (1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (-1.0, -0.0),
                 (5.5, 2.0), (-5.5, 2.0), (5.5, -2.0), (1.0, INF), (INF, 1.0), (-7.0, 0.5),
                 (big[t], big[t]), (-big[t], 3.0), (3.0, 3.0), (0.1, 0.3), (1e-3, 1e3), (2.0, -INF),
                 (-4.0, 2.0), (-0.0, 3.0), (0.0, -3.0), (-INF, -0.0), (tiny[t], 0.75),
                 (-tiny[t], tiny[t] * 0.5)]
        rnd = rng.standard_normal((2, 8)) * 4
        a = g.arr(t, [p[0] for p in pairs] + rnd[0].tolist())
        b = g.arr(t, [p[1] for p in pairs] + rnd[1].tolist())
        ops = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
               ("divide", np.divide), ("remainder", np.fmod), ("maximum", g.ieee_max),
               ("minimum", g.ieee_min)]
        spec = [(t, op, [0, 1], None, g.fl(t, fn, a, b)) for op, fn in ops]
        g.elementwise_case(name, [t, t], spec, [a, b])


def fam_binary_float_transc(g):
    """power and atan2 with their special cases (x^0 = 1 even for NaN, 1^y = 1,
    negative base, signed zeros, infinities)."""
    for t in g.FLOATS:
        name = f"binary_{t}_power_atan2"
        rng = g.seeded(name)
        pairs = [(NAN, 0.0), (1.0, NAN), (-8.0, 1.0 / 3), (0.0, -1.0), (-0.0, -1.0), (-2.0, 3.0),
                 (2.0, 0.5), (0.5, -2.0), (INF, -1.0), (-INF, 3.0), (10.0, 2.0), (-1.0, INF),
                 (0.0, 0.0), (-0.0, -0.0), (0.0, -0.0), (-0.0, 0.0), (1.0, INF), (-1.0, -INF),
                 (3.0, -2.0), (-3.0, 2.0)]
        rnd_a = rng.uniform(0.1, 4, 8)
        rnd_b = rng.uniform(-3, 3, 8)
        a = g.arr(t, [p[0] for p in pairs] + rnd_a.tolist())
        b = g.arr(t, [p[1] for p in pairs] + rnd_b.tolist())
        spec = [(t, "power", [0, 1], None, g.transc(t, g.libm(math.pow, np.power), a, b)),
                (t, "atan2", [0, 1], None, g.transc(t, g.libm(math.atan2, np.arctan2), a, b))]
        g.elementwise_case(name, [t, t], spec, [a, b],
                         compare="ulp 1" if t in ("f16", "bf16") else "ulp 2")


INT_BINARY_OPS = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                  "power", "and", "or", "xor", "shift-left", "shift-right-arithmetic",
                  "shift-right-logical"]


def fam_binary_int(g):
    """Every integer binary op on every integer type (one case for the signed
    types, one for the unsigned): wrapping, division by zero, INT_MIN / -1,
    negative exponents, shifts by >= the bit width and by "negative" (huge
    unsigned) amounts, arithmetic right shifts of unsigned values with the
    top bit set."""
    for group, types in [("signed", g.INTS[:4]), ("unsigned", g.INTS[4:])]:
        name = f"binary_{group}_ints"
        rng = g.seeded(name)
        m = g.Module(name)
        params, roots, outs = [], [], []
        for t in types:
            lo, hi = g.int_range(t)
            w = g.BITS[t]
            pairs = [(7, 0), (-7, 0), (lo, -1), (lo, 1), (hi, 1), (hi, hi), (lo, lo), (-7, 2),
                     (7, -2), (-7, -2), (3, 5), (-3, 3), (2, w - 1), (1, w), (-1, w + 1), (-5, 1),
                     (lo, w - 1), (hi, -1), (5, 1 << 30), (1, -5), (-1, -1), (0, 0), (6, 7),
                     (-2, 2)]
            pairs += [(int(x), int(y)) for x, y in
                      zip(rng.integers(lo, hi, 8, dtype=g.NP[t], endpoint=True),
                          rng.integers(0, min(hi, 40), 8, dtype=g.NP[t], endpoint=True))]
            a = g.arr(t, [p[0] for p in pairs])
            b = g.arr(t, [p[1] for p in pairs])
            pa, pb = m.param(g.arr_shape(t, a)), m.param(g.arr_shape(t, b))
            params += [a, b]
            for op in INT_BINARY_OPS:
                roots.append(m.op(g.arr_shape(t, a), op, pa, pb))
                outs.append(g.arr(t, [g.int_binary(op, t, x, y) for x, y in zip(a.tolist(), b.tolist())]))
        g.case(name, m.text(roots), params, outs)


def fam_pred_logic(g):
    """not and or xor on pred, power on pred (a || !b), maximum/minimum on
    pred (or/and), and compare on pred (false < true)."""
    name = "pred_logic_compare"
    a = g.arr("pred", [False, False, True, True])
    b = g.arr("pred", [False, True, False, True])
    spec = [("pred", "not", [0], None, ~a), ("pred", "and", [0, 1], None, a & b),
            ("pred", "or", [0, 1], None, a | b), ("pred", "xor", [0, 1], None, a ^ b),
            ("pred", "compare", [0, 1], "direction=LT", a < b),
            ("pred", "compare", [0, 1], "direction=GE", a >= b),
            ("pred", "compare", [0, 1], "direction=NE", a != b),
            ("pred", "power", [0, 1], None, a | ~b),
            ("pred", "maximum", [0, 1], None, a | b), ("pred", "minimum", [0, 1], None, a & b)]
    g.elementwise_case(name, ["pred", "pred"], spec, [a, b])


def families(g):
    return [lambda: fam_binary_float_exact(g), lambda: fam_binary_float_transc(g),
            lambda: fam_binary_int(g), lambda: fam_pred_logic(g)]
