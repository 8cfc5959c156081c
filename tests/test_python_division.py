"""Division of Python numbers by zero raises ZeroDivisionError as Python does, where NumPy's
scalars give inf/nan (``1.0 / count`` after a loop that counted nothing returned inf: found by
a new user's probe); a Python int to a negative Python int power is a float as in Python (it
was an int: ``c ** -1`` of 2 returned 0). A NumPy scalar operand keeps NumPy's rule.
Compared with the plain function, with the fallback off."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen


def _count(x, t):
    c = 0
    for v in x:
        if v > t:
            c += 1
    return c


def mean_of_count(x, t):
    c = _count(x, t)
    return 1.0 / c


def floor_ratio(x, t):
    c = _count(x, t)
    return len(x) // c, len(x) % c


def divmod_count(x, t):
    q, r = divmod(len(x), _count(x, t))
    return q + r


def float_total(x, t):
    m = 0.0
    for v in x:
        if v > t:
            m += 1.5
    return 3.0 / m, m ** -2, 2 ** m


def int_powers(x, t):
    c = _count(x, t)
    return c ** -1, 2 ** (c - 2), c ** (c - 3)


def argument_divisor(x, k):
    return 10 / (len(x) - k)


def numpy_scalar_divisor(x, t):
    s = 0.0
    for i in range(len(x)):
        s += 1.0 / (x[i] - t)             # x[i] - t is a NumPy scalar: inf, no raise
    return s, x.sum() / (_count(x, t) * 1.0 + x.sum() * 0)


X = np.array([1.0, 1.5, 0.2])


def _outcome(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args)
    except Exception as e:      # noqa: BLE001 -- compared below
        return e


@pytest.mark.parametrize("fn,values", [
    (mean_of_count, [0.5, 0.1, 2.0]),
    (floor_ratio, [0.5, 2.0, 0.1]),
    (divmod_count, [0.5, 2.0]),
    (float_total, [0.5, 2.0]),
    (int_powers, [0.1, 0.5, 1.2, 5.0]),
    (argument_divisor, [1, 3, 5]),
    (numpy_scalar_divisor, [0.5, 1.0, 2.0]),
])
def test_division_of_python_numbers_is_pythons(fn, values):
    compiled = cppcodegen.compile(fn, fallback=False)
    for t in values:
        want, got = _outcome(fn, X, t), _outcome(compiled, X, t)
        if isinstance(want, Exception):
            assert type(got) is type(want), (fn.__name__, t, want, got)
            continue
        assert not isinstance(got, Exception), (fn.__name__, t, got)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got, strict=True):
            assert type(g) is type(w), (fn.__name__, t, w, g)
            np.testing.assert_allclose(g, w, rtol=1e-12)


def test_zero_division_names_the_line():
    compiled = cppcodegen.compile(mean_of_count, fallback=False)
    compiled(X, 0.5)
    with pytest.raises(ZeroDivisionError, match=r"test_python_division\.py:\d+"):
        compiled(X, 9.0)


def test_a_negative_int_power_in_a_call_that_writes_an_argument_is_an_error():
    def scale_by_power(x, t):
        c = _count(x, t)
        x *= 2 ** (c - 2)
        return x

    compiled = cppcodegen.compile(scale_by_power, fallback=False)
    np.testing.assert_array_equal(compiled(X.copy(), 0.1), X * 2)
    with pytest.raises(ValueError, match="negative Python int"):
        compiled(X.copy(), 5.0)
