"""Temporaries a nest kernel uses one row at a time live in a row array, not in memory
(backend/rowlocal.py): a sorting network's 19 compare-exchanges of columns wrote 19 arrays
the size of the input (105 ms for 100000 x 8, NumPy 31 ms). Temporaries read anywhere else
(returned, read by another kernel or a matrix product) stay in memory. Compared with NumPy."""
import numpy as np
import pytest

import cppcodegen

PAIRS = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (1, 2), (5, 6), (0, 4),
         (3, 7), (1, 5), (2, 6), (1, 4), (3, 6), (2, 4), (3, 5), (3, 4)]


def sort_rows8(x):
    y = x.copy()
    for i, j in PAIRS:
        lo = np.minimum(y[:, i], y[:, j])
        hi = np.maximum(y[:, i], y[:, j])
        y[:, i] = lo
        y[:, j] = hi
    return y


def chain_and_middle(x):
    y = x.copy()
    y[:, 0] = np.minimum(y[:, 0], y[:, 1])
    mid = y * 2.0                       # read whole by the result: stays in memory
    y[:, 1] = np.maximum(y[:, 1], y[:, 2])
    y[:, 2] = y[:, 0] + y[:, 1]
    return y, mid.T @ x                 # (a product reads it in another kernel)


@pytest.mark.parametrize("fn", [sort_rows8, chain_and_middle])
def test_row_chains_match_numpy(fn):
    comp = cppcodegen.compile(fn, fallback=False)
    rng = np.random.default_rng(8)
    for rows in (1000, 7, 0):
        x = rng.standard_normal((rows, 8))
        for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (comp(x), fn(x)))):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_sorting_network_keeps_rows_local():
    x = np.random.default_rng(9).standard_normal((1000, 8))
    np.testing.assert_array_equal(cppcodegen.compile(sort_rows8, fallback=False)(x),
                                  np.sort(x, axis=1))
    cpp = str(cppcodegen.explain(sort_rows8, x)).split("== C++ ==")[1]
    assert cpp.count("[8];") == 18, cpp[:3000]      # every temporary but the result


def twins_one_read_between(x):
    """Two chains of one structure; the second's middle value is also summed by another
    kernel: it stays in memory there, whatever the first chain's kernel does."""
    y = x.copy()
    y[:, 0] = np.minimum(y[:, 0], y[:, 1])
    y[:, 1] = np.maximum(y[:, 1], y[:, 2])
    z = x * 2.0
    z[:, 0] = np.minimum(z[:, 0], z[:, 1])
    s = z.sum(axis=0)
    z[:, 1] = np.maximum(z[:, 1], z[:, 2])
    return y, z, s


def test_twin_kernels_keep_what_others_read():
    x = np.random.default_rng(10).standard_normal((300, 4))
    for g, w in zip(cppcodegen.compile(twins_one_read_between, fallback=False)(x),
                    twins_one_read_between(x)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
