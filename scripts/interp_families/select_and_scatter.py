"""select_and_scatter.py: select-and-scatter cases, all compared exactly.

The reference follows XLA's semantics: the output starts as init; for each
source element in row-major order, the window positions are walked in
row-major order, positions in the padding (or between base elements) are
skipped, the first valid one is selected and a later candidate c replaces
the selection x when select(x, c) is false; then
output[selected] = scatter(output[selected], source element), rounded to the
type.  A window wholly in the padding scatters nothing.  Python compares the
selection with the values themselves (NaN comparisons false, as IEEE).
"""
import numpy as np

NAN = float("nan")


def sas_ref(g, x, src, init, win, select, scatter):
    """win: (size, stride, pad, lhs_dilate, rhs_dilate) per dim."""
    size, stride, pad, lhs, rhs = win
    out = np.full(x.shape, init, dtype=x.dtype)
    for s in np.ndindex(*src.shape):
        sel = None
        for w in np.ndindex(*size):
            pos = []
            for d in range(x.ndim):
                p = s[d] * stride[d] + w[d] * rhs[d] - pad[d][0]
                if p < 0 or p % lhs[d] or p // lhs[d] >= x.shape[d]:
                    break
                pos.append(p // lhs[d])
            if len(pos) != x.ndim:
                continue
            pos = tuple(pos)
            if sel is None or not select(x[sel], x[pos]):
                sel = pos
        if sel is not None:
            out[sel] = scatter(out[sel], src[s])
    return out


def source_shape(x_shape, win):
    size, stride, pad, lhs, rhs = win
    dims = []
    for d, n in enumerate(x_shape):
        base = (n - 1) * lhs[d] + 1 if n else 0
        padded = base + pad[d][0] + pad[d][1]
        span = (size[d] - 1) * rhs[d] + 1
        dims.append(0 if padded < span else (padded - span) // stride[d] + 1)
    return tuple(dims)


def win_of(rank, size, stride=None, pad=None, lhs=None, rhs=None):
    return (size, stride or (1,) * rank, pad or ((0, 0),) * rank, lhs or (1,) * rank, rhs or (1,) * rank)


def select_comp(name, t, direction, swapped=False, extra=""):
    a, b = ("b", "a") if swapped else ("a", "b")
    return f"""
%{name} (a: {t}[], b: {t}[]) -> pred[] {{
  %{name}.a = {t}[] parameter(0)
  %{name}.b = {t}[] parameter(1)
  ROOT %{name}.r = pred[] compare({t}[] %{name}.{a}, {t}[] %{name}.{b}), direction={direction}{extra}
}}"""


def abs_ge_comp(name, t):
    """select by magnitude: |a| >= |b| (not a single compare: the slow path)."""
    return f"""
%{name} (a: {t}[], b: {t}[]) -> pred[] {{
  %{name}.a = {t}[] parameter(0)
  %{name}.b = {t}[] parameter(1)
  %{name}.aa = {t}[] abs({t}[] %{name}.a)
  %{name}.ab = {t}[] abs({t}[] %{name}.b)
  ROOT %{name}.r = pred[] compare({t}[] %{name}.aa, {t}[] %{name}.ab), direction=GE
}}"""


PY_DIR = {"GE": lambda a, b: a >= b, "GT": lambda a, b: a > b, "LE": lambda a, b: a <= b,
          "LT": lambda a, b: a < b}


def case(g, name, t, x, src, init, win, sel_text, sel_fn, scat_text, scat_fn):
    m = g.Module(name)
    m.comp(sel_text)
    m.comp(scat_text)
    px, ps = m.param(g.arr_shape(t, x)), m.param(g.arr_shape(t, src))
    iv = g.arr(t, init)
    pi = m.param(g.arr_shape(t, iv))
    size, stride, pad, lhs, rhs = win
    attrs = g.window_attr(size, stride, pad, lhs, rhs)
    sname = sel_text.split("(")[0].strip()
    cname = scat_text.split("(")[0].strip()
    r = m.op(g.arr_shape(t, x), "select-and-scatter", px, ps, pi, attrs=f"{attrs}, select={sname}, scatter={cname}")
    want = sas_ref(g, x, src, iv[()], win, sel_fn, scat_fn)
    g.case(name, m.text([r]), [x, src, iv], [want])


def ties(g, rng, t, shape, lo=-3, hi=4):
    """Small integers: many equal maxima in a window."""
    return g.arr(t, rng.integers(lo, hi, shape).astype(np.float64))


def varied(g, rng, t, shape):
    """Values of varied magnitude, so that the order of a sum shows."""
    v = rng.standard_normal(shape) * np.exp2(rng.integers(-8, 9, shape))
    return g.arr(t, v)


def fam_select_and_scatter(g):
    """select-and-scatter: 2x2/2 max-pool gradients on NCHW rank 4, the 3x3/2
    pad 1 pool with overlapping windows (one element selected by several
    windows, summed in source order, rounded each step in bf16 and f16), GE
    keeping the first of equal maxima and GT the last, LE/LT min pooling on
    rank 1, a swapped compare, s32 sums that wrap, NaN and signed zeros,
    windows lying wholly in the padding, window dilation; the slow paths with a
    TOTALORDER compare, a select by magnitude and a non-commutative scatter
    (subtract: output first) from a non-zero init."""
    add = lambda t: g.binary_comp(f"add_{t}", "add", t)
    addf = lambda t: (lambda a, b: g.apply_scalar(t, "add", a, b))

    def one(name, t, x, win, direction="GE", swapped=False, init=0.0, src=None, rng=None, extra="",
            sel=None, sel_fn=None, scat=None, scat_fn=None):
        src = src if src is not None else varied(g, rng, t, source_shape(x.shape, win))
        sel = sel or select_comp(f"sel_{t}", t, direction, swapped, extra)
        fn = sel_fn or PY_DIR[direction]
        case(g, name, t, x, src, init, win, sel, fn, scat or add(t), scat_fn or addf(t))

    name = "select_and_scatter_f32_maxpool_nchw"
    rng = g.seeded(name)
    x = ties(g, rng, "f32", (2, 2, 4, 6))
    one(name, "f32", x, win_of(4, (1, 1, 2, 2), (1, 1, 2, 2)), rng=rng)

    for t in ("f32", "bf16", "f16", "f64"):
        name = f"select_and_scatter_{t}_3x3_stride2_pad1"
        rng = g.seeded(name)
        x = ties(g, rng, t, (7, 9), -2, 3)
        one(name, t, x, win_of(2, (3, 3), (2, 2), ((1, 1), (1, 1))), rng=rng)

    name = "select_and_scatter_f32_gt_keeps_last"
    rng = g.seeded(name)
    x = ties(g, rng, "f32", (3, 8), 0, 2)
    one(name, "f32", x, win_of(2, (2, 3), (1, 2), ((0, 1), (1, 0))), "GT", rng=rng)

    name = "select_and_scatter_f64_min_pool_rank1"
    rng = g.seeded(name)
    x = ties(g, rng, "f64", (11,), -2, 3)
    one(name, "f64", x, win_of(1, (3,), (1,), ((2, 1),)), "LE", rng=rng)
    name = "select_and_scatter_f16_lt_rank3"
    rng = g.seeded(name)
    x = ties(g, rng, "f16", (3, 4, 5), -2, 3)
    one(name, "f16", x, win_of(3, (2, 2, 2), (1, 2, 2), ((0, 0), (1, 0), (0, 1))), "LT", rng=rng)

    name = "select_and_scatter_f32_swapped_compare"
    rng = g.seeded(name)
    x = ties(g, rng, "f32", (6, 6), -2, 3)
    # compare(b, a) LE is a >= b: the first maximum, as with GE
    one(name, "f32", x, win_of(2, (3, 2), (3, 2)), "LE", swapped=True, rng=rng,
        sel_fn=lambda a, b: a >= b)

    name = "select_and_scatter_s32_wraps"
    rng = g.seeded(name)
    x = g.arr("s32", rng.integers(-5, 5, (4, 4)))
    src = g.arr("s32", rng.integers(2 ** 30, 2 ** 31 - 1, (3, 3)))
    one(name, "s32", x, win_of(2, (2, 2)), src=src, init=2 ** 31 - 5)

    name = "select_and_scatter_f32_nan_zeros"
    x = g.arr("f32", [[NAN, 1.0, -0.0, 0.0, 2.0, NAN],
                      [0.0, -0.0, NAN, 5.0, -1.0, -2.0],
                      [-0.0, 0.0, 3.0, NAN, NAN, NAN]])
    src = g.arr("f32", [[1.0, 10.0, 100.0], [1000.0, 10000.0, 100000.0]])
    one(name, "f32", x, win_of(2, (2, 2), (1, 2)), src=src)

    name = "select_and_scatter_f32_windows_in_padding"
    rng = g.seeded(name)
    x = g.arr("f32", [3.0, -1.0, 2.0])
    one(name, "f32", x, win_of(1, (2,), (2,), ((4, 4),)), rng=rng, init=0.5)

    name = "select_and_scatter_f32_window_dilation"
    rng = g.seeded(name)
    x = ties(g, rng, "f32", (5, 7), -2, 3)
    one(name, "f32", x, win_of(2, (2, 2), (1, 2), ((1, 0), (0, 1)), rhs=(2, 2)), rng=rng)

    name = "select_and_scatter_f32_totalorder_slow"
    x = g.arr("f32", [[NAN, 1.0, -0.0, 0.0], [-NAN, 0.0, float("inf"), -1.0], [2.0, NAN, -0.0, -NAN]])
    key = lambda v: g.total_order_key("f32", np.array([v], np.float32))[0]
    one(name, "f32", x, win_of(2, (2, 2), (1, 2)), extra=", type=TOTALORDER",
        src=g.arr("f32", [[1.0, 2.0], [4.0, 8.0]]), sel_fn=lambda a, b: key(a) >= key(b))

    name = "select_and_scatter_f32_magnitude_subtract_slow"
    rng = g.seeded(name)
    x = ties(g, rng, "f32", (5, 6), -3, 4)
    sub = g.binary_comp("sub_f32", "subtract", "f32")
    one(name, "f32", x, win_of(2, (2, 3), (1, 1)), rng=rng, init=1.5, sel=abs_ge_comp("abs_ge_f32", "f32"),
        sel_fn=lambda a, b: abs(a) >= abs(b), scat=sub,
        scat_fn=lambda o, s: np.float32(np.float32(o) - np.float32(s)))


def families(g):
    return [lambda: fam_select_and_scatter(g)]
