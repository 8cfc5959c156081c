"""np.sort and np.median along a short axis compile to a sorting network (frontend/sorting.py):
NumPy's values (NaN last, the median NaN where a slice has one, integers' medians float64),
fused into one loop, with no NumPy call between kernels."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from cppcodegen.ir.loopir import nested
from helpers import check_against_numpy

RNG = np.random.default_rng(12)


def _native(fn, *args):
    kernels = nested(cppcodegen.explain(cppcodegen.compile(fn), *args).kernels)
    assert not [k.name for k in kernels if k.form == "extern"]


def median3(x):
    st = np.stack([x[:-2], x[1:-1], x[2:]])
    out = x.copy()
    out[1:-1] = np.sort(st, axis=0)[1]
    return out


def median_filter_3x3(img):
    h, w = img.shape
    shifted = [img[i:h - 2 + i, j:w - 2 + j] for i in range(3) for j in range(3)]
    return np.median(np.stack(shifted), axis=0)


def sorts(m):
    return np.sort(m, axis=0), np.sort(m), np.sort(m[:, :5], axis=1), np.median(m, axis=0)


def even_median(m):
    return np.median(m[:4], axis=0), np.median(m[0, :6])


def _with_nans(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    if x.dtype.kind == "f":
        x[RNG.random(shape) < 0.1] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
def test_short_axis_sorts_and_medians_match_numpy(dtype):
    x = _with_nans(40, dtype) if dtype[0] == "f" else RNG.integers(0, 200, 40).astype(dtype)
    m = _with_nans((5, 7), dtype) if dtype[0] == "f" else RNG.integers(0, 200, (5, 7)).astype(dtype)
    img = _with_nans((20, 17), dtype) if dtype[0] == "f" else \
        RNG.integers(0, 200, (20, 17)).astype(dtype)
    for fn, args in ((median3, (x,)), (median_filter_3x3, (img,)), (sorts, (m,)),
                     (even_median, (m,))):
        check_against_numpy(fn, *args, ulp=0)
        _native(fn, *args)


def long_sort(x):
    return np.sort(x)


def test_a_long_axis_is_numpys_sort():
    x = RNG.standard_normal(100)
    check_against_numpy(long_sort, x, ulp=0)
    kernels = nested(cppcodegen.explain(cppcodegen.compile(long_sort), x).kernels)
    assert [k.form for k in kernels] == ["extern"]


def whole_array(m):
    return np.sort(m, axis=None), np.median(m), np.sort(m[:2, :3], axis=None), np.median(m[:3, :3])


def test_axis_none_sorts_the_flattened_array():
    m = RNG.standard_normal((7, 9))
    check_against_numpy(whole_array, m, ulp=0)
