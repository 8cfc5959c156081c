"""``A[k]`` with a NumPy integer ``k`` (an argument, ``np.argmax(...)``, ``k +
np.argmax(...)``) is NumPy's basic indexing: a view of ``A``, not a copy. So the tuple swap
``A[k], A[p] = A[p], A[k]`` that tutorials write leaves both rows equal to the old row ``p``,
as NumPy does (it did a true swap: a wrong result, found by a new user's probe), and writes
through ``r = A[k]`` reach ``A``. Also ``A[0] = f(A[p]); A[p] = A[0]``: the second store's
row was read before the first store wrote it. Compared with NumPy, arguments afterwards too."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen


def swap_rows(A, i, j):
    A[i], A[j] = A[j], A[i]
    return A


def swap_columns(A, i, j):
    A[:, i], A[:, j] = A[:, j], A[:, i]
    return A


def pivot_swap(A):
    p = np.argmax(A[:, 0])
    A[0], A[p] = A[p], A[0]
    return A


def store_then_read(A):
    p = np.argmax(A[:, 0])
    A[0] = A[p] * 1.0
    A[p] = A[0]
    return A


def write_through_row(A, k):
    r = A[k]
    r *= 2.0
    r[0] = -1.0
    return A, r.sum()


def gauss_tuple_pivot(A, b):
    n = A.shape[0]
    A = A.copy()
    b = b.copy()
    for k in range(n):
        p = k + np.argmax(np.abs(A[k:, k]))
        if p != k:
            A[k], A[p] = A[p], A[k]
            b[k], b[p] = b[p], b[k]
        for i in range(k + 1, n):
            f = A[i, k] / A[k, k]
            A[i, k:] = A[i, k:] - f * A[k, k:]
            b[i] = b[i] - f * b[k]
    return A, b


def copied_pivot(A):
    n = A.shape[0]
    for k in range(n - 1):
        p = k + np.argmax(np.abs(A[k:, k]))
        A[k], A[p] = A[p].copy(), A[k].copy()
        A[k + 1:] -= np.outer(A[k + 1:, k] / A[k, k], A[k])
    return A


M = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]])
RNG = np.random.default_rng(8)


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("fn,args", [
    (swap_rows, (M, np.int64(1), np.int64(0))),
    (swap_rows, (M, np.int64(2), np.int64(2))),
    (swap_columns, (M, np.int64(0), np.int64(2))),
    (pivot_swap, (M,)),
    (pivot_swap, (M[::-1].copy(),)),
    (store_then_read, (M,)),
    (write_through_row, (M, np.int64(1))),
    (gauss_tuple_pivot, (M, np.array([1.0, 2, 3]))),
    (gauss_tuple_pivot, (RNG.normal(size=(6, 6)), RNG.normal(size=6))),
    (copied_pivot, (RNG.normal(size=(5, 5)),)),
])
def test_integer_scalar_indices_are_views(fn, args):
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = cppcodegen.compile(fn, fallback=False)(*got_args)
    _same(got, want)
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)


def test_a_zero_d_array_index_is_still_a_copy():
    """``A[np.array(k)]`` is advanced indexing in NumPy: a copy."""
    def f(A, k):
        r = A[np.asarray(k)]
        A[k] = 0.0
        return r
    want = f(M.copy(), np.int64(1))
    np.testing.assert_array_equal(cppcodegen.compile(f, fallback=False)(M.copy(), np.int64(1)),
                                  want)
