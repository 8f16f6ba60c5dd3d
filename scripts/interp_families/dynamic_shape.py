"""dynamic_shape.py: get-dimension-size, set-dimension-size, dynamic-reshape.

And the other ops on operands below their bounds (src/interp/dynamic.c):
each computes on the arrays of the runtime shapes (element-wise ops, reduce,
dot, concatenate, slice, pad, reverse, broadcast, transpose, reshape, sort,
reduce-window), except dynamic-slice and dynamic-update-slice, which index
the bounded buffer as XLA runs them.

Values hold their bounded shape; a runtime size travels beside the data
(src/interp/eval_dynamic_shape.c).  hlo-run writes a value of dynamic size
at its runtime shape (the padding is no part of it).  Expected values by
numpy indexing on the runtime shapes; sums fold left in f32.
"""
import numpy as np


def families(g):
    def dimension_sizes():
        """get-dimension-size of static dims, of a bounded parameter (full),
        and after set-dimension-size (sizes from parameters), whose data
        stays the operand's."""
        name = "dimension_size_get_set"
        m = g.Module(name)
        x = g.seeded(name).standard_normal((3, 5)).astype(np.float32)
        y = np.arange(6, dtype=np.int32)
        n0, n1 = np.array(2, np.int32), np.array(4, np.int32)
        px, py = m.param("f32[3,5]"), m.param("s32[<=6]")
        pn0, pn1 = m.param("s32[]"), m.param("s32[]")
        a = m.op("s32[]", "get-dimension-size", px, attrs="dimensions={0}")
        b = m.op("s32[]", "get-dimension-size", px, attrs="dimensions={1}")
        c = m.op("s32[]", "get-dimension-size", py, attrs="dimensions={0}")
        d0 = m.op("f32[<=3,5]", "set-dimension-size", px, pn0, attrs="dimensions={0}")
        d1 = m.op("f32[<=3,<=5]", "set-dimension-size", d0, pn1, attrs="dimensions={1}")
        s0 = m.op("s32[]", "get-dimension-size", d1, attrs="dimensions={0}")
        s1 = m.op("s32[]", "get-dimension-size", d1, attrs="dimensions={1}")
        i32 = lambda v: np.array(v, np.int32)
        g.case(name, m.text([a, b, c, s0, s1, d1]), [x, y, n0, n1],
               [i32(3), i32(5), i32(6), i32(2), i32(4), x[:2, :4].copy()])

    def reshape_case(name, dims, n, sizes, out_dims):
        """set-dimension-size(x, n) on dim 0 then dynamic-reshape to sizes
        in a bounded out_dims; the sizes read back."""
        m = g.Module(name)
        x = g.seeded(name).standard_normal(dims).astype(np.float32)
        px = m.param(g.shape_str("f32", dims))
        pn = m.param("s32[]")
        ps = [m.param("s32[]") for _ in sizes]
        bound = "<=%d" % dims[0]
        dshape = "f32[%s]" % ",".join([bound] + [str(d) for d in dims[1:]])
        d = m.op(dshape, "set-dimension-size", px, pn, attrs="dimensions={0}")
        oshape = "f32[%s]" % ",".join("<=%d" % b for b in out_dims)
        r = m.op(oshape, "dynamic-reshape", d, *ps)
        gets = [m.op("s32[]", "get-dimension-size", r, attrs="dimensions={%d}" % k) for k in range(len(out_dims))]
        want = x[:n].reshape(-1).reshape(sizes)
        g.case(name, m.text([r] + gets), [x, np.array(n, np.int32)] + [np.array(s, np.int32) for s in sizes],
               [want] + [np.array(s, np.int32) for s in sizes])

    def dynamic_reshapes():
        """The logical elements, row-major, at the runtime sizes; a full one
        is a plain reshape."""
        reshape_case("dynamic_reshape_2d_padding", (6, 2), 4, (2, 4), (3, 4))
        reshape_case("dynamic_reshape_3d_padding", (5, 3), 3, (3, 1, 3), (5, 1, 3))
        reshape_case("dynamic_reshape_full", (4, 3), 4, (2, 6), (2, 6))
        reshape_case("dynamic_reshape_empty", (4, 3), 0, (0, 5), (2, 6))

    def fold_sum(a, axis):
        """Sum along axis folding left from 0 in f32, as HLO's reduce does."""
        a = np.moveaxis(np.asarray(a, np.float32), axis, -1)
        acc = np.zeros(a.shape[:-1], np.float32)
        for k in range(a.shape[-1]):
            acc = (acc + a[..., k]).astype(np.float32)
        return acc

    def small_ints(name, shape):
        """Small integers as f32: every sum and product here is exact."""
        return g.seeded(name).integers(-6, 7, shape).astype(np.float32)

    def prefix(m, shape, bounded, n_param, dim):
        """set-dimension-size of a parameter of shape to the size held by
        parameter n_param in dimension dim."""
        return m.op(bounded, "set-dimension-size", shape, n_param, attrs="dimensions={%d}" % dim)

    def elementwise_reduce_dot():
        """multiply, reduce and dot (against a static operand) over a
        dimension of dynamic size: the padding takes no part."""
        name = "dynamic_elementwise_reduce_dot"
        m = g.Module(name)
        m.comps.insert(0, g.binary_comp("dyn_add", "add", "f32"))
        x = small_ints(name, (4, 6))
        w = small_ints(name + ".w", (6, 3))
        n = 4
        px, pn, pw = m.param("f32[4,6]"), m.param("s32[]"), m.param("f32[6,3]")
        d = prefix(m, px, "f32[4,<=6]", pn, 1)
        sq = m.op("f32[4,<=6]", "multiply", d, d)
        z = m.constant("f32[]", "0")
        r = m.op("f32[4]", "reduce", sq, z, attrs="dimensions={1}, to_apply=%dyn_add")
        dot = m.op("f32[4,3]", "dot", d, pw, attrs="lhs_contracting_dims={1}, rhs_contracting_dims={0}")
        v = x[:, :n]
        g.case(name, m.text([sq, r, dot]), [x, np.array(n, np.int32), w],
               [v * v, fold_sum(v * v, 1), (v.astype(np.float64) @ w[:n].astype(np.float64)).astype(np.float32)])

    def movement():
        """concatenate, slice, pad, reverse, broadcast and transpose of a
        value of dynamic size, each written at its runtime shape."""
        name = "dynamic_movement"
        m = g.Module(name)
        x = small_ints(name, (8,))
        y = small_ints(name + ".y", (3, 5))
        n, k = 5, 2
        px, pn, py, pk = m.param("f32[8]"), m.param("s32[]"), m.param("f32[3,5]"), m.param("s32[]")
        d = prefix(m, px, "f32[<=8]", pn, 0)
        e = prefix(m, py, "f32[<=3,5]", pk, 0)
        z = m.constant("f32[]", "-1")
        cat = m.op("f32[<=16]", "concatenate", d, d, attrs="dimensions={0}")
        sl = m.op("f32[<=3]", "slice", d, attrs="slice={[1:7:2]}")
        pad = m.op("f32[<=18]", "pad", d, z, attrs="padding=1_2_1")
        rev = m.op("f32[<=8]", "reverse", d, attrs="dimensions={0}")
        bc = m.op("f32[2,<=8]", "broadcast", d, attrs="dimensions={1}")
        tr = m.op("f32[5,<=3]", "transpose", e, attrs="dimensions={1,0}")
        v = x[:n]
        padded = np.full(1 + n + (n - 1) + 2, -1, np.float32)
        padded[1:1 + 2 * n - 1:2] = v
        g.case(name, m.text([cat, sl, pad, rev, bc, tr]),
               [x, np.array(n, np.int32), y, np.array(k, np.int32)],
               [np.concatenate([v, v]), v[1:7:2], padded, v[::-1].copy(), np.stack([v, v]), y[:k].T.copy()])

    def select_broadcast_sort_window():
        """A static operand against a dynamic one (the result has the dynamic
        size), a scalar broadcast into a dynamic dimension (full), sort and
        reduce-window on the runtime size, reshape of a dynamic value."""
        name = "dynamic_select_sort_window_reshape"
        m = g.Module(name)
        m.comps.insert(0, g.binary_comp("dyn_add", "add", "f32"))
        m.comp("""
%dyn_lt (a: f32[], b: f32[]) -> pred[] {
  %dyn_lt.a = f32[] parameter(0)
  %dyn_lt.b = f32[] parameter(1)
  ROOT %dyn_lt.r = pred[] compare(f32[] %dyn_lt.a, f32[] %dyn_lt.b), direction=LT
}""")
        x = small_ints(name, (8,))
        q = small_ints(name + ".q", (4, 6))
        n, k = 6, 3
        px, pn, pq, pk = m.param("f32[8]"), m.param("s32[]"), m.param("f32[4,6]"), m.param("s32[]")
        d = prefix(m, px, "f32[<=8]", pn, 0)
        e = prefix(m, pq, "f32[4,<=6]", pk, 1)
        two = m.constant("f32[]", "2")
        b = m.op("f32[<=8]", "broadcast", two, attrs="dimensions={}")
        gt = m.op("pred[<=8]", "compare", d, b, attrs="direction=GT")
        sel = m.op("f32[<=8]", "select", gt, d, px)
        bsize = m.op("s32[]", "get-dimension-size", b, attrs="dimensions={0}")
        srt = m.op("f32[<=8]", "sort", d, attrs="dimensions={0}, to_apply=%dyn_lt")
        z = m.constant("f32[]", "0")
        rw = m.op("f32[<=7]", "reduce-window", d, z, attrs="window={size=2}, to_apply=%dyn_add")
        rs = m.op("f32[<=24]", "reshape", e)
        v = x[:n]
        g.case(name, m.text([sel, bsize, srt, rw, rs]),
               [x, np.array(n, np.int32), q, np.array(k, np.int32)],
               [np.where(v > 2, v, x[:n]), np.array(8, np.int32), np.sort(v, kind="stable"),
                (v[:-1] + v[1:]).astype(np.float32), q[:, :k].reshape(-1).copy()])

    def slices_index_the_buffer():
        """dynamic-update-slice at the runtime size writes into the padding
        (the start is clamped by the bound) and set-dimension-size takes it
        in: a stack's push; a dynamic-slice of the whole bound carries the
        size, a smaller one reads the buffer at its clamped start."""
        name = "dynamic_update_slice_push"
        m = g.Module(name)
        x = small_ints(name, (8,))
        n = 3
        px, pn = m.param("f32[8]"), m.param("s32[]")
        d = prefix(m, px, "f32[<=8]", pn, 0)
        u = m.constant("f32[1]", "{42}")
        pushed = m.op("f32[<=8]", "dynamic-update-slice", d, u, pn)
        one = m.constant("s32[]", "1")
        n1 = m.op("s32[]", "add", pn, one)
        grown = m.op("f32[<=8]", "set-dimension-size", pushed, n1, attrs="dimensions={0}")
        zero = m.constant("s32[]", "0")
        whole = m.op("f32[<=8]", "dynamic-slice", grown, zero, attrs="dynamic_slice_sizes={8}")
        top = m.op("f32[1]", "dynamic-slice", grown, pn, attrs="dynamic_slice_sizes={1}")
        g.case(name, m.text([pushed, whole, top]), [x, np.array(n, np.int32)],
               [x[:n].copy(), np.concatenate([x[:n], np.array([42], np.float32)]), np.array([42], np.float32)])

    def gather_rows():
        """gather of rows of a dynamic operand by dynamic indices (the batch
        dimension takes the indices' size), and of whole columns (a slice of
        the operand's whole bound takes its size)."""
        name = "dynamic_gather"
        m = g.Module(name)
        x = small_ints(name, (8, 3))
        idx = np.array([[4], [0], [2], [1]], np.int32)
        n, k = 5, 3
        px, pn, pi, pk = m.param("f32[8,3]"), m.param("s32[]"), m.param("s32[4,1]"), m.param("s32[]")
        d = prefix(m, px, "f32[<=8,3]", pn, 0)
        di = prefix(m, pi, "s32[<=4,1]", pk, 0)
        rows = m.op("f32[<=4,3]", "gather", d, di,
                    attrs="offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                          "slice_sizes={1,3}")
        cols = m.op("f32[4,<=8]", "gather", d, pi,
                    attrs="offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, "
                          "slice_sizes={8,1}")
        cidx = np.minimum(idx[:, 0], 2)          # a start index clamps to fit the slice
        g.case(name, m.text([rows, cols]), [x, np.array(n, np.int32), idx, np.array(k, np.int32)],
               [x[idx[:k, 0]].copy(), x[:n, cidx].T.copy()])

    return [dimension_sizes, dynamic_reshapes, elementwise_reduce_dot, movement, select_broadcast_sort_window,
            slices_index_the_buffer, gather_rows]
