"""parameter_constant.py: parameter and constant cases, compared exactly.

Parameters of every dtype, rank 0, empty and degenerate shapes, passed
straight through to the root; literals of every dtype with NaN, infinities,
signed zeros, extremes, a subnormal and an empty array.  The expected values
are the inputs themselves and the literals as numpy reads them.
"""
import numpy as np

NAN = float("nan")
INF = float("inf")


def fam_parameter(g):
    """Parameters of every dtype, rank 0, empty and degenerate shapes, passed
    straight through (the parameter op itself)."""
    name = "parameter_all_dtypes"
    rng = g.seeded(name)
    params, types = [], []
    for t in ["pred"] + g.INTS + g.FLOATS:
        if t == "pred":
            a = rng.integers(0, 2, (2, 3)).astype(bool)
        elif t in g.INTS:
            lo, hi = g.int_range(t)
            a = g.arr(t, [lo, hi, 0, 1, -1, 7])
        else:
            a = g.to_type(t, rng.standard_normal(4).astype(np.float32) * 3)
        params.append(a)
        types.append(t)
    params += [g.arr("f32", 2.5), np.zeros((0, 3), np.float32), g.arr("s32", [[[5], [6], [7]]])]
    types += ["f32", "f32", "s32"]
    m = g.Module(name)
    ps = [m.param(g.arr_shape(t, a)) for t, a in zip(types, params)]
    g.case(name, m.text(ps), params, [p.copy() for p in params])


def fam_constant(g):
    """Literals of every dtype: specials, extremes, rank 0 and 2, empty."""
    name = "constant_literals"
    m = g.Module(name)
    consts = [
        ("pred[3]", "{1, 0, 1}", g.arr("pred", [True, False, True])),
        ("pred[]", "true", g.arr("pred", True)),
        ("s8[3]", "{-128, 127, -1}", g.arr("s8", [-128, 127, -1])),
        ("s16[2]", "{-32768, 32767}", g.arr("s16", [-32768, 32767])),
        ("s32[2,2]", "{ { 1, -2 }, { 2147483647, -2147483648 } }",
         g.arr("s32", [[1, -2], [2147483647, -2147483648]])),
        ("s64[2]", "{-9223372036854775808, 9223372036854775807}",
         g.arr("s64", [-(1 << 63), (1 << 63) - 1])),
        ("u8[2]", "{0, 255}", g.arr("u8", [0, 255])),
        ("u16[1]", "{65535}", g.arr("u16", [65535])),
        ("u32[]", "4294967295", g.arr("u32", 4294967295)),
        ("u64[2]", "{18446744073709551615, 9223372036854775808}",
         g.arr("u64", [(1 << 64) - 1, 1 << 63])),
        ("f16[5]", "{nan, -inf, 65504, -0, 0.000061035156}",
         g.arr("f16", [NAN, -INF, 65504, -0.0, 2.0 ** -14])),
        ("bf16[4]", "{1.5, -inf, 3.38953139e+38, -0.0078125}",
         g.arr("bf16", [1.5, -INF, 3.3895313892515355e38, -0.0078125])),
        ("f32[6]", "{nan, -inf, inf, -0, 0.1, 1e-45}",
         g.arr("f32", [NAN, -INF, INF, -0.0, 0.1, 1e-45])),
        ("f32[]", "-2.5", g.arr("f32", -2.5)),
        ("f64[3]", "{0.1, -1.7976931348623157e+308, 5e-324}",
         g.arr("f64", [0.1, -1.7976931348623157e308, 5e-324])),
        ("f32[0]", "{}", np.zeros(0, np.float32)),
    ]
    roots = [m.constant(shape, lit) for shape, lit, _ in consts]
    outs = [want for _, _, want in consts]
    g.case(name, m.text(roots), [], outs)


def families(g):
    return [lambda: fam_parameter(g), lambda: fam_constant(g)]
