"""A serial loop whose element accesses wrap or are checked only near its ends runs as three
loops: the ends as written, the middle with plain loads (backend/loopsplit.py); and a loop
that reads the array's value from before it (``un = u.copy()``) is proved independent
(frontend/parallel.py). Every result and error must be the plain function's."""
import numpy as np
import pytest

import cppcodegen
from benchmarks.loop_workloads import loop_burgers as burgers   # (periodic ends)
from test_new_user_programs import life_periodic_loops as life  # (neighbours with %)

PROVED = "proved independent"


def far_reach(x, k):
    """Positions up to k either side, wrapping: the middle is [k, n - k)."""
    out = np.empty_like(x)
    n = x.shape[0]
    for i in range(n):
        out[i] = x[i - k] + 2.0 * x[(i + k) % n]
    return out


def out_of_range(x):
    """``x[i - 5]`` for a short x: NumPy's IndexError at the first iteration that reaches it."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i - 5]
    return s


def upwind(u0, nt, c, dt, dx):
    u = u0.copy()
    for n in range(nt):
        un = u.copy()
        for i in range(1, u.shape[0]):
            u[i] = un[i] - c * dt / dx * (un[i] - un[i - 1])
    return u


@pytest.mark.parametrize("n", [1, 2, 3, 17, 2001])
def test_periodic_loop_gives_pythons_values(n):
    u0 = np.sin(np.linspace(0, 6.28, n)) + 2
    args = (u0, 5)
    np.testing.assert_allclose(cppcodegen.compile(burgers)(*args), burgers(*args),
                               rtol=1e-13, atol=0)


def test_the_middle_of_a_periodic_loop_has_no_checks():
    u0 = np.sin(np.linspace(0, 6.28, 200)) + 2
    text = cppcodegen.explain(burgers, u0, 5).source
    assert "ccg_lv" in text and "need no check" in text
    assert PROVED in text
    middle = text.split("_mid(", 1)[1].split("\n}\n", 1)[0]     # (the middle's kernel)
    assert "idx_div" not in middle and "checked_index" not in middle, middle


@pytest.mark.parametrize("n, k", [(40, 3), (7, 3), (6, 3), (5, 3), (4, 3), (1, 0), (9, 0)])
def test_positions_reaching_either_side(n, k):
    x = np.arange(n, dtype=np.float64) ** 2
    f = cppcodegen.compile(far_reach)
    if n <= k:          # x[i - k] out of range at i = 0
        with pytest.raises(IndexError):
            far_reach(x, k)
        with pytest.raises(IndexError):
            f(x, k)
        return
    np.testing.assert_array_equal(f(x, k), far_reach(x, k))


@pytest.mark.parametrize("n", [3, 5, 6, 50])
def test_index_errors_stay_numpys(n):
    x = np.arange(float(n))
    f = cppcodegen.compile(out_of_range)
    if n < 5:
        with pytest.raises(IndexError):
            out_of_range(x)
        with pytest.raises(IndexError):
            f(x)
    else:
        assert f(x) == out_of_range(x)


@pytest.mark.parametrize("sizes", [(50, 51, 7), (3000, 2)])
def test_later_sizes_and_a_copy_read_in_the_loop(sizes):
    f = cppcodegen.compile(upwind)
    for n in sizes:
        u0 = np.random.default_rng(n).random(n) + 1
        np.testing.assert_array_equal(f(u0, 4, 1.0, 0.001, 0.01), upwind(u0, 4, 1.0, 0.001, 0.01))
    assert PROVED in f.explain(u0, 4, 1.0, 0.001, 0.01).source


def window_mean(x, w):
    """A running window: ``x[i - w]`` read under ``if i >= w`` (its kernels, specialized for
    the middle, are functions of their own)."""
    n = x.shape[0]
    out = np.full(n, np.nan)
    s = 0.0
    for i in range(n):
        s += x[i]
        if i >= w:
            s -= x[i - w]
        if i >= w - 1:
            out[i] = s / w
    return out


@pytest.mark.parametrize("n, w", [(20, 4), (3, 4), (50, 1)])
def test_a_window_read_under_a_branch_on_the_index(n, w):
    x = np.random.default_rng(n).random(n)
    np.testing.assert_allclose(cppcodegen.compile(window_mean)(x, w), window_mean(x, w),
                               rtol=1e-14, equal_nan=True)


def centered(u, c, nt):
    n = u.shape[0]
    for t in range(nt):
        un = u.copy()
        for i in range(n):
            u[i] = un[i] - 0.5 * c * (un[(i + 1) % n] - un[i - 1])
    return u


@pytest.mark.parametrize("n", [1, 2, 3, 40])
def test_periodic_loop_of_symbolic_size(n):
    """``(i + 1) % n`` with ``n`` a run-time size: a floor division by a size, folded in the
    middle too."""
    f = cppcodegen.compile(centered, dynamic=True)
    u = np.random.default_rng(n).random(n)
    np.testing.assert_allclose(f(u.copy(), 0.3, 4), centered(u.copy(), 0.3, 4), rtol=1e-14)
    if n > 3:
        assert "need no check" in f.explain(u, 0.3, 4).source


@pytest.mark.parametrize("shape", [(7, 9), (1, 1), (2, 5)])
def test_a_remainder_by_the_length_needs_no_check(shape):
    """Life's ``grid[(i + di) % h, (j + dj) % w]`` is in range in every iteration (a remainder by the axis
    length): plain loads, no check per read, and Python's values."""
    g = (np.random.default_rng(1).random(shape) < 0.4).astype(np.uint8)
    f = cppcodegen.compile(life)
    np.testing.assert_array_equal(f(g, 2), life(g, 2))
    assert "checked_index" not in cppcodegen.explain(life, g, 2).source


def relax_rows(W, dist, prev, order):
    """A Dijkstra-style relaxation whose row ``u`` is an array's value read before the inner
    loop: every iteration of that loop gathers at the same row."""
    n = W.shape[0]
    for k in range(order.shape[0]):
        u = order[k]
        best = dist[u]
        for v in range(n):
            nd = best + W[u, v]
            if nd < dist[v]:
                dist[v] = nd
                prev[v] = u
    return dist


def _relax_args(n, order):
    r = np.random.default_rng(n)
    dist = np.full(n, 1e9)
    dist[0] = 0.0
    return r.random((n, n)) * 10, dist, np.full(n, -1), order


@pytest.mark.parametrize("n", [1, 2, 9, 300])
def test_a_row_every_iteration_gathers_at_is_checked_once(n):
    """The first iteration checks the row (NumPy's IndexError, a negative row wrapping), the
    others gather at it unchecked, in SIMD lanes."""
    for order in (np.arange(n)[::-1].copy(), np.arange(n) - n, np.array([0, n - 1, -1])):
        args = _relax_args(n, order)
        want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        expected = relax_rows(*want)
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        np.testing.assert_array_equal(cppcodegen.compile(relax_rows)(*got), expected)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    text = cppcodegen.explain(relax_rows, *_relax_args(50, np.arange(50))).source
    assert "checks the positions every one gathers at" in text
    rest = text.split("_rest(", 1)[1].split("\n}\n", 1)[0]
    assert "false)" in rest and "several at once" in text


@pytest.mark.parametrize("bad", [7, -8, 100])
def test_a_row_out_of_range_raises_before_anything_is_written(bad):
    args = _relax_args(7, np.array([0, 1, bad]))
    with pytest.raises(IndexError):
        relax_rows(*[a.copy() for a in args])
    dist = args[1].copy()
    with pytest.raises(IndexError, match="out of bounds"):
        cppcodegen.compile(relax_rows)(args[0], dist, args[2].copy(), args[3])
    want = args[1].copy()
    try:
        relax_rows(args[0], want, args[2].copy(), args[3])
    except IndexError:
        pass
    np.testing.assert_array_equal(dist, want)


def rows_changing(W, order):
    """The row comes from an array the inner loop writes: not the same in every iteration."""
    total = 0.0
    for k in range(order.shape[0]):
        for v in range(W.shape[1]):
            total += W[order[k], v]
            order[k] = (order[k] + 1) % W.shape[0]
    return total


def test_a_row_the_loop_changes_is_checked_in_every_iteration():
    W = np.random.default_rng(1).random((5, 8))
    order = np.array([0, 3, 4])
    check = cppcodegen.compile(rows_changing)
    a, b = order.copy(), order.copy()
    assert check(W, a) == rows_changing(W, b)
    np.testing.assert_array_equal(a, b)
