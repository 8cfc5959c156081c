"""``np.roll`` and ``np.pad`` compile natively (joins of slices, fused into their consumers),
and a pointwise loop over a join runs as one loop per part (index-set splitting): results
equal NumPy's for every shift, axis, width and mode; what is not compiled runs NumPy's own."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen

R = np.random.default_rng(11)


def rolls(x):
    return (np.roll(x, 3), np.roll(x, -7, axis=-1), np.roll(x, (1, 2), axis=(0, 1)),
            np.roll(x, 0), np.roll(x, 25, axis=0), np.roll(x, [1, 1], axis=[1, 1]),
            np.roll(x, -1, axis=0) - x)


def pads(x):
    return (np.pad(x, 1), np.pad(x, ((1, 2), (0, 3)), constant_values=(1.5, -2.0)),
            np.pad(x, 2, mode="edge"), np.pad(x, (1, 2), mode="wrap"),
            np.pad(x, ((2, 1), (1, 3)), mode="reflect"), np.pad(x, 3, mode="symmetric"),
            np.pad(x, ((0, 0), (2, 0)), "constant", constant_values=7))


def pads_numpy_runs(x):         # wider than the axis, statistics: NumPy's own pad
    return np.pad(x, 9, mode="reflect"), np.pad(x, 1, mode="mean"), np.pad(x, 7, mode="wrap")


def life(g):
    n = sum(np.roll(np.roll(g, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)
            if (i, j) != (0, 0))
    return ((n == 3) | ((g == 1) & (n == 2))).astype(g.dtype)


def periodic_advection(u, c, nt):
    for _ in range(nt):
        u = u - c * (u - np.roll(u, 1))
    return u


def blur_padded(img):
    p = np.pad(img, 1, mode="edge")
    return (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:] + p[1:-1, :-2] + p[1:-1, 1:-1] +
            p[1:-1, 2:] + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]) / 9


def joined(a, b):
    return np.concatenate((a, b, a[:3])) * 2 + 1


def three_d(v):
    return np.roll(v, (1, -1, 2), axis=(0, 1, 2)) + np.pad(v, 1, mode="wrap")[1:-1, 1:-1, 1:-1]


CASES = [
    (rolls, (R.random((6, 7)),)), (rolls, (np.arange(35, dtype=np.int32).reshape(5, 7),)),
    (rolls, ((R.random((4, 9)) * 4).astype(np.int8),)),
    (pads, (R.random((5, 6)),)), (pads, (np.arange(12).reshape(3, 4),)),
    (pads, (R.random((4, 4)).astype(np.float32),)),
    (pads_numpy_runs, (R.random((5, 6)),)),
    (life, ((R.random((40, 50)) < 0.3).astype(np.int64),)),
    (periodic_advection, (R.random(300), 0.4, 7)),
    (blur_padded, (R.random((33, 65)),)),
    (joined, (R.random(50), R.random(17))),
    (three_d, (R.random((5, 6, 7)),)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_like_numpy(fn, args):
    want = fn(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(fn)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6 if w.dtype == np.float32 else 1e-13)


def test_roll_and_pad_do_not_run_numpy():
    x = R.random((6, 7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a NumPy call between kernels warns
        cppcodegen.compile(rolls)(x)
        cppcodegen.compile(pads)(x)
    with pytest.warns(UserWarning, match="numpy.pad runs as a NumPy call"):
        cppcodegen.compile(pads_numpy_runs)(x)


def shifted_difference(u):
    return u - np.roll(u, 1)


def test_a_loop_over_a_join_runs_a_vector_loop_per_part_without_selects():
    u = R.random(1000)
    src = cppcodegen.compile(shifted_difference).explain(u).source
    kernel = src[src.index("static void kernel"):src.index('extern "C"')]
    assert " ? " not in kernel and "std::min" not in kernel     # no select, no clamp
    assert "Vec<double, L>::load(in0 + (-1 + i0))" in kernel    # u[i - 1], whole vectors
    np.testing.assert_array_equal(cppcodegen.compile(shifted_difference)(u),
                                  shifted_difference(u))


def pad_rows_and_columns(h):
    return np.pad(h, ((0, 0), (1, 1), (1, 1), (0, 0)))


def test_a_padded_copy_reads_whole_vectors_along_the_unpadded_axis():
    """The conditions are on the outer axes (one value per row); the clamp of the inner
    index (Min(15, i3) over i3 < 16) is reduced, so the row is copied in whole vectors."""
    h = R.random((2, 5, 6, 16)).astype(np.float32)
    f = cppcodegen.compile(pad_rows_and_columns)
    np.testing.assert_array_equal(f(h), pad_rows_and_columns(h))
    src = f.explain(h).source
    assert "Vec<float, L>::load(in0" in src and "std::min<int64_t>(15, i3)" not in src
