"""A returned slice whose bounds come from array values (``return out[:k]`` after a loop
counted ``k``): a view of the program's output array, taken with this run's bounds, so one
compiled function serves every count (``frontend/dataslice.py`` PendingSlice,
``ir.graph.SliceOut``)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen
from test_sweep_regressions import sieve     # (a while loop over a sieve's flags)

RNG = np.random.default_rng(7)


def filled_above(x, t):
    out = np.zeros(x.shape[0])
    k = 0
    for i in range(x.shape[0]):
        if x[i] > t:
            out[k] = x[i]
            k += 1
    return out, k


def above(x, t):
    out, k = filled_above(x, t)
    return out[:k]


def bfs_order(adj, start):
    n = adj.shape[0]
    queue = np.empty(n, np.int64)
    seen = np.zeros(n, np.bool_)
    head, tail = 0, 1
    queue[0] = start
    seen[start] = True
    while head < tail:
        v = queue[head]
        head += 1
        for w in range(n):
            if adj[v, w] and not seen[w]:
                seen[w] = True
                queue[tail] = w
                tail += 1
    return queue[:tail], tail


def rows_and_tail(m, t):
    k = 0
    for i in range(m.shape[0]):
        if m[i, 0] > t:
            k = i
    y = m[k:, 1:]             # a view: the update below shows in it, as in NumPy
    m[-1, -1] = -5.0
    k += 1                    # the slice keeps the bound's value when it was taken
    return y, m[:k:2], k


def of_argument(x, t):
    k = 0
    while k < x.shape[0] and x[k] < t:
        k += 1
    return x[:k]


@pytest.mark.parametrize("t", [-1.0, 0.3, 0.7, 2.0])
def test_counted_prefix_matches_python(t):
    c = cppcodegen.compile(above)
    x = RNG.random(50)
    got, want = c(x, t), above(x, t)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert len(c.variants) == 1     # every count: one compiled function


def test_bfs_queue_prefix():
    c = cppcodegen.compile(bfs_order)
    for seed in range(4):
        adj = np.random.default_rng(seed).random((12, 12)) > 0.8
        (got, n_got), (want, n_want) = c(adj, 0), bfs_order(adj, 0)
        np.testing.assert_array_equal(got, want)
        assert n_got == n_want and type(n_got) is type(n_want)


@pytest.mark.parametrize("t", [-1.0, 0.5, 2.0])
def test_views_see_later_updates_and_bounds_keep_their_value(t):
    m = RNG.random((9, 4))
    a, b = m.copy(), m.copy()
    got, want = cppcodegen.compile(rows_and_tail)(a, t), rows_and_tail(b, t)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(a, b)


def test_slice_of_an_argument_is_a_view_of_the_callers_array():
    x = np.array([0.1, 0.2, 0.9, 0.3])
    r = cppcodegen.compile(of_argument)(x, 0.5)
    np.testing.assert_array_equal(r, [0.1, 0.2])
    assert np.shares_memory(r, x)


def test_check_backend_and_float_bound():
    x = RNG.random(30)
    got = cppcodegen.compile(above, backend="check")(x, 0.5)
    np.testing.assert_array_equal(got, above(x, 0.5))

    def float_bound(x):
        return x[:x.sum()]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        cppcodegen.compile(float_bound)(x)


def find_pair(x, t):                # a tuple on one path, a number on another
    for i in range(len(x)):
        if x[i] > t:
            return i, x[i]
    return -1


def test_returns_of_different_kinds_name_the_function_and_its_returns():
    import inspect
    start = inspect.getsourcelines(find_pair)[1]
    with pytest.raises(cppcodegen.TraceError,
                       match=rf"find_pair \(at .*test_returned_data_slices.py:{start}; its "
                             rf"returns at lines {start + 3}, {start + 4}\)"):
        cppcodegen.compile(find_pair)(np.array([1.0, 4.0]), 2.5)


# A slice outside every loop whose bounds come from array values, read (not only returned):
# where the body cannot be traced in a loop of one trip (a result of that length), the read
# is a copy made between kernels, its length a count known after that step.

def sorted_above(x, t):
    out, k = filled_above(x, t)
    return np.sort(out[:k]) * 2.0, k


def hit_rows(p, r):
    hits = np.empty_like(p)
    k = 0
    for i in range(p.shape[0]):
        if p[i, 0] ** 2 + p[i, 1] ** 2 < r * r:
            hits[k] = p[i]
            k += 1
    return hits[:k, ::-1] + 1.0, hits[:k, 0].mean() if k else 0.0


def read_then_written(x, t):
    out, k = filled_above(x, t)
    v = out[:k]
    w = v * 2.0             # v as it is now
    out[0] = -1.0           # seen through the view v below, as NumPy shows it
    return v * 3.0, w, v + 0.0


def write_through(x, t):
    out, k = filled_above(x, t)
    v = out[:k]
    v *= 2.0                # a write through the view: into out
    return out * 1.0, v + 1.0


@pytest.mark.parametrize("t", [-1.0, 0.5, 0.97, 2.0])
def test_read_slices_of_run_time_length_are_copied_between_kernels(t):
    x = RNG.random(200)
    p = RNG.standard_normal((150, 2))
    cases = [(sorted_above, (x, t)), (hit_rows, (p, 1.0 + t)), (read_then_written, (x, t))]
    for fn, args in cases:
        c = cppcodegen.compile(fn)
        with warnings.catch_warnings():     # (a copy between kernels: warned once)
            warnings.simplefilter("ignore")
            got = c(*args)
        want = fn(*args)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-12)
        x2 = RNG.random(333)    # another size and count: the same build (or a count of 0/1)
        p2 = RNG.standard_normal((70, 2))
        again = fn(*((x2, t) if fn is not hit_rows else (p2, 1.0 + t)))
        for g, w in zip(c(*((x2, t) if fn is not hit_rows else (p2, 1.0 + t))), again):
            np.testing.assert_allclose(g, w, rtol=1e-12)


def test_a_write_through_a_slice_of_run_time_length_is_not_into_a_copy():
    x = RNG.random(100)
    with pytest.raises(cppcodegen.DataDependentError, match="known only at run time"):
        cppcodegen.compile(write_through)(x, 0.5)
    with pytest.warns(UserWarning):
        got = cppcodegen.compile(write_through, fallback=True)(x, 0.5)
    for g, w in zip(got, write_through(x, 0.5)):
        np.testing.assert_array_equal(g, w)


def grown_by_append(x, t):
    out = np.array([])
    for v in x:
        if v > t:
            out = np.append(out, v)
    return out


def test_an_array_grown_in_a_loop_is_refused_saying_what_compiles():
    x = RNG.random(20)
    with pytest.raises(cppcodegen.TraceError, match=r"rebound .* to an array of shape \(1,\) "
                       r"\(it was \(0,\)\): an array grown in a loop .* use out\[:k\]"):
        cppcodegen.compile(grown_by_append)(x, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(grown_by_append, fallback=True)(x, 0.5)
    np.testing.assert_array_equal(got, grown_by_append(x, 0.5))


def primes_and_pairs(n):
    p = np.nonzero(sieve(n))[0]
    return p, p[:, None] * np.ones(2), p.sum()


@pytest.mark.parametrize("fn, calls", [
    (primes_and_pairs, [(50,), (60,), (1,), (2,), (3,), (0,), (100,)]),
    (sorted_above, [(np.arange(10.0), 3.0), (np.arange(12.0), 2.0), (np.arange(12.0), 10.5),
                    (np.arange(12.0), 20.0), (np.arange(5.0), 3.5), (np.arange(7.0), 0.5)])])
def test_a_count_of_values_a_loop_computed_is_not_learned_by_running_the_loop(fn, calls):
    """``np.nonzero`` / a copied ``out[:k]`` of arrays a compiled loop filled: the count is a
    symbol with a hint, not this call's count (the loop run in Python to learn it took
    minutes for a sieve of 10^6); counts of 0, 1 and others all match NumPy."""
    f = cppcodegen.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in calls:
            for g, w in zip(f(*args), fn(*args)):
                assert np.shape(g) == np.shape(w)
                np.testing.assert_array_equal(g, w)


def _neighbours(pos, rlist):
    n = pos.shape[0]
    start = np.zeros(n + 1, dtype=np.int64)
    nbrs = np.empty(n * n, dtype=np.int64)
    k = 0
    for i in range(n):
        start[i] = k
        for j in range(i + 1, n):
            d = pos[i] - pos[j]
            if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < rlist * rlist:
                nbrs[k] = j
                k += 1
    start[n] = k
    return start, nbrs[:k]


def pair_forces(pos, rlist):
    """A helper's returned ``nbrs[:k]`` (a length the run decides, made outside every loop)
    read by the loops that follow: the whole body is traced again in a loop of one trip."""
    start, nbrs = _neighbours(pos, rlist)
    n = pos.shape[0]
    f = np.zeros((n, 3))
    for i in range(n):
        for p in range(start[i], start[i + 1]):
            j = nbrs[p]
            d = pos[i] - pos[j]
            f[i] += d
            f[j] -= d
    return f, len(nbrs)


@pytest.mark.parametrize("rlist", [0.0, 1.0, 9.0])
def test_a_helpers_data_slice_read_by_a_later_loop(rlist):
    pos = RNG.random((60, 3)) * 4.0
    f = cppcodegen.compile(pair_forces, options={"fallback": False})
    got, want = f(pos, rlist), pair_forces(pos, rlist)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    assert got[1] == want[1]


def test_a_returned_slice_is_taken_by_the_written_out_result():
    """The call's result expression takes ``out[:k]`` itself (``_slice_expr``), as
    ``SliceOut.take`` does, instead of walking the output tree each call."""
    from cppcodegen.ir.graph import SliceOut
    from cppcodegen.runtime.compiled import _build, _build_expr, _owned, _result
    tree = (SliceOut(("buf", 0), (("buf", 1), ("py", 2)),
                     (slice(("bound", 0), ("bound", 1), None), Ellipsis)), ("py", 2))
    values = [np.arange(12.0).reshape(6, 2), np.array(1), np.array(4)]
    expr = _build_expr(tree)
    assert expr is not None and "slice(" in expr
    got = eval(expr, {"res": _result, "owned": _owned, "values": values})
    want = _build(tree, values, ())
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] == 4 and np.shares_memory(got[0], values[0])
    listed = SliceOut(("buf", 0), (("buf", 1),), (slice(None, ("bound", 0), None),), -1)
    assert _build_expr(listed) is None
