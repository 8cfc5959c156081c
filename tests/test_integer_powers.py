"""Powers whose NumPy/Python result is an error or another type than the compiled one would
compute: an integer loop with a negative exponent raises NumPy's ValueError (where an element
meets it; an empty result raises nothing); a negative Python float to a fractional power is
a complex number in Python (the call runs again as Python)."""
import warnings

import numpy as np
import pytest

import cppcodegen


def recip(a):
    return a ** -1


def power(a, k):
    return a ** k


def two_to(a):
    return 2 ** a


def powers(a, b):
    return np.power(a, b)


def scalar_loop(v):
    s = 0.0
    for i in range(len(v)):
        s += v[i] ** -2
    return s


def branch(a):
    if a.sum() > 100:
        return a ** -1
    return a ** 1


def root(x, e):
    return float(x[0]) ** e


def loop_of_powers(x, e):
    s = 0.0
    for i in range(len(x)):
        s += abs(float(x[i]) ** e)
    return s


CASES = [
    (recip, (np.array([1, 2, 4]),)), (recip, (np.array([], dtype=np.int64),)),
    (recip, (np.array([True]),)), (recip, (np.array([1, 2], np.int8),)),
    (power, (np.array([1, 2]), -1)), (power, (np.array([1, 2]), 3)),
    (power, (np.array([3, 2], np.uint64), np.int64(-1))),       # a float64 loop: no error
    (two_to, (np.array([1, -2]),)), (two_to, (np.array([1, 2]),)),
    (powers, (np.array([1, 2, 3]), np.array([1, -1, 2]))),
    (powers, (np.array([1, 2, 3]), np.array([1, 1, 2]))),
    (powers, (np.arange(6).reshape(2, 3), np.array([0, 1, -1])[:, None][:1])),
    (scalar_loop, (np.array([1, 2]),)), (scalar_loop, (np.array([], dtype=np.int64),)),
    (branch, (np.arange(5),)), (branch, (np.arange(50),)),
    (root, (np.array([-4.0]), 0.5)), (root, (np.array([4.0]), 0.5)),
    (root, (np.array([-8.0]), 1 / 3)), (root, (np.array([-8.0]), 2.0)),
    (root, (np.array([-np.inf]), 0.5)), (root, (np.array([-2.0]), np.inf)),
    (loop_of_powers, (np.array([-1.5, 2.0]), 2.0)),
    (loop_of_powers, (np.array([1.5, -2.0]), 0.5)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_like_python(fn, args):
    try:
        want = fn(*args)
    except ValueError as e:
        with pytest.raises(ValueError, match="negative integer powers are not allowed"):
            cppcodegen.compile(fn)(*args)
        assert "negative integer powers" in str(e)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(fn, options={"fallback": True})(*args)
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)
