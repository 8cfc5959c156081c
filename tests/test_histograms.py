"""Searching and counting natively (issue 16): ``np.searchsorted``, ``np.digitize``,
``np.bincount``, ``np.histogram`` compiled as binary searches and per-bin counts inside the
fused kernels. Compared with NumPy (bit-equal counts): values on edges, below and above,
NaN and infinities, empty and one-element inputs, int and float dtypes, decreasing bins,
NumPy's errors; the forms that stay NumPy calls still give NumPy's results."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen

from helpers import assert_matches_numpy, run_compiled, run_numpy


def check_against_numpy(fn, *args):
    """A fresh compile per check (the inputs' sizes and dtypes vary across the checks)."""
    assert_matches_numpy(run_compiled(cppcodegen.compile(fn), *args), run_numpy(fn, *args))

RNG = np.random.default_rng(1616)
EDGES = np.sinh(np.linspace(-2.0, 2.0, 21)) * 2.0


def values(n=2000, seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal(n) * 2.5
    x[::37] = EDGES[0]
    x[1::41] = EDGES[-1]
    x[2::43] = EDGES[7]
    x[3::47] = np.nan
    x[4::53] = np.inf
    x[5::59] = -np.inf
    return x


X = values()


def forms(fn, *args):
    return [k.form for k in cppcodegen.explain(fn, *args).kernels]


def search_both(a, v):
    return np.searchsorted(a, v), np.searchsorted(a, v, side="right"), a.searchsorted(v * 2)


def digitize_both(x, bins):
    return np.digitize(x, bins), np.digitize(x, bins, right=True)


def hist_digitize(x, edges):
    nb = edges.shape[0] - 1
    idx = np.digitize(x, edges, right=False)
    idx = np.where(x == edges[-1], nb, idx)
    return np.bincount(idx, minlength=nb + 2)[1:nb + 1]


def hist_edges(x, edges):
    return np.histogram(x, bins=edges)


def hist_const_edges(x):
    return np.histogram(x * 1.0, bins=[-1.0, 0.0, 0.0, 0.5, 3.0])


def hist_uniform(x):
    return np.histogram(x, bins=64, range=(-3.0, 3.0))


def hist_uniform_int_range(x):
    return np.histogram(x, bins=7, range=(-2, 5))


def hist_equal_range(x):
    return np.histogram(x, bins=3, range=(1.0, 1.0))


def bincount_weighted(x, edges, w):
    idx = np.searchsorted(edges, x)
    return np.bincount(idx, weights=w, minlength=edges.shape[0] + 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8])
def test_searchsorted(dtype):
    lo = 0 if np.dtype(dtype).kind == "u" else -5
    a = np.sort(RNG.integers(lo, 50, 40)).astype(dtype)
    v = (RNG.integers(2 * lo, 60, 300)).astype(dtype)
    v[:40] = a
    check_against_numpy(search_both, a, v)
    assert "extern" not in forms(search_both, a, v)


def search_listed(a, x):
    s = np.sort(a)
    return (np.searchsorted(s, [0.1, 0.5]), np.searchsorted(s, [x, 2 * x], side="right"),
            np.searchsorted(s, (0.3,)))


def test_searchsorted_of_a_list():
    """Values given as a list of numbers or of traced scalars (a quantile's positions), as
    NumPy takes them: they were "cannot use list as an array operand"."""
    check_against_numpy(search_listed, RNG.random(50), 0.25)


def test_searchsorted_nan_and_mixed_dtypes():
    a = np.array([-np.inf, -1.0, 0.0, 0.0, 2.5, np.inf, np.nan, np.nan])
    v = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, 2.5, 7.0, -3.0])
    check_against_numpy(search_both, a, v)
    check_against_numpy(search_both, a.astype(np.float32), v)            # compared in f8
    check_against_numpy(search_both, np.arange(5, dtype=np.int8), np.array([2.5, -1.0, 300.0]))
    check_against_numpy(lambda a: np.searchsorted(a, 2.0), a)            # a scalar
    check_against_numpy(search_both, a[:0], v)                            # empty array
    check_against_numpy(search_both, a[:1], v[:0])                        # no values


@pytest.mark.parametrize("bins", [EDGES, EDGES[::-1].copy(), np.array([0.0, 0.0, 1.0]),
                                  np.array([3.0])])
def test_digitize(bins):
    check_against_numpy(digitize_both, X, bins)
    check_against_numpy(digitize_both, X.astype(np.float32), bins)
    check_against_numpy(digitize_both, (X[np.isfinite(X)] * 3).astype(np.int64), bins)


def test_digitize_checks_the_bins():
    bad = np.array([0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="monotonically"):
        cppcodegen.compile(digitize_both)(X, bad)
    f = cppcodegen.compile(digitize_both)
    f(X, EDGES)
    with pytest.raises(ValueError, match="monotonically"):
        f(X, bad)                                   # the traced bins are checked each call
    with warnings.catch_warnings():                 # decreasing bins after increasing ones:
        warnings.simplefilter("ignore")             # the call runs with NumPy
        got = f(X, EDGES[::-1].copy())
    for g, w in zip(got, digitize_both(X, EDGES[::-1].copy())):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("n", [0, 1, 7, 2000, 300_000])
def test_hist_digitize(n):
    x = values(max(n, 1), seed=n)[:n]
    check_against_numpy(hist_digitize, x, EDGES)
    assert "extern" in forms(hist_digitize, x, EDGES)[:1]     # the bins' check only
    assert forms(hist_digitize, x, EDGES).count("extern") == 1


@pytest.mark.parametrize("n", [0, 1, 5, 2000, 300_000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_histogram_edges(n, dtype):
    with np.errstate(all="ignore"):
        x = (values(max(n, 1), seed=n)[:n] * (4 if dtype == np.int64 else 1)).astype(dtype)
    check_against_numpy(hist_edges, x, EDGES)
    check_against_numpy(hist_const_edges, x)
    check_against_numpy(hist_edges, x, np.array([-1.0, 0.0, 0.0, 0.5, 0.5]))
    assert forms(hist_const_edges, x) .count("extern") == 0


def test_histogram_edges_checked():
    f = cppcodegen.compile(hist_edges)
    f(X, EDGES)
    with pytest.raises(ValueError, match="increase monotonically"):
        f(X, EDGES[::-1].copy())
    nan_edges = EDGES.copy()
    nan_edges[5] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = f(X, nan_edges)                       # NaN among the edges: NumPy's call
    np.testing.assert_array_equal(got[0], hist_edges(X, nan_edges)[0])


@pytest.mark.parametrize("fn", [hist_uniform, hist_uniform_int_range, hist_equal_range])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
def test_histogram_uniform(fn, dtype):
    with np.errstate(all="ignore"):
        x = (values(4000, 3) * (3 if dtype in (np.int32, np.int64) else 1)).astype(dtype)
    x[:50] = np.linspace(-3, 3, 50).astype(dtype)     # on the edges
    check_against_numpy(fn, x)
    check_against_numpy(fn, x[:0])
    check_against_numpy(fn, x[:1])
    assert "extern" not in forms(fn, x)


def test_histogram_uniform_many_values():
    x = values(500_000, 9)
    check_against_numpy(hist_uniform, x)
    check_against_numpy(hist_uniform, np.nextafter(np.linspace(-3, 3, 500_001), np.inf))


def test_bincount():
    def counts(x):
        return np.bincount(np.digitize(x, EDGES), minlength=EDGES.size + 1)

    def shifted(x):
        return np.bincount(np.searchsorted(EDGES, x) - 3, minlength=EDGES.size + 1)

    check_against_numpy(counts, X)
    check_against_numpy(bincount_weighted, X, EDGES, RNG.standard_normal(X.size))
    assert "extern" not in forms(counts, X)
    x = np.full(10, EDGES[1])
    with pytest.raises(ValueError, match="negative"):
        shifted(x)
    with pytest.raises(ValueError, match="negative"):
        cppcodegen.compile(shifted)(x)
    x = np.full(10, EDGES[-1] + 1.0)
    check_against_numpy(shifted, x)


def test_bincount_of_unbounded_values_is_numpys_call():
    """A length that depends on the values: NumPy's call (never a guessed shape)."""
    def f(k):
        return np.bincount(k * 2)

    for k in (np.array([0, 3, 1]), np.array([5, 0])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = cppcodegen.compile(f)(k)
        np.testing.assert_array_equal(got, f(k))
    with pytest.raises(ValueError):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cppcodegen.compile(f)(np.array([-1, 2]))


def test_thread_counts_agree():
    """Per-thread rows: the counts are the same with one thread and with all."""
    x = values(600_000, 11)
    one = cppcodegen.compile(hist_uniform, options={"parallel": False})(x)
    many = cppcodegen.compile(hist_uniform)(x)
    np.testing.assert_array_equal(one[0], many[0])
    np.testing.assert_array_equal(many[0], hist_uniform(x)[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 3, 8, 9, 17, 100, 256, 257, 1000])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_of_short_and_long_sorted_arrays(n, dtype, side):
    """Short contiguous arrays are counted with vector compares, long ones halved: both give
    NumPy's index for values on the elements, between, outside, infinite and NaN, with
    infinite and NaN (sorted last) elements."""
    rng = np.random.default_rng(n)
    a = np.sort(np.round(rng.standard_normal(n), 1)).astype(dtype)    # (repeats)
    if n > 4:
        a[0], a[-1], a[-2] = -np.inf, np.nan, np.inf
        a = np.sort(a)
    v = np.concatenate([a, rng.standard_normal(50) * 3, [np.nan, np.inf, -np.inf, 0.0, -0.0]])
    v = v.astype(dtype)
    f = cppcodegen.compile(lambda a, v: np.searchsorted(a, v, side=side))
    np.testing.assert_array_equal(f(a, v), np.searchsorted(a, v, side=side))


def two_searches(a, b, v):
    return np.searchsorted(a, v, side="right") * 10000 + np.searchsorted(b[::2], v)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_searches_of_values_in_order_start_from_the_last_result(dtype):
    """A search starts from the thread's last result while the results stay near it: values
    in increasing and decreasing order, repeated, jumping, on the elements and outside, and
    two tables searched alternately in one kernel (each start from the other's result, one
    table a strided view) all give NumPy's indices."""
    rng = np.random.default_rng(7)
    a = np.sort(rng.integers(-500, 500, 3001)).astype(dtype)       # (repeats; > 256)
    b = np.sort(rng.integers(-300, 300, 1200)).astype(dtype)
    up = np.sort(rng.integers(-600, 600, 5000)).astype(dtype)
    cases = [up, up[::-1], np.repeat(up[::50], 7), a, a[::-1], np.concatenate([up, up]),
             np.concatenate([up[:100], a[::-3], up[-100:]]), up[::997], up[:0],
             a[::3] + 0.5 * (dtype in (np.float64, np.float32)), a[::37], a[::-20],
             np.sort(rng.integers(-500, 500, 700)).astype(dtype)]    # (steps from the last
    f = cppcodegen.compile(two_searches)                            # result of 1 to 64+)
    for v in cases:
        np.testing.assert_array_equal(f(a, b, v), two_searches(a, b, v))


def interp_default(x, xp, fp):
    return np.interp(x, xp, fp)


def interp_ends(x, xp, fp):
    return np.interp(x * 2, xp, fp, left=-1.0, right=np.inf) + 1


@pytest.mark.parametrize("fn", [interp_default, interp_ends])
def test_interp_is_a_search_and_numpys_arithmetic(fn):
    """Bit for bit: values on sample points, repeated sample points, outside on both sides,
    NaN and infinities among the values and an infinite sample value (the other end's
    formula where the first gives NaN)."""
    rng = np.random.default_rng(5)
    xp = np.sort(rng.uniform(-3, 3, 40))
    xp[10] = xp[11]
    fp = rng.normal(size=40)
    fp[20] = np.inf
    x = np.concatenate([rng.uniform(-4, 4, 300), xp, [np.nan, -np.inf, np.inf]])
    for args in [(x, xp, fp), (x.astype(np.float32), xp, fp.astype(np.float32)),
                 (x[:9].reshape(3, 3), np.arange(5), np.arange(5) * 2)]:
        with np.errstate(all="ignore"):
            expected = fn(*args)
        got = run_compiled(cppcodegen.compile(fn), *args)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    kernels = cppcodegen.explain(fn, x, xp, fp).kernels
    assert all(k.form != "extern" for k in kernels)


def test_interp_at_one_point_is_a_numpy_scalar():
    """np.interp of a Python float, a NumPy scalar or a 0-d array is a NumPy float64, as
    NumPy's is (it came back as a 0-d array)."""
    xp, fp = np.linspace(0, 1, 7), np.linspace(0, 1, 7) ** 2
    f = cppcodegen.compile(interp_default)
    for x in (0.3, np.float64(0.45), np.array(0.9), np.array([0.3])):
        got, want = f(x, xp, fp), interp_default(x, xp, fp)
        assert type(got) is type(want) and got == want


def vote_per_row(votes, n_classes):
    pred = np.zeros(votes.shape[0], dtype=np.int64)
    for i in range(votes.shape[0]):
        counts = np.bincount(votes[i], minlength=n_classes)
        pred[i] = np.argmax(counts)
    return pred


def weighted_per_row(votes, w):
    out = np.zeros(votes.shape[0])
    for i in range(votes.shape[0]):
        c = np.bincount(votes[i], weights=w[i])
        out[i] = c.max() + c.shape[0]
    return out


def test_bincount_of_unknown_values_in_a_loop():
    """``np.bincount`` of values the trace knows nothing about, in a compiled loop (kNN's
    vote per row): its length, max(minlength, max + 1), is known when the loop runs, so the
    loop stays one compiled loop (not one NumPy call per row); a value past minlength
    lengthens it as in NumPy, a negative one raises NumPy's ValueError."""
    rng = np.random.default_rng(4)
    v = rng.integers(0, 5, (300, 7))
    f = cppcodegen.compile(vote_per_row, fallback=False)
    np.testing.assert_array_equal(f(v, 5), vote_per_row(v, 5))
    assert "extern" not in str(cppcodegen.explain(vote_per_row, v, 5)).split("== loop IR")[0]
    v[3, 2] = 9
    np.testing.assert_array_equal(f(v, 5), vote_per_row(v, 5))
    v[5, 1] = -1
    with pytest.raises(ValueError, match="negative"):
        f(v, 5)
    v, w = rng.integers(0, 6, (50, 4)), rng.random((50, 4))
    np.testing.assert_allclose(cppcodegen.compile(weighted_per_row, fallback=False)(v, w),
                               weighted_per_row(v, w), rtol=1e-12)


def _right_bins(edges, x):
    return np.searchsorted(edges, x, side="right") - 1


def test_searchsorted_stays_native_with_symbolic_sizes():
    """After a call with other sizes (a build with symbolic sizes) the binary search is still
    compiled, over a sorted array of run-time length (it became NumPy's call between kernels)."""
    f = cppcodegen.compile(_right_bins, fallback=False)
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ne, nx in ((11, 50), (5, 7), (0, 3), (1, 9), (300, 1000), (300, 0)):
            e, x = np.sort(rng.random(ne)), rng.random(nx)
            k = min(nx // 3, ne)
            x[:k] = e[:k]                   # (ties: the side decides)
            got = f(e, x)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, _right_bins(e, x))


def _weighted_counts(keys, vals):
    return np.bincount(keys, weights=vals, minlength=3)


def test_bincount_of_no_values_with_weights_is_int64():
    """NumPy gives int64 zeros for weights of no values (float64 sums otherwise): a size-
    generic build guards on the length and traces the empty call on its own."""
    f = cppcodegen.compile(_weighted_counts)
    rng = np.random.default_rng(2)
    for n in (1000, 500, 0, 7):
        keys, vals = rng.integers(0, 3, n), rng.standard_normal(n)
        got, want = f(keys, vals), _weighted_counts(keys, vals)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


def knn_vote(nn, ytr, shift):
    n_classes = ytr.max() + 1 - shift
    preds = np.zeros(nn.shape[0], dtype=np.int64)
    sizes = np.zeros(nn.shape[0], dtype=np.int64)
    for i in range(nn.shape[0]):
        counts = np.bincount(nn[i], minlength=n_classes)
        preds[i] = np.argmax(counts)
        sizes[i] = counts.shape[0]
    return preds, sizes


def test_bincount_in_a_loop_with_a_traced_minlength():
    """``np.bincount(nn[i], minlength=ytr.max() + 1)`` in a loop over rows (a kNN vote): the
    length max(minlength, max + 1) when the loop runs (it was a NumPy call, which cannot run
    in a compiled loop: the loop was refused); a negative minlength is NumPy's error."""
    r = np.random.default_rng(9)
    ytr = r.integers(0, 4, 100)
    nn = ytr[r.integers(0, 100, (300, 5))]
    f = cppcodegen.compile(knn_vote)
    for shift in (0, 2, -3):        # (minlength below, at and above the labels' range)
        for got, want in zip(f(nn, ytr, shift), knn_vote(nn, ytr, shift)):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="minlength"):
        knn_vote(nn, ytr, 10)
    with pytest.raises(ValueError, match="minlength"):
        f(nn, ytr, 10)


def hist_range_args(x, lo, hi):
    return np.histogram(x, bins=50, range=(lo, hi))


def hist_data_range(x):
    return np.histogram(x, bins=37, range=(x.min(), x.max()))


def test_histogram_with_a_range_known_when_it_runs():
    """``range=(lo, hi)`` of arguments or of the data's min and max: native for float64
    (NumPy's edges and uniform-bin arithmetic, its checks raised when the program runs);
    float32 data with a range of Python floats (edges computed in float64) stays NumPy's."""
    x = values(3000)
    x = x[np.isfinite(x)]
    f, g = cppcodegen.compile(hist_range_args), cppcodegen.compile(hist_data_range)
    for args in [(x, -2.0, 2.5), (x, 0.3, 0.3), (x[:0], 1.0, 2.0), (x, -1, 3),
                 (x.astype(np.float32), -1.0, 1.0), (x, EDGES[2], EDGES[9])]:
        for got, want in zip(f(*args), hist_range_args(*args)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    for y in (x, x.astype(np.float32), x[:1]):
        for got, want in zip(g(y), hist_data_range(y)):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="max must be larger than min"):
        f(x, 3.0, 1.0)
    with pytest.raises(ValueError, match="not finite"):
        f(x, 0.0, np.inf)
    assert all(k.form != "extern" for k in cppcodegen.explain(hist_range_args, x, -2.0, 2.5).kernels)


def hist_int_data(x):
    counts, edges = np.histogram(x, bins=7, range=(x.min(), x.max()))
    fixed = np.histogram(x, bins=5, range=(-3, 40))[0]
    floaty = np.histogram(x, bins=4, range=(-2.5, 17.25))
    return counts, edges, fixed, floaty[0], floaty[1]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32])
@pytest.mark.parametrize("spread", [0, 1, 60])
def test_histograms_of_small_int_data_compile(dtype, spread):
    """Ints of 32 bits or fewer as float64 (exact: NumPy's differences and compares of them
    are too): a range from the data (equal ends: NumPy's -0.5/+0.5), constant int and float
    ranges, values on edges and outside."""
    x = (np.random.default_rng(spread).integers(0, spread + 1, 3001) + 3).astype(dtype)
    f = cppcodegen.compile(hist_int_data, options={"fallback": False})
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (no NumPy call between kernels)
        got = f(x)
    for g, w in zip(got, hist_int_data(x)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
