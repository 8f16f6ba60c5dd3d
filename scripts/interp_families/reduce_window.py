"""reduce_window.py: reduce-window cases, compared exactly.

rw_ref folds each output's window positions in row-major order like reduce
(g.fold), skipping padding and base-dilation holes: max pooling with padding
and strides, sums with base and window dilation, bf16 sums rounding every
step, an init that is not the identity, and larger pooling (the row-box
path).
"""
import numpy as np

INF = float("inf")


def rw_ref(g, t, op, x, init, size, stride, pad, lhs_dil, rhs_dil):
    """reduce-window, XLA evaluator style: per output, fold the window
    positions (row-major) that land on real elements; padding and base
    dilation holes are skipped."""
    n = x.ndim
    dil_in = [(x.shape[d] - 1) * lhs_dil[d] + 1 if x.shape[d] else 0 for d in range(n)]
    padded = [dil_in[d] + pad[d][0] + pad[d][1] for d in range(n)]
    win = [(size[d] - 1) * rhs_dil[d] + 1 for d in range(n)]
    out_shape = [max((padded[d] - win[d]) // stride[d] + 1, 0) for d in range(n)]
    out = np.empty(out_shape, x.dtype)
    for oi in np.ndindex(*out_shape):
        xs = []
        for wi in np.ndindex(*size):
            pos = []
            ok = True
            for d in range(n):
                p = oi[d] * stride[d] + wi[d] * rhs_dil[d] - pad[d][0]
                if p < 0 or p % lhs_dil[d] or p // lhs_dil[d] >= x.shape[d]:
                    ok = False
                    break
                pos.append(p // lhs_dil[d])
            if ok:
                xs.append(x[tuple(pos)])
        out[oi] = g.fold(t, op, init, xs)
    return out


def fam_reduce_window(g):
    """reduce-window: max pooling with padding and strides, sums with base
    (lhs) and window (rhs) dilation, bf16 sums rounding each step, a non-identity
    init without padding."""
    specs = [
        ("reduce_window_f32_max_pad_stride", "f32", "maximum", (4, 5), -INF,
         (2, 3), (1, 2), ((0, 1), (1, 1)), (1, 1), (1, 1)),
        ("reduce_window_s32_add_dilations", "s32", "add", (5, 4), 0,
         (2, 2), (1, 1), ((1, 1), (0, 0)), (2, 1), (1, 2)),
        ("reduce_window_bf16_add", "bf16", "add", (3, 8), 0.0,
         (1, 4), (1, 2), ((0, 0), (0, 0)), (1, 1), (1, 1)),
        ("reduce_window_f64_add_init", "f64", "add", (6,), 100.0,
         (3,), (2,), ((0, 0),), (1,), (1,)),
        ("reduce_window_u16_min_3d", "u16", "minimum", (2, 3, 4), 65535,
         (2, 2, 1), (1, 1, 2), ((0, 0), (1, 0), (0, 1)), (1, 1, 1), (1, 1, 1)),
    ]
    for name, t, op, shape, init, size, stride, pad, ld, rd in specs:
        rng = g.seeded(name)
        if t in g.INTS:
            x = g.arr(t, rng.integers(0, 1000, shape))
        elif t == "f64":
            x = rng.standard_normal(shape)
        else:
            x = g.to_type(t, rng.standard_normal(shape).astype(np.float32) * 4)
        m = g.Module(name)
        comp = f"{op}_{t}"
        m.comp(g.binary_comp(comp, op, t))
        px = m.param(g.arr_shape(t, x))
        iv = g.arr(t, init)
        pi = m.param(g.arr_shape(t, iv))
        want = rw_ref(g, t, op, x, iv[()], size, stride, pad, ld, rd)
        r = m.op(g.arr_shape(t, want), "reduce-window", px, pi,
                 attrs=g.window_attr(size, stride, pad, ld, rd) + ", to_apply=%" + comp)
        g.case(name, m.text([r]), [x, iv], [want])


def fam_reduce_window_large(g):
    """Pooling over larger images (the row-box path): 3x3 stride-2 max pool
    with padding on f32[33,41], 2x2 s32 sums on [20,30]."""
    name = "reduce_window_pool_large"
    rng = g.seeded(name)
    m = g.Module(name)
    m.comp(g.binary_comp("maximum_f32", "maximum", "f32"))
    m.comp(g.binary_comp("add_s32", "add", "s32"))
    x = rng.standard_normal((33, 41)).astype(np.float32)
    y = g.arr("s32", rng.integers(-1000, 1000, (20, 30)))
    ninf, zero = g.arr("f32", -INF), g.arr("s32", 0)
    px, py, pn, pz = (m.param(g.arr_shape(t, v)) for t, v in zip(["f32", "s32", "f32", "s32"], [x, y, ninf, zero]))
    w1 = rw_ref(g, "f32", "maximum", x, np.float32(-INF), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), (1, 1))
    w2 = rw_ref(g, "s32", "add", y, 0, (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1))
    roots = [m.op(g.arr_shape("f32", w1), "reduce-window", px, pn,
                  attrs=g.window_attr((3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), (1, 1)) + ", to_apply=%maximum_f32"),
             m.op(g.arr_shape("s32", w2), "reduce-window", py, pz,
                  attrs=g.window_attr((2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)) + ", to_apply=%add_s32")]
    g.case(name, m.text(roots), [x, y, ninf, zero], [w1, w2])


def families(g):
    return [lambda: fam_reduce_window(g), lambda: fam_reduce_window_large(g)]
