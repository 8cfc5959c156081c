"""Native matrix products: float32/float64 ``@`` as a call into ccg::gemm (include/cppcodegen/gemm.h).

Every result is compared with NumPy's (OpenBLAS) within the rounding bound of a dot
product: each of the two results of a length-K dot product is within
``gamma_K * sum_k |a_ik| |b_kj|`` of the exact value (``gamma_K = K eps / (1 - K eps)``,
whatever the summation order, FMA or not), so they differ by at most twice that. The bound
is per element, computed in float64 from ``|a| @ |b|``.

Also: the AVX-512, AVX2 and portable builds (selected with the ``isa`` option as in
test_path_sweeps.py), sizes 0, 1, primes up to 131 and ~1000 (several cache blocks and the
parallel path), transposed and strided operands, batches with broadcasting, symbolic sizes
(``dynamic=True``), bit-identical results for 1, 2 and 3 threads, and the epilogue fusion
and intermediate hooks around the product.
"""
import ctypes
import ctypes.util

import numpy as np
import pytest

import cppcodegen
from cppcodegen.runtime import cpu
from helpers import run_compiled

ISAS = [i for i in ("avx512", "avx2", "scalar") if cpu.supports(i)]
DTYPES = (np.float32, np.float64)
# (M, N, K): empty, ones, K = 0 (zeros), edge tiles of every micro-kernel shape, primes,
# K above one cache block (512), sizes past the parallel threshold
SIZES = [(0, 5, 3), (5, 0, 3), (4, 6, 0), (1, 1, 1), (2, 2, 1), (1, 9, 4), (9, 1, 4),
         (2, 3, 5), (7, 13, 11), (8, 48, 16), (9, 49, 17), (31, 37, 41), (97, 101, 103),
         (131, 127, 113), (17, 29, 1100), (130, 67, 600)]
BIG = [(1031, 1000, 600), (96, 1500, 700)]     # both thread partitions (rows, B's panels)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _operands(m, n, k, dtype, seed=0):
    r = _rng(seed)
    return r.standard_normal((m, k)).astype(dtype), r.standard_normal((k, n)).astype(dtype)


def assert_product_close(got, a, b):
    """``got`` vs NumPy's a @ b, within twice the dot-product rounding bound."""
    want = a @ b
    assert got.shape == want.shape and got.dtype == want.dtype
    k = a.shape[-1]
    eps = np.finfo(want.dtype).eps
    gamma = k * eps / (1 - k * eps)
    bound = 2 * gamma * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bad = err > bound + np.finfo(want.dtype).tiny
    assert not bad.any(), (f"{bad.sum()} elements off, worst {err[bad].max()} "
                           f"(bound {bound[bad].min()})")
    if k == 0:
        assert not got.any()


def product(a, b):
    return a @ b


@pytest.fixture(scope="module", params=ISAS)
def isa(request):
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
def test_sizes_every_build_static_and_dynamic(isa, dtype):
    opts = {"isa": isa}
    dyn = cppcodegen.compile(product, dynamic=True, options=opts)
    # traced first at sizes > 1 (every size symbolic), then run at all of them
    for i, (m, n, k) in enumerate([(7, 13, 11)] + SIZES):
        a, b = _operands(m, n, k, dtype, seed=i)
        assert_product_close(run_compiled(dyn, a, b), a, b)
    assert len(dyn.dynamic_variants) == 1 and len(dyn.variants) == 1
    src = cppcodegen.explain(dyn, a, b).source
    assert f"ccg::gemm<{'float' if dtype == np.float32 else 'double'}>(n" in src
    for m, n, k in [(7, 13, 11), (131, 127, 113), (4, 6, 0), (0, 5, 3)]:
        a, b = _operands(m, n, k, dtype)
        assert_product_close(run_compiled(cppcodegen.compile(product, options=opts), a, b),
                             a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_big_products_parallel(dtype):
    f = cppcodegen.compile(product, dynamic=True)
    for m, n, k in BIG:
        a, b = _operands(m, n, k, dtype)
        assert_product_close(run_compiled(f, a, b), a, b)


def _gomp():
    return ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transposed", [False, True])
def test_results_do_not_depend_on_the_thread_count(dtype, transposed):
    """Packed B (long A, or B transposed) and B read in place (few rows of A), both thread
    partitions (row chunks; panel groups), several K blocks."""
    gomp = _gomp()
    before = gomp.omp_get_max_threads()
    cases = [_operands(m, n, k, dtype, seed=m) for m, n, k in
             BIG + [(130, 67, 600), (64, 900, 1100), (37, 50, 9000), (20, 20, 50000)]]
    if transposed:
        f = cppcodegen.compile(lambda a, b: a @ b.T, dynamic=True)
        cases = [(a, np.ascontiguousarray(b.T)) for a, b in cases]
    else:
        f = cppcodegen.compile(lambda a, b: a @ b, dynamic=True)
    results = {}
    try:
        for threads in (1, 2, 3):
            gomp.omp_set_num_threads(threads)
            results[threads] = [run_compiled(f, a, b) for a, b in cases]
    finally:
        gomp.omp_set_num_threads(before)
    for threads in (2, 3):
        for r1, rt in zip(results[1], results[threads]):
            assert r1.tobytes() == rt.tobytes()
    for (a, b), r in zip(cases, results[1]):
        assert_product_close(r, a, b.T if transposed else b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", [(50000, 50), (100000, 20), (9000, 300)])
def test_gram_of_a_tall_matrix(dtype, rows, cols):
    """X.T @ X with a long inner dimension and a small product: the inner dimension in slabs
    (the threads' work), their partial products added in order."""
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(dtype)
    f = cppcodegen.compile(lambda x: x.T @ x, fallback=False)
    assert_product_close(run_compiled(f, x), x.T, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_and_strided_operands(dtype):
    r = _rng(3)
    x = r.standard_normal((70, 90)).astype(dtype)
    w = r.standard_normal((50, 90)).astype(dtype)
    big = r.standard_normal((150, 200)).astype(dtype)
    # arguments that are views: their strides go to ccg::gemm, nothing is copied
    f = cppcodegen.compile(product)
    assert_product_close(run_compiled(f, x, w.T), x, w.T)
    assert_product_close(run_compiled(f, w.T[::2], x[:50]), w.T[::2], x[:50])
    assert_product_close(run_compiled(f, big[::2, ::3], big[1:68, 5:16]),
                         big[::2, ::3], big[1:68, 5:16])
    assert_product_close(run_compiled(f, x[::-1], w.T[:, ::-1]), x[::-1], w.T[:, ::-1])
    # a transposed operand (w.T, swapaxes) is read in place: no transposing copy kernel
    ex = cppcodegen.explain(lambda x, w: x @ w.T, x, w)
    assert [k.form for k in ex.kernels] == ["gemm"]
    # transposes and slices inside the function
    g = cppcodegen.compile(lambda x, w: x @ w.T + x[:, :50] @ w[:, ::-1][:, :50].T)
    got = run_compiled(g, x, w)
    want = x @ w.T + x[:, :50] @ w[:, ::-1][:, :50].T
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-3 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((3, 7, 9), (3, 9, 5)), ((40, 30, 20), (40, 20, 50)), ((2, 3, 70, 60), (3, 60, 80)), ((3, 1, 4, 5), (2, 5, 6)), ((2, 4, 5), (5, 3)), ((4, 5), (6, 5, 3)),
    ((0, 4, 5), (5, 3)), ((2, 0, 5), (2, 5, 3)),
])
def test_batched_with_broadcasting(a_shape, b_shape):
    r = _rng(5)
    a = r.standard_normal(a_shape).astype(np.float32)
    b = r.standard_normal(b_shape).astype(np.float32)
    f = cppcodegen.compile(product)
    got = run_compiled(f, a, b)
    want = a @ b
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    # the same with the second operand transposed in place (batched swapaxes)
    bt = np.ascontiguousarray(np.swapaxes(b, -1, -2))
    g = cppcodegen.compile(lambda a, bt: a @ np.swapaxes(bt, -1, -2))
    forms = [k.form for k in cppcodegen.explain(g, a, bt).kernels]
    tiny = a_shape[-2] * a_shape[-1] * b_shape[-1] <= 64     # fused multiply-adds (linalg)
    assert forms == ["gemm"] if not tiny else (len(forms) == 1 and forms[0] != "extern")
    np.testing.assert_allclose(run_compiled(g, a, bt), want, rtol=1e-5, atol=1e-4)


def test_mixed_and_integer_dtypes_and_vectors_stay_numpy_calls():
    r = _rng(6)
    a = r.standard_normal((6, 7)).astype(np.float32)
    i = r.integers(-3, 3, (7, 4)).astype(np.int32)
    forms = lambda fn, *args: [k.form for k in cppcodegen.explain(fn, *args).kernels]
    assert "gemm" in forms(product, a, i)            # float64 after promotion: native
    assert "gemm" not in forms(product, i.T, i)      # int32: BLAS-free NumPy call
    assert "gemm" not in forms(product, a, a[0])     # matrix-vector: NumPy's GEMV
    got = run_compiled(cppcodegen.compile(product), a, i)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, a @ i, rtol=1e-12)


def test_special_values_propagate():
    a, b = _operands(20, 30, 40, np.float64, seed=7)
    a[3, 5], a[7, 0], b[2, 11] = np.nan, np.inf, -np.inf
    got = run_compiled(cppcodegen.compile(product), a, b)
    with np.errstate(invalid="ignore"):
        want = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12)


def mlp(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def test_mlp_epilogue_fused_and_hooks_see_the_product():
    r = _rng(8)
    x, w1, w2 = (r.standard_normal(s).astype(np.float32) for s in ((64, 32), (32, 48), (48, 8)))
    b1, b2 = r.standard_normal(48).astype(np.float32), r.standard_normal(8).astype(np.float32)
    ex = cppcodegen.explain(mlp, x, w1, b1, w2, b2)
    assert [k.form for k in ex.kernels].count("gemm") == 2 and len(ex.kernels) == 4
    assert "extern" not in [k.form for k in ex.kernels]
    np.testing.assert_allclose(run_compiled(cppcodegen.compile(mlp), x, w1, b1, w2, b2),
                               mlp(x, w1, b1, w2, b2), rtol=1e-4, atol=1e-4)
    seen = {}
    f = cppcodegen.compile(mlp, options={"generate_intermediate_hooks": True})
    with cppcodegen.hooks.intermediate_hook(lambda name, v: seen.setdefault(name, v.copy())):
        f(x, w1, b1, w2, b2)
    products = [v for name, v in seen.items() if name.endswith(":matmul")]
    assert len(products) == 2
    assert_product_close(products[0], x, w1)


def test_out_argument_and_dot():
    r = _rng(9)
    a, b = _operands(33, 21, 17, np.float32, seed=9)

    def into(a, b, out):
        np.matmul(a, b, out=out)
        return np.dot(a, b) * 2

    out = np.zeros((33, 21), np.float32)
    got = cppcodegen.compile(into)(a, b, out)
    assert_product_close(out, a, b)
    assert_product_close(got / 2, a, b)


def shifted_products(x, w):
    """A convolution written as products of shifted slices with the kernel's taps."""
    K = w.shape[0]
    H, W = x.shape[1] - K + 1, x.shape[2] - K + 1
    out = np.zeros((x.shape[0], H, W, w.shape[3]), dtype=x.dtype)
    for i in range(K):
        for j in range(K):
            out += x[:, i:i + H, j:j + W, :] @ w[i, j]
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stack_of_matrices_times_a_matrix_is_one_product(dtype):
    """(N, H, W, C) slices @ (C, F): one GEMM over N*H*W rows (the slice's rows gathered
    with a row // (H*W), row // W % H, row % W index), equal to NumPy's batched product."""
    r = _rng(8)
    x = r.standard_normal((3, 13, 11, 6)).astype(dtype)
    w = r.standard_normal((3, 3, 6, 5)).astype(dtype)
    f = cppcodegen.compile(shifted_products)
    got = run_compiled(f, x, w)
    want = shifted_products(x, w)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    text = str(cppcodegen.explain(f, x, w))
    assert "[297, 6]" in text and "floor(i0/99)" in text    # 3*11*9 rows, no flat division


def _blocked_matmul(A, B, bs):
    m, k = A.shape
    n = B.shape[1]
    C = np.zeros((m, n), np.float32)
    for ii in range(0, m, bs):
        for kk in range(0, k, bs):
            for jj in range(0, n, bs):
                C[ii:ii + bs, jj:jj + bs] += A[ii:ii + bs, kk:kk + bs] @ B[kk:kk + bs, jj:jj + bs]
    return C


def test_blocked_matmul_with_ragged_edge_blocks():
    """Products of blocks in loops whose edge blocks are shorter (the block's length a
    run-time value): the product kernel takes the loop and block-length variables (its C++
    did not compile; found by a new user's probe)."""
    rng = np.random.default_rng(8)
    f = cppcodegen.compile(_blocked_matmul, fallback=False)
    for m, k, n, bs in ((8, 8, 8, 4), (100, 90, 70, 32)):
        A = rng.random((m, k), dtype=np.float32)
        B = rng.random((k, n), dtype=np.float32)
        np.testing.assert_allclose(f(A, B, bs), A @ B, rtol=2e-5, atol=2e-5)
