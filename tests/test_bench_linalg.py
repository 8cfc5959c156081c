"""The linear-algebra workloads (benchmarks/linalg_workloads.py) compiled and compared with
NumPy at their quick sizes, and differential tests of what making them fast changed:
column reductions that take several rows per pass over their accumulators (``y @ A``,
``x.sum(axis=0)``) and one-instruction vector broadcasts of scalars.

Tolerances. A product's rounding error is bounded by ``K * u * (|A| @ |B|)`` (u the unit
roundoff, K the inner length): both NumPy's BLAS and our kernels satisfy it, whatever their
summation order, so they differ by at most twice that. A chain of products (k2mm, k3mm, the
MLP, gemver) adds the bounds of its products (each product's error is carried through the
next one scaled by the same magnitudes): the tolerance is ``2 * (K_1 + K_2 + ... + 4) * eps``
times the workload's magnitude (the same expression evaluated on |inputs|), the +4 for the
scalings and additions around the products. GELU: the tanh term's error (libmvec tanh and
NumPy's, a few ULP each) is scaled by 0.5 * |x|, so the scale is |x| and 16 ULP of float32.
"""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from benchmarks import linalg_workloads as lw
from benchmarks.workloads import as_tuple

# the inner lengths the products of each workload chain, at its quick size
def _inner(name, size):
    if name.startswith("gemm") or name == "mvt" or name == "gesummv" or name == "gemver":
        n = size if isinstance(size, int) else size[-1]
        return 2 * n if name == "gemver" else n
    if name.startswith("mlp3"):
        return 3 * size[1]
    if name == "atax":
        return sum(size)
    if name == "bicg":
        return max(size)
    if name == "k2mm":
        ni, nj, nk, nl = size
        return nk + nj
    if name == "k3mm":
        ni, nj, nk, nl, nm = size
        return nk + nm + nj
    return 0


def _scales(wl, inputs, ref):
    if wl.fn is lw.gelu_cube:
        return (np.abs(inputs[0]).astype(np.float64),)
    return wl.magnitude(inputs, ref)


@pytest.mark.parametrize("name", list(lw.LINALG_WORKLOADS))
def test_workload_matches_numpy(name):
    wl = lw.LINALG_WORKLOADS[name]
    inputs = wl.inputs(quick=True)
    pristine = [np.copy(a) for a in inputs]
    ref = as_tuple(wl.fn(*inputs))
    got = as_tuple(cppcodegen.compile(wl.fn)(*inputs))
    assert all(np.array_equal(a, p) for a, p in zip(inputs, pristine)), "inputs changed"
    scales = _scales(wl, inputs, ref)
    assert len(got) == len(ref)
    for i, (g, r, s) in enumerate(zip(got, ref, scales)):
        assert g.shape == r.shape and g.dtype == r.dtype, (i, g.shape, g.dtype, r.dtype)
        eps = np.finfo(r.dtype).eps
        rtol = 16 * eps if wl.fn is lw.gelu_cube else 2 * (_inner(name, wl.quick_size) + 4) * eps
        err = np.abs(g.astype(np.float64) - r)
        bound = rtol * np.abs(s) + np.finfo(r.dtype).tiny
        worst = np.unravel_index(np.argmax(err - bound), err.shape) if err.ndim else ()
        assert np.all(err <= bound), (f"output {i}: at {worst} got {g[worst]!r}, NumPy "
                                      f"{r[worst]!r}, bound {bound[worst]:.3g}")


def test_suite_table():
    """Every workload carries the suite's tag; the GEMM sizes are in the names."""
    assert lw.SUITE.tag == "linalg"
    assert set(lw.SUITE.quick) <= set(lw.LINALG_WORKLOADS)
    for name, wl in lw.LINALG_WORKLOADS.items():
        assert "linalg" in wl.tags, name
        if name.startswith("gemm_f"):
            assert name.endswith(f"_{wl.full_size}"), name
    for n in (64, 256, 1024, 2000):
        assert {f"gemm_f32_{n}", f"gemm_f64_{n}"} <= set(lw.LINALG_WORKLOADS)


# ----------------------------------------------------------------- column reductions, unrolled
def _vecmat(y, A):
    return y @ A


def _colsum(A):
    return A.sum(axis=0)


def _colmax(A):
    return A.max(axis=0)


def _colmin_scaled(A, w):
    return (A * w[:, None]).min(axis=0)


# rows not a multiple of the unroll (4) and of the 8 parallel chunks, columns not a
# multiple of any lane count (scalar tails), and tiny shapes
SHAPES = [(1, 1), (3, 5), (4, 16), (7, 33), (37, 19), (250, 129), (1003, 67), (2000, 2000)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vecmat(shape, dtype):
    m, n = shape
    r = np.random.default_rng(m * 7 + n)
    A = r.standard_normal((m, n)).astype(dtype)
    y = r.standard_normal(m).astype(dtype)
    got = cppcodegen.compile(_vecmat)(y, A)
    ref = y @ A
    assert got.dtype == ref.dtype and got.shape == ref.shape
    bound = 2 * (m + 1) * np.finfo(dtype).eps * (np.abs(y).astype(np.float64) @ np.abs(A))
    assert np.all(np.abs(got.astype(np.float64) - ref) <= bound)


@pytest.mark.parametrize("shape", SHAPES)
def test_column_reductions_exact(shape):
    """Integer sums, max and min: exact, so the unrolled order must give NumPy's result
    bit for bit (NaN rows included for the float max)."""
    m, n = shape
    r = np.random.default_rng(m + 11 * n)
    ints = r.integers(-1000, 1000, size=(m, n), dtype=np.int64)
    np.testing.assert_array_equal(cppcodegen.compile(_colsum)(ints), ints.sum(axis=0))
    i32 = ints.astype(np.int32)
    np.testing.assert_array_equal(cppcodegen.compile(_colmax)(i32), i32.max(axis=0))
    x = r.standard_normal((m, n))
    x[r.random((m, n)) < 0.01] = np.nan
    np.testing.assert_array_equal(cppcodegen.compile(_colmax)(x), x.max(axis=0))
    w = r.standard_normal(m).astype(np.float32)
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(cppcodegen.compile(_colmin_scaled)(xf, w),
                                  (xf * w[:, None]).min(axis=0))


def test_column_sum_exact_dyadic():
    """Float sums of small dyadic numbers are exact in any order: the unrolled rows must
    not drop or repeat one (all 2003 rows, every column)."""
    r = np.random.default_rng(5)
    x = (r.integers(-64, 64, size=(2003, 77)) / 8.0).astype(np.float32)
    np.testing.assert_array_equal(cppcodegen.compile(_colsum)(x), x.sum(axis=0))


# ----------------------------------------------------------------- broadcasts of scalars
def _fill(x, s):
    return np.ones_like(x) * s


def _add(x, s):
    return x + s


@pytest.mark.parametrize("s", [-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-310, -3.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_scalar_bits(s, dtype):
    """A scalar broadcast to every lane keeps its bits: -0.0 stays negative, NaN, inf and
    subnormals (float64) pass unchanged."""
    x = np.arange(37, dtype=dtype)
    got = cppcodegen.compile(_fill)(x, s)
    ref = _fill(x, s)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_broadcast_scalar_ints(dtype):
    x = np.arange(70, dtype=dtype)
    s = int(np.iinfo(dtype).max // 3)
    np.testing.assert_array_equal(cppcodegen.compile(_add)(x, s), _add(x, s))


# ----------------------------------------------------------------- np.outer, fused
def _outer(a, b):
    return np.outer(a, b)


def _rank2_update(A, u, v, w):
    return A + np.outer(u, v) * 2.0 - np.outer(w, v)


@pytest.mark.parametrize("da,db", [(np.float64, np.float64), (np.float32, np.float32),
                                   (np.float32, np.float64), (np.int32, np.float32),
                                   (np.int64, np.int8), (np.bool_, np.bool_),
                                   (np.complex128, np.float64)])
@pytest.mark.parametrize("sa,sb", [((7,), (5,)), ((1,), (33,)), ((3, 4), (2,)), ((), (6,)),
                                   ((2, 3), (3, 2))])
def test_outer_matches_numpy(da, db, sa, sb):
    """np.outer is NumPy's own multiply of the raveled operands: bit for bit, any dtypes
    (promoted as NumPy does), operands of any rank raveled."""
    r = np.random.default_rng(len(sa) * 10 + len(sb))
    a = (r.standard_normal(sa) * 10).astype(da)
    b = (r.standard_normal(sb) * 10).astype(db)
    got = cppcodegen.compile(_outer)(a, b)
    ref = np.outer(a, b)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_outer_fuses():
    """A + outer(u, v) * 2 - outer(w, v): no NumPy call in the loop IR, NumPy's values, and
    NumPy's error for operands whose outer product does not broadcast with A."""
    r = np.random.default_rng(3)
    A = r.standard_normal((50, 40))
    u, v, w = r.standard_normal(50), r.standard_normal(40), r.standard_normal(50)
    f = cppcodegen.compile(_rank2_update)
    np.testing.assert_array_equal(f(A, u, v, w), _rank2_update(A, u, v, w))
    loop_ir = str(cppcodegen.explain(f, A, u, v, w)).split("== loop IR ==")[1].split("==")[0]
    assert "extern" not in loop_ir and "outer" not in loop_ir, loop_ir
    with pytest.raises(ValueError):
        f(A, v, u, w)           # outer(v, u) is 40 x 50, A is 50 x 40


# ----------------------------------------------------------------- GEMM register tiles
def _mm(a, b):
    return a @ b


def _mm_t(a, b):
    return a @ b.T


# shapes that pad less with the AVX-512 6 x 64 (float32) / 6 x 32 (float64) tile, which
# ccg::gemm then takes, and shapes that keep the 8 x 48 (8 x 24) one; K above the 512 block
# (accumulation across K blocks), M not a multiple of 6 (edge tiles), strided operands
TILE_SHAPES = [(64, 64, 64), (65, 128, 40), (7, 64, 600), (256, 256, 256), (100, 96, 1030),
               (2000, 48, 3), (13, 1000, 17)]


@pytest.mark.parametrize("m,n,k", TILE_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_tiles_match_numpy(m, n, k, dtype):
    r = np.random.default_rng(m + n + k)
    a = r.standard_normal((m, k)).astype(dtype)
    b = r.standard_normal((k, n)).astype(dtype)
    bt = np.ascontiguousarray(b.T)
    bound = 2 * (k + 1) * np.finfo(dtype).eps * (np.abs(a).astype(np.float64) @ np.abs(b))
    for f, args in ((_mm, (a, b)), (_mm_t, (a, bt))):
        got = cppcodegen.compile(f)(*args)
        assert got.dtype == np.dtype(dtype) and got.shape == (m, n)
        assert np.all(np.abs(got.astype(np.float64) - a.astype(np.float64) @ b) <= bound)


# ----------------------------------------------------------------- x ** n at the edges
def _cube(x):
    return x ** 3


def _fourth(x):
    return x ** 4


def _fifth(x):
    return x ** 5


@pytest.mark.parametrize("fn", [_cube, _fourth, _fifth])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_integer_power_edges(fn, dtype):
    """The error term of x ** n is clamped finite rather than blended: infinities, NaN,
    signed zeros, subnormals and the values around the overflow threshold (x ** 2 finite or
    not, x ** n finite or not) give NumPy's values; finite results within 1 ULP of NumPy's."""
    fi = np.finfo(dtype)
    n = {_cube: 3, _fourth: 4, _fifth: 5}[fn]
    edge = float(fi.max) ** (1.0 / n)
    sq = float(fi.max) ** 0.5
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.tiny), -float(fi.tiny),
                float(fi.smallest_subnormal), 1.0, -1.0, 3.0, -7.5]
    around = [f * e for e in (edge, sq) for f in (0.999, 0.9999999, 1.0, 1.0000001, 1.001, 2.0)]
    vals = np.array(specials + around + [-v for v in around], dtype=dtype)
    x = np.resize(vals, 67)                         # vector lanes and a scalar tail
    with np.errstate(all="ignore"):
        ref = fn(x)
    got = cppcodegen.compile(fn)(x)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)])
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(ref)]), np.signbit(ref[~np.isnan(ref)]))
    with np.errstate(over="ignore"):                # the spacing of the largest float
        ulp = np.spacing(np.abs(ref[fin]).astype(dtype))
    assert np.all(np.abs(got[fin].astype(np.float64) - ref[fin]) <= ulp.astype(np.float64))
