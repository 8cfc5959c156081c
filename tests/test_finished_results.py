"""An array filled by a loop and finished after it (``values[m] = cur`` after the loop that
filled ``values``): the last stores go into the loop's array, which becomes the result;
the whole array is not copied to store one element (run-length encoding copied 900 KB per
call for two stores)."""
import numpy as np
import pytest

import cppcodegen
from tests.helpers import assert_matches_numpy


def run_length_encode(x):
    n = len(x)
    values = np.empty(n, dtype=x.dtype)
    lengths = np.empty(n, dtype=np.int64)
    if n == 0:
        return values, lengths
    m = 0
    cur = x[0]
    run = 1
    for i in range(1, n):
        if x[i] == cur:
            run += 1
        else:
            values[m] = cur
            lengths[m] = run
            m += 1
            cur = x[i]
            run = 1
    values[m] = cur
    lengths[m] = run
    m += 1
    return values[:m], lengths[:m]


def ends_pinned(x):
    n = x.shape[0]
    u = np.zeros(n)
    for i in range(1, n - 1):
        u[i] = 0.5 * (x[i - 1] + x[i + 1])
    u[0] = u[n - 1] = 0.0
    return u


def ends_then_half(x):
    u = ends_pinned(x)
    u[x.shape[0] // 2:] *= 2.0
    return u


def read_then_store(x):
    n = x.shape[0]
    v = np.empty(n)
    for i in range(n):
        v[i] = x[i] * 2.0
    s = v.sum()
    v[n - 1] = s
    return v, s


def copy_then_store(x, idx):
    v = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        v[i] = x[i] + 1.0
    w = v.copy()
    v[idx] = -1.0
    return v, w


def _same(got, want):
    assert_matches_numpy(got, want, rtol=1e-13)


@pytest.mark.parametrize("n", [0, 1, 2, 57, 1000])
def test_run_length_encoding(n):
    x = (np.random.default_rng(n).random(n) < 0.2).cumsum().astype(np.uint8)
    f = cppcodegen.compile(run_length_encode)
    _same(f(x), run_length_encode(x))
    a, b = f(x), f(x)                       # each call's results are arrays of their own
    assert n == 0 or not np.shares_memory(a[0], b[0])


def test_no_copy_of_the_filled_array():
    x = (np.random.default_rng(0).random(1000) < 0.2).cumsum().astype(np.uint8)
    src = cppcodegen.explain(run_length_encode, x).source
    assert "pointwise over [1000]" not in src, src
    src = cppcodegen.explain(ends_pinned, np.ones(300)).source
    assert src.count("pointwise over [300]") == 1, src      # (np.zeros)


@pytest.mark.parametrize("fn, args", [
    (ends_pinned, (np.linspace(0, 1, 31),)),
    (ends_pinned, (np.ones(3),)),
    (ends_then_half, (np.linspace(0, 1, 31),)),
    (read_then_store, (np.arange(9.0),)),
    (copy_then_store, (np.arange(7.0), np.array([0, 3, -1]))),
])
def test_stores_after_the_loop(fn, args):
    """Values read before the stores (a sum, a copy) are the old ones, as in NumPy."""
    keep = [np.copy(a) for a in args]
    _same(cppcodegen.compile(fn)(*args), fn(*args))
    for a, k in zip(args, keep):
        np.testing.assert_array_equal(a, k)
    assert cppcodegen.check(fn, *args).ok
