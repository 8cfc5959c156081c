"""A loop whose first iteration widens a NumPy value it carries: ``z = z * z + c`` with a
complex64 ``z`` and a complex128 ``c`` (a Julia set), ``u = u + k * lap(u)`` with a float32
``u`` and a float64 ``k`` (a heat step on a float64 grid), an int8 array scaled by a float.
NumPy computes the first iteration's ``z * z`` in the narrow dtype (int8 wraps); a loop that
carried the wide dtype from the start did not, so every value differed. Python now runs the
first iteration while tracing and the loop carries the wide dtype after it. Each case is
compared with the plain function, bit for bit."""
import numpy as np
import pytest

import cppcodegen


def iterate(z, c, n):
    for i in range(n):
        z = z * z + c
    return z


def scale(u, n):
    for i in range(n):
        u = u * 100 + 0.5
    return u


def heat(u, x, nt, nu, dt):
    dx = x[1] - x[0]
    for n in range(nt):
        u = u + nu * dt / dx ** 2 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return u


def over_rows(a, w):
    acc = a[0] * np.float32(0)
    for row in a:
        acc = acc * np.float32(0.5) + row * w
    return acc


def nested(z, c, n, m):
    out = np.zeros(m)
    for j in range(m):
        w = z
        for i in range(n):
            w = w * w + c
        out[j] = np.abs(w[j])
    return out


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 5, 0, 3])
def test_julia_complex64_with_a_complex128_constant(n):
    r = np.random.default_rng(0)
    z = (r.standard_normal(300) + 1j * r.standard_normal(300)).astype(np.complex64) * 0.5
    c = np.complex128(-0.4 + 0.6j)
    with np.errstate(all="ignore"):
        _same(cppcodegen.compile(iterate)(z, c, n), iterate(z, c, n))


@pytest.mark.parametrize("n", [1, 2, 7])
def test_float32_with_a_float64_scalar(n):
    x = np.linspace(0.1, 1.3, 37, dtype=np.float32)
    _same(cppcodegen.compile(iterate)(x, np.float64(0.25), n), iterate(x, np.float64(0.25), n))


@pytest.mark.parametrize("n", [1, 3])
def test_int8_wraps_in_the_first_iteration(n):
    x8 = np.array([1, 3, 5, -7, 100], dtype=np.int8)
    _same(cppcodegen.compile(scale)(x8, n), scale(x8, n))


def test_heat_step_on_a_float64_grid():
    r = np.random.default_rng(1)
    u = r.random(200).astype(np.float32)
    x = np.linspace(0.0, 1.0, 200)
    f = cppcodegen.compile(heat)
    for nt in (20, 3, 1):
        _same(f(u, x, nt, 0.1, 1e-5), heat(u, x, nt, 0.1, 1e-5))


def test_rows_and_nested_loops():
    r = np.random.default_rng(2)
    a = r.random((6, 9)).astype(np.float32)
    _same(cppcodegen.compile(over_rows)(a, np.float64(1.5)), over_rows(a, np.float64(1.5)))
    z = (r.standard_normal(50) * 0.3 + 0.1j).astype(np.complex64)
    _same(cppcodegen.compile(nested)(z, np.complex128(0.2 + 0.1j), 4, 3),
          nested(z, np.complex128(0.2 + 0.1j), 4, 3))


def test_the_rest_stays_a_loop():
    z = np.full(8, 0.1 + 0.2j, dtype=np.complex64)
    src = cppcodegen.explain(iterate, z, np.complex128(0.3), 50).source
    assert "// for at" in src and src.count("\n") < 400     # (not 50 unrolled iterations)


def durbin_like(r, w):
    beta = 1.0
    alpha = r[0]
    for k in range(1, r.shape[0]):
        beta = alpha * beta         # float32 until alpha widens, a trip later
        alpha = r[k] + w[k]
    return alpha, beta


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, 40])
def test_values_that_widen_one_iteration_after_another(n):
    """``alpha`` widens in the first iteration and ``beta`` (its product) in the second:
    Python runs as many first iterations as it takes (PolyBench's durbin on float32 data),
    the rest stays a loop."""
    r = (0.5 ** np.arange(1, n + 2)).astype(np.float32)[:max(n, 1)]
    w = np.linspace(0, 1, max(n, 1))
    f = cppcodegen.compile(durbin_like)
    got, want = f(r, w), durbin_like(r, w)
    assert [type(g) for g in got] == [type(x) for x in want]
    assert got == want
