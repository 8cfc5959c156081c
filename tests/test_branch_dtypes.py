"""An array whose dtype depends on which side of a branch on values ran (``img = img / 257.0``
under ``if img.max() > 255``) cannot be one compiled dtype: a clear error naming the variable
and the branch's line (with the fallback on, the call runs as Python and gives Python's
dtype); arrays of one dtype on both sides, and scalars, compile."""
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import TraceError


def to_8bit(img):
    if img.max() > 255:
        img = img / 257.0
    return img


def threshold(x):
    if x.sum() > 3:
        w = x > 1
    else:
        w = x
    return w


def same_dtype(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y


@pytest.mark.parametrize("fn, name", [(to_8bit, "img"), (threshold, "w")])
def test_refused_with_the_variable_and_line(fn, name):
    x = np.array([0, 200, 300], np.uint16) if fn is to_8bit else np.array([1.0, 2.0])
    with pytest.raises(TraceError, match=rf"'{name}' is an array of .* branch at .*"
                                         r"test_branch_dtypes.py:\d+"):
        cppcodegen.compile(fn, options={"fallback": False})(x)


@pytest.mark.parametrize("x", [np.array([0, 200, 255], np.uint16),
                               np.array([0, 200, 300], np.uint16)])
def test_fallback_gives_pythons_dtype(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(to_8bit, options={"fallback": True})(x)
    want = to_8bit(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x", [np.arange(3.0), -np.arange(3.0)])
def test_one_dtype_compiles(x):
    got = cppcodegen.compile(same_dtype)(x)
    np.testing.assert_array_equal(got, same_dtype(x))
