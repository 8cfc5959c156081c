"""cppcodegen.prange: loops whose iterations run on the threads, checked against the same
function run by Python (where prange is range)."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen import prange


def rows_and_stats(x, w):
    out = np.zeros_like(x)
    s = 0.0
    m = -np.inf
    lo = np.inf
    for i in prange(x.shape[0]):
        t = x[i] * 2.0
        out[i, :] = np.tanh(x[i, :] * w) + t[0]
        s += x[i].sum()
        m = max(m, x[i, 0])
        lo = np.minimum(lo, x[i, 1])
    return out, s, m, lo


def scalar_nest(a, b):
    n, k = a.shape
    m = b.shape[1]
    c = np.empty((n, m))
    for i in prange(n):
        for j in range(m):
            acc = 0.0
            for p in range(k):
                acc += a[i, p] * b[p, j]
            c[i, j] = acc
    return c


def int_reductions(v):
    total = 0
    prod = 1
    hits = 0
    for i in prange(len(v)):
        total += v[i]
        prod *= 1 + (v[i] % 2)
        if v[i] > 3:
            hits += 1
    return total, prod, hits


def stepped(x, start, stop):
    y = x.copy()
    last = -1
    for i in prange(start, stop, -2):
        y[i] = x[i] * 10.0
        last = i
    return y, last


def two_stores(x):
    out = np.zeros((x.shape[0], 2))
    for i in prange(x.shape[0]):
        out[i, 0] = x[i].sum()
        out[i, 1] = x[i].max()
    return out


def _same(got, want, rtol=1e-12):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape
        assert np.result_type(g) == np.result_type(w) or g.dtype.kind == w.dtype.kind
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_reductions_private_values_and_row_updates(n):
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((n, 8)), rng.standard_normal(8)
    f = cppcodegen.compile(rows_and_stats, dynamic=True)
    _same(f(x, w), rows_and_stats(x, w))


def test_a_loop_nest_of_scalar_code():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((37, 11)), rng.standard_normal((11, 13))
    f = cppcodegen.compile(scalar_nest)
    _same(f(a, b), scalar_nest(a, b))
    assert "#pragma omp for" in f.explain(a, b).source


@pytest.mark.filterwarnings("ignore:overflow encountered")      # prod wraps, in both
def test_integer_reductions_are_exact_and_branches_in_the_body():
    v = np.arange(-50, 450, dtype=np.int64) % 7
    f = cppcodegen.compile(int_reductions)
    got = f(v)
    want = int_reductions(v)
    assert [int(g) for g in got] == [int(w) for w in want]


@pytest.mark.parametrize("start,stop", [(20, 3), (20, -1), (5, 5), (3, 20)])
def test_negative_step_and_the_last_value_of_a_private_variable(start, stop):
    x = np.linspace(0.0, 1.0, 21)
    f = cppcodegen.compile(stepped)
    y, last = f(x, np.int64(start), np.int64(stop))
    y0, last0 = stepped(x, start, stop)
    np.testing.assert_array_equal(y, y0)
    assert int(last) == last0


def test_several_stores_per_iteration_into_a_shared_array():
    x = np.random.default_rng(2).standard_normal((64, 5))
    f = cppcodegen.compile(two_stores)
    got, want = f(x), two_stores(x)
    np.testing.assert_array_equal(got[:, 1], want[:, 1])       # max: exact
    # a 5-element sum in another order than NumPy's on 4-lane (AVX2) vectors: its rounding
    bound = 8 * np.finfo(float).eps * np.abs(x).sum(axis=1)
    assert np.all(np.abs(got[:, 0] - want[:, 0]) <= bound)


def test_sums_do_not_depend_on_the_thread_count(tmp_path):
    script = textwrap.dedent("""
        import sys, numpy as np, cppcodegen
        sys.path.insert(0, %r)
        from test_prange import rows_and_stats
        x = np.random.default_rng(5).standard_normal((5000, 8))
        w = np.ones(8)
        print(repr(float(cppcodegen.compile(rows_and_stats)(x, w)[1])))
    """ % os.path.dirname(__file__))
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.strip())
    assert outs[0] == outs[1]


def carried_recurrence(x):
    s = 1.0
    for i in prange(x.shape[0]):
        s = s * 0.5 + x[i]
    return s


def early_exit(x):
    for i in prange(x.shape[0]):
        if x[i] > 0.5:
            break
    return x


def previous_value(x):
    prev = 0.0
    out = np.zeros_like(x)
    for i in prange(x.shape[0]):
        out[i] = prev
        prev = x[i]
    return out


def row_histograms(img, nb):
    h, w = img.shape
    out = np.zeros((h, nb), dtype=np.int64)
    for i in prange(h):
        loc = np.zeros(nb, dtype=np.int64)
        for j in range(w):
            b = int(img[i, j] * nb)
            if b >= nb:
                b = nb - 1
            loc[b] += 1
        for b in range(nb):         # (the row's temporary again, as a loop's variable)
            out[i, b] = loc[b]
    return out


def last_bin_read_after(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    b = 0
    for i in prange(x.shape[0]):
        for j in range(i % 3):
            b = int(x[i] * 8) + j
        out[i] = b          # (the previous iteration's where the inner loop ran none)
    return out


def test_a_name_reused_in_the_body_and_read_nowhere_after_is_private():
    """A name the body assigns only inside inner loops (a temporary, then another loop's
    variable) holds the previous iteration's value only where those loops run no
    iteration; nothing after the prange reads it, so each iteration has its own (the call
    ran as Python: 'carries a value from one iteration to the next')."""
    img = np.random.default_rng(3).random((30, 41))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = cppcodegen.compile(row_histograms, fallback=False)
        for shape in ((30, 41), (5, 0), (0, 3)):
            x = img[:shape[0], :shape[1]]
            np.testing.assert_array_equal(f(x, 8), row_histograms(x, 8))


@pytest.mark.parametrize("fn,words", [
    (carried_recurrence, ["variable 's'", "prange loop at", "test_prange.py"]),
    (early_exit, ["break or a return", "test_prange.py"]),
    (previous_value, ["variable 'prev'", "prange loop at"]),
    (last_bin_read_after, ["variable 'b'", "prange loop at"]),
])
def test_dependences_between_iterations_are_refused_with_the_line(fn, words):
    x = np.linspace(0, 1, 10)
    with pytest.raises(cppcodegen.TraceError) as e:
        cppcodegen.compile(fn)(x)
    for w in words:
        assert w in str(e.value)


def test_prange_is_range_without_compiling():
    assert list(prange(2, 10, 3)) == [2, 5, 8] and len(prange(4)) == 4


try:
    from numba import prange as numba_prange
except ImportError:             # (numba is a benchmark extra)
    numba_prange = None


def numba_style(x):
    s = 0.0
    for i in numba_prange(x.shape[0]):
        s += x[i] * x[i]
    return s


@pytest.mark.skipif(numba_prange is None, reason="numba is not installed")
def test_numbas_prange_is_taken_as_ours():
    x = np.arange(1000.0)
    f = cppcodegen.compile(numba_style)
    np.testing.assert_allclose(f(x), (x * x).sum(), rtol=1e-13)
    assert "#pragma omp for" in f.explain(x).source


def draws_in_prange(x):
    for i in prange(x.shape[0]):
        x[i] = np.random.random()
    return x


def test_random_draws_in_a_prange_loop_are_refused():
    with pytest.raises(cppcodegen.TraceError, match="random numbers"):
        cppcodegen.compile(draws_in_prange)(np.zeros(8))


def rewritten_twice(x, lo, c):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):             # proved independent: threads at once (below)
        dx = 2 / (x.shape[1] - 1)
        u = np.ones(x.shape[1])             # each thread's: written by two stores of one
        u[int(lo[i] / dx):int(1 / dx + 1)] = 2      # kernel (it was declared twice)
        un = u.copy()
        u[1:] = un[1:] - c * (un[1:] - un[:-1])
        out[i] = u.sum()
    return out, u


def test_a_buffer_written_twice_in_a_parallel_body_is_declared_once():
    x = np.ones((37, 41))
    lo = np.linspace(0, 1, 37)
    f = cppcodegen.compile(rewritten_twice, options={"parallel_threshold": 0})
    for got, want in zip(f(x, lo, 0.5), rewritten_twice(x, lo, 0.5)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    assert "iterations proved independent" in f.explain(x, lo, 0.5).source


def shifted_bins(x, k):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in prange(x.shape[0]):
        out[i] = int(x[i] * 8) + k
    return out


def test_python_int_arithmetic_in_a_prange_body():
    """``int(x[i] * 8) + k``: a Python int sum, checked for leaving int64; in a prange the
    check is found when the program returns (threads cannot stop one another), so the loop
    compiles (it was refused: 'may stop the program'); past int64 the call runs as Python,
    which raises NumPy's OverflowError at the store."""
    x = np.linspace(0, 1, 1000)
    f = cppcodegen.compile(shifted_bins, fallback=False)
    np.testing.assert_array_equal(f(x, 3), shifted_bins(x, 3))
    with pytest.warns(cppcodegen.FallbackWarning, match="left the int64"):
        with pytest.raises(OverflowError):
            f(x, 2 ** 63 - 1)


def max_of_ints_from_minus_inf(x):
    m = -np.inf
    for i in prange(x.shape[0]):
        m = max(m, x[i])
    return m


def test_a_max_reduction_of_ints_from_a_float_start():
    """``m = -np.inf; m = max(m, x[i])`` over an int array: the test and the select cast
    ``x[i]`` each, one value (the call ran as Python: 'carries a value'). ``m`` is a float64
    on every path (Python's is the int element where one wins: the unified dtype, as Numba's)."""
    f = cppcodegen.compile(max_of_ints_from_minus_inf, fallback=False)
    rng = np.random.default_rng(8)
    for x in (rng.permutation(5000), -rng.integers(1, 100, 3000), np.zeros(0, np.int64)):
        got = f(x)
        assert isinstance(got, float) and got == max_of_ints_from_minus_inf(x)
