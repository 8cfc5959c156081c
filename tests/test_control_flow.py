"""Python control flow compiled as C++ control flow (issue 15): differential tests.

Every test runs a plain Python/NumPy function (loops, branches, while-loops written the way
real NumPy code writes them: polybench kernels, CFD tutorial steps, Monte Carlo loops, the
classic Numba examples) and ``cppcodegen.compile`` of the same function, on copies of the same
arguments, and compares

* the results (pytrees of arrays / scalars): same shape, same dtype (``np.asarray(x).dtype``),
  floats within the tolerance (NaNs equal), integers and bools exactly;
* every array argument afterwards (in-place updates must match).

``check`` memoises the compiled function per Python function, so calling ``check`` several
times on one function exercises *one* compiled function with several trip counts / branch
outcomes. Whether that happened without recompiling is tested separately (``TestNoRecompile``).

``CCG_TEST_PLAIN=1`` replaces ``cppcodegen.compile`` by the identity: the suite must pass that
way (it validates the tests themselves, not the compiler).
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

PLAIN = os.environ.get("CCG_TEST_PLAIN", "") not in ("", "0")

if PLAIN:
    def _compile(fn):
        return fn
else:
    import cppcodegen

    def _compile(fn):
        return cppcodegen.compile(fn)


# --------------------------------------------------------------------------- machinery
_COMPILED: dict = {}


def compiled(fn):
    """One compiled function per Python function for the whole module."""
    c = _COMPILED.get(fn)
    if c is None:
        c = _COMPILED[fn] = _compile(fn)
    return c


def _copy(a):
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, (tuple, list)):
        return type(a)(_copy(x) for x in a)
    return a


def _compare(got, expected, rtol, atol, path):
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{path}: expected a {type(expected).__name__}, got {type(got).__name__}"
        assert len(got) == len(expected), f"{path}: length {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare(g, e, rtol, atol, f"{path}[{i}]")
        return
    if expected is None:
        assert got is None, f"{path}: expected None, got {got!r}"
        return
    e = np.asarray(expected)
    g = np.asarray(got)
    assert g.shape == e.shape, f"{path}: shape {g.shape} != expected {e.shape}"
    assert g.dtype == e.dtype, f"{path}: dtype {g.dtype} != expected {e.dtype}"
    if e.dtype.kind in "biu":
        bad = g != e
        assert not np.any(bad), (
            f"{path}: {int(np.sum(bad))}/{e.size} elements differ (exact): "
            f"got {g[bad][:5]!r}, expected {e[bad][:5]!r}")
        return
    assert e.dtype.kind in "fc", f"{path}: unexpected dtype {e.dtype}"
    ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    if rtol == 0 and atol == 0:         # bit-for-bit (isclose(…, 0, 0) is g == e or both NaN)
        ok = (g == e) | (np.isnan(g) & np.isnan(e))
    assert np.all(ok), (
        f"{path}: {int(np.sum(~ok))}/{e.size} elements differ (rtol={rtol}, atol={atol}): "
        f"got {np.atleast_1d(g)[~np.atleast_1d(ok)][:5]!r}, "
        f"expected {np.atleast_1d(e)[~np.atleast_1d(ok)][:5]!r}")


def check(fn, *args, rtol=1e-6, atol=1e-9):
    """Plain ``fn`` vs compiled ``fn`` on copies of ``args``; returns the compiled result."""
    expect_args = [_copy(a) for a in args]
    got_args = [_copy(a) for a in args]
    expected = fn(*expect_args)
    got = compiled(fn)(*got_args)
    _compare(got, expected, rtol, atol, f"{fn.__name__} result")
    for i, (g, e) in enumerate(zip(got_args, expect_args)):
        if isinstance(e, np.ndarray):
            _compare(g, e, rtol, atol, f"{fn.__name__} argument #{i} afterwards")
    return got


def check_raises(exc, fn, *args):
    """Plain and compiled ``fn`` both raise ``exc``."""
    with pytest.raises(exc):
        fn(*[_copy(a) for a in args])
    with pytest.raises(exc):
        compiled(fn)(*[_copy(a) for a in args])


def R(seed):
    return np.random.default_rng(seed)


A100 = R(1).standard_normal(100)
B100 = R(2).standard_normal(100)
M12 = R(3).standard_normal((12, 12))
EXACT = dict(rtol=0.0, atol=0.0)


# =========================================================================== for over range
def dot_shape(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


def sumsq_len(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def prefix_sum_n(a, n):
    s = 0.0
    for i in range(n):
        s += a[i]
    return s


def smooth_interior(a):
    out = a.copy()
    for i in range(1, len(a) - 1):
        out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]
    return out


def even_odd_sums(a):
    even = 0.0
    for i in range(0, a.shape[0], 2):
        even += a[i]
    every_third = 0.0
    for i in range(1, a.shape[0], 3):
        every_third += a[i]
    return even, every_third


def reverse_copy(a):
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n - 1, -1, -1):
        out[n - 1 - i] = a[i]
    return out


def back_recurrence(a, start):
    # y[i] = a[i] + 0.5 * y[i + 2], walking down in steps of -2 from an argument
    y = np.zeros_like(a)
    for i in range(start, 1, -2):
        nxt = y[i + 2] if i + 2 < a.shape[0] else 0.0
        y[i] = a[i] + 0.5 * nxt
    return y


def range_start_stop_n(a, lo, hi):
    s = 0.0
    for i in range(lo, hi):
        s += a[i] * (i - lo + 1)
    return s


def stepped_by_arg(a, step):
    s = 0.0
    for i in range(0, a.shape[0], step):
        s += a[i]
    return s


def trip_count_from_numpy_int(a, n):
    acc = a[0] * 0.0
    for i in range(n):
        acc = acc * 0.5 + a[i]
    return acc


class TestRange:
    def test_bound_from_shape_bit_exact(self):
        check(dot_shape, A100, B100, **EXACT)

    def test_bound_from_len(self):
        check(sumsq_len, A100, **EXACT)

    @pytest.mark.parametrize("n", [0, 1, 2, 57, 100])
    def test_bound_from_int_argument(self, n):
        check(prefix_sum_n, A100, n, **EXACT)

    def test_start_stop_interior(self):
        check(smooth_interior, A100)

    def test_steps_two_and_three(self):
        check(even_odd_sums, A100, **EXACT)
        check(even_odd_sums, A100[:7].copy(), **EXACT)

    def test_negative_step_minus_one(self):
        check(reverse_copy, A100)

    @pytest.mark.parametrize("start", [99, 98, 2])
    def test_negative_step_minus_two_from_argument(self, start):
        check(back_recurrence, A100, start)

    @pytest.mark.parametrize("lo,hi", [(10, 10), (20, 5), (3, 4), (17, 83)])
    def test_zero_one_many_iterations(self, lo, hi):
        check(range_start_stop_n, A100, lo, hi, **EXACT)

    @pytest.mark.parametrize("step", [1, 7, 100])
    def test_step_from_argument(self, step):
        check(stepped_by_arg, A100, step, **EXACT)

    @pytest.mark.parametrize("n", [0, 1, 50])
    def test_trip_count_numpy_scalar(self, n):
        check(trip_count_from_numpy_int, A100, np.int64(n), **EXACT)

    def test_thousand_iterations(self):
        a, b = R(5).standard_normal(1000), R(6).standard_normal(1000)
        check(dot_shape, a, b, **EXACT)


# =========================================================================== nested loops
def lower_triangle_sum(L):
    s = 0.0
    for i in range(L.shape[0]):
        for j in range(i + 1):
            s += L[i, j]
    return s


def trisolv(L, b):
    # polybench trisolv: forward substitution
    n = L.shape[0]
    x = np.empty(n)
    for i in range(n):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]
    return x


def syrk(alpha, beta, C, A):
    # polybench syrk, lower triangle, in place on C
    n, m = A.shape
    for i in range(n):
        C[i, :i + 1] *= beta
        for k in range(m):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]
    return C


def upper_pairs(x):
    # sum over i < j of |x_i - x_j|
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            s += abs(x[i] - x[j])
    return s


def bubblesort(X):
    # Numba's bubblesort example, in place
    N = len(X)
    for end in range(N, 1, -1):
        for i in range(end - 1):
            cur = X[i]
            if cur > X[i + 1]:
                tmp = X[i]
                X[i] = X[i + 1]
                X[i + 1] = tmp


def sum2d(arr):
    # Numba's sum2d example
    M, N = arr.shape
    result = 0.0
    for i in range(M):
        for j in range(N):
            result += arr[i, j]
    return result


def gemm_loops(alpha, beta, C, A, B):
    # polybench gemm with scalar inner loops
    ni, nj = C.shape
    nk = A.shape[1]
    for i in range(ni):
        for j in range(nj):
            C[i, j] *= beta
        for k in range(nk):
            for j in range(nj):
                C[i, j] += alpha * A[i, k] * B[k, j]
    return C


def cholesky(A):
    # polybench cholesky (in place, lower triangle)
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] /= A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = math.sqrt(A[i, i])
    return A


def lu(A):
    # polybench lu, Doolittle without pivoting, in place
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]
    return A


def _spd(n, seed):
    a = R(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


class TestNested:
    def test_triangular_bounds(self):
        check(lower_triangle_sum, M12, **EXACT)

    def test_trisolv(self):
        L = np.tril(R(7).standard_normal((20, 20))) + 5 * np.eye(20)
        check(trisolv, L, R(8).standard_normal(20))

    def test_syrk_inplace_slices(self):
        A = R(9).standard_normal((30, 20))
        C = R(10).standard_normal((30, 30))
        check(syrk, 1.5, 1.2, C, A)

    def test_syrk_one_row(self):
        check(syrk, 1.5, 1.2, np.ones((1, 1)), np.full((1, 3), 2.0))

    def test_upper_triangle_pairs(self):
        check(upper_pairs, A100[:40].copy())

    def test_bubblesort_inplace(self):
        check(bubblesort, R(11).standard_normal(60))

    def test_bubblesort_sorted_input(self):
        check(bubblesort, np.arange(20.0))

    def test_sum2d(self):
        check(sum2d, R(12).standard_normal((13, 17)), **EXACT)

    def test_gemm_scalar_loops(self):
        r = R(13)
        check(gemm_loops, 1.5, 0.5, r.standard_normal((10, 12)), r.standard_normal((10, 8)),
              r.standard_normal((8, 12)))

    def test_cholesky(self):
        check(cholesky, _spd(16, 14), rtol=1e-10)

    def test_lu(self):
        check(lu, _spd(16, 15), rtol=1e-10)


# =========================================================================== break / continue
def first_negative(a):
    idx = -1
    for i in range(a.shape[0]):
        if a[i] < 0:
            idx = i
            break
    return idx


def sum_positive_continue(a):
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] <= 0:
            continue
        s += a[i]
    return s


def rows_until_threshold(x, t):
    # inner break only: per row, the count of leading entries below t
    counts = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] >= t:
                break
            counts[i] += 1
    return counts


def while_true_break(a):
    i = 0
    s = 0.0
    while True:
        s += a[i]
        i += 1
        if s > 3.0 or i == a.shape[0]:
            break
    return i, s


def break_and_continue(a):
    s = 0.0
    n = 0
    for i in range(a.shape[0]):
        if a[i] < -1.5:
            break
        if a[i] < 0:
            continue
        s += a[i]
        n += 1
    return s, n


class TestBreakContinue:
    def test_break_found_and_not_found(self):
        check(first_negative, np.array([3.0, 2.0, 1.0, -1.0, 5.0, -2.0]))
        check(first_negative, np.array([3.0, 2.0, 1.0, 4.0]))
        check(first_negative, np.array([-3.0, 2.0]))

    def test_continue(self):
        check(sum_positive_continue, A100, **EXACT)

    def test_inner_break(self):
        check(rows_until_threshold, R(16).random((9, 11)), 0.8)

    def test_while_true_break(self):
        check(while_true_break, np.abs(A100), **EXACT)
        check(while_true_break, np.full(5, 0.1), **EXACT)

    def test_break_and_continue(self):
        check(break_and_continue, A100, **EXACT)
        check(break_and_continue, np.abs(A100), **EXACT)


# =========================================================================== iterating arrays
def rows_total(x):
    total = 0.0
    for row in x:
        total += row.sum()
    return total


def rows_weighted(x, w):
    acc = np.zeros(x.shape[1])
    for row in x:
        acc += row * w
    return acc


def enumerate_positive(a):
    out = np.zeros_like(a)
    for i, v in enumerate(a):
        if v > 0:
            out[i] = v * i
    return out


def zip_dot(a, b):
    s = 0.0
    for u, v in zip(a, b):
        s += u * v
    return s


def enumerate_rows(x):
    out = np.empty(x.shape[0])
    for i, row in enumerate(x):
        out[i] = row[i % x.shape[1]] + row.max()
    return out


def zip_range_array(a):
    s = 0.0
    for k, v in zip(range(a.shape[0]), a):
        s += k * v
    return s


def enumerate_zip_masked(x, flags):
    s = 0.0
    for i, (v, f) in enumerate(zip(x, flags)):
        if f:
            s += v * i
    return s


def enumerate_zip_from_one(x, y):
    out = np.zeros(len(x))
    for k, (a, b) in enumerate(zip(x, y), 1):
        out[k - 1] = a * b + k
    return out


def zip_enumerate(x, y):
    t = 0.0
    for (i, a), b in zip(enumerate(x), y):
        t += a - b * i
    return t


class TestIterateArrays:
    def test_nested_enumerate_and_zip_are_loops(self):
        """``enumerate(zip(x, y))`` and ``zip(enumerate(x), y)``: the inner call was left to
        Python, which iterated the arrays while tracing (one build per length, minutes on
        symbolic sizes; found by a new user's probe). The source does not grow with the
        length."""
        flags = A100 > 0.3
        check(enumerate_zip_masked, A100, flags, **EXACT)
        check(enumerate_zip_from_one, A100, B100, **EXACT)
        check(zip_enumerate, A100, B100[:70], **EXACT)
        small = cppcodegen.explain(enumerate_zip_masked, A100[:10], flags[:10])
        big = cppcodegen.explain(enumerate_zip_masked, np.tile(A100, 50), np.tile(flags, 50))
        assert len(big.source) <= 2 * len(small.source) + 2000

    def test_for_row_in_x(self):
        check(rows_total, M12)

    def test_for_row_carried_array(self):
        check(rows_weighted, M12, A100[:12].copy())

    def test_enumerate_array(self):
        check(enumerate_positive, A100)

    def test_zip_arrays_bit_exact(self):
        check(zip_dot, A100, B100, **EXACT)

    def test_enumerate_rows_2d(self):
        check(enumerate_rows, R(17).standard_normal((9, 5)))

    def test_zip_range_and_array(self):
        check(zip_range_array, A100, **EXACT)


# =========================================================================== while
def while_counter(a, n):
    i = 0
    s = 0.0
    while i < n:
        s += a[i]
        i += 1
    return s


def cross_threshold(a, t):
    i = 0
    s = 0.0
    while i < a.shape[0] and s < t:
        s += a[i]
        i += 1
    return i


def jacobi_1d(f, tol):
    # -u'' = f on (0, 1), u(0) = u(1) = 0, Jacobi sweeps until the update is below tol
    n = f.shape[0]
    h2 = 1.0 / (n - 1) ** 2
    u = np.zeros(n)
    err = 1.0
    it = 0
    while err > tol:
        un = u.copy()
        u[1:-1] = 0.5 * (un[:-2] + un[2:] + h2 * f[1:-1])
        err = np.abs(u - un).max()
        it += 1
    return u, it


def newton_sqrt(c, tol):
    out = np.empty_like(c)
    for i in range(c.shape[0]):
        x = c[i] if c[i] > 1.0 else 1.0
        while abs(x * x - c[i]) > tol * c[i]:
            x = 0.5 * (x + c[i] / x)
        out[i] = x
    return out


def collatz_steps(seeds):
    out = np.zeros_like(seeds)
    for k in range(seeds.shape[0]):
        n = seeds[k]
        steps = 0
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        out[k] = steps
    return out


def mandel(x, y, max_iters):
    # Numba's mandelbrot example with real arithmetic
    zr, zi = 0.0, 0.0
    for it in range(max_iters):
        zr, zi = zr * zr - zi * zi + x, 2.0 * zr * zi + y
        if zr * zr + zi * zi >= 4.0:
            return it
    return 255


def mandelbrot_grid(xs, ys, max_iters):
    image = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for r in range(ys.shape[0]):
        for c in range(xs.shape[0]):
            image[r, c] = mandel(xs[c], ys[r], max_iters)
    return image


def bisect_roots(coef, tol):
    # root of x**3 + c*x - 1 on [0, 2] for each c >= 0, by bisection
    roots = np.empty_like(coef)
    for k in range(coef.shape[0]):
        lo, hi = 0.0, 2.0
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            if mid ** 3 + coef[k] * mid - 1.0 > 0:
                hi = mid
            else:
                lo = mid
        roots[k] = 0.5 * (lo + hi)
    return roots


def while_never_runs(x):
    y = x.copy()
    while y.max() > 1e9:
        y = y * 0.5
    return y


def halve_until_small(x):
    n = 0
    while np.abs(x).max() > 1.0:
        x = x * 0.5
        n += 1
    return x, n


class TestWhile:
    @pytest.mark.parametrize("n", [0, 1, 100])
    def test_counter(self, n):
        check(while_counter, A100, n, **EXACT)

    @pytest.mark.parametrize("t", [-1.0, 0.5, 10.0, 1e9])
    def test_counter_and_data_condition(self, t):
        check(cross_threshold, np.abs(A100), t)

    def test_float_convergence(self):
        f = np.sin(np.linspace(0, np.pi, 21))
        check(jacobi_1d, f, 1e-6, rtol=1e-9)

    def test_newton_inside_for(self):
        check(newton_sqrt, R(18).uniform(0.01, 50.0, 40), 1e-12)

    def test_integer_while_collatz(self):
        check(collatz_steps, np.arange(1, 60, dtype=np.int64))

    def test_mandelbrot_helper_with_early_return(self):
        check(mandelbrot_grid, np.linspace(-2.0, 1.0, 14), np.linspace(-1.0, 1.0, 10), 40)

    def test_bisection(self):
        check(bisect_roots, np.linspace(0.0, 3.0, 11), 1e-10)

    def test_zero_iterations(self):
        check(while_never_runs, A100)

    def test_array_rebinding_and_count(self):
        check(halve_until_small, A100 * 7)
        check(halve_until_small, A100 * 0.1)


# =========================================================================== branches
def argmax_loop(a):
    m = a[0]
    k = 0
    for i in range(1, a.shape[0]):
        if a[i] > m:
            m = a[i]
            k = i
    return k, m


def classify_counts(a, lo, hi):
    below = 0
    inside = 0
    above = 0
    for i in range(a.shape[0]):
        if a[i] < lo:
            below += 1
        elif a[i] <= hi:
            inside += 1
        else:
            above += 1
    return below, inside, above


def sign_of_sum(x):
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = x - 1.0
    return y


def clip_if_any(x):
    if (x > 1.5).any():
        x = np.minimum(x, 1.5)
    return x


def all_positive(x):
    if (x > 0).all():
        return np.log(x)
    return np.abs(x)


def both_positive(a, b):
    n = 0
    for i in range(a.shape[0]):
        if a[i] > 0 and b[i] > 0:
            n += 1
        elif not (a[i] > -0.5) or b[i] > 1.0:
            n -= 1
    return n


def cond_expr_loop(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] if a[i] > 0 else -0.5 * a[i]
    return s


def cond_expr_top(x):
    return x * 2.0 if x.mean() > 0 else x * 3.0


def compare_reductions(x, y):
    if x.max() > y.max():
        return x - y.max()
    return y - x.max()


def zero_d_condition(x):
    m = x.mean()
    if m > 0.5:
        out = x - m
    else:
        out = x + m
    return out, m


def if_without_else(x):
    out = x.copy()
    for i in range(x.shape[0]):
        if out[i] < 0:
            out[i] = 0.0
    if out.sum() > 10.0:
        out[0] = -1.0
    return out


class TestBranches:
    def test_if_element_gt_running_max(self):
        check(argmax_loop, A100)

    def test_if_elif_else_counts(self):
        check(classify_counts, A100, -0.5, 0.5)

    def test_if_on_sum_both_ways(self):
        check(sign_of_sum, np.abs(A100))
        check(sign_of_sum, -np.abs(A100))

    def test_if_on_any_both_ways(self):
        check(clip_if_any, A100 * 2)
        check(clip_if_any, A100 * 0.1)

    def test_if_on_all_both_ways(self):
        check(all_positive, np.abs(A100) + 0.1)
        check(all_positive, A100)

    def test_and_or_not(self):
        check(both_positive, A100, B100)

    def test_conditional_expression_in_loop(self):
        check(cond_expr_loop, A100, **EXACT)

    def test_conditional_expression_on_reduction(self):
        check(cond_expr_top, np.abs(A100))
        check(cond_expr_top, -np.abs(A100))

    def test_comparison_of_reductions(self):
        check(compare_reductions, A100, B100)
        check(compare_reductions, B100, A100)

    def test_zero_d_array_condition(self):
        check(zero_d_condition, R(19).random(50) + 0.3)
        check(zero_d_condition, R(19).random(50) - 0.3)

    def test_if_without_else(self):
        check(if_without_else, A100)
        check(if_without_else, A100 * 0.01)


# =========================================================================== builtins on scalars
def running_min_max(a):
    hi = a[0]
    lo = a[0]
    for i in range(a.shape[0]):
        hi = max(hi, a[i])
        lo = min(lo, a[i])
    return lo, hi


def l1_distance(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += abs(a[i] - b[i])
    return s


def clamp_three(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = max(-1.0, min(a[i], 1.0, 2.0 * a[i] + 0.5))
    return out


def max_drawdown(prices):
    peak = prices[0]
    mdd = 0.0
    for i in range(prices.shape[0]):
        if prices[i] > peak:
            peak = prices[i]
        dd = (peak - prices[i]) / peak
        mdd = max(mdd, dd)
    return mdd


class TestBuiltins:
    def test_min_max(self):
        check(running_min_max, A100)

    def test_abs(self):
        check(l1_distance, A100, B100, **EXACT)

    def test_three_argument_min_max(self):
        check(clamp_three, A100)

    def test_max_drawdown(self):
        prices = 100.0 * np.exp(np.cumsum(0.01 * R(20).standard_normal(300)))
        check(max_drawdown, prices)


# =========================================================================== carried values
def int_then_float(a):
    s = 0
    for i in range(a.shape[0]):
        s += a[i]
    return s


def count_and_total(a):
    count = 0
    total = 0
    for i in range(a.shape[0]):
        if a[i] % 3 == 0:
            count += 1
            total += a[i]
    return count, total


def babylonian(c, iters):
    x = c
    for _ in range(iters):
        x = 0.5 * (x + c / x)
    return x


def power_iteration(A, v, iters):
    for _ in range(iters):
        v = A @ v
        v = v / np.linalg.norm(v)
    lam = v @ (A @ v)
    return lam, v


def ema(a, alpha):
    out = np.empty_like(a)
    out[0] = a[0]
    for i in range(1, a.shape[0]):
        out[i] = alpha * a[i] + (1.0 - alpha) * out[i - 1]
    return out


def prefix_sum_loop(a):
    out = np.empty_like(a)
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
        out[i] = s
    return out


def swap_buffers(u, v, steps):
    for _ in range(steps):
        v[1:-1] = 0.5 * (u[:-2] + u[2:])
        u, v = v, u
    return u


def insertion_sort(a):
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


def float32_accumulate(a):
    s = np.float32(0.0)
    for i in range(a.shape[0]):
        s += a[i]
    return s


class TestCarried:
    def test_accumulator_bit_exact_mixed_magnitudes(self):
        r = R(21)
        a = r.standard_normal(500) * 10.0 ** r.integers(-8, 8, 500)
        b = r.standard_normal(500)
        check(dot_shape, a, b, **EXACT)

    def test_int_start_float_array_unifies(self):
        check(int_then_float, A100, **EXACT)

    def test_int_start_int_array_stays_int(self):
        check(int_then_float, np.arange(-20, 30, dtype=np.int64))

    def test_int_counters(self):
        check(count_and_total, np.arange(100, dtype=np.int64))

    def test_float32_accumulator(self):
        check(float32_accumulate, R(22).standard_normal(200).astype(np.float32), **EXACT)

    def test_rebinding_scalar(self):
        check(babylonian, np.float64(2.0), 8, **EXACT)

    def test_power_iteration(self):
        A = _spd(20, 23) / 20.0
        check(power_iteration, A, np.ones(20), 50, rtol=1e-9)

    def test_recurrence_into_local_array(self):
        check(ema, A100, 0.1)

    def test_prefix_sum_bit_exact(self):
        check(prefix_sum_loop, A100, **EXACT)

    @pytest.mark.parametrize("steps", [0, 1, 5])
    def test_buffer_swap_in_loop(self, steps):
        x = np.linspace(0, 1, 30) ** 2
        check(swap_buffers, x, np.zeros(30), steps)

    def test_insertion_sort_inplace_while_in_for(self):
        check(insertion_sort, R(24).standard_normal(50))


# =========================================================================== array statements in loops
def linear_convection(u, nt, c, dt, dx):
    # CFD "12 steps" step 1: first-order upwind, element loop inside a time loop
    for n in range(nt):
        un = u.copy()
        for i in range(1, u.shape[0]):
            u[i] = un[i] - c * dt / dx * (un[i] - un[i - 1])
    return u


def diffusion_1d(u, nt, nu, dt, dx):
    # CFD "12 steps" step 3: vectorized stencil in a time loop, in place
    for n in range(nt):
        un = u.copy()
        u[1:-1] = un[1:-1] + nu * dt / dx ** 2 * (un[2:] - 2 * un[1:-1] + un[:-2])
    return u


def laplace_2d(p, l1norm_target):
    # CFD "12 steps" step 9: iterate until the relative L1 change is small
    l1norm = 1.0
    it = 0
    while l1norm > l1norm_target:
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1])
        p[:, 0] = 0.0
        p[:, -1] = np.linspace(0.0, 1.0, p.shape[0])
        p[0, :] = p[1, :]
        p[-1, :] = p[-2, :]
        l1norm = np.sum(np.abs(p) - np.abs(pn)) / np.sum(np.abs(pn))
        it += 1
    return p, it


def atax(A, x):
    # polybench atax, row at a time
    y = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        tmp = A[i, :] @ x
        y += A[i, :] * tmp
    return y


def bicg(A, p, r):
    # polybench bicg
    s = np.zeros(A.shape[1])
    q = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        s += r[i] * A[i, :]
        q[i] = A[i, :] @ p
    return s, q


def trace_tanh(a):
    # the example: loop of scalar loads around an array return
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def durbin(r):
    # polybench durbin (Levinson-Durbin recursion)
    n = r.shape[0]
    y = np.zeros(n)
    z = np.zeros(n)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        s = 0.0
        for i in range(k):
            s += r[k - i - 1] * y[i]
        alpha = -(r[k] + s) / beta
        for i in range(k):
            z[i] = y[i] + alpha * y[k - i - 1]
        y[:k] = z[:k]
        y[k] = alpha
    return y


class TestArrayStatementsInLoops:
    def test_linear_convection(self):
        nx = 41
        u = np.ones(nx)
        u[10:20] = 2.0
        check(linear_convection, u, 25, 1.0, 0.025, 2.0 / (nx - 1))

    @pytest.mark.parametrize("nt", [0, 1, 20])
    def test_diffusion_time_loop_trip_counts(self, nt):
        nx = 41
        u = np.ones(nx)
        u[10:20] = 2.0
        dx = 2.0 / (nx - 1)
        check(diffusion_1d, u, nt, 0.3, 0.2 * dx ** 2 / 0.3, dx)

    def test_laplace_convergence_while(self):
        p = np.zeros((15, 15))
        p[:, -1] = np.linspace(0.0, 1.0, 15)
        check(laplace_2d, p, 1e-4, rtol=1e-9)

    def test_atax(self):
        r = R(25)
        check(atax, r.standard_normal((15, 11)), r.standard_normal(11), rtol=1e-10)

    def test_bicg(self):
        r = R(26)
        check(bicg, r.standard_normal((15, 11)), r.standard_normal(11), r.standard_normal(15),
              rtol=1e-10)

    def test_trace_tanh(self):
        check(trace_tanh, M12, rtol=1e-12)

    def test_durbin(self):
        r = 0.5 ** np.arange(1, 25)
        check(durbin, r, rtol=1e-9)


# =========================================================================== helper functions
def clip_scalar(v, lo, hi):
    return max(lo, min(v, hi))


def clipped_running_sum(a, lo, hi):
    s = 0.0
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        s = clip_scalar(s + a[i], lo, hi)
        out[i] = s
    return out


def heat_step(u, c):
    v = u.copy()
    v[1:-1] = u[1:-1] + c * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return v


def heat_with_helper(u, steps):
    for _ in range(steps):
        u = heat_step(u, 0.2)
    return u


def helper_dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


def gram_diag(X):
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = helper_dot(X[i], X[i])
    return out


class TestHelpers:
    def test_scalar_helper_in_loop(self):
        check(clipped_running_sum, A100, -2.0, 3.0)

    @pytest.mark.parametrize("steps", [0, 3, 30])
    def test_array_helper_in_time_loop(self, steps):
        check(heat_with_helper, np.sin(np.linspace(0, 3, 40)), steps)

    def test_helper_with_its_own_loop(self):
        check(gram_diag, M12, **EXACT)


# =========================================================================== constant loops
def gaussians(x):
    acc = np.zeros_like(x)
    for width in [0.5, 1.0, 2.0]:
        acc += np.exp(-x * x / width)
    return acc


def sum_tuple_of_arrays(a, b, c):
    total = np.zeros_like(a)
    for arr in (a, b, c):
        total = total + arr * arr
    return total


def horner_constants(x):
    y = np.zeros_like(x)
    for coef in (1.0, -3.0, 0.5, 2.0):
        y = y * x + coef
    return y


def fixed_range_three(x):
    for k in range(3):
        x = x + k * x.mean()
    return x


class TestConstantLoops:
    def test_list_of_constants(self):
        check(gaussians, A100)

    def test_tuple_of_arrays(self):
        check(sum_tuple_of_arrays, A100, B100, A100 * B100)

    def test_horner_tuple(self):
        check(horner_constants, A100)

    def test_constant_range(self):
        check(fixed_range_three, A100)


# =========================================================================== indexing
def read_past_end(a, n):
    s = 0.0
    for i in range(n):
        s += a[i]
    return s


def write_past_end(a, n):
    out = np.zeros(5)
    for i in range(n):
        out[i] = a[i]
    return out


def read_2d_past_end(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i, i + k]
    return s


def wrap_negative(a, w):
    n = w.shape[0]
    s = a[-1]
    for i in range(n):
        s += a[i - n] * w[i]
    return s


def store_from_end(a):
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        out[-1 - i] = a[i]
    return out


def circular_neighbours(x):
    # periodic boundary via negative wrap: x[i-1] at i=0 is x[-1]
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i - 1] - 2.0 * x[i] + x[(i + 1) % x.shape[0]]
    return out


def negative_2d(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[-1 - i, i - x.shape[1]]
    return s


class TestIndexing:
    def test_index_error_read(self):
        check_raises(IndexError, read_past_end, A100[:10].copy(), 11)

    def test_index_error_write(self):
        check_raises(IndexError, write_past_end, A100[:10].copy(), 6)

    def test_index_error_2d(self):
        check_raises(IndexError, read_2d_past_end, M12, 1)

    def test_index_error_negative_too_far(self):
        check_raises(IndexError, wrap_negative, A100[:5].copy(), np.ones(6))

    def test_in_range_reads_do_not_raise(self):
        check(read_past_end, A100[:10].copy(), 10, **EXACT)
        check(read_2d_past_end, M12, 0, **EXACT)

    def test_negative_indices_wrap(self):
        check(wrap_negative, A100, B100[:30].copy(), **EXACT)

    def test_negative_store(self):
        check(store_from_end, A100)

    def test_periodic_neighbour(self):
        check(circular_neighbours, A100)

    def test_negative_2d(self):
        check(negative_2d, M12, **EXACT)


# =========================================================================== Monte Carlo
def mc_pi(x, y):
    acc = 0
    for i in range(x.shape[0]):
        if x[i] ** 2 + y[i] ** 2 <= 1.0:
            acc += 1
    return 4.0 * acc / x.shape[0]


def random_walk(steps, barrier):
    pos = 0.0
    maxpos = 0.0
    hits = 0
    for step in steps:
        pos += step
        if pos > maxpos:
            maxpos = pos
        if abs(pos) > barrier:
            hits += 1
            pos = 0.0
    return pos, maxpos, hits


def american_put_lattice(S0, K, u, d, p, disc, n):
    # binomial tree, backward induction with an early-exercise branch
    values = np.empty(n + 1)
    for j in range(n + 1):
        values[j] = max(K - S0 * u ** j * d ** (n - j), 0.0)
    for step in range(n - 1, -1, -1):
        for j in range(step + 1):
            cont = disc * (p * values[j + 1] + (1 - p) * values[j])
            ex = K - S0 * u ** j * d ** (step - j)
            values[j] = ex if ex > cont else cont
    return values[0]


class TestMonteCarlo:
    def test_mc_pi(self):
        r = R(27)
        check(mc_pi, r.random(1000), r.random(1000))

    def test_random_walk_for_over_array(self):
        check(random_walk, R(28).standard_normal(1000), 6.0, rtol=1e-12)

    def test_binomial_lattice(self):
        check(american_put_lattice, 100.0, 100.0, 1.02, 1 / 1.02, 0.51, 0.999, 60, rtol=1e-12)


# =========================================================================== one compiled function, many runs
def data_dependent_trips(x, tol):
    # trip count depends on values and on a runtime float
    it = 0
    r = x.copy()
    while np.abs(r).max() > tol:
        r = 0.5 * r
        it += 1
    return r, it


def range_from_np_scalar(a, n):
    s = 0.0
    for i in range(n):
        s += a[i]
    return s


class TestReuse:
    def test_trip_counts_vary_with_values_and_tol(self):
        for x, tol in [(A100, 1e-3), (A100 * 1e3, 1e-3), (A100, 10.0), (A100 * 1e-9, 1e-6)]:
            check(data_dependent_trips, x, tol, **EXACT)

    def test_trip_counts_vary_with_runtime_int(self):
        for n in [0, 1, 33, 100, 7]:
            check(range_from_np_scalar, A100, np.int64(n), **EXACT)

    def test_trip_counts_vary_with_shape(self):
        for n in [1, 2, 50, 100, 13]:
            check(dot_shape, A100[:n].copy(), B100[:n].copy(), **EXACT)

    def test_branch_outcomes_alternate(self):
        for s in [1.0, -1.0, 1.0, -1.0]:
            check(sign_of_sum, s * np.abs(A100))


# Separate on purpose: these assert the *mechanism* (no recompile for a new trip count,
# tolerance or branch outcome), not just the results. ``recompile_reasons`` is the list of
# Recompile records of a CompiledFunction (cppcodegen/api.py).
@pytest.mark.skipif(PLAIN, reason="needs the real compiler")
class TestNoRecompile:
    @staticmethod
    def _fresh(fn):
        return cppcodegen.compile(fn)

    def test_branch_outcome_is_runtime(self):
        def f(x):
            if x.sum() > 0:
                return x * 2.0
            return x - 1.0
        cf = self._fresh(f)
        for s in [1.0, -1.0, 1.0]:
            _compare(cf(s * np.abs(A100)), f(s * np.abs(A100)), 1e-12, 0, "result")
        assert cf.recompile_reasons == []
        assert len(cf.variants) == 1

    def test_tolerance_and_data_trip_count_are_runtime(self):
        def f(x, tol):
            it = 0
            while np.abs(x).max() > tol:
                x = 0.5 * x
                it += 1
            return x, it
        cf = self._fresh(f)
        for tol in [1e-3, 1.0, 1e-9]:
            _compare(cf(A100, tol), f(A100, tol), 0, 0, "result")
        assert cf.recompile_reasons == []

    def test_numpy_int_trip_count_is_runtime(self):
        def f(a, n):
            s = 0.0
            for i in range(n):
                s += a[i]
            return s
        cf = self._fresh(f)
        for n in [0, 5, 100]:
            _compare(cf(A100, np.int64(n)), f(A100, np.int64(n)), 0, 0, "result")
        assert cf.recompile_reasons == []

    def test_long_loop_compiles_like_short_loop(self):
        """Compile time must not grow with the trip count: a 10**5-element scalar loop
        (unrolled today) compiles, and its generated source is no bigger than at 10 elements."""
        def f(a, b):
            s = 0.0
            for i in range(a.shape[0]):
                s += a[i] * b[i]
            return s
        small = cppcodegen.explain(f, A100[:10].copy(), B100[:10].copy())
        big_a, big_b = R(30).standard_normal(10**5), R(31).standard_normal(10**5)
        big = cppcodegen.explain(f, big_a, big_b)
        assert len(big.source) <= 2 * len(small.source) + 2000


# Tests of constructs the compiler does not capture yet. They are expected to fail with a
# clear error (never with a wrong value: tests/conftest.py marks them xfail only for errors,
# so an AssertionError on values still fails the run). The list should only shrink.
NOT_YET = {
}


def chained_in_branch(x, lo, hi):
    s = 0.0
    n = 0
    for v in x:
        if lo <= v < hi:                        # (lo <= v) and (v < hi), v read once
            s += v
        elif hi <= v <= 2 * hi != 7.0:
            n += 1
    return s, n


def chained_on_arrays(x):
    return 0.0 < x < 1.0                        # NumPy: the truth value of an array


def chained_while(x, t):
    i = 0
    while 0 <= i < x.shape[0] and x[i] < t:
        i += 1
    return i


def test_chained_comparisons_compile_as_python_evaluates_them():
    x = np.array([-1.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, np.nan])
    f = cppcodegen.compile(chained_in_branch)
    for lo, hi in ((0.0, 1.0), (-2.0, 0.5), (1.0, 1.0)):
        s, n = f(x, lo, hi)
        s0, n0 = chained_in_branch(x, lo, hi)
        assert s == s0 and int(n) == n0
    g = cppcodegen.compile(chained_while)
    for t in (-5.0, 0.3, 1.2, 99.0):
        assert int(g(x[:-1], t)) == chained_while(x[:-1], t)
    with pytest.raises(ValueError, match="truth value"):
        chained_on_arrays(x)
    with pytest.raises((ValueError, cppcodegen.DataDependentError)):
        cppcodegen.compile(chained_on_arrays)(x)


def weak_conditional(M, t):
    s = 0.0
    for i in range(M.shape[0]):
        s += M[i, 0]                            # float32 from here on (NEP 50)
        s += math.sqrt(abs(M[i, 0])) if M[i, 0] > t else 3.0   # a Python float either way
    return s


def test_a_conditional_of_two_python_numbers_stays_weak():
    M = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    got, want = cppcodegen.compile(weak_conditional)(M, 0.1), weak_conditional(M, 0.1)
    assert got.dtype == want.dtype == np.float32
    assert got == pytest.approx(want, rel=1e-6)


# ====================================================== min / max / abs of loop indices
# They stay index expressions (sympy Min/Max, std::min/std::max in C++): once they were
# traced values, so each loop around them was unrolled (a 30x40 clamped 3x3 filter took
# minutes to build) or, with bounds from array values, refused.
def right_neighbour_max(a):
    n = a.shape[0]
    out = np.zeros_like(a)
    for y in range(n):
        m = a[y]
        yy = min(y + 1, n - 1)
        if a[yy] > m:
            m = a[yy]
        out[y] = m
    return out


def clamped_max_filter(img):
    h, w = img.shape
    out = np.zeros_like(img)
    for y in range(h):
        for x in range(w):
            m = img[y, x]
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    yy = min(max(y + dy, 0), h - 1)
                    xx = min(max(x + dx, 0), w - 1)
                    if img[yy, xx] > m:
                        m = img[yy, xx]
            out[y, x] = m
    return out


def mirrored(a):
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n):
        out[i] = a[abs(i - n // 2)] + a[max(i - 1, 0)] * 0.5
    return out


def window_sums(a):
    n = a.shape[0]
    out = np.zeros_like(a)
    for i in range(n):
        for j in range(max(0, i - 2), min(n, i + 3)):
            out[i] += a[j]
    return out


def capped_csr(indptr, x):
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        for jj in range(indptr[i], indptr[i + 1]):
            out[i] += x[min(jj, 5)]
    return out


class TestIndexMinMax:
    def test_min_max_abs_of_indices_compile_as_loops(self):
        img = np.random.default_rng(2).integers(0, 1000, (30, 40)).astype(np.int32)
        a = np.random.default_rng(3).random(57)
        for fn, args in ((right_neighbour_max, (a,)), (clamped_max_filter, (img,)),
                         (mirrored, (a,)), (window_sums, (a,))):
            check(fn, *args, **EXACT)
            src = cppcodegen.explain(fn, *args).source
            assert "// for at" in src and ("std::min" in src or "std::max" in src)
            assert len(src) < 60_000, (fn.__name__, len(src))     # not unrolled

    def test_min_of_an_index_from_array_bounds(self):
        check(capped_csr, np.array([0, 2, 5, 9]), np.arange(10.0), **EXACT)


def branch_on_index_around_numpy_call(G, H, S):
    for E in range(G.shape[0]):
        for w in range(H.shape[0]):
            if E - w >= 0:                      # a NumPy call inside a branch on the indices
                S[E] += G[E - w] @ np.linalg.inv(H[w])


def test_a_branch_on_a_loop_index_around_a_numpy_call_unrolls_the_loop():
    """The branch cannot be compiled (a NumPy call between kernels inside it) nor run by
    Python while its loop is compiled (its condition is the loop's index): the loop around
    it is unrolled instead, so the branch's condition is a Python bool."""
    rng = np.random.default_rng(4)
    G = rng.random((3, 2, 2)) + 1j * rng.random((3, 2, 2))
    H = rng.random((2, 2, 2)) + 2 * np.eye(2)
    S1, S2 = np.zeros((3, 2, 2), complex), np.zeros((3, 2, 2), complex)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cppcodegen.compile(branch_on_index_around_numpy_call)(G, H, S1)
    branch_on_index_around_numpy_call(G, H, S2)
    np.testing.assert_allclose(S1, S2, rtol=1e-13)


def metropolis_sweep(spins, rand, beta):
    n = spins.shape[0]
    for i in range(n):
        for j in range(n):
            s = spins[i, j]
            nb = spins[(i + 1) % n, j] + spins[i, (j + 1) % n] + spins[(i - 1) % n, j] \
                + spins[i, (j - 1) % n]
            dE = 2 * s * nb
            if dE <= 0 or rand[i, j] < math.exp(-dE * beta):
                spins[i, j] = -s
    return spins, dE, nb


def _inside_loops(fn, *args) -> list:
    """The loop IR lines inside the function's loops (their bodies)."""
    ir = str(cppcodegen.explain(fn, *args))
    body = ir[ir.index("for lv0"):ir.index("== kernels")].split("\n")
    return [line for line in body if line.startswith("    ")]


def test_a_branch_flipping_one_element_updates_the_array_where_it_is():
    """The values read from the array before the branch and kept in variables (``s``,
    ``nb``, ``dE``) are computed before it, so the branch writes the array in place: no copy
    of the whole array per iteration (a 200x200 sweep ran 5x slower than Python)."""
    rng = np.random.default_rng(9)
    spins = rng.choice([-1, 1], size=(23, 23)).astype(np.int64)
    rand = rng.random((23, 23))
    check(metropolis_sweep, spins, rand, 0.4, **EXACT)        # (spins compared afterwards too)
    inside = _inside_loops(metropolis_sweep, spins, rand, 0.4)
    assert inside and not any("over [23, 23]" in line for line in inside), inside


def bubble_sort(a):
    n = len(a)
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
                swapped = True
        if not swapped:
            break
    return a


def test_a_swap_in_a_branch_is_two_element_stores():
    """``a[j], a[j + 1] = a[j + 1], a[j]``: both elements read first, then two stores into
    the array where it is (a pass over the whole array per swap made the sort slower than
    Python)."""
    a = np.random.default_rng(10).random(41)
    check(bubble_sort, a, **EXACT)
    inside = _inside_loops(bubble_sort, a)
    assert inside and not any("over [41]" in line for line in inside), inside


def diffuse_error(a):
    n = a.shape[0]
    for i in range(n):
        if i + 1 < n:
            a[i + 1] += 0.5 * a[i]
            if i + 2 < n:
                a[i + 2] += 0.25 * a[i]
    return a


def test_a_branch_inside_a_branch_updates_the_array_where_it_is():
    """The inner branch's array is the one the outer branch stored into (a scatter not
    lowered yet when the inner branch took its buffer): it stays in that buffer, no copy
    of the whole array in and out per iteration (error diffusion ran in O(n^2))."""
    a = np.random.default_rng(12).random(37)
    check(diffuse_error, a, **EXACT)
    inside = _inside_loops(diffuse_error, a)
    assert inside and not any("over [37]" in line for line in inside), inside


def separable_filter(img, taps):
    r = taps.shape[0] // 2
    h, w = img.shape
    padded = np.pad(img, r, mode="reflect")
    tmp = np.zeros((h + 2 * r, w), dtype=img.dtype)
    for k in range(taps.shape[0]):
        tmp += taps[k] * padded[:, k:k + w]
    out = np.zeros((h, w), dtype=img.dtype)
    for k in range(taps.shape[0]):
        out += taps[k] * tmp[k:k + h, :]
    return out


def test_a_few_shifted_slices_summed_in_a_loop_fuse_into_one_pass():
    """A loop of at most 8 iterations known when compiling, whose variable bounds slices (a
    filter's taps), is run by Python while tracing: its statements fuse, one kernel per
    loop instead of a pass per tap (the README's unroll rule)."""
    img = np.random.default_rng(11).random((40, 37)).astype(np.float32)
    taps = np.array([0.1, 0.2, 0.4, 0.2, 0.1], np.float32)
    check(separable_filter, img, taps, rtol=1e-6, atol=1e-6)
    ex = cppcodegen.explain(separable_filter, img, taps)
    assert not any(k.form == "control" for k in ex.kernels) and len(ex.kernels) <= 3
    big = np.ones(11, np.float32)                   # 11 taps: a compiled loop
    assert any(k.form == "control" for k in cppcodegen.explain(separable_filter, img, big).kernels)


def pad_by_taps(img, taps):
    r = taps.shape[0] // 2
    return np.pad(img, r, mode="reflect") * 2.0


def test_a_pad_width_from_an_argument_shape_that_changes():
    """``np.pad(img, taps.shape[0] // 2)``: a second call with another number of taps (the
    shapes become symbolic) pads by that call's width, as NumPy (it raised TypeError)."""
    img = np.random.default_rng(12).random((20, 30))
    f = cppcodegen.compile(pad_by_taps)
    for n in (5, 3, 7):
        taps = np.ones(n)
        np.testing.assert_array_equal(f(img, taps), pad_by_taps(img, taps))


def elementary_automaton(row, rule, steps):
    """Rule 30/110 on a uint8 row: a table built from the rule's bits with a Python list,
    read at traced positions (table[idx] with table a NumPy array)."""
    table = np.array([(rule >> i) & 1 for i in range(8)], dtype=np.uint8)
    hist = np.zeros((steps + 1, row.size), dtype=np.uint8)
    hist[0] = row
    for t in range(steps):
        idx = (np.roll(row, 1) << 2) | (row << 1) | np.roll(row, -1)
        row = table[idx]
        hist[t + 1] = row
    return hist


def constant_table_at_an_index(x, i):
    t = np.array([1.0, 2.0, 3.0, 4.0])
    return t[i] * x[i] + t[x.argmax() % 4]


def test_a_numpy_array_read_at_traced_positions():
    row = (np.random.default_rng(2).random(64) < 0.3).astype(np.uint8)
    for rule in (30, 110):
        check(elementary_automaton, row, rule, 12)
    check(constant_table_at_an_index, np.linspace(-1, 2, 9), 3)


# ``and``/``or`` of traced values that are not bools: Python's value, the operand chosen
def and_of_ints(a, k):
    n = 0
    for i in range(a.shape[0]):
        n = i
    return a.shape[0] and k, n and k, k or n, (a[0] > 0) and a[1], a[0] or a[1] or 7


@pytest.mark.parametrize("a, k", [(np.array([1.5, -2.0]), 3), (np.array([0.0, 2.5]), 0),
                                  (np.array([-1.0, 0.0]), 4), (np.array([0.0, 0.0]), -2)])
def test_and_or_of_values_return_an_operand(a, k):
    f = cppcodegen.compile(and_of_ints, fallback=False)
    got, want = f(a, k), and_of_ints(a, k)
    f(a, k + 1)         # (k a run-time value from the second value on)
    got = f(a, k)
    for g, w in zip(got, want):
        if isinstance(w, (bool, np.bool_)):         # a comparison chosen: its truth
            assert bool(g) == bool(w), (got, want)
        else:                                       # a number chosen: that number, not a bool
            assert g == w and not isinstance(g, (bool, np.bool_)), (got, want)


def _bit_reverse8(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        v = x[i]
        r = 0
        for b in range(8):
            r = (r << 1) | (v & 1)
            v = v >> 1
        out[i] = r
    return out


def test_a_short_constant_loop_is_unrolled_whole():
    x = np.random.default_rng(0).integers(0, 256, 300, dtype=np.uint8)
    f = cppcodegen.compile(_bit_reverse8)
    np.testing.assert_array_equal(f(x), _bit_reverse8(x))
    text = f.explain(x).source      # (written out: the bytes' loop in SIMD lanes, unroll.py)
    assert "omp simd" in text and "_t0(" in text


def nested_cells(pos, head, nxt):
    """Six nested loops around two linked-list whiles updating an array made before them:
    each loop's later traces carry the array from their first attempt (a trace per level
    about twice, not three times: 4,609 traces of the innermost body before, 175 now)."""
    f = np.zeros(pos.shape[0])
    e = 0.0
    for a in range(2):
        for b in range(2):
            for c in range(2):
                for d in range(2):
                    for g in range(2):
                        for h in range(2):
                            i = head[a + b + c + d + g + h]
                            while i >= 0:
                                j = head[a]
                                while j >= 0:
                                    if i < j:
                                        r2 = (pos[i] - pos[j]) ** 2
                                        if r2 < 1.0:
                                            f[i] += r2
                                            f[j] -= r2
                                            e += r2
                                    j = nxt[j]
                                i = nxt[i]
    return f, e


def test_deeply_nested_loops_trace_a_bounded_number_of_times():
    from cppcodegen.frontend import carried
    calls = []
    original = carried.Carried._attempt

    def counted(self, *a, **k):
        calls.append(self.where)
        return original(self, *a, **k)
    pos = np.random.default_rng(0).random(8)
    head = np.array([0, 2, 4, 6, 1, 3, 5, 7])
    nxt = np.array([1, -1, 3, -1, 5, -1, 7, -1])
    carried.Carried._attempt = counted
    try:
        got = cppcodegen.compile(nested_cells)(pos, head, nxt)
    finally:
        carried.Carried._attempt = original
    want = nested_cells(pos, head, nxt)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    assert got[1] == pytest.approx(want[1], rel=1e-13)
    assert len(calls) < 1500, len(calls)     # (780; 18,444 before)
