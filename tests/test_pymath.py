"""Python's ``math`` functions on traced values inside compiled functions (frontend/pymath.py).

Each program is run plain (Python's ``math`` on floats) and compiled (NumPy's ufuncs on
float64 values); results must agree to a few ULP of float64 (libm in both)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy

R = np.random.default_rng(7)
X = R.uniform(0.5, 3.0, 50)


def loop_sqrt_exp_log(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sqrt(x[i]) + math.exp(-x[i]) - math.log(x[i]) + math.log(x[i], 2.0)
    return s


def loop_trig(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = math.atan2(math.sin(x[i]), math.cos(x[i])) + math.hypot(x[i], 1.0) \
            + math.tanh(x[i]) + math.fabs(math.cos(3.0 * x[i]))
    return out


def loop_floor_index(x, table):
    s = 0.0
    for i in range(x.shape[0]):
        k = math.floor(x[i])            # a Python int: indexes the table
        s += table[k]
    return s


def cholesky_row_update(A):
    n = A.shape[0]
    for i in range(n):
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = math.sqrt(A[i, i])
    return A


def isnan_branch(x):
    count = 0
    for i in range(x.shape[0]):
        if math.isnan(x[i]) or math.isinf(x[i]):
            count += 1
    return count


def constant_math(x):
    return x * math.sqrt(2.0) + math.pi + math.floor(2.7)


def loop_index_math(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * math.sqrt(i) + math.exp(-0.1 * i)
    return out


def loop_erf_gamma(s, k, t, v):
    """Black-Scholes terms one option at a time (math.erf, erfc), and math.gamma/lgamma."""
    out = np.empty_like(s)
    for i in range(s.shape[0]):
        d1 = (math.log(s[i] / k[i]) + 0.5 * v * v * t[i]) / (v * math.sqrt(t[i]))
        d2 = d1 - v * math.sqrt(t[i])
        out[i] = s[i] * 0.5 * (1 + math.erf(d1 / math.sqrt(2))) \
            + k[i] * 0.5 * math.erfc(-d2 / math.sqrt(2)) \
            + 1e-3 * (math.gamma(t[i] + 1.0) + math.lgamma(s[i]))
    return out


@pytest.mark.parametrize("fn, args", [
    (loop_erf_gamma, (X * 30, X[::-1] * 30, X / 2, 0.3)),
    (loop_sqrt_exp_log, (X,)),
    (loop_trig, (X,)),
    (loop_floor_index, (X, np.arange(4.0) * 1.5)),
    (cholesky_row_update, (np.eye(6) * 4 + 0.1,)),
    (isnan_branch, (np.array([1.0, np.nan, 2.0, np.inf, -np.inf, 0.0]),)),
    (constant_math, (X,)),
    (loop_index_math, (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_math_on_traced_values(fn, args):
    check_against_numpy(fn, *args, writes=(0,) if fn is cholesky_row_update else (), ulp=8)


def test_math_stays_itself_outside_traces():
    """The replacement is installed only while a trace runs, and only for the user's calls."""
    cf = cppcodegen.compile(loop_sqrt_exp_log)
    cf(X)
    assert math.sqrt.__module__ == "math" and math.sqrt(4.0) == 2.0
    with pytest.raises(ValueError):
        math.sqrt(-1.0)
