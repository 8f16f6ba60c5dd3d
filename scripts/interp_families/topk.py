"""topk.py: topk cases, all compared exactly.

The reference is XLA's TopkDecomposer: a stable sort of each row of the last
dimension by total order (GtTotalOrder for largest=true, LtTotalOrder for
largest=false) on the values alone, then the first k values and their s32
positions.  So -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, equal values
(same bits) keep the lower index first in either direction.  Integers and
pred by value.
"""
import numpy as np

NAN = float("nan")
INF = float("inf")


def keys(g, t, a):
    """Ordered integer keys of a's elements, as Python ints."""
    if t in g.FLOATS:
        return g.total_order_key(t, a)
    return a.astype(object)


def topk_ref(g, t, x, k, largest):
    """Stable sort of each last-dim row by key (descending when largest)."""
    key = keys(g, t, x).reshape(-1, x.shape[-1])
    rows = x.reshape(-1, x.shape[-1])
    vals = np.empty((rows.shape[0], k), x.dtype)
    idx = np.empty((rows.shape[0], k), np.int32)
    for r in range(rows.shape[0]):
        order = sorted(range(rows.shape[1]), key=lambda j: -key[r][j] if largest else key[r][j])[:k]
        vals[r] = rows[r][order]
        idx[r] = order
    shape = x.shape[:-1] + (k,)
    return vals.reshape(shape), idx.reshape(shape)


def topk_case(g, name, t, x, ks_largest):
    """One module: a topk per (k, largest) on the same operand."""
    m = g.Module(name)
    px = m.param(g.arr_shape(t, x))
    roots, outs = [], []
    for k, largest in ks_largest:
        out_dims = x.shape[:-1] + (k,)
        shape = f"({g.shape_str(t, out_dims)}, {g.shape_str('s32', out_dims)})"
        r = m.op(shape, "topk", px, attrs=f"k={k}, largest={'true' if largest else 'false'}")
        for j, want in enumerate(topk_ref(g, t, x, k, largest)):
            roots.append(m.op(g.shape_str(t if j == 0 else "s32", out_dims), "get-tuple-element", r,
                              attrs=f"index={j}"))
            outs.append(want)
    g.case(name, m.text(roots), [x], outs)


def fam_topk(g):
    """topk: k = 1, a middle k and k = n, largest and smallest, on rank 1 to
    4 (batch dims before the last), every float type with ties (lower index
    first both ways), NaNs of both signs, infinities and signed zeros (total
    order), integers (s8 to u64, extremes) and pred, a row of 1000 (the heap
    of k against a long stream) and k = 0."""
    for t in ("f32", "f64", "f16", "bf16"):
        name = f"topk_{t}_ties_specials"
        rng = g.seeded(name)
        row = [NAN, -NAN, INF, -INF, 0.0, -0.0, 1.5, 1.5, -2.0, 1.5, 0.0, -0.0, 3.0, -2.0]
        a = np.array([row, list(rng.permutation(row))], dtype=np.float64)
        x = g.arr(t, a)
        n = x.shape[-1]
        topk_case(g, name, t, x, [(1, True), (5, True), (n, True), (1, False), (6, False), (n, False)])
    for t, shape in (("f32", (7,)), ("f64", (3, 4, 6)), ("bf16", (2, 3, 2, 5)), ("f16", (4, 9))):
        name = f"topk_{t}_rank{len(shape)}"
        rng = g.seeded(name)
        x = g.arr(t, rng.integers(-4, 5, shape).astype(np.float64) / 2)
        n = shape[-1]
        topk_case(g, name, t, x, [(1, True), (n // 2, True), (n, False), (2, False)])
    for t in ("s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"):
        name = f"topk_{t}"
        rng = g.seeded(name)
        lo, hi = g.int_range(t)
        vals = [lo, hi, 0, 1, lo, hi, 7, 7, 3] + [int(v) for v in rng.integers(-5, 6, 7)]
        x = g.arr(t, [vals, list(reversed(vals))])
        topk_case(g, name, t, x, [(1, True), (4, True), (16, True), (3, False), (16, False)])
    name = "topk_pred"
    x = g.arr("pred", [[False, True, False, True, True], [False, False, False, False, True]])
    topk_case(g, name, "pred", x, [(2, True), (5, True), (3, False)])
    name = "topk_f32_long_row"
    rng = g.seeded(name)
    x = g.arr("f32", rng.integers(-50, 50, (3, 1000)).astype(np.float64) / 4)
    topk_case(g, name, "f32", x, [(1, True), (10, True), (37, False), (1000, True)])
    name = "topk_f32_k0"
    x = g.arr("f32", [[1.0, 2.0], [3.0, 4.0]])
    topk_case(g, name, "f32", x, [(0, True), (0, False)])


def families(g):
    return [lambda: fam_topk(g)]
