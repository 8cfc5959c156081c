"""Index lists that hold traced ints: ``A[[k, p]] = A[[p, k]]`` with ``p = np.argmax(...)``
(the row swap of Gaussian elimination with partial pivoting), ``x[[i, i + 1]]`` with a
compiled loop's variable; and the line an error in a branch reports. Each program is
compared with the plain Python function on the same arguments."""
import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import DataDependentError
from helpers import assert_matches_numpy


def gauss_pivot(A, b):
    A = A.copy()
    b = b.copy()
    n = A.shape[0]
    for k in range(n - 1):
        p = np.argmax(np.abs(A[k:, k])) + k
        if p != k:
            A[[k, p]] = A[[p, k]]
            b[[k, p]] = b[[p, k]]
        for i in range(k + 1, n):
            f = A[i, k] / A[k, k]
            A[i, k:] -= f * A[k, k:]
            b[i] -= f * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


def swap_unguarded(A):
    """Swaps with no branch around them, one of them a row with itself (p == k)."""
    for k in range(A.shape[0]):
        p = np.argmax(A[k:, 0]) + k
        A[[k, p]] = A[[p, k]]
    return A


def bubble_rows(A):
    """Rows sorted by their first column: a swap indexed by the loop's own ints."""
    n = A.shape[0]
    for sweep in range(n):
        for i in range(n - 1):
            if A[i, 0] > A[i + 1, 0]:
                A[[i, i + 1]] = A[[i + 1, i]]
    return A


def pick(x):
    """Reads through index lists (flat and nested) that mix traced and plain ints."""
    p = np.argmax(x)
    q = np.argmin(x)
    return x[[0, p, q, -1]], x[[[p, q], [q, 0]]].sum(axis=1)


def _cases():
    rng = np.random.default_rng(7)
    return {
        "gauss_pivot": (gauss_pivot, [(rng.standard_normal((n, n)), rng.standard_normal(n))
                                      for n in (12, 7)]),
        "swap_unguarded": (swap_unguarded, [(rng.standard_normal((9, 4)),)]),
        "bubble_rows": (bubble_rows, [(rng.standard_normal((8, 3)),)]),
        "pick": (pick, [(rng.standard_normal(11),), (rng.standard_normal(5),)]),
    }


@pytest.mark.parametrize("name", sorted(_cases()))
def test_index_list_programs(name):
    fn, argsets = _cases()[name]
    comp = cppcodegen.compile(fn)
    for args in argsets:
        expected = fn(*[a.copy() for a in args])
        got = comp(*[a.copy() for a in args])
        assert_matches_numpy(got, expected, rtol=1e-12, atol=1e-12)


def test_gauss_pivot_solves():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((20, 20))
    A[0, 0] = 1e-14             # without the pivoting this row would blow up
    b = rng.standard_normal(20)
    x = cppcodegen.compile(gauss_pivot)(A, b)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-9)


def bad_in_branch(A):
    for k in range(A.shape[0] - 1):
        if A[k, 0] > 0:
            q = A[k, 1]
            A[k] = list(A[q])       # line of the error: this one, not the `if`
    return A


def test_error_in_branch_names_its_line():
    import inspect
    lines, first = inspect.getsourcelines(bad_in_branch)
    want = first + next(i for i, s in enumerate(lines) if "list(A[q])" in s)
    with pytest.raises((IndexError, DataDependentError)) as e:
        cppcodegen.compile(bad_in_branch)(np.ones((4, 4)))
    assert f"test_index_lists.py:{want}" in str(e.value), str(e.value)
