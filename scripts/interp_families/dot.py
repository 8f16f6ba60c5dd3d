"""dot.py: dot cases.

dot_ref sums the products exactly (Fractions, Python ints) and rounds once
to the result type (integers wrap).  The data are small dyadic rationals, so
that any summation order gives the same bits ("exact"), except the cases on
random positive data compared with rtol.  Batch and contracting dims in
unusual positions, bf16/f16 accumulating in f32, integer dots that wrap,
shapes big enough for BLAS, integer operands with a wider result type.
"""
from fractions import Fraction

import numpy as np


def dot_ref(g, lhs, rhs, lb, lc, rb, rc, out_t):
    """Exact sum of products (Fractions / Python ints), rounded once to out_t
    (integers wrap)."""
    lf = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    out_shape = [lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lf] + [rhs.shape[d] for d in rf]
    kshape = [lhs.shape[d] for d in lc]
    res = []
    for oi in np.ndindex(*out_shape):
        b, i, j = oi[:len(lb)], oi[len(lb):len(lb) + len(lf)], oi[len(lb) + len(lf):]
        acc = 0
        for k in np.ndindex(*kshape):
            li, ri = [0] * lhs.ndim, [0] * rhs.ndim
            for n, d in enumerate(lb):
                li[d] = b[n]
            for n, d in enumerate(rb):
                ri[d] = b[n]
            for n, d in enumerate(lf):
                li[d] = i[n]
            for n, d in enumerate(rf):
                ri[d] = j[n]
            for n, d in enumerate(lc):
                li[d] = k[n]
            for n, d in enumerate(rc):
                ri[d] = k[n]
            x, y = lhs[tuple(li)].item(), rhs[tuple(ri)].item()
            if out_t in g.INTS:
                acc += int(x) * int(y)
            else:
                acc += Fraction(x) * Fraction(y)
        res.append(g.wrap(acc, out_t) if out_t in g.INTS else g.round_frac(acc, out_t))
    dt = np.float32 if out_t == "bf16" else g.NP[out_t]
    return np.array(res, dt).reshape(out_shape)


def dot_attrs(lb, lc, rb, rc):
    s = []
    if lb:
        s.append("lhs_batch_dims={" + ",".join(map(str, lb)) + "}")
    s.append("lhs_contracting_dims={" + ",".join(map(str, lc)) + "}")
    if rb:
        s.append("rhs_batch_dims={" + ",".join(map(str, rb)) + "}")
    s.append("rhs_contracting_dims={" + ",".join(map(str, rc)) + "}")
    return ", ".join(s)


def fam_dot(g):
    """dot: matrix products, batch and multiple contracting dims in unusual
    positions (two batch dims paired in swapped order: the result's batch dims
    follow lhs_batch_dims), vector and outer products, bf16/f16 inputs (to
    f32, and to bf16/f16 accumulating in f32 and rounding once), f64, integer
    dots that wrap, an empty contraction, and two tolerance cases on random
    positive data (f32 at rtol 1e-5, above the K*u worst case; f32 operands
    with an f64 result, which must accumulate in f64, at rtol 1e-12)."""
    specs = [
        # name, lhs type, lhs shape, rhs type, rhs shape, lb, lc, rb, rc, out type, data
        ("dot_f32_matmul", "f32", (3, 5), "f32", (5, 4), [], [1], [], [0], "f32", "dyadic"),
        ("dot_f32_batch_transposed", "f32", (4, 2, 3), "f32", (3, 2, 4), [1], [0], [1], [2],
         "f32", "dyadic"),
        ("dot_f32_two_contracting", "f32", (2, 3, 4), "f32", (4, 5, 3), [], [1, 2], [], [2, 0],
         "f32", "dyadic"),
        ("dot_f64_vector", "f64", (7,), "f64", (7,), [], [0], [], [0], "f64", "dyadic"),
        ("dot_bf16_to_f32", "bf16", (2, 3, 8), "bf16", (2, 8, 4), [0], [2], [0], [1], "f32",
         "dyadic"),
        ("dot_bf16_to_bf16", "bf16", (3, 6), "bf16", (6, 2), [], [1], [], [0], "bf16", "wide"),
        ("dot_f16_f32_accumulation", "f16", (4, 12), "f16", (12, 3), [], [1], [], [0], "f16", "wide"),
        ("dot_s32_wrap", "s32", (2, 3), "s32", (3, 2), [], [1], [], [0], "s32", "bigint"),
        ("dot_s64_batch", "s64", (2, 2, 3), "s64", (2, 3), [0], [2], [0], [1], "s64", "bigint"),
        ("dot_u8_wrap", "u8", (2, 4), "u8", (4, 3), [], [1], [], [0], "u8", "bigint"),
        ("dot_f32_empty_contraction", "f32", (2, 0), "f32", (0, 3), [], [1], [], [0], "f32",
         "dyadic"),
        ("dot_f32_outer_product", "f32", (3,), "f32", (2,), [], [], [], [], "f32", "dyadic"),
        ("dot_f32_random_rtol", "f32", (8, 64), "f32", (64, 8), [], [1], [], [0], "f32",
         "positive"),
        ("dot_f32_two_batch_dims_swapped", "f32", (2, 3, 4, 5), "f32", (4, 5, 2, 6), [2, 0], [3],
         [0, 2], [1], "f32", "dyadic"),
        ("dot_f32_operands_f64_result", "f32", (3, 50), "f32", (50, 2), [], [1], [], [0], "f64",
         "positive"),
    ]
    for name, lt, ls, rt, rs, lb, lc, rb, rc, ot, data in specs:
        rng = g.seeded(name)
        if data == "dyadic":
            lhs, rhs = g.dyadic(rng, lt, ls), g.dyadic(rng, rt, rs)
        elif data == "wide":
            # bf16 products summed exactly in f32, then rounded once to bf16.
            lhs = g.arr(lt, rng.standard_normal(ls).astype(np.float32))
            rhs = g.arr(rt, rng.standard_normal(rs).astype(np.float32))
        elif data == "bigint":
            lo, hi = g.int_range(lt)
            lhs = g.arr(lt, rng.integers(lo, hi, ls, dtype=g.NP[lt], endpoint=True))
            rhs = g.arr(rt, rng.integers(lo, hi, rs, dtype=g.NP[rt], endpoint=True))
        else:
            lhs = rng.uniform(0.5, 1.5, ls).astype(np.float32)
            rhs = rng.uniform(0.5, 1.5, rs).astype(np.float32)
        want = dot_ref(g, lhs, rhs, lb, lc, rb, rc, ot)
        if data == "wide":
            # 16-bit results accumulate in f32 and round once.  The data must
            # tell that apart from rounding to the type after every step, and
            # must not depend on the f32 summation order (checked against an
            # in-order f32 fold).
            assert np.array_equal(g.to_type(ot, dot_ref_f32_fold(g, lhs, rhs)), want), name
            assert not np.array_equal(dot_ref_f32_fold(g, lhs, rhs, ot), want), name
        m = g.Module(name)
        pl, pr = m.param(g.arr_shape(lt, lhs)), m.param(g.arr_shape(rt, rhs))
        r = m.op(g.shape_str(ot, want.shape), "dot", pl, pr, attrs=dot_attrs(lb, lc, rb, rc))
        g.case(name, m.text([r]), [lhs, rhs], [want],
             compare=("rtol 1e-12" if ot == "f64" else "rtol 1e-5") if data == "positive" else "exact")


def dot_ref_f32_fold(g, lhs, rhs, step_type="f32"):
    """[m,k] x [k,n] folded in k order in f32, rounding each product and
    partial sum to step_type (f32: plain f32 accumulation)."""
    out = np.zeros((lhs.shape[0], rhs.shape[1]), np.float32)
    for i in range(lhs.shape[0]):
        for j in range(rhs.shape[1]):
            acc = np.float32(0)
            for k in range(lhs.shape[1]):
                prod = g.to_type(step_type, np.float32(lhs[i, k]) * np.float32(rhs[k, j]))
                acc = g.to_type(step_type, np.float32(acc + np.float32(prod))).reshape(())
            out[i, j] = np.float32(acc)
    return out


def fam_dot_blas(g):
    """Dots big enough for BLAS (f32 sgemm, f64 dgemm, bf16 through f32), with
    contracting dims that need the transpose flags, on data whose every
    summation order is exact."""
    name = "dot_blas_shapes"
    rng = g.seeded(name)
    m = g.Module(name)
    specs = [("f32", (33, 70), (70, 19), [1], [0], "f32"), ("f32", (70, 33), (19, 70), [0], [1], "f32"),
             ("f64", (20, 30), (25, 30), [1], [1], "f64"), ("bf16", (16, 40), (40, 24), [1], [0], "f32"),
             ("f32", (5, 64), (64,), [1], [0], "f32")]
    params, roots, outs = [], [], []
    for t, ls, rs, lc, rc, ot in specs:
        lhs, rhs = g.dyadic(rng, t, ls), g.dyadic(rng, t, rs)
        pl, pr = m.param(g.arr_shape(t, lhs)), m.param(g.arr_shape(t, rhs))
        params += [lhs, rhs]
        want = dot_ref(g, lhs, rhs, [], lc, [], rc, ot)
        roots.append(m.op(g.arr_shape(ot, want), "dot", pl, pr, attrs=dot_attrs([], lc, [], rc)))
        outs.append(want)
    g.case(name, m.text(roots), params, outs)


def fam_dot_mixed_int(g):
    """Integer dot with a wider result type: s8 x s8 -> s32 (operands converted
    to the result type first) and u16 x u16 -> u64."""
    name = "dot_mixed_int_types"
    rng = g.seeded(name)
    m = g.Module(name)
    a, b = g.arr("s8", rng.integers(-128, 128, (3, 40))), g.arr("s8", rng.integers(-128, 128, (40, 2)))
    c, d = g.arr("u16", rng.integers(0, 65536, (2, 5))), g.arr("u16", rng.integers(0, 65536, (5,)))
    pa, pb, pc, pd = (m.param(g.arr_shape(t, v)) for t, v in zip(["s8", "s8", "u16", "u16"], [a, b, c, d]))
    roots = [m.op("s32[3,2]", "dot", pa, pb, attrs=dot_attrs([], [1], [], [0])),
             m.op("u64[2]", "dot", pc, pd, attrs=dot_attrs([], [1], [], [0]))]
    outs = [dot_ref(g, a, b, [], [1], [], [0], "s32"), dot_ref(g, c, d, [], [1], [], [0], "u64")]
    g.case(name, m.text(roots), [a, b, c, d], outs)


def families(g):
    return [lambda: fam_dot(g), lambda: fam_dot_blas(g), lambda: fam_dot_mixed_int(g)]
