"""Stores with a step: ``out = np.empty_like(y); out[0::2] = a; out[1::2] = b`` is a loop per
assignment over its own elements (``passes/strided_fill.py``), not one loop choosing each
element's value by its index; a strided region store (red-black sweeps ``u[1:-1:2, 1:-1:2] =
...``, ``out[::-1] = ...``) runs in vectors stored lane by lane. Compared with NumPy."""
import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy

RNG = np.random.default_rng(31)


def interleaved(y):
    out = np.empty_like(y)
    out[0::2] = np.sin(y[1::2])
    out[1::2] = np.cos(y[0::2])
    return out


def pairs_then_scale(p, s):
    out = np.empty(2 * p.shape[0], dtype=p.dtype)
    out[::2] = p * s
    out[1::2] = p - s
    out[::4] = 0                    # a later store wins where they overlap
    return out


def reversed_into(x):
    out = np.empty_like(x)
    out[::-1] = x * 3
    return out


def redblack(u, f, h2, sweeps):
    for _ in range(sweeps):
        u[1:-1:2, 1:-1:2] = 0.25 * (u[:-2:2, 1:-1:2] + u[2::2, 1:-1:2] + u[1:-1:2, :-2:2]
                                    + u[1:-1:2, 2::2] - h2 * f[1:-1:2, 1:-1:2])
        u[2:-1:2, 2:-1:2] = 0.25 * (u[1:-2:2, 2:-1:2] + u[3::2, 2:-1:2] + u[2:-1:2, 1:-2:2]
                                    + u[2:-1:2, 3::2] - h2 * f[2:-1:2, 2:-1:2])
    return u


def mask_every_third(m):
    out = np.empty_like(m)
    out[::3] = ~m[::3]
    out[1::3] = m[1::3]
    out[2::3] = True
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 1001])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_interleaved_pairs(n, dtype):
    y = RNG.random(n).astype(dtype)
    check_against_numpy(interleaved, y[:n - n % 2], ulp=4)     # (pairs: an even length)
    check_against_numpy(pairs_then_scale, y, dtype(1.5), ulp=0)
    check_against_numpy(reversed_into, y, ulp=0)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.bool_])
def test_integer_and_bool_strided_stores(dtype):
    x = RNG.integers(0, 2, 37).astype(dtype)
    check_against_numpy(reversed_into if dtype != np.bool_ else mask_every_third, x, ulp=0)


def test_red_black_sweeps_in_place():
    u, f = RNG.random((41, 37)), RNG.random((41, 37))
    check_against_numpy(redblack, u, f, 1e-3, 3, writes=(0,), ulp=0)


def test_each_assignment_is_a_loop_of_its_own_in_vectors():
    y = RNG.random(300)
    ex = cppcodegen.explain(interleaved, y)
    program = str(ex.program)
    assert "buf1[2*i0] over [150]" in program and "buf1[2*i0 + 1] over [150]" in program
    assert "where(" not in program and "store_strided" in ex.source


def minus_every_third(x, c):
    x[:, 0, ::-3] -= c
    return x


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64, np.float16])
def test_complex_and_half_strided_stores_stay_scalar(dtype):
    """Values whose vectors have no lane-by-lane store (complex, float16) keep a scalar loop
    for a strided store (a kernel that called one did not compile: found by the fuzzer)."""
    x = (RNG.random((2, 3, 7)) + (1j * RNG.random((2, 3, 7)) if dtype != np.float16 else 0))
    x = x.astype(dtype)
    check_against_numpy(minus_every_third, x, dtype(1.5), writes=(0,), ulp=0)
    check_against_numpy(reversed_into, x.ravel(), ulp=0)


def upsample(x, L):
    y = np.zeros(len(x) * L, dtype=x.dtype)
    y[::L] = x
    return y


def full_then_strided(x, v):
    y = np.full((x.shape[0], 2 * x.shape[1]), v * 2)
    y[:, 1::2] = x
    y[::3, ::4] = -x[::3, ::2]
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_an_array_made_with_a_value_is_filled_then_stored_by_region(dtype, n):
    """``np.zeros``/``np.full`` then strided assignments: the value everywhere (a loop of
    its own), then a loop per assignment over its elements, a later one winning."""
    x = (RNG.random(n) * 10).astype(dtype)
    check_against_numpy(upsample, x, 4, ulp=0)
    check_against_numpy(full_then_strided, (RNG.random((n, 6)) * 10).astype(dtype), 1.5, ulp=0)
    if n == 1000:
        program = str(cppcodegen.explain(upsample, x, 3).program)
        assert "where(" not in program and "[3*i0] over [1000]" in program


def paths_by_column(S0, r, sigma, T, Z):
    n_paths, n_steps = Z.shape
    dt = T / n_steps
    S = np.zeros((n_paths, n_steps + 1), dtype=Z.dtype)
    S[:, 0] = S0
    for t in range(1, n_steps + 1):
        S[:, t] = S[:, t - 1] * np.exp((r - 0.5 * sigma ** 2) * dt + sigma * np.sqrt(dt) * Z[:, t - 1])
    return S


def column_of_ints(a):
    out = np.zeros((a.shape[0], 3), dtype=a.dtype)
    out[:, 1] = a[:, 0] * 3 + a[:, 2]
    out[:, 2:3] = a[:, 1:2] // 2
    return out


@pytest.mark.parametrize("dtype, n", [(np.float64, 37), (np.float32, 100), (np.float64, 3)])
def test_a_column_assignment_runs_its_rows_in_vectors(dtype, n):
    """``S[:, t] = ...``: domain (n, 1), the loop over its n rows is the vector loop
    (strided loads and stores), not n loops of one element."""
    Z = np.random.default_rng(n).standard_normal((n, 9)).astype(dtype)
    check_against_numpy(paths_by_column, 100.0, 0.05, 0.2, 1.0, Z, rtol=1e-6 if dtype == np.float32 else 1e-13)
    if n == 37 and dtype == np.float64:
        assert "load_strided" in cppcodegen.explain(paths_by_column, 100.0, 0.05, 0.2, 1.0, Z).source


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_columns(dtype):
    check_against_numpy(column_of_ints, (np.arange(51 * 4) % 97).reshape(51, 4).astype(dtype))
