"""Slices whose bounds come from array values inside compiled loops (``vals[indptr[i]:
indptr[i + 1]]``): NumPy's clamping of every bound, reads, stores and updates through them,
loops over their length, prange; one build serves every matrix. Compared with Python."""
import numpy as np
import pytest

import cppcodegen
from cppcodegen import prange


def spmv_rows(indptr, cols, vals, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        y[i] = vals[lo:hi] @ x[cols[lo:hi]]
    return y


def spmv_rows_parallel(indptr, cols, vals, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in prange(n):
        y[i] = np.dot(vals[indptr[i]:indptr[i + 1]], x[cols[indptr[i]:indptr[i + 1]]])
    return y


def _csr(n, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 7, n)
    counts[::4] = 0                                     # empty rows
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cols = rng.integers(0, n, indptr[-1]).astype(np.int64)
    return indptr, cols, rng.standard_normal(indptr[-1]), rng.standard_normal(n)


@pytest.mark.parametrize("fn", [spmv_rows, spmv_rows_parallel])
def test_csr_rows_as_slices_one_build_for_every_matrix(fn):
    f = cppcodegen.compile(fn)
    for n, seed in ((30, 0), (30, 1), (5, 2), (1, 3)):
        args = _csr(n, seed)
        got = f(*args)
        assert got.shape == (n,) and got.dtype == np.float64
        np.testing.assert_allclose(got, spmv_rows(*args), rtol=1e-12, atol=1e-12)
    assert "bind" in str(f.explain(*args).program)      # the slices' bounds: run-time values


def test_a_column_out_of_range_raises_indexerror():
    indptr, cols, vals, x = _csr(12, 4)
    cols = cols.copy()
    cols[-1] = 12
    with pytest.raises(IndexError):
        spmv_rows(indptr, cols, vals, x)
    with pytest.raises(IndexError):
        cppcodegen.compile(spmv_rows)(indptr, cols, vals, x)


def segment_sums(a, lo, hi):
    out = np.zeros(lo.shape[0], dtype=a.dtype)
    for i in range(lo.shape[0]):
        out[i] = a[lo[i]:hi[i]].sum()
    return out


def segment_sums_step(a, lo, hi):
    out = np.zeros(lo.shape[0], dtype=a.dtype)
    for i in range(lo.shape[0]):
        out[i] = a[lo[i]:hi[i]:2].sum() + a[:hi[i]].max(initial=-1)
    return out


@pytest.mark.parametrize("fn", [segment_sums, segment_sums_step])
def test_bounds_negative_past_either_end_and_backwards_clamp_as_numpy(fn):
    rng = np.random.default_rng(5)
    a = rng.integers(-50, 50, 11)
    lo = rng.integers(-16, 16, 200)                     # negative, past the end, lo > hi
    hi = rng.integers(-16, 16, 200)
    got = cppcodegen.compile(fn)(a, lo, hi)
    np.testing.assert_array_equal(got, fn(a, lo, hi))   # integers: exact


def mixed_bounds(a, starts):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[starts[i]:i + 1].sum() + a[i:starts[i]].sum() * 10.0
    return out


def test_a_bound_from_values_with_a_loop_index():
    a = np.arange(1.0, 9.0)
    starts = np.array([0, 3, -2, 9, 1, 5, 5, -20], dtype=np.int32)
    got = cppcodegen.compile(mixed_bounds)(a, starts)
    np.testing.assert_array_equal(got, mixed_bounds(a, starts))


def fill_segments(indptr, m):
    out = np.zeros(m)
    for i in range(indptr.shape[0] - 1):
        out[indptr[i]:indptr[i + 1]] = i + 1.0
        out[indptr[i]:indptr[i + 1]] += 0.5
    return out


def test_stores_and_updates_through_value_slices():
    indptr = np.array([0, 2, 2, 5, 9, 9], dtype=np.int64)
    got = cppcodegen.compile(fill_segments)(indptr, 12)
    np.testing.assert_array_equal(got, fill_segments(indptr, 12))


def row_loops(indptr, vals):
    n = indptr.shape[0] - 1
    out = np.zeros(n)
    for i in range(n):
        seg = vals[indptr[i]:indptr[i + 1]]
        s = 0.0
        for j in range(seg.shape[0]):                   # a loop over the slice's length
            s += seg[j] * (j + 1)
        out[i] = s
    return out


def test_a_loop_over_a_value_slices_length_sums_in_pythons_order():
    indptr, _, vals, _ = _csr(25, 6)
    got = cppcodegen.compile(row_loops)(indptr, vals)
    np.testing.assert_array_equal(got, row_loops(indptr, vals))     # same order: bit-exact


def normalized_rows(indptr, vals):
    out = vals.copy()
    for i in range(indptr.shape[0] - 1):
        row = out[indptr[i]:indptr[i + 1]]
        if row.shape[0] > 0:
            row /= np.abs(row).max()
    return out


def row_max_without_initial(indptr, vals):
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        out[i] = vals[indptr[i]:indptr[i + 1]].max()
    return out


def test_a_view_updated_in_place_and_a_branch_on_its_length():
    indptr, _, vals, _ = _csr(20, 7)
    got = cppcodegen.compile(normalized_rows)(indptr, vals)
    np.testing.assert_allclose(got, normalized_rows(indptr, vals), rtol=1e-15)


def row_argmin_of_prefix(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = x[:i + 1].argmin() + np.argmax(x[i:])
    return out


def prefix_max_from_zero(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[:i].max()                                # empty when i == 0: ValueError
    return s


def test_max_and_argmin_over_run_time_lengths_check_for_empty_at_run_time():
    f = cppcodegen.compile(row_max_without_initial)
    indptr, vals = np.array([0, 2, 3, 7], dtype=np.int64), np.arange(7.0)[::-1].copy()
    np.testing.assert_array_equal(f(indptr, vals), row_max_without_initial(indptr, vals))
    empty_row = np.array([0, 2, 2, 7], dtype=np.int64)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        row_max_without_initial(empty_row, vals)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        f(empty_row, vals)
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    np.testing.assert_array_equal(cppcodegen.compile(row_argmin_of_prefix)(x),
                                  row_argmin_of_prefix(x))
    with pytest.raises(ValueError, match="maximum which has no identity"):
        cppcodegen.compile(prefix_max_from_zero)(x)
    report = cppcodegen.check(row_max_without_initial, indptr, vals)
    assert report.ok, report


def test_the_reference_interpreter_runs_value_slices():
    args = _csr(9, 8)
    report = cppcodegen.check(spmv_rows, *args)
    assert report.ok, report


def outside_a_loop(a, b):
    return a[b[0]:b[1]].sum()


def cfd_plateau(nx, c):         # the CFD tutorials' initial condition, nx an np.int64
    dx = 2 / (nx - 1)
    u = np.ones(nx)
    u[int(.5 / dx):int(1 / dx + 1)] = 2
    un = u.copy()
    u[1:] = un[1:] - c * (un[1:] - un[:-1])
    return u, u.sum(), (u > 1).sum()


def window_stats(a, lo, hi, scale):
    w = a[int(lo):int(hi)] * scale
    n = w.shape[0] * 1.0                # a length known at run time, times a float
    return w.sum() / n if n > 0 else 0.0, w.max() if n > 0 else -1.0, a * 2


def clipped_tail(a, t):
    a[int(t):] *= 2.0                   # an argument updated through such a slice


@pytest.mark.parametrize("fn,argsets", [
    (outside_a_loop, [(np.arange(7.0), np.array([1, 3])), (np.arange(7.0), np.array([-3, 9])),
                      (np.arange(7.0), np.array([3, 1]))]),
    (cfd_plateau, [(np.int64(41), 0.5), (np.int64(81), 0.25), (np.int64(5), 1.0)]),
    (window_stats, [(np.arange(10.0), 2.0, 7.5, 0.5), (np.arange(10.0), 6.0, 2.0, 1.0),
                    (np.arange(10.0), -2.0, 99.0, 3.0)]),
    (clipped_tail, [(np.arange(6.0), 2.2), (np.arange(6.0), -1.0), (np.arange(6.0), 8.0)]),
], ids=lambda x: getattr(x, "__name__", ""))
def test_outside_every_loop_the_body_runs_in_a_loop_of_one_trip(fn, argsets):
    """A slice of run-time length outside every loop: the function is traced again with its
    body in a compiled loop of one trip; one build serves every bound (empty slices too)."""
    f = cppcodegen.compile(fn)
    for args in argsets:
        mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got, want = f(*mine), fn(*theirs)
        assert (got is None) == (want is None)
        for g, w in () if want is None else zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-13)
        for m, t in zip(mine, theirs):
            np.testing.assert_array_equal(m, t)
    assert len(f.recompile_reasons) == 0
    assert cppcodegen.check(fn, *argsets[0]).ok


def returns_the_slice(a, b):
    return a[b[0]:b[1]]


def float_bounds(a, b):
    out = 0.0
    for i in range(b.shape[0]):
        out += a[b[i]:].sum()
    return out


def test_a_returned_slice_of_run_time_length_is_a_view_and_float_bounds_are_refused():
    a = np.arange(5.0)
    f = cppcodegen.compile(returns_the_slice)
    for b in ([1, 3], [3, 1], [-2, 5], [0, 9]):
        r = f(a, np.array(b))
        np.testing.assert_array_equal(r, returns_the_slice(a, np.array(b)))
        assert r.size == 0 or np.shares_memory(r, a)      # NumPy's view of the argument
    with pytest.raises(Exception, match="test_data_slices.py"):
        cppcodegen.compile(float_bounds)(np.ones(5), np.array([1.0, 2.0]))


def scaled_bins(x, lo, hi, nbins):
    counts = np.zeros(nbins, dtype=np.int64)
    scale = nbins / (hi - lo)                           # computed once, before the loop
    for v in x:
        if lo <= v < hi:
            counts[int((v - lo) * scale)] += 1
    return counts


def test_a_value_computed_before_a_loop_is_not_recomputed_in_its_body():
    x = np.linspace(-1.0, 1.0, 101)
    f = cppcodegen.compile(scaled_bins)
    np.testing.assert_array_equal(f(x, -1.0, 1.0, 7), scaled_bins(x, -1.0, 1.0, 7))
    program = str(f.explain(x, -1.0, 1.0, 7).program)
    body = program[program.index("for "):]
    assert "divide" in program and "divide" not in body


def sieve_by_slices(n):
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if is_prime[i]:
            is_prime[i * i::i] = False                  # start and step: the loop's index
    return np.flatnonzero(is_prime)


def strided_reads(x):
    out = np.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        out[i] = x[i * i % 7::i].sum() + x[:x.shape[0] - i * i].sum()   # clamped per i
    return out


def test_slices_with_a_loop_index_as_step_or_undecidable_clamping():
    f = cppcodegen.compile(sieve_by_slices)
    for n in (2, 10, 97, 100, 1000):
        np.testing.assert_array_equal(f(np.int64(n)), sieve_by_slices(n))
    x = np.arange(1.0, 14.0)
    np.testing.assert_array_equal(cppcodegen.compile(strided_reads)(x), strided_reads(x))
    report = cppcodegen.check(strided_reads, x)
    assert report.ok, report


def lengths_against_floats(a, lo, hi, t):
    out = np.zeros(lo.shape[0])
    for i in range(lo.shape[0]):
        n = a[lo[i]:hi[i]].shape[0]
        if n > t and n != 2.5 and n >= -0.5 and n < float("inf"):   # a traced float t
            out[i] = n + len(a[lo[i]:hi[i]:2])
        elif n == 1.0:
            out[i] = -1.0
    return out


def test_a_run_time_length_compared_with_floats_and_traced_values():
    a = np.arange(10.0)
    lo, hi = np.array([0, 3, 5, 9, 2]), np.array([4, 4, 5, 12, -1])
    f = cppcodegen.compile(lengths_against_floats)
    for t in (0.5, 1.5, -3.0, 2.0):
        np.testing.assert_array_equal(f(a, lo, hi, t), lengths_against_floats(a, lo, hi, t))


def while_slices(a, b, lo, hi, p):
    z1 = np.zeros(0)
    out = np.zeros(len(lo))
    z2 = np.zeros(16)
    i = 0
    while i < len(lo):                                  # no for loop: only a while
        z1[lo[i]:hi[i]] = 0.5
        if a[p[i]:p[i + 1]:1].size == 0:
            out[i] += np.dot(a[lo[i]:hi[i]], b[lo[i]:hi[i]])
        else:
            z2[lo[i]:hi[i]] += 1.5
        i += 1
    return z1, out, z2


def test_a_run_time_length_compared_in_a_while_loop():
    args = [np.array([1.0, 2, 3, 4]), np.array([1.0, 2, 3, 4]),
            np.array([-5, -2, 2, 1], dtype=np.int32), np.array([4, 3, 2 ** 62, -4]),
            np.array([4, 7, 4, 4, 7], dtype=np.int32)]
    for got, want in zip(cppcodegen.compile(while_slices)(*args), while_slices(*args)):
        np.testing.assert_array_equal(got, want)


def backwards_segments(a, lo, hi):
    out = np.zeros(lo.shape[0])
    for i in range(lo.shape[0]):
        seg = a[lo[i]:hi[i]]
        out[i] = seg[::-1][:2].sum() * 10.0 + a[hi[i]:lo[i]:-2].sum() \
            + (seg[1:].sum() if seg.shape[0] > 1 else seg[0:].sum())
        if seg.shape[0] > 0:
            out[i] += seg[0] * 100.0 - seg[-1]          # elements: checked as NumPy checks
    return out


def test_a_run_time_slice_sliced_again_backwards_and_indexed():
    rng = np.random.default_rng(9)
    a = rng.integers(-9, 9, 12).astype(np.float64)
    lo, hi = rng.integers(-14, 14, 300), rng.integers(-14, 14, 300)
    np.testing.assert_array_equal(cppcodegen.compile(backwards_segments)(a, lo, hi),
                                  backwards_segments(a, lo, hi))


def scan_until(a, t, p):
    for i in range(len(p) - 1):                 # nothing carried: only its error matters
        if a[p[i]:p[i + 1]][-1] > t:
            break
    return a * 2.0


def test_a_loop_whose_only_effect_is_an_error_still_raises_it():
    a = np.arange(6.0)
    f = cppcodegen.compile(scan_until)
    np.testing.assert_array_equal(f(a, 9.0, np.array([0, 2, 5])), a * 2.0)
    with pytest.raises(IndexError):
        scan_until(a, 0.5, np.array([-1, 1]))
    with pytest.raises(IndexError):
        f(a, 0.5, np.array([-1, 1]))


def last_into_rows(a, lo, hi):
    Z = np.zeros((2, 5))
    for i in range(len(hi)):
        Z[i, lo[i]:hi[i]] = a[lo[i]:hi[i]][-1]          # raises even into an empty region
    return Z


def test_an_element_stored_into_an_empty_region_is_still_checked():
    a = np.arange(6.0)
    f = cppcodegen.compile(last_into_rows)
    lo, hi = np.array([0, 1]), np.array([3, 4])
    np.testing.assert_array_equal(f(a, lo, hi), last_into_rows(a, lo, hi))
    with pytest.raises(IndexError):
        last_into_rows(a, np.array([7, -1]), np.array([6, 0]))
    with pytest.raises(IndexError):
        f(a, np.array([7, -1]), np.array([6, 0]))


def tail_max_when_any(a):
    out = 0.0
    for i in range(a.shape[0]):
        m = a[i + 1:] * 2                   # empty in the last iteration, where the max is
        out += m.max() if i < a.shape[0] - 1 else -1.0      # not taken (Python skips it)
    return out


def tail_max_always(a):
    out = 0.0
    for i in range(a.shape[0]):
        m = a[i + 1:] * 2
        out += m.max() if i < a.shape[0] else -1.0
    return out


@pytest.mark.parametrize("backend", ["cpp", "check"])
def test_an_empty_max_raises_only_on_the_side_of_a_conditional_that_is_taken(backend):
    a = np.array([3.0, -1.0, 4.0, 1.0, -5.0])
    assert cppcodegen.compile(tail_max_when_any, backend=backend)(a) == tail_max_when_any(a)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        cppcodegen.compile(tail_max_always, backend=backend)(a)


def prime_sieve(n):
    """The textbook sieve with the limit an np.int64: a while loop whose index is the step."""
    sieve = np.ones(n + 1, dtype=np.bool_)
    sieve[0] = False
    sieve[1] = False
    i = 2
    while i * i <= n:
        if sieve[i]:
            sieve[i * i:n + 1:i] = False
        i += 1
    return sieve.sum(), sieve


def strided_sums(x, k):
    s = 0.0
    j = 0
    while j < 3:
        s += x[j::k + j].sum()
        j += 1
    return s


def test_a_slice_step_computed_at_run_time():
    f = cppcodegen.compile(prime_sieve)
    for n in (2, 3, 10, 97, 5000):
        got, expected = f(np.int64(n)), prime_sieve(np.int64(n))
        assert got[0] == expected[0]
        np.testing.assert_array_equal(got[1], expected[1])
    g = cppcodegen.compile(strided_sums)
    x = np.arange(20.0)
    for k in (1, 2, 7, 40):
        assert g(x, np.int64(k)) == strided_sums(x, np.int64(k))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        g(x, np.int64(0))                   # NumPy's error
    # (the counting while is a for over 3 iterations whose index bounds a slice: Python runs
    # it while tracing, so reversed slices are NumPy's too; -2 meets a zero step at j = 2)
    assert g(x, np.int64(-3)) == strided_sums(x, np.int64(-3))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        g(x, np.int64(-2))


def _fir_slices(x, h):
    y = np.zeros_like(x)
    for k in range(h.shape[0]):
        y[k:] += h[k] * x[:x.shape[0] - k]      # n=2, k=3: y[3:] is (0,), x[:-1] is (1,)
    return y


def test_a_length_one_slice_broadcast_to_an_empty_one():
    f = cppcodegen.compile(_fir_slices)
    for n, m in [(20, 5), (20, 3), (2, 5), (1, 4)]:
        x, h = np.arange(1.0, n + 1), np.ones(m)
        np.testing.assert_array_equal(f(x, h), _fir_slices(x, h))


def _back_substitution(U, y):
    n = U.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - U[i, i + 1:n] @ x[i + 1:]) / U[i, i]
    return x


def test_an_explicit_stop_at_the_axis_size_is_the_open_slice():
    """``U[i, i + 1:n]`` with n the axis' size has the length of ``x[i + 1:]``: the product
    of the two compiles in the loop (their lengths were two symbols, so the loop was run by
    Python while tracing: 45,000 lines of C++ and 50 s to build at n = 60)."""
    n = 60
    U = np.triu(np.random.default_rng(0).random((n, n))) + n * np.eye(n)
    y = np.linspace(1.0, 2.0, n)
    f = cppcodegen.compile(_back_substitution, fallback=False)
    np.testing.assert_allclose(f(U, y), _back_substitution(U, y), rtol=1e-12)
    assert "for lv0 in range" in str(cppcodegen.explain(_back_substitution, U, y))


def msd(traj, maxlag):
    T = traj.shape[0]
    out = np.zeros(maxlag)
    for lag in range(1, maxlag + 1):
        d = traj[lag:] - traj[:T - lag]
        out[lag - 1] = np.mean(d * d)
    return out


def test_slices_of_different_run_time_lengths_raise_numpys_broadcast_error():
    """``traj[lag:] - traj[:T - lag]`` with lag > T is (0,) against (2T - lag,): NumPy
    raises (a length 0 takes no other length but 1); it returned NaN for those lags."""
    f = cppcodegen.compile(msd)
    x = np.arange(5.0) ** 2
    np.testing.assert_array_equal(f(x, 4), msd(x, 4))
    with pytest.raises(ValueError, match="broadcast"):
        msd(x, 7)
    with pytest.raises(ValueError, match="broadcast"):
        f(x, 7)
    np.testing.assert_array_equal(f(x[:3], 3), msd(x[:3], 3))
