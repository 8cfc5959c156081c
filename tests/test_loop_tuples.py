"""Tuples made in a loop body (``t = helper(x[i], y[i])``, ``p = (x[i], y[i])``) are
temporaries of the body: the loop compiles as a loop at any trip count (a tuple was refused as
a carried value, and the loop unrolled). A tuple read after the loop is an error that names
the line. Compared with the plain Python function."""
import inspect

import numpy as np
import pytest

import cppcodegen


def sum_and_product(a, b):
    return a + b, a * b


def helper_tuple(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        t = sum_and_product(x[i], y[i])
        s += t[0] * t[1]
    return s


def literal_tuple(x, y):
    s = 0.0
    m = 0.0
    for i in range(x.shape[0]):
        p = (x[i], y[i])
        if p[0] > p[1]:
            m = max(m, p[0] - p[1])
        s += p[0] - p[1]
    return s, m


def tuple_after_loop(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        t = (x[i], y[i])
        s += t[0]
    return s + t[1]


@pytest.mark.parametrize("fn", [helper_tuple, literal_tuple])
def test_tuple_temporary_in_a_long_loop(fn):
    rng = np.random.default_rng(4)
    comp = cppcodegen.compile(fn)
    for n in (20000, 7):         # 20000 trips: unrolled, the graph would be refused
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        got, want = comp(x, y), fn(x, y)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)     # scalar loops in Python's order


def test_tuple_read_after_the_loop():
    """A tuple made in each iteration and read after the loop: its name is one name per
    element (frontend/tuplenames.py), carried, so the last iteration's tuple is there, as in
    Python (it was refused, naming the line); a loop of no trip leaves it unbound, and the
    read raises UnboundLocalError naming the line."""
    x, y = np.arange(20000.0), np.arange(20000.0) * 2
    compiled = cppcodegen.compile(tuple_after_loop)
    assert compiled(x, y) == tuple_after_loop(x, y)
    lines, first = inspect.getsourcelines(tuple_after_loop)
    want = first + next(i for i, s in enumerate(lines) if "s + t[1]" in s)
    with pytest.raises(UnboundLocalError, match=f"test_loop_tuples.py:{want}"):
        compiled(x[:0], y[:0])
