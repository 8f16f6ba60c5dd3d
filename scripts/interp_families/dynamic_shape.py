"""dynamic_shape.py: get-dimension-size, set-dimension-size, dynamic-reshape.

Values hold their bounded shape; a runtime size travels beside the data
(src/interp/eval_dynamic_shape.c).  The padded form is what hlo-run writes:
set-dimension-size leaves the operand's elements in the padding,
dynamic-reshape writes zeros there.  Expected values by numpy indexing.
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
               [i32(3), i32(5), i32(6), i32(2), i32(4), x.copy()])

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
        logical = x[:n].reshape(-1)
        want = np.zeros(out_dims, np.float32)
        want[tuple(slice(0, s) for s in sizes)] = logical.reshape(sizes)
        g.case(name, m.text([r] + gets), [x, np.array(n, np.int32)] + [np.array(s, np.int32) for s in sizes],
               [want] + [np.array(s, np.int32) for s in sizes])

    def dynamic_reshapes():
        """The logical elements, row-major, laid out in the bounded result
        with zeros in the padding; a full one is a plain reshape."""
        reshape_case("dynamic_reshape_2d_padding", (6, 2), 4, (2, 4), (3, 4))
        reshape_case("dynamic_reshape_3d_padding", (5, 3), 3, (3, 1, 3), (5, 1, 3))
        reshape_case("dynamic_reshape_full", (4, 3), 4, (2, 6), (2, 6))
        reshape_case("dynamic_reshape_empty", (4, 3), 0, (0, 5), (2, 6))

    return [dimension_sizes, dynamic_reshapes]
