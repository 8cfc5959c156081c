"""While loops that count (frontend/whileloops.py): ``while i < n: ...; i += 1`` compiles as a
``for`` over a range (SIMD lanes, no bounds check per step), with Python's results: the
counter's value after the loop (none, some or all steps; a ``break``), the ``else`` clause,
the counter's kind (a Python int stays one); loops that do not count this way (a float
counter, a bound the body changes, a ``continue``) stay while loops."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy
from test_new_user_programs import mc_area_while as inside_circle

R = np.random.default_rng(17)


def steps_of_two(x, start):
    s = 0.0
    i = start
    while i <= x.shape[0] - 1:
        s += x[i]
        i = i + 2
    return s, i


def downward(x, start):
    s = 0.0
    k = start
    while k >= 0:
        s = s * 0.5 + x[k]
        k -= 3
    return s, k


def first_negative(x):
    i = 0
    while i < len(x):
        if x[i] < 0:
            break
        i += 1
    else:
        i = -1
    return i


def c_style_2d(a):
    out = np.zeros_like(a)
    i = 0
    while i < a.shape[0]:
        j = a.shape[1] - 1
        while j > 0:
            out[i, j] = a[i, j] - a[i, j - 1]
            j -= 1
        i += 1
    return out, i, j


def float_counter(x, dt):
    t = 0.0
    s = 0.0
    while t < 1.0:
        s += np.interp(t, np.linspace(0.0, 1.0, x.shape[0]), x)
        t += dt
    return s, t


def shrinking_bound(x):
    i = 0
    n = x.shape[0]
    s = 0.0
    while i < n:
        s += x[i]
        n -= 1
        i += 1
    return s, i, n


def with_continue(x):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] < 0:
            i += 1
            continue
        s += x[i]
        i += 1
    return s


def counter_kind(img, start):
    i = start
    while i < 10:
        i += 1
    return img + i                      # a Python int: uint8 stays uint8 (NEP 50)


def numpy_int_counter(x):
    i = np.int64(0)
    s = 0.0
    while i < x.shape[0]:
        s += x[i]
        i += 1
    return s, i


def from_argmax(x):
    i = int(np.argmax(x))
    s = 0.0
    while i < x.shape[0]:
        s += x[i]
        i += 1
    return s, i


def list_shrinks(x):
    """The bound is ``len`` of a list the body deletes from or slices: a while loop."""
    lst = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    i = 0
    s = 0.0
    while i < len(lst):
        s += lst[i] * x[i]
        del lst[-1]
        lst[1:2] = []
        i += 1
    return s, i


X = R.standard_normal(37)
CASES = [
    (inside_circle, (R.random(1000), R.random(1000))),
    (steps_of_two, (X, 0)), (steps_of_two, (X, 5)), (steps_of_two, (X, 99)),
    (downward, (X, 36)), (downward, (X, 2)), (downward, (X, -4)),
    (first_negative, (np.abs(X),)), (first_negative, (X,)),
    (c_style_2d, (R.standard_normal((6, 9)),)), (c_style_2d, (R.standard_normal((3, 1)),)),
    (float_counter, (X, 0.125)),
    (shrinking_bound, (X,)), (with_continue, (X,)),
    (counter_kind, (np.array([250, 3, 7], dtype=np.uint8), 2)),
    (counter_kind, (np.array([250, 3, 7], dtype=np.uint8), 12)),
    (numpy_int_counter, (X,)), (from_argmax, (X,)), (list_shrinks, (X,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_like_python(fn, args):
    check_against_numpy(fn, *args, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, args, line", [
    (inside_circle, CASES[0][1], "while i < n"),
    (c_style_2d, CASES[9][1], "while j > 0"),
])
def test_a_counting_while_is_a_for_loop(fn, args, line):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    at = first + next(k for k, text in enumerate(lines) if line in text)
    src = cppcodegen.explain(fn, *args).source
    path = inspect.getsourcefile(fn)
    assert f"// for at {path}:{at}" in src, src
    assert f"// while at {path}:{at}" not in src


def test_loops_that_do_not_count_stay_while_loops():
    src = cppcodegen.explain(shrinking_bound, X).source
    assert "// while at" in src and "// for at" not in src
    import ast
    import inspect
    import textwrap
    from cppcodegen.frontend.whileloops import _counting
    tree = ast.parse(textwrap.dedent(inspect.getsource(list_shrinks)))
    assert _counting(next(n for n in ast.walk(tree) if isinstance(n, ast.While))) is None


def test_a_counter_never_bound_is_python_s_error():
    with pytest.raises(UnboundLocalError):
        c_style_2d(np.zeros((0, 3)))
    with pytest.raises(UnboundLocalError):
        cppcodegen.compile(c_style_2d, options={"fallback": False})(np.zeros((0, 3)))
