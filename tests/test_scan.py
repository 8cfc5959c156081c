"""cumsum / cumprod / ufunc.accumulate compiled as scans, compared with NumPy: dtypes (NumPy's
accumulation dtype), every axis, empty and length-1 axes, strided and transposed inputs, a
fused prologue and epilogue, out=, the chunked parallel 1-D scan of integers (independent of
threads) and the float one in NumPy's order, dynamic sizes."""
from __future__ import annotations

import ctypes
import ctypes.util
import warnings

import numpy as np
import pytest

import cppcodegen
from tests.helpers import assert_matches_numpy, run_compiled

RNG = np.random.default_rng(23)


def values(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == bool:
        return RNG.random(shape) > 0.5
    if dtype.kind in "iu":
        return RNG.integers(-9, 10, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def sum_tol(x, axis):
    """Float running sums along an outer axis: ours and NumPy's may round otherwise (vector
    lanes, a fused prologue): |error| <= n * eps * sum|x|."""
    if np.asarray(x).dtype.kind != "f":
        return {}
    a = np.abs(np.asarray(x, np.float64))
    n = a.size if axis is None else a.shape[axis]
    eps = np.finfo(np.asarray(x).dtype).eps
    return dict(rtol=4 * eps, atol=float(n * eps * (a.sum() if a.size else 0)) + 1e-300)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("kind", ["cumsum", "cumprod"])
def test_every_axis_and_dtype(kind, dtype):
    for shape in [(0,), (1,), (7,), (129,), (5, 0), (4, 1), (3, 33), (2, 5, 17), (1, 1, 1)]:
        x = values(shape, dtype)
        if kind == "cumprod" and np.dtype(dtype).kind == "f":
            x = (np.abs(x) % 1 + 0.5).astype(dtype)         # no overflow to inf in 129 steps
        for axis in [None] + list(range(-x.ndim, x.ndim)):
            def f(x):
                return getattr(np, kind)(x, axis=axis)
            got = run_compiled(cppcodegen.compile(f), x)
            assert_matches_numpy(got, f(x), **sum_tol(x, axis))


def test_integer_wraps_like_numpy_and_negative_zero_is_kept():
    big = np.array([2**62, 2**62, 2**62, -5], np.int64)
    f = lambda x: np.cumsum(x)      # noqa: E731
    assert_matches_numpy(run_compiled(cppcodegen.compile(f), big), f(big))
    g = lambda x: np.multiply.accumulate(x, axis=0)     # noqa: E731
    i32 = np.array([70000, 70000, 3], np.int32)
    assert_matches_numpy(run_compiled(cppcodegen.compile(g), i32), g(i32))
    z = np.array([[-0.0, -0.0], [-0.0, 0.0]])
    for axis in (0, 1, None):
        h = lambda x: np.cumsum(x, axis=axis)       # noqa: E731
        assert_matches_numpy(run_compiled(cppcodegen.compile(h), z), h(z), check_zero_sign=True)


def test_views_prologue_and_epilogue_fuse():
    def f(x):
        c = np.cumsum(np.exp(x.T[::-1]) * 0.5, axis=1)
        return c / c[:, -1:], np.cumprod(1 + x[:, ::2] * 0.01, axis=0)
    x = RNG.standard_normal((40, 61))
    ex = cppcodegen.explain(f, x)
    assert sum(k.form == "scan" for k in ex.kernels) == 2
    got = run_compiled(cppcodegen.compile(f), x)
    assert_matches_numpy(got, f(x), rtol=1e-12, atol=1e-12)


def test_dtype_and_out():
    x = values((6, 9), "int32")

    def f(x, o):
        np.cumsum(x, axis=1, out=o)
        return o + 0, np.cumsum(x, dtype=np.float32), x.cumprod(axis=0, dtype=np.int64)
    for od in ("int32", "int64", "float64", "float32"):
        a, b = np.zeros((6, 9), od), np.zeros((6, 9), od)
        want = f(x, a)
        got = run_compiled(cppcodegen.compile(f), x, b, writes=(1,))
        assert_matches_numpy(got, want)
        assert_matches_numpy(b, a)
    with pytest.raises(ValueError):
        cppcodegen.compile(lambda x, o: np.cumsum(x, out=o))(x, np.zeros((6, 9)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("kind", ["cumsum", "cumprod"])
def test_long_scan_does_not_depend_on_threads(dtype, kind):
    """An integer running sum runs in chunks on the threads (exact in any order); a float
    one adds in NumPy's order on one thread, the same bits as NumPy's (chunks started from
    the totals before them differed from the 33,000th element of 10^6 float32 on)."""
    x = values(600_007, dtype)         # past the parallel threshold (2**19 elements)
    if kind == "cumprod":
        x = x % 3 if dtype == "int64" else (np.abs(x) % 1 + 0.5).astype(dtype)
    f = getattr(np, kind)
    src = cppcodegen.explain(f, x).source
    assert ("nchunks" in src and "#pragma omp parallel for" in src) == (dtype == "int64")
    gomp = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
    before, results = gomp.omp_get_max_threads(), []
    cf = cppcodegen.compile(f)
    try:
        for threads in (1, 2, 3):
            gomp.omp_set_num_threads(threads)
            results.append(run_compiled(cf, x))
    finally:
        gomp.omp_set_num_threads(before)
    for r in results[1:]:
        np.testing.assert_array_equal(results[0], r)
    np.testing.assert_array_equal(results[0], f(x))


def test_dynamic_sizes_one_variant():
    f = lambda x: np.cumsum(x * 2, axis=0) - np.cumprod(x * 0.1 + 1, axis=1)   # noqa: E731
    cf = cppcodegen.compile(f, dynamic=True)
    for shape in [(3, 4), (40, 70), (1, 9), (0, 5), (70_000, 2)]:
        x = RNG.standard_normal(shape)
        assert_matches_numpy(run_compiled(cf, x), f(x), **sum_tol(x * 2 + 1, None))
    g = lambda x: np.cumsum(x)       # noqa: E731
    cg = cppcodegen.compile(g, dynamic=True)
    for n in (17, 0, 1, 100_000):
        x = RNG.standard_normal(n)
        assert_matches_numpy(run_compiled(cg, x), g(x), **sum_tol(x, None))
    assert len(cf.variants) == 1 and len(cg.variants) == 1


def test_other_accumulator_dtypes_run_as_numpy_steps():
    x = np.arange(300, dtype=np.int8)
    for dt in (np.int8, np.uint16):
        f = lambda x: np.cumsum(x, dtype=dt) * 2     # noqa: E731
        with pytest.warns(UserWarning, match="numpy.cumsum runs as a NumPy call") if dt is np.int8 \
                else warnings.catch_warnings():
            assert [k.form for k in cppcodegen.explain(f, x).kernels][0] == "extern"
        assert_matches_numpy(run_compiled(cppcodegen.compile(f), x), f(x))


def running_extremes(x):
    return np.maximum.accumulate(x, axis=0), np.minimum.accumulate(x, axis=-1)


def max_drawdown(prices):
    peak = np.maximum.accumulate(prices)
    return ((prices - peak) / peak).min()


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_maximum_and_minimum_accumulate_are_scans(dtype):
    """NaN propagates from where it appears on, as NumPy's; the 1-D scan runs in chunks."""
    x = values((37, 23), dtype)
    if x.dtype.kind == "f":
        x[5, 7] = x[30, 0] = np.nan
    got = run_compiled(cppcodegen.compile(running_extremes), x)
    for g, e in zip(got, running_extremes(x)):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    assert all(k.form == "scan" for k in cppcodegen.explain(running_extremes, x).kernels)
    p = np.cumsum(values(600_007, "float64")) + 5000.0
    assert_matches_numpy(run_compiled(cppcodegen.compile(max_drawdown), p), max_drawdown(p),
                         ulp=0)


def unsigned_running(img):
    return np.cumsum(img.ravel()), np.maximum.accumulate(img.astype(np.uint32), axis=1)


def test_unsigned_accumulators_are_scans():
    """uint8 sums accumulate in uint64 (NumPy's dtype), wrapping as NumPy's do."""
    img = RNG.integers(0, 256, (30, 40)).astype(np.uint8)
    got = run_compiled(cppcodegen.compile(unsigned_running), img)
    for g, e in zip(got, unsigned_running(img)):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    assert all(k.form == "scan" for k in cppcodegen.explain(unsigned_running, img).kernels)
