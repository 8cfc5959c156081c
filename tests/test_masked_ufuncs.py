"""A ufunc called with ``where=``: the safe-divide / safe-log idiom of analytics code,
``np.divide(X, tot, out=np.zeros_like(X), where=tot != 0)`` (it was refused). The ufunc's
result is kept where the mask is True and ``out`` keeps its values elsewhere, as in NumPy;
without ``out`` NumPy leaves those elements as they happen to be (compared only where the
mask holds). Compared with NumPy, special values included."""
import numpy as np
import pytest

import cppcodegen


def shares(X):
    tot = X.sum(axis=1, keepdims=True)
    return np.divide(X, tot, out=np.zeros_like(X), where=tot != 0)


def safe_log(x):
    out = np.full_like(x, -np.inf)
    np.log(x, out=out, where=x > 0)
    return out


def into_int(a, b, out):
    np.floor_divide(a, b, out=out, where=b != 0)
    return out


def no_out(a, b):
    return np.true_divide(a, b, where=b != 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_where_keeps_out_elsewhere(dtype):
    rng = np.random.default_rng(2)
    X = np.abs(rng.standard_normal((6, 5))).astype(dtype)
    X[2] = 0
    x = np.array([2.0, 0.0, -1.0, np.nan, np.inf, 1e-30], dtype)
    with np.errstate(all="ignore"):
        for fn, args in ((shares, (X,)), (safe_log, (x,))):
            got, want = cppcodegen.compile(fn, fallback=False)(*args), fn(*args)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    a, b = np.arange(8) - 3, np.array([2, 0, -3, 1, 0, 4, 5, 0])
    got = cppcodegen.compile(into_int, fallback=False)(a, b, np.full(8, 7))
    np.testing.assert_array_equal(got, into_int(a, b, np.full(8, 7)))
    m = b != 0
    got = cppcodegen.compile(no_out, fallback=False)(a * 1.0, b * 1.0)
    with pytest.warns(UserWarning):
        want = no_out(a * 1.0, b * 1.0)
    np.testing.assert_array_equal(got[m], want[m])
