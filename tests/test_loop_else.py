"""``for ... else`` and ``while ... else`` compile as loops: the else clause runs when no
break ended the loop (a flag cleared before each of the loop's own breaks; a nested loop's
breaks are its own). They were run by Python while tracing, and refused for a branch on array
values. Compared with the plain Python function."""
import numpy as np
import pytest

import cppcodegen


def first_above(x, t):
    idx = -2
    for i in range(x.shape[0]):
        if x[i] > t:
            idx = i
            break
    else:
        idx = -1
    return idx


def while_else(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        s += x[i]
        if s > t:
            break
        i += 1
    else:
        s = -s
    return i, s


def rows_all_below(x, t):
    hits = 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > t:
                break
        else:
            hits += 1
    return hits


def while_else_returns(x, t):
    i = 0
    while i < x.shape[0]:
        if x[i] > t:
            break
        i += 1
    else:
        return -1           # (an ``if`` that returns on one path inside one that does not)
    return i


def for_else_returns_then_more(x, t, mode):
    if mode > 0:
        for i in range(x.shape[0]):
            if x[i] > t:
                break
        else:
            return -1.0
        s = x[i] * 2
    else:
        s = x[0]
        if s > t:
            return -2.0
    y = s + 1               # (after an if neither side of which always returns: written
    return y * 3            # into both)


X = np.array([0.1, 0.5, 0.95, 0.2])
M = np.random.default_rng(0).random((3000, 4))
CASES = [(first_above, (X, 0.9)), (first_above, (X, 2.0)), (while_else, (X, 0.55)),
         (while_else, (X, 5.0)), (rows_all_below, (M, 0.8)), (rows_all_below, (M, 2.0)),
         (while_else_returns, (X, 0.9)), (while_else_returns, (X, 2.0)),
         (for_else_returns_then_more, (X, 0.9, 1)), (for_else_returns_then_more, (X, 2.0, 1)),
         (for_else_returns_then_more, (X, 0.0, 0)), (for_else_returns_then_more, (X, 2.0, 0))]


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_loop_else_as_python(fn, args):
    got = cppcodegen.compile(fn, fallback=False)(*args)
    want = fn(*args)
    assert type(got) is type(want)
    np.testing.assert_array_equal(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
