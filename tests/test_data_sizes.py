"""Arrays sized by a value of the data, outside every loop: ``np.empty(lens.sum())`` (a
run-length decode), ``np.empty(np.count_nonzero(M))`` (dense to CSR), ``np.empty(L[n, m])``
after a dynamic-programming table (a traceback). The size is read when the program runs,
so one build serves every value: each call is compared with the plain function, and no call
runs as Python (which used to happen for every value but the first call's) or compiles again.
"""
import warnings

import numpy as np
import pytest

import cppcodegen


def rle_decode(vals, lens):
    out = np.empty(lens.sum(), dtype=vals.dtype)
    pos = 0
    for k in range(vals.shape[0]):
        for t in range(lens[k]):
            out[pos + t] = vals[k]
        pos += lens[k]
    return out


def dense_to_csr(M):
    nr, nc = M.shape
    nnz = np.count_nonzero(M)
    indptr = np.zeros(nr + 1, dtype=np.int64)
    indices = np.empty(nnz, dtype=np.int64)
    data = np.zeros(nnz, dtype=M.dtype)
    k = 0
    for i in range(nr):
        for j in range(nc):
            if M[i, j] != 0:
                indices[k] = j
                data[k] = M[i, j]
                k += 1
        indptr[i + 1] = k
    return indptr, indices, data


def lcs(x, y):
    n, m = len(x), len(y)
    L = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if x[i - 1] == y[j - 1]:
                L[i, j] = L[i - 1, j - 1] + 1
            else:
                L[i, j] = max(L[i - 1, j], L[i, j - 1])
    k = L[n, m]
    out = np.full(k, -1, dtype=x.dtype)
    i, j = n, m
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            k -= 1
            out[k] = x[i - 1]
            i -= 1
            j -= 1
        elif L[i - 1, j] >= L[i, j - 1]:
            i -= 1
        else:
            j -= 1
    return out


def table(x):
    rows = x.max() + 1
    grid = np.zeros((rows, 3))
    for k in range(x.shape[0]):
        grid[x[k], k % 3] += 1.0
    return grid, grid.sum()


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def _calls(fn, arg_sets):
    f = cppcodegen.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cppcodegen.FallbackWarning)
        for args in arg_sets:
            _same(f(*args), fn(*args))
    return f


def test_run_length_decode_every_total():
    r = np.random.default_rng(0)
    sets = [(r.integers(0, 100, n).astype(np.int16), r.integers(0, 6, n)) for n in (500, 800, 300)]
    sets += [(np.array([7], np.int16), np.array([1])), (np.array([7], np.int16), np.array([0])),
             (np.zeros(0, np.int16), np.zeros(0, np.int64)), sets[0]]
    f = _calls(rle_decode, sets)
    assert len(f.variants) <= 3         # (totals of 0 and 1 are builds of their own)


def test_dense_to_csr_every_count():
    r = np.random.default_rng(1)
    sets = [((r.random((40, 41)) < p) * r.standard_normal((40, 41)),) for p in (0.1, 0.3, 0.02)]
    f = _calls(dense_to_csr, sets)
    assert len(f.variants) == 1


def test_traceback_after_a_table():
    r = np.random.default_rng(2)
    sets = [(r.integers(0, 4, n).astype(np.int32), r.integers(0, 4, m).astype(np.int32))
            for n, m in ((60, 50), (60, 50), (60, 50))]
    _calls(lcs, sets)


def test_two_dimensional_and_reduced():
    sets = [(np.array([0, 4, 2, 4, 9, 1]),), (np.array([3, 3, 3]),), (np.array([0, 1, 2, 0]),)]
    _calls(table, sets)


def test_negative_size_is_numpys_error():
    def make(x):
        return np.zeros(x.sum() - 10)
    f = cppcodegen.compile(make)
    _same(f(np.arange(6)), make(np.arange(6)))
    with pytest.raises(ValueError, match="negative dimensions"):
        make(np.arange(3))
    with pytest.raises(ValueError, match="negative dimensions"):
        f(np.arange(3))


def prime_gap_hist(n):
    s = np.ones(n, dtype=np.bool_)
    for p in range(2, int(n ** 0.5) + 1):
        s[p * p::p] = False
    return np.bincount(np.diff(np.flatnonzero(s)))


def test_a_bincount_of_values_a_loop_made_is_a_count():
    """np.bincount's length (the largest value + 1) after a compiled loop: the trace cannot
    know it (the loop's values are not computed while tracing), and it pinned a stand-in's
    length, so every call, the same n again, was traced again and then run as Python."""
    f = cppcodegen.compile(prime_gap_hist)
    for n in (1000, 1000, 5000, 30, 1000):
        np.testing.assert_array_equal(f(n), prime_gap_hist(n))
    assert [r.reason for r in f.recompile_reasons] == [   # (n a run-time value from then on)
        "argument 0: constant 5000, compiled for constant 1000"]


def onehot(labels):
    classes = np.arange(labels.max() + 1)
    return (labels[:, None] == classes[None, :]).astype(np.int8), np.arange(labels.min() - 2)


def test_an_arange_to_a_value_is_a_count():
    """``np.arange(labels.max() + 1)``: its length a count read when the program runs, as
    ``np.zeros``'s is; every later maximum ran the function as Python, even with the
    fallback off; a negative stop gives NumPy's empty array."""
    sets = [(np.array(v),) for v in ([0, 6, 2], [3, 1, 2], [1, 3, 5], [0, 9, 4], [2])]
    f = _calls(onehot, sets)
    assert len(f.variants) <= 2
