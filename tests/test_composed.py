"""NumPy functions written as a few array operations compile to those operations
(frontend/composed.py): np.cross, np.polyval, np.sinc, np.nan_to_num, np.isposinf/isneginf,
np.ptp, np.count_nonzero, np.inner, np.vdot, np.meshgrid, np.tile, np.repeat,
np.atleast_*d, np.kron, np.vander, np.isin, np.piecewise. Results equal NumPy's bit for bit (the same
operations in NumPy's order), with no NumPy call between kernels; other arguments run NumPy's function and raise its errors."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from cppcodegen.ir.loopir import nested
from helpers import assert_compiled_raises, check_against_numpy

RNG = np.random.default_rng(11)
V3 = RNG.standard_normal((20, 3))
W3 = RNG.standard_normal((20, 3))
X = RNG.standard_normal(40)
Y = RNG.standard_normal(40)
M = RNG.standard_normal((5, 7))
I = RNG.integers(-9, 9, (4, 5))
SPECIAL = np.array([0.0, -0.0, 1.5, np.nan, np.inf, -np.inf, -2.0, 3.0])


def _native(fn, *args):
    kernels = nested(cppcodegen.explain(cppcodegen.compile(fn), *args).kernels)
    assert not [k.name for k in kernels if k.form == "extern"]


def torque(r, f):
    return np.cross(r, f).sum(axis=0)


def cross_broadcast(r, f):
    return np.cross(r, f[0])            # (n, 3) x (3,)


def cross_ints(a, b):
    return np.cross(a[:, :3], b[:, 2:])


def horner(x):
    return np.polyval([3.0, -2.0, 0.5, 1.0], x)


def horner_traced(c, x):
    return np.polyval(c, x)


def sinc_grid(x):
    return np.sinc(x) + np.sinc(np.float32(2.0) * x.astype(np.float32))


def clean(x):
    return np.nan_to_num(x) + np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0)


def clean_f32(x):
    return np.nan_to_num(x.astype(np.float32), posinf=1e300)   # cast into float32: inf


def infs(x):
    return np.isposinf(x) | np.isneginf(x * 2)


def ranges(m):
    return np.ptp(m), np.ptp(m, axis=0), np.ptp(m, axis=1, keepdims=True)


def counts(m):
    return np.count_nonzero(m > 0.2), np.count_nonzero(m, axis=0)


def products(x, y, m):
    return np.inner(x, y), np.inner(m, m), np.vdot(m, m), np.inner(m[0], m)


def grid_xy(x, y):
    xx, yy = np.meshgrid(x, y)
    return np.sqrt(xx * xx + yy * yy)


def grid_ij(x, y):
    a, b, c = np.meshgrid(x, y, x[:3], indexing="ij")
    return a + 2 * b - c


def grid_sparse(x, y):
    xx, yy = np.meshgrid(x, y, sparse=True)
    return xx * yy


def tiles(m, x):
    return np.tile(m, (2, 3)), np.tile(x, 3), np.tile(m, 2), np.tile(x[:4], (2, 1, 2))


def repeats(m, x):
    return np.repeat(m, 3, axis=1), np.repeat(x, 2), np.repeat(m, 2), np.repeat(m, 0, axis=0)


def at_least(x, m):
    a = np.atleast_2d(x)
    b, c = np.atleast_3d(x, m)
    return a * 2, b + 1, c - 1, np.atleast_1d(x.sum())


def krons(m, x):
    return np.kron(m, m[:2, :3]), np.kron(x[:4], m), np.kron(m, np.eye(2)), np.kron(2.0, x)


def vanders(x, i):
    return np.vander(x[:7]), np.vander(x, 4, increasing=True), np.vander(i[0]), \
        np.vander(x[:3].astype(np.float32), 1)


def membership(i, x):
    return np.isin(i, i[0, :3]), np.isin(i, [1, -2, 7], invert=True), np.isin(x, [np.nan, 0.0]), \
        np.isin(i[0, 0], [3, 4]), np.isin(x, np.array([], dtype=float))


def pieces(x, i):
    a = np.piecewise(x, [x < -1, x > 1], [lambda v: -v, lambda v: np.sqrt(v), lambda v: v * v])
    b = np.piecewise(i, [i < 0, i >= 3], [-1, lambda v: v * 10])
    c = np.piecewise(x, x > 0, [lambda v: np.log(v), 7.5])
    d = np.piecewise(x, [x > 0], [lambda v, k: v * k], 3.0)
    return a, b, c, d


# sin within 4 ULP of NumPy's (its float32 part, summed into float64, as a relative bound),
# dot products (inner, vdot) in another order than BLAS's: a sum's rounding
APPROX = {sinc_grid: dict(rtol=2e-6, atol=1e-7), products: dict(rtol=1e-13, atol=1e-13),
          pieces: dict(ulp=4)}       # (np.log within 4 ULP of NumPy's, as the ufunc matrix)


@pytest.mark.parametrize("fn,args", [
    (torque, (V3, W3)), (cross_broadcast, (V3, W3)), (cross_ints, (I, I[::-1].copy())),
    (horner, (X,)), (horner, (X.astype(np.float32),)), (horner_traced, (Y[:5], X)),
    (sinc_grid, (np.concatenate([X, [0.0, -0.0]]),)), (sinc_grid, (I[0],)),
    (clean, (SPECIAL,)), (clean_f32, (SPECIAL,)), (clean, (I,)), (infs, (SPECIAL,)),
    (ranges, (M,)), (ranges, (I,)), (counts, (M,)),
    (products, (X, Y, M)), (products, (X + 1j * Y, Y - 2j * X, M * (1 - 1j))),
    (grid_xy, (X[:6], Y[:4])), (grid_ij, (X[:6], Y[:4])), (grid_sparse, (X[:6], Y[:4])),
    (tiles, (M, X)), (repeats, (M, X)), (at_least, (X, M)), (krons, (M, X)), (krons, (I, I[0])),
    (vanders, (X, I)), (membership, (I, SPECIAL)), (pieces, (X * 2, I)),
])
def test_composed_functions_match_numpy(fn, args):
    check_against_numpy(fn, *args, **APPROX.get(fn, {"ulp": 0}))
    _native(fn, *args)


def cross_four(a, b):
    return np.cross(np.concatenate([a, b[:, :1]], axis=1), b)


def repeat_negative(x):
    return np.repeat(x, -1)


def test_arguments_numpy_rejects_raise_its_errors():
    assert_compiled_raises(cross_four, (V3, W3), ["incompatible dimensions"], (ValueError,))
    assert_compiled_raises(repeat_negative, (X,), ["negative"], (ValueError,))


def meshgrid_loop(x, y, steps):
    """A wave on a grid from np.meshgrid, stepped in a loop: the grid is built once."""
    xx, yy = np.meshgrid(x, y)
    u = np.sin(xx) * np.cos(yy)
    for _ in range(steps):
        u = u + 0.1 * np.sinc(u)
    return u


def test_meshgrid_and_sinc_in_a_loop():
    check_against_numpy(meshgrid_loop, np.linspace(-2, 2, 17), np.linspace(-1, 1, 9), 5,
                        rtol=1e-13, atol=1e-14)     # sin within 4 ULP, five steps of it
    _native(meshgrid_loop, np.linspace(-2, 2, 17), np.linspace(-1, 1, 9), 5)


def diagonals(v, m):
    return (np.diag(v), np.diag(v, 2), np.diag(v, -3), np.diag(m), np.diag(m, -1),
            np.diagflat(m[:2, :3]), np.diagflat(v, 1))


def jacobi_solve(A, b, tol, maxit):
    """A published-style Jacobi iteration: np.diag, np.diagflat and an inf-norm test."""
    D = np.diag(A)
    R = A - np.diagflat(D)
    x = np.zeros_like(b)
    for it in range(maxit):
        x_new = (b - R @ x) / D
        if np.linalg.norm(x_new - x, ord=np.inf) < tol:
            return x_new, it + 1
        x = x_new
    return x, maxit


def test_diag_and_a_jacobi_solver_compile_natively():
    check_against_numpy(diagonals, X[:5], M, ulp=0)
    check_against_numpy(diagonals, I[0], I, ulp=0)
    _native(diagonals, X[:5], M)
    A = RNG.standard_normal((30, 30)) + 60 * np.eye(30)
    b = RNG.standard_normal(30)
    got, expected = check_against_numpy(jacobi_solve, A, b, 1e-12, 200, rtol=1e-12)
    assert got[1] == expected[1]
    _native(jacobi_solve, A, b, 1e-12, 200)


@pytest.mark.parametrize("ord_", [None, 2, np.inf, -np.inf, 0, 1, 3, 0.5])
def test_vector_norms_of_every_order(ord_):
    def f(x, z, m):
        return (np.linalg.norm(x, ord_), np.linalg.norm(z, ord_),
                np.linalg.norm(m, ord_, axis=1, keepdims=True))
    z = X[:10] + 1j * Y[:10]
    check_against_numpy(f, X, z, M, rtol=1e-13)
    _native(f, X, z, M)


@pytest.mark.parametrize("ord_", [None, "fro", 1, -1, np.inf, -np.inf])
def test_matrix_norms_without_svd(ord_):
    f = lambda m: np.linalg.norm(m, ord_)       # noqa: E731
    check_against_numpy(f, M, rtol=1e-13)
    _native(f, M)


def argmax_coords(m, flat):
    r, c = np.unravel_index(np.argmax(m), m.shape)
    i, j, k = np.unravel_index(flat, (2, 3, 4))
    return r, c, i, j, k, np.unravel_index(flat, (4, 6), order="F")


def test_unravel_index():
    check_against_numpy(argmax_coords, M, np.array([0, 5, 23, 17]), ulp=0)
    _native(argmax_coords, M, np.array([0, 5, 23, 17]))
    assert_compiled_raises(argmax_coords, (M, np.array([0, 24])), ["out of bounds"],
                           (ValueError,))
