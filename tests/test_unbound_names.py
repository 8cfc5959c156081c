"""Names first bound inside a loop or on one side of a branch on array values, read after it.

A compiled construct carries such a name from its start; where Python would find it unbound
the compiled function raises UnboundLocalError (a check where the read runs), never the start
value. Each program is compared with the plain Python function: the value, or the error.
"""
import numpy as np
import pytest

import cppcodegen


def search(x, t):                   # no binding before the loop: unbound when nothing is found
    for i in range(x.shape[0]):
        if x[i] > t:
            idx = i
            break
    return idx


def search_else(x, t):              # bound on every path: the else clause or the break
    for i, v in enumerate(x):
        if v > t:
            idx = 2 * i
            break
    else:
        idx = -1
    return idx + 1


def last_temp(x, t):                # a body temporary read after a loop of no trip
    for i in range(x.shape[0]):
        v = x[i] * 2.0
        if v > t:
            break
    return v


def found_flag(x, t):               # read only where the user's own flag says it was bound
    found = False
    for i in range(x.shape[0]):
        if x[i] > t:
            pos = i
            found = True
            break
    if found:
        return pos * 10
    return -1


def found_expr(x, t):               # ... in one arm of a conditional expression
    found = False
    for i in range(x.shape[0]):
        if x[i] > t:
            val = x[i]
            found = True
    return val * 2.0 if found else 0.0


def first_iteration_sets(x):        # the first iteration binds it, later ones update it
    for i in range(x.shape[0]):
        if i == 0:
            m = x[0]
            s = x[0]
        else:
            m = max(m, x[i])
            s += x[i]
    return m, s


def row_of_max(a):                  # an array bound on one side of a branch in a loop
    best = -np.inf
    for i in range(a.shape[0]):
        if a[i].sum() > best:
            best = a[i].sum()
            row = a[i] * 1.0
    return row


def while_until(x, t):
    i = 0
    while i < x.shape[0]:
        if x[i] > t:
            hit = x[i] - t
            break
        i += 1
    return hit


def deleted(x):
    s = 0.0
    for i in range(x.shape[0]):
        tmp = x[i] * x[i]
        s += tmp
        del tmp
    return s


X = np.array([0.1, 0.5, 0.95, 0.2])
E = np.zeros(0)
A = np.random.default_rng(0).random((6, 5)) - 0.5
CASES = [(search, (X, 0.4)), (search, (X, 2.0)), (search, (E, 0.0)),
         (search_else, (X, 0.4)), (search_else, (X, 2.0)),
         (last_temp, (X, 0.9)), (last_temp, (X, 9.0)), (last_temp, (E, 0.0)),
         (found_flag, (X, 0.4)), (found_flag, (X, 2.0)), (found_flag, (E, 0.0)),
         (found_expr, (X, 0.4)), (found_expr, (X, 2.0)),
         (first_iteration_sets, (X,)), (first_iteration_sets, (X[:1],)),
         (first_iteration_sets, (E,)),
         (row_of_max, (A,)), (row_of_max, (A[:0],)),
         (while_until, (X, 0.4)), (while_until, (X, 2.0)),
         (deleted, (X,))]


def _outcome(fn, args):
    try:
        return fn(*args)
    except UnboundLocalError as e:
        return e


@pytest.mark.parametrize("fn,args", CASES,
                         ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_as_python(fn, args):
    want = _outcome(fn, args)
    got = _outcome(cppcodegen.compile(fn, fallback=False), args)
    if isinstance(want, UnboundLocalError):
        assert isinstance(got, UnboundLocalError), got
        return
    assert not isinstance(got, Exception), got
    if isinstance(want, tuple):
        assert len(got) == len(want)
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_one_compile_serves_found_and_not_found():
    """The same compiled function (sizes made symbolic by a second shape) takes both paths:
    the check fails only in calls where Python's read fails."""
    f = cppcodegen.compile(search, fallback=False)
    rng = np.random.default_rng(1)
    for n in (40, 57, 33, 0):
        x = rng.random(n)
        for t in (0.5, 2.0):
            want, got = _outcome(search, (x, t)), _outcome(f, (x, t))
            if isinstance(want, UnboundLocalError):
                assert isinstance(got, UnboundLocalError)
                assert "'idx'" in str(got) and "test_unbound_names.py" in str(got)
            else:
                assert got == want


def test_flag_names_are_hidden_from_the_user():
    """The flags are the rewriting's own variables: a name read where it is always bound
    gets none (search_else), and the rewritten source is still valid Python."""
    from cppcodegen.frontend.capture import convert_source
    assert "__ccg_bound_idx" not in convert_source(search_else)
    assert "__ccg_bound_idx" in convert_source(search)


@pytest.mark.parametrize("fn,args", [(search, (X, 0.4)), (search, (X, 2.0)),
                                     (found_flag, (X, 2.0)), (first_iteration_sets, (X,))])
def test_reference_interpreter_agrees(fn, args):
    """The NumPy reference runs the same checks (check mode compares every buffer)."""
    want = _outcome(fn, args)
    got = _outcome(cppcodegen.compile(fn, fallback=False, backend="check"), args)
    assert type(got) is type(want) if isinstance(want, Exception) else got == want
