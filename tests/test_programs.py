"""Real NumPy programs against NumPy: matrix products, joins and layout, scans and sorts,
ufunc.outer/.reduce, statistics, gathers and data-dependent indexing.

Each test runs the function with NumPy and compiled, and compares shape, dtype and values
(``check_against_numpy``, which also checks that the arguments were left alone). Some of these
run natively (views, index arithmetic), the others as NumPy calls between compiled kernels;
both must give NumPy's answer, and NumPy calls must show up in the intermediate hooks.
"""
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen import hooks
from helpers import check_against_numpy

pytestmark = pytest.mark.filterwarnings("ignore:cppcodegen")


R = np.random.default_rng(11)
A = R.standard_normal((7, 9))
B = R.standard_normal((9, 5))
S = R.standard_normal((9, 9))
V9 = R.standard_normal(9)
V7 = R.standard_normal(7)
X3 = R.standard_normal((3, 7, 9))
F32 = R.standard_normal((6, 10)).astype(np.float32)
I32 = R.integers(-50, 50, (6, 8)).astype(np.int32)
PROD = dict(rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------- matrix products

@pytest.mark.parametrize("fn,args", [
    (lambda a, b: a @ b, (A, B)),
    (lambda a, b: np.matmul(a, b) * 2 + 1, (A, B)),
    (lambda a, b: np.dot(a, b), (A, B)),
    (lambda a, v: a @ v, (A, V9)),                     # matrix-vector
    (lambda v, a: v @ a, (V7, A)),                     # vector-matrix
    (lambda a, b: np.dot(a[0], b[:, 0]), (A, B)),       # vector-vector
    (lambda x, b: x @ b, (X3, B)),                     # batched, broadcasting the matrix
    (lambda x, s: np.swapaxes(x, 1, 2) @ x[:, :, :7] + s[0, 0], (X3, S)),
    (lambda a, b: np.outer(a[:, 0], b[0]), (A, B)),
    (lambda u, v: np.inner(u, v), (V9, V9 * 3)),
    (lambda a, s: np.inner(a, s), (A, S)),
    (lambda a, b: np.einsum("ij,jk->ik", a, b), (A, B)),
    (lambda a: np.einsum("ij->ji", a) + 1, (A,)),
    (lambda s: np.einsum("ii->", s), (S,)),
    (lambda a, v: np.einsum("ij,j->i", a, v), (A, V9)),
    (lambda x, b: np.einsum("bij,jk->bik", x, b), (X3, B)),
    (lambda a, b: np.einsum("ij,ij->i", a, b), (A, A * 2)),
    (lambda a, b: np.tensordot(a, b, axes=1), (A, B)),
    (lambda x, s: np.tensordot(x, s, axes=([2], [0])), (X3, S)),
    (lambda x, b: np.maximum(x @ b, 0), (A, B)),
])
def test_matrix_products(fn, args):
    check_against_numpy(fn, *args, **PROD)


def test_mlp_and_float32_products():
    w1, b1 = R.standard_normal((9, 16)), R.standard_normal(16)
    w2, b2 = R.standard_normal((16, 4)), R.standard_normal(4)

    def mlp(x, w1, b1, w2, b2):
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2
    check_against_numpy(mlp, A, w1, b1, w2, b2, **PROD)
    args32 = [a.astype(np.float32) for a in (A, w1, b1, w2, b2)]
    check_against_numpy(mlp, *args32, rtol=1e-5, atol=1e-5)


def test_mlp_epilogues_update_product_buffers_in_place():
    """relu(x @ W1 + b1) is computed in the first product's buffer, and the second product
    writes the output buffer that `+ b2` then updates: one temporary for the whole MLP."""
    w1, b1 = R.standard_normal((9, 16)), R.standard_normal(16)
    w2, b2 = R.standard_normal((16, 16)), R.standard_normal(16)
    x = R.standard_normal((12, 9))

    def mlp(x, w1, b1, w2, b2):
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2
    ex = cppcodegen.explain(mlp, x, w1, b1, w2, b2)
    assert [role for *_, role in ex.signature].count("temp") == 1, ex.signature
    check_against_numpy(mlp, x, w1, b1, w2, b2, **PROD)


# --------------------------------------------------------------- joins and layout

@pytest.mark.parametrize("fn,args", [
    (lambda a, b: np.concatenate([a, b.T]), (A, B)),
    (lambda a: np.concatenate([a, a * 2], axis=1), (A,)),
    (lambda a: np.stack([a, a + 1, a * 3]), (A,)),
    (lambda a: np.stack([a, -a], axis=-1), (A,)),
    (lambda a: np.hstack([a, a[:, :2]]), (A,)),
    (lambda a: np.vstack([a, a[:3]]), (A,)),
    (lambda a: np.pad(a, 2), (A,)),
    (lambda a: np.pad(a, ((1, 2), (3, 0)), constant_values=7.5), (A,)),
    (lambda a: np.pad(a, ((2, 1), (0, 3)), mode="edge"), (A,)),
    (lambda a: np.tile(a, (2, 3)), (A,)),
    (lambda a: np.repeat(a, 3, axis=0), (A,)),
    (lambda a: np.repeat(a, 2), (A,)),
    (lambda a: np.flip(a), (A,)),
    (lambda a: np.flip(a, 1) * 2, (A,)),
    (lambda a: np.fliplr(a) + np.flipud(a), (A,)),
    (lambda a: np.roll(a, 2, axis=1), (A,)),
    (lambda a: np.roll(a, -3), (A,)),
    (lambda a: np.tril(a), (A,)),
    (lambda a: np.tril(a, -2) + 1, (A,)),
    (lambda a: np.triu(a, 1), (A,)),
    (lambda x: np.triu(x, -1), (X3,)),
    (lambda i: np.tril(i), (I32,)),
    (lambda a: np.diag(a), (A,)),
    (lambda v: np.diag(v), (V9,)),
    (lambda a: np.diagonal(a), (A,)),
    (lambda a: a.diagonal(2) * 3, (A,)),
    (lambda a: np.diagonal(a, -3), (A,)),
    (lambda x: np.diagonal(x, 1, 1, 2), (X3,)),
    (lambda s: np.trace(s), (S,)),
    (lambda a: np.trace(a, 1), (A,)),
    (lambda i: np.trace(i), (I32,)),
    (lambda x: np.trace(x, axis1=1, axis2=2), (X3,)),
])
def test_joins_and_layout(fn, args):
    check_against_numpy(fn, *args, **PROD)


def test_views_are_native():
    """flip, diagonal, trace, tril and triu compile to kernels (no NumPy step)."""
    for fn in (lambda a: np.flip(a, 0) + 1, lambda a: np.diagonal(a, 1) * 2,
               lambda a: np.trace(a), lambda a: np.tril(a) - np.triu(a, 2)):
        ex = cppcodegen.explain(fn, A)
        assert "extern" not in str(ex.program), ex.program


# --------------------------------------------------------------- scans, sorts, ufunc methods

@pytest.mark.parametrize("fn,args", [
    (lambda a: np.cumsum(a, axis=1), (A,)),
    (lambda a: np.cumsum(a), (A,)),
    (lambda i: np.cumsum(i, axis=0), (I32,)),
    (lambda a: np.cumprod(a * 0.5, axis=0), (A,)),
    (lambda a: np.sort(a, axis=0), (A,)),
    (lambda a: np.sort(a) * 2, (A,)),
    (lambda a: np.argsort(a, axis=1, kind="stable"), (A,)),
    (lambda a: np.partition(a, 3, axis=1)[:, 3], (A,)),
    (lambda u, v: np.add.outer(u, v), (V7, V9)),
    (lambda u, v: np.multiply.outer(u, v) - 1, (V7, V9)),
    (lambda u, a: np.subtract.outer(u, a), (V7, A)),
    (lambda u, v: np.maximum.outer(u, v), (V7, V9)),
    (lambda a: np.add.reduce(a, axis=1), (A,)),
    (lambda a: np.add.reduce(a), (A,)),
    (lambda a: np.maximum.reduce(a, axis=0), (A,)),
    (lambda a: np.multiply.reduce(a * 0.5, axis=1), (A,)),
    (lambda a: np.logical_or.reduce(a > 1, axis=1), (A,)),
])
def test_scans_sorts_and_ufunc_methods(fn, args):
    check_against_numpy(fn, *args, **PROD)


# --------------------------------------------------------------- statistics

@pytest.mark.parametrize("fn,args", [
    (lambda a: np.linalg.norm(a), (A,)),
    (lambda a: np.linalg.norm(a, axis=1), (A,)),
    (lambda a: np.linalg.norm(a, ord=1, axis=0), (A,)),
    (lambda v: np.linalg.norm(v, ord=np.inf), (V9,)),
    (lambda a: np.cov(a), (A,)),
    (lambda a: np.cov(a, rowvar=False), (A,)),
    (lambda a: np.corrcoef(a), (A,)),
    (lambda a, w: np.average(a, axis=1, weights=w), (A, np.abs(V9) + 0.1)),
    (lambda a: np.average(a), (A,)),
    (lambda a: np.median(a, axis=0), (A,)),
    (lambda a: np.median(a), (A,)),
    (lambda a: np.percentile(a, 30), (A,)),
    (lambda a: np.percentile(a, [10, 90], axis=1), (A,)),
    (lambda a: np.histogram(a, bins=5, range=(-2, 2)), (A,)),
    (lambda a: np.histogram(a, bins=4)[0], (A,)),
    (lambda f: np.cov(f), (F32,)),
])
def test_statistics(fn, args):
    check_against_numpy(fn, *args, **PROD)


# --------------------------------------------------------------- gathers and masks

IDX = np.array([3, 0, -1, 6, 2, -7])


@pytest.mark.parametrize("fn,args", [
    (lambda a, i: a[i], (A, IDX)),
    (lambda a, i: a[i, :] * 2, (A, IDX)),
    (lambda a, i: a[:, i] + 1, (A, IDX)),
    (lambda a, i: a[i, i], (A, IDX)),
    (lambda a, i: a[i.reshape(2, 3)], (A, IDX)),
    (lambda a: a[[0, 2, 2, -1]], (A,)),
    (lambda a, i: np.take(a, i), (A, IDX)),
    (lambda a, i: np.take(a, i, axis=1), (A, IDX)),
    (lambda a: np.take_along_axis(a, np.argsort(a, axis=1), axis=1), (A,)),
    (lambda a: np.take_along_axis(a, np.argmax(a, axis=0)[None, :], axis=0), (A,)),
    (lambda a, i: a[np.abs(i) % 7] * 2, (A, IDX)),       # indices computed in the function
    (lambda i32, i: i32[i % 6], (I32, IDX)),
])
def test_gathers(fn, args):
    check_against_numpy(fn, *args, **PROD)


@pytest.mark.parametrize("bad", [np.array([0, 7]), np.array([-8, 1])])
def test_gather_out_of_bounds_raises_like_numpy(bad):
    f = cppcodegen.compile(lambda a, i: a[i] * 2)
    f(A, np.array([1, 2]))                   # compiled and run once
    with pytest.raises(IndexError, match="out of bounds"):
        A[bad]
    with pytest.raises(IndexError, match="out of bounds"):
        f(A, bad)
    with pytest.raises(IndexError, match="out of bounds"):
        cppcodegen.compile(lambda a, i: np.take(a, i, axis=0))(A, bad)


def test_float_indices_refused():
    with pytest.raises(IndexError, match="integer"):
        cppcodegen.compile(lambda a, i: a[i])(A, np.array([0.0, 1.0]))


def masked_mean(a):
    return a[a > 0.3].sum() / 7 + a.mean()


def where_one(a):
    return np.where(a > 0.5)


@pytest.mark.parametrize("fn,args", [
    (masked_mean, (A,)),
    (lambda a: a[a[:, 0] > 0] * 2, (A,)),
    (lambda a: np.nonzero(a > 0.2), (A,)),
    (where_one, (A,)),
    (lambda a: np.flatnonzero(a[0] > 0), (A,)),
    (lambda a: np.argwhere(a < -0.5), (A,)),
    (lambda a: np.unique(np.round(a)), (A,)),
])
def test_data_dependent_shapes(fn, args):
    check_against_numpy(fn, *args, **PROD)


def test_data_dependent_shape_changes_between_calls():
    """Compiled for the first call's count of True; another count runs with NumPy (warned)."""
    f = cppcodegen.compile(masked_mean)
    check_against_numpy(masked_mean, A, **PROD)
    other = A + 0.4                            # more elements above 0.3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = f(other)
    np.testing.assert_allclose(got, masked_mean(other), rtol=1e-12)
    for backend in ("cpp", "numpy"):
        g = cppcodegen.compile(where_one, backend=backend)
        for x in (A, -A, A * 0):
            for w, e in zip(g(x), where_one(x)):
                np.testing.assert_array_equal(w, e)


# --------------------------------------------------------------- NumPy steps and hooks

def test_numpy_steps_report_to_intermediate_hooks():
    def f(a, i):
        s = np.sort(a, axis=None)          # a NumPy step between kernels (63 values)
        g = s[i]                           # a gather: fused into the kernel after the sort
        return np.cumsum(g * 2, axis=0) + np.median(a)      # (the median: a selection)
    reported = []
    cf = cppcodegen.compile(f, options={"generate_intermediate_hooks": True})
    with hooks.intermediate_hook(lambda name, value: reported.append((name, value.copy()))):
        got = cf(A, IDX)
    np.testing.assert_allclose(got, f(A, IDX), rtol=1e-12)
    ops = [name.split(":")[-1] for name, _ in reported]
    for op in ("sort", "cumsum", "select"):
        assert op in ops, ops
    sort_value = next(v for name, v in reported if name.endswith(":sort"))
    np.testing.assert_array_equal(sort_value, np.sort(A, axis=None))
    selected = next(v for name, v in reported if name.endswith(":select"))
    assert np.median(A) in selected         # the middle of the 63 values, at its position


def test_check_mode_covers_numpy_steps():
    report = cppcodegen.check(lambda a: np.cumsum(np.sort(a), axis=1) * 2, A)
    assert report.ok and len(report.buffers) >= 2


def test_norm_is_native_so_a_power_iteration_is_one_loop():
    """np.linalg.norm of real values (2-norm, Frobenius, along an axis) compiles natively, so
    a loop around it is a C++ loop (no NumPy step in its body), equal to NumPy's within the
    sum-order tolerance."""
    def power(A, v):
        for _ in range(30):
            v = A @ v
            v = v / np.linalg.norm(v)
        return v @ (A @ v), v
    r = np.random.default_rng(3)
    M = r.standard_normal((40, 40))
    A, v = M + M.T, r.standard_normal(40)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)          # no NumPy step
        got = cppcodegen.compile(power)(A, v)
    want = power(A, v)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-9)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-7, atol=1e-12)
    assert "for(" in str(cppcodegen.explain(power, A, v).graph).replace(" ", "")
