"""np.diff, np.ediff1d, np.gradient, np.trapezoid, np.convolve and np.correlate compile to
slice arithmetic (frontend/differences.py): results equal NumPy's (the same terms in the same
order; convolve within a sum's rounding), with no NumPy call between kernels, and NumPy's
own function (and its errors) for what is not compiled."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from cppcodegen.ir.loopir import nested
from helpers import assert_compiled_raises, check_against_numpy

RNG = np.random.default_rng(7)
X = RNG.standard_normal(50)
M = RNG.standard_normal((9, 12))
I = RNG.integers(-50, 50, (7, 6))
F32 = RNG.standard_normal((6, 11)).astype(np.float32)


def _native(fn, *args):
    """Compiled with no NumPy call between kernels."""
    kernels = nested(cppcodegen.explain(cppcodegen.compile(fn), *args).kernels)
    assert not [k.name for k in kernels if k.form == "extern"]


def d1(x):
    return np.diff(x)


def d_axis0_n2(m):
    return np.diff(m, n=2, axis=0)


def d_ends(x):
    return np.diff(x, prepend=0.0, append=x[-1:] * 2)


def d_bool(m):
    return np.diff(m > 0, axis=1)


def d_many(x):
    return np.diff(x, n=60)             # longer than the array: empty, as NumPy


def d_zero(x):
    return np.diff(x, n=0) + 1


def d_ints(i):
    return np.diff(i, prepend=np.int8(3))


def speed_from_positions(x, dt):
    return np.abs(np.diff(x)) / dt


@pytest.mark.parametrize("fn,args", [
    (d1, (X,)), (d_axis0_n2, (M,)), (d_ends, (X,)), (d_bool, (M,)), (d_many, (X,)),
    (d_zero, (X,)), (d_ints, (I,)), (d1, (F32,)), (speed_from_positions, (X, 0.1)),
    (d1, (X[:1],)),
])
def test_diff(fn, args):
    got, expected = check_against_numpy(fn, *args, ulp=0)
    assert got.dtype == expected.dtype
    _native(fn, *args)


def e1(m):
    return np.ediff1d(m)


def g1(x):
    return np.gradient(x)


def g_spacing(m):
    return np.gradient(m, 0.25, axis=1)


def g_both(m):
    gy, gx = np.gradient(m, 2.0, 0.5, edge_order=2)
    return gx * gx + gy * gy


def g_ints(i):
    gy, gx = np.gradient(i)
    return gx - gy


def g_f32(a):
    return np.gradient(a, axis=-1)


@pytest.mark.parametrize("fn,args", [
    (e1, (M,)), (g1, (X,)), (g_spacing, (M,)), (g_both, (M,)), (g_ints, (I,)), (g_f32, (F32,)),
    (g1, (X[:2],)),
])
def test_ediff1d_and_gradient(fn, args):
    got, expected = check_against_numpy(fn, *args, ulp=0)
    assert got.dtype == expected.dtype
    _native(fn, *args)


def g_coords(x, t):
    return np.gradient(x, t)            # coordinates: NumPy's own function


def g_short(x):
    return np.gradient(x, edge_order=2)


def test_gradient_coordinates_and_errors_are_numpys():
    t = np.cumsum(RNG.uniform(0.1, 1.0, X.size))
    check_against_numpy(g_coords, X, t)
    assert_compiled_raises(g_short, (X[:2],), ["at least \\(edge_order \\+ 1\\)"], (ValueError,))


def t_dx(y):
    return np.trapezoid(y, dx=0.1)


def t_x(y, x):
    return np.trapezoid(y, x)


def t_2d(m, x):
    return np.trapezoid(m, x, axis=1)


def simpson_like(y):
    return np.trapezoid(y * y).sum() + np.trapezoid(np.sin(y), axis=0)


@pytest.mark.parametrize("fn,args", [
    (t_dx, (X,)), (t_x, (X, np.linspace(0, 3, X.size))), (t_2d, (M, np.linspace(0, 1, 12))),
    (simpson_like, (M,)), (t_dx, (F32,)),
])
def test_trapezoid(fn, args):
    # a sum: its order depends on the vector width (AVX2 / AVX-512), its rounding on the
    # cancellation in it
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    tol = dict(rtol=1e-5, atol=1e-6) if f32 else dict(rtol=1e-12, atol=1e-14)
    got, expected = check_against_numpy(fn, *args, **tol)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    _native(fn, *args)


def moving_average(x, w):
    return np.convolve(x, np.ones(w) / w, mode="valid")


def conv_same(x, k):
    return np.convolve(x, k, mode="same")


def conv_full(x, k):
    return np.convolve(x, k)


def conv_swapped(k, x):
    return np.convolve(k, x, "full")    # the longer operand second: NumPy swaps them


def corr(x, k):
    return np.correlate(x, k, mode="valid") + np.correlate(x, k, "full")[: x.size - k.size + 1]


def corr_same(x, k):
    return np.correlate(x, k, mode="same")


K5 = RNG.standard_normal(5)
K4 = RNG.standard_normal(4)
Z = RNG.standard_normal(30) + 1j * RNG.standard_normal(30)


@pytest.mark.parametrize("fn,args", [
    (moving_average, (X, 5)), (conv_same, (X, K5)), (conv_same, (X, K4)), (conv_full, (X, K4)),
    (conv_swapped, (K5, X)), (corr, (X, K4)), (corr_same, (X, K5)), (corr_same, (Z, K4 * 1j)),
    (conv_full, (Z, Z[:3])), (conv_same, (I[0], I[1, :3])), (conv_full, (X[:1], K4[:1])),
    (conv_same, (F32[0], F32[1, :3])),
])
def test_convolve_and_correlate(fn, args):
    # NumPy sums each output's products as a dot product: the same terms, another order
    got, expected = check_against_numpy(fn, *args, rtol=1e-12, atol=1e-12 * 64)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    _native(fn, *args)


def conv_empty(x, k):
    return np.convolve(x, k)


def test_convolve_errors_are_numpys():
    assert_compiled_raises(conv_empty, (X, X[:0]), ["cannot be empty"], (ValueError,))


def heat_1d(u, steps, r):
    """Explicit heat equation with np.diff twice per step: one pass per step."""
    for _ in range(steps):
        u = u + r * np.diff(u, n=2, prepend=u[:1], append=u[-1:])
    return u


def test_diff_in_a_loop_body():
    got, _ = check_against_numpy(heat_1d, np.sin(np.linspace(0, 3, 64)), 20, 0.2, ulp=0)
    _native(heat_1d, np.sin(np.linspace(0, 3, 64)), 20, 0.2)


def phases(p):
    return np.unwrap(p), np.unwrap(p, axis=0), np.unwrap(p, discont=4.0), np.unwrap(p, period=np.pi)


def phases_int(k):
    return np.unwrap(k, period=6), np.unwrap(k, period=7), np.unwrap(k[:1], period=6)


WRAPPED = np.cumsum(np.random.default_rng(8).uniform(-3.5, 3.5, (6, 50)), axis=1) % (2 * np.pi)


@pytest.mark.parametrize("fn,args", [
    (phases, (WRAPPED,)), (phases, (WRAPPED.astype(np.float32),)),
    (phases, (np.array([0.0, np.pi, 2 * np.pi, 0.0, -np.pi, np.pi]),)),   # on the boundary
    (phases_int, (np.random.default_rng(9).integers(-20, 20, 40),)),
])
def test_unwrap(fn, args):
    # the corrections' running sum is NumPy's cumsum (sequential): the same bits
    check_against_numpy(fn, *args, ulp=0)
    _native(fn, *args)


def test_convolve_of_an_empty_signal_names_it_as_numpy_does():
    def fir(x, h):
        return np.convolve(x, h, mode="same")
    h = np.ones(5) / 5
    f = cppcodegen.compile(fir)
    f(np.ones(100), h)
    for x, hh, name in ((np.zeros(0), h, "a"), (np.ones(9), np.zeros(0), "v")):
        with pytest.raises(ValueError, match=f"{name} cannot be empty"):
            fir(x, hh)
        with pytest.raises(ValueError, match=f"{name} cannot be empty"):
            f(x, hh)
