"""Matrix products: native ccg::gemm kernels (float) or NumPy calls (integer, matrix-vector),
with the elementwise work around them fused (tests/test_gemm.py tests the native product)."""
import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy

RNG = np.random.default_rng(11)


def mlp(x, W1, b1, W2, b2):
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2


@pytest.mark.parametrize("a_shape,b_shape", [
    ((5,), (5, 3)), ((4, 5), (5,)), ((5,), (5,)), ((4, 5), (5, 3)), ((2, 4, 5), (5, 3)),
    ((3, 1, 4, 5), (2, 5, 6)), ((0, 5), (5, 3)), ((7, 0), (0, 2)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_matmul_shapes_and_dtypes(a_shape, b_shape, dtype):
    a = (RNG.standard_normal(a_shape) * 4).astype(dtype)
    b = (RNG.standard_normal(b_shape) * 4).astype(dtype)
    f = cppcodegen.compile(lambda a, b: (a @ b) * 2)
    got, want = np.asarray(f(a, b)), np.asarray((a @ b) * 2)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_dot_matmul_function_and_mixed_dtypes():
    a = RNG.standard_normal((6, 7)).astype(np.float32)
    b = RNG.integers(-3, 3, (7, 2)).astype(np.int32)
    for fn in (lambda a, b: np.dot(a, b), lambda a, b: np.matmul(a, b), lambda a, b: a.dot(b),
               lambda a, b: b.T @ a.T):
        got, want = cppcodegen.compile(fn)(a, b), fn(a, b)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_mlp_fuses_bias_and_relu_around_two_products():
    x = RNG.standard_normal((64, 32)).astype(np.float32)
    W1, W2 = RNG.standard_normal((32, 48)).astype(np.float32), RNG.standard_normal((48, 8)).astype(np.float32)
    b1, b2 = RNG.standard_normal(48).astype(np.float32), RNG.standard_normal(8).astype(np.float32)
    ex = cppcodegen.explain(mlp, x, W1, b1, W2, b2)
    forms = [k.form for k in ex.kernels]
    assert forms.count("gemm") == 2 and len(forms) == 4, forms   # matmul, bias+relu, matmul, bias
    np.testing.assert_allclose(cppcodegen.compile(mlp)(x, W1, b1, W2, b2), mlp(x, W1, b1, W2, b2),
                               rtol=1e-4, atol=1e-4)


def test_core_dimension_mismatch_is_reported():
    with pytest.raises(ValueError, match="core dimension"):
        cppcodegen.compile(lambda a, b: a @ b)(np.ones((2, 3)), np.ones((4, 2)))


def rotate_points(theta, pts):
    """A rotation matrix per point, applied with a batched product of 3x3 @ 3x1."""
    c, s = np.cos(theta), np.sin(theta)
    R = np.zeros((theta.shape[0], 3, 3))
    R[:, 0, 0] = c
    R[:, 0, 1] = -s
    R[:, 1, 0] = s
    R[:, 1, 1] = c
    R[:, 2, 2] = 1.0
    return (R @ pts[:, :, None])[:, :, 0]


def small_batch(a, b):
    return a @ b


def test_batches_of_tiny_products_are_fused():
    """At most 64 multiply-adds per product: the products and their sum fused across the
    batch (no NumPy call looping over 3x3 matrices)."""
    rng = np.random.default_rng(3)
    th, pts = rng.uniform(0, 6, 500), rng.standard_normal((500, 3))
    check_against_numpy(rotate_points, th, pts, rtol=1e-13, atol=1e-15)
    a = rng.standard_normal((40, 2, 3)).astype(np.float32)
    b = rng.standard_normal((40, 3, 4)).astype(np.float32)
    check_against_numpy(small_batch, a, b, rtol=2e-6, atol=1e-6)
    for fn, args in ((rotate_points, (th, pts)), (small_batch, (a, b))):
        forms = [k.form for k in cppcodegen.explain(cppcodegen.compile(fn), *args).kernels]
        assert "extern" not in forms and "gemm" not in forms


def gram(X):
    return X.T @ X


def test_a_product_lowered_as_numpys_call_stays_one(monkeypatch):
    """The path of X.T @ X is decided where it is lowered (k = 500: NumPy's call, with X.T
    passed as a view). The scheduler asked again with the stored operand's last axis as k
    (20), could get 'ccg::gemm' from the tuner's table, and then computed X @ X (values off
    by 170, found with a tuning file of a busy machine). A stage lowered with views stays
    NumPy's call."""
    from cppcodegen import autotune
    from cppcodegen.backend import gemmgen
    real = autotune.matmul_path

    def by_inner_size(func, dtype, in_dtypes, shape, k, where="", gram=False):
        path = real(func, dtype, in_dtypes, shape, k, where, gram)
        return path if k == 20 else None
    monkeypatch.setattr(autotune, "matmul_path", by_inner_size)
    monkeypatch.setattr(gemmgen, "matmul_path", by_inner_size)
    X = np.random.default_rng(95).random((500, 20))
    np.testing.assert_allclose(cppcodegen.compile(gram)(X), X.T @ X, rtol=1e-12)


def dot_scalar_left(y):
    return np.dot(3.0, y), np.inner(y, 3.0), np.dot(300, y.astype(np.int8)), np.dot(2.0, 0.5)


def test_dot_and_inner_of_a_python_number_convert_it_as_numpy_does():
    """np.dot/np.inner take their operands through np.asarray: a Python float is a float64
    array (no weak-scalar promotion), a Python int an int64 one."""
    y = np.linspace(0.1, 1.7, 5, dtype=np.float32)
    got, want = cppcodegen.compile(dot_scalar_left)(y), dot_scalar_left(y)
    for g, w in zip(got, want):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def stack_times_matrix(x, w):
    return x @ w


def moved_stack_times_matrix(x, w):
    return x.transpose(1, 0, 2) @ w


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_stack_in_one_run_of_memory_is_one_product_read_in_place(dynamic):
    """``x @ w`` of a 3-D ``x`` (an activation batch times weights): one product of all the
    rows, reading ``x`` and writing the result where they are (the stack was reshaped to
    rows, which copied ``x`` into a temporary and the product into the output); a strided
    ``x`` keeps one product per matrix; ``x.transpose(1, 0, 2) @ w`` is ``(x @ w)``
    transposed (its rows were gathered first)."""
    f = cppcodegen.compile(stack_times_matrix, dynamic=dynamic)
    for dt in (np.float32, np.float64):
        x = RNG.standard_normal((16, 24, 40)).astype(dt)
        w = RNG.standard_normal((40, 12)).astype(dt)
        tol = 1e-5 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(f(x, w), x @ w, rtol=tol, atol=tol)
        ex = cppcodegen.explain(f, x, w)
        assert not [s for s in ex.program.stages if s.kind != "extern"], str(ex.program)
        assert "the batch's rows are one matrix" in ex.source
        np.testing.assert_allclose(f(x[:, ::2], w), x[:, ::2] @ w, rtol=tol, atol=tol)
        g = cppcodegen.compile(moved_stack_times_matrix, dynamic=dynamic)
        np.testing.assert_allclose(g(x, w), x.transpose(1, 0, 2) @ w, rtol=tol, atol=tol)


def power_iteration(a, tol, maxit):
    v = np.ones(a.shape[0]) / np.sqrt(a.shape[0])
    lam = 0.0
    for it in range(maxit):
        w = a @ v
        w = w / np.sqrt(np.dot(w, w))
        new = w @ (a @ w)
        if abs(new - lam) < tol:
            return new, w, it + 1
        lam, v = new, w
    return lam, v, maxit


def test_a_quotient_read_by_every_row_of_a_product_is_computed_once():
    """``a @ (w / nrm)`` as a fused matrix-vector reduction read ``w / sqrt(w . w)`` in its
    inner loop: a division and a square root per element of ``a`` (500 per element of
    ``w``); the quotient gets a buffer of its own (power iteration 1.6x -> 0.8x NumPy's
    time)."""
    m = np.random.default_rng(152).random((200, 200))
    m = m + m.T
    f = cppcodegen.compile(power_iteration, fallback=False)
    # The tolerance sits far above rounding (the eigenvalue is about 200, its last bit 3e-14),
    # so both runs stop at the same step on every ISA and every test order.
    got, want = f(m, 1e-8, 500), power_iteration(m, 1e-8, 500)
    assert got[2] == want[2]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-13)
    ir = str(cppcodegen.explain(f, m, 1e-8, 500).program)
    assert not [ln for ln in ir.splitlines() if "reduction" in ln and "sqrt" in ln], ir


def gray_dot(img):
    return np.dot(img[..., :3], [0.2989, 0.5870, 0.1140])


def gray_matmul_list(img, w):
    return np.matmul(img, [w, 1.0 - w]), np.dot(img, (w, 2 * w))


def test_dot_of_an_n_d_array_and_a_list_is_numpys():
    """``np.dot(rgb, [0.299, 0.587, 0.114])`` (a list operand, an array of more than two
    axes: the sum over its last axis, as ``@``) and np.matmul of a list holding a float
    argument."""
    rng = np.random.default_rng(4)
    for img in (rng.random((9, 7, 4)), rng.integers(0, 256, (5, 6, 3), dtype=np.uint8)):
        got, want = cppcodegen.compile(gray_dot)(img), gray_dot(img)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)
    x = rng.random((4, 5, 2)).astype(np.float32)
    for g, w in zip(cppcodegen.compile(gray_matmul_list)(x, 0.25), gray_matmul_list(x, 0.25)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)
