"""argmax / argmin of bools: the first True (False), 0 where there is none. The compiled loop
stops at the first hit (vector iterations test a mask's bits), so each case puts the hit at
a lane edge, in the scalar tail, at the very end, or nowhere, in flat and per-row forms, on
contiguous, strided and reversed data, and large enough to run in parallel chunks."""
import numpy as np
import pytest

import cppcodegen


def first_above(x, t):
    return np.argmax(x > t)


def first_not_above(x, t):
    return np.argmin(x > t)


def rows_first(x, t):
    return np.argmax(x > t, axis=1), np.argmin(x > t, axis=0)


def first_of_bools(b):
    return np.argmax(b), np.argmin(b)


def _check(fn, *args):
    want = fn(*args)
    got = cppcodegen.compile(fn)(*args)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype


@pytest.mark.parametrize("n", [1, 7, 16, 17, 63, 64, 65, 1000, 300_001])
@pytest.mark.parametrize("where", ["none", "first", "last", "lane", "all"])
def test_first_hit_anywhere(n, where):
    x = np.zeros(n)
    if where == "first":
        x[0] = 1.0
    elif where == "last":
        x[-1] = 1.0
    elif where == "lane":
        x[min(n - 1, 15)] = 1.0
        x[min(n - 1, 40):] = 1.0
    elif where == "all":
        x[:] = 1.0
    for fn in (first_above, first_not_above):
        _check(fn, x, 0.5)


@pytest.mark.parametrize("layout", ["c", "strided", "reversed"])
def test_random_and_strided(layout):
    r = np.random.default_rng(3)
    x = r.random(200_003)
    x = {"c": x, "strided": x[::3], "reversed": x[::-1]}[layout]
    for t in (0.5, 0.9999, 2.0, -1.0):
        _check(first_above, x, t)
        _check(first_not_above, x, t)


@pytest.mark.parametrize("shape", [(3, 5), (9, 33), (200, 130), (1, 1)])
def test_per_row_and_column(shape):
    r = np.random.default_rng(4)
    x = r.random(shape)
    for t in (0.97, 0.5, 2.0):
        _check(rows_first, x, t)
        _check(rows_first, np.asfortranarray(x), t)


def test_bool_arrays():
    r = np.random.default_rng(5)
    for n in (5, 70, 100_000):
        b = r.random(n) < 0.001
        _check(first_of_bools, b)
        _check(first_of_bools, ~b)
        _check(first_of_bools, np.zeros(n, dtype=bool))


def test_in_a_loop():
    def crossings(x, levels):
        out = np.zeros(levels.shape[0], dtype=np.int64)
        for k in range(levels.shape[0]):
            out[k] = np.argmax(x > levels[k])
        return out
    x = np.cumsum(np.random.default_rng(6).random(5000))
    _check(crossings, x, np.array([0.0, 10.0, 1000.0, 1e9]))


def test_a_stage_written_twice_in_one_kernel():
    """(Symbolic sizes write an arg-reduction's loops more than once: each search its own
    label; one label for both was a C++ error found by the dynamic-shape fuzzer.)"""
    def f(x1):
        v2 = np.concatenate([x1, x1, x1], axis=-1).astype(np.bool_)
        return v2.argmax(axis=0, keepdims=True), np.argmin(~v2, axis=-1, keepdims=True)
    g = cppcodegen.compile(f, dynamic=True)
    r = np.random.default_rng(8)
    for shape in ((61, 1), (7, 3), (130, 2)):
        x = r.integers(-1, 2, shape).astype(np.int32)
        for got, want in zip(g(x), f(x)):
            np.testing.assert_array_equal(got, want)
