"""elementwise_shapes.py: elementwise ops on unusual sizes, compared exactly.

Rank-0, empty and degenerate shapes; and a few thousand elements, so that
narrow floats cross the f32 block boundaries and loops have tails.
"""
import numpy as np


def fam_elementwise_shapes(g):
    """Elementwise ops on rank-0, empty and degenerate shapes."""
    name = "elementwise_rank0_empty_degenerate"
    m = g.Module(name)
    s1, s2 = g.arr("f32", 1.5), g.arr("f32", -0.25)
    i1, i2 = g.arr("s64", -(1 << 63)), g.arr("s64", -1)
    e1, e2 = np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)
    d1 = g.arr("u16", [[[65535]], [[2]]])
    d2 = g.arr("u16", [[[1]], [[3]]])
    params = [s1, s2, i1, i2, e1, e2, d1, d2]
    types = ["f32", "f32", "s64", "s64", "f32", "f32", "u16", "u16"]
    ps = [m.param(g.arr_shape(t, x)) for t, x in zip(types, params)]
    roots = [m.op("f32[]", "multiply", ps[0], ps[1]), m.op("s64[]", "divide", ps[2], ps[3]),
             m.op("f32[0,3]", "add", ps[4], ps[5]), m.op("f32[0,3]", "exponential", ps[4]),
             m.op("pred[0,3]", "compare", ps[4], ps[5], attrs="direction=LT"),
             m.op("u16[2,1,1]", "add", ps[6], ps[7])]
    outs = [np.float32(-0.375).reshape(()), g.arr("s64", -(1 << 63)), e1.copy(), e1.copy(),
            np.zeros((0, 3), bool), g.arr("u16", [[[0]], [[5]]])]
    g.case(name, m.text(roots), params, outs)


def fam_elementwise_blocks(g):
    """Elementwise ops on a few thousand elements, so that narrow floats cross
    the f32 block boundaries and loops have tails: bf16 add, f16 multiply,
    f32 -> bf16 and f16 -> f32 converts, s8 add (wraps), pred and."""
    name = "elementwise_block_boundaries"
    rng = g.seeded(name)
    m = g.Module(name)
    n = 2500
    a = g.arr("bf16", rng.standard_normal(n).astype(np.float32))
    b = g.arr("bf16", rng.standard_normal(n).astype(np.float32))
    h1 = g.arr("f16", rng.standard_normal(n).astype(np.float32) * 100)
    h2 = g.arr("f16", rng.standard_normal(n).astype(np.float32) * 100)
    f = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    i1, i2 = g.arr("s8", rng.integers(-128, 128, n)), g.arr("s8", rng.integers(-128, 128, n))
    q1, q2 = rng.integers(0, 2, n).astype(bool), rng.integers(0, 2, n).astype(bool)
    params = [a, b, h1, h2, f, i1, i2, q1, q2]
    types = ["bf16", "bf16", "f16", "f16", "f32", "s8", "s8", "pred", "pred"]
    ps = [m.param(g.arr_shape(t, v)) for t, v in zip(types, params)]
    roots = [m.op(f"bf16[{n}]", "add", ps[0], ps[1]), m.op(f"f16[{n}]", "multiply", ps[2], ps[3]),
             m.op(f"bf16[{n}]", "convert", ps[4]), m.op(f"f32[{n}]", "convert", ps[2]),
             m.op(f"s8[{n}]", "add", ps[5], ps[6]), m.op(f"pred[{n}]", "and", ps[7], ps[8])]
    outs = [g.fl("bf16", np.add, a, b), g.fl("f16", np.multiply, h1, h2), g.bf16(f),
            h1.astype(np.float32), g.arr("s8", [g.wrap(int(x) + int(y), "s8") for x, y in zip(i1, i2)]),
            q1 & q2]
    g.case(name, m.text(roots), params, outs)


def families(g):
    return [lambda: fam_elementwise_shapes(g), lambda: fam_elementwise_blocks(g)]
