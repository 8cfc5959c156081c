"""Slices whose bounds or step are NumPy integer arguments (``x[::-step]``, ``x[:k]`` with
``k = np.int64(...)``), outside any loop: they raised DataDependentError (found by a new
user's probe; the same step in a ``range`` compiled). Bounds are the argument's value symbol
(NumPy's clamping decided and guarded); compared with NumPy over values that clamp, wrap and
reverse."""
import numpy as np
import pytest

import cppcodegen


def head_sum(x, k):
    return x[:k].sum()


def tail(x, k):
    return x[k:] * 2.0


def every(x, step):
    return x[::step].sum()


def every_reversed(x, step):
    return x[::-step].sum()


def window(x, lo, hi):
    return x[lo:hi].mean() if hi > lo else 0.0


X = np.arange(1.0, 11.0)


@pytest.mark.parametrize("fn,values", [
    (head_sum, [3, 7, 0, 10, 25, -2, -30]),
    (tail, [3, 0, 9, -4, 40]),
    (every, [1, 2, 3, 7, 11, -1, -3]),
    (every_reversed, [1, 3, 4, -2]),
])
def test_one_int_argument(fn, values):
    f = cppcodegen.compile(fn, fallback=False)
    for v in values:
        got, want = f(X, np.int64(v)), fn(X, np.int64(v))
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want)


def test_two_bounds():
    f = cppcodegen.compile(window, fallback=False)
    for lo, hi in ((2, 7), (0, 10), (5, 6), (3, 3), (8, 2)):
        np.testing.assert_allclose(f(X, np.int64(lo), np.int64(hi)),
                                   window(X, np.int64(lo), np.int64(hi)))
