"""compare_select.py: compare, select and clamp cases, compared exactly.

compare in every direction: floats both IEEE (NaN is unordered) and
TOTALORDER (g.total_order_key), integers by value (unsigned above the signed
range); select with an array and a scalar predicate; clamp with array and
scalar bounds, NaN in any operand and zeros of both signs (IEEE maximum then
minimum), on floats and integers.
"""
import numpy as np

NAN = float("nan")
INF = float("inf")


DIRS = {"EQ": lambda x, y: x == y, "NE": lambda x, y: x != y, "LT": lambda x, y: x < y,
        "LE": lambda x, y: x <= y, "GT": lambda x, y: x > y, "GE": lambda x, y: x >= y}


def fam_compare_float(g):
    """Every direction, IEEE (NaN compares false except NE) and TOTALORDER."""
    for t in g.FLOATS:
        name = f"compare_{t}"
        rng = g.seeded(name)
        pairs = [(NAN, NAN), (NAN, 1.0), (1.0, NAN), (-0.0, 0.0), (0.0, -0.0), (INF, INF),
                 (-INF, INF), (1.0, 2.0), (2.0, 1.0), (2.0, 2.0), (-NAN, -INF), (-NAN, NAN),
                 (INF, NAN), (-1.0, -0.0)]
        r = rng.integers(-2, 3, (2, 6)).astype(float)
        a = g.arr(t, [p[0] for p in pairs] + r[0].tolist())
        b = g.arr(t, [p[1] for p in pairs] + r[1].tolist())
        x, y = g.f32_of(t, a), g.f32_of(t, b)
        ka, kb = g.total_order_key(t, a), g.total_order_key(t, b)
        spec = []
        for d, fn in DIRS.items():
            spec.append(("pred", "compare", [0, 1], f"direction={d}", fn(x, y)))
        for d, fn in DIRS.items():
            spec.append(("pred", "compare", [0, 1], f"direction={d}, type=TOTALORDER",
                         np.array(fn(ka, kb), dtype=bool)))
        g.elementwise_case(name, [t, t], spec, [a, b])


def fam_compare_int(g):
    """Every direction on every integer type (unsigned values above the signed
    range compare as unsigned)."""
    for group, types in [("signed", g.INTS[:4]), ("unsigned", g.INTS[4:])]:
        name = f"compare_{group}_ints"
        rng = g.seeded(name)
        m = g.Module(name)
        params, roots, outs = [], [], []
        for t in types:
            lo, hi = g.int_range(t)
            va = [lo, hi, 0, 5, hi, lo, 3] + [int(v) for v in rng.integers(-3, 4, 5)]
            vb = [hi, lo, 0, 5, hi - 1, lo + 1, 4] + [int(v) for v in rng.integers(-3, 4, 5)]
            if not g.signed(t):
                va = [v if v >= 0 else hi + 1 + v for v in va]
                vb = [v if v >= 0 else hi + 1 + v for v in vb]
            a, b = g.arr(t, va), g.arr(t, vb)
            pa, pb = m.param(g.arr_shape(t, a)), m.param(g.arr_shape(t, b))
            params += [a, b]
            for d, fn in DIRS.items():
                roots.append(m.op(g.shape_str("pred", a.shape), "compare", pa, pb,
                                  attrs=f"direction={d}"))
                outs.append(np.array([fn(int(x), int(y)) for x, y in zip(a.tolist(), b.tolist())]))
        g.case(name, m.text(roots), params, outs)


def fam_select(g):
    """select with an array predicate over several types, and with a scalar
    predicate (which picks a whole operand)."""
    name = "select_array_and_scalar_pred"
    rng = g.seeded(name)
    m = g.Module(name)
    p = rng.integers(0, 2, (2, 3)).astype(bool)
    params = [p]
    pp = m.param(g.arr_shape("pred", p))
    roots, outs = [], []
    for t in ["f32", "s64", "u8", "bf16", "f16", "pred"]:
        if t == "pred":
            x, y = rng.integers(0, 2, (2, 3)).astype(bool), rng.integers(0, 2, (2, 3)).astype(bool)
        elif t in g.INTS:
            x, y = g.arr(t, rng.integers(0, 200, (2, 3))), g.arr(t, rng.integers(0, 200, (2, 3)))
        else:
            x = g.to_type(t, rng.standard_normal((2, 3)).astype(np.float32))
            y = g.to_type(t, rng.standard_normal((2, 3)).astype(np.float32))
        px, py = m.param(g.arr_shape(t, x)), m.param(g.arr_shape(t, y))
        params += [x, y]
        roots.append(m.op(g.arr_shape(t, x), "select", pp, px, py))
        outs.append(np.where(p, x, y))
    # Scalar predicates: true picks the first operand, false the second.
    st, sf = g.arr("pred", True), g.arr("pred", False)
    a = g.arr("f32", [[NAN, -0.0, 1.0]])
    b = g.arr("f32", [[2.0, 3.0, 4.0]])
    pst, psf, pa, pb = (m.param(g.arr_shape(t, v)) for t, v in
                        [("pred", st), ("pred", sf), ("f32", a), ("f32", b)])
    params += [st, sf, a, b]
    roots.append(m.op(g.arr_shape("f32", a), "select", pst, pa, pb))
    roots.append(m.op(g.arr_shape("f32", a), "select", psf, pa, pb))
    outs += [a.copy(), b.copy()]
    g.case(name, m.text(roots), params, outs)


def clamp_f(g, lo, x, hi):
    """minimum(maximum(x, lo), hi) (IEEE: clamp(0, -0, 1) = +0) with the first
    NaN of lo, x, hi propagating."""
    lo, x, hi = np.broadcast_arrays(lo, x, hi)
    r = g.ieee_min(g.ieee_max(x, lo), hi)
    r = np.where(np.isnan(hi), hi, r)
    r = np.where(np.isnan(x), x, r)
    return np.where(np.isnan(lo), lo, r)


def fam_clamp(g):
    """clamp with array and scalar bounds, NaN in any operand, zeros of both
    signs (IEEE maximum/minimum: clamp(0, -0, 1) = +0, clamp(-1, 0, -0) = -0),
    ints."""
    name = "clamp_f32_s32_u8"
    m = g.Module(name)
    lo = g.arr("f32", [0.0, 0.0, NAN, 0.0, -1.0, -1.0, 0.0, -1.0, -0.0])
    x = g.arr("f32", [-5.0, 5.0, 1.0, NAN, 0.5, 2.0, -0.0, 0.0, 0.0])
    hi = g.arr("f32", [1.0, 1.0, 2.0, 3.0, NAN, 1.0, 1.0, -0.0, 0.0])
    slo, shi = g.arr("f32", -1.0), g.arr("f32", 1.0)
    xi = g.arr("s32", [-100, 0, 100, -2147483648, 2147483647])
    ilo, ihi = g.arr("s32", -10), g.arr("s32", 10)
    xu = g.arr("u8", [0, 5, 200, 255, 30])
    ulo, uhi = g.arr("u8", [3, 3, 3, 3, 50]), g.arr("u8", [100, 100, 100, 100, 20])   # lo > hi: hi
    params = [lo, x, hi, slo, shi, xi, ilo, ihi, xu, ulo, uhi]
    types = ["f32"] * 5 + ["s32"] * 3 + ["u8"] * 3
    ps = [m.param(g.arr_shape(t, a)) for t, a in zip(types, params)]
    roots = [m.op("f32[9]", "clamp", ps[0], ps[1], ps[2]),
             m.op("f32[9]", "clamp", ps[3], ps[1], ps[4]),
             m.op("s32[5]", "clamp", ps[6], ps[5], ps[7]),
             m.op("u8[5]", "clamp", ps[9], ps[8], ps[10])]
    outs = [clamp_f(g, lo, x, hi).astype(np.float32), clamp_f(g, slo, x, shi).astype(np.float32),
            np.clip(xi, -10, 10).astype(np.int32), np.minimum(np.maximum(xu, ulo), uhi)]
    g.case(name, m.text(roots), params, outs)


def families(g):
    return [lambda: fam_compare_float(g), lambda: fam_compare_int(g), lambda: fam_select(g),
            lambda: fam_clamp(g)]
