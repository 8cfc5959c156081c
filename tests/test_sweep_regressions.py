"""Programs from a new-user sweep (k-means, Jacobi, matrix powers, lookup tables, scaled
vectors) that failed, each in its smallest form, compared with the plain function."""
from __future__ import annotations

import numpy as np

import cppcodegen
from helpers import check_against_numpy


def damped_jacobi(A, b):
    D = np.diag(A)                      # np.diag of a symbolic size: a view, not a NumPy call
    x = np.zeros_like(b)
    for _ in range(100):
        x_new = (b + 0.5 * x) / D
        if np.abs(x_new - x).max() < 1e-12:
            break
        x = x_new
    return x


def repeated_squaring(A, p):
    while p > 0:
        A = A @ A                       # a 1x1 product in a while loop: fused, not NumPy's
        p -= 1
    return A


LUT = np.array([3, 1, 4, 1, 5], np.uint8)


def table_lookup(idx):
    return np.take(LUT, idx)            # NumPy dispatches np.take on the table alone


def scaled(x):
    return x / x.shape[0] ** 0.5        # a size to a float power


def test_sweep_programs_after_a_shape_change():
    f = cppcodegen.compile(damped_jacobi, dynamic=True)
    g = cppcodegen.compile(scaled, dynamic=True)
    for n in (6, 9):
        A, b = 3.0 * np.eye(n) + 0.1, np.arange(n, dtype=float)
        np.testing.assert_allclose(f(A, b), damped_jacobi(A, b), rtol=1e-12)
        x = np.linspace(1, 2, n)
        np.testing.assert_allclose(g(x), scaled(x), rtol=1e-15)


def test_one_wide_products_in_a_loop_and_constant_tables():
    for shape in ((2, 2), (1, 1)):
        check_against_numpy(repeated_squaring, np.full(shape, 0.5), np.int64(3), rtol=1e-14)
    check_against_numpy(table_lookup, np.array([0, 4, 2, -1]), ulp=0)


def backward_induction(V, N):
    j = np.arange(N + 1)
    V = V + 0.0 * j
    for i in range(N - 1, -1, -1):
        j = np.arange(i + 1)            # a temporary of the body, shorter each step
        V[:i + 1] = np.maximum(0.5 * (V[1:i + 2] + V[:i + 1]), 0.01 * j)
    return V[0]


def temporary_read_after(V, N):
    V = V.copy()
    j = np.arange(N + 1)
    for i in range(N - 1, -1, -1):
        j = np.arange(i + 1)
        V[:i + 1] = V[:i + 1] * 0.5 + j
    return V.sum() + j.sum()            # its last value after the loop: carried (unrolled)


def test_a_loop_temporary_rebound_with_another_shape_each_step():
    """A name the body assigns before reading it is not carried, so its shape may change
    every step and the loop compiles (it was refused: 'j changes its shape'); read after the
    loop, it is carried after all (the loop then runs as before)."""
    V = np.linspace(0, 1, 301)
    got, _ = check_against_numpy(backward_induction, V, np.int64(300), rtol=1e-13)
    assert "// for at" in cppcodegen.explain(backward_induction, V, np.int64(300)).source
    check_against_numpy(temporary_read_after, np.linspace(0, 1, 41), 40, rtol=1e-13)


def gcd_arrays(a, b):
    while np.any(b != 0):
        nz = b != 0
        a, b = np.where(nz, b, a), np.where(nz, a % np.where(nz, b, 1), 0)
    return a


def pagerank(A):
    n = A.shape[0]
    out = A.sum(axis=1)
    P = A / np.where(out == 0, 1.0, out)[:, None]
    r = np.full(n, 1.0 / n)
    while True:
        rn = 0.85 * (r @ P) + 0.15 / n
        err = np.abs(rn - r).sum()
        r = rn
        if err < 1e-12:
            break
    return r


def bfs_levels(adj, src):
    n = adj.shape[0]
    level = np.full(n, -1)
    frontier = np.zeros(n, dtype=bool)
    frontier[src] = True
    level[src] = 0
    d = 0
    while frontier.any():
        d += 1
        nxt = np.any(adj & frontier[:, None], axis=0) & (level < 0)
        level[nxt] = d
        frontier = nxt
    return level


def padded(x):
    return np.pad(x, ((0, 1), (2, 2)), mode="constant", constant_values=-1.0)


def test_carried_arrays_of_sizes_equal_in_this_call():
    """A carried value whose new shape is another argument's size, equal to its own in this
    call (np.where(nz, b, a) has b's size, a carries a's): guarded equal, as broadcasting
    them is, on the second size too (was: 'a changes its shape or kind in the loop')."""
    rng = np.random.default_rng(4)
    for n in (5, 3, 8):
        check_against_numpy(gcd_arrays, np.arange(12, 12 + n), np.arange(18, 18 + n))
        check_against_numpy(pagerank, rng.random((n, n)) + 0.1, rtol=1e-10, atol=1e-12)
        adj = rng.random((n, n)) < 0.4
        check_against_numpy(bfs_levels, adj | adj.T, 0)


def test_pad_constant_values_after_a_shape_change():
    for shape in ((5, 6), (3, 4), (1, 1)):
        check_against_numpy(padded, np.arange(float(np.prod(shape))).reshape(shape))
