"""np.array_equal compiles (a label-propagation loop stops on it): a Python bool, False for
other shapes, NaN equal to NaN only with equal_nan, as NumPy."""
import numpy as np
import pytest

import cppcodegen


def equal(a, b):
    return np.array_equal(a, b)


def equal_nan(a, b):
    return np.array_equal(a, b, equal_nan=True)


def propagate(lab, eu, ev):
    it = 0
    while True:
        new = lab.copy()
        for e in range(len(eu)):
            u, v = eu[e], ev[e]
            m = min(new[u], new[v])
            new[u] = m
            new[v] = m
        it += 1
        if np.array_equal(new, lab):
            break
        lab = new
    return lab, it


X = np.array([1.0, np.nan, 3.0])


@pytest.mark.parametrize("fn, a, b", [
    (equal, X, X), (equal_nan, X, X), (equal, X, X[:2]), (equal, X, X.reshape(3, 1)),
    (equal, np.arange(3), np.arange(3.0)), (equal, np.arange(3), np.array([0, 1, 3])),
    (equal, np.zeros(0), np.zeros(0))])
def test_like_numpy(fn, a, b):
    got, want = cppcodegen.compile(fn, options={"fallback": False})(a, b), fn(a, b)
    assert type(got) is type(want) is bool and got == want


def test_a_loop_that_stops_on_it():
    args = (np.arange(6), np.array([0, 1, 3, 4]), np.array([1, 2, 4, 5]))
    got, want = cppcodegen.compile(propagate, options={"fallback": False})(*args), propagate(*args)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
