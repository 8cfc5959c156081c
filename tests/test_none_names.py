"""Names bound to None on some paths (``best = None`` before a loop that binds a number).

A compiled loop carries such a name as a value with a flag (``frontend/optionals.py``):
``x is None`` reads the flag, a returned name is None where the flag says so, and an operand
read where it is None raises TypeError as Python's operators do. Each program is compared
with the plain Python function: the value and its type, or the error's type.
"""
import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import UnsupportedError


def nearest(pts, q):                # the idiom: None until the first candidate
    best = None
    best_i = -1
    for i in range(pts.shape[0]):
        d = np.sum((pts[i] - q) ** 2)
        if best is None or d < best:
            best = d
            best_i = i
    return best_i, best


def first_above(x, t):              # None when nothing is found, an int otherwise
    found = None
    for i in range(x.shape[0]):
        if x[i] > t:
            found = i
            break
    return found


def largest_gap(x):                 # `is not None` with `and`, the previous item
    prev = None
    gap = 0.0
    for v in x:
        if prev is not None and v - prev > gap:
            gap = v - prev
        prev = v
    return gap, prev


def converge(x0, tol):              # a while loop on a value that starts as None
    x, last = x0, None
    steps = 0
    while last is None or abs(x - last) > tol:
        last = x
        x = 0.5 * (x + 2.0 / x)
        steps += 1
    return x, steps


def grid_min(a):                    # nested loops, a tuple of ints that may be None
    best = None
    bi = bj = None
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 0 and (best is None or a[i, j] < best):
                best, bi, bj = a[i, j], i, j
    return best, bi, bj


def best_row(x):                    # an array that may be None
    row = None
    for i in range(x.shape[0]):
        if x[i].sum() > 1.5:
            row = x[i] * 2.0
    return row


def branch_none(a):                 # a branch on a value, no loop
    m = None
    if a.sum() > 0:
        m = a.max()
    return m, m is None


def sum_from_none(x):               # Python raises TypeError on the first item
    s = None
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def ok_guarded_sum(x):              # ... unless the first item starts it
    s = None
    for i in range(x.shape[0]):
        s = x[i] if s is None else s + x[i]
    return s


def int_none_on_some(x):            # reset to None inside the loop
    last_neg = None
    for i in range(x.shape[0]):
        if x[i] < 0:
            last_neg = i
        elif x[i] > 0.9:
            last_neg = None
    return last_neg


def heat_until_steady(u0, tol, maxit):   # an array that may be None, an update in place
    u = u0.copy()
    prev = None
    for it in range(maxit):
        un = u.copy()
        u[1:-1] = un[1:-1] + 0.2 * (un[2:] - 2 * un[1:-1] + un[:-2])
        if prev is not None and np.abs(u - prev).max() < tol:
            return u, it
        prev = u.copy()
    return u, maxit


def argmax_pair(x):                 # two names bound to None by one tuple assignment
    bi, bv = None, None
    for i, v in enumerate(x):
        if bv is None or v > bv:
            bi, bv = i, v
    return bi


def find_pair(x, t):                # a tuple or None as a whole
    for i in range(len(x)):
        if x[i] > t:
            return i, x[i]
    return None


def find_cell(a, t):                # a nested tuple, or None by falling off the end
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > t:
                return (i, j), a[i, j]


def stats_or_none(a):               # a branch on a value, no loop
    if a.sum() > 0:
        return a.max(), int(a.argmax())
    return None


def pair_with_none_item(x, t):      # None as one item of the tuple
    for i in range(len(x)):
        if x[i] > t:
            return i, x[i]
    return -1, None


def fill_with_last_seen(x, t):      # reads shown to hold a value by an is-None test
    last = None
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > t:
            last = x[i]
        if last is not None:
            out[i] = last
    return out, last if last is not None else -1.0


def in_a_branch(x):                 # the idiom nested in a branch on values in the loop
    lo = None
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            if lo is None or x[i] < lo:
                lo = x[i]
        else:
            s += x[i]
    return (-7 if lo is None else lo), s


def min_above_or_flag(x, t):        # a return in the loop, the name returned after it
    best = None
    for i in range(len(x)):
        if x[i] > 0.99:
            return -1.0
        if x[i] > t and (best is None or x[i] < best):
            best = x[i]
    return best


def last_state(u, n):               # an array, the loop may run no time
    prev = None
    for k in range(n):
        if k > 5:
            return u * 2.0
        prev = u + k
    return prev


def running_min_max(x):             # two names from None in one loop
    lo = hi = None
    for v in x:
        if lo is None or v < lo:
            lo = v
        if hi is None or v > hi:
            hi = v
    return lo, hi


def smallest_index_positive(x):     # a name read only by the next iteration's test
    bi = None
    m = None
    for i in range(x.shape[0]):
        if x[i] > 0 and (m is None or x[i] < m):
            m = x[i]
            bi = i
    return bi


def stop_or_length(x, t):           # a value on every path after ``if stop is None:``
    stop = None
    for i in range(len(x)):
        if x[i] < t:
            stop = i
            break
    if stop is None:
        stop = len(x)
    return x[:stop].sum()


def last_run_start(x, t):           # a copy under ``elif start is not None:`` in the loop
    start = None
    last = -1
    for i in range(len(x)):
        if x[i] > t:
            if start is None:
                start = i
        elif start is not None:
            last = start
            start = None
    return last


def index_under_or(x):              # x[idx] read only where idx holds a value
    idx = None
    for i in range(len(x)):
        if idx is None or x[i] < x[idx]:
            idx = i
    return idx


def small_or_false(x, t):           # Python's bool where best is None, NumPy's elsewhere
    best = None
    for v in x:
        if v > t and (best is None or v < best):
            best = v
    return best is not None and best < 0.9


def none_on_every_path(x):
    res = None
    for v in x:
        if v > 10.0:
            res = None
    return res


def rows_since_negative(X):         # an array reset to None, made afresh, or added to
    acc = None
    for i in range(X.shape[0]):
        if X[i].sum() < 0:
            acc = None
        elif acc is None:
            acc = X[i].copy()
        else:
            acc = acc + X[i]
    return acc


def last_big_total(x):              # TypeError until the first item above 0.5
    s = None
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            s = x[i]
        total += s
    return total


RNG = np.random.default_rng(7)


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if want is None or isinstance(want, (bool, int)):
        assert type(got) is type(want) and got == want, (got, want)
        return
    assert type(got) is type(want), (type(got), type(want))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.shape(got) == np.shape(want)


CASES = [
    (nearest, lambda n: (RNG.random((n, 3)), RNG.random(3))),
    (first_above, lambda n: (RNG.random(n), 0.97)),
    (largest_gap, lambda n: (np.cumsum(RNG.random(n)),)),
    (grid_min, lambda n: (RNG.standard_normal((n, 4)),)),
    (best_row, lambda n: (RNG.random((n, 3)),)),
    (branch_none, lambda n: (RNG.standard_normal(n) + 0.2,)),
    (ok_guarded_sum, lambda n: (RNG.random(n),)),
    (int_none_on_some, lambda n: (RNG.standard_normal(n),)),
    (last_big_total, lambda n: (RNG.random(n),)),
    (heat_until_steady, lambda n: (RNG.random(n + 3), 1e-4, 2 * n)),
    (argmax_pair, lambda n: (RNG.random(n),)),
    (find_pair, lambda n: (RNG.random(n), 0.97)),
    (find_cell, lambda n: (RNG.random((n, 3)), 0.97)),
    (stats_or_none, lambda n: (RNG.standard_normal(n) + 0.1,)),
    (pair_with_none_item, lambda n: (RNG.random(n), 0.97)),
    (fill_with_last_seen, lambda n: (RNG.random(n), 0.9)),
    (in_a_branch, lambda n: (RNG.standard_normal(n),)),
    (min_above_or_flag, lambda n: (RNG.random(n), 0.9)),
    (last_state, lambda n: (RNG.random(3), n % 9)),
    (running_min_max, lambda n: (RNG.standard_normal(n),)),
    (smallest_index_positive, lambda n: (RNG.standard_normal(n),)),
    (stop_or_length, lambda n: (RNG.random(n), 0.05)),
    (last_run_start, lambda n: (RNG.random(n), 0.3)),
    (index_under_or, lambda n: (RNG.random(n),)),
    (small_or_false, lambda n: (RNG.random(n), 0.8)),
    (none_on_every_path, lambda n: (RNG.random(n),)),
    (rows_since_negative, lambda n: (RNG.standard_normal((n, 3)),)),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_like_python_at_every_size(fn, make):
    f = cppcodegen.compile(fn, fallback=False)
    for n in (0, 1, 2, 9, 300):
        args = make(n)
        try:
            want = fn(*args)
        except Exception as e:      # noqa: BLE001 -- the compiled one must raise it too
            with pytest.raises(type(e)):
                f(*args)
            continue
        _same(f(*args), want)


def test_loops_are_compiled_not_unrolled():
    """The loop at 300 items is one compiled loop, and so is the one build for any length."""
    f = cppcodegen.compile(nearest, fallback=False, dynamic=True)
    pts, q = RNG.random((300, 3)), RNG.random(3)
    _same(f(pts, q), nearest(pts, q))
    ir = str(cppcodegen.explain(f, pts, q).program)
    assert "for lv0 in range(0, n0, 1)" in ir and len(ir.splitlines()) < 40, ir
    pts = RNG.random((3000, 3))
    _same(f(pts, q), nearest(pts, q))
    assert len(f.variants) == 1


def test_while_loop_from_none():
    f = cppcodegen.compile(converge, fallback=False)
    for x0, tol in ((1.0, 1e-12), (100.0, 1e-9), (1.5, 10.0)):
        _same(f(x0, tol), converge(x0, tol))


def test_operand_that_is_none_raises_type_error():
    """Where the flag is known only when the program runs, a read as an operand is checked
    then; where it is known while tracing (None on the first iteration whatever the values),
    the trace fails as Python does and names the line (the fallback runs Python)."""
    f = cppcodegen.compile(last_big_total, fallback=False)
    x = RNG.random(20)
    x[0], x[1] = 0.7, 0.2
    assert f(x) == last_big_total(x)
    x[0] = 0.3
    with pytest.raises(TypeError):
        last_big_total(x)
    with pytest.raises(TypeError, match=r"variable 's' is None where it is used as an "
                                        r"operand \(at .*test_none_names.py:\d+\)"):
        f(x)
    with pytest.raises(TypeError, match=r"None used as an array operand at .*:83"):
        cppcodegen.compile(sum_from_none, fallback=False)(x)
    g = cppcodegen.compile(sum_from_none, options={"fallback": True})
    with pytest.warns(cppcodegen.FallbackWarning), pytest.raises(TypeError):
        g(x)
    assert g(x[:0]) is None


def copy_of_maybe_none(x):          # a copy of a name that may be None: not compiled
    best = None
    for i in range(x.shape[0]):
        if best is None or x[i] > best:
            best = x[i]
    other = best
    return other


def test_other_reads_are_refused_or_run_by_python():
    x = RNG.random(50)
    with pytest.raises(UnsupportedError, match=r"variable 'best' may be None at .*:\d+"):
        cppcodegen.compile(copy_of_maybe_none, fallback=False)(x)
    with pytest.warns(cppcodegen.FallbackWarning):
        got = cppcodegen.compile(copy_of_maybe_none, options={"fallback": True})(x)
    assert got == copy_of_maybe_none(x)


def test_reference_backend_agrees():
    pts, q = RNG.random((40, 3)), RNG.random(3)
    for backend in ("numpy", "check"):
        f = cppcodegen.compile(nearest, backend=backend, fallback=False)
        _same(f(pts, q), nearest(pts, q))
        _same(f(pts[:0], q), nearest(pts[:0], q))
        g = cppcodegen.compile(find_pair, backend=backend, fallback=False)
        for t in (0.5, 2.0):
            _same(g(pts[:, 0], t), find_pair(pts[:, 0], t))


def test_plain_none_names_keep_python_semantics():
    """Without a compiled construct between the binding and the read, the name is what
    Python has: here a default argument replaced by an array."""
    def scale(x, out=None):
        if out is None:
            out = np.empty_like(x)
        out[:] = x * 2.0
        return out
    x = RNG.random(8)
    np.testing.assert_array_equal(cppcodegen.compile(scale, fallback=False)(x), x * 2.0)


def _nearest_or_none(x, t):         # a helper whose result may be None
    best = None
    for i in range(x.shape[0]):
        if x[i] > t and (best is None or x[i] < best):
            best = x[i]
    return best


def calls_helper(x, t):
    b = _nearest_or_none(x, t)
    if b is None:
        return -1.0
    return b * 2.0


def test_a_helper_that_may_return_none_is_not_compiled_into_a_wrong_result():
    """The caller's ``is None`` is Python's own on the helper's result: a value that is None
    only when the program runs cannot reach it, so the trace refuses (the fallback runs
    Python)."""
    x = RNG.random(40)
    with pytest.raises(UnsupportedError, match="a helper function returns None or a value"):
        cppcodegen.compile(calls_helper, fallback=False)(x, 0.5)
    g = cppcodegen.compile(calls_helper, options={"fallback": True})
    with pytest.warns(cppcodegen.FallbackWarning):
        assert g(x, 2.0) == calls_helper(x, 2.0) == -1.0
    assert g(x, 0.5) == calls_helper(x, 0.5)


def smallest_eq_none(x):            # == None, as a new user writes it
    best = None
    for v in x:
        if best == None or v < best:    # noqa: E711
            best = v
    return best, best != None           # noqa: E711


def rows_eq_none(X):                # an array compared with == None: NumPy's, element-wise
    prev = None
    for i in range(X.shape[0]):
        if prev is None or X[i].sum() > prev.sum():
            prev = X[i] * 1.0
    return prev == None                 # noqa: E711


def test_equality_with_none():
    """``x == None`` of a number that may be None is ``x is None`` (a Python bool); of an array
    NumPy compares element by element, which a flag known only when the program runs cannot
    give: refused, naming the line."""
    x = RNG.random(50)
    f = cppcodegen.compile(smallest_eq_none, fallback=False)
    for a in (x, x[:0]):
        _same(f(a), smallest_eq_none(a))
    with pytest.raises(UnsupportedError, match=r"compared with == None \(at .*test_none_names"):
        cppcodegen.compile(rows_eq_none, fallback=False)(RNG.random((40, 3)))
