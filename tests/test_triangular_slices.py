"""Back substitution as textbooks write it: ``x[i] = (M[i, n] - M[i, i + 1:n] @ x[i + 1:]) /
M[i, i]`` over an augmented matrix (a column more than n), and ``U[i, i + 1:] @ x[i + 1:]``
called with a second size (dynamic shapes). The first row's slice is empty and the others
are not; that used to be taken as a fact that depends on the iteration, so the loop was run
by Python while tracing: the C++ grew with n (Gaussian elimination at n=60 took minutes to
build). Each case is compared with the plain function, and the C++ must not grow with n."""
import numpy as np
import pytest

import cppcodegen


def back_augmented(M):
    n = M.shape[0]
    x = np.zeros(n, dtype=M.dtype)
    for i in range(n - 1, -1, -1):
        x[i] = (M[i, n] - M[i, i + 1:n] @ x[i + 1:]) / M[i, i]
    return x


def gauss(A, b):
    n = A.shape[0]
    M = np.hstack([A, b.reshape(-1, 1)])
    for k in range(n):
        p = k + np.argmax(np.abs(M[k:, k]))
        if p != k:
            M[[k, p]] = M[[p, k]]
        for i in range(k + 1, n):
            M[i, k:] -= M[i, k] / M[k, k] * M[k, k:]
    return back_augmented(M)            # (the user's helper: traced into the function)


def back_textbook(U, y):
    n = U.shape[0]
    x = np.zeros_like(y)
    x[n - 1] = y[n - 1] / U[n - 1, n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = (y[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


def _system(n, dtype=np.float64, seed=0):
    r = np.random.default_rng(seed)
    U = np.triu(r.standard_normal((n, n))) + n * np.eye(n)
    return U.astype(dtype), r.standard_normal(n).astype(dtype)


def _lines(fn, *args):
    return cppcodegen.explain(fn, *args).source.count("\n")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_augmented_back_substitution_is_a_loop(dtype):
    small, large = [np.hstack([U, y[:, None]]) for U, y in (_system(12, dtype), _system(40, dtype))]
    for M in (small, large):
        np.testing.assert_allclose(cppcodegen.compile(back_augmented)(M), back_augmented(M),
                                   rtol=1e-10)
    assert _lines(back_augmented, large) <= _lines(back_augmented, small) + 20


def test_gaussian_elimination_builds_once_for_any_n():
    r = np.random.default_rng(1)
    f = cppcodegen.compile(gauss)
    for n in (9, 30):
        A, b = r.standard_normal((n, n)), r.standard_normal(n)
        np.testing.assert_allclose(f(A, b), gauss(A, b), rtol=1e-9, atol=1e-12)
    A, b = r.standard_normal((30, 30)), r.standard_normal(30)
    assert _lines(gauss, A, b) < 1500


@pytest.mark.parametrize("sizes", [(30, 12), (12, 30)])
def test_second_size_keeps_the_loop(sizes):
    f = cppcodegen.compile(back_textbook)
    for n in sizes:
        U, y = _system(n)
        np.testing.assert_allclose(f(U, y), back_textbook(U, y), rtol=1e-10)
    assert len(f.variants) == 2         # (the second: sizes symbolic)


def test_symbolic_sizes_keep_the_loop():
    f = cppcodegen.compile(back_textbook, dynamic=True)
    for n in (40, 7):
        U, y = _system(n)
        np.testing.assert_allclose(f(U, y), back_textbook(U, y), rtol=1e-10)
    source = f.explain(*_system(40)).source
    assert "// for at" in source and source.count("\n") < 1000   # (unrolled: ~9000 lines)
