"""The program workloads of issue 16 (benchmarks/program_workloads.py) and the fixes they led
to, each compared with NumPy or with the plain Python function.

- every workload compiles and agrees with the function as written (small sizes);
- hypot of float64 (Python's ``abs(z)`` of a complex scalar, ``math.hypot``, ``np.hypot``):
  one kernel per value now, bit-equal to NumPy on huge, tiny, subnormal and special operands,
  in vector lanes and in scalar loops;
- ``np.<ufunc>.reduceat`` (add, multiply, maximum, minimum of 1-D arrays) compiled as a loop
  over the segments with the array's expression fused in: NumPy's values bit for bit (its
  pairwise sums), empty and decreasing segments, IndexError for a start out of range;
- NumPy calls of ufunc methods are told apart (np.maximum.accumulate vs np.minimum's).
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
PENDING = {"spmv_rows"}


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
    # math.hypot raises OverflowError where a finite pair overflows, as Python does
    fine = np.isfinite(ref) | ~np.isfinite(a) | ~np.isfinite(b)
    assert not fine.all()
    compiled = cppcodegen.compile(loop)
    np.testing.assert_array_equal(compiled(a[fine], b[fine], np.empty_like(a[fine])), ref[fine])
    with pytest.raises(OverflowError, match="math range error"):
        compiled(a, b, np.empty_like(a))
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


# ----------------------------------------------------------------------------- reduceat
def _segment_starts(r, n, m):
    """m starts in [0, n): sorted with repeats (empty segments), then a few shuffled
    (decreasing pairs reduce one element), the last start at n - 1."""
    idx = np.sort(r.integers(0, n, m))
    idx[m // 2: m // 2 + 5] = idx[m // 2]               # repeats: empty segments
    idx[-3:] = [n - 1, 2, n - 1]                        # a decrease, the last element alone
    return idx


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_reduceat_matches_numpy(ufunc, dtype):
    r = np.random.default_rng(7)
    n = 3000
    a = (r.standard_normal(n) * 3).astype(dtype) if dtype in (np.float32, np.float64) \
        else r.integers(-50, 50, n).astype(dtype)
    if ufunc is np.multiply and a.dtype.kind == "f":
        a = (1 + a / 64).astype(dtype)
    idx = _segment_starts(r, n, 200)
    idx[10] = 0
    idx[11] = 400                                        # a segment > 128 values: recursion

    def f(a, idx):
        return ufunc.reduceat(a, idx)

    _same(cppcodegen.compile(f)(a, idx), ufunc.reduceat(a, idx))
    assert "segment" in str(cppcodegen.explain(f, a, idx).graph)    # native, not NumPy's


def test_reduceat_fused_gather_and_empty_rows():
    indptr, cols, vals, x = pw.make_csr(2000)
    assert np.any(indptr[1:] == indptr[:-1]) and indptr[-1] == indptr[-6]

    def rows(vals, x, cols, starts):
        return np.add.reduceat(vals * x[cols], starts)

    starts = np.minimum(indptr[:-1], vals.size - 1)
    _same(cppcodegen.compile(rows)(vals, x, cols, starts), rows(vals, x, cols, starts))
    _same(cppcodegen.compile(pw.spmv_reduceat)(indptr, cols, vals, x),
          pw.spmv_reduceat(indptr, cols, vals, x))


def test_reduceat_signed_zero_nan_and_list_indices():
    a = np.array([-0.0, -0.0, 0.0, -0.0, np.nan, 1.0, np.inf, -np.inf, 2.0])

    def f(a):
        return np.add.reduceat(a, [0, 2, 4, 6, 8]), np.maximum.reduceat(a, [0, 3, 5])

    got, ref = cppcodegen.compile(f)(a), f(a)
    for g, e in zip(got, ref):
        np.testing.assert_array_equal(g, e)
        assert np.array_equal(np.signbit(g), np.signbit(e))


def test_reduceat_empty_indices():
    def f(a, idx):
        return np.add.reduceat(a, idx)

    a, idx = np.arange(5.0), np.zeros(0, np.int64)
    _same(cppcodegen.compile(f)(a, idx), f(a, idx))


@pytest.mark.parametrize("bad", [5, -1, 1 << 40])
def test_reduceat_index_out_of_range_raises_numpys_error(bad):
    def f(a, idx):
        return np.add.reduceat(a * 2.0, idx)

    a = np.arange(5.0)
    idx = np.array([0, 2, bad, 1])
    with pytest.raises(IndexError) as ref:
        f(a, idx)
    g = cppcodegen.compile(f)
    _same(g(a, np.array([0, 2, 4, 1])), f(a, np.array([0, 2, 4, 1])))
    with pytest.raises(IndexError) as got:
        g(a, idx)
    assert str(got.value) == str(ref.value)


def test_reduceat_other_cases_run_numpy():
    """2-D arrays and other ufuncs: NumPy's reduceat between kernels, same values."""
    a = np.arange(24.0).reshape(4, 6)

    def f(a):
        return np.add.reduceat(a, [0, 2], axis=1), np.logical_or.reduceat(a > 10, [0, 3], axis=0)

    for g, e in zip(cppcodegen.compile(f)(a), f(a)):
        _same(g, e)
