"""Two names for one array on one side of a branch on values only (``cur = out`` then ``cur
= np.zeros(3)`` under the branch; ``best = x`` under it): an update in place through either
name after the branch would reach different arrays depending on the side, so it is refused
naming the line (the default fallback runs Python, which gives Python's result); without a
later update the function compiles (found by a new user's probe: the update was lost)."""
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import TraceError


def rebound_on_one_side(x):
    out = np.zeros(3)
    cur = out
    cur[0] = 1.0
    if x[0] < 0:
        cur = np.zeros(3)
    cur[1] = 1.0
    return out


def shared_on_one_side(x0):
    x = x0.copy()
    best = x0
    for it in range(3):
        x = x * 0.5
        if x.sum() > 1:
            best = x
        x[0] = 100.0
    return best


def shared_but_not_updated(x0):
    x = x0.copy()
    best = x0
    for it in range(3):
        x = x * 0.5
        if x.sum() > 1:
            best = x
    return best


@pytest.mark.parametrize("fn", [rebound_on_one_side, shared_on_one_side])
def test_update_after_is_refused_and_python_runs(fn):
    for x in (np.array([1.0, -1.0, 1.0, 4.0]), np.array([-1.0, 2.0, 3.0, 8.0])):
        with pytest.raises(TraceError, match=r"updated in place \(at .*test_branch_aliases"):
            cppcodegen.compile(fn, options={"fallback": False})(x.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = cppcodegen.compile(fn, options={"fallback": True})(x.copy())
        np.testing.assert_array_equal(got, fn(x.copy()))


def test_no_update_compiles():
    x0 = np.array([3.0, -1.0, 2.0, 5.0])
    got = cppcodegen.compile(shared_but_not_updated, options={"fallback": False})(x0)
    np.testing.assert_array_equal(got, shared_but_not_updated(x0))
