"""List comprehensions written out as loops that append (frontend/comprehensions.py):
compiled loops where that pays (an autocorrelation over 50 lags was 50 kernels and 5.7 s to
build), a filter on array values counted (was refused), a few known items still unrolled
so their expressions fuse. Compared with the plain function."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy


def autocorr(x, maxlag):
    n = x.shape[0]
    xm = x - x.mean()
    return np.array([np.dot(xm[:n - k], xm[k:]) for k in range(maxlag)]) / np.dot(xm, xm)


def zero_indegree(indeg):
    start = [i for i in range(indeg.shape[0]) if indeg[i] == 0]
    return np.array(start)


def phases(x):
    return np.stack([x[i::3] * 2 for i in range(3)])


def enumerated(x):
    k = 5
    out = [x[k] * v for k, v in enumerate(x[:4])]
    return np.array(out), k          # (the comprehension's k is its own: 5 after it)


def nested(a):
    return np.array([[a[i, j] * 2 for j in range(3)] for i in range(2)])


def row_sums(a):
    s = 0.0
    for r in range(a.shape[0]):
        s += sum([a[r, c] * c for c in range(a.shape[1])])
    return s


def reads_its_name(x):
    y = x[:3]
    y = [v * 2 for v in y]
    return np.array(y)


def two_filters(x, lo, hi):
    big = [v for v in x if v > hi]
    mid = [i for i in range(x.shape[0]) if lo < x[i] <= hi]
    return np.array(big), np.array(mid)


R = np.random.default_rng(12)


@pytest.mark.parametrize("fn, args", [
    (autocorr, (R.standard_normal(500), 20)),
    (zero_indegree, (R.integers(0, 3, 40),)),
    (phases, (R.standard_normal(30),)),
    (enumerated, (R.standard_normal(10),)),
    (nested, (R.standard_normal((4, 5)),)),
    (row_sums, (R.standard_normal((6, 5)),)),
    (reads_its_name, (R.standard_normal(8),)),
    (two_filters, (R.standard_normal(60), -0.5, 0.5)),
])
def test_comprehensions(fn, args):
    """(A dot product of a length the loop decides adds in another order than NumPy's BLAS
    ``dot``: within a few ULP of the sum of the magnitudes.)"""
    check_against_numpy(fn, *args, **({"rtol": 1e-12, "atol": 1e-15} if fn is autocorr else {}))


def test_a_comprehension_over_many_lags_is_one_loop():
    x = R.standard_normal(500)
    ex = cppcodegen.explain(autocorr, x, 40)
    assert "for lv" in str(ex.program), ex.program
    assert ex.num_kernels < 12, ex.num_kernels
