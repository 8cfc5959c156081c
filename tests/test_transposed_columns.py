"""``(lr * X.T) @ r`` (logistic regression's gradient as textbooks write it: ``lr * X.T @ (p
- y)``): the product's sum runs along X's rows, which are strided in memory. It is summed as
a column reduction (each row of X read once into a row of accumulators) instead of one
strided pass per column (3x NumPy's time in an epoch loop). Values within float sums'
tolerance of NumPy's."""
import numpy as np
import pytest

import cppcodegen


def grad(X, r, lr):
    return lr * X.T @ r


def epochs(X, y, lr, n):
    w = np.zeros(X.shape[1], dtype=X.dtype)
    for _ in range(n):
        p = 1 / (1 + np.exp(-X @ w))
        w -= lr * X.T @ (p - y) / len(y)
    return w


def _tol(dtype):
    return dict(rtol=2e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(2000, 16), (37, 5), (1, 3), (500, 1)])
def test_scaled_transposed_product(shape, dtype):
    r = np.random.default_rng(3)
    X = r.standard_normal(shape).astype(dtype)
    v = r.standard_normal(shape[0]).astype(dtype)
    got, want = cppcodegen.compile(grad)(X, v, 0.5), grad(X, v, 0.5)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_descent_epochs(dtype):
    r = np.random.default_rng(4)
    X = r.standard_normal((3000, 12)).astype(dtype)
    y = (X @ r.standard_normal(12) > 0).astype(dtype)
    np.testing.assert_allclose(cppcodegen.compile(epochs)(X, y, 0.5, 20), epochs(X, y, 0.5, 20),
                               **_tol(dtype))
    src = cppcodegen.explain(grad, X, y, 0.5).source
    assert "load_strided" not in src        # (a row of X at a time, not a column)
