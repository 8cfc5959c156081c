"""round(x, ndigits) of a Python float is Python's (the exact decimal value rounded half to
even, a Python float; OverflowError past the doubles), of a NumPy scalar NumPy's
(multiply, rint, divide: a NumPy scalar), as each computes it."""
import math

import numpy as np
import pytest

import cppcodegen

rng = np.random.default_rng(5)
VALUES = np.concatenate([[-2.675, 2.675, 1.005, 0.125, 0.375, 2.5, -0.5, 123.456, 5e15 + 1,
                          2.0 ** 53 + 2, 1e300, 5e-324, 0.0, -0.0, np.nan, np.inf, -np.inf],
                         rng.uniform(-1000, 1000, 200).round(3),
                         rng.uniform(-1e17, 1e17, 50), rng.integers(-8000, 8000, 50) / 8])


def rounded(x, n):
    out = np.empty(len(x))
    for i in range(len(x)):
        out[i] = round(float(x[i]), n)
    return out


def first(x, n):
    return round(float(x[0]), n)


def numpy_scalar(x):
    return round(x[0], 2)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 17, 25, -1, -2, -16, -30])
def test_elements_like_python(n):
    got, want = cppcodegen.compile(rounded)(VALUES, n), rounded(VALUES, n)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_result_is_a_python_float():
    got = cppcodegen.compile(first)(np.array([2.675]), 2)
    assert type(got) is float and got == 2.67


def test_numpy_scalar_keeps_numpys_round():
    x = np.array([2.675])
    got = cppcodegen.compile(numpy_scalar)(x)
    assert type(got) is np.float64 and got == numpy_scalar(x) == 2.68


def test_overflow_like_python():
    x = np.array([1.7976931348623157e308])
    with pytest.raises(OverflowError, match="rounded value too large"):
        first(x, -307)
    with pytest.raises(OverflowError, match="rounded value too large"):
        cppcodegen.compile(first)(x, -307)


def test_reference_interpreter_agrees():
    report = cppcodegen.check(rounded, VALUES[:40], 2)
    assert report.ok and report.buffers
    assert math.isnan(cppcodegen.compile(first)(np.array([np.nan]), 2))
