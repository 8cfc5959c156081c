"""Python lists, dicts and sets changed inside a compiled loop or branch on array values.

Traced once, such a body would append one placeholder (the loop index as a symbol) where
Python appends one item per passing iteration: the compiled function returned an object
array holding a symbol. Now such a construct is refused (a loop runs in Python where it
can, a branch on array values is an error naming the container and line); with the fallback
on the call runs as Python. A list the trace touched is put back as it was. (The function's
own lists appended to under a branch compile: tests/test_list_appends.py.)
"""
import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import TraceError


def indices_above(x, t):
    out = []
    for i in range(x.shape[0]):
        if x[i] > t:
            out.append(i)
    return np.array(out, dtype=np.int64)


def doubled(x):                 # every iteration appends: Python runs the loop, fused
    out = []
    for i in range(4):
        out.append(x[i] * 2.0)
    return np.array(out)


def into_argument(x, found):    # the caller's list
    for i in range(x.shape[0]):
        if x[i] < 0:
            found.append(i)
    return x.sum()


def counts(x):
    seen = {}
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            seen.update(big=i)
    return len(seen)


X = np.array([0.1, 0.9, 0.2, 0.8, 0.95])


def test_append_under_a_branch_to_the_callers_list_is_refused_by_name():
    with pytest.raises(TraceError, match="test_containers.py:34 changes the Python list "
                                         ".found.. which compiled code cannot do"):
        cppcodegen.compile(into_argument, fallback=False)(X, [])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fn,args", [(indices_above, (X, 0.5)), (indices_above, (X, 2.0)),
                                     (counts, (X,))])
def test_fallback_gives_python_result(fn, args):
    got = cppcodegen.compile(fn, fallback=True)(*args)
    want = fn(*args)
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def test_append_in_every_iteration_compiles():
    got = cppcodegen.compile(doubled, fallback=False)(X)
    np.testing.assert_array_equal(got, doubled(X))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_callers_list_is_not_changed_by_tracing():
    x = np.array([1.0, -2.0, 3.0, -4.0])
    found = ["before"]
    with pytest.raises(TraceError):
        cppcodegen.compile(into_argument, fallback=False)(x, found)
    assert found == ["before"]
    found_py, found_c = [], []
    assert cppcodegen.compile(into_argument, fallback=True)(x, found_c) == into_argument(x, found_py)
    assert found_c == found_py == [1, 3]


def keyed_by_index(x):              # a dict stored into (no method call) under a branch
    seen = {}
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            seen[i] = x[i]
    return len(seen)


def test_store_into_a_dict_under_a_branch():
    """``seen[i] = v`` changes the dict without a method call: found through the variables
    the body reads (it returned the count of every index before)."""
    with pytest.raises(TraceError, match="changes the Python dict"):
        cppcodegen.compile(keyed_by_index, fallback=False)(X)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_function_that_falls_back_serves_other_shapes():
    """The first call fell back to Python; a call of another shape compiles again (it raised
    AttributeError: no newest variant to say why it recompiles)."""
    f = cppcodegen.compile(keyed_by_index, fallback=True)
    rng = np.random.default_rng(4)
    for n in (5, 7, 9, 7):
        x = rng.random(n)
        assert f(x) == keyed_by_index(x)
