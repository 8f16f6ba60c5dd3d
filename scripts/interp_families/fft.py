"""fft.py: fft cases (FFT, IFFT, RFFT, IRFFT) for gen_interp_corpus.py.

The expected values are numpy's np.fft.fftn / ifftn / rfftn / irfftn over
the last len(fft_length) axes, computed in double from the exact inputs and
rounded once to the result type (c64 / f32 results), which is what
src/interp/eval_fft.c promises.  They compare with "maxrel X":
|got - want| <= X max|want| over the output.
  * c64 and f32 results: X = 1e-6.  Both sides round a double result once,
    so they can differ by one f32 ulp of an element, at most
    2^-23 max|want| = 1.2e-7 max|want|; the double error of either side
    (about 1e-16 log2(n) of the largest output) adds nothing visible.
  * c128 and f64 results: X = 1e-13.  Both sides are double, radix-2 and
    Bluestein (ours) against pocketfft (numpy): their difference is a
    rounding error of order log2(n) ulps of the largest output, measured at
    most 1.2e-15 max|want| for these lengths (<= 1024); 1e-13 leaves a
    factor of 80 for other libms' cos and sin.
A per-element relative tolerance would not do: the small bins of a
transform carry the absolute rounding error of the large ones.
Inputs: random normal values, deltas and cosines (whose transforms are
known), lengths that are powers of two and ones that are not (primes, 12,
100, 1000), batch dims, 2-d and 3-d transforms, empty and length-1 dims.
IRFFT inputs have nonzero imaginary parts in the bins numpy and XLA drop
(X[0], and X[n/2] for even n).
"""
import numpy as np

COMPLEX = {"c64": np.complex64, "c128": np.complex128}
REAL = {"f32": np.float32, "f64": np.float64}
TOL = {"c64": "maxrel 1e-6", "f32": "maxrel 1e-6", "c128": "maxrel 1e-13", "f64": "maxrel 1e-13"}
REAL_OF = {"c64": "f32", "c128": "f64"}
COMPLEX_OF = {"f32": "c64", "f64": "c128"}


def crandn(rng, t, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(COMPLEX[t])


def length_attr(lengths):
    return "fft_length={" + ",".join(str(n) for n in lengths) + "}"


def reference(kind, x, lengths):
    """numpy's transform over the last len(lengths) axes, in double."""
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if kind == "FFT":
        return np.fft.fftn(x.astype(np.complex128), axes=axes)
    if kind == "IFFT":
        return np.fft.ifftn(x.astype(np.complex128), axes=axes)
    if kind == "RFFT":
        return np.fft.rfftn(x.astype(np.float64), s=lengths, axes=axes)
    return np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)


def out_type(kind, t):
    return COMPLEX_OF[t] if kind == "RFFT" else REAL_OF[t] if kind == "IRFFT" else t


def out_dims(kind, dims, lengths):
    dims = list(dims)
    n = lengths[-1]
    if kind == "RFFT":
        dims[-1] = n // 2 + 1 if n else 0
    elif kind == "IRFFT":
        dims[-1] = n
    return dims


def expected(kind, t, x, lengths):
    tout = out_type(kind, t)
    dims = out_dims(kind, x.shape, lengths)
    if int(np.prod(dims)) == 0:
        return np.zeros(dims, COMPLEX.get(tout, REAL.get(tout)))
    r = reference(kind, x, lengths)
    return r.astype(COMPLEX[tout]) if tout in COMPLEX else r.astype(REAL[tout])


def add_case(g, name, items):
    """items: (kind, input type, input array, fft_length); one module, one
    root per item, all of one output precision (the compare mode)."""
    m = g.Module(name)
    params, roots, outs = [], [], []
    modes = set()
    for kind, t, x, lengths in items:
        p = m.param(g.shape_str(t, x.shape))
        tout = out_type(kind, t)
        want = expected(kind, t, x, lengths)
        roots.append(m.op(g.shape_str(tout, want.shape), "fft", p,
                          attrs=f"fft_type={kind}, {length_attr(lengths)}"))
        params.append(x)
        outs.append(want)
        modes.add(TOL[tout])
    assert len(modes) == 1, name
    g.case(name, m.text(roots), params, outs, modes.pop())


def fam_c2c(g):
    """FFT and IFFT, c64 and c128, 1-d to 3-d, powers of two and not."""
    def run():
        for t in ("c64", "c128"):
            name = f"fft_c2c_{t}"
            rng = g.seeded(name)
            items = []
            for dims, lengths in [((16,), (16,)), ((3, 8), (8,)), ((2, 12), (12,)), ((7,), (7,)),
                                  ((2, 100), (100,)), ((1000,), (1000,)), ((1024,), (1024,)),
                                  ((2, 8, 6), (8, 6)), ((5, 9), (5, 9)), ((4, 6, 5), (4, 6, 5)),
                                  ((2, 4, 8, 2), (4, 8, 2))]:
                for kind in ("FFT", "IFFT"):
                    items.append((kind, t, crandn(rng, t, dims), lengths))
            add_case(g, name, items)
    return run


def fam_real(g):
    """RFFT (f32, f64) and IRFFT (c64, c128), odd and even last lengths."""
    def run():
        for t in ("f32", "f64"):
            tc = COMPLEX_OF[t]
            name = f"fft_real_{t}"
            rng = g.seeded(name)
            items = []
            for dims, lengths in [((16,), (16,)), ((3, 15), (15,)), ((2, 8, 6), (8, 6)), ((5, 7), (5, 7)),
                                  ((4, 6, 10), (4, 6, 10)), ((2, 3, 4, 5), (3, 4, 5)), ((999,), (999,))]:
                x = rng.standard_normal(dims).astype(REAL[t])
                items.append(("RFFT", t, x, lengths))
                cdims = out_dims("RFFT", dims, lengths)
                items.append(("IRFFT", tc, crandn(rng, tc, cdims), lengths))     # X[0], X[n/2] not real
            add_case(g, name, items)
    return run


def fam_analytic(g):
    """Inputs with transforms known in closed form: a delta (all ones, or a
    pure phase), a cosine (two spikes), a constant (one spike), checked here
    against the closed form as well as numpy."""
    def run():
        for t in ("c64", "c128"):
            name = f"fft_analytic_{t}"
            n = 12
            j = np.arange(n)
            delta0 = np.zeros(n, COMPLEX[t])
            delta0[0] = 1
            delta3 = np.zeros(n, COMPLEX[t])
            delta3[3] = 1
            cosine = np.cos(2 * np.pi * 2 * j / n).astype(COMPLEX[t])
            const = np.full((4, 4), 2, COMPLEX[t])
            items = [("FFT", t, delta0, (n,)), ("FFT", t, delta3, (n,)), ("FFT", t, cosine, (n,)),
                     ("FFT", t, const, (4, 4)), ("IFFT", t, const, (4, 4))]
            for (kind, _, x, lengths), closed in zip(items, [
                    np.ones(n), np.exp(-2j * np.pi * 3 * j / n), n / 2 * ((j == 2) | (j == n - 2)),
                    np.where(np.indices((4, 4)).sum(0) == 0, 32, 0), np.where(np.indices((4, 4)).sum(0) == 0, 2, 0)]):
                assert np.allclose(expected(kind, t, x, lengths), closed, atol=1e-6)
            add_case(g, name, items)
    return run


def fam_edges(g):
    """Empty dims (in the batch, in the transform, fft_length 0), length-1
    transforms, and an IRFFT of length 1 and 2."""
    def run():
        rng = g.seeded("fft_edges")
        add_case(g, "fft_edges_c64", [
            ("FFT", "c64", np.zeros((0, 8), np.complex64), (8,)),
            ("IFFT", "c64", crandn(rng, "c64", (3, 1)), (1,)),
            ("FFT", "c64", crandn(rng, "c64", (1, 1, 1)), (1, 1, 1)),
            ("FFT", "c64", np.zeros((2, 0, 4), np.complex64), (0, 4)),
            ("IRFFT", "c64", crandn(rng, "c64", (2, 1)), (1,)),
            ("IRFFT", "c64", crandn(rng, "c64", (3, 2)), (2,)),
            ("IRFFT", "c64", np.zeros((2, 0), np.complex64), (0,)),
            ("IRFFT", "c64", crandn(rng, "c64", (2, 1)), (0,)),
        ])
        add_case(g, "fft_edges_f64", [
            ("RFFT", "f64", np.zeros((4, 0), np.float64), (0,)),
            ("RFFT", "f64", rng.standard_normal((3, 1)), (1,)),
            ("RFFT", "f64", rng.standard_normal((2, 2)), (2,)),
            ("RFFT", "f64", rng.standard_normal((1, 3)), (1, 3)),
        ])
    return run


def families(g):
    return [fam_c2c(g), fam_real(g), fam_analytic(g), fam_edges(g)]
