"""rng.py: rng-bit-generator, rng and stochastic-convert cases.

Expected values come from a Python implementation of the block functions
(Threefry-2x32-20 and Philox-4x32-10, written from Random123's
description and asserted here against its known-answer vectors,
tests/kat_vectors) and of the streams XLA's builder library lays out
(xla/hlo/builder/lib/prng.cc as RngBitGeneratorExpander wires it: key
state[0], three fry counter state[1], philox counter state[1..2] or
{state[1], state[0]} for a 2-word state; the split-in-halves layout of
three fry, the round-robin words of philox).  rng uses the derivation
documented in src/interp/eval_rng.c (XLA's own rng is
implementation-defined), seed 0 as hlo-run's default.  stochastic-convert
follows XLA's evaluator rule, computed with exact Python floats.
"""
import math

import numpy as np

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1


def threefry2x32(k0, k1, x0, x1):
    rot = [13, 15, 26, 6, 17, 29, 16, 24]
    ks = [k0, k1, 0x1BD11BDA ^ k0 ^ k1]
    x0, x1 = (x0 + ks[0]) & M32, (x1 + ks[1]) & M32
    for r in range(20):
        x0 = (x0 + x1) & M32
        x1 = ((x1 << rot[r % 8]) | (x1 >> (32 - rot[r % 8]))) & M32
        x1 ^= x0
        if r % 4 == 3:
            s = r // 4 + 1
            x0 = (x0 + ks[s % 3]) & M32
            x1 = (x1 + ks[(s + 1) % 3] + s) & M32
    return x0, x1


def philox4x32(c, k0, k1):
    c = list(c)
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
    return c


# Random123 tests/kat_vectors: counter words, key words, output words.
KAT_THREEFRY = [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((M32, M32), (M32, M32), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]
KAT_PHILOX = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
for _c, _k, _o in KAT_THREEFRY:
    assert threefry2x32(_k[0], _k[1], *_c) == _o
for _c, _k, _o in KAT_PHILOX:
    assert tuple(philox4x32(_c, *_k)) == _o


def join(lo, hi):
    return lo | hi << 32


def split(v):
    return v & M32, v >> 32


def tf_block(key, c):
    return threefry2x32(*split(key), *split(c & M64))


def ph_block(key, lo, hi, b):
    lo2 = lo + b
    hi2 = (hi + (lo2 >> 64)) & M64
    lo2 &= M64
    return philox4x32((*split(lo2), *split(hi2)), *split(key))


def threefry_stream(key, ctr, dims, bits):
    """(values in row-major order, new counter) of XLA's three fry."""
    n = int(np.prod(dims)) if dims else 1
    if bits == 64:
        return [join(*tf_block(key, ctr + k)) for k in range(n)], (ctr + n) & M64
    if not dims:
        return [tf_block(key, ctr)[0]], (ctr + 1) & M64
    evens = [d for d in range(len(dims)) if dims[d] % 2 == 0]
    s = evens[0] if evens else int(np.argmax(dims))
    half = list(dims)
    half[s] = (dims[s] + 1) // 2
    out = []
    for idx in np.ndindex(*dims):
        h = list(idx)
        word = h[s] % 2
        h[s] //= 2
        j = int(np.ravel_multi_index(h, half)) if n else 0
        out.append(tf_block(key, ctr + j)[word])
    return out, (ctr + int(np.prod(half))) & M64


def philox_stream(key, lo, hi, dims, bits):
    """(values, new (lo, hi)) of XLA's philox."""
    n = int(np.prod(dims)) if dims else 1
    if bits == 64:
        blocks = (n + 1) // 2
        out = []
        for e in range(n):
            w = ph_block(key, lo, hi, e // 2)
            out.append(join(w[0], w[1]) if e % 2 == 0 else join(w[2], w[3]))
    else:
        blocks = (n + 3) // 4
        out = [ph_block(key, lo, hi, e // 4)[e % 4] for e in range(n)]
    nlo = lo + blocks
    return out, (nlo & M64, (hi + (nlo >> 64)) & M64)


BITS = {"u8": 8, "s8": 8, "u16": 16, "s16": 16, "u32": 32, "s32": 32, "u64": 64, "s64": 64}
NPU = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
NPS = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def as_type(vals, t, dims):
    b = BITS[t]
    a = np.array([v & ((1 << b) - 1) for v in vals], dtype=NPU[b]).reshape(dims)
    return a.view(NPS[b]) if t.startswith("s") else a


def families(g):
    def bit_generator_case(name, alg, n_state, state, gens):
        """gens: (type, dims) generators all fed the same state parameter."""
        m = g.Module(name)
        st = f"u64[{n_state}]"
        p = m.param(st)
        roots, outs = [], []
        key = int(state[0])
        for t, dims in gens:
            shape = g.shape_str(t, dims)
            r = m.op(f"({st}, {shape})", "rng-bit-generator", p, attrs=f"algorithm={alg}")
            roots.append(m.op(st, "get-tuple-element", r, attrs="index=0"))
            roots.append(m.op(shape, "get-tuple-element", r, attrs="index=1"))
            bits = 64 if BITS[t] == 64 else 32
            new = [int(v) for v in state]
            if alg == "rng_three_fry":
                vals, new[1] = threefry_stream(key, int(state[1]), dims, bits)
            else:
                hi = int(state[2]) if n_state == 3 else key
                vals, (new[1], nh) = philox_stream(key, int(state[1]), hi, dims, bits)
                if n_state == 3:
                    new[2] = nh
            outs.append(np.array(new, dtype=np.uint64))
            outs.append(as_type(vals, t, dims))
        g.case(name, m.text(roots), [np.array(state, dtype=np.uint64)], outs)

    def known_answers():
        """The Random123 vectors through the op: three fry u64[1] from
        {key, counter}; philox u32[4] from {key, counter low, high}."""
        name = "rng_bit_generator_known_answers"
        m = g.Module(name)
        roots, outs = [], []
        for c, k, o in KAT_THREEFRY:
            s = m.constant("u64[2]", "{%d, %d}" % (join(*k), join(*c)))
            r = m.op("(u64[2], u64[1])", "rng-bit-generator", s, attrs="algorithm=rng_three_fry")
            roots.append(m.op("u64[1]", "get-tuple-element", r, attrs="index=1"))
            outs.append(np.array([join(*o)], dtype=np.uint64))
        for c, k, o in KAT_PHILOX:
            s = m.constant("u64[3]", "{%d, %d, %d}" % (join(*k), join(c[0], c[1]), join(c[2], c[3])))
            r = m.op("(u64[3], u32[4])", "rng-bit-generator", s, attrs="algorithm=rng_philox")
            roots.append(m.op("u32[4]", "get-tuple-element", r, attrs="index=1"))
            outs.append(np.array(o, dtype=np.uint32))
        g.case(name, m.text(roots), [], outs)

    def three_fry():
        """Three fry over even, odd, no-even, rank-3, scalar, empty shapes
        and every integer width; the counter wraps."""
        shapes = [("u32", (3, 2)), ("u32", (5,)), ("u32", (3, 5)), ("u32", (2, 3, 4)), ("u32", ()),
                  ("u32", (0, 3)), ("u64", (7,)), ("u16", (3, 3)), ("s32", (4, 3)), ("s64", (2, 2)),
                  ("u8", (5,)), ("s16", (1, 5, 3))]
        bit_generator_case("rng_bit_generator_three_fry", "rng_three_fry", 2,
                           [0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFF9], shapes)

    def philox():
        """Philox with 3- and 2-word states, a carry out of the counter's
        low word, rng_default (philox on XLA:CPU and GPU)."""
        shapes = [("u32", (10,)), ("u64", (5,)), ("u16", (3, 3)), ("s8", (7,)), ("u32", ()),
                  ("s64", (2, 3)), ("s32", (2, 2, 2))]
        bit_generator_case("rng_bit_generator_philox3", "rng_philox", 3,
                           [0xDEADBEEF01234567, 0xFFFFFFFFFFFFFFFE, 9], shapes)
        bit_generator_case("rng_bit_generator_philox2", "rng_philox", 2,
                           [0x5555AAAA5555AAAA, 77], shapes)
        bit_generator_case("rng_bit_generator_default", "rng_default", 3, [1, 2, 3], shapes[:3])

    # ---- rng (our derivation, seed 0)

    def rng_module(name, specs, compare):
        """One rng per spec (type, dims, distribution, a, b), calls numbered
        0, 1, ... in execution order, seed 0."""
        m = g.Module(name)
        roots, outs = [], []
        for call, (t, dims, dist, a, b) in enumerate(specs):
            ca = m.constant(f"{t}[]", repr(a))
            cb = m.constant(f"{t}[]", repr(b))
            roots.append(m.op(g.shape_str(t, dims), "rng", ca, cb, attrs=f"distribution={dist}"))
            n = int(np.prod(dims))
            vals = []
            for i in range(n):
                w = philox4x32((*split(i), *split(call)), 0, 0)
                x = join(w[0], w[1])
                if dist == "rng_normal":
                    u1 = ((x >> 11) + 1) * 2.0 ** -53
                    u2 = (join(w[2], w[3]) >> 11) * 2.0 ** -53
                    vals.append(a + b * (math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)))
                elif t in ("f32", "f64"):
                    v = a + (b - a) * ((x >> 11) * 2.0 ** -53)
                    r = np.float32(v) if t == "f32" else np.float64(v)
                    if r >= b:
                        r = np.nextafter(r.dtype.type(b), r.dtype.type(-np.inf))
                    vals.append(r)
                else:
                    vals.append(a + ((x * (b - a)) >> 64))
            outs.append(np.array(vals, dtype=g.NP[t]).reshape(dims))
        g.case(name, m.text(roots), [], outs, compare)

    def rng_case():
        """rng uniform over u32, s32, f32 and f64 (exact), normal over f32
        (within an ulp: log, sqrt and cos are the C library's)."""
        rng_module("rng_uniform_seed0", [("u32", (6,), "rng_uniform", 5, 1005),
                                         ("s32", (2, 4), "rng_uniform", -50, 50),
                                         ("f32", (9,), "rng_uniform", -1.5, 2.5),
                                         ("f64", (4,), "rng_uniform", 0.0, 1.0)], "exact")
        rng_module("rng_normal_seed0", [("f32", (8,), "rng_normal", 1.0, 0.5)], "ulp 1")

    # ---- stochastic-convert (XLA's evaluator rule)

    def stochastic(x, r, rbits, bits, lo_lim, hi_lim):
        hi = (1 << (bits - 1)) - 1
        lo = -hi - 1
        if math.isinf(x):
            return lo if x < 0 else hi
        if math.isnan(x):
            return 0
        if x >= hi_lim:
            return hi
        if x <= lo_lim:
            return lo
        neg = math.copysign(1.0, x) < 0
        m = abs(x)
        t = int(m)
        frac = m - t
        if frac and r < int(math.ldexp(frac, rbits)):
            if t == hi:
                return lo
            t += 1
        return -t if neg else t

    def stochastic_case(name, ft, to, xs, rs):
        bits = BITS[to]
        rbits = g.BITS[ft]
        with np.errstate(all="ignore"):       # f16 cannot hold 2^31: inf
            lims = g.to_type(ft, np.array([(1 << (bits - 1)) - 1, -(1 << (bits - 1))], np.float64))
        hi_lim, lo_lim = float(lims[0]), float(lims[1])
        x = xs
        want = [stochastic(float(v), int(rv), rbits, bits, lo_lim, hi_lim) for v, rv in zip(x.tolist(), rs.tolist())]
        m = g.Module(name)
        px = m.param(g.arr_shape(ft, x))
        pr = m.param(g.shape_str(f"u{rbits}", x.shape))
        root = m.op(g.shape_str(to, x.shape), "stochastic-convert", px, pr)
        g.case(name, m.text([root]), [x, rs], [np.array(want, dtype=g.NP[to]).reshape(x.shape)])

    def stochastic_cases():
        """Every rounding edge: exact values, ties, fractions against their
        threshold from both sides, negatives, -0, NaN, +-inf, saturation,
        the (min, -max) region, subnormals; then random values."""
        edges = [2.25, 2.25, 2.5, 2.5, 3.0, -3.0, 0.0, -0.0, -2.25, -2.25, 0.75, 0.75, float("nan"),
                 float("inf"), float("-inf"), 3e9, -3e9, 2147483648.0, 2147483520.0, -2147483648.0, 1e-45,
                 2.0 ** -32, 2.0 ** -32, 2.0 ** -33, -(2.0 ** -32)]
        rnd = [0x3FFFFFFF, 0x40000000, 0x7FFFFFFF, 0x80000000, 0, 0, 0, 0, 0, 0xFFFFFFFF, 0xBFFFFFFF,
               0xC0000000, 0, 0, 0, 0, 0, 0, 0, 0xFFFFFFFF, 0, 0, 1, 0, 0]
        stochastic_case("stochastic_convert_f32_s32_edges", "f32", "s32", g.arr("f32", edges),
                        np.array(rnd, np.uint32))
        s8 = [126.5, 126.5, 127.0, 127.2, 200.0, -127.5, -127.5, -128.0, -128.5, -1e30]
        stochastic_case("stochastic_convert_f32_s8_saturation", "f32", "s8", g.arr("f32", s8),
                        np.array([0, 0x80000000, 0, 0, 0, 0, 0xFFFFFFFF, 0, 0, 0], np.uint32))
        for ft, to in [("f32", "s32"), ("f16", "s16"), ("bf16", "s8"), ("f64", "s64"), ("f32", "s16"),
                       ("f16", "s8")]:
            name = f"stochastic_convert_{ft}_{to}_random"
            rg = g.seeded(name)
            scale = {"s8": 150.0, "s16": 40000.0, "s32": 3e9, "s64": 1e19}[to]
            vals = np.concatenate([rg.standard_normal(40) * 4, rg.standard_normal(20) * scale,
                                   [0.5, -0.5, 1.5, -1.5]])
            with np.errstate(all="ignore"):   # beyond f16's range: inf
                x = g.to_type(ft, vals.astype(np.float64 if ft == "f64" else np.float32))
            x = np.concatenate([x, g.float_specials(ft)])
            rbits = g.BITS[ft]
            r = rg.integers(0, 1 << rbits, x.shape, dtype=np.uint64).astype(NPU[rbits])
            stochastic_case(name, ft, to, x, r)

    return [known_answers, three_fry, philox, rng_case, stochastic_cases]
