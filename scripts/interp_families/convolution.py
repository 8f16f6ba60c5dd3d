"""convolution.py: corpus cases for convolution (src/interp/eval_convolution.c).

The expected values come from conv_ref below, a direct transcription of the
definition in XLA's operation semantics ("Conv") and its evaluator: for each
output spatial position and each window position, the input index of every
spatial dim is (p*stride + w*rhs_dilate - pad_lo) / lhs_dilate, skipped when
it is not whole (a dilation hole) or outside the input (padding); the kernel
is read at size-1-w where the window is reversed; with feature_group_count G
output feature range g (of O/G) sees input features [g*ki, (g+1)*ki), with
batch_group_count G it sees input batch [g*N/G, (g+1)*N/G).  The loops run
over positions in Python; the batch x feature products at one position are
numpy matmuls.  Operands are first converted to the result type (as XLA's
evaluator does).  Floats accumulate in float64 and are rounded once to the
result type (bf16 and f16 exactly, by g.round_frac); integers accumulate in
uint64, which wraps modulo 2^64 and so modulo 2^bits of any result type.

Data and comparisons:
  dyadic    small multiples of 1/4: every product and partial sum is exact in
            f32 (and in bf16/f16 where used), so any summation order gives
            the same bits: "exact".
  positive  uniform in [0.5, 1.5): every term is positive, so a float sum of
            K terms in any order is within (K-1) u / (1 - (K-1) u) of the exact
            sum (Higham, Accuracy and Stability, 2.2), u = 2^-24 for the f32
            sums the interpreter does; with the final rounding of the float64
            reference (<= u) that gives rtol (K+1) 2^-24 for f32 results.  For
            bf16/f16 results the f32 sum is then far inside half an ulp of the
            type, so only the one rounding to the type can differ: "ulp 1".
  bigint    integers over the whole range of the type: products and sums wrap,
            "exact".
"""
import itertools

import numpy as np


def parse_labels(labels):
    """dim_labels=b01f_01io->b01f -> (input, kernel, output) role positions:
    (batch/out-feature dim, feature/in-feature dim, [spatial dims])."""
    inp, rest = labels.split("_")
    ker, out = rest.split("->")
    n = len(inp) - 2

    def roles(s, a, b):
        return s.index(a), s.index(b), [s.index(str(k)) for k in range(n)]

    return roles(inp, "b", "f"), roles(ker, "o", "i"), roles(out, "b", "f")


def window_dims(window, n):
    """Per spatial dim: dict(size, stride, lo, hi, lhs, rhs, rev), XLA's defaults
    where a field is absent."""
    dims = []
    for k in range(n):
        w = window[k]
        dims.append({"size": w[0], "stride": w[1] if len(w) > 1 else 1,
                     "lo": w[2][0] if len(w) > 2 else 0, "hi": w[2][1] if len(w) > 2 else 0,
                     "lhs": w[3] if len(w) > 3 else 1, "rhs": w[4] if len(w) > 4 else 1,
                     "rev": w[5] if len(w) > 5 else False})
    return dims


def window_attr(dims):
    """window={size=.. stride=.. pad=.. lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}"""
    if not dims:
        return ""
    j = "x".join
    parts = ["size=" + j(str(d["size"]) for d in dims)]
    if any(d["stride"] != 1 for d in dims):
        parts.append("stride=" + j(str(d["stride"]) for d in dims))
    if any(d["lo"] or d["hi"] for d in dims):
        parts.append("pad=" + j(f"{d['lo']}_{d['hi']}" for d in dims))
    if any(d["lhs"] != 1 for d in dims):
        parts.append("lhs_dilate=" + j(str(d["lhs"]) for d in dims))
    if any(d["rhs"] != 1 for d in dims):
        parts.append("rhs_dilate=" + j(str(d["rhs"]) for d in dims))
    if any(d["rev"] for d in dims):
        parts.append("rhs_reversal=" + j("1" if d["rev"] else "0" for d in dims))
    return "window={" + " ".join(parts) + "}, "


def out_size(n, d):
    """XLA's StridedBound(pad_lo + DilatedBound(n, lhs) + pad_hi, DilatedBound(size, rhs), stride)."""
    base = 0 if n == 0 else (n - 1) * d["lhs"] + 1
    padded = d["lo"] + base + d["hi"]
    window = (d["size"] - 1) * d["rhs"] + 1
    assert padded >= 0
    return 0 if padded < window else (padded - window) // d["stride"] + 1


def conv_ref(g, lhs, rhs, labels, dims, fgc, bgc, out_t):
    (ib, if_, isp), (ko, ki, ksp), (ob, of, osp) = parse_labels(labels)
    n = len(isp)
    is_int = out_t in g.INTS
    acc_t = np.uint64 if is_int else np.float64

    def prepare(a):             # converted to the result type, then to the accumulator's
        a = g.arr(out_t, a) if is_int else g.to_type(out_t, a)
        return a.astype(np.int64).astype(np.uint64) if is_int else a.astype(np.float64)

    L = prepare(lhs).transpose([ib, if_] + isp)          # [N, C, S...]
    K = prepare(rhs).transpose([ko, ki] + ksp)           # [O, KI, W...]
    N, C, S = L.shape[0], L.shape[1], L.shape[2:]
    O, KI, W = K.shape[0], K.shape[1], K.shape[2:]
    assert C == KI * fgc and O % (fgc * bgc) == 0 and N % bgc == 0
    B, G = N // bgc, max(fgc, bgc)
    og = O // G
    P = [out_size(S[s], dims[s]) for s in range(n)]
    acc = np.zeros([B, O] + P, acc_t)
    for p in itertools.product(*[range(x) for x in P]):
        for w in itertools.product(*[range(x) for x in W]):
            x = []
            for s in range(n):
                d = dims[s]
                u = p[s] * d["stride"] + w[s] * d["rhs"] - d["lo"]
                if u % d["lhs"] or not 0 <= u // d["lhs"] < S[s]:
                    break
                x.append(u // d["lhs"])
            if len(x) < n:
                continue        # padding or a dilation hole: adds nothing
            wk = tuple(W[s] - 1 - w[s] if dims[s]["rev"] else w[s] for s in range(n))
            for grp in range(G):
                if bgc > 1:
                    lb = L[(slice(grp * B, (grp + 1) * B), slice(None)) + tuple(x)]
                else:
                    lb = L[(slice(None), slice(grp * KI, (grp + 1) * KI)) + tuple(x)]
                kk = K[(slice(grp * og, (grp + 1) * og), slice(None)) + wk]
                acc[(slice(None), slice(grp * og, (grp + 1) * og)) + p] += lb @ kk.T
    perm = [0] * (n + 2)
    perm[ob], perm[of] = 0, 1
    for s in range(n):
        perm[osp[s]] = 2 + s
    acc = acc.transpose(perm)
    if is_int:
        return g.arr(out_t, [int(v) for v in acc.reshape(-1)], acc.shape)
    if out_t in ("f32", "f64"):
        return acc.astype(g.NP[out_t])
    flat = [g.round_frac(float(v), out_t) for v in acc.reshape(-1)]
    return np.array(flat, np.float32 if out_t == "bf16" else np.float16).reshape(acc.shape)


def data(g, rng, kind, t, shape):
    if kind == "dyadic":
        return g.arr(t, (rng.integers(-8, 9, shape) / 4).astype(np.float32))
    if kind == "positive":
        return g.arr(t, rng.uniform(0.5, 1.5, shape).astype(np.float32))
    lo, hi = g.int_range(t)
    return g.arr(t, rng.integers(lo, hi, shape, dtype=g.NP[t], endpoint=True))


# name, dim_labels, input sizes {b, f, 0, 1, ...}, kernel {o, i?}, window per
# spatial dim (size, stride, (lo, hi), lhs_dilate, rhs_dilate, reversal),
# feature_group_count, batch_group_count, lhs type, rhs type, out type, data
SPECS = [
    ("conv_f32_1d_nwc", "b0f_0io->b0f", dict(b=2, f=3, s=[7]), 4, [(3,)], 1, 1,
     "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_nhwc_hwio_same", "b01f_01io->b01f", dict(b=2, f=3, s=[5, 6]), 4, [(3, 1, (1, 1)), (3, 1, (1, 1))],
     1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_nchw_oihw_stride2", "bf01_oi01->bf01", dict(b=2, f=3, s=[7, 6]), 5, [(3, 2), (2, 2)], 1, 1,
     "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_asymmetric_pad_stride", "b01f_01io->b01f", dict(b=1, f=2, s=[6, 7]), 3,
     [(3, 2, (0, 2)), (2, 3, (1, 0))], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_negative_padding", "b01f_01io->b01f", dict(b=2, f=2, s=[8, 7]), 3,
     [(3, 1, (-1, -2)), (2, 1, (-1, 1))], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_lhs_dilate_transposed", "b01f_01io->b01f", dict(b=1, f=2, s=[4, 3]), 3,
     [(3, 1, (2, 2), 2), (2, 1, (1, 1), 3)], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_rhs_dilate_atrous", "bf01_oi01->bf01", dict(b=2, f=2, s=[9, 8]), 3,
     [(3, 1, (2, 2), 1, 2), (2, 1, (0, 0), 1, 3)], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_reversal", "b01f_01io->b01f", dict(b=1, f=2, s=[5, 5]), 2,
     [(3, 1, (0, 0), 1, 1, True), (2, 1, (0, 0), 1, 1, False)], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_every_window_feature", "b01f_01io->b01f", dict(b=2, f=2, s=[6, 5]), 3,
     [(4, 2, (-1, 3), 2, 3, True), (2, 3, (1, -1), 3, 1, False)], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_feature_groups", "b01f_01io->b01f", dict(b=2, f=6, s=[5, 4]), 4, [(2,), (3, 1, (1, 1))], 2, 1,
     "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_depthwise_multiplier", "b01f_01io->b01f", dict(b=2, f=4, s=[5, 5]), 8,
     [(3, 1, (1, 1)), (3, 1, (1, 1))], 4, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_batch_groups_filter_grad", "f01b_i01o->01bf", dict(b=4, f=3, s=[5, 5]), 6,
     [(3, 1, (1, 1)), (3, 1, (1, 1))], 1, 2, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_1d_batch_groups_depthwise", "b0f_0io->b0f", dict(b=6, f=1, s=[9]), 3, [(4, 2, (1, 2))], 1, 3,
     "f32", "f32", "f32", "dyadic"),
    ("conv_f32_3d_ndhwc", "b012f_012io->b012f", dict(b=1, f=2, s=[4, 5, 3]), 3,
     [(2, 1, (0, 1)), (3, 2, (1, 1)), (2, 1, (0, 0), 1, 1, True)], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_0d_matmul", "bf_io->bf", dict(b=3, f=5, s=[]), 4, [], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_0d_feature_groups", "fb_oi->bf", dict(b=2, f=6, s=[]), 9, [], 3, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_permuted_labels", "0bf1_o1i0->f01b", dict(b=2, f=3, s=[5, 6]), 2,
     [(2, 1, (1, 0)), (3, 2, (0, 1))], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_window_past_input", "b01f_01io->b01f", dict(b=1, f=2, s=[2, 3]), 2, [(3,), (2,)], 1, 1,
     "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_no_input_features", "b01f_01io->b01f", dict(b=2, f=0, s=[3, 3]), 2, [(2,), (2,)], 1, 1,
     "f32", "f32", "f32", "dyadic"),
    ("conv_f32_2d_positive_rtol", "b01f_01io->b01f", dict(b=2, f=16, s=[6, 6]), 8,
     [(3, 1, (1, 1)), (3, 1, (1, 1))], 1, 1, "f32", "f32", "f32", "positive"),
    ("conv_f32_2d_chunked_rows", "b01f_01io->b01f", dict(b=1, f=16, s=[40, 40]), 2,
     [(5, 1, (2, 2)), (5, 1, (2, 2))], 1, 1, "f32", "f32", "f32", "dyadic"),
    ("conv_f64_2d_nchw", "bf01_oi01->bf01", dict(b=2, f=3, s=[5, 5]), 2, [(3, 1, (1, 0), 1, 2), (2, 2)], 1, 1,
     "f64", "f64", "f64", "dyadic"),
    ("conv_bf16_2d_to_bf16", "b01f_01io->b01f", dict(b=2, f=4, s=[5, 5]), 3,
     [(3, 1, (1, 1)), (3, 1, (1, 1))], 1, 1, "bf16", "bf16", "bf16", "positive"),
    ("conv_bf16_2d_to_f32", "b01f_01io->b01f", dict(b=2, f=4, s=[5, 4]), 4, [(3, 2, (1, 1)), (2,)], 2, 1,
     "bf16", "bf16", "f32", "dyadic"),
    ("conv_f16_2d_nchw_to_f16", "bf01_oi01->bf01", dict(b=2, f=4, s=[6, 5]), 3,
     [(3, 1, (1, 1), 1, 1, True), (3, 2, (1, 1))], 1, 1, "f16", "f16", "f16", "positive"),
    ("conv_s32_2d_wrap", "b01f_01io->b01f", dict(b=2, f=3, s=[4, 4]), 2, [(2, 1, (1, 0)), (3, 1, (1, 1))], 1, 1,
     "s32", "s32", "s32", "bigint"),
    ("conv_s8_2d_to_s32_groups", "bf01_oi01->bf01", dict(b=2, f=4, s=[5, 4]), 4, [(3, 1, (1, 1)), (2, 2)], 2, 1,
     "s8", "s8", "s32", "bigint"),
]


def conv_case(g, name, labels, sizes, kout, window, fgc, bgc, lt, rt, ot, kind):
    rng = g.seeded(name)
    (ib, if_, isp), (ko, ki, ksp), _ = parse_labels(labels)
    n = len(isp)
    dims = window_dims(window, n)
    in_shape = [0] * (n + 2)
    in_shape[ib], in_shape[if_] = sizes["b"], sizes["f"]
    k_shape = [0] * (n + 2)
    k_shape[ko], k_shape[ki] = kout, sizes["f"] // fgc
    for s in range(n):
        in_shape[isp[s]] = sizes["s"][s]
        k_shape[ksp[s]] = dims[s]["size"]
    lhs = data(g, rng, kind, lt, tuple(in_shape))
    rhs = data(g, rng, kind, rt, tuple(k_shape))
    want = conv_ref(g, lhs, rhs, labels, dims, fgc, bgc, ot)
    if sizes["f"] > 0:      # a case whose window misses the input everywhere would test nothing
        assert np.count_nonzero(want) >= want.size // 2, name
    attrs = window_attr(dims) + f"dim_labels={labels}"
    if fgc > 1:
        attrs += f", feature_group_count={fgc}"
    if bgc > 1:
        attrs += f", batch_group_count={bgc}"
    m = g.Module(name)
    pl, pr = m.param(g.shape_str(lt, lhs.shape)), m.param(g.shape_str(rt, rhs.shape))
    r = m.op(g.shape_str(ot, want.shape), "convolution", pl, pr, attrs=attrs)
    compare = "exact"
    if kind == "positive":
        terms = int(np.prod([d["size"] for d in dims])) * (sizes["f"] // fgc)
        compare = "ulp 1" if ot in ("bf16", "f16") else f"rtol {(terms + 1) * 2.0 ** -24:.3g}"
    g.case(name, m.text([r]), [lhs, rhs], [want], compare)


def fam_convolution(g):
    for spec in SPECS:
        conv_case(g, *spec)


def families(g):
    return [lambda: fam_convolution(g)]
