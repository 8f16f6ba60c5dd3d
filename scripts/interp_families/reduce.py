"""reduce.py: reduce cases, compared exactly.

Every reference folds sequentially (acc = init, then acc = f(acc, x) in
row-major order, g.fold), rounding to the element type after every step:
add, multiply, maximum, minimum, and, or over one, several, all and no dims
in every float type and in integers (wrapping); empty and unit dims; an
order-sensitive reducer; a variadic argmax; long rows (bf16 stalling from
its per-step rounding, zeros of both signs under maximum/minimum).
"""
import numpy as np

NAN = float("nan")
INF = float("inf")


def reduce_ref(g, t, op, x, init, dims):
    """reduce over dims, each output folding its elements in row-major order."""
    keep = [d for d in range(x.ndim) if d not in dims]
    out_shape = [x.shape[d] for d in keep]
    out = np.empty(out_shape, x.dtype)
    red_shape = [x.shape[d] for d in dims]
    for oi in np.ndindex(*out_shape):
        xs = []
        for ri in np.ndindex(*red_shape):
            idx = [0] * x.ndim
            for k, d in enumerate(keep):
                idx[d] = oi[k]
            for k, d in enumerate(dims):
                idx[d] = ri[k]
            xs.append(x[tuple(idx)])
        out[oi] = g.fold(t, op, init, xs)
    return out


def fam_reduce_simple(g):
    """reduce with add / multiply / maximum / minimum / and / or over one dim,
    several dims, all dims (rank 0) and no dims, in every float type (folded
    sequentially, rounding each step) and ints (wrapping)."""
    specs = [
        ("reduce_f32_add_rows", "f32", "add", (3, 17), (1,), 0.1, "normal"),
        ("reduce_f32_add_cols_and_all", "f32", "add", (16, 5), (0,), 0.0, "wide"),
        ("reduce_f64_add_mid", "f64", "add", (3, 9, 2), (1,), 0.0, "normal"),
        ("reduce_bf16_add", "bf16", "add", (4, 33), (1,), 0.0, "normal"),
        ("reduce_f16_add_outer", "f16", "add", (20, 3), (0,), 0.0, "normal"),
        ("reduce_f32_max_nan", "f32", "maximum", (4, 6), (1,), -INF, "nan"),
        ("reduce_f32_min_two_dims", "f32", "minimum", (3, 4, 5), (0, 2), INF, "normal"),
        ("reduce_s32_add_wrap", "s32", "add", (3, 4), (1,), 7, "big"),
        ("reduce_u8_multiply", "u8", "multiply", (2, 5), (0, 1), 1, "small"),
        ("reduce_s64_max", "s64", "maximum", (4, 3), (0,), -(1 << 63), "big"),
        ("reduce_pred_and_or", "pred", "and", (3, 4), (1,), True, "pred"),
    ]
    for name, t, op, shape, dims, init, dist in specs:
        rng = g.seeded(name)
        if dist == "normal":
            x = g.to_type(t, rng.standard_normal(shape).astype(np.float32)) if t != "f64" \
                else rng.standard_normal(shape)
        elif dist == "wide":
            x = g.to_type(t, (rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape))
                        .astype(np.float32))
        elif dist == "nan":
            x = rng.standard_normal(shape).astype(np.float32)
            x[1, 2] = NAN
            x[3, 0] = -NAN
            x[3, 5] = INF
        elif dist == "big":
            lo, hi = g.int_range(t)
            x = g.arr(t, rng.integers(lo, hi, shape, dtype=g.NP[t], endpoint=True))
        elif dist == "small":
            x = g.arr(t, rng.integers(1, 6, shape))
        else:
            x = rng.integers(0, 2, shape).astype(bool)
            x[0, :] = True
        m = g.Module(name)
        comp = f"{op}_{t}"
        m.comp(g.binary_comp(comp, op, t))
        px = m.param(g.arr_shape(t, x))
        iv = g.arr(t, init)
        pi = m.param(g.arr_shape(t, iv))
        want = reduce_ref(g, t, op, x, iv[()], dims)
        out_shape = g.shape_str(t, want.shape)
        roots = [m.op(out_shape, "reduce", px, pi,
                      attrs="dimensions={" + ",".join(map(str, dims)) + "}, to_apply=%" + comp)]
        outs = [want]
        if name == "reduce_f32_add_cols_and_all":
            roots.append(m.op("f32[]", "reduce", px, pi, attrs="dimensions={0,1}, to_apply=%" + comp))
            outs.append(reduce_ref(g, t, op, x, iv[()], (0, 1)))
            roots.append(m.op(g.arr_shape(t, x), "reduce", px, pi, attrs="dimensions={}, to_apply=%" + comp))
            outs.append(reduce_ref(g, t, op, x, iv[()], ()))
        if name == "reduce_pred_and_or":
            m.comp(g.binary_comp("or_pred", "or", "pred"))
            roots.append(m.op("pred[4]", "reduce", px, pi, attrs="dimensions={0}, to_apply=%or_pred"))
            outs.append(reduce_ref(g, t, "or", x, True, (0,)))
        g.case(name, m.text(roots), [x, iv], outs)


def fam_reduce_empty(g):
    """Reducing an empty dim gives init; reducing dims of size 1 is identity."""
    name = "reduce_empty_and_unit_dims"
    m = g.Module(name)
    m.comp(g.binary_comp("add_f32", "add", "f32"))
    e = np.zeros((0, 3), np.float32)
    u = g.arr("f32", [[[1.5], [-2.0]]])
    init = g.arr("f32", 0.5)
    pe, pu, pi = m.param("f32[0,3]"), m.param("f32[1,2,1]"), m.param("f32[]")
    roots = [m.op("f32[3]", "reduce", pe, pi, attrs="dimensions={0}, to_apply=%add_f32"),
             m.op("f32[0]", "reduce", pe, pi, attrs="dimensions={1}, to_apply=%add_f32"),
             m.op("f32[2]", "reduce", pu, pi, attrs="dimensions={0,2}, to_apply=%add_f32")]
    outs = [np.full(3, 0.5, np.float32), np.zeros(0, np.float32), g.arr("f32", [2.0, -1.5])]
    g.case(name, m.text(roots), [e, u, init], outs)


def fam_reduce_custom(g):
    """A non-commutative reducer acc*2 + x over two dims: the result spells the
    reduced elements in the order they were folded (row-major)."""
    name = "reduce_s32_order_sensitive"
    rng = g.seeded(name)
    m = g.Module(name)
    m.comp("""
%horner (acc: s32[], x: s32[]) -> s32[] {
  %horner.acc = s32[] parameter(0)
  %horner.x = s32[] parameter(1)
  %horner.two = s32[] constant(2)
  %horner.m = s32[] multiply(s32[] %horner.acc, s32[] %horner.two)
  ROOT %horner.r = s32[] add(s32[] %horner.m, s32[] %horner.x)
}""")
    x = g.arr("s32", rng.integers(0, 2, (3, 2, 4)))
    init = g.arr("s32", 1)
    px, pi = m.param("s32[3,2,4]"), m.param("s32[]")
    roots = [m.op("s32[2]", "reduce", px, pi, attrs="dimensions={0,2}, to_apply=%horner"),
             m.op("s32[3]", "reduce", px, pi, attrs="dimensions={1,2}, to_apply=%horner"),
             m.op("s32[2]", "reduce", px, pi, attrs="dimensions={2,0}, to_apply=%horner")]

    def horner(xs):
        acc = 1
        for v in xs:
            acc = g.wrap(acc * 2 + int(v), "s32")
        return acc
    outs = [g.arr("s32", [horner(x[:, j, :].reshape(-1)) for j in range(2)]),
            g.arr("s32", [horner(x[i].reshape(-1)) for i in range(3)])]
    outs.append(outs[0].copy())     # dimensions={2,0} folds in ascending-dim row-major order too
    g.case(name, m.text(roots), [x, init], outs)


def fam_reduce_variadic(g):
    """Variadic reduce: argmax (value, index) with first-index tie breaking and
    NaN never winning, plus a (sum, count-of-positive) pair of types f32/s32."""
    name = "reduce_variadic_argmax"
    rng = g.seeded(name)
    m = g.Module(name)
    m.comp("""
%argmax (av: f32[], ai: s32[], bv: f32[], bi: s32[]) -> (f32[], s32[]) {
  %argmax.av = f32[] parameter(0)
  %argmax.ai = s32[] parameter(1)
  %argmax.bv = f32[] parameter(2)
  %argmax.bi = s32[] parameter(3)
  %argmax.gt = pred[] compare(f32[] %argmax.bv, f32[] %argmax.av), direction=GT
  %argmax.eq = pred[] compare(f32[] %argmax.bv, f32[] %argmax.av), direction=EQ
  %argmax.lt = pred[] compare(s32[] %argmax.bi, s32[] %argmax.ai), direction=LT
  %argmax.tie = pred[] and(pred[] %argmax.eq, pred[] %argmax.lt)
  %argmax.take = pred[] or(pred[] %argmax.gt, pred[] %argmax.tie)
  %argmax.v = f32[] select(pred[] %argmax.take, f32[] %argmax.bv, f32[] %argmax.av)
  %argmax.i = s32[] select(pred[] %argmax.take, s32[] %argmax.bi, s32[] %argmax.ai)
  ROOT %argmax.r = (f32[], s32[]) tuple(f32[] %argmax.v, s32[] %argmax.i)
}""")
    x = g.arr("f32", rng.integers(-5, 5, (3, 6)).astype(np.float32))
    x[0, 2] = NAN
    x[1, :] = 2.0
    idx = np.tile(np.arange(6, dtype=np.int32), (3, 1))
    px, pidx = m.param("f32[3,6]"), m.param("s32[3,6]")
    vi, ii = g.arr("f32", -INF), g.arr("s32", -1)
    pvi, pii = m.param("f32[]"), m.param("s32[]")
    r = m.op("(f32[3], s32[3])", "reduce", px, pidx, pvi, pii,
             attrs="dimensions={1}, to_apply=%argmax")
    want_v, want_i = [], []
    for row in range(3):
        av, ai = np.float32(-INF), -1
        for j in range(6):
            bv, bi = x[row, j], j
            if bv > av or (bv == av and bi < ai):
                av, ai = bv, bi
        want_v.append(av)
        want_i.append(ai)
    g.case(name, m.text([r]), [x, idx, vi, ii],
         [np.array(want_v, np.float32), np.array(want_i, np.int32)])


def fam_reduce_long(g):
    """Long reductions, still folded sequentially: f32 add over rows of 1500
    (several rows at once), one long s32 row (wrapping), one long f32 row of
    maximum with a NaN in the middle, bf16 add over a row of 2000 (every step
    rounded to bf16), f32 add over the outer dim of [200,7], long rows of
    zeros of both signs under maximum/minimum (equal operands keep the
    accumulator, so the first zero's sign wins), a long pred row under and
    (one false at the very end) and a long u8 row under add (wraps)."""
    name = "reduce_long_rows"
    rng = g.seeded(name)
    m = g.Module(name)
    for t, op in [("f32", "add"), ("s32", "add"), ("f32", "maximum"), ("bf16", "add"),
                  ("f32", "minimum"), ("pred", "and"), ("u8", "add")]:
        m.comp(g.binary_comp(f"{op}_{t}", op, t))
    x = rng.standard_normal((4, 1500)).astype(np.float32)
    y = g.arr("s32", rng.integers(-(1 << 31), 1 << 31, (1, 4113), dtype=np.int64))
    z = rng.standard_normal(5000).astype(np.float32)
    z[3001] = NAN
    w = g.arr("bf16", rng.uniform(0, 1, 2000).astype(np.float32))
    v = rng.standard_normal((200, 7)).astype(np.float32)
    zero_f, zero_i, ninf, zero_b = g.arr("f32", 0.0), g.arr("s32", 0), g.arr("f32", -INF), g.arr("bf16", 0.0)
    params = [x, y, z, w, v, zero_f, zero_i, ninf, zero_b]
    types = ["f32", "s32", "f32", "bf16", "f32", "f32", "s32", "f32", "bf16"]
    px, py, pz, pw, pv, pzf, pzi, pni, pzb = (m.param(g.arr_shape(t, a)) for t, a in zip(types, params))
    roots = [m.op("f32[4]", "reduce", px, pzf, attrs="dimensions={1}, to_apply=%add_f32"),
             m.op("s32[1]", "reduce", py, pzi, attrs="dimensions={1}, to_apply=%add_s32"),
             m.op("f32[]", "reduce", pz, pni, attrs="dimensions={0}, to_apply=%maximum_f32"),
             m.op("bf16[]", "reduce", pw, pzb, attrs="dimensions={0}, to_apply=%add_bf16"),
             m.op("f32[7]", "reduce", pv, pzf, attrs="dimensions={0}, to_apply=%add_f32")]
    outs = [reduce_ref(g, "f32", "add", x, np.float32(0), (1,)),
            reduce_ref(g, "s32", "add", y, 0, (1,)),
            reduce_ref(g, "f32", "maximum", z, np.float32(-INF), (0,)),
            reduce_ref(g, "bf16", "add", w, np.float32(0), (0,)),
            reduce_ref(g, "f32", "add", v, np.float32(0), (0,))]
    # The bf16 sum must show the per-step rounding (it stalls far below the
    # exact sum), so a reduction that accumulated in f32 would fail.
    assert abs(float(outs[3]) - float(np.sum(w.astype(np.float64)))) > 16, outs[3]
    zs = np.where(rng.integers(0, 2, (2, 3000)) == 1, -0.0, 0.0).astype(np.float32)
    zs[0, :] = -0.0        # row 0 only -0, row 1 both signs: IEEE maximum gives -0, +0
    q = np.ones(4000, bool)
    q[-1] = False
    c = g.arr("u8", rng.integers(0, 256, 3001))
    pinf, ptrue, pzu = g.arr("f32", INF), g.arr("pred", True), g.arr("u8", 0)
    more = [zs, q, c, pinf, ptrue, pzu]
    pzs, pq, pc, ppi, ppt, ppz = (m.param(g.arr_shape(t, a)) for t, a in
                                  zip(["f32", "pred", "u8", "f32", "pred", "u8"], more))
    params += more
    roots += [m.op("f32[2]", "reduce", pzs, pni, attrs="dimensions={1}, to_apply=%maximum_f32"),
              m.op("f32[2]", "reduce", pzs, ppi, attrs="dimensions={1}, to_apply=%minimum_f32"),
              m.op("pred[]", "reduce", pq, ppt, attrs="dimensions={0}, to_apply=%and_pred"),
              m.op("u8[]", "reduce", pc, ppz, attrs="dimensions={0}, to_apply=%add_u8")]
    outs += [reduce_ref(g, "f32", "maximum", zs, np.float32(-INF), (1,)),
             reduce_ref(g, "f32", "minimum", zs, np.float32(INF), (1,)),
             reduce_ref(g, "pred", "and", q, True, (0,)),
             reduce_ref(g, "u8", "add", c, 0, (0,))]
    assert list(np.signbit(outs[-4])) == [True, False] and list(np.signbit(outs[-3])) == [True, True]
    g.case(name, m.text(roots), params, outs)


def families(g):
    return [lambda: fam_reduce_simple(g), lambda: fam_reduce_empty(g), lambda: fam_reduce_custom(g),
            lambda: fam_reduce_variadic(g), lambda: fam_reduce_long(g)]
