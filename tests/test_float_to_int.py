"""Floats made ints as Python and NumPy make them: ``int(v)`` of a NaN raises ValueError and
of an infinity OverflowError (they returned int64's minimum), ``int(1e300)`` is Python's big
int (the call runs as Python); a float scalar stored into a signed int array (``q[i] =
a[i] // b[i]`` with a zero in b) raises as NumPy's setitem does, as does a wider int out of
the array's range (found by a new user's probe). Compared with the plain function."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen


def int_total(x):
    c = 0
    for v in x:
        c += int(v)
    return c


def quotients(a, b):
    q = np.zeros(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
    return q


def narrow_store(x):
    out = np.zeros(x.shape[0], dtype=np.int32)
    for i in range(x.shape[0]):
        out[i] = x[i] * 2
    return out


def fill_row(a, v):
    q = np.zeros((2, 3), dtype=np.int64)
    q[1, :] = v * 2.0
    return q + a.shape[0]


def _outcome(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    except Exception as e:      # noqa: BLE001 -- compared below
        return e


@pytest.mark.parametrize("fn,arg_sets", [
    (int_total, [(np.array([1.5, -2.7, 3.0]),), (np.array([1.5, np.nan]),),
                 (np.array([np.inf]),), (np.array([-np.inf, 1.0]),), (np.array([1e300, 2.0]),),
                 (np.array([-9.3e18]),)]),
    (quotients, [(np.array([7.5, 3.0]), np.array([2.0, 1.0])),
                 (np.array([7.5, 3.0]), np.array([2.0, 0.0])),
                 (np.array([np.nan, 3.0]), np.array([2.0, 1.0])),
                 (np.array([1e30, 3.0]), np.array([1.0, 1.0]))]),
    (narrow_store, [(np.array([1, 2, 3]),), (np.array([1, 2 ** 40]),),
                    (np.array([-(2 ** 31) // 2, 7]),), (np.array([-(2 ** 31) // 2 - 1]),)]),
    (fill_row, [(np.ones(3), 1.25), (np.ones(3), float("nan")), (np.ones(3), -float("inf"))]),
])
def test_floats_become_ints_as_python_makes_them(fn, arg_sets):
    compiled = cppcodegen.compile(fn, fallback=False)
    for args in arg_sets:
        want, got = _outcome(fn, *args), _outcome(compiled, *args)
        if isinstance(want, Exception):
            assert type(got) is type(want), (fn.__name__, args, want, got)
            continue
        assert not isinstance(got, Exception), (fn.__name__, args, got)
        assert type(got) is type(want)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype
