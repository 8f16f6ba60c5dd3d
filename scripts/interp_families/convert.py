"""convert.py: convert and bitcast-convert cases, compared exactly.

float -> integer truncates toward zero and saturates (NaN -> 0), float ->
pred is != 0; integer -> float rounds once to nearest even (g.round_frac on
the exact value); integer -> integer wraps; float -> float rounds once (a
value that double rounding through f32 would get wrong), widening is exact;
bitcast-convert to the same, a narrower (a new minor dim, little-endian) and
a wider width.
"""
import math

import numpy as np

NAN = float("nan")
INF = float("inf")


def f2i(g, x, t):
    lo, hi = g.int_range(t)
    if math.isnan(x):
        return 0
    if x == INF or x >= hi:
        return hi
    if x == -INF or x <= lo:
        return lo
    return math.trunc(x)


def fam_convert_float_to_int(g):
    """float -> every integer type: truncation toward zero, saturation, NaN -> 0;
    float -> pred is != 0 (NaN is true, -0 false)."""
    for src in ["f32", "f64", "bf16", "f16"]:
        name = f"convert_{src}_to_ints"
        big = {"f16": 65504.0, "bf16": 3e38, "f32": 3e38, "f64": 1e300}[src]
        vals = [NAN, -NAN, INF, -INF, 0.0, -0.0, 0.9, -0.9, 1.5, -1.5, 127.5, 128.0, -128.0,
                -129.0, 255.9, 256.0, 32767.0, 32768.0, -32769.0, 65535.0, 65536.0,
                2147483520.0, 2147483648.0, -2147483904.0, 4294967296.0,
                9.223372036854775e18, -9.3e18, 1.8446744073709552e19, 2e19, big, -big, -1.0,
                1e19, -9.223372036854775808e18, 4294967295.0, 2.0 ** 53 + 2]
        a = g.arr(src, vals)
        spec = []
        for t in g.INTS:
            want = g.arr(t, [f2i(g, v, t) for v in g.f32_of(src, a).tolist()])
            spec.append((t, "convert", [0], None, want))
        spec.append(("pred", "convert", [0], None, g.f32_of(src, a) != 0))
        g.elementwise_case(name, [src], spec, [a])


def fam_convert_int_to_float(g):
    """integers -> floats, rounding to nearest even (ties, overflow of f16),
    and pred -> numbers."""
    name = "convert_ints_to_floats"
    m = g.Module(name)
    params, roots, outs = [], [], []
    srcs = {
        "s64": [0, -1, (1 << 24) + 1, (1 << 24) + 3, -(1 << 24) - 1, (1 << 53) + 1,
                (1 << 63) - 1, -(1 << 63), 16777217 * 3, 70000],
        "u64": [0, 1, (1 << 64) - 1, (1 << 63) + 1, (1 << 53) + 1, (1 << 24) + 1, 65519, 65520],
        "s32": [0, -7, 2147483647, -2147483648, (1 << 24) + 1, 257, 259, 65504, -65520, 1000],
        "u8": [0, 1, 127, 128, 255, 254, 253, 129],
        "s8": [-128, -1, 0, 127, 100, -100, 3, 5],
        "u32": [4294967295, 16777217, 16777219, 1, 2049, 2051, 0, 123456],
        "s16": [-32768, 32767, 2049, 2051, -2051, 257, 259, 0],
        "u16": [65535, 65519, 65520, 2049, 2050, 257, 0, 1],
    }
    # Only values below 2^24 go to f16/bf16 (where "via f32" and "directly"
    # agree); f32 and f64 take every value and round once.
    for s, vals in srcs.items():
        a = g.arr(s, vals)
        pa = m.param(g.arr_shape(s, a))
        params.append(a)
        for t in g.FLOATS:
            if t in ("f16", "bf16") and any(abs(v) >= 1 << 24 for v in a.tolist()):
                continue
            want = g.arr(t, [g.round_frac(int(v), t) for v in a.tolist()]) if t != "bf16" else \
                np.array([g.round_frac(int(v), t) for v in a.tolist()], np.float32)
            roots.append(m.op(g.arr_shape(t, a), "convert", pa))
            outs.append(want)
    p = g.arr("pred", [True, False, True])
    pp = m.param(g.arr_shape("pred", p))
    params.append(p)
    for t in ["f32", "bf16", "s32", "u8"]:
        roots.append(m.op(g.shape_str(t, p.shape), "convert", pp))
        outs.append(p.astype(g.NP[t]))
    g.case(name, m.text(roots), params, outs)


def fam_convert_int_to_int(g):
    """integer -> integer conversions wrap (truncate or sign-/zero-extend);
    integer -> pred is != 0."""
    name = "convert_ints_to_ints"
    m = g.Module(name)
    params, roots, outs = [], [], []
    for s, vals in [("s32", [-1, 255, 256, -129, 70000, -2147483648, 2147483647, 128]),
                    ("u64", [(1 << 64) - 1, 1 << 63, 0xFFFF0001, 0x80, 0, 1, 300, 1 << 32]),
                    ("s8", [-128, -1, 0, 1, 127, -2, 64, -64])]:
        a = g.arr(s, vals)
        pa = m.param(g.arr_shape(s, a))
        params.append(a)
        for t in g.INTS:
            if t == s:
                continue
            roots.append(m.op(g.arr_shape(t, a), "convert", pa))
            outs.append(g.arr(t, [g.wrap(int(v), t) for v in a.tolist()]))
        roots.append(m.op(g.shape_str("pred", a.shape), "convert", pa))
        outs.append(a != 0)
    g.case(name, m.text(roots), params, outs)


def fam_convert_float_to_float(g):
    """Between float types: f32 -> bf16 with ties (to even), overflow to inf,
    NaN kept; f32 -> f16 with subnormals and overflow; f64 -> f32/f16/bf16
    rounding once (a value that double rounding would get wrong); widening is
    exact; f16 <-> bf16."""
    name = "convert_floats_to_floats"
    m = g.Module(name)
    params, roots, outs = [], [], []
    one = 0x3F800000
    bits32 = [one | 0x8000, one | 0x18000, one | 0x8001, one | 0x7FFF, 0x7F7FFFFF, 0xFF7FFFFF,
              0x7F7F8000, 0x00008000, 0x00018000, 0x80008000, 0x7FC00001, 0xFFC00000, 0x7F800000,
              0x00000001, 0x3DCCCCCD, 0xC2F6E979]
    a32 = np.array(bits32, np.uint32).view(np.float32)
    a32 = np.concatenate([a32, g.arr("f32", [65504.0, 65519.0, 65520.0, 1e-8, 3e-8, 6e-8,
                                           -2.0 ** -24 * 1.5, 2.0 ** -15 + 2.0 ** -26, 0.1, -0.0])])
    p32 = m.param(g.arr_shape("f32", a32))
    params.append(a32)
    roots.append(m.op(g.arr_shape("bf16", a32), "convert", p32))
    outs.append(g.bf16(a32))
    roots.append(m.op(g.arr_shape("f16", a32), "convert", p32))
    outs.append(np.array([g.round_frac(v, "f16") if math.isfinite(v) else v
                          for v in a32.astype(np.float64).tolist()], np.float16))
    roots.append(m.op(g.arr_shape("f64", a32), "convert", p32))
    outs.append(a32.astype(np.float64))

    trap_f16 = 1 + 2.0 ** -11 + 2.0 ** -40     # via f32: exact tie -> 1; once: 1 + 2^-10
    trap_bf16 = 1 + 2.0 ** -8 + 2.0 ** -40     # via f32: exact tie -> 1; once: 1 + 2^-7
    trap_f32 = 1 + 2.0 ** -24 + 2.0 ** -60
    a64 = g.arr("f64", [trap_f16, trap_bf16, trap_f32, -trap_f16, 1e300, -1e300, 1e-300, NAN,
                      -INF, 0.1, 3.4028235677973366e38, 3.4028234663852886e38, 65519.99, 1e-45,
                      -0.0, 2.0 ** -149 * 0.5 + 2.0 ** -170])
    p64 = m.param(g.arr_shape("f64", a64))
    params.append(a64)
    for t in ["f32", "f16", "bf16"]:
        want = [g.round_frac(v, t) if math.isfinite(v) else v for v in a64.tolist()]
        roots.append(m.op(g.arr_shape(t, a64), "convert", p64))
        outs.append(np.array(want, np.float32 if t == "bf16" else g.NP[t]))

    a16 = g.arr("f16", [65504.0, -65504.0, 6e-8, 2.0 ** -14, 1.0 + 2.0 ** -10, 3.0 + 2.0 ** -9,
                      NAN, -INF, -0.0, 1000.5])
    pb = g.arr("bf16", [3e38, 1e-30, 1.0078125, 65536.0, 65280.0, -2.0 ** -20, NAN, INF, 300.0,
                      -0.0])
    p16, pbf = m.param(g.arr_shape("f16", a16)), m.param(g.arr_shape("bf16", pb))
    params += [a16, pb]
    roots.append(m.op(g.arr_shape("bf16", a16), "convert", p16))
    outs.append(g.bf16(a16.astype(np.float32)))
    roots.append(m.op(g.arr_shape("f32", a16), "convert", p16))
    outs.append(a16.astype(np.float32))
    roots.append(m.op(g.arr_shape("f16", pb), "convert", pbf))
    outs.append(np.array([g.round_frac(v, "f16") if math.isfinite(v) else v
                          for v in pb.astype(np.float64).tolist()], np.float16))
    roots.append(m.op(g.arr_shape("f64", pb), "convert", pbf))
    outs.append(pb.astype(np.float64))
    g.case(name, m.text(roots), params, outs)


def fam_bitcast_convert(g):
    """Reinterpreting bits: same width, narrower (a new minor dim, little-endian
    order) and wider (the minor dim dropped)."""
    name = "bitcast_convert"
    m = g.Module(name)
    f = g.arr("f32", [1.0, -2.5, NAN, -0.0])
    u = g.arr("u32", [0x7F800000, 0x3F800000, 0x80000001, 0x7FC00000])
    b8 = g.arr("u8", [[0, 0, 128, 63], [0, 0, 0, 192], [1, 0, 0, 0]])
    d = g.arr("f64", [1.0, -INF, 5e-324])
    h = g.arr("f16", [1.0, -2.0, 65504.0, 6e-8])
    bb = g.arr("bf16", [1.0, -3.0, INF, 1e-38])
    s16 = g.arr("s16", [0x3F80, -16384, 0x7F80, 1])
    params = [f, u, b8, d, h, bb, s16]
    types = ["f32", "u32", "u8", "f64", "f16", "bf16", "s16"]
    pf, pu, pb8, pd, ph, pbb, ps16 = (m.param(g.arr_shape(t, a)) for t, a in zip(types, params))
    roots = [
        m.op("s32[4]", "bitcast-convert", pf), m.op("f32[4]", "bitcast-convert", pu),
        m.op("u16[4,2]", "bitcast-convert", pf), m.op("f32[3]", "bitcast-convert", pb8),
        m.op("s64[3]", "bitcast-convert", pd), m.op("u8[3,8]", "bitcast-convert", pd),
        m.op("s16[4]", "bitcast-convert", ph), m.op("u16[4]", "bitcast-convert", pbb),
        m.op("bf16[4]", "bitcast-convert", ps16), m.op("f16[4]", "bitcast-convert", ps16),
    ]
    bf_bits = (bb.view(np.uint32) >> 16).astype(np.uint16)
    s16_as_bf16 = (s16.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    outs = [f.view(np.int32), u.view(np.float32), f.view(np.uint16).reshape(4, 2),
            b8.reshape(-1).view(np.float32).reshape(3), d.view(np.int64),
            d.view(np.uint8).reshape(3, 8), h.view(np.int16), bf_bits, s16_as_bf16,
            s16.view(np.float16)]
    g.case(name, m.text(roots), params, outs)


def families(g):
    return [lambda: fam_convert_float_to_int(g), lambda: fam_convert_int_to_float(g),
            lambda: fam_convert_int_to_int(g), lambda: fam_convert_float_to_float(g),
            lambda: fam_bitcast_convert(g)]
