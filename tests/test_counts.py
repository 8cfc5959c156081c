"""Lengths that are counts of the values (``x[mask]``, ``np.nonzero``, ``np.unique``): one build
serves every count (frontend/counted.py, runtime/counts.py).

Each program is called on arrays of one shape with values that select a different number of
elements each time: the results must be NumPy's, from the one compiled variant, with no call
run as NumPy (no warning that says so). A count that breaks a fact the code relies on
(``y[0]`` of an empty selection) runs that call with NumPy, which raises NumPy's error.
"""
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen import hooks
from cppcodegen.runtime.compiled import CompiledVariant

from helpers import assert_matches_numpy, run_numpy


def scaled_selection(x):
    y = x[x > 0]
    return np.sqrt(y) * 2 + 1


def pairs_of_nonzero(x):
    i, j = np.nonzero(x > 0.5)
    return x[i, j] * 2 + i, j.sum()


def weighted_unique(x):
    u, c = np.unique(x, return_counts=True)
    return u * c, c.sum()


def argwhere_sums(x):
    w = np.argwhere(x > 0)
    return w.sum(axis=0), w.shape


def centred_sort(x):
    y = x[x > 0]
    return np.sort(y) - y.mean()


def compressed_rows(x, keep):
    return np.compress(keep, x, axis=0).sum(axis=1) + 1


def scatter_flat(x):
    idx = np.flatnonzero(x > 0)
    out = np.zeros_like(x)
    out[idx] = x[idx] * 3
    return out, idx


def standardized(x):
    y = x[x > 0]
    return (y - y.mean()) / y.std()


def prefix_of_selection(x):
    y = x[x > 0]
    out = np.zeros(len(y) + 1)
    out[1:] = np.cumsum(y)
    return out


def loop_over_selection(x):
    y = x[x > 0]
    s = 0.0
    for i in range(len(y)):
        s += y[i] * i
    return s


def joined_tails(x):
    lo, hi = x[x < -0.5], np.extract(x > 0.5, x)
    return np.concatenate([lo, hi]), (lo ** 2).sum()


def count_as_result(x):
    y = x[x > 0.5]
    return y.sum() + y.shape[0], len(y)


def _normal(shape):
    return lambda rng: (rng.standard_normal(shape),)


PROGRAMS = [
    (scaled_selection, _normal(200)),
    (pairs_of_nonzero, lambda rng: (rng.random((30, 7)),)),
    (weighted_unique, lambda rng: (rng.integers(0, 40, 120),)),
    (argwhere_sums, _normal((40, 3))),
    (centred_sort, _normal(150)),
    (compressed_rows, lambda rng: (rng.standard_normal((50, 4)), rng.random(50) > 0.5)),
    (scatter_flat, lambda rng: (rng.standard_normal(90).astype(np.float32),)),
    (standardized, _normal(300)),
    (prefix_of_selection, _normal(100)),
    (loop_over_selection, _normal(500)),
    (joined_tails, _normal(80)),
    (count_as_result, lambda rng: (rng.random(1000),)),
]


def _calls_as_numpy(caught) -> list:
    return [str(w.message) for w in caught if "run with NumPy" in str(w.message)]


@pytest.mark.parametrize("fn, make", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_one_build_serves_every_count(fn, make):
    rng = np.random.default_rng(7)
    f = cppcodegen.compile(fn, fallback=False)
    counts = set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            args = make(rng)
            counts.add(int((args[0] > (0.5 if args[0].min() >= 0 else 0)).sum()))
            assert_matches_numpy(f(*args), run_numpy(fn, *args), rtol=1e-12)
    assert len(counts) > 1                      # (the values did select different counts)
    assert _calls_as_numpy(caught) == []
    assert [type(v) for v in f.variants.values()] == [CompiledVariant]


@pytest.mark.parametrize("check", ["check", "numpy"])
def test_reference_backends_read_the_counts(check):
    """The NumPy reference runs the same graph: the count symbol bound from the step's array."""
    rng = np.random.default_rng(2)
    for fn in (prefix_of_selection, pairs_of_nonzero, joined_tails):
        f = cppcodegen.compile(fn, backend=check)
        make = dict((p[0], p[1]) for p in PROGRAMS)[fn]
        for _ in range(3):
            args = make(rng)
            assert_matches_numpy(f(*args), run_numpy(fn, *args), rtol=1e-12)


def test_hooks_see_buffers_of_counted_length():
    seen = {}
    f = cppcodegen.compile(standardized, generate_intermediate_hooks=True)
    x = np.random.default_rng(4).standard_normal(64)
    with hooks.intermediate_hook(lambda name, buf: seen.setdefault(name, buf.shape)):
        got = f(x)
    assert_matches_numpy(got, standardized(x), rtol=1e-12)
    assert (int((x > 0).sum()),) in seen.values()


def first_and_last(x):
    y = x[x > 0.2]
    return y[0] + y[-1]


def test_a_count_that_breaks_a_guard_is_traced_again():
    """``y[0]`` needs a count of at least 1 (a guard checked right after the step): an empty
    selection traces the function again for its count, which raises NumPy's IndexError."""
    f = cppcodegen.compile(first_and_last)
    x = np.linspace(-1, 1, 50)
    assert f(x) == first_and_last(x)
    with pytest.raises(IndexError, match="index 0 is out of bounds"):
        f(np.zeros(50))
    x = np.linspace(-1, 2, 50)              # another count: compiled again, no warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert f(x) == first_and_last(x)
    assert _calls_as_numpy(caught) == []


def test_explain_names_the_count():
    text = str(cppcodegen.compile(scaled_selection).explain(np.arange(-3.0, 5.0)))
    assert "(axis 0: m0)" in text and "float64[m0]" in text


def _products_of_selections(a):
    return a[a > 0] * a[a < 0], a[a > 0] + np.arange(3.0)[:1]


def median_of_selection(x):
    return np.median(x[x > 0])


@pytest.mark.parametrize("fn, values", [
    (_products_of_selections, ([1.0, -1.0, -2.0], [1.0, 2.0, -1.0], [3.0, -4.0, 0.0])),
    (median_of_selection, ([1.0, 2.0, 3.0, -1.0], [1.0, 2.0, -3.0, -1.0], [4.0, 1.0, 2.0, 3.0],
                           [-1.0, -2.0, -3.0, -4.0], [5.0, 1.0, 2.0, -3.0]))])
def test_counts_of_0_and_1_and_changing_parity_are_traced_again(fn, values):
    """A count of 0 or 1 is the build's own (it broadcasts: ``a[a > 0] * a[a < 0]`` with one
    positive value), as sizes 0 and 1 are; a call with another count, or one that breaks a
    guard (np.median's parity), is traced again for it, not run with NumPy."""
    f = cppcodegen.compile(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for v in values:
            x = np.array(v)
            with np.errstate(all="ignore"):
                assert_matches_numpy(f(x), run_numpy(fn, x), rtol=1e-12)
    assert _calls_as_numpy(caught) == []
