"""Python `for t in range(T)` loops around array statements (time-stepping stencils).

Each step reads the previous one at several offsets; inlined, T steps would be 5**T copies
of the first. Lowering materializes such producers, temporaries of finished steps share
memory, and identical steps are one C++ function called T times. Results and updated
arguments are compared with NumPy running the same function.
"""
import re

import numpy as np
import pytest

import cppcodegen
from helpers import assert_matches_numpy, check_against_numpy

C = 0.1


def heat_inplace(T):
    def f(u):
        for _ in range(T):
            u[1:-1, 1:-1] = u[1:-1, 1:-1] + C * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                                 + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
        return u
    return f


def heat_two_arrays(T):
    def f(u, v):
        for _ in range(T):
            v[1:-1, 1:-1] = u[1:-1, 1:-1] + C * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                                 + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
            u, v = v, u
        return u
    return f


def heat_fresh(T):
    def f(u):
        for _ in range(T):
            new = u.copy()
            new[1:-1, 1:-1] = u[1:-1, 1:-1] + C * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                                   + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
            u = new
        return u
    return f


def wave_1d(T):
    def f(u, u_prev):
        for _ in range(T):
            nxt = np.zeros_like(u)
            nxt[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
            u_prev, u = u, nxt
        return u, u_prev
    return f


def run_both(fn, *args):
    np_args = [a.copy() for a in args]
    cc_args = [a.copy() for a in args]
    want = fn(*np_args)
    got = cppcodegen.compile(fn)(*cc_args)
    for a, b in zip(np_args, cc_args):
        assert_matches_numpy(b, a, rtol=1e-12, atol=1e-14)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            assert_matches_numpy(g, w, rtol=1e-12, atol=1e-14)
    else:
        assert_matches_numpy(got, want, rtol=1e-12, atol=1e-14)
    return got


U = np.random.default_rng(3).random((37, 53))


@pytest.mark.parametrize("T", [1, 2, 7, 40])
def test_inplace_stencil_loop(T):
    run_both(heat_inplace(T), U)


@pytest.mark.parametrize("T", [1, 2, 7, 40])
def test_two_array_stencil_loop(T):
    run_both(heat_two_arrays(T), U, np.zeros_like(U))


@pytest.mark.parametrize("T", [3, 25])
def test_fresh_array_stencil_loop(T):
    run_both(heat_fresh(T), U)


def test_wave_equation_loop():
    x = np.linspace(0, 1, 301)
    u0 = np.exp(-100 * (x - 0.5) ** 2)
    run_both(wave_1d(60), u0, u0 * 0.99)


def test_float32_loop():
    run_both(heat_inplace(12), U.astype(np.float32)[:, :40])


def test_long_loop_stays_small():
    """T=200 steps: as many C++ functions as for T=20, the steps one C++ loop of 200
    iterations (the loop is captured, not unrolled), two temporaries of the grid size."""
    def functions(ex):
        return re.findall(r"^static void (\w+)\(", ex.source, re.M)
    ex = cppcodegen.explain(heat_inplace(200), U.copy())
    assert len(functions(ex)) == len(functions(cppcodegen.explain(heat_inplace(20), U.copy())))
    assert len(functions(ex)) <= 20
    assert re.search(r"for \((lv\d+) = 0; \1 < 200; \1 \+= 1\)", ex.source), ex.source[-2000:]
    temps = [n for n, _, kind, role in ex.signature if role == "temp"]
    assert len(temps) <= 2, temps


def test_long_chain_of_pointwise_steps():
    """One path per step but an ever longer expression: materialized past the size limit."""
    def f(x):
        for _ in range(150):
            x = np.sin(x) * 0.5 + x * 0.25
        return x
    x = np.random.default_rng(4).random(1000)
    got = cppcodegen.compile(f)(x.copy())
    assert_matches_numpy(got, f(x.copy()), ulp=64)
    program = str(cppcodegen.explain(f, x).program)
    assert program.count("pointwise") >= 150 * 3 // 256


def test_repeated_calls_continue_the_simulation():
    f = heat_inplace(5)
    cf = cppcodegen.compile(f)
    a, b = U.copy(), U.copy()
    for _ in range(4):
        f(a)
        cf(b)
    assert_matches_numpy(b, a, rtol=1e-12, atol=1e-14)


def test_dynamic_sizes_one_variant():
    f = heat_inplace(6)
    cf = cppcodegen.compile(f, dynamic=True)
    for shape in ((9, 14), (23, 11), (40, 40)):
        u = np.random.default_rng(shape[0]).random(shape)
        a, b = u.copy(), u.copy()
        f(a)
        cf(b)
        assert_matches_numpy(b, a, rtol=1e-12, atol=1e-14)
    assert len(cf.variants) == 1


def diffuse_with_energy(u0, nsteps):
    """A time step's new array, carried, and also summed in the same iteration (an energy
    diagnostic): computed once into its buffer, which the sum reads."""
    u = u0.copy()
    energy = np.zeros(nsteps)
    for n in range(nsteps):
        lap = np.zeros_like(u)
        lap[1:-1, 1:-1] = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] \
            - 4 * u[1:-1, 1:-1]
        u = u + 0.1 * lap
        energy[n] = np.sum(u * u)
    return u, energy


def test_a_carried_array_read_in_its_iteration_is_computed_once():
    g = np.linspace(-1, 1, 48)
    u0 = np.exp(-40 * (g[:, None] ** 2 + g[None, :] ** 2))
    check_against_numpy(diffuse_with_energy, u0, 7)
    ir = str(cppcodegen.explain(diffuse_with_energy, u0, 7).program)
    sums = [line for line in ir.splitlines() if "reduction" in line and "sum" in line]
    assert sums and all("where(" not in line for line in sums), ir
