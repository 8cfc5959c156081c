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


def chosen_by_expression(x, y):
    big = x if x.sum() > y.sum() else y
    big *= 2
    return x, y


def chosen_by_branch(x, y):
    if x.sum() > y.sum():
        big = x
    else:
        big = y
    big *= 2
    return x, y


def view_chosen_by_branch(flag):
    buf = np.zeros(3)
    view = buf[1:]
    if flag[0] > 0:
        view = buf[:2]
    view[0] = 5.0
    return buf


@pytest.mark.parametrize("fn, args", [
    (chosen_by_expression, (np.array([3.0, 1.0]), np.array([1.0, 1.0]))),
    (chosen_by_expression, (np.array([0.0, 1.0]), np.array([1.0, 1.0]))),
    (chosen_by_branch, (np.array([3.0, 1.0]), np.array([1.0, 1.0]))),
    (view_chosen_by_branch, (np.array([1.0]),)), (view_chosen_by_branch, (np.array([-1.0]),)),
])
def test_updates_through_a_chosen_name(fn, args):
    """An array chosen by a conditional expression or a branch on values, then updated in
    place through the name that chose it: refused, so Python runs it and the update
    reaches the chosen array (it was lost)."""
    with pytest.raises(TraceError, match="updated in place"):
        cppcodegen.compile(fn, options={"fallback": False})(*[a.copy() for a in args])
    mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(fn, options={"fallback": True})(*mine)
    want = fn(*theirs)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m, t)
