"""Row and column sums of one matrix in one kernel (passes/matvec.py, backend/matvec.py).

mvt, bicg and atax read a matrix for a row reduction (``A @ p``) and a column reduction
(``r @ A``): the scheduler merges them into one kernel that reads each row once. Checked
against NumPy for float64/float32/int64, transposed and strided inputs, sizes 1 and odd
sizes, and bit-identical at 1 and 2 threads; the C++ shows the merge (one kernel).
"""
import ctypes
import ctypes.util

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy, run_compiled


def mvt(x1, x2, y1, y2, A):
    return x1 + A @ y1, x2 + y2 @ A


def bicg(A, p, r):
    return r @ A, A @ p


def atax(A, x):
    return (A @ x) @ A


def rows_cols(A):
    return A.sum(axis=1), (A * A).sum(axis=0)


def weighted(A, w):           # the column reads a row value computed in the same kernel
    m = A.max(axis=1)
    return (A * (m + w)[:, None]).sum(axis=0), m


def _tol(dtype, k):
    eps = np.finfo(dtype).eps if np.dtype(dtype).kind == "f" else 0
    return dict(rtol=4 * k * eps, atol=4 * k * eps) if eps else {}


def _data(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return r.standard_normal(shape).astype(dtype)
    return r.integers(-50, 50, shape).astype(dtype)


SHAPES = [(1, 1), (1, 7), (7, 1), (3, 5), (67, 131), (130, 67), (257, 300)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_bicg_atax(shape, dtype):
    m, n = shape
    A = _data(shape, dtype)
    p, r = _data((n,), dtype, 1), _data((m,), dtype, 2)
    tol = _tol(dtype, max(m, n) * (1 + n))
    got, exp = check_against_numpy(bicg, A, p, r, **tol)
    check_against_numpy(atax, A, p, **_tol(dtype, m * n * 4))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("n", [1, 2, 33, 150])
def test_mvt_square(n, dtype):
    A = _data((n, n), dtype)
    vecs = [_data((n,), dtype, s) for s in range(4)]
    check_against_numpy(mvt, *vecs, A, **_tol(dtype, n))


@pytest.mark.parametrize("layout", ["transposed", "strided", "fortran"])
def test_non_contiguous(layout):
    base = _data((160, 210), np.float64)
    A = {"transposed": base.T, "strided": base[::2, ::3],
         "fortran": np.asfortranarray(base)}[layout]
    m, n = A.shape
    p, r = _data((n,), np.float64, 1), _data((m,), np.float64, 2)
    check_against_numpy(bicg, A, p, r, **_tol(np.float64, 400))
    check_against_numpy(atax, A, p, **_tol(np.float64, 400 * 400))
    check_against_numpy(rows_cols, A, **_tol(np.float64, 400))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_value_read_by_column(dtype):
    A = _data((91, 77), dtype)
    w = _data((91,), dtype, 3)
    check_against_numpy(weighted, A, w, **_tol(dtype, 91 * 8))


def test_one_kernel_in_the_cpp():
    A = _data((300, 200), np.float64)
    p, r = _data((200,), np.float64, 1), _data((300,), np.float64, 2)
    for fn, args in ((bicg, (A, p, r)), (atax, (A, p))):
        ex = cppcodegen.compile(fn).explain(*args)
        assert len(ex.kernels) == 1, [k.describe() for k in ex.kernels]
        assert ex.kernels[0].columns
        assert "col_" in ex.source and "part_" in ex.source


def _gomp():
    return ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")


@pytest.mark.parametrize("fn", [mvt, bicg, atax])
def test_same_bits_at_1_and_2_threads(fn):
    n = 1500                  # above the parallel threshold: the threads really run
    A = _data((n, n + 3), np.float64)
    v = [_data((n,), np.float64, s) for s in range(4)]
    w = [_data((n + 3,), np.float64, s) for s in range(4)]
    args = {mvt: None, bicg: (A, w[0], v[0]), atax: (A, w[0])}[fn]
    if fn is mvt:
        A = A[:, :n]
        args = (v[0], v[1], v[2], v[3], A)
    c = cppcodegen.compile(fn, options={"parallel_threshold": 1})
    gomp = _gomp()
    before = gomp.omp_get_max_threads()
    outs = []
    try:
        for threads in (1, 2, 1):
            gomp.omp_set_num_threads(threads)
            outs.append(run_compiled(c, *args))
    finally:
        gomp.omp_set_num_threads(before)
    bits = [b"".join(np.ascontiguousarray(o).tobytes() for o in (x if isinstance(x, tuple) else (x,)))
            for x in outs]
    assert bits[0] == bits[1] == bits[2]
    exp = fn(*args)
    for g, e in zip(outs[0] if isinstance(outs[0], tuple) else (outs[0],),
                    exp if isinstance(exp, tuple) else (exp,)):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9 * n * n)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 3), (5, 17), (67, 1025), (9, 4097)])
def test_rows_in_groups_give_the_bits_of_rows_one_at_a_time(shape, dt):
    """A @ x runs rows in groups sharing x's loads (backend/rowdot.py); every row keeps the
    generic row reduction's operations, so a grouped row, a left-over row and the row sum
    written with a broadcast (x * A).sum(1) agree bit for bit, and with float64 NumPy."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal(shape).astype(dt)
    x = rng.standard_normal(shape[1]).astype(dt)
    y = cppcodegen.compile(lambda A, x: A @ x)(A, x)
    e = cppcodegen.explain(lambda A, x: A @ x, A, x)
    assert "rows per group" in e.source
    for r in range(shape[0]):                       # each row alone: same bits
        one = cppcodegen.compile(lambda A, x: A @ x)(A[r:r + 1].copy(), x)
        assert one[0] == y[r] or (np.isnan(one[0]) and np.isnan(y[r]))
    tol = 1e-5 if dt == np.float32 else 1e-13
    np.testing.assert_allclose(y, A.astype(np.float64) @ x.astype(np.float64), rtol=tol,
                               atol=tol * np.sqrt(shape[1]))


def logistic_regression(X, y, lr, iters):
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    for _ in range(iters):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        err = p - y
        w -= lr * (X.T @ err) / n
        b -= lr * err.mean()
    return w, b


def test_gradient_descent_reads_the_transposed_matrix_by_rows():
    """X.T @ err is err @ X: a column sum down X's rows (it was 50 strided walks of X, one per
    output); the sigmoid of short rows' dot products is its own vector loop (a scalar exp per
    row cost more than the row); the 50 columns' partial sums are added on one thread."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((3000, 50))
    y = (rng.random(3000) < 0.5).astype(np.float64)
    check_against_numpy(logistic_regression, X, y, 0.1, 20, rtol=1e-10, atol=1e-12)
    ex = cppcodegen.explain(logistic_regression, X, y, 0.1, 20)
    (loop,) = [k for k in ex.kernels if k.form == "control"]
    body = [k for region in loop.regions for k in region]
    forms = {s.name: k.form for k in body for s in k.stages}
    assert "column" in forms.values()
    assert "load_strided" not in ex.source
    (sigmoid,) = [k for k in body if any(s.kind == "pointwise" and "exp" in k.name
                                         for s in k.stages)]
    assert sigmoid.form == "flat" and "Vec<double, L>" in ex.source
