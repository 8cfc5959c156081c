"""``return`` inside compiled loops (frontend/rewrite.py ``returns_in_loops``): the loop
breaks with the value, enclosing loops break too, and what follows the loop runs only when
nothing returned. Each program is compared with the plain Python function."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from cppcodegen.frontend.capture import convert_source
from helpers import check_against_numpy

R = np.random.default_rng(11)


def first_negative(a):
    for i in range(a.shape[0]):
        if a[i] < 0:
            return i
    return -1


def first_above_in_rows(m, t):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] > t:
                return i * m.shape[1] + j
    return -1


def escape_time(x, y, max_iters):
    zr, zi = 0.0, 0.0
    for it in range(max_iters):
        zr, zi = zr * zr - zi * zi + x, 2.0 * zr * zi + y
        if zr * zr + zi * zi >= 4.0:
            return it
    return max_iters


def julia_image(xs, ys):
    out = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for r in range(ys.shape[0]):
        for c in range(xs.shape[0]):
            out[r, c] = escape_time(xs[c], ys[r], 50)
    return out


def newton_sqrt(a, tol):
    x = a.copy()
    k = 0
    while True:
        nx = 0.5 * (x + a / x)
        k += 1
        if np.max(np.abs(nx - x)) < tol:
            return nx, k
        x = nx


def partial_sum_until(a, limit):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
        if s > limit:
            return s, i
    return s, a.shape[0]


def after_loop_work(a):
    for i in range(a.shape[0]):
        if a[i] > 2.5:
            return a[i] * 10.0
    total = a.sum()
    return total / a.shape[0]


CASES = [
    (first_negative, (np.abs(R.standard_normal(40)) - np.arange(40) * 0.02,)),
    (first_negative, (np.abs(R.standard_normal(40)),)),
    (first_above_in_rows, (R.standard_normal((7, 9)), 1.5)),
    (first_above_in_rows, (R.standard_normal((7, 9)), 50.0)),
    (julia_image, (np.linspace(-2.0, 1.0, 21), np.linspace(-1.2, 1.2, 13))),
    (newton_sqrt, (R.uniform(0.5, 9.0, 30), 1e-12)),
    (partial_sum_until, (R.uniform(0.0, 1.0, 50), 7.5)),
    (partial_sum_until, (R.uniform(0.0, 1.0, 50), 1e9)),
    (after_loop_work, (R.standard_normal(60),)),
    (after_loop_work, (R.standard_normal(60) * 0.1,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_return_in_loop(fn, args):
    # (sums: any order is within 60 * eps * sum|a| of NumPy's pairwise one)
    tol = dict(atol=1e-13) if fn is after_loop_work else {}
    check_against_numpy(fn, *args, **tol)


def test_loops_are_compiled_not_unrolled():
    """The escape-time loop is a C++ loop: the source does not grow with the iteration count."""
    xs, ys = np.linspace(-2.0, 1.0, 5), np.linspace(-1.0, 1.0, 4)

    def image(xs, ys, n):
        out = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
        for r in range(ys.shape[0]):
            for c in range(xs.shape[0]):
                out[r, c] = escape_time(xs[c], ys[r], n)
        return out
    small = cppcodegen.explain(image, xs, ys, 5).source
    big = cppcodegen.explain(image, xs, ys, 500).source
    assert len(big) < 1.2 * len(small) + 500


def test_falling_off_the_end_is_a_clear_error_or_right():
    """No return on some path: Python returns None there; a compiled function cannot return
    None or an int by the values, so it must refuse clearly (never a wrong value)."""
    def maybe(a):
        for i in range(a.shape[0]):
            if a[i] < 0:
                return i
    a = np.abs(R.standard_normal(10))
    try:
        got = cppcodegen.compile(maybe)(a)
    except cppcodegen.CppCodegenError as e:
        assert "test_early_return.py" in str(e) or "maybe" in str(e)
    else:
        assert got is None


def welford(x):
    n = 0
    mean = 0.0
    m2 = 0.0
    for v in x:
        n += 1
        delta = v - mean
        mean += delta / n
        m2 += delta * (v - mean)
    if n < 2:
        return mean, float("nan")
    return mean, m2 / (n - 1)


def classify(x, t):
    s = x.sum()
    if s > t:
        return 1, s * 2.0
    elif s < -t:
        return -1, -s
    return 0, s


def test_tuples_returned_from_branches_on_values():
    """``return a, b`` on every path of a branch on array values: each item carried out of
    the branch (a tuple is not; Welford's mean and variance were refused, found by a new
    user's probe)."""
    rng = np.random.default_rng(6)
    f, g = (cppcodegen.compile(fn, fallback=False) for fn in (welford, classify))
    for n in (10, 23, 1, 0):
        x = rng.standard_normal(n)
        np.testing.assert_allclose(f(x), welford(x), rtol=1e-12, equal_nan=True)
        for t in (0.5, 100.0):
            for sign in (1.0, -1.0):
                got, want = g(sign * x, t), classify(sign * x, t)
                assert got[0] == want[0]
                np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def ratio_or_none(a, b):
    if b.sum() == 0:
        return None
    return a.sum() / b.sum()


def best_or_none(x):
    best = None
    if x.sum() > 0:
        best = x.max()
    return best


def test_none_on_one_path_is_none_where_python_returns_it():
    """``return None`` on one path and a value on another, and a name bound to None on one
    side of a branch on values: compiled (a flag beside the value, ``optionals.py``), None
    where Python returns None."""
    for fn, args in ((ratio_or_none, (np.ones(3), np.ones(3))),
                     (ratio_or_none, (np.ones(3), np.zeros(3))),
                     (best_or_none, (np.ones(3),)), (best_or_none, (-np.ones(3),))):
        got, want = cppcodegen.compile(fn, fallback=False)(*args), fn(*args)
        assert type(got) is type(want) and got == want


def none_inside_loop(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return None         # Bellman-Ford's "negative cycle"
    return x * 2


def none_bound_in_loop_then_read(x):
    found = False
    for i in range(x.shape[0]):
        if x[i] < 0:
            r = None
            found = True
            break
    if not found:
        r = x * 2
    return r


def none_bound_in_loop_then_rebound(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            r = None
            break
    r = x * 2
    return r


def test_none_inside_a_loop_is_none_or_refused_never_a_zero_array():
    """``return None`` inside a compiled loop, a value elsewhere: None where Python returns
    it. A name bound to None inside the loop that may also be unbound after it is refused,
    naming the line (it was once returned as the placeholder, zeros); Python runs it with
    the fallback on. A None that is rebound before any read compiles."""
    from cppcodegen.errors import TraceError
    neg, pos = np.array([1.0, -1.0]), np.array([1.0, 2.0])
    compiled = cppcodegen.compile(none_inside_loop, fallback=False)
    assert compiled(neg) is None
    np.testing.assert_array_equal(compiled(pos), pos * 2)
    fn = none_bound_in_loop_then_read
    with pytest.raises(TraceError, match="None on a path .*test_early_return.py:\\d+"):
        cppcodegen.compile(fn, fallback=False)(neg)
    with pytest.warns(cppcodegen.FallbackWarning):
        compiled = cppcodegen.compile(fn, fallback=True)
        assert compiled(neg) is None
    np.testing.assert_array_equal(compiled(pos), fn(pos))
    compiled = cppcodegen.compile(none_bound_in_loop_then_rebound, fallback=False)
    for x in (neg, pos):
        np.testing.assert_array_equal(compiled(x), x * 2)


def normalize_unless_zero(x):
    if x.sum() == 0:
        return
    x /= x.sum()


def double_until_negative(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return None
        x[i] = x[i] * 2


def find_pair(x, t):
    for i in range(len(x)):
        if x[i] > t:
            return i, x[i]
    return None


@pytest.mark.parametrize("fn", [normalize_unless_zero, double_until_negative])
def test_none_on_every_path_with_an_early_return_compiles(fn):
    """An in-place update with an early exit returns None on every path: compiled (it was
    refused as a mix of None and a value, and ran as Python). A function that returns a
    pair on one path and None on another compiles too (``optionals.none_returns``)."""
    f = cppcodegen.compile(fn, fallback=False)
    for x in (np.array([1.0, 2.0, -1.0, 3.0]), np.zeros(3), np.ones(4)):
        a, b = x.copy(), x.copy()
        assert f(a) is None and fn(b) is None
        np.testing.assert_array_equal(a, b)
    g = cppcodegen.compile(find_pair, fallback=False)
    assert g(np.array([1.0, 4.0]), 2.5) == (1, 4.0)
    assert g(np.array([1.0, 2.0]), 2.5) is None


def _sentinel_or_order(x):
    k = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            k += 1
    if k < x.shape[0]:
        return np.full(1, -1)
    return x


def test_returns_of_two_shapes_name_them_not_a_missing_return():
    """Every path returns an array, of shape (1,) or (n,): the refusal says so (the fallback
    runs Python), without guessing at a path that returns None."""
    x = np.arange(1, 5)
    with pytest.raises(cppcodegen.errors.TraceError) as e:
        cppcodegen.compile(_sentinel_or_order, fallback=False)(x)
    assert "None" not in str(e.value) and "(1,)" in str(e.value) and "(4,)" in str(e.value)
    with pytest.warns(cppcodegen.FallbackWarning):
        np.testing.assert_array_equal(cppcodegen.compile(_sentinel_or_order, fallback=True)(x), x)


def first_above_2d(A, t):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > t:
                return (i, j), A[i, j]
    return (-1, -1), np.nan


def stats_or_flag(x, t):
    if x[0] > t:
        return (x.min(), (x.max(), x.sum())), True
    return (x[0], (x[1], x[2])), False


def pair_or_name(x, t):
    p = (0, 0.0)
    if x[0] > t:
        return p, 1
    return (1, x[0]), 2


@pytest.mark.parametrize("fn, args", [
    (first_above_2d, (np.arange(12.0).reshape(3, 4) / 12, 0.5)),
    (first_above_2d, (np.arange(12.0).reshape(3, 4) / 12, 2.0)),
    (stats_or_flag, (np.array([0.9, 0.2, 0.4]), 0.5)),
    (stats_or_flag, (np.array([0.1, 0.2, 0.4]), 0.5)),
    (pair_or_name, (np.array([0.9]), 0.5)), (pair_or_name, (np.array([0.9]), 2.0)),
])
def test_nested_tuples_returned_on_every_path(fn, args):
    """``return (i, j), v`` on one path and ``return (-1, -1), np.nan`` on another: each
    item of the nested tuples is carried on its own, the tuple built at the end."""
    got = cppcodegen.compile(fn, options={"fallback": False})(*args)
    want = fn(*args)

    def same(g, w):
        assert type(g) is type(w) or isinstance(w, (int, float)) and isinstance(g, type(w))
        if isinstance(w, tuple):
            assert len(g) == len(w)
            for a, b in zip(g, w):
                same(a, b)
        else:
            np.testing.assert_array_equal(g, w)
    same(got, want)



def updated_or_not(a, t):
    if a[0] > t:
        return a, 0
    a[0] = 5.0
    return a, 1


def chosen_array(a, b, t):
    if a.sum() > t:
        out = a
    else:
        out = a
        out[1] = -1.0
    return out


@pytest.mark.parametrize("t", [0.5, 2.0])
def test_an_argument_returned_on_every_path_is_the_argument(t):
    """Python returns the argument object itself (``res[0] is a``), updated or not; it was a
    copy when the return went through a branch."""
    f = cppcodegen.compile(updated_or_not, options={"fallback": False})
    a, want = np.ones(8), np.ones(8)
    res = f(a, t)
    ref = updated_or_not(want, t)
    assert res[0] is a and res[1] == ref[1]
    np.testing.assert_array_equal(a, want)
    g = cppcodegen.compile(chosen_array, options={"fallback": False})
    a, want = np.ones(4), np.ones(4)
    assert g(a, np.zeros(4), t + 2.5) is a
    chosen_array(want, np.zeros(4), t + 2.5)
    np.testing.assert_array_equal(a, want)


def pair_or_number(x, t):
    for i in range(len(x)):
        if x[i] > t:
            return i, x[i]
    return -1


def test_a_tuple_returned_in_a_loop_and_a_number_after_it_is_never_a_wrong_number():
    """The loop could not carry the tuple, and the ``if`` after it that binds -1 carried the
    value returned as a number with nothing on the loop's side: the call returned 0 where
    Python returns (1, 4.0). Now refused, naming the returns; Python runs it with the
    fallback on."""
    from cppcodegen.errors import MixedReturns
    x = np.array([1.0, 4.0])
    with pytest.raises(MixedReturns, match=r"pair_or_number \(at .*; its returns at lines "
                                           r"\d+, \d+\): the value returned in the loop"):
        cppcodegen.compile(pair_or_number, fallback=False)(x, 2.5)
    g = cppcodegen.compile(pair_or_number, fallback=True)
    with pytest.warns(cppcodegen.FallbackWarning):
        assert g(x, 2.5) == (1, 4.0)
    assert g(x, 5.0) == -1


def clamp_first_negative(x):        # every return returns the argument
    for i in range(x.shape[0]):
        if x[i] < 0:
            x[i] = 0.0
            return x
    return x


def total_until_negative(x):        # every return returns one local number
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            return s
        s += x[i]
    return s


def test_every_return_of_one_name_returns_that_object():
    """``return x`` inside a loop and after it: the caller's array itself, as in Python (it
    was a copy); a local number returned from both places is its value at the return."""
    for x in (np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0])):
        a, b = x.copy(), x.copy()
        got = cppcodegen.compile(clamp_first_negative, fallback=False)(a)
        assert got is a and clamp_first_negative(b) is b
        np.testing.assert_array_equal(a, b)
        t = cppcodegen.compile(total_until_negative, fallback=False)(x)
        assert t == total_until_negative(x) and type(t) is type(total_until_negative(x))


def two_colour(A):
    """BFS 2-colouring that returns (False, side) from inside three loops."""
    n = A.shape[0]
    side = np.full(n, -1, dtype=np.int64)
    for s in range(n):
        if side[s] >= 0:
            continue
        side[s] = 0
        q = [s]
        while len(q):
            u = q.pop(0)
            for v in range(n):
                if A[u, v]:
                    if side[v] < 0:
                        side[v] = 1 - side[u]
                        q.append(v)
                    elif side[v] == side[u]:
                        return False, side
    return True, side


def scan_rows(a, t):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > t:
                a[i, j] = t
                return i, a
    return -1, a


def _bipartite(n, odd_cycle):
    A = np.zeros((n, n), np.int8)
    for k in range(n - 1):
        A[k, k + 1] = A[k + 1, k] = 1
    if odd_cycle:
        A[0, 2] = A[2, 0] = 1
    return A


@pytest.mark.parametrize("odd", [False, True])
def test_a_name_returned_in_every_tuple_is_not_carried(odd):
    """``return False, side`` in a loop and ``return True, side`` after it: ``side`` is
    returned as it is at the end (nothing runs after a return), so the loops do not carry a
    copy of it; the result is the array the plain function returns."""
    check_against_numpy(two_colour, _bipartite(40, odd))
    src = convert_source(two_colour)
    assert "__ccg_ret_0 = False" in src and "__ccg_ret_1" not in src, src


@pytest.mark.parametrize("t", [0.5, 2.0])
def test_an_argument_named_in_every_return_is_the_argument(t):
    f = cppcodegen.compile(scan_rows, options={"fallback": False})
    a = R.random((5, 6)) * 1.5
    want = a.copy()
    res = f(a, t)
    ref = scan_rows(want, t)
    assert res[0] == ref[0] and res[1] is a
    np.testing.assert_array_equal(a, want)
