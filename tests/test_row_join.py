"""np.r_[...] of traced arrays (np.r_[True, s[1:] != s[:-1]], the start of each run; the
prefix sums np.r_[0, np.cumsum(x)]): NumPy's rule (scalars as one-element arrays, slices as
ranges, every item in one result dtype) joined by the traced concatenate. It was refused
("a traced array was converted to a concrete NumPy array")."""
import numpy as np
import pytest

import cppcodegen


def run_starts(s):
    return np.flatnonzero(np.r_[True, s[1:] != s[:-1]])


def prefix(x):
    return np.r_[0, np.cumsum(x)]


def mixed(x):
    return np.r_[x[:2], 5, x[-2:] * 2, 0:3, x.sum()]


def keeps_float32(x):
    return np.r_[x, 0.5, np.float32(1.25)]


def run_lengths(s):
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1], True])
    return s[starts[:-1]], np.diff(starts)


@pytest.mark.parametrize("fn, args", [
    (run_starts, (np.array([1, 1, 2, 2, 2, 5, 7, 7]),)),
    (run_starts, (np.array([3]),)),
    (prefix, (np.arange(6, dtype=np.int32),)),
    (prefix, (np.linspace(0, 1, 5),)),
    (mixed, (np.arange(7.0),)),
    (keeps_float32, (np.ones(3, np.float32),)),
    (run_lengths, (np.array([4, 4, 1, 9, 9, 9, 2]),)),
])
def test_as_numpy(fn, args):
    want = fn(*args)
    got = cppcodegen.compile(fn, fallback=False)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_numpy_own_without_traced_items():
    def f(x):
        return x + np.r_[1:4, 7]
    x = np.ones(4)
    np.testing.assert_array_equal(cppcodegen.compile(f, fallback=False)(x), f(x))
