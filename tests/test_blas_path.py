"""Matrix products computed by the BLAS NumPy links, called from the kernel (blas.h).

The path is forced (``autotune.FORCED``: what the tuner's candidates use), so these tests do
not depend on a measurement: every layout a kernel may hand BLAS (transposed operands,
strided rows, batches with broadcasting, degenerate sizes) gives NumPy's product, and the
layouts BLAS cannot take (no unit stride) are computed by ccg::gemm instead.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import cppcodegen
from cppcodegen import autotune
from cppcodegen.runtime import blas

pytestmark = pytest.mark.skipif(not blas.available(), reason="NumPy links no CBLAS we can find")

TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


@contextlib.contextmanager
def path(name):
    token = autotune.FORCED.set(name)
    try:
        yield
    finally:
        autotune.FORCED.reset(token)


def product(a, b):
    return a @ b


def affine_t(x, w, c):
    return np.maximum(x @ w.T + c, 0)


def _r(shape, dtype, seed=0):
    return (np.random.default_rng(seed).random(shape) - 0.5).astype(dtype)


def test_blas_finds_both_functions_in_numpy():
    found = blas.functions()
    assert found.sgemm and found.dgemm and found.sgemm != found.dgemm


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (3, 5, 7), (2, 9, 1), (33, 17, 40)])
def test_products_of_every_layout_are_numpys(dtype, m, n, k):
    a, b = _r((m, k), dtype, 1), _r((k, n), dtype, 2)
    with path("blas"):
        f = cppcodegen.compile(product)
        assert "ccg::blas_gemm" in cppcodegen.explain(f, a, b).source
        np.testing.assert_allclose(f(a, b), a @ b, **TOL[dtype])
        # column-major operands: BLAS's 'T' with the other leading dimension
        fa, fb = np.asfortranarray(a), np.asfortranarray(b)
        np.testing.assert_allclose(f(fa, fb), a @ b, **TOL[dtype])
        # rows with a gap (a slice of wider arrays): leading dimension > columns
        wa, wb = _r((m, k + 5), dtype, 3), _r((k, n + 3), dtype, 4)
        np.testing.assert_allclose(f(wa[:, :k], wb[:, :n]), wa[:, :k] @ wb[:, :n], **TOL[dtype])
        # no unit stride on either axis: ccg::gemm computes it (BLAS cannot take it)
        sa = _r((2 * m, 2 * k), dtype, 5)[::2, ::2]
        np.testing.assert_allclose(f(sa, b), sa @ b, **TOL[dtype])
        # a transposed operand read in place, with the epilogue fused after the product
        x, w, c = _r((m, k), dtype, 6), _r((n, k), dtype, 7), _r(n, dtype, 8)
        g = cppcodegen.compile(affine_t)
        np.testing.assert_allclose(g(x, w, c), affine_t(x, w, c), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batches_with_broadcasting_and_empty_sizes(dtype):
    with path("blas"):
        f = cppcodegen.compile(product)
        a, b = _r((4, 3, 8, 6), dtype, 1), _r((3, 6, 5), dtype, 2)
        np.testing.assert_allclose(f(a, b), a @ b, **TOL[dtype])
        # K = 0: zeros (BLAS is not called); M = 0: an empty result
        z = f(np.ones((3, 0), dtype), np.ones((0, 4), dtype))
        assert z.shape == (3, 4) and z.dtype == dtype and not z.any()
        assert f(np.ones((0, 5), dtype), np.ones((5, 4), dtype)).shape == (0, 4)


def test_a_symbolic_size_product_calls_blas_for_every_size():
    with path("blas"):
        f = cppcodegen.compile(product, dynamic=True)
        for m, n, k in [(10, 12, 14), (50, 3, 70), (1, 8, 8)]:
            a, b = _r((m, k), np.float64, m), _r((k, n), np.float64, n)
            np.testing.assert_allclose(f(a, b), a @ b, **TOL[np.float64])


def gram(x):
    return x.T @ x, x @ x.T


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_matrix_times_its_transpose_is_syrk_and_exactly_symmetric(dtype, order):
    """x.T @ x reads one memory twice: BLAS's syrk computes one triangle (as NumPy's matmul
    does) and the other is its mirror."""
    x = np.asarray(_r((300, 40), dtype, 9), order=order)
    with path("blas"):
        f = cppcodegen.compile(gram)
        for got, want in zip(f(x), gram(x)):
            np.testing.assert_allclose(got, want, **TOL[dtype])
            np.testing.assert_array_equal(got, got.T)
