"""Programs from a new-user sweep (k-means, Jacobi, matrix powers, lookup tables, scaled
vectors) that failed, each in its smallest form, compared with the plain function."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy


def damped_jacobi(A, b):
    D = np.diag(A)                      # np.diag of a symbolic size: a view, not a NumPy call
    x = np.zeros_like(b)
    for _ in range(100):
        x_new = (b + 0.5 * x) / D
        if np.abs(x_new - x).max() < 1e-12:
            break
        x = x_new
    return x


def repeated_squaring(A, p):
    while p > 0:
        A = A @ A                       # a 1x1 product in a while loop: fused, not NumPy's
        p -= 1
    return A


LUT = np.array([3, 1, 4, 1, 5], np.uint8)


def table_lookup(idx):
    return np.take(LUT, idx)            # NumPy dispatches np.take on the table alone


def scaled(x):
    return x / x.shape[0] ** 0.5        # a size to a float power


def test_sweep_programs_after_a_shape_change():
    f = cppcodegen.compile(damped_jacobi, dynamic=True)
    g = cppcodegen.compile(scaled, dynamic=True)
    for n in (6, 9):
        A, b = 3.0 * np.eye(n) + 0.1, np.arange(n, dtype=float)
        np.testing.assert_allclose(f(A, b), damped_jacobi(A, b), rtol=1e-12)
        x = np.linspace(1, 2, n)
        np.testing.assert_allclose(g(x), scaled(x), rtol=1e-15)


def test_one_wide_products_in_a_loop_and_constant_tables():
    for shape in ((2, 2), (1, 1)):
        check_against_numpy(repeated_squaring, np.full(shape, 0.5), np.int64(3), rtol=1e-14)
    check_against_numpy(table_lookup, np.array([0, 4, 2, -1]), ulp=0)


def backward_induction(V, N):
    j = np.arange(N + 1)
    V = V + 0.0 * j
    for i in range(N - 1, -1, -1):
        j = np.arange(i + 1)            # a temporary of the body, shorter each step
        V[:i + 1] = np.maximum(0.5 * (V[1:i + 2] + V[:i + 1]), 0.01 * j)
    return V[0]


def temporary_read_after(V, N):
    V = V.copy()
    j = np.arange(N + 1)
    for i in range(N - 1, -1, -1):
        j = np.arange(i + 1)
        V[:i + 1] = V[:i + 1] * 0.5 + j
    return V.sum() + j.sum()            # its last value after the loop: carried (unrolled)


def test_a_loop_temporary_rebound_with_another_shape_each_step():
    """A name the body assigns before reading it is not carried, so its shape may change
    every step and the loop compiles (it was refused: 'j changes its shape'); read after the
    loop, it is carried after all (the loop then runs as before)."""
    V = np.linspace(0, 1, 301)
    got, _ = check_against_numpy(backward_induction, V, np.int64(300), rtol=1e-13)
    assert "// for at" in cppcodegen.explain(backward_induction, V, np.int64(300)).source
    check_against_numpy(temporary_read_after, np.linspace(0, 1, 41), 40, rtol=1e-13)


def gcd_arrays(a, b):
    while np.any(b != 0):
        nz = b != 0
        a, b = np.where(nz, b, a), np.where(nz, a % np.where(nz, b, 1), 0)
    return a


def pagerank(A):
    n = A.shape[0]
    out = A.sum(axis=1)
    P = A / np.where(out == 0, 1.0, out)[:, None]
    r = np.full(n, 1.0 / n)
    while True:
        rn = 0.85 * (r @ P) + 0.15 / n
        err = np.abs(rn - r).sum()
        r = rn
        if err < 1e-12:
            break
    return r


def bfs_levels(adj, src):
    n = adj.shape[0]
    level = np.full(n, -1)
    frontier = np.zeros(n, dtype=bool)
    frontier[src] = True
    level[src] = 0
    d = 0
    while frontier.any():
        d += 1
        nxt = np.any(adj & frontier[:, None], axis=0) & (level < 0)
        level[nxt] = d
        frontier = nxt
    return level


def padded(x):
    return np.pad(x, ((0, 1), (2, 2)), mode="constant", constant_values=-1.0)


def test_carried_arrays_of_sizes_equal_in_this_call():
    """A carried value whose new shape is another argument's size, equal to its own in this
    call (np.where(nz, b, a) has b's size, a carries a's): guarded equal, as broadcasting
    them is, on the second size too (was: 'a changes its shape or kind in the loop')."""
    rng = np.random.default_rng(4)
    for n in (5, 3, 8):
        check_against_numpy(gcd_arrays, np.arange(12, 12 + n), np.arange(18, 18 + n))
        check_against_numpy(pagerank, rng.random((n, n)) + 0.1, rtol=1e-10, atol=1e-12)
        adj = rng.random((n, n)) < 0.4
        check_against_numpy(bfs_levels, adj | adj.T, 0)


def test_pad_constant_values_after_a_shape_change():
    for shape in ((5, 6), (3, 4), (1, 1)):
        check_against_numpy(padded, np.arange(float(np.prod(shape))).reshape(shape))


def lattice_boltzmann(F, cylinder, steps, tau):
    """Philip Mocz's D2Q9 style: zip over constant velocity tables, np.roll by them, the
    obstacle's populations read with F[cyl, :], reordered, written back."""
    idxs = np.arange(9)
    cxs = np.array([0, 0, 1, 1, 1, 0, -1, -1, -1])
    cys = np.array([0, 1, 1, 0, -1, -1, -1, 0, 1])
    weights = np.array([4 / 9, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36])
    for _ in range(steps):
        for i, cx, cy in zip(idxs, cxs, cys):
            F[:, :, i] = np.roll(F[:, :, i], cx, axis=1)
            F[:, :, i] = np.roll(F[:, :, i], cy, axis=0)
        bndry = F[cylinder, :]
        bndry = bndry[:, [0, 5, 6, 7, 8, 1, 2, 3, 4]]
        rho = np.sum(F, 2)
        ux = np.sum(F * cxs, 2) / rho
        uy = np.sum(F * cys, 2) / rho
        Feq = np.zeros(F.shape)
        for i, cx, cy, w in zip(idxs, cxs, cys, weights):
            cu = cx * ux + cy * uy
            Feq[:, :, i] = rho * w * (1 + 3 * cu + 9 * cu ** 2 / 2 - 3 * (ux ** 2 + uy ** 2) / 2)
        F += -(1.0 / tau) * (F - Feq)
        F[cylinder, :] = bndry
    return F


def roll_by_table(x, shifts):
    out = np.zeros_like(x)
    for k in range(shifts.shape[0]):
        out += np.roll(x, shifts[k]) * (k + 1)     # a shift known when the program runs
    return out


def selection_is_a_copy(x, m):
    s = x[m]
    x += 1.0
    x[m] = s * 2
    return x


def test_lattice_boltzmann_and_value_shifts():
    rng = np.random.default_rng(6)
    for ny, nx in ((6, 10), (9, 7)):
        F = 1 + 0.01 * rng.standard_normal((ny, nx, 9))
        yy, xx = np.mgrid[:ny, :nx]
        cyl = (xx - nx / 4) ** 2 + (yy - ny / 2) ** 2 < (ny / 4) ** 2
        check_against_numpy(lattice_boltzmann, F, cyl, 3, 0.6, writes=(0,), rtol=1e-12)
    x = rng.standard_normal(11)
    check_against_numpy(roll_by_table, x, np.array([0, 3, -2, 14, -11]), ulp=0)
    check_against_numpy(roll_by_table, x.reshape(1, 11), np.array([1, -1]), ulp=0)
    check_against_numpy(selection_is_a_copy, np.arange(6.0), np.arange(6) > 2, writes=(0,))


def fft_radix2(x):
    n = x.shape[0]
    levels = n.bit_length() - 1         # a size's bit_length (a symbolic size: guarded)
    j = np.arange(n)
    rev = np.zeros(n, dtype=np.int64)
    for b in range(levels):
        rev |= ((j >> b) & 1) << (levels - 1 - b)
    a = x[rev].astype(np.complex128)
    size = 2
    while size <= n:
        w = np.exp(-2j * np.pi * np.arange(size // 2) / size)
        a = a.reshape(-1, size)
        even, odd = a[:, :size // 2], a[:, size // 2:] * w
        a = np.concatenate([even + odd, even - odd], axis=1).reshape(-1)
        size *= 2
    return a


def scalar_casts(a, x, k):
    s = np.float32(0)
    for i in range(k):
        s += np.float32(x[i]) * np.float64(a)
    return np.exp(np.float64(a)) + x, s, np.int64(x.sum()), np.float64(3)


def unique_counts(labels):
    values, counts = np.unique(labels, return_counts=True)
    return values, counts * 2


def test_sizes_bit_length_scalar_casts_and_one_call_for_several_outputs():
    rng = np.random.default_rng(7)
    for n in (8, 16, 4):
        x = rng.standard_normal(n)
        check_against_numpy(fft_radix2, x, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cppcodegen.compile(fft_radix2)(x), np.fft.fft(x), atol=1e-12)
    check_against_numpy(scalar_casts, 0.5, np.linspace(0, 1, 7), 5)
    check_against_numpy(unique_counts, rng.integers(0, 9, 200))
    from cppcodegen.runtime.extern import ExternCall, Slot     # one call for both outputs
    calls = []

    def two(x):
        calls.append(1)
        return x + 1, x * 2
    x, memo = np.arange(3.0), {}
    first, second = np.empty(3), np.empty(3)
    ExternCall(two, (Slot(0),), {}, 0)(x, out=first, memo=memo)
    ExternCall(two, (Slot(0),), {}, 1)(x, out=second, memo=memo)
    assert len(calls) == 1 and list(first) == [1, 2, 3] and list(second) == [0, 2, 4]


def flood_fill(mask):
    filled = np.zeros_like(mask)
    filled[0] = mask[0]
    changed = True
    while changed:
        g = filled.copy()               # a copy of the carried array: a new array
        g[1:] |= filled[:-1]
        g &= mask
        changed = bool((g != filled).any())
        filled = g
    return filled


def flood_fill_concat(mask):
    filled = np.zeros_like(mask)
    filled[0] = mask[0]
    changed = True
    while changed:                      # the condition is the carried flag itself
        g = (filled | np.concatenate([[False], filled[:-1]])) & mask
        changed = bool((g != filled).any())
        filled = g
    return filled


def halvings(x):
    filled = x.copy()
    changed = True
    while changed:
        g = np.floor(filled * 0.5)
        changed = (g != filled).any()
        filled = g
    return filled


def test_while_on_a_carried_flag_and_copies_of_carried_arrays():
    rng = np.random.default_rng(8)
    for n in (4, 1, 30):
        mask = rng.random(n) < 0.8
        check_against_numpy(flood_fill, mask)
        check_against_numpy(flood_fill_concat, mask)
    check_against_numpy(halvings, np.array([37.0, 5.0, 0.0, 1e6]))


def knapsack(wts, vals, W):
    dp = np.zeros(W + 1)
    for i in range(wts.shape[0]):
        w = wts[i]
        new = dp.copy()
        new[w:] = np.maximum(dp[w:], dp[:W + 1 - w] + vals[i])   # two lengths from w: equal
        dp = new
    return dp


def test_knapsack_slices_of_equal_run_time_lengths():
    rng = np.random.default_rng(9)
    for n, W in ((6, 10), (20, 57), (1, 3)):
        check_against_numpy(knapsack, rng.integers(1, min(8, W + 1), n), rng.uniform(1, 10, n), W)


def seeded_inside(x):
    rng = np.random.default_rng(42)     # a constant seed: the same draws at every call
    noise = rng.normal(0, 0.1, x.shape[0])
    return x[rng.permutation(x.shape[0])] + noise + rng.random(5).sum()


def unseeded_inside(x):
    return x + np.random.default_rng().random(x.shape[0])


def test_a_generator_made_inside_the_function():
    """It crashed the process (NumPy's compiled Generator got a traced array from np.empty)."""
    for n in (6, 9):
        check_against_numpy(seeded_inside, np.arange(float(n)), ulp=0)
    f = cppcodegen.compile(unseeded_inside, fallback=False)
    with pytest.raises(cppcodegen.UnsupportedError, match="change from call to call"):
        f(np.arange(4.0))


def swap_rows(A, i, j):
    A[[i, j]] = A[[j, i]]               # in place: the two rows through a small buffer
    return A


def permute_some(A, idx):
    A[idx] = A[idx[::-1]] * 2.0
    return A


def test_rows_swapped_in_place_in_an_argument():
    rng = np.random.default_rng(10)
    A = rng.standard_normal((30, 20))
    check_against_numpy(swap_rows, A, 3, 17, writes=(0,), ulp=0)
    check_against_numpy(swap_rows, A, 5, 5, writes=(0,), ulp=0)
    check_against_numpy(permute_some, A, np.array([0, 4, 4, 29, -1]), writes=(0,), ulp=0)


def normal_equations(x, y):
    A = np.vstack([x ** 2, x, np.ones_like(x)]).T       # a transposed view, never copied
    coef = np.linalg.solve(A.T @ A, A.T @ y)
    return coef, y - A @ coef


def test_normal_equations_of_a_stacked_transposed_design_matrix():
    """A.T @ A goes to NumPy's matmul as views of the stacked rows (it copied both
    operands), A.T @ y reads those rows in order, and y - A @ c keeps its 3 rows whole
    (it made a partial sum per row): 0.26x -> 0.6x NumPy's time at 10^6 points."""
    rng = np.random.default_rng(11)
    for n in (1000, 37):
        x = np.linspace(-2, 3, n)
        check_against_numpy(normal_equations, x, 0.7 * x ** 2 + rng.standard_normal(n),
                            rtol=1e-9, atol=1e-9)


def other_reductions(x, b):
    return (np.bitwise_or.reduce(x, axis=0), np.logical_xor.reduce(b, axis=1),
            np.logical_xor.reduce(b, axis=None), np.bitwise_xor.reduce(x.ravel()))


def test_reductions_of_other_ufuncs():
    """np.logical_xor.reduce is the parity of the count; other ufuncs' reduce (bitwise_or,
    bitwise_xor, ...) are NumPy's call (they were refused)."""
    x = np.random.default_rng(12).integers(0, 256, (5, 7))
    check_against_numpy(other_reductions, x, x % 3 == 0)


def strided_updates(a):
    a[::2] += 1                         # stored in the argument directly (no copy of it)
    a[1::2] *= -1
    return a


def strided_updates_read_first(a):
    b = a * 2                           # the old values, read before the updates
    a[::2] += 1
    a[1::2] *= -1
    return a, b + a


def test_updates_of_an_argument_through_strided_views():
    x = np.random.default_rng(13).standard_normal(21)
    check_against_numpy(strided_updates, x, writes=(0,), ulp=0)
    check_against_numpy(strided_updates_read_first, x, writes=(0,), ulp=0)
    f = cppcodegen.compile(strided_updates)
    y = x.copy()
    assert f(y) is y or np.array_equal(y, strided_updates(x.copy()))


def diff_prepend(x):
    return np.diff(x, prepend=x[:1]), np.pad(x, (2, 1)), np.concatenate([x[:1] * 0, x])


def test_joins_of_symbolic_lengths_are_split_into_vector_loops():
    """A join (np.diff's prepend, np.pad, np.concatenate) of a length known at run time is
    one loop per part, each vectorized (was: a select per element at clamped indices, 0.2x
    NumPy's time); every length, 0 and 1 included, as NumPy."""
    f = cppcodegen.compile(diff_prepend, dynamic=True)
    for n in (40, 0, 1, 2, 5, 129):
        x = np.arange(n, dtype=np.int32) * 3 % 7
        for g, e in zip(f(x), diff_prepend(x)):
            assert g.dtype == e.dtype and np.array_equal(g, e)
    source = str(cppcodegen.explain(f, np.arange(9, dtype=np.int32)))
    assert "for (int64_t i0 = 1; i0 < i0_end; i0 += L)" in source    # the part after the cut:
    assert "for (int64_t i0 = 0; i0 < 1;" in source                   # a vector loop of its own


def zero_d_results(x):
    return np.asarray(x.max()), np.array(x.min()), x.sum(), np.asarray(x.max()) * 2


def test_zero_d_arrays_are_returned_as_arrays():
    x = np.arange(5.0)
    for backend in ("cpp", "check"):
        got = cppcodegen.compile(zero_d_results, backend=backend)(x)
        want = zero_d_results(x)
        assert [type(g) for g in got] == [type(w) for w in want], backend
        assert [float(g) for g in got] == [float(w) for w in want]


def other_ufuncs(x):
    return np.bitwise_count(x) + 1, np.gcd(x, 12)


def test_ufuncs_without_a_compiled_loop_are_numpys_call():
    check_against_numpy(other_ufuncs, np.array([1, 3, 255, -8, 0]))


def fortran_order(x, a):
    return x.reshape(4, -1, order="F").sum(axis=0), a.flatten("F")[:7], a.ravel(order="F")


def symmetric_spectrum(A):
    w, v = np.linalg.eigh(A + A.T)
    return np.linalg.eigvalsh(A + A.T) - w, np.abs(v).sum(axis=0)


def along_axis(a):
    idx = np.argsort(a, axis=1)[:, :3]
    b = a.copy()
    np.put_along_axis(b, np.argmin(b, axis=0)[None, :], -1.0, axis=0)
    return np.take_along_axis(a, idx, axis=1), b


def test_library_idioms_of_a_new_user():
    """order='F' reshapes (the reversed axes reshaped), np.linalg.eigh/eigvalsh (real
    whatever the values: NumPy's call; eig/eigvals stay refused), take/put_along_axis
    (NumPy's own code: fancy indexing of traced arrays)."""
    rng = np.random.default_rng(5)
    a = rng.random((6, 9))
    check_against_numpy(fortran_order, rng.random(24), a, ulp=0)
    check_against_numpy(symmetric_spectrum, rng.random((7, 7)), rtol=1e-9, atol=1e-12)
    check_against_numpy(along_axis, a, ulp=0)


def ndarray_buffers(x):
    out = np.ndarray(x.shape[0], dtype=np.float64)     # as NPBench's Numba-style code writes
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0
    grid = np.ndarray((4, 3), dtype=x.dtype)
    grid[:, 0] = x[:4]
    grid[:, 1:] = 0.0
    return out, grid


def test_np_ndarray_constructor_makes_a_traced_buffer():
    check_against_numpy(ndarray_buffers, np.linspace(0.0, 1.0, 10), ulp=0)


def upper_products(data):
    M = data.shape[1]
    out = np.zeros((M, M))
    for i in range(M - 1):
        out[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]    # a row of length M - 1 - i
    return out


def test_a_product_whose_length_is_one_in_the_last_iteration_stays_a_loop():
    """PolyBench's correlation: broadcasting 1 with a length that is 1 only in the last
    iteration needs no decision (it was LoopDependent, so the loop unrolled: 12 s to build)."""
    d = np.random.default_rng(6).random((30, 40))
    check_against_numpy(upper_products, d, rtol=1e-12)
    text = str(cppcodegen.compile(upper_products).explain(d))
    assert "for(" in text[:text.index("== loop IR")]


def sieve(n):
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[:2] = False
    i = 2
    while i * i <= n:
        if is_prime[i]:
            for k in range(i * i, n + 1, i):    # a step the while loop carries
                is_prime[k] = False
        i += 1
    return is_prime


def strided_total(x, steps):
    total = 0.0
    for s in steps:
        lo = 0 if s > 0 else x.shape[0] - 1
        hi = x.shape[0] if s > 0 else -1
        for k in range(lo, hi, s):              # its sign known only when it runs
            total += x[k] * s
    return total


@pytest.mark.parametrize("backend", ["cpp", "check"])
def test_a_range_step_of_either_sign_decided_when_it_runs(backend):
    """The sieve's inner step was refused (sign unknown), so the while loop unrolled: 280
    kernels, 10 s to build. Now the C++ loop tests the step's sign; a zero step raises
    Python's ValueError."""
    f = cppcodegen.compile(sieve, backend=backend)
    for n in (2, 30, 2000):
        np.testing.assert_array_equal(f(n), sieve(n))
    g = cppcodegen.compile(strided_total, backend=backend)
    x = np.arange(1.0, 12.0)
    for steps in ([3, -2, 1, -1], [-5]):
        s = np.array(steps)
        assert g(x, s) == strided_total(x, s)
    with pytest.raises(ValueError, match="must not be zero"):
        g(x, np.array([2, 0]))


def erosion(mask, iters):
    m = mask.copy()
    for _ in range(iters):
        e = m.copy()
        e[1:-1, 1:-1] = (m[1:-1, 1:-1] & m[:-2, 1:-1] & m[2:, 1:-1] & m[1:-1, :-2] & m[1:-1, 2:])
        e[0, :] = False
        e[-1, :] = False
        e[:, 0] = False
        e[:, -1] = ~e[:, -2] | (e[:, 1] == e[:, 2])
        m = e
    return m, np.logical_not(m) ^ mask


def test_boolean_stencil_in_a_time_loop():
    """e = m.copy(); e[...] = stores; m = e: the copy gets its own buffer and the stores go
    there (it was one pass of nested selects, 100x slower than NumPy); logic on bools runs
    on their bytes (passes/bool_bytes.py)."""
    mask = np.random.default_rng(7).random((60, 70)) > 0.1
    check_against_numpy(erosion, mask, 3, ulp=0)
    text = str(cppcodegen.compile(erosion).explain(mask, 3))
    assert "Vec<uint8_t, L>::load(reinterpret_cast<const uint8_t*>" in text
    assert "swap" in text[text.index("== loop IR"):text.index("== kernels")]


def radix2_butterflies(X):
    N = X.shape[0]
    size = 2
    while size <= N:
        half = size // 2
        w = np.exp(-2j * np.pi * np.arange(half) / size)
        for start in range(0, N, size):
            even = X[start:start + half].copy()
            odd = X[start + half:start + size] * w
            X[start:start + half] = even + odd
            X[start + half:start + size] = even - odd
        size *= 2
    return X


def test_butterfly_loops_inside_an_unrolled_while():
    """The while unrolls (np.arange of its counter); the loops inside it stay compiled: the
    range(0, 256, 16)'s last value is 240 (its slices fit), and ``even``, made afresh in
    each iteration with another shape than the last loop left it, is not carried. Every
    loop unrolled before (81 s to build at N=256)."""
    X = np.random.default_rng(8).random(64) + 1j * np.random.default_rng(9).random(64)
    check_against_numpy(radix2_butterflies, X, writes=(0,), rtol=1e-12, atol=1e-12)
    text = str(cppcodegen.compile(radix2_butterflies).explain(X.copy()))
    assert text[:text.index("== loop IR")].count("for(") >= 3


TABLE_X = np.linspace(0.0, 1.0, 8)


def module_tables(x, a):
    b = a.copy()
    np.clip(b, 0.2, 0.8, out=b)         # into the array itself
    b[b > 0.7] *= 2
    return np.interp(x, TABLE_X, TABLE_X ** 2) + TABLE_X.sum(), b


def test_interp_of_module_tables_and_clip_into_out():
    rng = np.random.default_rng(10)
    check_against_numpy(module_tables, rng.random(30), rng.random((5, 6)), rtol=1e-14)


def pascal_row(n):
    row = np.ones(1, dtype=np.int64)
    for _ in range(n):
        row = np.concatenate((row, [0])) + np.concatenate(([0], row))
    return row


def test_a_value_stored_at_two_offsets_is_computed_once():
    """Pascal's rows by concatenation (a growing array: the loop unrolls): each row is read
    at two offsets, so inlining it doubled the C++ every step (n=10: 293 s to build, n=40
    never). It is materialized as a value read through two views is."""
    check_against_numpy(pascal_row, 30, ulp=0)
    assert len(cppcodegen.explain(pascal_row, 12).source) < 60_000


def masked_columns(x, t):
    x = x.copy()
    x[x[:, 0] > t, 0] = -1.0            # a mask of the rows and a column
    x[x[:, 1] < 0.2, 1:] = 0.0          # ... and a slice of columns
    return x


def test_row_mask_with_a_column_index_assignment():
    x = np.random.default_rng(11).random((20, 4))
    for t in (0.5, 2.0):
        check_against_numpy(masked_columns, x, t, ulp=0)


def masked_means(x, y):
    return (np.mean(x, where=x > 0.5), np.mean(x, axis=0, where=x > 0.3), x.mean(axis=1, where=y),
            np.mean(x.astype(np.float32), axis=1, keepdims=True, where=x > 0.2),
            np.mean((x * 10).astype(int), where=y))


def test_mean_with_where():
    """NumPy's sum where the condition holds over its count (NaN where it never holds), in
    the dtype NumPy gives (float32 stays float32, ints give float64); was refused."""
    rng = np.random.default_rng(12)
    x, y = rng.random((6, 5)), rng.random((6, 5)) > 0.5
    y[2] = False
    check_against_numpy(masked_means, x, y, rtol=1e-6)


def builtin_extremes(x):
    return max(x), min(x), max(x[1:]), min(np.abs(x))


def test_builtin_max_and_min_of_an_array_iterate_as_python():
    """max(x) of a 1-d array is Python's: the first element, replaced by each greater one
    (a NaN first stays, other NaNs are passed over); it was refused (bool() of a traced
    array)."""
    for x in (np.array([0.3, 0.9, -1.0, 0.5]), np.array([np.nan, 1.0, 2.0]),
              np.array([1.0, np.nan, 3.0, -2.0])):
        check_against_numpy(builtin_extremes, x, ulp=0)
    check_against_numpy(builtin_extremes, np.array([3, 9, 1, 4]), ulp=0)


def dot_loop(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


def relax_until(u, tol):
    u = u.copy()
    err = tol + 1.0
    it = 0
    while err > tol and it < 200:
        un = u.copy()
        u[1:-1, 1:-1] = 0.25 * (un[1:-1, 2:] + un[1:-1, :-2] + un[2:, 1:-1] + un[:-2, 1:-1])
        err = np.abs(u - un).max()
        it += 1
    return u, it


def test_loop_code_shapes_that_make_bench_loops_fast():
    """Two regressions make bench found (5.8x and 2-7x slower): a carried sum that is also
    the result lives in a register, stored once at the end (not in the output's memory every
    iteration); the error of a stencil step over u.copy() is not reduced over the whole grid
    with a select per element: the new u is computed once (the stencil over the interior,
    the frame copied) and the error reads it (26 ms for 500x500, 34 ms when the maximum
    computed the stencil again)."""
    a = np.linspace(0.0, 1.0, 1000)
    check_against_numpy(dot_loop, a, a[::-1].copy(), rtol=0)
    src = cppcodegen.explain(dot_loop, a, a).source
    assert "_v{};   // a loop's scalar: in a register" in src
    u = np.zeros((40, 40))
    u[0] = 1.0
    check_against_numpy(relax_until, u, 1e-4, rtol=1e-12)
    text = str(cppcodegen.explain(relax_until, u, 1e-4))
    ir = text[text.index("== loop IR"):text.index("== kernels")]
    maxes = [line for line in ir.splitlines() if " max axes=" in line]
    assert maxes and all("where(" not in m for m in maxes) and "Max(0, Min(" not in ir, ir
    assert ir.count("multiply(0.25") == 1, ir


def max_in_an_elif(x, t):
    s = 0.0
    v = x * 1.0
    if s > t:
        pass
    elif x.max() > t:               # not evaluated when the first condition holds
        v = v + 1
    return v


def test_max_of_an_empty_array_in_a_branch_raises_only_where_reached():
    f = cppcodegen.compile(max_in_an_elif, fallback=False)
    np.testing.assert_array_equal(f(np.zeros(0), -0.5), max_in_an_elif(np.zeros(0), -0.5))
    with pytest.raises(ValueError, match="zero-size array"):
        f(np.zeros(0), 0.5)


def swapped_dtypes(x):
    y1 = np.full(x.shape[0], 0.5)
    y2 = x * 1.0                    # float32: the names hold each dtype in turns
    for i in range(1, x.shape[0]):
        if x[i] < 0:
            y1, y2 = y2, y1
    return y1, y2


def test_names_swapping_arrays_of_two_dtypes_are_not_unified():
    x = np.array([1.0, -1.0, 2.0, -3.0, -1.0] * 20, dtype=np.float32)
    with pytest.raises(cppcodegen.UnsupportedError, match="in turns to arrays of dtypes"):
        cppcodegen.compile(swapped_dtypes, fallback=False)(x)
    got = cppcodegen.compile(swapped_dtypes, fallback=True)(x)   # Python runs it
    for g, w in zip(got, swapped_dtypes(x)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
