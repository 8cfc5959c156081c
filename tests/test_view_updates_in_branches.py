"""An array updated in place through a named view inside a branch, then through its own
name (an abelian sandpile's topple: ``inner = g[1:-1, 1:-1]; q = inner // 4; if not
q.any(): break; inner -= 4 * q; g[:-2, 1:-1] += q``). The branch is traced again once it
knows the view; the first trace's update of ``g`` stayed, so ``q`` was added twice (the
sandpile never settled: a hang) or, at the top level, a value of the branch leaked out of it
(a TraceError)."""
import numpy as np
import pytest

import cppcodegen


def topple_1d(g):
    while True:
        inner = g[1:]
        q = inner // 4
        if not q.any():
            break
        inner -= 4 * q
        g[:-1] += q
    return g


def topple_2d(grid):
    g = np.zeros((grid.shape[0] + 2, grid.shape[1] + 2), dtype=grid.dtype)
    g[1:-1, 1:-1] = grid
    iters = 0
    while True:
        inner = g[1:-1, 1:-1]
        q = inner // 4
        if not q.any():
            break
        inner -= 4 * q
        g[:-2, 1:-1] += q
        g[2:, 1:-1] += q
        g[1:-1, :-2] += q
        g[1:-1, 2:] += q
        g[0, :] = 0
        g[-1, :] = 0
        g[:, 0] = 0
        g[:, -1] = 0
        iters += 1
    return g[1:-1, 1:-1], iters


def branch_at_top(g):
    inner = g[1:]
    q = inner // 4
    if q.any():
        inner -= 4 * q
        g[:-1] += q
    return g


def branch_in_loop(g, n):
    for _ in range(n):
        branch_at_top(g)    # (a helper: traced inline, its branch in the loop's body)
    return g


@pytest.mark.parametrize("fn, args", [
    (topple_1d, (np.array([0, 5, 0], np.int64),)),
    (topple_1d, (np.array([3, 9, 17, 0, 4], np.int64),)),
    (topple_2d, (np.array([[5, 0, 0], [0, 0, 0], [0, 0, 7]], np.int32),)),
    (topple_2d, (np.full((6, 5), 9, np.int64),)),
    (branch_at_top, (np.array([0, 5, 0, 9], np.int64),)),
    (branch_in_loop, (np.array([0, 5, 0, 9, 30], np.int64), 4)),
])
def test_updates_through_a_view_and_the_array(fn, args):
    want_args = [np.copy(a) for a in args]
    want = fn(*want_args)
    got_args = [np.copy(a) for a in args]
    got = cppcodegen.compile(fn, fallback=False)(*got_args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
    for g, w in zip(got_args, want_args):       # (the argument updated as Python updates it)
        np.testing.assert_array_equal(g, w)
