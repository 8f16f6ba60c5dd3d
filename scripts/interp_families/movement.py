"""movement.py: data movement cases, compared exactly.

iota (bf16 and f16 round large integers), reshape, bitcast (the physical
buffer under each layout), transpose (small and cache-blocked with ragged
edge tiles), broadcast, slice with strides, concatenate, pad (negative and
interior padding) and reverse, on rank 0, empty and degenerate shapes too.
The expected values are numpy indexing or the small references here.
"""
import numpy as np


def fam_iota(g):
    """iota along each dim, in ints and floats (bf16 rounds integers above 256
    and f16 above 2048 to nearest even), an empty iota."""
    name = "iota_dtypes"
    m = g.Module(name)
    specs = [("s32", (2, 3), 1), ("f32", (4, 2), 0), ("bf16", (300,), 0), ("u8", (2, 3, 2), 2),
             ("s64", (5,), 0), ("f16", (3, 1), 0), ("u16", (0, 4), 1),
             ("f16", (2100,), 0)]
    roots, outs = [], []
    for t, dims, d in specs:
        roots.append(m.op(g.shape_str(t, dims), "iota", attrs=f"iota_dimension={d}"))
        idx = np.indices(dims)[d] if dims else np.zeros(())
        if t in ("bf16", "f16"):
            outs.append(np.array([g.round_frac(int(v), t) for v in idx.reshape(-1)],
                                 np.float32 if t == "bf16" else np.float16).reshape(dims))
        else:
            outs.append(idx.astype(g.NP[t]))
    g.case(name, m.text(roots), [], outs)


def fam_reshape(g):
    """reshape: row-major reinterpretation, to and from rank 0, empty arrays,
    degenerate dims."""
    name = "reshape_shapes"
    rng = g.seeded(name)
    m = g.Module(name)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = g.arr("s8", list(range(-12, 12)))
    c = g.arr("f64", [[7.25]])
    e = np.zeros((0, 3), np.float32)
    s = g.arr("u16", 9)
    params = [a, b, c, e, s]
    types = ["f32", "s8", "f64", "f32", "u16"]
    pa, pb, pc, pe, ps = (m.param(g.arr_shape(t, v)) for t, v in zip(types, params))
    roots = [m.op("f32[6,4]", "reshape", pa), m.op("f32[4,1,6]", "reshape", pa),
             m.op("s8[2,12]", "reshape", pb), m.op("f64[]", "reshape", pc),
             m.op("f32[3,0,5]", "reshape", pe), m.op("u16[1,1,1]", "reshape", ps)]
    outs = [a.reshape(6, 4), a.reshape(4, 1, 6), b.reshape(2, 12), c.reshape(()),
            e.reshape(3, 0, 5), s.reshape(1, 1, 1)]
    g.case(name, m.text(roots), params, outs)


def fam_bitcast(g):
    """bitcast reads the operand's physical buffer (by its layout) as the result
    shape under the result's layout: default layouts = reshape; {0,1} layouts
    encode a transpose."""
    name = "bitcast_layouts"
    m = g.Module(name)
    a = g.arr("f32", [[1, 2, 3], [4, 5, 6]])
    b = g.arr("s32", [[1, 2, 3], [4, 5, 6]])
    pa = m.param(g.shape_str("f32", (2, 3), [1, 0]))
    pb = m.param(g.shape_str("s32", (2, 3), [0, 1]))
    roots = [m.op(g.shape_str("f32", (6,), [0]), "bitcast", pa),
             m.op(g.shape_str("f32", (3, 2), [0, 1]), "bitcast", pa),
             m.op(g.shape_str("s32", (6,), [0]), "bitcast", pb)]
    # f32[2,3]{1,0} buffer = a row-major; read as [3,2] with dim 0 fastest:
    # out[i, j] = buf[i + 3 j] = a[j, i].  s32[2,3]{0,1}: buffer = b column-major.
    outs = [a.reshape(6), a.T.copy(), b.T.reshape(6).copy()]
    g.case(name, m.text(roots), [a, b], outs)


def fam_transpose(g):
    name = "transpose_perms"
    rng = g.seeded(name)
    m = g.Module(name)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = g.arr("s64", rng.integers(-100, 100, (3, 5)))
    c = g.arr("u8", rng.integers(0, 255, (2, 1, 3, 2)))
    d = g.arr("bf16", rng.standard_normal((1, 4, 1)).astype(np.float32))
    params = [a, b, c, d]
    types = ["f32", "s64", "u8", "bf16"]
    pa, pb, pc, pd = (m.param(g.arr_shape(t, v)) for t, v in zip(types, params))
    perms = [(pa, a, "f32", (2, 0, 1)), (pa, a, "f32", (1, 0, 2)), (pb, b, "s64", (1, 0)),
             (pc, c, "u8", (3, 1, 0, 2)), (pd, d, "bf16", (2, 1, 0))]
    roots, outs = [], []
    for p, v, t, perm in perms:
        w = np.transpose(v, perm).copy()
        roots.append(m.op(g.arr_shape(t, w), "transpose", p,
                          attrs="dimensions={" + ",".join(map(str, perm)) + "}"))
        outs.append(w)
    g.case(name, m.text(roots), params, outs)


def broadcast_ref(x, out_dims, dims):
    """out[idx] = x[idx[dims[0]], idx[dims[1]], ...]"""
    out = np.empty(out_dims, x.dtype)
    for idx in np.ndindex(*out_dims):
        out[idx] = x[tuple(idx[d] for d in dims)]
    return out


def fam_broadcast(g):
    name = "broadcast_dims"
    rng = g.seeded(name)
    m = g.Module(name)
    s = g.arr("f32", -1.5)
    v = g.arr("s32", [1, 2, 3])
    w = g.arr("f16", rng.standard_normal((2, 4)).astype(np.float32))
    p = g.arr("pred", [True, False])
    params = [s, v, w, p]
    types = ["f32", "s32", "f16", "pred"]
    ps, pv, pw, pp = (m.param(g.arr_shape(t, x)) for t, x in zip(types, params))
    specs = [(ps, s, "f32", (2, 3), ()), (pv, v, "s32", (2, 3, 4), (1,)),
             (pv, v, "s32", (3, 2), (0,)), (pw, w, "f16", (2, 3, 4), (0, 2)),
             (pw, w, "f16", (4, 2), (1, 0)), (pp, p, "pred", (2, 2), (1,)),
             (ps, s, "f32", (0, 2), ())]
    roots, outs = [], []
    for pr, x, t, od, dims in specs:
        roots.append(m.op(g.shape_str(t, od), "broadcast", pr,
                          attrs="dimensions={" + ",".join(map(str, dims)) + "}"))
        outs.append(broadcast_ref(x, od, dims))
    g.case(name, m.text(roots), params, outs)


def fam_slice(g):
    name = "slice_strides"
    rng = g.seeded(name)
    m = g.Module(name)
    a = g.arr("f32", rng.standard_normal((5, 7)).astype(np.float32))
    b = g.arr("u32", rng.integers(0, 1 << 32, (4, 3, 2), dtype=np.uint64))
    s = g.arr("s8", -3)
    params = [a, b, s]
    pa, pb, ps = (m.param(g.arr_shape(t, x)) for t, x in zip(["f32", "u32", "s8"], params))
    specs = [(pa, a, "f32", [(1, 4, 1), (0, 7, 3)]), (pa, a, "f32", [(0, 5, 2), (6, 7, 1)]),
             (pa, a, "f32", [(2, 2, 1), (0, 7, 1)]), (pb, b, "u32", [(3, 4, 1), (0, 3, 2), (1, 2, 1)]),
             (ps, s, "s8", []), (pa, a, "f32", [(3, 5, 7), (1, 6, 9)])]
    roots, outs = [], []
    for p, x, t, bounds in specs:
        w = x[tuple(slice(lo, hi, st) for lo, hi, st in bounds)].copy()
        attr = "slice={" + ", ".join(f"[{lo}:{hi}:{st}]" if st != 1 else f"[{lo}:{hi}]"
                                     for lo, hi, st in bounds) + "}"
        roots.append(m.op(g.arr_shape(t, w), "slice", p, attrs=attr))
        outs.append(w)
    g.case(name, m.text(roots), params, outs)


def fam_concatenate(g):
    name = "concatenate_dims"
    rng = g.seeded(name)
    m = g.Module(name)
    a = g.arr("f32", rng.standard_normal((2, 3)).astype(np.float32))
    b = g.arr("f32", rng.standard_normal((2, 1)).astype(np.float32))
    e = np.zeros((2, 0), np.float32)
    c = g.arr("f32", rng.standard_normal((1, 3)).astype(np.float32))
    x = g.arr("u64", [1, (1 << 64) - 1])
    y = g.arr("u64", [5])
    params = [a, b, e, c, x, y]
    types = ["f32"] * 4 + ["u64"] * 2
    pa, pb, pe, pc, px, py = (m.param(g.arr_shape(t, v)) for t, v in zip(types, params))
    roots = [m.op("f32[2,4]", "concatenate", pa, pe, pb, attrs="dimensions={1}"),
             m.op("f32[3,3]", "concatenate", pa, pc, attrs="dimensions={0}"),
             m.op("u64[4]", "concatenate", px, py, py, attrs="dimensions={0}")]
    outs = [np.concatenate([a, e, b], 1), np.concatenate([a, c], 0),
            np.concatenate([x, y, y])]
    g.case(name, m.text(roots), params, outs)


def pad_ref(x, v, cfg):
    """cfg: (lo, hi, interior) per dim; negative lo/hi crop."""
    out = x
    for d, (lo, hi, interior) in enumerate(cfg):
        n = out.shape[d]
        inner = max(n + (n - 1) * interior, 0) if n else 0
        shp = list(out.shape)
        shp[d] = inner
        y = np.full(shp, v, out.dtype)
        sl = [slice(None)] * out.ndim
        sl[d] = slice(0, inner, interior + 1)
        y[tuple(sl)] = out
        if lo >= 0:
            shp[d] = lo
            y = np.concatenate([np.full(shp, v, out.dtype), y], d)
        else:
            sl = [slice(None)] * out.ndim
            sl[d] = slice(-lo, None)
            y = y[tuple(sl)]
        if hi >= 0:
            shp = list(y.shape)
            shp[d] = hi
            y = np.concatenate([y, np.full(shp, v, out.dtype)], d)
        else:
            sl = [slice(None)] * out.ndim
            sl[d] = slice(0, y.shape[d] + hi)
            y = y[tuple(sl)]
        out = y
    return out


def fam_pad(g):
    """pad with low/high/interior padding, negative (cropping) edges, an empty
    operand, and a rank-0 operand."""
    name = "pad_negative_interior"
    rng = g.seeded(name)
    m = g.Module(name)
    a = g.arr("f32", rng.integers(1, 9, (3, 4)).astype(np.float32))
    v = g.arr("f32", -1.0)
    b = g.arr("s8", [1, 2, 3])
    bv = g.arr("s8", 0)
    e = np.zeros((0,), np.float32)
    params = [a, v, b, bv, e]
    pa, pv, pb, pbv, pe = (m.param(g.arr_shape(t, x)) for t, x in
                           zip(["f32", "f32", "s8", "s8", "f32"], params))
    specs = [(pa, pv, a, v, "f32", [(1, 2, 1), (-1, 0, 0)]),
             (pa, pv, a, v, "f32", [(-2, -1, 2), (0, -2, 1)]),
             (pa, pv, a, v, "f32", [(0, 0, 0), (2, 1, 0)]),
             (pb, pbv, b, bv, "s8", [(-3, 1, 3)]),
             (pe, pv, e, v, "f32", [(2, 1, 4)])]
    roots, outs = [], []
    for po, pvv, x, val, t, cfg in specs:
        w = pad_ref(x, val, cfg)
        any_interior = any(c[2] for c in cfg)
        txt = "x".join(f"{lo}_{hi}_{it}" if any_interior else f"{lo}_{hi}" for lo, hi, it in cfg)
        roots.append(m.op(g.arr_shape(t, w), "pad", po, pvv, attrs="padding=" + txt))
        outs.append(w)
    g.case(name, m.text(roots), params, outs)


def fam_reverse(g):
    name = "reverse_dims"
    rng = g.seeded(name)
    m = g.Module(name)
    a = g.arr("f64", rng.standard_normal((2, 3, 4)))
    b = g.arr("pred", rng.integers(0, 2, (5,)).astype(bool))
    pa, pb = m.param(g.arr_shape("f64", a)), m.param(g.arr_shape("pred", b))
    e = np.zeros((3, 0), np.int16)
    pe = m.param("s16[3,0]")
    roots = [m.op("f64[2,3,4]", "reverse", pa, attrs="dimensions={0,2}"),
             m.op("f64[2,3,4]", "reverse", pa, attrs="dimensions={1}"),
             m.op("pred[5]", "reverse", pb, attrs="dimensions={0}"),
             m.op("s16[3,0]", "reverse", pe, attrs="dimensions={0,1}")]
    outs = [a[::-1, :, ::-1].copy(), a[:, ::-1, :].copy(), b[::-1].copy(), e.copy()]
    g.case(name, m.text(roots), [a, b, e], outs)


def fam_transpose_blocked(g):
    """Transposes big enough for cache-blocked copies with ragged edge tiles,
    in 1-, 2-, 4- and 8-byte types."""
    name = "transpose_blocked"
    rng = g.seeded(name)
    m = g.Module(name)
    a = rng.standard_normal((67, 45)).astype(np.float32)
    b = g.arr("u8", rng.integers(0, 256, (33, 17, 5)))
    c = rng.standard_normal((40, 50))
    d = g.arr("s16", rng.integers(-30000, 30000, (2, 40, 45)))
    e = rng.integers(0, 2, (19, 70)).astype(bool)
    params = [a, b, c, d, e]
    types = ["f32", "u8", "f64", "s16", "pred"]
    ps = [m.param(g.arr_shape(t, v)) for t, v in zip(types, params)]
    specs = [(0, (1, 0)), (1, (2, 0, 1)), (2, (1, 0)), (3, (0, 2, 1)), (4, (1, 0)), (1, (1, 2, 0))]
    roots, outs = [], []
    for i, perm in specs:
        wnt = np.transpose(params[i], perm).copy()
        roots.append(m.op(g.arr_shape(types[i], wnt), "transpose", ps[i], attrs="dimensions=" + g.ilist(perm)))
        outs.append(wnt)
    g.case(name, m.text(roots), params, outs)


def families(g):
    return [lambda: fam_iota(g), lambda: fam_reshape(g), lambda: fam_bitcast(g),
            lambda: fam_transpose(g), lambda: fam_broadcast(g), lambda: fam_slice(g),
            lambda: fam_concatenate(g), lambda: fam_pad(g), lambda: fam_reverse(g),
            lambda: fam_transpose_blocked(g)]
