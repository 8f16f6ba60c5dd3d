"""control_flow.py: tuples, called computations and control flow, compared exactly.

tuple and get-tuple-element (nested), call and fusion, while (a counted
loop rounding every step, a zero-trip loop), conditional (pred and indexed
forms, out-of-range indices running the last branch, branches of different
operand types returning tuples, a call nested in a branch), map,
opt-barrier, after-all and add-dependency.
"""
import numpy as np

NAN = float("nan")


def fam_tuple_gte(g):
    """tuple (nested), get-tuple-element, a nested tuple root (leaves in order)."""
    name = "tuple_get_tuple_element_nested"
    m = g.Module(name)
    a = g.arr("f32", [1.0, 2.0])
    b = g.arr("s8", -4)
    c = g.arr("pred", [[True, False]])
    pa, pb, pc = m.param("f32[2]"), m.param("s8[]"), m.param("pred[1,2]")
    inner = m.tuple(pa, pb)
    outer = m.op("((f32[2], s8[]), pred[1,2])", "tuple", inner, pc)
    g0 = m.op("(f32[2], s8[])", "get-tuple-element", outer, attrs="index=0")
    g01 = m.op("s8[]", "get-tuple-element", g0, attrs="index=1")
    g1 = m.op("pred[1,2]", "get-tuple-element", outer, attrs="index=1")
    g00 = m.op("f32[2]", "get-tuple-element", g0, attrs="index=0")
    neg = m.op("f32[2]", "negate", g00)
    root = m.op("((s8[], f32[2]), pred[1,2], f32[2])", "tuple",
                m.tuple(g01, neg), g1, g00)
    g.case(name, m.text([root]), [a, b, c], [b.copy(), -a, c.copy(), a.copy()])


def fam_call_fusion(g):
    """call and fusion (single and tuple-shaped output) run their computation."""
    name = "call_and_fusion"
    m = g.Module(name)
    m.comp("""
%fma (a: f32[4], b: f32[4]) -> f32[4] {
  %fma.a = f32[4] parameter(0)
  %fma.b = f32[4] parameter(1)
  %fma.m = f32[4] multiply(f32[4] %fma.a, f32[4] %fma.b)
  ROOT %fma.r = f32[4] add(f32[4] %fma.m, f32[4] %fma.a)
}""")
    m.comp("""
%fused (x: f32[4], y: s32[4]) -> (f32[4], s32[4]) {
  %fused.x = f32[4] parameter(0)
  %fused.y = s32[4] parameter(1)
  %fused.c = f32[4] convert(s32[4] %fused.y)
  %fused.s = f32[4] subtract(f32[4] %fused.x, f32[4] %fused.c)
  %fused.n = s32[4] negate(s32[4] %fused.y)
  ROOT %fused.t = (f32[4], s32[4]) tuple(f32[4] %fused.s, s32[4] %fused.n)
}""")
    m.comp("""
%fused_scale (x: f32[4]) -> f32[4] {
  %fused_scale.x = f32[4] parameter(0)
  %fused_scale.k = f32[] constant(0.5)
  %fused_scale.b = f32[4] broadcast(f32[] %fused_scale.k), dimensions={}
  ROOT %fused_scale.r = f32[4] multiply(f32[4] %fused_scale.x, f32[4] %fused_scale.b)
}""")
    rng = g.seeded(name)
    a = g.dyadic(rng, "f32", (4,))
    b = g.dyadic(rng, "f32", (4,))
    y = g.arr("s32", [1, -2, 3, 2147483647])
    pa, pb, py = m.param("f32[4]"), m.param("f32[4]"), m.param("s32[4]")
    c = m.op("f32[4]", "call", pa, pb, attrs="to_apply=%fma")
    f = m.op("(f32[4], s32[4])", "fusion", c, py, attrs="kind=kLoop, calls=%fused")
    f0 = m.op("f32[4]", "get-tuple-element", f, attrs="index=0")
    f1 = m.op("s32[4]", "get-tuple-element", f, attrs="index=1")
    s = m.op("f32[4]", "fusion", f0, attrs="kind=kOutput, calls=%fused_scale")
    call_v = (a * b + a).astype(np.float32)
    sub = (call_v - y.astype(np.float32)).astype(np.float32)
    g.case(name, m.text([c, s, f1]), [a, b, y],
         [call_v, (sub * np.float32(0.5)).astype(np.float32), g.arr("s32", [-1, 2, -3, -2147483647])])


def fam_while(g):
    """while: a counted loop carrying (s32 counter, f32 vector, bf16 scalar),
    rounding every step; and a loop whose condition is false at once."""
    name = "while_counted_and_zero_trip"
    m = g.Module(name)
    m.comp("""
%cond (s: (s32[], f32[3], bf16[])) -> pred[] {
  %cond.s = (s32[], f32[3], bf16[]) parameter(0)
  %cond.i = s32[] get-tuple-element((s32[], f32[3], bf16[]) %cond.s), index=0
  %cond.n = s32[] constant(7)
  ROOT %cond.lt = pred[] compare(s32[] %cond.i, s32[] %cond.n), direction=LT
}""")
    m.comp("""
%body (s: (s32[], f32[3], bf16[])) -> (s32[], f32[3], bf16[]) {
  %body.s = (s32[], f32[3], bf16[]) parameter(0)
  %body.i = s32[] get-tuple-element((s32[], f32[3], bf16[]) %body.s), index=0
  %body.x = f32[3] get-tuple-element((s32[], f32[3], bf16[]) %body.s), index=1
  %body.z = bf16[] get-tuple-element((s32[], f32[3], bf16[]) %body.s), index=2
  %body.one = s32[] constant(1)
  %body.i1 = s32[] add(s32[] %body.i, s32[] %body.one)
  %body.k = f32[] constant(1.1)
  %body.kb = f32[3] broadcast(f32[] %body.k), dimensions={}
  %body.x1 = f32[3] multiply(f32[3] %body.x, f32[3] %body.kb)
  %body.x2 = f32[3] add(f32[3] %body.x1, f32[3] %body.x)
  %body.zk = bf16[] constant(0.3)
  %body.z1 = bf16[] add(bf16[] %body.z, bf16[] %body.zk)
  ROOT %body.r = (s32[], f32[3], bf16[]) tuple(s32[] %body.i1, f32[3] %body.x2, bf16[] %body.z1)
}""")
    i0, i9 = g.arr("s32", 0), g.arr("s32", 9)
    x = g.arr("f32", [1.0, -0.3, 1e30])
    z = g.arr("bf16", 1.0)
    pi0, pi9, px, pz = m.param("s32[]"), m.param("s32[]"), m.param("f32[3]"), m.param("bf16[]")
    shape = "(s32[], f32[3], bf16[])"
    t0 = m.tuple(pi0, px, pz)
    t9 = m.tuple(pi9, px, pz)
    w0 = m.op(shape, "while", t0, attrs="condition=%cond, body=%body")
    w9 = m.op(shape, "while", t9, attrs="condition=%cond, body=%body")
    xs, zs = x.copy(), np.float32(z)
    k = np.float32(1.1)
    zk = g.bf16(np.float32(0.3))[()]
    for _ in range(7):
        xs = ((xs * k).astype(np.float32) + xs).astype(np.float32)
        zs = g.bf16(np.float32(zs + zk))[()]
    g.case(name, m.text([w0, w9]), [i0, i9, x, z],
         [g.arr("s32", 7), xs, np.array(zs, np.float32), g.arr("s32", 9), x.copy(), z.copy()])


def fam_conditional(g):
    """conditional: pred form (both branches) and indexed form with in-range,
    negative and too-large indices (the last two run the last branch)."""
    name = "conditional_pred_and_index"
    m = g.Module(name)
    for nm, body in [("neg", "negate(f32[3] %neg.x)"), ("dbl", "add(f32[3] %dbl.x, f32[3] %dbl.x)"),
                     ("ident", "copy(f32[3] %ident.x)"), ("sq", "multiply(f32[3] %sq.x, f32[3] %sq.x)")]:
        m.comp(f"""
%{nm} (x: f32[3]) -> f32[3] {{
  %{nm}.x = f32[3] parameter(0)
  ROOT %{nm}.r = f32[3] {body}
}}""")
    x = g.arr("f32", [1.5, -2.0, 3.0])
    y = g.arr("f32", [4.0, 0.5, -1.0])
    params = [x, y]
    px, py = m.param("f32[3]"), m.param("f32[3]")
    roots, outs = [], []
    for v in [True, False]:
        pv = g.arr("pred", v)
        pp = m.param("pred[]")
        params.append(pv)
        roots.append(m.op("f32[3]", "conditional", pp, px, py,
                          attrs="true_computation=%neg, false_computation=%dbl"))
        outs.append(-x if v else y + y)
    branches = [lambda v: -v, lambda v: v + v, lambda v: v.copy(), lambda v: v * v]
    for k in [0, 1, 2, -1, 4, -2147483648]:
        kv = g.arr("s32", k)
        pk = m.param("s32[]")
        params.append(kv)
        roots.append(m.op("f32[3]", "conditional", pk, px, py, px, py,
                          attrs="branch_computations={%neg, %dbl, %ident, %sq}"))
        b = k if 0 <= k < 4 else 3
        outs.append(branches[b]([x, y, x, y][b]).astype(np.float32))
    g.case(name, m.text(roots), params, outs)


def fam_map(g):
    """map applies a scalar computation elementwise (two operands, rank 2; and a
    unary one on s16 that wraps)."""
    name = "map_binary_and_unary"
    rng = g.seeded(name)
    m = g.Module(name)
    m.comp("""
%mx2 (x: f32[], y: f32[]) -> f32[] {
  %mx2.x = f32[] parameter(0)
  %mx2.y = f32[] parameter(1)
  %mx2.m = f32[] maximum(f32[] %mx2.x, f32[] %mx2.y)
  ROOT %mx2.r = f32[] add(f32[] %mx2.m, f32[] %mx2.x)
}""")
    m.comp("""
%sq16 (x: s16[]) -> s16[] {
  %sq16.x = s16[] parameter(0)
  ROOT %sq16.r = s16[] multiply(s16[] %sq16.x, s16[] %sq16.x)
}""")
    a = g.arr("f32", rng.standard_normal((2, 3)).astype(np.float32))
    b = g.arr("f32", rng.standard_normal((2, 3)).astype(np.float32))
    a[0, 0] = NAN
    c = g.arr("s16", [300, -200, 181, 182, 32767])
    pa, pb, pc = m.param("f32[2,3]"), m.param("f32[2,3]"), m.param("s16[5]")
    r1 = m.op("f32[2,3]", "map", pa, pb, attrs="dimensions={0,1}, to_apply=%mx2")
    r2 = m.op("s16[5]", "map", pc, attrs="dimensions={0}, to_apply=%sq16")
    w1 = (g.ieee_max(a, b) + a).astype(np.float32)
    w2 = g.arr("s16", [g.wrap(int(v) * int(v), "s16") for v in c.tolist()])
    g.case(name, m.text([r1, r2]), [a, b, c], [w1, w2])


def fam_opt_barrier_after_all(g):
    """opt-barrier is the identity on a tuple; after-all makes tokens and
    add-dependency passes its value through."""
    name = "opt_barrier_after_all"
    m = g.Module(name)
    a = g.arr("f32", [1.0, NAN])
    b = g.arr("u32", 77)
    pa, pb = m.param("f32[2]"), m.param("u32[]")
    t = m.tuple(pa, pb)
    ob = m.op("(f32[2], u32[])", "opt-barrier", t)
    o0 = m.op("f32[2]", "get-tuple-element", ob, attrs="index=0")
    o1 = m.op("u32[]", "get-tuple-element", ob, attrs="index=1")
    tk0 = m.op("token[]", "after-all")
    tk1 = m.op("token[]", "after-all", tk0)
    tk2 = m.op("token[]", "after-all", tk0, tk1)
    d = m.op("f32[2]", "add-dependency", o0, tk2)
    n = m.op("f32[2]", "negate", d)
    g.case(name, m.text([n, o1]), [a, b], [-a, b.copy()])


def fam_conditional_tuple(g):
    """conditional whose branches take different operand types and return a
    tuple; a call nested in a branch; a while whose body calls a fusion."""
    name = "conditional_tuple_nested_calls"
    m = g.Module(name)
    m.comp("""
%sum3 (v: f32[3]) -> f32[] {
  %sum3.v = f32[3] parameter(0)
  %sum3.z = f32[] constant(0)
  ROOT %sum3.r = f32[] reduce(f32[3] %sum3.v, f32[] %sum3.z), dimensions={0}, to_apply=%sum3_add
}""")
    m.comps.insert(0, g.binary_comp("sum3_add", "add", "f32"))
    m.comp("""
%br_f (v: f32[3]) -> (f32[], s32[]) {
  %br_f.v = f32[3] parameter(0)
  %br_f.s = f32[] call(f32[3] %br_f.v), to_apply=%sum3
  %br_f.k = s32[] constant(-1)
  ROOT %br_f.r = (f32[], s32[]) tuple(f32[] %br_f.s, s32[] %br_f.k)
}""")
    m.comp("""
%br_i (w: s32[2]) -> (f32[], s32[]) {
  %br_i.w = s32[2] parameter(0)
  %br_i.s = s32[1] slice(s32[2] %br_i.w), slice={[1:2]}
  %br_i.a = s32[] reshape(s32[1] %br_i.s)
  %br_i.z = f32[] constant(0.25)
  ROOT %br_i.r = (f32[], s32[]) tuple(f32[] %br_i.z, s32[] %br_i.a)
}""")
    x = g.arr("f32", [0.5, 1.25, -3.0])
    w = g.arr("s32", [7, 42])
    pt, pf = g.arr("pred", True), g.arr("pred", False)
    px, pw, ppt, ppf = m.param("f32[3]"), m.param("s32[2]"), m.param("pred[]"), m.param("pred[]")
    c1 = m.op("(f32[], s32[])", "conditional", ppt, px, pw,
              attrs="true_computation=%br_f, false_computation=%br_i")
    c2 = m.op("(f32[], s32[])", "conditional", ppf, px, pw,
              attrs="true_computation=%br_f, false_computation=%br_i")
    g.case(name, m.text([c1, c2]), [x, w, pt, pf],
         [g.arr("f32", -1.25), g.arr("s32", -1), g.arr("f32", 0.25), g.arr("s32", 42)])


def families(g):
    return [lambda: fam_tuple_gte(g), lambda: fam_call_fusion(g), lambda: fam_while(g),
            lambda: fam_conditional(g), lambda: fam_map(g), lambda: fam_opt_barrier_after_all(g),
            lambda: fam_conditional_tuple(g)]
