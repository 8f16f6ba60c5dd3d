"""linalg.py: cholesky and triangular-solve cases for gen_interp_corpus.py.

The expected values follow the order of operations src/interp/eval_linalg.c
documents (its file comment is the contract), evaluated here one rounding at
a time on numpy scalars of the element type (np.float32 / np.float64, complex
numbers as their two parts), so the cases compare exactly.  Each reference
result is also checked against numpy's own linear algebra (np.linalg.cholesky,
and the solve multiplied back), so an order that computed the wrong thing
would fail here, before any case is written.

  cholesky   lower: a = l l^H from a's lower triangle; upper: a = u^H u from
             the upper one, as the lower factor of transpose(a), transposed;
             the other triangle is zero; l[i][j] = (a[i][j] - s) / l[j][j]
             and l[i][i] = sqrt(re(a[i][i]) - re(s)), s summed from 0 with k
             ascending; a matrix with a NaN square root is all NaN (NaN+0j).
  solve      t y = c per right-hand side vector, t = op(a) (left_side) or
             op(a)^T; s = c[i], s -= t[i][k] y[k] for k ascending, y[i] = s /
             t[i][i] (Smith's algorithm for complex quotients).
The triangle a case does not name holds NaN and huge values (and so does the
diagonal with unit_diagonal), so reading it would show.
"""
import numpy as np

REAL = {"f32": np.float32, "f64": np.float64, "c64": np.float32, "c128": np.float64}
NPT = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
TYPES = ["f32", "f64", "c64", "c128"]


def is_complex(t):
    return t in ("c64", "c128")


# --------------------------------------------------------------------------
# Scalars of the element type: complex numbers as (re, im) pairs of R.

class Ops:
    """One rounding per operation in type t (complex: on each part)."""

    def __init__(self, t):
        self.t, self.R, self.cx = t, REAL[t], is_complex(t)

    def of(self, v):
        return (self.R(v.real), self.R(v.imag)) if self.cx else self.R(v)

    def zero(self):
        return (self.R(0), self.R(0)) if self.cx else self.R(0)

    def add(self, a, b):
        return (a[0] + b[0], a[1] + b[1]) if self.cx else a + b

    def sub(self, a, b):
        return (a[0] - b[0], a[1] - b[1]) if self.cx else a - b

    def mul(self, a, b):
        if not self.cx:
            return a * b
        return (a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])

    def conj(self, a):
        return (a[0], -a[1]) if self.cx else a

    def re(self, a):
        return a[0] if self.cx else a

    def from_re(self, r):
        return (r, self.R(0)) if self.cx else r

    def rdiv(self, a, d):
        return (a[0] / d, a[1] / d) if self.cx else a / d

    def div(self, x, y):
        """Smith's algorithm, as eval_linalg.c (and XLA's emitters) write it."""
        if not self.cx:
            return x / y
        (a, b), (c, d) = x, y
        if c == 0 and d == 0:
            return (a / c, b / c)
        if abs(c) >= abs(d):
            r = d / c
            den = c + d * r
            return ((a + b * r) / den, (b - a * r) / den)
        r = c / d
        den = d + c * r
        return ((a * r + b) / den, (b * r - a) / den)

    def array(self, rows, shape):
        """Nested scalars back to an array of type t."""
        out = np.empty(shape, NPT[self.t])
        flat = out.reshape(-1)
        for i, v in enumerate(rows):
            flat[i] = complex(float(v[0]), float(v[1])) if self.cx else v
        if self.cx:                     # exact parts, whatever complex() did to -0 or NaN
            parts = out.view(REAL[self.t]).reshape(-1, 2)
            for i, v in enumerate(rows):
                parts[i] = (v[0], v[1])
        return out


def rand_matrix(g, t, shape, scale=1.0):
    x = g.standard_normal(shape) * scale
    if is_complex(t):
        x = x + 1j * g.standard_normal(shape) * scale
    return x.astype(NPT[t])


def spd(g, t, n, batch=()):
    """Well-conditioned Hermitian positive definite matrices, rounded to t."""
    x = rand_matrix(g, "c128" if is_complex(t) else "f64", batch + (n, n))
    a = x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)
    return a.astype(NPT[t])


def spoil(a, keep_lower, diagonal=False):
    """a with the triangle not read replaced by NaN and huge values (and
    the diagonal, when it is not read either)."""
    a = a.copy()
    n = a.shape[-1]
    i, j = np.indices((n, n))
    bad = (j > i) if keep_lower else (j < i)
    if diagonal:
        bad |= i == j
    junk = np.where((i + j) % 2 == 0, np.nan, 3e30 if a.dtype in (np.float32, np.complex64) else 1e300)
    a[..., bad] = junk[bad].astype(a.dtype)
    return a


# --------------------------------------------------------------------------
# cholesky

def cholesky_one(o, a, lower):
    """One matrix (numpy array of type t) -> flat list of scalars."""
    n = a.shape[0]
    at = (lambda i, j: (i, j)) if lower else (lambda i, j: (j, i))
    out = {}
    for i in range(n):
        for j in range(i + 1):
            s = o.zero()
            for k in range(j):
                s = o.add(s, o.mul(out[at(i, k)], o.conj(out[at(j, k)])))
            if j < i:
                out[at(i, j)] = o.rdiv(o.sub(o.of(a[at(i, j)]), s), o.re(out[at(j, j)]))
                continue
            with np.errstate(invalid="ignore"):
                d = np.sqrt(o.re(o.of(a[at(i, i)])) - o.re(s))
            if np.isnan(d):
                return [o.from_re(o.R(np.nan))] * (n * n)
            out[at(i, i)] = o.from_re(d)
        for j in range(i + 1, n):
            out[at(i, j)] = o.zero()
    return [out[(i, j)] for i in range(n) for j in range(n)]


def per_matrix(t, shape, arrays, one):
    """one(ops, *matrices) on each batch item of arrays (a scalar list per
    item, row major), as an array of type t and the given shape."""
    if int(np.prod(shape)) == 0:
        return np.zeros(shape, NPT[t])
    o = Ops(t)
    flat = []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for items in zip(*[x.reshape((-1,) + x.shape[-2:]) for x in arrays]):
            flat += one(o, *items)
    return o.array(flat, shape)


def cholesky_ref(t, a, lower):
    return per_matrix(t, a.shape, [a], lambda o, m: cholesky_one(o, m, lower))


def check_cholesky(t, a, lower, got):
    """The reference agrees with numpy on the matrices that are positive definite."""
    n = a.shape[-1]
    tri = np.tril if lower else np.triu
    for m, l in zip(a.reshape((-1, n, n)), got.reshape((-1, n, n))):
        if np.all(np.isnan(l)):
            continue
        full = m.astype(np.complex128)
        full = np.tril(full) + np.conj(np.tril(full, -1)).T if lower else np.triu(full) + np.conj(np.triu(full, 1)).T
        full[np.diag_indices(n)] = full.diagonal().real
        want = np.linalg.cholesky(full)
        want = want if lower else np.conj(want).T
        tol = 1e-4 if REAL[t] == np.float32 else 1e-12
        assert np.allclose(l, want, rtol=tol, atol=tol * np.max(np.abs(want))), (t, lower)
        assert np.all(l == tri(l))


def fam_cholesky(g):
    def run():
        for t in TYPES:
            name = f"cholesky_{t}"
            rng = g.seeded(name)
            m = g.Module(name)
            a = spd(rng, t, 5, (2, 3))
            not_pd = a[1, 2].copy()
            not_pd[3, 3] = -not_pd[3, 3]              # negative pivot: that matrix is NaN
            a[1, 2] = not_pd
            big = spd(rng, t, 24)
            one = spd(rng, t, 1, (3,))
            params, roots, outs = [], [], []
            for x, lower in [(spoil(a, True), True), (spoil(a, False), False), (spoil(big, True), True),
                             (spoil(big, False), False), (one, True)]:
                p = m.param(g.shape_str(t, x.shape))
                roots.append(m.op(g.shape_str(t, x.shape), "cholesky", p, attrs=f"lower={'true' if lower else 'false'}"))
                want = cholesky_ref(t, x, lower)
                check_cholesky(t, x, lower, want)
                params.append(x)
                outs.append(want)
            assert np.all(np.isnan(outs[0][1, 2])) and not np.any(np.isnan(outs[0][1, 1]))
            g.case(name, m.text(roots), params, outs, "exact")
    return run


def fam_cholesky_edges(g):
    """Empty batches and matrices, a semidefinite matrix (a zero last pivot
    is no error), a zero pivot before the last (NaN), NaN input, the
    imaginary part of a complex diagonal (not read), no lower attribute
    (upper)."""
    def run():
        name = "cholesky_edges"
        m = g.Module(name)
        cases = [
            ("f32", np.zeros((0, 0), np.float32), "lower=true"),
            ("f32", np.zeros((3, 0, 0), np.float32), "lower=false"),
            ("f64", np.zeros((0, 4, 4), np.float64), "lower=true"),
            ("f32", np.array([[1, 1], [1, 1]], np.float32), "lower=true"),
            ("f32", np.array([[0, 0], [0, 1]], np.float32), "lower=true"),
            ("f64", np.array([[4, 2], [np.nan, 3]], np.float64), "lower=true"),
            ("c64", np.array([[4 + 7j, 2 - 2j], [2 + 2j, 11 - 5j]], np.complex64), "lower=true"),
            ("c128", np.array([[4 + 7j, 2 - 2j], [2 + 2j, 11 - 5j]], np.complex128), None),
        ]
        params, roots, outs = [], [], []
        for t, x, attrs in cases:
            p = m.param(g.shape_str(t, x.shape))
            roots.append(m.op(g.shape_str(t, x.shape), "cholesky", p, attrs=attrs))
            params.append(x)
            outs.append(cholesky_ref(t, x, attrs == "lower=true"))
        assert np.array_equal(outs[3], np.array([[1, 0], [1, 0]], np.float32))
        assert np.all(np.isnan(outs[4])) and np.all(np.isnan(outs[5]))
        assert np.array_equal(outs[6], np.array([[2, 0], [1 + 1j, 3]], np.complex64))
        assert np.array_equal(outs[7], np.array([[2, 1 - 1j], [0, 3]], np.complex128))
        g.case(name, m.text(roots), params, outs, "exact")
    return run


# --------------------------------------------------------------------------
# triangular-solve

TRANSPOSES = ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]


def op_a(a, transpose):
    """op(a) of the full matrix (batched)."""
    if transpose == "NO_TRANSPOSE":
        return a
    at = np.swapaxes(a, -1, -2)
    return np.conj(at) if transpose == "ADJOINT" else at


def solve_one(o, a, b, left, lower, unit, transpose):
    """One matrix a (m x m) and b -> flat list of scalars shaped like b."""
    m = a.shape[0]
    swap = left == (transpose != "NO_TRANSPOSE")
    t_lower = lower != swap
    conj = transpose == "ADJOINT"

    def t_at(i, j):
        v = o.of(a[j, i] if swap else a[i, j])
        return o.conj(v) if conj else v

    vectors = b.T if left else b                       # each row: one right-hand side
    out = []
    for c in vectors:
        y = [o.of(v) for v in c]
        order = range(m) if t_lower else range(m - 1, -1, -1)
        for i in order:
            s = y[i]
            for k in (range(i) if t_lower else range(i + 1, m)):
                s = o.sub(s, o.mul(t_at(i, k), y[k]))
            y[i] = s if unit else o.div(s, t_at(i, i))
        out.append(y)
    if left:
        out = [list(r) for r in zip(*out)]
    return [v for r in out for v in r]


def solve_ref(t, a, b, left, lower, unit, transpose):
    return per_matrix(t, b.shape, [a, b], lambda o, am, bm: solve_one(o, am, bm, left, lower, unit, transpose))


def check_solve(t, a, b, x, left, lower, unit, transpose):
    """op(a) x = b (or x op(a) = b), with a's triangle, in double."""
    wide = np.complex128 if is_complex(t) else np.float64
    tri = np.tril(a.astype(wide)) if lower else np.triu(a.astype(wide))
    if unit:
        n = a.shape[-1]
        tri[..., np.arange(n), np.arange(n)] = 1
    op = op_a(tri, transpose)
    xw = x.astype(wide)
    back = op @ xw if left else xw @ op
    tol = 1e-4 if REAL[t] == np.float32 else 1e-11
    scale = np.max(np.abs(op)) * np.max(np.abs(xw))
    assert np.max(np.abs(back - b.astype(wide))) <= tol * scale, (t, left, lower, unit, transpose)


def triangular(rng, t, shape, lower, unit):
    """A well-conditioned triangular a (diagonal away from zero)."""
    a = rand_matrix(rng, t, shape)
    n = shape[-1]
    d = (2 + rng.random(shape[:-1])) * np.where(rng.random(shape[:-1]) < 0.5, -1, 1)
    a[..., np.arange(n), np.arange(n)] = d.astype(a.dtype)
    return spoil(a, lower, diagonal=unit)


def fam_triangular_solve(g):
    """Every combination of left_side, lower, unit_diagonal and transpose_a
    on a batch of two 5x5 matrices, per element type."""
    def run():
        for t in TYPES:
            name = f"triangular_solve_{t}"
            rng = g.seeded(name)
            m = g.Module(name)
            shapes = {True: (2, 5, 3), False: (2, 4, 5)}
            bs = {left: rand_matrix(rng, t, s) for left, s in shapes.items()}
            params = [bs[True], bs[False]]
            pb = {True: m.param(g.shape_str(t, bs[True].shape)), False: m.param(g.shape_str(t, bs[False].shape))}
            roots, outs = [], []
            for lower in (True, False):
                for unit in (False, True):
                    a = triangular(rng, t, (2, 5, 5), lower, unit)
                    pa = m.param(g.shape_str(t, a.shape))
                    params.append(a)
                    for left in (True, False):
                        for tr in TRANSPOSES:
                            attrs = (f"left_side={'true' if left else 'false'}, lower={'true' if lower else 'false'}, "
                                     f"unit_diagonal={'true' if unit else 'false'}, transpose_a={tr}")
                            b = bs[left]
                            roots.append(m.op(g.shape_str(t, b.shape), "triangular-solve", pa, pb[left], attrs=attrs))
                            x = solve_ref(t, a, b, left, lower, unit, tr)
                            check_solve(t, a, b, x, left, lower, unit, tr)
                            outs.append(x)
            g.case(name, m.text(roots), params, outs, "exact")
    return run


def fam_triangular_solve_edges(g):
    """Empty systems (m = 0, no right-hand sides, an empty batch), 1x1,
    default (absent) booleans, a zero diagonal (infinities), a bigger system."""
    def run():
        name = "triangular_solve_edges"
        rng = g.seeded(name)
        m = g.Module(name)
        big_a = triangular(rng, "f64", (40, 40), True, False)
        big_b = rand_matrix(rng, "f64", (40, 7))
        cases = [
            ("f32", np.zeros((0, 0), np.float32), np.zeros((0, 3), np.float32), "left_side=true, transpose_a=NO_TRANSPOSE"),
            ("f32", np.eye(3, dtype=np.float32), np.zeros((3, 0), np.float32), "left_side=true, transpose_a=TRANSPOSE"),
            ("c64", np.zeros((0, 2, 2), np.complex64), np.zeros((0, 4, 2), np.complex64), "transpose_a=ADJOINT"),
            ("f32", np.array([[4]], np.float32), np.array([[2, -6, 1]], np.float32), "left_side=true, transpose_a=NO_TRANSPOSE"),
            ("f64", np.array([[2, 0], [5, 0]], np.float64), np.array([[1, 3], [2, 0]], np.float64),
             "left_side=true, lower=true, transpose_a=NO_TRANSPOSE"),
            ("c128", np.array([[0, 1 + 1j], [0, 2]], np.complex128), np.array([[1 + 1j, 0]], np.complex128),
             "transpose_a=NO_TRANSPOSE"),
            ("f64", big_a, big_b, "left_side=true, lower=true, transpose_a=TRANSPOSE"),
        ]
        params, roots, outs = [], [], []
        for t, a, b, attrs in cases:
            pa, pb = m.param(g.shape_str(t, a.shape)), m.param(g.shape_str(t, b.shape))
            roots.append(m.op(g.shape_str(t, b.shape), "triangular-solve", pa, pb, attrs=attrs))
            kw = dict(kv.split("=") for kv in attrs.split(", "))
            flags = [kw.get(k) == "true" for k in ("left_side", "lower", "unit_diagonal")]
            params += [a, b]
            outs.append(solve_ref(t, a, b, *flags, kw["transpose_a"]))
        check_solve("f64", big_a, big_b, outs[6], True, True, False, "TRANSPOSE")
        assert np.array_equal(outs[3], np.array([[0.5, -1.5, 0.25]], np.float32))
        assert np.any(np.isinf(outs[4])) and np.any(np.isinf(outs[5]) | np.isnan(outs[5]))
        g.case(name, m.text(roots), params, outs, "exact")
    return run


def families(g):
    return [fam_cholesky(g), fam_cholesky_edges(g), fam_triangular_solve(g), fam_triangular_solve_edges(g)]
