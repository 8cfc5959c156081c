"""Loops whose iterations are independent and whose body is element code run several
iterations at once in SIMD lanes (backend/simd.py): each checked against the same function
run by Python, bit for bit (every lane computes what the scalar loop computes, in the same
order), including the values the body assigns, which after the loop hold the last
iteration's, and the loop's index. Trip counts around the vector width, 0 and 1, reversed
steps, branches, integer division under a branch, and the threads' blocks are covered."""
import numpy as np
import pytest

import cppcodegen
from benchmarks.loop_workloads import loop_life, loop_matmul, loop_median3
from test_auto_parallel import float_sum          # s += x[i]: a float sum, in order

LANES = "#pragma omp simd"
ALWAYS = {"parallel_threshold": 0}


def clip_loop(x, lo, hi):
    out = np.empty_like(x)
    i, v = -1, 0.0
    for i in range(x.shape[0]):
        v = x[i]
        if v < lo:
            v = lo
        elif v > hi:
            v = hi
        out[i] = v
    return out, v, i


def reversed_step(x):
    out = np.zeros_like(x)
    t = 0.0
    for i in range(x.shape[0] - 1, -1, -2):
        t = x[i] * i
        out[i] = t - 1.5
    return out, t


def guarded_division(a, b):
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        if b[i] != 0:
            out[i] = a[i] // b[i] + a[i] % b[i]
        else:
            out[i] = -1
    return out


def jacobi_step(u):
    n, m = u.shape
    v = u.copy()
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return v


def mixed_precision(x):
    out = np.empty(x.shape[0], dtype=np.float32)
    for i in range(x.shape[0]):
        y = np.float32(x[i]) * np.float32(3.0)
        out[i] = y + np.float32(x[i] * 0.5)
    return out


def prange_private(x):
    out = np.empty_like(x)
    t = 0.0
    for i in cppcodegen.prange(x.shape[0]):
        t = np.sqrt(abs(x[i])) * 2.0
        out[i] = t + x[i]
    return out, t


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
        else:
            # (the Python type of a value assigned on several paths is the compiled one's:
            # a known difference, not this module's)
            assert g == w and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)


def _rng(seed):
    return np.random.default_rng(seed)


CASES = [
    (loop_matmul, lambda n: (_rng(1).random((5, 7)), _rng(2).random((7, n)))),
    (clip_loop, lambda n: (_rng(3).standard_normal(n), -0.5, 0.5)),
    (reversed_step, lambda n: (_rng(4).random(n),)),
    (guarded_division, lambda n: (_rng(5).integers(-50, 50, n),
                                  _rng(6).integers(-3, 4, n))),
    (jacobi_step, lambda n: (_rng(7).random((4, n + 2)),)),
    (loop_life, lambda n: ((_rng(8).random((5, n + 2)) < 0.4).astype(np.int64),)),
    (mixed_precision, lambda n: (_rng(9).standard_normal(n) * 1e3,)),
    (loop_median3, lambda n: (_rng(15).random((3, n + 2)),)),     # swaps of lane privates
]


@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("n", [1, 2, 7, 17, 64, 1001])
def test_lanes_match_python(fn, make, n):
    args = make(n)
    _same(cppcodegen.compile(fn)(*args), fn(*args))


@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_loop_runs_in_lanes(fn, make):
    assert LANES in cppcodegen.explain(fn, *make(33)).source


def test_zero_trip_keeps_values_from_before():
    x = np.zeros(0)
    _same(cppcodegen.compile(clip_loop)(x, -0.5, 0.5), clip_loop(x, -0.5, 0.5))


@pytest.mark.parametrize("n", [1, 3, 100, 5000])
def test_blocks_on_the_threads_run_in_lanes(n):
    x = _rng(10).standard_normal(n)
    f = cppcodegen.compile(clip_loop, **ALWAYS)
    assert LANES in cppcodegen.explain(f, x, -0.5, 0.5).source or n == 1   # (1: no loop)
    _same(f(x, -0.5, 0.5), clip_loop(x, -0.5, 0.5))


@pytest.mark.parametrize("n", [1, 5, 3000])
def test_prange_private_value_is_the_last_iterations(n):
    x = _rng(11).standard_normal(n)
    f = cppcodegen.compile(prange_private)
    assert LANES in cppcodegen.explain(f, x).source or n == 1
    _same(f(x), prange_private(x))


def dependent(x):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * 0.5 + x[i]
    return out


def checked_gather(x, idx):
    out = np.empty(idx.shape[0])
    for i in range(idx.shape[0]):
        out[i] = x[idx[i]] * 2.0
    return out


def test_dependent_and_checked_loops_stay_scalar():
    x = _rng(12).random(50)
    assert LANES not in cppcodegen.explain(dependent, x).source
    _same(cppcodegen.compile(dependent)(x), dependent(x))
    idx = _rng(13).integers(-50, 50, 40)
    assert LANES not in cppcodegen.explain(checked_gather, x, idx).source
    _same(cppcodegen.compile(checked_gather)(x, idx), checked_gather(x, idx))
    with pytest.raises(IndexError):
        cppcodegen.compile(checked_gather)(x, np.array([0, 50]))


# integer and bool reductions: each lane keeps a share, combined exactly in any order
def count_above(x, t):
    c = 0
    for i in range(x.shape[0]):
        if x[i] > t:
            c += 1
    return c


def int_sum_of_squares(a):
    s = 0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    return s


def wrapping_product_and_bits(a):
    p = np.int32(1)
    bits = np.uint16(0)
    for i in range(a.shape[0]):
        p *= a[i]
        bits |= np.uint16(a[i]) & np.uint16(0xF0F)
    return p, bits


def int_max_min(a):
    hi = np.int16(-32768)
    lo = np.int16(32767)
    for i in range(a.shape[0]):
        hi = max(hi, a[i])
        lo = np.minimum(lo, a[i])
    return hi, lo


REDUCTIONS = [
    (count_above, lambda n: (_rng(20).standard_normal(n), 0.25)),
    (int_sum_of_squares, lambda n: (_rng(21).integers(-2**31, 2**31, n),)),   # wraps int64
    (wrapping_product_and_bits, lambda n: (_rng(22).integers(-9, 10, n).astype(np.int32),)),
    (int_max_min, lambda n: (_rng(23).integers(-30000, 30000, n).astype(np.int16),)),
]


@pytest.mark.parametrize("fn, make", REDUCTIONS, ids=[c[0].__name__ for c in REDUCTIONS])
@pytest.mark.parametrize("n", [2, 9, 33, 1000, 100_000])
@pytest.mark.parametrize("opts", [{}, ALWAYS], ids=["serial-first", "threads"])
def test_integer_reductions_in_lanes(fn, make, n, opts):
    args = make(n)
    f = cppcodegen.compile(fn, **opts)
    assert LANES in cppcodegen.explain(f, *args).source
    with np.errstate(over="ignore"):
        _same(f(*args), fn(*args))


def test_float_sum_stays_in_order():
    """A float sum in lanes would add in another order than Python's: not taken."""
    x = _rng(24).standard_normal(1000)
    assert LANES not in cppcodegen.explain(float_sum, x).source
    _same(cppcodegen.compile(float_sum)(x), float_sum(x))


# a running value read inside the loop is a scan, not a reduction: serial, in Python's order
def counter_scan(a):
    out = np.zeros(a.shape[0])
    c = 0
    for i in range(a.shape[0]):
        if a[i] > 0:
            c += 1
        out[i] = c
    return out, c


def running_max(a):
    out = np.empty_like(a)
    m = a[0]
    for i in range(a.shape[0]):
        m = max(m, a[i])
        out[i] = m
    return out, m


def sum_then_branch(a):
    out = np.zeros(a.shape[0], dtype=np.int8)
    s = 0
    for i in range(a.shape[0]):
        s += a[i]
        if s > 3:
            out[i] = 1
    return out, s


SCANS = [counter_scan, running_max, sum_then_branch]


@pytest.mark.parametrize("fn", SCANS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [3, 8, 1000, 100_000])
@pytest.mark.parametrize("opts", [{}, ALWAYS], ids=["serial-first", "threads"])
def test_running_values_read_in_the_loop_stay_serial(fn, n, opts):
    a = _rng(30).integers(-9, 10, n)
    f = cppcodegen.compile(fn, **opts)
    assert LANES not in cppcodegen.explain(f, a).source
    _same(f(a), fn(a))


def prange_scan(a):
    out = np.zeros(a.shape[0])
    s = 0
    for i in cppcodegen.prange(a.shape[0]):
        s += a[i]
        out[i] = s
    return out


def test_prange_scan_is_refused():
    with pytest.raises(cppcodegen.TraceError, match="carries a value from one iteration"):
        cppcodegen.compile(prange_scan, fallback=False)(np.arange(10))


def half_power(a):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[i] ** 0.5        # a NumPy scalar's **: C's pow, not sqrt
    return out, a ** 0.5            # an array's **: NumPy's sqrt fast path


def test_scalar_half_power_is_pow_and_array_half_power_is_sqrt():
    a = np.array([-0.0, -np.inf, 4.0, 0.0, np.inf, -4.0, 2.0, np.nan, -0.0])
    with np.errstate(invalid="ignore"):
        got, want = cppcodegen.compile(half_power)(a), half_power(a)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


# ranges whose steps reach the int64 limits: counted without overflow, as Python counts them
def huge_steps(x, step):
    t = u = -1
    for i in range(0, 2**63 - 1, 2**62):
        t = i // 2
    for i in range(0, -2**63, -2**62):
        u = i // 2
    n = 0
    for i in range(1, 2**63 - 1, step):        # a run-time step: checked where it advances
        x[n] = i
        n += 1
    return t, u, n, x


def test_steps_near_the_int64_limits():
    step = 2**62 + 5
    got = cppcodegen.compile(huge_steps, fallback=False)(np.zeros(4), step)
    want = huge_steps(np.zeros(4), step)
    assert got[:3] == want[:3] and got[2] == 2
    np.testing.assert_array_equal(got[3], want[3])


def round_loop(a):
    out = np.zeros(a.shape[0], np.int64)
    for i in range(a.shape[0]):
        out[i] = round(a[i] * 0.5)          # Python's round of a NumPy scalar: an int
    return out


@pytest.mark.parametrize("bad, error", [(np.nan, ValueError), (np.inf, OverflowError)])
def test_round_of_nan_or_infinity_raises_as_python(bad, error):
    f = cppcodegen.compile(round_loop, fallback=False)
    a = np.array([2.5, 3.0, -7.0, 1e3, 5.0])
    _same(f(a), round_loop(a))
    a[3] = bad
    with pytest.raises(error):     # (Python's own error: the call runs as Python runs it)
        f(a)
    with pytest.raises(error):
        round_loop(a)


def shared_distance(x, y, cutoff):
    """A value (with a square root) read by the condition, by the branch and after the loop."""
    out = np.zeros_like(x)
    r = 0.0
    for i in range(x.shape[0]):
        r = np.sqrt(x[i] * x[i] + y[i] * y[i])
        if r < cutoff:
            out[i] = 1.0 / (r + 1.0)
        elif r < 2 * cutoff:
            out[i] = r - cutoff
    return out, r


@pytest.mark.parametrize("n", [0, 1, 9, 300])
def test_value_read_by_a_branch_and_the_condition_is_computed_once(n):
    """``r`` is read by the ``if``, inside both branches and as the value Python keeps: each
    of those is its own kernel, and each used to compute the square root again."""
    x, y = _rng(12).standard_normal(n), _rng(13).standard_normal(n)
    _same(cppcodegen.compile(shared_distance)(x, y, 0.8), shared_distance(x, y, 0.8))
    if n > 1:
        src = cppcodegen.explain(shared_distance, x, y, 0.8).source
        assert src.count("sqrt(") == 1, src


def test_life_neighbour_sum_is_computed_once():
    """Game of Life's ``s`` (eight loads) feeds the ``if``, the ``elif`` and the value kept
    after the loop: one kernel computes it."""
    g = (_rng(14).random((6, 9)) < 0.4).astype(np.int64)
    src = cppcodegen.explain(loop_life, g).source
    corner = "ld(in0 + (-10 + "         # g[i - 1, j - 1] of a 9-column grid
    assert src.count(corner) == 1, src


def branch_reassigns_its_condition(x, y):
    """The then-branch assigns the condition's variable: the else-branch must still follow
    the condition as it was (both predicates are taken before either branch runs)."""
    out = np.zeros_like(x)
    top = np.zeros(x.shape[0], dtype=bool)
    hits = 0
    for i in range(x.shape[0]):
        big = x[i] > 0.5
        if big:
            big = x[i] > 0.9
            out[i] = y[i] * 2.0
        elif y[i] > 0.2:
            out[i] = -y[i]
            hits += 1
        else:
            y[i] = 0.0
        top[i] = big
    return out, top, hits


@pytest.mark.parametrize("n", [1, 7, 16, 33, 1000])
def test_branches_in_lanes_are_predicated_stores(n):
    """In SIMD lanes an ``if`` becomes predicated stores (backend/predicate.py: each store
    keeps the old value where its branch is not taken): bit for bit the plain function's
    results, the argument it updates included."""
    x, y = _rng(16).random(n), _rng(17).random(n)
    got_y, want_y = y.copy(), y.copy()
    _same(cppcodegen.compile(branch_reassigns_its_condition)(x, got_y),
          branch_reassigns_its_condition(x, want_y))
    np.testing.assert_array_equal(got_y, want_y)
    if n > 1:
        src = cppcodegen.explain(branch_reassigns_its_condition, x, y.copy()).source
        assert "_when(ccg_then" in src and "flattened" in src, src
    g = (_rng(18).random((6, 20)) < 0.4).astype(np.int64)
    assert "_when(ccg_" in cppcodegen.explain(loop_life, g).source


def swap_if_greater(a, b):
    for i in range(a.shape[0]):
        if a[i] > b[i]:
            a[i], b[i] = b[i], a[i]


@pytest.mark.parametrize("n", [0, 1, 9, 1000])
def test_a_swap_under_a_branch_runs_in_lanes(n):
    """The swap saves one element in a one-element buffer: each lane has its own."""
    a, b = _rng(20).standard_normal(n), _rng(21).standard_normal(n)
    a1, b1, a2, b2 = a.copy(), b.copy(), a.copy(), b.copy()
    cppcodegen.compile(swap_if_greater)(a1, b1)
    swap_if_greater(a2, b2)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)
    if n > 1:
        assert "omp simd" in cppcodegen.explain(swap_if_greater, a, b).source


# read ahead of the store: an anti-dependence only, kept by SIMD lanes, never on the threads
def backward_induction(v, disc, p, steps):
    v = v.copy()
    for i in range(steps - 1, -1, -1):
        for j in range(i + 1):
            v[j] = disc * (p * v[j] + (1.0 - p) * v[j + 1])
    return v


def smooth_ahead(v):                    # top level, long: the threads would race on it
    for j in range(v.shape[0] - 2):
        v[j] = 0.25 * v[j] + 0.5 * v[j + 1] + 0.25 * v[j + 2]
    return v


def descending_behind(v):               # descending: j - 1 is stored later
    for j in range(v.shape[0] - 1, 0, -1):
        v[j] = v[j] * 0.5 + v[j - 1]
    return v


def recurrence(v):                      # v[j - 1] is this loop's new value: serial
    for j in range(1, v.shape[0]):
        v[j] = v[j] * 0.5 + v[j - 1]
    return v


def read_after_store(v, out):           # v[j + 1] read after v[j] is stored: serial
    for j in range(v.shape[0] - 1):
        v[j] = v[j + 1] * 2.0
        out[j] = v[j + 1] + v[j]
    return v, out


AHEAD = [(backward_induction, lambda n: (_rng(20).random(n + 1), 0.999, 0.52, n), True),
         (smooth_ahead, lambda n: (_rng(21).random(n + 2),), True),
         (descending_behind, lambda n: (_rng(22).random(n + 1),), True),
         (recurrence, lambda n: (_rng(23).random(n + 1),), False),
         (read_after_store, lambda n: (_rng(24).random(n + 1), np.zeros(n + 1)), False)]


@pytest.mark.parametrize("fn, make, lanes", AHEAD, ids=[c[0].__name__ for c in AHEAD])
@pytest.mark.parametrize("n", [1, 2, 7, 17, 300, 100_000])
def test_reads_ahead_of_the_store_run_in_lanes(fn, make, lanes, n):
    if fn is backward_induction and n > 1000:
        n = 1000                        # (n^2 / 2 steps)
    args = make(n)
    want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    f = cppcodegen.compile(fn, options=ALWAYS)      # (the threads at any size, were it allowed)
    _same(f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]), want)
    if n == 300:
        source = cppcodegen.explain(f, *args).source
        assert (LANES in source) == lanes
        assert "on the threads" not in source


def erode(mask):
    h, w = mask.shape
    out = np.zeros_like(mask)
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            keep = True
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    if not mask[i + di, j + dj]:
                        keep = False
            out[i, j] = keep
    return out


def test_bool_flags_under_branches_run_in_lanes():
    """``keep = False`` under a branch: a predicated bool store, written as and/or
    (``ccg::lane_select``), which GCC vectorizes (a ``?:`` of bools it did not: 12x numba)."""
    m = _rng(30).random((40, 57)) < 0.8
    f = cppcodegen.compile(erode)
    _same(f(m), erode(m))
    assert "ccg::lane_select" in cppcodegen.explain(f, m).source and \
        LANES in cppcodegen.explain(f, m).source
