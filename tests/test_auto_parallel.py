"""Plain ``range`` loops whose iterations the compiler proves independent run on the threads
(backend/prange.py, include/cppcodegen/probe.h): each checked against the same function run
by Python, bit for bit (the iterations are independent, so their order cannot change a
result). ``parallel_threshold=0`` makes such a loop use the threads from its first
iteration; by default it starts on the calling thread and goes on in blocks on the threads
once its first iterations show the rest is worth it, so a long loop switches midway."""
import numpy as np
import pytest

import cppcodegen
from test_control_flow import syrk                  # C[i, :i + 1] updated in place
from test_data_bounds import csr_matvec             # y[i] from range(indptr[i], indptr[i + 1])
from test_new_user_programs import nbody_accel      # acc[i, 0..2] += ... in an inner loop
from benchmarks.loop_workloads import lu_elim as lu_rows  # j loop: pivot column and row

ALWAYS = {"parallel_threshold": 0}
PROVED = "iterations proved independent"


def escape_counts(c, maxiter):
    h, w = c.shape
    out = np.empty((h, w), dtype=np.int64)
    last = 0
    for i in range(h):
        for j in range(w):
            z = 0j
            n = 0
            while n < maxiter and abs(z) <= 2.0:
                z = z * z + c[i, j]
                n += 1
            out[i, j] = n
            last = n
    return out, last, i


def scale_rows_in_place(a, w):
    for i in range(a.shape[0]):
        a[i, :] = a[i, :] * w + a[i, 0]
    return a


def shifted_rows(a):
    out = np.zeros((a.shape[0] + 2, a.shape[1]))
    for i in range(a.shape[0]):
        out[i + 2] = np.sqrt(np.abs(a[i])) - out[i + 2]
    return out


# loops that must stay serial: each iteration reads what another one writes, or a float sum
def prefix(x):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out


def float_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def scatter_loop(x, idx):
    out = np.zeros(8)
    for i in range(x.shape[0]):
        out[idx[i]] = x[i]
    return out


def whole_array(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out = out + x[i]
    return out


def reads_neighbour_row(a):
    for i in range(a.shape[0] - 1):
        a[i, :] = a[i + 1, :] * 0.5
    return a


# several updates of one row inside an inner loop or a branch: once lowered as a select over
# the whole array and a copy back (a race when the rows ran on the threads): these must stay
# right, on the threads where the lowering keeps to the row, serial where it does not
def updates_twice(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        for j in range(2):
            out[i] += x[i]
            out[i] += 1.0
    return out


def two_columns_in_inner_loop(x):
    out = np.zeros((x.shape[0], 2))
    for i in range(x.shape[0]):
        for j in range(4):
            out[i, 0] = out[i, 0] + x[i]
            out[i, 1] = x[i] * j
    return out


def two_columns_in_branch(x):
    out = np.zeros((x.shape[0], 2))
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            out[i, 0] += 1.0
            out[i, 1] += x[i]
    return out


def row_then_element(x):
    out = np.zeros((x.shape[0], 3))
    for i in range(x.shape[0]):
        for j in range(3):
            out[i, :] += x[i]
            out[i, 1] += 1.0
    return out


def argument_rows(out, x):
    for i in range(x.shape[0]):
        for j in range(3):
            out[i, 0] += x[i]
            out[i, 1] += 1.0
    return out


_X = np.random.default_rng(9).random(1000)
ROW_UPDATES = [
    (updates_twice, lambda: (_X,)),
    (two_columns_in_inner_loop, lambda: (_X,)),
    (two_columns_in_branch, lambda: (_X,)),
    (row_then_element, lambda: (_X,)),
    (argument_rows, lambda: (np.zeros((1000, 2)), _X)),
    (nbody_accel, lambda: (np.random.default_rng(3).standard_normal((150, 3)),
                           np.random.default_rng(4).random(150), 0.1)),
]


@pytest.mark.parametrize("fn,make", ROW_UPDATES, ids=[f.__name__ for f, _ in ROW_UPDATES])
@pytest.mark.parametrize("options", [ALWAYS, None], ids=["threads-from-start", "probed"])
def test_several_updates_of_a_row_never_race(fn, make, options):
    want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in make()])
    f = cppcodegen.compile(fn, options=options)
    for _ in range(4):
        got = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in make()])
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def _grid(h, w):
    re, im = np.meshgrid(np.linspace(-2.0, 0.6, w), np.linspace(-1.2, 1.2, h))
    return re + 1j * im


def _csr(n, seed=0):
    r = np.random.default_rng(seed)
    counts = r.integers(0, 12, n)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nnz = int(indptr[-1])
    return indptr, r.integers(0, n, nnz).astype(np.int64), r.standard_normal(nnz), \
        r.standard_normal(n)


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def branch_then_update(x, y):
    """Element stores under a branch, then an update of the same element after it (and an
    argument written in the other branch): each iteration still touches only element i."""
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            out[i] = 1.0
        elif x[i] > 0.2:
            out[i] = -y[i]
        else:
            y[i] = 0.0
        out[i] += y[i] * 10.0
    return out, y


def branch_writes_neighbour(x):
    """A branch storing the next element, then an update of this one: iterations i and i + 1
    both touch element i + 1, so the loop is not independent."""
    out = np.zeros(x.shape[0] + 1)
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            out[i + 1] = 1.0
        out[i] += x[i]
    return out


def row_temporaries(im, w):
    """Values assigned in every run of the inner loop (a, b, and the branch's t) are each row's
    own: the row loop is independent, and after it they hold the last row's values."""
    h = im.shape[0]
    out = np.zeros_like(im)
    a = b = t = 0.0
    for i in range(h):
        for j in range(1, 7):
            a = im[i, j - 1] * w
            b = im[i, j]
            if a > b:
                t = a - b
            else:
                t = b - a
            out[i, j] = t
    return out, a, b, t


def maybe_empty_inner(im, n):
    """The inner loop may run no iteration (n <= 1): then a keeps the previous row's value,
    so the rows depend on each other."""
    out = np.zeros(im.shape[0])
    a = 0.0
    for i in range(im.shape[0]):
        for j in range(1, n):
            a = im[i, j]
        out[i] = a
    return out


CASES = [
    ("row_temporaries", row_temporaries,
     lambda: (np.random.default_rng(9).random((300, 8)), 1.5)),
    ("branch_then_update", branch_then_update,
     lambda: (np.random.default_rng(6).random(333), np.random.default_rng(7).random(333))),
    ("escape_counts", escape_counts, lambda: (_grid(30, 40), 40)),
    ("syrk", syrk, lambda: (1.5, 1.2, np.random.default_rng(1).standard_normal((40, 40)),
                            np.random.default_rng(2).standard_normal((40, 30)))),
    ("csr_matvec", csr_matvec, lambda: _csr(500)),
    ("scale_rows_in_place", scale_rows_in_place,
     lambda: (np.random.default_rng(3).standard_normal((300, 17)),
              np.random.default_rng(4).standard_normal(17))),
    ("shifted_rows", shifted_rows, lambda: (np.random.default_rng(5).standard_normal((64, 9)),)),
]


def lu_including_pivot(A0):
    """The j loop starts at k: its first iteration stores the column the others read."""
    A = A0.copy()
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):
            f = A[i, k] / A[k, k]
            for j in range(k, n):
                A[i, j] -= f * A[k, j] + 0.01 * A[i, k]
    return A


def _diagonal_heavy(n, seed):
    return np.random.default_rng(seed).random((n, n)) + n * np.eye(n)


CASES += [("lu_rows", lu_rows, lambda: (_diagonal_heavy(40, 6),)),
          ("lu_rows_small", lu_rows, lambda: (_diagonal_heavy(3, 7),))]


@pytest.mark.parametrize("name,fn,make", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("options", [ALWAYS, None], ids=["threads-from-start", "probed"])
def test_independent_loops_match_python_bit_for_bit(name, fn, make, options):
    want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in make()])
    f = cppcodegen.compile(fn, options=options)
    args = make()
    got = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    _same(got, want)
    assert PROVED in f.explain(*args).source


@pytest.mark.parametrize("fn,make", [
    (prefix, lambda: (np.random.default_rng(0).standard_normal(1000),)),
    (float_sum, lambda: (np.random.default_rng(0).standard_normal(1000),)),
    (scatter_loop, lambda: (np.arange(20.0), np.arange(20) % 8)),
    (whole_array, lambda: (np.random.default_rng(0).standard_normal(50),)),
    (reads_neighbour_row, lambda: (np.random.default_rng(0).standard_normal((50, 4)),)),
    (branch_writes_neighbour, lambda: (np.random.default_rng(8).random(300),)),
], ids=["prefix", "float_sum", "scatter", "whole_array", "neighbour_row", "neighbour"])
def test_dependent_loops_stay_serial(fn, make):
    want = fn(*[a.copy() for a in make()])
    f = cppcodegen.compile(fn, options=ALWAYS)
    args = make()
    got = f(*[a.copy() for a in args])
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    source = f.explain(*args).source
    assert PROVED not in source and "on the threads" not in source    # (reads_neighbour_row
    # reads ahead of its store: SIMD lanes keep that, tests/test_simd_loops.py)


@pytest.mark.parametrize("n", [12, 2])
def test_a_read_of_an_element_the_loop_stores_keeps_it_serial(n):
    """``A[i, k]`` read in ``for j in range(k, n)``, which stores column k at j = k: the j
    loop stays serial (the i loop, one row per iteration, is still proved)."""
    A = _diagonal_heavy(n, 9)
    f = cppcodegen.compile(lu_including_pivot, options=ALWAYS)
    np.testing.assert_array_equal(f(A), lu_including_pivot(A))
    assert f.explain(A).source.count(PROVED) == 1


def test_long_loop_switches_to_threads_midway_and_matches():
    """Big enough that the probe decides after some rows: the rows before and after the
    switch (and the private values read after the loop) must all be right."""
    c = _grid(240, 320)
    f = cppcodegen.compile(escape_counts)
    for _ in range(3):
        _same(f(c, 64), escape_counts(c, 64))


def test_first_index_error_in_iteration_order_is_reported():
    """Bad indices in the first block and in the last: the error names the first one Python
    meets. Row 0 holds most of the work, so the other thread reaches the last block's bad
    index long before the first block's is read."""
    indptr, indices, data, x = _csr(2000, seed=7)
    heavy = 3_000_000
    indptr = np.concatenate([[0], indptr[1:] + heavy])
    indices = np.concatenate([np.zeros(heavy, np.int64), indices])
    data = np.concatenate([np.ones(heavy), data])
    bad = indices.copy()
    bad[int(indptr[-2])] = 10**6        # the last row: met first in time
    bad[int(indptr[1])] = -5000         # row 1, after row 0's work: first in order
    with pytest.raises(IndexError) as want:
        csr_matvec(indptr, bad, data, x)
    f = cppcodegen.compile(csr_matvec, options=ALWAYS)
    _same(f(indptr, indices, data, x), csr_matvec(indptr, indices, data, x))
    for _ in range(3):
        with pytest.raises(IndexError) as got:
            f(indptr, bad, data, x)
        assert str(got.value).startswith(str(want.value))


def test_one_thread_gives_the_same_bits(monkeypatch):
    """The same compiled loop on one thread (the probe never starts the team)."""
    import subprocess
    import sys
    import textwrap
    code = textwrap.dedent(f"""
        import numpy as np, cppcodegen, sys
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r})
        from test_control_flow import syrk
        r = np.random.default_rng(1)
        C, A = r.standard_normal((120, 120)), r.standard_normal((120, 90))
        f = cppcodegen.compile(syrk, options={{"parallel_threshold": 0}})
        sys.stdout.buffer.write(f(1.5, 1.2, C.copy(), A).tobytes())
    """)
    outs = []
    for threads in ("1", "2"):
        env = dict(__import__("os").environ, OMP_NUM_THREADS=threads)
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                   capture_output=True, timeout=300).stdout)
    assert outs[0] == outs[1] and len(outs[0]) == 120 * 120 * 8


def transpose_loop(a):
    n, m = a.shape
    out = np.empty((m, n))
    for i in range(n):
        for j in range(m):
            out[j, i] = a[i, j]
    return out


def test_column_writes_take_blocks_of_whole_cache_lines():
    """Iterations writing neighbouring elements of a column's rows (``out[j, i]`` in a loop
    over ``i``) share cache lines: blocks on the threads then take 128 float64 iterations
    (1 KiB of each row) at least, not 4, so two threads rarely write one line."""
    a = np.random.default_rng(5).random((300, 70))
    f = cppcodegen.compile(transpose_loop, **ALWAYS)
    src = cppcodegen.explain(f, a).source
    assert "ccg_rest) / 128, 1)" in src
    np.testing.assert_array_equal(f(a), transpose_loop(a))
    rows = cppcodegen.explain(cppcodegen.compile(scale_rows_in_place, **ALWAYS),
                              np.zeros((100, 20)), np.ones(20)).source
    assert "ccg_nb = std::min<int64_t>(ccg_rest, 256)" in rows     # (rows: small blocks)


@pytest.mark.parametrize("n", [1, 3])
def test_a_value_an_inner_loop_may_not_assign_keeps_the_rows_serial(n):
    """``for j in range(1, n)`` of a run-time ``n`` (a NumPy int: a value, not a constant of
    the build) may run no iteration: the row loop carrying ``a`` stays serial (its inner loop
    is still proved), and the results are Python's."""
    im = np.random.default_rng(10).random((40, 5))
    n = np.int64(n)
    f = cppcodegen.compile(maybe_empty_inner, options=ALWAYS)
    _same(f(im, n), maybe_empty_inner(im, n))
    outer = next(line for line in str(f.explain(im, n).graph).splitlines() if " = for(" in line)
    assert "auto=True" not in outer, outer


def _convection(u, nt, c, dt, dx, dy):
    ny, nx = u.shape
    for n in range(nt):
        un = u.copy()
        for j in range(1, ny):
            for i in range(1, nx):
                u[j, i] = (un[j, i] - c * dt / dx * (un[j, i] - un[j, i - 1])
                           - c * dt / dy * (un[j, i] - un[j - 1, i]))
    return u


@pytest.mark.parametrize("n, nt", [(9, 3), (81, 4), (300, 2), (81, 4), (5, 0)])
def test_short_proved_loops_run_over_and_over(n, nt):
    """A stencil's inner loop (proved independent, 80 iterations) runs once per row: the
    invariant ``c * dt / dx`` is made once before every loop (ir/graph.py), its zero-divisor
    check tested before the SIMD lanes, and the loop's cost learnt on earlier runs decides
    serial or threads without reading clocks (probe.h). Any mix of sizes gives Python's
    values; a test of a value made before the loop reads the shared one (a thread's own copy
    of it was 0: ZeroDivisionError on every call past the first)."""
    f = cppcodegen.compile(_convection, fallback=False)
    u = np.random.default_rng(n).random((n, n)) + 1.0
    for _ in range(3):
        got, want = f(u.copy(), nt, 1.0, 0.005, 0.025, 0.02), _convection(u.copy(), nt, 1.0,
                                                                            0.005, 0.025, 0.02)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_invariant_division_raises_only_where_python_divides():
    f = cppcodegen.compile(_convection, fallback=False)
    u = np.ones((6, 6))
    with pytest.raises(ZeroDivisionError):
        f(u.copy(), 2, 1.0, 0.005, 0.0, 0.02)
    np.testing.assert_array_equal(f(u.copy(), 0, 1.0, 0.005, 0.0, 0.02), u)   # no trip
    text = cppcodegen.explain(_convection, u, 2, 1.0, 0.005, 0.025, 0.02).source
    run = text[text.index('extern "C" void ccg_run0'):]
    first_loop = run.index("// for at")
    assert "divide" in run[:first_loop]         # (made once, before the loops)
