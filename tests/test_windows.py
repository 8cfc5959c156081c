"""``np.lib.stride_tricks.sliding_window_view`` (frontend/windows.py): NumPy's windows, read
as a gather along each windowed axis, so a reduction over them is one loop over the array;
NumPy's errors; the result read-only, as NumPy's."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy

from numpy.lib.stride_tricks import sliding_window_view as windows

R = np.random.default_rng(11)


def rolling_std(x, w):
    return windows(x, w).std(axis=-1)


def moving_average(x):
    return windows(x, 4).mean(axis=-1)


def max_filter(a):
    return windows(a, (3, 3)).max(axis=(-2, -1))


def column_windows(a):
    return windows(a, 3, axis=0).sum(axis=-1)


def swapped_axes(a):
    return windows(a, (2, 3), axis=(1, 0))      # NumPy's element order: windows after the axes


def int_windows(a):
    return windows(a, 5, axis=-1).min(axis=-1), windows(a, 2, axis=0) * 2


def loop_of_windows(x, ws):
    out = np.zeros(ws.shape[0])
    for k in range(ws.shape[0]):
        out[k] = windows(x, 3).sum(axis=-1).max() * ws[k]
    return out


def written(x):
    v = windows(x, 3)
    v[0, 0] = 1.0
    return v


def too_long(x):
    return windows(x, 8).sum()


X = R.standard_normal(50)
A = R.standard_normal((7, 9))
CASES = [
    (rolling_std, (X, 5)), (rolling_std, (X, 50)), (rolling_std, (X, 1)),
    (moving_average, (X,)), (moving_average, (X[:4],)),           # a single window
    (moving_average, (X[::3],)),                                   # a strided argument
    (max_filter, (A,)), (column_windows, (A,)), (swapped_axes, (A,)),
    (int_windows, (R.integers(-50, 50, (6, 11)).astype(np.int16),)),
    (loop_of_windows, (X, np.array([1.0, -2.0, 0.5]))),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_windows_match_numpy(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)     # no NumPy step, no plain-Python run
        check_against_numpy(fn, *args, rtol=1e-12, atol=1e-12)


def test_a_reduction_of_windows_is_one_kernel_without_numpy_steps():
    x = R.standard_normal(1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)         # no NumPy call between kernels
        ex = cppcodegen.explain(rolling_std, x, 25)
        got = cppcodegen.compile(rolling_std)(x, 25)
    np.testing.assert_allclose(got, rolling_std(x, 25), rtol=1e-12, atol=1e-12)
    assert ex.num_kernels <= 2, [k.describe() for k in ex.kernels]
    assert "976, 25" not in str(ex).split("== C++ ==")[0].split("== kernels")[1], \
        "the windows were materialized"


def test_one_dynamic_build_serves_other_lengths():
    cf = cppcodegen.compile(moving_average, dynamic=True)
    for n in (4, 9, 100):
        x = R.standard_normal(n)
        np.testing.assert_allclose(cf(x), moving_average(x), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="window shape cannot be larger"):
        cf(R.standard_normal(3))


@pytest.mark.parametrize("fn, message", [
    (written, "assignment destination is read-only"),
    (too_long, "window shape cannot be larger than input array shape"),
])
def test_numpy_errors(fn, message):
    x = R.standard_normal(6)
    with pytest.raises(ValueError, match=message):
        fn(x.copy())
    with pytest.raises(ValueError, match=message) as info:
        cppcodegen.compile(fn)(x.copy())
    assert "test_windows.py" in str(info.value)


def test_windows_that_write_are_refused_by_name():
    def f(x):
        return windows(x, 2, writeable=True).sum()
    with pytest.raises(cppcodegen.UnsupportedError, match="writeable=True"):
        cppcodegen.compile(f, fallback=False)(X.copy())
