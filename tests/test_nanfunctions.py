"""np.nansum, np.nanprod, np.nanmean, np.nanmax, np.nanmin, np.nanargmax, np.nanargmin compile
as NumPy writes them (NaN replaced by the identity, then the plain reduction:
frontend/nanfunctions.py), equal to NumPy's (sums within a sum's rounding), all-NaN slices NaN
(ValueError for the arg forms), with no NumPy call."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.ir.loopir import nested
from helpers import check_against_numpy

RNG = np.random.default_rng(3)


def _data(dtype):
    x = RNG.standard_normal((13, 9)).astype(dtype)
    if x.dtype.kind == "f":
        x[RNG.random(x.shape) < 0.2] = np.nan
        x[4] = np.nan                   # an all-NaN row
    return x


def sums(x):
    return np.nansum(x), np.nansum(x, axis=0), np.nanprod(x, axis=1, keepdims=True)


def means(x):
    return np.nanmean(x), np.nanmean(x, axis=1), np.nanmean(x, axis=0, keepdims=True)


def extremes(x):
    return np.nanmax(x), np.nanmin(x, axis=1), np.nanmax(x, axis=0, keepdims=True)


def anomaly(x):
    """A typical use: deviations from the NaN-ignoring column means, NaN left in place."""
    return (x - np.nanmean(x, axis=0)) / (np.nanmax(x, axis=0) - np.nanmin(x, axis=0))


@pytest.mark.parametrize("fn", [sums, means, extremes, anomaly])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_nan_reductions_match_numpy(fn, dtype):
    x = _data(dtype) if not (fn is anomaly and dtype == "int64") else _data("float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy's all-NaN warnings
        check_against_numpy(fn, x, rtol=1e-5 if dtype == "float32" else 1e-12)
    kernels = nested(cppcodegen.explain(cppcodegen.compile(fn), x).kernels)
    assert not [k.name for k in kernels if k.form == "extern"]


def whole_extremes(x):
    return np.nanmax(x), np.nanmin(x)


def test_nan_extremes_of_everything_are_numpy_scalars():
    x = np.linspace(0.0, 1.0, 17)
    x[3] = np.nan
    got = cppcodegen.compile(whole_extremes)(x)
    want = whole_extremes(x)
    assert [type(g) for g in got] == [type(w) for w in want] and got == want


def nan_positions(x):
    return np.nanargmax(x), np.nanargmin(x, axis=0), np.nanargmax(x, axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_nanargmax_and_nanargmin_match_numpy(dtype):
    x = RNG.standard_normal((11, 7)).astype(dtype)
    if x.dtype.kind == "f":
        x[RNG.random(x.shape) < 0.3] = np.nan
        x[0, 0], x[1, 1] = -np.inf, np.nan      # (NaN before -inf: NumPy's index, the NaN's)
    want = nan_positions(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no NumPy call between kernels
        got = cppcodegen.compile(nan_positions, options={"fallback": False})(x)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("x", [np.full(4, np.nan), np.array([[1.0, np.nan], [np.nan, np.nan]])])
def test_nanargmax_of_an_all_nan_slice_raises_numpys_error(x):
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        np.nanargmax(x, axis=-1)
    f = cppcodegen.compile(lambda a: np.nanargmax(a, axis=-1), options={"fallback": False})
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        f(x)
