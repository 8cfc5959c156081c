"""Time-stepping loops that rewrite most of an array from its neighbours (a stencil's step)
compute the new values into a second buffer and trade the two buffers for the next step
(passes/lower_assign.py ``write_back(swap=True)``) instead of a temporary copied back. Each
program is checked bit for bit against Python running it (the same operations in the same
order per element), with odd and even step counts (an odd count ends in the other buffer,
copied home once), and the C++ is checked to trade buffers where it should."""
import numpy as np
import pytest

import cppcodegen
from test_auto_parallel import _convection    # u[j, i] from un = u.copy(), element loops


def heat(u, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    return u


def heat_with_boundaries(u, steps):
    """Interior step, then Neumann edges copied from their neighbours (CFD-tutorial style)."""
    u = u.copy()
    for _ in range(steps):
        un = u.copy()
        u[1:-1, 1:-1] = un[1:-1, 1:-1] + 0.2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[:-2, 1:-1])
        u[0, :] = u[1, :]
        u[-1, :] = u[-2, :]
    return u


def chained_overlap(u, steps):
    """Assignments after the step that read what another one writes (row 0 from row 5, then
    row 5 itself): they cannot be stored in place in any order but the graph's."""
    u = u.copy()
    for _ in range(steps):
        un = u.copy()
        u[1:-1] = 0.5 * (un[:-2] + un[2:])
        u[0] = u[5] * 0.5
        u[5] = u[0] + u[-1]
        u[-1] = u[-1] * 0.9
    return u


def jacobi_until(u, f, tol):
    u = u.copy()
    err = tol + 1.0
    it = 0
    while err > tol and it < 500:
        new = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - f[1:-1, 1:-1])
        err = np.abs(new - u[1:-1, 1:-1]).max()
        u[1:-1, 1:-1] = new
        it += 1
    return u, it


def wave(u0, steps):
    """Leapfrog: two carried arrays rebound to each other every step."""
    prev = u0.copy()
    cur = u0.copy()
    for _ in range(steps):
        nxt = cur.copy()
        nxt[1:-1] = 2 * cur[1:-1] - prev[1:-1] + 0.3 * (cur[2:] - 2 * cur[1:-1] + cur[:-2])
        prev = cur
        cur = nxt
    return cur, prev


def smooth_3d(v, steps):
    v = v.copy()
    for _ in range(steps):
        v[1:-1, 1:-1, 1:-1] = (v[:-2, 1:-1, 1:-1] + v[2:, 1:-1, 1:-1] + v[1:-1, :-2, 1:-1]
                               + v[1:-1, 2:, 1:-1] + v[1:-1, 1:-1, :-2] + v[1:-1, 1:-1, 2:]) / 6
    return v


def sweeps_per_row_block(u, outer, steps):
    """A time loop inside another loop, the array read after each inner loop."""
    u = u.copy()
    total = 0.0
    for k in range(outer):
        for _ in range(steps):
            u[1:-1] = 0.5 * (u[:-2] + u[2:])
        total += u.sum()
    return u, total


def roll_step(u, steps):
    """A whole new value from shifted copies (no region): computed into the other buffer."""
    for _ in range(steps):
        u = 0.5 * u + 0.25 * (np.roll(u, 1) + np.roll(u, -1))
    return u


def convection_loops(u0, steps):
    """Element loops over a copy of the last step: the inner loops' array (a buffer of the
    body's own) trades places with ``u`` instead of being copied back."""
    return _convection(u0.copy(), steps, 1.0, 0.2, 1.0, 1.5)


def relax_until(u0, tol):
    """The same in a ``while`` loop, with a second carried value computed from both."""
    u = u0.copy()
    change, sweeps = tol + 1.0, 0
    while change > tol and sweeps < 50:
        old = u.copy()
        for i in range(1, u.shape[0] - 1):
            u[i] = 0.5 * (old[i - 1] + old[i + 1])
        change = np.abs(u - old).max()
        sweeps += 1
    return u, sweeps


def poisson_until(b, tol):
    """A Jacobi sweep, its boundary set after it, and the change reduced over the result:
    the chain of assignments is computed into a buffer of its own (chain_buffers.py), the
    reductions read it, and it trades places with ``p``."""
    p = np.zeros_like(b)
    err, it = 1.0, 0
    while err > tol and it < 200:
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1]
                                - 0.01 * b[1:-1, 1:-1])
        p[:, 0] = p[:, 1]
        p[:, -1] = 0
        p[0, :] = 0
        p[-1, :] = p[-2, :]
        err = np.sqrt(np.sum((p - pn) ** 2)) / (np.sqrt(np.sum(pn ** 2)) + 1e-30)
        it += 1
    return p, it


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CASES = [
    ("heat", heat, lambda s: (_r(40, 50), s), True),
    ("heat_float32", heat, lambda s: (_r(40, 50).astype(np.float32), s), True),
    ("heat_with_boundaries", heat_with_boundaries, lambda s: (_r(30, 20), s), True),
    ("chained_overlap", chained_overlap, lambda s: (_r(40, 6), s), False),
    ("jacobi_until", jacobi_until, lambda s: (_r(24, 24), _r(24, 24, seed=1), 1e-3 * s), True),
    ("wave", wave, lambda s: (_r(300), s), False),
    ("smooth_3d", smooth_3d, lambda s: (_r(10, 11, 12), s), True),
    ("sweeps_per_row_block", sweeps_per_row_block, lambda s: (_r(64), 3, s), True),
    ("roll_step", roll_step, lambda s: (_r(100), s), False),
    ("convection_loops", convection_loops, lambda s: (_r(13, 17), s), True),
    ("relax_until", relax_until, lambda s: (_r(40), 1e-2 / (s + 1)), True),
    ("poisson_until", poisson_until, lambda s: (_r(20, 24), 10.0 ** -s), True),
]


def _same(got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.ndim == 0 and want.dtype.kind == "f":       # a sum: NumPy's pairwise order
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,fn,make,trades", CASES, ids=[c[0] for c in CASES])
def test_steps_match_python_for_odd_and_even_counts(name, fn, make, trades):
    f = cppcodegen.compile(fn)
    for steps in (0, 1, 2, 7, 10):
        args = make(steps)
        kept = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        _same(f(*args), fn(*kept))
        for a, k in zip(args, kept):                    # the arguments are not changed
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, k)
    src = f.explain(*make(3)).source
    if trades:
        assert "std::swap(" in src


def test_argument_updated_by_inner_loops_stays_in_its_memory():
    """The caller's array is updated where it is (it cannot trade places with the body's
    copy, which would leave the result in memory the caller does not see)."""
    f = cppcodegen.compile(_convection)
    for steps in (0, 1, 2, 5):
        got, want = _r(9, 11), _r(9, 11)
        assert f(got, steps, 1.0, 0.2, 1.0, 1.5) is got
        _convection(want, steps, 1.0, 0.2, 1.0, 1.5)
        np.testing.assert_array_equal(got, want)


def test_dynamic_sizes_still_right():
    f = cppcodegen.compile(heat, dynamic=True)
    for shape in ((20, 30), (33, 17), (64, 64)):
        u = _r(*shape)
        _same(f(u, 5), heat(u, 5))


def edge_from_itself(u, steps):
    """Ping-pong buffers (``u, v = v, u``) whose edge row is updated from itself after the
    interior: the edge store reads what it writes, so it cannot go into the other buffer
    before the trade; it was dropped with the trade (a wrong edge at every size)."""
    v = np.zeros_like(u)
    for _ in range(steps):
        v[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1]
        v[0, :] = v[0, :] + v[1, :]
        u, v = v, u
    return u


def edge_copied(u, steps):
    """The same with the edge copied from the next row (apart from what it writes: stored
    into the other buffer, then the trade); its build for symbolic sizes lost the copy."""
    v = np.zeros_like(u)
    for _ in range(steps):
        v[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1]
        v[0, :] = v[1, :]
        u, v = v, u
    return u


@pytest.mark.parametrize("fn", [edge_from_itself, edge_copied])
@pytest.mark.parametrize("dynamic", [False, True])
def test_ping_pong_edges_stored_after_the_interior(fn, dynamic):
    f = cppcodegen.compile(fn, dynamic=dynamic)
    for n in (5, 6, 9):
        for steps in (1, 2, 3):
            u = np.arange(n * n, dtype=float).reshape(n, n)
            np.testing.assert_array_equal(f(u.copy(), steps), fn(u.copy(), steps))


def reverse_to(x, last):
    for j in range(x.shape[0] // 2):
        x[j], x[last - j] = x[last - j], x[j]
    return x


def swap_row_elements(A, p):
    q = p[0]                    # a row read from an array
    for j in range(A.shape[1]):
        A[0, j], A[q, j] = A[q, j], A[0, j]
    return A


def partition_below(a, pivot):
    k = 0
    for i in range(a.shape[0]):
        if a[i] < pivot:
            a[i], a[k] = a[k], a[i]     # a store at the loop's index, then at a traced one
            k += 1
    return a, k


@pytest.mark.parametrize("fn,make", [
    (reverse_to, lambda n: (np.arange(float(n)), np.int64(n - 1))),
    (swap_row_elements, lambda n: (np.arange(float(n * 5)).reshape(5, n), np.array([3]))),
    (partition_below, lambda n: (np.random.default_rng(n).standard_normal(n), 0.3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_swap_at_a_traced_index_stores_two_elements(fn, make):
    """``x[j], x[q] = x[q], x[j]`` with q a traced value: a store and a scatter of one element
    each, both values read first (a copy of the whole array per iteration made the loop
    quadratic: 0.5-1.4 s for 800 elements, Python 0.6 ms). Compared with Python."""
    for n in (9, 64):
        args = make(n)
        copies = lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in args]  # noqa
        want = fn(*copies())
        got = cppcodegen.compile(fn, fallback=False)(*copies())
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_array_equal(g, w)
    ir = str(cppcodegen.explain(fn, *make(64))).split("== loop IR ==")[1].split("== kernels")[0]
    body = ir.split("for lv", 1)[1]
    assert "scatter in0" in body and "over [64]" not in body and "over [5, 64]" not in body


def update_then_swap(a, reps):
    for _ in range(reps):
        a[2] += 1.0
        a[0], a[1] = a[1], a[0]
    return a


def quicksort(a):
    """An iterative quicksort: a swap in the partition loop, and one after it."""
    n = a.shape[0]
    stack = np.empty(2 * n + 2, dtype=np.int64)
    top = 2
    stack[0], stack[1] = 0, n - 1
    while top > 0:
        top -= 2
        lo, hi = stack[top], stack[top + 1]
        if lo >= hi:
            continue
        p = a[hi]
        i = lo
        for j in range(lo, hi):
            if a[j] < p:
                a[i], a[j] = a[j], a[i]
                i += 1
        a[i], a[hi] = a[hi], a[i]
        stack[top], stack[top + 1], stack[top + 2], stack[top + 3] = lo, i - 1, i + 1, hi
        top += 4
    return a


@pytest.mark.parametrize("fn,make", [
    (update_then_swap, lambda n: (np.arange(float(n)), 7)),
    (quicksort, lambda n: (np.random.default_rng(n).random(n),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_swaps_after_other_stores_stay_element_stores(fn, make):
    """A swap after another store to the array (``a[2] += 1`` in place), or after the loop
    that partitioned it: the two elements read first, then stored; no copy of the whole
    array (it made an iterative quicksort quadratic, slower than Python)."""
    for n in (9, 64):
        args = make(n)
        want = fn(*[a.copy() if hasattr(a, "copy") else a for a in args])
        got = cppcodegen.compile(fn, fallback=False)(*[a.copy() if hasattr(a, "copy") else a
                                                        for a in args])
        np.testing.assert_array_equal(got, want)
    ir = str(cppcodegen.explain(fn, *make(64))).split("== loop IR ==")[1].split("== kernels")[0]
    assert "over [64]" not in ir
