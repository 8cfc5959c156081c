"""A loop that updates a slab of carried arrays per iteration (``cc[:, :, k] = ...``, the
Thomas-algorithm sweeps of weather and CFD kernels) stores each slab where it is: no pass
over the whole array, no temporary copied back, as long as no element is read after it is
overwritten (reads of the element written, or of elements outside the slab, are safe; another
array's update that reads the slab is stored first). Compared with Python; the loop IR shows
the stores."""
import numpy as np
import pytest

import cppcodegen


def forward_sweep(a, b, w, dtr):
    I, J, K = a.shape
    cc = np.empty((I, J, K))
    dd = np.empty((I, J, K))
    cc[:, :, 0] = 0.5 * w[:, :, 0]
    dd[:, :, 0] = a[:, :, 0]
    for k in range(1, K):
        gav = -0.25 * (w[:, :, k] + w[:, :, k - 1])
        cc[:, :, k] = 0.25 * w[:, :, k]
        bcol = dtr - gav - cc[:, :, k]
        dd[:, :, k] = dtr * a[:, :, k] + b[:, :, k]
        inv = 1.0 / (bcol - cc[:, :, k - 1] * gav)
        cc[:, :, k] = cc[:, :, k] * inv
        dd[:, :, k] = (dd[:, :, k] - dd[:, :, k - 1] * gav) * inv
    return cc, dd


def reads_the_new_value(x, y):
    for k in range(x.shape[1]):
        x[:, k] = y[:, k] + 1
        y[:, k] = x[:, k] * 2           # x's new column
    return x, y


def reads_the_old_neighbour(x, y):
    for k in range(1, x.shape[1]):
        x[:, k] = y[:, k - 1] + x[:, k - 1]
        y[:, k] = x[:, k - 1] * 2 - y[:, k]
    return x, y


def reversed_in_the_slab(x):
    for k in range(x.shape[1]):
        x[:, k] = x[:, k] + x[::-1, k]  # reads elements of the slab it overwrites
    return x


R = np.random.default_rng(5)
CASES = [
    (forward_sweep, lambda: (R.random((6, 5, 9)), R.random((6, 5, 9)), R.random((6, 5, 9)), 0.3)),
    (reads_the_new_value, lambda: (R.random((7, 6)), R.random((7, 6)))),
    (reads_the_old_neighbour, lambda: (R.random((7, 6)), R.random((7, 6)))),
    (reversed_in_the_slab, lambda: (R.random((7, 6)),)),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[f.__name__ for f, _ in CASES])
def test_like_python(fn, make):
    args = make()
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got, want = cppcodegen.compile(fn)(*mine), fn(*theirs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-14)
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m, t)


def test_the_sweep_stores_slabs_in_place():
    args = CASES[0][1]()
    text = str(cppcodegen.compile(forward_sweep).explain(*args))
    ir = text[text.index("== loop IR =="):text.index("== kernels")]
    body = ir[ir.index("for lv0"):].split("\n")[1:]
    body = [line for line in body if line.startswith("    ")]
    assert body and all("[i0, i1, lv0] over [6, 5, 1]" in line for line in body), "\n".join(body)


def _seidel_2d(tsteps, A):
    n = A.shape[0]
    for t in range(tsteps - 1):
        for i in range(1, n - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:]
                           + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, n - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def _row_reads_its_right_neighbours(A0, steps):
    A = A0.copy()
    for t in range(steps):
        for i in range(1, A.shape[0] - 1):
            A[i, 1:-1] += 0.25 * (A[i - 1, 1:-1] + A[i, 2:] + A[i, :-2])
    return A


def test_a_row_update_that_reads_its_own_row_is_stored_in_place():
    """``A[i, 1:-1] += f(A[i, 2:], ...)`` in a loop over rows: the value first, in a buffer
    of a row, then stored where the row is (npbench's seidel_2d copied the whole array for
    every row: 5.6 ms against numba's 1.0 at 120x120; now a row per row)."""
    rng = np.random.default_rng(3)
    A0 = rng.random((40, 40))
    mine, theirs = A0.copy(), A0.copy()
    cppcodegen.compile(_seidel_2d, fallback=False)(5, mine)
    _seidel_2d(5, theirs)
    np.testing.assert_allclose(mine, theirs, rtol=1e-13)
    B = rng.random((30, 20))
    np.testing.assert_allclose(
        cppcodegen.compile(_row_reads_its_right_neighbours, fallback=False)(B, 3),
        _row_reads_its_right_neighbours(B, 3), rtol=1e-13)
    text = cppcodegen.explain(_seidel_2d, 5, A0.copy()).source
    assert "pointwise over [38 - lv" not in text and "pointwise over [39 - lv" not in text
