"""A name one side of a branch binds and the other side reads (``if first: best = v`` /
``else: if v > best: best = v``), inside a filter in a loop: the reading side is traced with
the type the binding side gives it, and the read is checked when the program runs (Python's
UnboundLocalError where no path bound it). It raised UnboundLocalError while tracing."""
import numpy as np
import pytest

import cppcodegen


def running_max_of_gaps(x):
    first = True
    for i in range(len(x) - 1):
        if x[i] > 0:
            if first:
                best = x[i + 1] - x[i]
                first = False
            else:
                cand = x[i + 1] - x[i]
                if cand > best:
                    best = cand
    if first:
        raise ValueError("no positive element")
    return best


def reads_on_the_first_side(x):
    seen = False
    for v in x:
        if v > 0.5:
            if seen:                    # (the side that reads is traced first)
                low = min(low, v)
            else:
                low = v
                seen = True
    return low if seen else -1.0


def unbound_when_run(x):
    for v in x:
        if v > 10:
            if v > 20:
                top = v
            else:
                top = top + v           # (no path bound it before: Python raises)
    return 0.0


X = np.cumsum(np.random.default_rng(4).random(60)) - 8


@pytest.mark.parametrize("fn, x", [(running_max_of_gaps, X), (reads_on_the_first_side, X),
                                   (reads_on_the_first_side, np.zeros(5)),
                                   (unbound_when_run, np.ones(4))])
def test_like_python(fn, x):
    got = cppcodegen.compile(fn, options={"fallback": False})(x)
    want = fn(x)
    assert type(got) is type(want)
    assert got == want


def test_a_filter_that_never_holds_raises_the_users_error():
    with pytest.raises(ValueError, match="no positive element"):
        cppcodegen.compile(running_max_of_gaps, options={"fallback": False})(-np.ones(6))


def test_a_read_no_path_bound_raises_unbound_local_error_when_run():
    f = cppcodegen.compile(unbound_when_run, options={"fallback": False})
    x = np.array([1.0, 15.0, 3.0])
    with pytest.raises(UnboundLocalError):
        unbound_when_run(x)
    with pytest.raises(UnboundLocalError, match="top"):
        f(x)
