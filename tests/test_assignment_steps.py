"""Assignments in a row that read the array they store into (``A[i, 1:-1] += A[i, 2:];
A[i, 1:-1] *= 0.5``, a Gauss-Seidel-style row sweep; a column recurrence; a shifted smoothing
of an argument) are stored one after another, each into its region only: not a pass over the
whole array per assignment (the row sweep ran 100x slower than NumPy that way). Each program is
compared with the plain Python function (result and updated arguments), including ones where
a value was read before an earlier store in the row and must keep the old element. One-element
stores before an inner loop or a branch (LU elimination, Cholesky) stay in place too."""
import warnings

import numpy as np
import pytest

import cppcodegen


def row_sweep(A, steps):
    for _ in range(steps):
        for i in range(1, A.shape[0] - 1):
            A[i, 1:-1] += A[i, 2:]
            A[i, 1:-1] *= 0.5
    return A


def column_recurrence(A):
    for j in range(1, A.shape[1]):
        A[:, j] += A[:, j - 1]
        A[:, j] *= 0.5
        A[0, j] = A[-1, j]
    return A


def shift_smooth(x):
    x[1:] += x[:-1]
    x[1:] *= 0.5
    x[0] = x[-1]
    return x


def saved_then_stored(a, n):
    for k in range(n):
        t = a[0] * 2.0
        a[0] = 5.0 + k
        a[1] = t
        a[2:] = a[1:-1] + a[0]
    return a


def sum_between_stores(a, n):
    for _ in range(n):
        a[0] = a[0] + 1.0
        s = a.sum()
        a[1:] = a[1:] / s
    return a


def row_then_read(A):
    out = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        A[i, :] *= 2.0
        out[i] = A[i, :].sum()
        A[i, 0] = -out[i]
    return A, out


def lu_in_place(A):
    """Doolittle elimination, element by element (the multiplier stored, then the row
    updated by an inner loop that reads it)."""
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] = A[i, k] / A[k, k]
            for j in range(k + 1, n):
                A[i, j] -= A[i, k] * A[k, j]
    return A


def cholesky_banachiewicz(A):
    """Row by row, a branch on the diagonal (the inner loop reads L before the branch
    stores into it)."""
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                L[i, j] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return L


RNG = np.random.default_rng(7)
_M = RNG.random((16, 16)) + 16 * np.eye(16)
CASES = [
    (row_sweep, (RNG.random((30, 30)), 3)),
    (column_recurrence, (RNG.random((20, 17)),)),
    (shift_smooth, (RNG.random(50),)),
    (saved_then_stored, (RNG.random(10), 4)),
    (sum_between_stores, (RNG.random(10), 5)),
    (row_then_read, (RNG.random((12, 9)),)),
    (lu_in_place, (_M,)),
    (cholesky_banachiewicz, (_M @ _M.T,)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_matches_python(fn, args):
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = cppcodegen.compile(fn, fallback=False)(*got_args)
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        # the same operations in the same order: only the last bit may differ (a fused
        # multiply-add where Python rounds twice)
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)
        assert np.asarray(g).dtype == np.asarray(w).dtype
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)


@pytest.mark.parametrize("fn", [lu_in_place, cholesky_banachiewicz])
def test_element_stores_stay_in_place(fn):
    """A one-element store before an inner loop or a branch is made where the array is:
    no stage inside the loops copies the whole 16 x 16 matrix (the elimination was O(n^4))."""
    ex = cppcodegen.explain(fn, _M @ _M.T)
    ir = str(ex).split("== loop IR ==")[1].split("== kernels")[0]
    body = ir.split("for lv", 1)[1].split("\npointwise in0")[0]
    assert "over [16, 16]" not in body


def test_row_sweep_stores_rows_only():
    """Inside the row loop, no stage spans the whole 30 x 30 array."""
    ex = cppcodegen.explain(row_sweep, np.ones((30, 30)), 2)
    ir = str(ex).split("== loop IR ==")[1].split("== kernels")[0]
    body = ir.split("for lv")[2].split("\npointwise in0")[0]      # (the copy back after it)
    assert "over [1, 28]" in body
    assert "over [30, 30]" not in body and "over [lv" not in body


def test_argument_updated_where_it_is():
    """A loop that updates an argument in place for the caller works in the argument's own
    memory: no copy of the 30 x 30 array in before the loop or out after it."""
    ex = cppcodegen.explain(row_sweep, np.ones((30, 30)), 2)
    ir = str(ex).split("== loop IR ==")[1].split("== kernels")[0]
    assert "over [30, 30]" not in ir and "float64[30, 30]" not in ir.split("buffer in0")[1].split("\n", 1)[1]


def rebound_not_updated(A, steps):
    X = A
    for _ in range(steps):
        X = X * 0.5 + 1.0           # new arrays: A itself is never written
    return X


def updated_then_nonzero(A, steps):
    for _ in range(steps):
        for i in range(1, A.shape[0]):
            A[i, 1:] += A[i - 1, 1:]
    idx = np.nonzero(A > 3.0)[0]    # a NumPy step whose shape depends on the values,
    return idx * 2 + 1              # read by a kernel after it


@pytest.mark.parametrize("fn", [rebound_not_updated, updated_then_nonzero, row_sweep])
def test_argument_as_python_leaves_it(fn):
    """The caller's array ends as Python leaves it: untouched when the function only rebinds
    the name; updated when it updates it, also when a later NumPy step gives another shape
    than when compiled (the call then runs again as NumPy, from the arguments as they came)."""
    comp = cppcodegen.compile(fn, fallback=False)
    rng = np.random.default_rng(5)
    for scale in (1.0, 3.0, 0.2):
        A = rng.random((12, 9)) * scale
        mine, theirs = A.copy(), A.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = comp(mine, 3)
        want = fn(theirs, 3)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
        np.testing.assert_allclose(mine, theirs, rtol=1e-13, atol=0)


def sweep_from(A, B):
    for i in range(1, A.shape[0]):
        A[i, 1:] += B[i - 1, 1:]
    return A


def test_overlapping_arguments_run_as_numpy():
    """A loop that updates an argument in its own memory, called with another argument that
    is a view of it: the call runs as NumPy (the compiled loop would read the new values)."""
    comp = cppcodegen.compile(sweep_from, fallback=False)
    A = np.random.default_rng(6).random((10, 8))
    want = sweep_from(A.copy(), A.copy())
    np.testing.assert_array_equal(comp(A.copy(), A.copy()), want)
    mine, theirs = A.copy(), A.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp(mine, mine[::-1][::-1])
    sweep_from(theirs, theirs[::-1][::-1])
    np.testing.assert_array_equal(mine, theirs)
