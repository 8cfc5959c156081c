"""A carried array that shrinks by a fixed amount every iteration (a binomial tree's backward
induction, repeated differences, a triangle of averages) compiles as one loop over a buffer
of its first shape, whatever the trip count: results equal the plain function's, for loops
of 0, 1 and many iterations, counting up and down, and past the array's length (NumPy's
clamped empty slices). A shape that changes another way still unrolls or is refused."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy


def lattice(r, sigma, T, N):
    """A binomial lattice's up and down factors, up probability and one step's discount."""
    dt = T / N
    u = np.exp(sigma * np.sqrt(dt))
    d = 1.0 / u
    return u, d, (np.exp(r * dt) - d) / (u - d), np.exp(-r * dt)


def binomial(S, K, r, sigma, T, N):
    u, d, p, disc = lattice(r, sigma, T, N)
    j = np.arange(N + 1)
    values = np.maximum(S * u ** (N - j) * d ** j - K, 0.0)
    for i in range(N):
        values = disc * (p * values[:-1] + (1 - p) * values[1:])
    return values[0]


def binomial_strikes(S, K, r, sigma, T, N):
    """Counting down, the lengths written with the index: V[:, 1:i + 1] and V[:, 0:i]."""
    u, d, p, disc = lattice(r, sigma, T, N)
    j = np.arange(N + 1)
    V = np.maximum(S * u ** j * d ** (N - j) - K[:, None], 0.0)
    for i in range(N, 0, -1):
        V = disc * (p * V[:, 1:i + 1] + (1 - p) * V[:, 0:i])
    return V[:, 0]


def differences(x, n):
    for _ in range(n):
        x = x[1:] - x[:-1]
    return x


def averages(x, n):
    total = 0.0
    for _ in range(n, 0, -1):
        x = 0.5 * (x[:-1] + x[1:])
        total += x.sum()
    return x, total


def corner_sums(a, n):
    for _ in range(n):
        a = a[1:, :-1] + a[:-1, 1:]
    return a


def newton_coefficients(x, y):
    n = len(x)
    coef = np.empty(n)
    d = y.copy()
    for j in range(n):
        coef[j] = d[0]
        if j < n - 1:
            d = (d[1:] - d[:-1]) / (x[j + 1:] - x[:n - j - 1])
    return coef


def doubled_tail(x, n):
    y = x                       # an alias of the argument, then rebound: x is unchanged
    for _ in range(n):
        y = y[1:] * 2.0
        y[0] = -1.0             # an update of the shorter array in place
    return y, x


def growing(x, n):
    for _ in range(n):
        x = np.append(x, x[-1] * 0.5)
    return x


def _loops(fn, *args) -> str:
    text = str(cppcodegen.compile(fn).explain(*args))
    return text[:text.index("== loop IR")]


@pytest.mark.parametrize("N", [1, 2, 50, 700])
def test_binomial_tree_compiles_as_a_loop(N):
    args = (100.0, 95.0, 0.05, 0.2, 1.0, N)
    check_against_numpy(binomial, *args, rtol=1e-12)
    if N > 16:
        assert "for(" in _loops(binomial, *args)


@pytest.mark.parametrize("N", [1, 3, 300])
def test_binomial_counting_down_with_index_lengths(N):
    K = np.linspace(80.0, 120.0, 17)
    check_against_numpy(binomial_strikes, 100.0, K, 0.05, 0.2, 1.0, N, rtol=1e-12)
    if N > 16:              # (a few trips known when compiling run unrolled: fused)
        assert "for(" in _loops(binomial_strikes, 100.0, K, 0.05, 0.2, 1.0, N)


@pytest.mark.parametrize("n", [0, 1, 5, 19, 20, 26])
def test_differences_of_every_order(n):
    """Up to and past the length: NumPy's slices of an empty array are empty."""
    x = np.random.default_rng(0).standard_normal(20)
    check_against_numpy(differences, x, n, rtol=1e-9, atol=1e-9)
    check_against_numpy(averages, x, n, rtol=1e-12, atol=1e-12)


def test_a_shrinking_array_with_dynamic_sizes():
    f = cppcodegen.compile(differences, dynamic=True)
    rng = np.random.default_rng(1)
    for size in (40, 64, 9):
        x = rng.standard_normal(size)
        np.testing.assert_allclose(f(x, 7), differences(x, 7), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 9, 29])
def test_two_axes_shrink_together(n):
    a = np.random.default_rng(2).standard_normal((30, 40))
    check_against_numpy(corner_sums, a, n, rtol=1e-12, atol=1e-9)
    if n > 16:
        assert "for(" in _loops(corner_sums, a, n)


def test_newton_divided_differences():
    x = np.sort(np.random.default_rng(3).uniform(0, 3, 12))
    check_against_numpy(newton_coefficients, x, np.sin(x), rtol=1e-9, atol=1e-12)


def test_shrinking_alias_updated_in_place_leaves_the_argument():
    x = np.arange(1.0, 40.0)
    check_against_numpy(doubled_tail, x, 12)
    check_against_numpy(doubled_tail, x, 0)


def test_an_array_that_grows_is_not_taken_for_one_that_shrinks():
    """np.append grows the array: not a fixed shrink, so the loop runs unrolled (small) and
    the result is still the plain function's."""
    check_against_numpy(growing, np.arange(3.0), 6)
    assert "for(" not in _loops(growing, np.arange(3.0), 6)


@pytest.mark.parametrize("backend", ["numpy", "check"])
def test_reference_interpreter_runs_the_shrinking_loop(backend):
    """The NumPy reference runs the same graph (the view of the first L(i) elements and the
    store into them); the check backend compares every buffer with it."""
    x = np.random.default_rng(4).standard_normal(33)
    f = cppcodegen.compile(averages, backend=backend)
    for n in (0, 20, 40):
        got, want = f(x, n), averages(x, n)
        assert got[0].shape == want[0].shape
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def american_put(S0, K, T, r, sigma, N):
    """A tutorial's American put: an np.arange of indices, the array updated in place, then
    rebound one shorter, then floored by the exercise value of a fresh shorter array."""
    u, d, q, disc = lattice(r, sigma, T, N)
    S = S0 * d ** (np.arange(N, -1, -1)) * u ** (np.arange(0, N + 1, 1))
    C = np.maximum(0, K - S)
    for i in np.arange(N - 1, -1, -1):
        S = S0 * d ** (np.arange(i, -1, -1)) * u ** (np.arange(0, i + 1, 1))
        C[:i + 1] = disc * (q * C[1:i + 2] + (1 - q) * C[0:i + 1])
        C = C[:-1]
        C = np.maximum(C, K - S)
    return C[0]


def american_put_shifted(S0, K, T, r, sigma, N):
    """Both arrays shrink: the prices too (S = S[:-1] * d)."""
    u, d, q, disc = lattice(r, sigma, T, N)
    S = S0 * u ** np.arange(N, -1, -1) * d ** np.arange(0, N + 1)
    V = np.maximum(K - S, 0.0)
    for _ in range(N):
        V = disc * (q * V[:-1] + (1 - q) * V[1:])
        S = S[:-1] * d
        V = np.maximum(V, K - S)
    return V[0]


def first_array_read_after(x, n):
    C = x * 2.0
    C0 = C
    for _ in range(n):
        C[:5] += 1.0            # the first iteration updates the array C0 also names
        C = C[:-1]
    return C, C0


def argument_updated_then_rebound(x, n):
    for _ in range(n):
        x[:3] += 1.0
        x = x[:-1]
    return x


@pytest.mark.parametrize("N", [1, 30, 400])
@pytest.mark.parametrize("fn", [american_put, american_put_shifted])
def test_american_put(fn, N):
    args = (100.0, 100.0, 1.0, 0.05, 0.2, N)
    check_against_numpy(fn, *args, rtol=1e-12)
    if N > 16:
        assert "for(" in _loops(fn, *args)


def test_the_array_a_loop_took_over_read_after_it():
    """NumPy's first iteration updates the array another name holds: the loop unrolls then,
    so C0 has that update and nothing more."""
    check_against_numpy(first_array_read_after, np.arange(12.0), 9)
    assert "for(" not in _loops(first_array_read_after, np.arange(12.0), 9)


def test_an_argument_updated_then_rebound_is_updated_once():
    x = np.arange(10.0)
    check_against_numpy(argument_updated_then_rebound, x, 6, writes=(0,))


def arange_items(x):
    total = np.zeros(3, np.float32)
    for i in np.arange(x.shape[0] - 1, -1, -1):
        total = total + x[:i + 1].sum() * i        # i an np.int64: float32 * int64 -> float64
    return total, i


def test_items_of_np_arange_are_int64_values_and_sizes():
    """``for i in np.arange(...)``: i bounds slices (a compiled loop) and is NumPy's int64."""
    x = np.linspace(0.0, 1.0, 40, dtype=np.float32)
    got, want = check_against_numpy(arange_items, x, rtol=1e-5)
    assert got[0].dtype == want[0].dtype == np.float64
    assert "for(" in _loops(arange_items, x)
