"""Column-major copies of matrices that loops read down their columns (passes/column_copies.py):
the loop reads the copy with unit stride. Compared with the plain Python function at several
sizes (one build with symbolic sizes serves them), and checked that the copy is made only where
it applies (the matrix never written, read by columns only)."""
import numpy as np
import pytest

import cppcodegen


def syrk(C, A, alpha, beta):
    C = C.copy()
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]
    return C


def covariance(data):
    n, m = data.shape
    mean = np.zeros(m)
    for j in range(m):
        mean[j] = data[:, j].sum() / n
    cov = np.zeros((m, m))
    for i in range(m):
        for j in range(i, m):
            cov[i, j] = ((data[:, i] - mean[i]) * (data[:, j] - mean[j])).sum() / (n - 1)
            cov[j, i] = cov[i, j]
    return cov


def rows_and_columns(A):            # read both ways: no copy
    out = np.zeros(A.shape[1])
    for j in range(A.shape[1]):
        out[j] = A[:, j].sum() - A[j % A.shape[0], :].sum()
    return out


def column_scale_in_place(A):       # written: no copy
    for j in range(A.shape[1]):
        A[:, j] /= A[:, j].sum() + 1.0
    return A


R = np.random.default_rng(11)


def _source(fn, *args):
    text = str(cppcodegen.explain(fn, *args))
    return text[text.index("== loop IR"):text.index("== kernels")]


@pytest.mark.parametrize("n,m", [(7, 5), (40, 23), (33, 61)])
def test_syrk_and_covariance_match_python(n, m):
    f, g = cppcodegen.compile(syrk, fallback=False), cppcodegen.compile(covariance, fallback=False)
    C, A = R.random((n, n)), R.random((n, m))
    np.testing.assert_allclose(f(C, A, 1.5, 1.2), syrk(C, A, 1.5, 1.2), rtol=1e-12)
    d = R.random((m, n))
    np.testing.assert_allclose(g(d), covariance(d), rtol=1e-12, atol=1e-14)


def test_copy_made_only_where_it_applies():
    A = R.random((30, 20))
    assert "in1_t" in _source(syrk, np.ones((30, 30)), A, 1.5, 1.2)
    assert "in0_t" in _source(covariance, A)
    assert "_t:" not in _source(rows_and_columns, A)
    assert "_t:" not in _source(column_scale_in_place, A.copy())
    F = np.asfortranarray(A)
    assert "_t:" not in _source(covariance, F)      # (already column-major)


@pytest.mark.parametrize("fn", [rows_and_columns, column_scale_in_place])
def test_left_alone_still_match(fn):
    A = R.random((12, 9))
    np.testing.assert_allclose(cppcodegen.compile(fn, fallback=False)(A.copy()), fn(A.copy()),
                               rtol=1e-12)
