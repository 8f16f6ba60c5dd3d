"""dynamic_slice.py: dynamic-slice and dynamic-update-slice cases, compared exactly.

Starts clamped so that the slice fits, index operands of every integer
type read by their value (u32 0xFFFFFFFF and u64 >= 2^63 are large positive
numbers), and the legacy form with a single rank-1 index vector.
"""
import numpy as np


def ds_start(idx, dim, size):
    return min(max(idx, 0), dim - size)


def fam_dynamic_slice(g):
    """dynamic-slice with in-range, negative and too-large starts (clamped),
    index operands of types s32, s64, u32 (0xFFFFFFFF reads as a large
    positive number), u8, and u64 (values >= 2^63 are large positive numbers
    too: an index is read by its value, as the clamp in XLA's and StableHLO's
    text says)."""
    name = "dynamic_slice_clamped"
    rng = g.seeded(name)
    m = g.Module(name)
    a = g.arr("f32", rng.standard_normal((4, 6)).astype(np.float32))
    b = g.arr("s16", rng.integers(-1000, 1000, (5,)))
    params = [a, b]
    pa, pb = m.param(g.arr_shape("f32", a)), m.param(g.arr_shape("s16", b))
    roots, outs = [], []
    for (it, i0), (jt, j0), sizes in [(("s32", 1), ("s32", 2), (2, 3)),
                                      (("s32", -5), ("s32", 100), (2, 3)),
                                      (("s64", 3), ("s64", -(1 << 40)), (3, 6)),
                                      (("u32", 0xFFFFFFFF), ("u32", 1), (1, 2)),
                                      (("u8", 200), ("u8", 0), (4, 1)),
                                      (("u64", (1 << 64) - 1), ("u64", (1 << 63) + 5), (2, 2))]:
        iv, jv = g.arr(it, i0), g.arr(jt, j0)
        pi, pj = m.param(g.arr_shape(it, iv)), m.param(g.arr_shape(jt, jv))
        params += [iv, jv]
        # Indices are read by their value: u64 values >= 2^63 clamp to the top.
        r0 = ds_start(int(iv), 4, sizes[0])
        r1 = ds_start(int(jv), 6, sizes[1])
        roots.append(m.op(g.shape_str("f32", sizes), "dynamic-slice", pa, pi, pj,
                          attrs="dynamic_slice_sizes={%d,%d}" % sizes))
        outs.append(a[r0:r0 + sizes[0], r1:r1 + sizes[1]].copy())
    k = g.arr("s32", 4)
    pk = m.param(g.arr_shape("s32", k))
    params.append(k)
    roots.append(m.op("s16[3]", "dynamic-slice", pb, pk, attrs="dynamic_slice_sizes={3}"))
    outs.append(b[2:5].copy())
    g.case(name, m.text(roots), params, outs)


def fam_dynamic_update_slice(g):
    """dynamic-update-slice with in-range and clamped starts, bf16 and s64."""
    name = "dynamic_update_slice_clamped"
    rng = g.seeded(name)
    m = g.Module(name)
    a = g.arr("bf16", rng.standard_normal((4, 5)).astype(np.float32))
    u = g.arr("bf16", rng.standard_normal((2, 3)).astype(np.float32))
    c = g.arr("s64", rng.integers(-50, 50, (6,)))
    cu = g.arr("s64", [1000, 2000])
    params = [a, u, c, cu]
    pa, pu, pc, pcu = (m.param(g.arr_shape(t, x)) for t, x in
                       zip(["bf16", "bf16", "s64", "s64"], params))
    roots, outs = [], []
    for i0, j0 in [(1, 1), (-3, 4), (7, -1), (2, 2)]:
        iv, jv = g.arr("s32", i0), g.arr("s32", j0)
        pi, pj = m.param("s32[]"), m.param("s32[]")
        params += [iv, jv]
        r0, r1 = ds_start(i0, 4, 2), ds_start(j0, 5, 3)
        w = a.copy()
        w[r0:r0 + 2, r1:r1 + 3] = u
        roots.append(m.op(g.arr_shape("bf16", a), "dynamic-update-slice", pa, pu, pi, pj))
        outs.append(w)
    for k0 in [-1, 3, 5, 6]:
        kv = g.arr("s64", k0)
        pk = m.param("s64[]")
        params.append(kv)
        r = ds_start(k0, 6, 2)
        w = c.copy()
        w[r:r + 2] = cu
        roots.append(m.op(g.arr_shape("s64", c), "dynamic-update-slice", pc, pcu, pk))
        outs.append(w)
    g.case(name, m.text(roots), params, outs)


def fam_dynamic_slice_legacy(g):
    """dynamic-slice and dynamic-update-slice with the legacy single rank-1
    index vector operand, clamped."""
    name = "dynamic_slice_legacy_index_vector"
    rng = g.seeded(name)
    m = g.Module(name)
    a = g.arr("s32", rng.integers(-100, 100, (4, 5)))
    u = g.arr("s32", [[1, 2], [3, 4]])
    iv = g.arr("s32", [3, -2])
    pa, pu, pi = m.param("s32[4,5]"), m.param("s32[2,2]"), m.param("s32[2]")
    r1 = m.op("s32[2,2]", "dynamic-slice", pa, pi, attrs="dynamic_slice_sizes={2,2}")
    r2 = m.op("s32[4,5]", "dynamic-update-slice", pa, pu, pi)
    w2 = a.copy()
    w2[2:4, 0:2] = u
    g.case(name, m.text([r1, r2]), [a, u, iv], [a[2:4, 0:2].copy(), w2])


def families(g):
    return [lambda: fam_dynamic_slice(g), lambda: fam_dynamic_update_slice(g),
            lambda: fam_dynamic_slice_legacy(g)]
