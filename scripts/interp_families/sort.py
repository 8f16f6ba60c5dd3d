"""sort.py: sort cases, compared exactly.

The reference is a stable sort (Python's sorted) by the key the comparator
orders by: IEEE values for LT/GT (-0 and +0 tie), g.total_order_key for
TOTALORDER, integer values for keys a double cannot tell apart; multi-operand
sorts along either dim, comparators on another operand or on |x|, empty
arrays, and long rows for the merge passes.
"""
import numpy as np

NAN = float("nan")
INF = float("inf")


def cmp_comp(name, t, direction, extra=""):
    return f"""
%{name} (a: {t}[], b: {t}[]) -> pred[] {{
  %{name}.a = {t}[] parameter(0)
  %{name}.b = {t}[] parameter(1)
  ROOT %{name}.r = pred[] compare({t}[] %{name}.a, {t}[] %{name}.b), direction={direction}{extra}
}}"""


def stable_sort_along(keys, axis, key_fn, others=()):
    """Stable sort of keys (and others, permuted alike) along axis by key_fn."""
    keys = np.moveaxis(keys, axis, -1)
    outs = [np.empty_like(keys)] + [np.empty_like(np.moveaxis(o, axis, -1)) for o in others]
    moved = [np.moveaxis(o, axis, -1) for o in others]
    for idx in np.ndindex(*keys.shape[:-1]):
        row = keys[idx]
        order = sorted(range(row.shape[0]), key=lambda j: key_fn(row[j]))
        outs[0][idx] = row[order]
        for k, o in enumerate(moved):
            outs[k + 1][idx] = o[idx][order]
    return [np.moveaxis(o, -1, axis).copy() for o in outs]


def fam_sort(g):
    """sort: stable ascending f32 (-0 and +0 and duplicates keep their order),
    TOTALORDER over NaNs/infinities/zeros, multi-operand descending on a
    rank-2 array along dim 1, along dim 0 with u16 keys, by |x|, and an
    empty array."""
    rng = g.seeded("sort")
    # 1. ascending, LT: ties (including -0 == +0) keep input order.
    name = "sort_f32_stable_lt"
    m = g.Module(name)
    m.comp(cmp_comp("lt_f32", "f32", "LT"))
    x = g.arr("f32", [3.0, -0.0, 1.0, 0.0, -2.0, 1.0, -0.0, 7.5, -INF, INF])
    idx = g.arr("s32", list(range(10)))
    px, pi = m.param("f32[10]"), m.param("s32[10]")
    m.comp("""
%lt_key (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %lt_key.a = f32[] parameter(0)
  %lt_key.b = f32[] parameter(1)
  %lt_key.c = s32[] parameter(2)
  %lt_key.d = s32[] parameter(3)
  ROOT %lt_key.r = pred[] compare(f32[] %lt_key.a, f32[] %lt_key.b), direction=LT
}""")
    r1 = m.op("f32[10]", "sort", px, attrs="dimensions={0}, is_stable=true, to_apply=%lt_f32")
    r2 = m.op("(f32[10], s32[10])", "sort", px, pi,
              attrs="dimensions={0}, is_stable=true, to_apply=%lt_key")
    w = stable_sort_along(x, 0, lambda v: float(v), [idx])
    g.case(name, m.text([r1, r2]), [x, idx], [w[0], w[0], w[1]])

    # 2. TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
    name = "sort_f32_totalorder"
    m = g.Module(name)
    m.comp(cmp_comp("lt_total", "f32", "LT", ", type=TOTALORDER"))
    x = g.arr("f32", [NAN, 1.0, -0.0, -NAN, 0.0, -INF, INF, -1.0, 2.5, -0.0])
    px = m.param("f32[10]")
    r = m.op("f32[10]", "sort", px, attrs="dimensions={0}, is_stable=true, to_apply=%lt_total")
    key = g.total_order_key("f32", x)
    order = sorted(range(10), key=lambda j: key[j])
    g.case(name, m.text([r]), [x], [x[order].copy()])

    # 3. Multi-operand, descending by s32 keys along dim 1, three operands.
    name = "sort_multi_operand_desc_dim1"
    m = g.Module(name)
    m.comp("""
%gt_key3 (a: s32[], b: s32[], c: f32[], d: f32[], e: u8[], f: u8[]) -> pred[] {
  %gt_key3.a = s32[] parameter(0)
  %gt_key3.b = s32[] parameter(1)
  %gt_key3.c = f32[] parameter(2)
  %gt_key3.d = f32[] parameter(3)
  %gt_key3.e = u8[] parameter(4)
  %gt_key3.f = u8[] parameter(5)
  ROOT %gt_key3.r = pred[] compare(s32[] %gt_key3.a, s32[] %gt_key3.b), direction=GT
}""")
    k = g.arr("s32", rng.integers(-3, 3, (3, 8)))
    v = g.arr("f32", rng.standard_normal((3, 8)).astype(np.float32))
    u = g.arr("u8", np.tile(np.arange(8), (3, 1)))
    pk, pv, pu = m.param("s32[3,8]"), m.param("f32[3,8]"), m.param("u8[3,8]")
    r = m.op("(s32[3,8], f32[3,8], u8[3,8])", "sort", pk, pv, pu,
             attrs="dimensions={1}, is_stable=true, to_apply=%gt_key3")
    w = stable_sort_along(k, 1, lambda a: -int(a), [v, u])
    g.case(name, m.text([r]), [k, v, u], w)

    # 4. Along dim 0, u16 keys (values above 32767 sort as unsigned), a
    #    comparator on the second operand (s8), and sorting by |x|.
    name = "sort_dim0_and_custom_comparators"
    m = g.Module(name)
    m.comp(cmp_comp("lt_u16", "u16", "LT"))
    m.comp("""
%by_second (a: f32[], b: f32[], c: s8[], d: s8[]) -> pred[] {
  %by_second.a = f32[] parameter(0)
  %by_second.b = f32[] parameter(1)
  %by_second.c = s8[] parameter(2)
  %by_second.d = s8[] parameter(3)
  ROOT %by_second.r = pred[] compare(s8[] %by_second.c, s8[] %by_second.d), direction=LT
}""")
    m.comp("""
%by_abs (a: f64[], b: f64[]) -> pred[] {
  %by_abs.a = f64[] parameter(0)
  %by_abs.b = f64[] parameter(1)
  %by_abs.x = f64[] abs(f64[] %by_abs.a)
  %by_abs.y = f64[] abs(f64[] %by_abs.b)
  ROOT %by_abs.r = pred[] compare(f64[] %by_abs.x, f64[] %by_abs.y), direction=LT
}""")
    ku = g.arr("u16", rng.integers(0, 65536, (5, 2)))
    ku[1, 0] = ku[3, 0]
    fv = g.arr("f32", rng.standard_normal(7).astype(np.float32))
    sk = g.arr("s8", [5, -3, 5, 127, -128, 0, -3])
    dv = g.arr("f64", [-3.0, 2.0, -1.0, 1.0, 0.5, -2.0, 3.0, -0.5])
    pku, pfv, psk, pdv = m.param("u16[5,2]"), m.param("f32[7]"), m.param("s8[7]"), m.param("f64[8]")
    r1 = m.op("u16[5,2]", "sort", pku, attrs="dimensions={0}, is_stable=true, to_apply=%lt_u16")
    r2 = m.op("(f32[7], s8[7])", "sort", pfv, psk,
              attrs="dimensions={0}, is_stable=true, to_apply=%by_second")
    r3 = m.op("f64[8]", "sort", pdv, attrs="dimensions={0}, is_stable=true, to_apply=%by_abs")
    empty = np.zeros((2, 0), np.uint16)
    pem = m.param("u16[2,0]")
    r4 = m.op("u16[2,0]", "sort", pem, attrs="dimensions={1}, is_stable=true, to_apply=%lt_u16")
    w1 = stable_sort_along(ku, 0, int)[0]
    w2 = stable_sort_along(sk, 0, int, [fv])
    w3 = stable_sort_along(dv, 0, abs)[0]
    g.case(name, m.text([r1, r2, r3, r4]), [ku, fv, sk, dv, empty], [w1, w2[1], w2[0], w3, empty.copy()])


def fam_sort_key_types(g):
    """Sort keys that a double cannot tell apart (u64 above 2^63 and s64 near
    2^60 differing by 1), f16 keys under TOTALORDER (NaNs of both signs,
    zeros), bf16 keys under LT (zeros of both signs tie: stable)."""
    name = "sort_wide_int_and_narrow_float_keys"
    m = g.Module(name)
    m.comp(cmp_comp("lt_u64", "u64", "LT"))
    m.comp(cmp_comp("gt_s64", "s64", "GT"))
    m.comp(cmp_comp("lt_f16_total", "f16", "LT", ", type=TOTALORDER"))
    m.comp(cmp_comp("lt_bf16", "bf16", "LT"))
    u = g.arr("u64", [(1 << 64) - 1, (1 << 64) - 2, (1 << 63) + 1, 1 << 63, 5, (1 << 63) - 1,
                    (1 << 64) - 3, 0])
    sv = g.arr("s64", [(1 << 60) + 1, 1 << 60, -(1 << 60), -(1 << 60) - 1, (1 << 60) + 2, 3,
                     -(1 << 63), (1 << 63) - 1])
    h = g.arr("f16", [NAN, -0.0, 1.0, -NAN, 0.0, -INF, 65504.0, -1.0, 6e-8, INF])
    b = g.arr("bf16", [0.0, -1.0, -0.0, 2.0, 0.0, -0.0, -1.0, 1.5])
    pu, ps, ph, pb = (m.param(g.arr_shape(t, v)) for t, v in
                      zip(["u64", "s64", "f16", "bf16"], [u, sv, h, b]))
    roots = [m.op("u64[8]", "sort", pu, attrs="dimensions={0}, is_stable=true, to_apply=%lt_u64"),
             m.op("s64[8]", "sort", ps, attrs="dimensions={0}, is_stable=true, to_apply=%gt_s64"),
             m.op("f16[10]", "sort", ph, attrs="dimensions={0}, is_stable=true, to_apply=%lt_f16_total"),
             m.op("bf16[8]", "sort", pb, attrs="dimensions={0}, is_stable=true, to_apply=%lt_bf16")]
    hk = g.total_order_key("f16", h)
    outs = [np.array(sorted(u.tolist()), np.uint64), np.array(sorted(sv.tolist(), reverse=True), np.int64),
            h[sorted(range(10), key=lambda j: hk[j])].copy(),
            stable_sort_along(b, 0, float)[0]]
    g.case(name, m.text(roots), [u, sv, h, b], outs)


def fam_sort_large(g):
    """Sorts long enough for the merge passes: 1500 s32 keys with many
    duplicates carrying their positions (stability), and f32 rows sorted
    descending along dim 1 with zeros of both signs (equal under GT)."""
    name = "sort_large_stable"
    rng = g.seeded(name)
    m = g.Module(name)
    m.comp("""
%lt_s32_pos (a: s32[], b: s32[], c: s32[], d: s32[]) -> pred[] {
  %lt_s32_pos.a = s32[] parameter(0)
  %lt_s32_pos.b = s32[] parameter(1)
  %lt_s32_pos.c = s32[] parameter(2)
  %lt_s32_pos.d = s32[] parameter(3)
  ROOT %lt_s32_pos.r = pred[] compare(s32[] %lt_s32_pos.a, s32[] %lt_s32_pos.b), direction=LT
}""")
    m.comp(cmp_comp("gt_f32", "f32", "GT"))
    k = g.arr("s32", rng.integers(0, 20, 1500))
    pos = np.arange(1500, dtype=np.int32)
    f = rng.integers(-4, 5, (2, 700)).astype(np.float32)
    f[f == 0] = np.where(rng.integers(0, 2, int(np.sum(f == 0))) == 1, -0.0, 0.0).astype(np.float32)
    f[0, 100] = INF
    pk, pp, pf = m.param("s32[1500]"), m.param("s32[1500]"), m.param("f32[2,700]")
    r1 = m.op("(s32[1500], s32[1500])", "sort", pk, pp,
              attrs="dimensions={0}, is_stable=true, to_apply=%lt_s32_pos")
    r2 = m.op("f32[2,700]", "sort", pf, attrs="dimensions={1}, is_stable=true, to_apply=%gt_f32")
    w1 = stable_sort_along(k, 0, int, [pos])
    w2 = stable_sort_along(f, 1, lambda v: -float(v))[0]
    g.case(name, m.text([r1, r2]), [k, pos, f], [w1[0], w1[1], w2])


def families(g):
    return [lambda: fam_sort(g), lambda: fam_sort_key_types(g), lambda: fam_sort_large(g)]
