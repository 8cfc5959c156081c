"""np.average, np.cov and np.corrcoef compile to NumPy's own steps (frontend/statistics.py):
no NumPy call between kernels, results within a dot product's rounding of NumPy's (the
covariance product sums in our order, not BLAS's), NumPy's dtypes, shapes and errors
(weights summing to zero raise ZeroDivisionError when the compiled call runs)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.ir.loopir import nested
from helpers import assert_compiled_raises, check_against_numpy

RNG = np.random.default_rng(5)
M = RNG.standard_normal((5, 40))
M3 = RNG.standard_normal((3, 4, 6))
W40 = RNG.uniform(0.1, 2.0, 40)
W5 = RNG.uniform(0.1, 2.0, 5)
I = RNG.integers(-9, 9, (6, 30))
Z = (RNG.standard_normal((4, 25)) + 1j * RNG.standard_normal((4, 25)))
TOL = dict(rtol=1e-12, atol=1e-13)
F32_SUM = dict(rtol=1e-5, atol=1e-6)    # 40 float32 products summed in another order


def _native(fn, *args):
    kernels = nested(cppcodegen.explain(cppcodegen.compile(fn), *args).kernels)
    assert not [k.name for k in kernels if k.form == "extern"]


def avg_plain(x):
    return np.average(x), np.average(x, axis=1), np.average(x, axis=0, keepdims=True)


def avg_returned(x):
    a, n = np.average(x, axis=1, returned=True)
    b, m = np.average(x, returned=True)
    return a, n, b, m


def avg_weighted_rows(x, w):
    return np.average(x, axis=0, weights=w)


def avg_weighted_cols(x, w):
    return np.average(x, axis=1, weights=w) * 2.0 + 1.0


def avg_weighted_full(x):
    return np.average(x, weights=np.abs(x) + 1.0)


def avg_weighted_axes(x, w):
    return np.average(x, axis=(0, 2), weights=w, returned=True)


def avg_weighted_ints(x, w):
    return np.average(x, axis=1, weights=w)


def avg_weighted_f32(x, w):
    return np.average(x.astype(np.float32), axis=1, weights=w.astype(np.float32))


def avg_weighted_keep(x, w):
    return np.average(x, axis=1, weights=w, keepdims=True, returned=True)


def cov_rows(x):
    return np.cov(x)


def cov_cols(x):
    return np.cov(x.T, rowvar=False), np.cov(x, bias=True), np.cov(x, ddof=3)


def cov_vector(x):
    return np.cov(x[0]), np.cov(x[0], x[1])


def cov_pair(x, y):
    return np.cov(x, y)


def cov_dtype(x):
    return np.cov(x, dtype=np.float32)


def corr_rows(x):
    return np.corrcoef(x), np.corrcoef(x.T, rowvar=False)


def corr_pair(x):
    return np.corrcoef(x[0], x[1])[0, 1], np.corrcoef(x[0])


def corr_constant(x):
    y = x.copy()
    y[1] = 3.0
    return np.corrcoef(y)


CASES = [
    (avg_plain, (M,)), (avg_plain, (I,)), (avg_returned, (M,)), (avg_returned, (I,)),
    (avg_weighted_rows, (M, W5)), (avg_weighted_cols, (M, W40)), (avg_weighted_full, (M,)),
    (avg_weighted_axes, (M3, RNG.uniform(0.5, 1, (3, 6)))), (avg_weighted_ints, (I, I[0] ** 2 + 1)),
    (avg_weighted_f32, (M, W40)), (avg_weighted_keep, (M, W40)),
    (cov_rows, (M,)), (cov_rows, (I,)), (cov_rows, (Z,)), (cov_cols, (M,)), (cov_vector, (M,)),
    (cov_pair, (M[:2], M[2:])), (corr_rows, (M,)), (corr_rows, (I,)), (corr_pair, (M,)),
    (corr_constant, (M,)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_statistics_match_numpy(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # corrcoef of a constant row
        check_against_numpy(fn, *args, **(F32_SUM if fn is avg_weighted_f32 else TOL))
    _native(fn, *args)


def test_float32_covariance_within_float32_rounding():
    check_against_numpy(cov_dtype, M, rtol=2e-6, atol=2e-6)


def test_weights_summing_to_zero_raise_numpy_error_when_the_call_runs():
    w = np.ones(40)
    f = cppcodegen.compile(avg_weighted_cols)
    np.testing.assert_allclose(f(M, w), avg_weighted_cols(M, w), rtol=1e-13)
    w[::2] = -1.0            # sums to zero: the same compiled code raises
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        f(M, w)
    assert_compiled_raises(avg_weighted_rows, (M, W40), ["shape of weights"], (ValueError,))


def cov_steps(x, steps):
    total = 0.0
    for k in range(steps):
        total += np.cov(x * (k + 1.0))[0, 1] + np.average(x[k], weights=x[k] ** 2)
    return total


def test_in_a_loop_with_a_run_time_trip_count():
    f = cppcodegen.compile(cov_steps)
    for steps in (1, 4):
        np.testing.assert_allclose(f(M, steps), cov_steps(M, steps), rtol=1e-12)
    assert "for" in str(cppcodegen.explain(f, M, 3))


def test_degrees_of_freedom_warning_as_numpy():
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = cppcodegen.compile(cov_vector)(M[:, :1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = cov_vector(M[:, :1])
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_symbolic_sizes():
    f = cppcodegen.compile(corr_rows, dynamic=True)
    for n in (12, 30):
        x = RNG.standard_normal((4, n))
        for g, e in zip(f(x), corr_rows(x)):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-13)


def average_if_weighted(x, w):
    return np.average(x, weights=w) if w.sum() != 0 else -1.0


def test_checks_hold_only_where_their_side_of_a_conditional_is_taken():
    """Weights summing to zero on the side not taken (``x if c else y``) raise nothing, as
    in Python (the check stage counts only where its side is taken, like a gather's)."""
    x = np.arange(4.0)
    f = cppcodegen.compile(average_if_weighted)
    assert f(x, np.array([1.0, -1.0, 1.0, -1.0])) == -1.0
    np.testing.assert_allclose(f(x, np.array([1.0, 2.0, 3.0, 4.0])),
                               average_if_weighted(x, np.array([1.0, 2.0, 3.0, 4.0])), rtol=1e-15)
