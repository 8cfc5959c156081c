"""np.einsum compiled natively (products through matmul, other contractions as a fused
multiply + sum) or as NumPy's call, compared with np.einsum."""
import warnings

import numpy as np
import pytest

import cppcodegen

CASES = [
    ("ij,jk->ik", [(5, 4), (4, 3)]), ("ij,kj->ik", [(5, 4), (3, 4)]),
    ("ji,jk->ik", [(4, 5), (4, 3)]), ("ij,jk->ki", [(5, 4), (4, 3)]),
    ("bij,bjk->bik", [(2, 5, 4), (2, 4, 3)]), ("ij,ij->i", [(6, 7), (6, 7)]),
    ("i,i->", [(9,), (9,)]), ("i,j->ij", [(4,), (5,)]), ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]), ("ijk,jl->ilk", [(2, 3, 4), (3, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("ij,jk", [(5, 4), (4, 3)]),
    ("ba,ab", [(3, 4), (4, 3)]), ("i,i", [(7,), (7,)]),
]


def _inputs(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return [rng.integers(-5, 6, s).astype(dtype) for s in shapes]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("subs,shapes", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_matches_numpy(subs, shapes, dtype):
    args = _inputs(shapes, dtype)
    want = np.einsum(subs, *args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # native: no NumPy step between kernels
        got = cppcodegen.compile(lambda *xs: np.einsum(subs, *xs))(*args)
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_a_product_runs_as_the_gemm_and_fuses_its_epilogue():
    a, b = _inputs([(64, 32), (32, 48)], np.float32)
    f = cppcodegen.compile(lambda a, b: np.maximum(np.einsum("ik,kj->ij", a, b) + 1.0, 0.0))
    np.testing.assert_allclose(f(a, b), np.maximum(a @ b + 1.0, 0.0), rtol=1e-5, atol=1e-5)
    assert "gemm" in f.explain(a, b).source


@pytest.mark.parametrize("subs,shapes", [("ii->i", [(4, 4)]), ("...ij,...jk->...ik",
                                                                [(2, 3, 4), (2, 4, 5)])])
def test_diagonals_and_ellipses_run_as_numpys_call(subs, shapes):
    args = _inputs(shapes, np.float64)
    with pytest.warns(UserWarning, match="einsum"):
        got = cppcodegen.compile(lambda *xs: np.einsum(subs, *xs))(*args)
    np.testing.assert_allclose(got, np.einsum(subs, *args), rtol=1e-12)


def test_errors_are_numpys():
    a = np.ones((3, 4))
    with pytest.raises(ValueError):
        cppcodegen.compile(lambda a: np.einsum("ijk->i", a))(a)
    with pytest.raises(ValueError):
        cppcodegen.compile(lambda a: np.einsum("ij,jk->ik", a))(a)
