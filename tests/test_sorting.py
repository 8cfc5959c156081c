"""np.sort and np.median along a short axis compile to a sorting network (frontend/sorting.py):
NumPy's values (NaN last, the median NaN where a slice has one, integers' medians float64),
fused into one loop, with no NumPy call between kernels. Longer axes: medians and quantiles
are selections (backend/sorts.py, NumPy's partition and interpolation: the same bits); inside
compiled loops np.sort and np.argsort (stable) are compiled sorts too, so a rolling median
or a loop of argsorts stays one compiled loop."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from cppcodegen.ir.loopir import nested
from helpers import check_against_numpy

RNG = np.random.default_rng(12)


def _native(fn, *args):
    kernels = nested(cppcodegen.explain(cppcodegen.compile(fn), *args).kernels)
    assert not [k.name for k in kernels if k.form == "extern"]


def median3(x):
    st = np.stack([x[:-2], x[1:-1], x[2:]])
    out = x.copy()
    out[1:-1] = np.sort(st, axis=0)[1]
    return out


def median_filter_3x3(img):
    h, w = img.shape
    shifted = [img[i:h - 2 + i, j:w - 2 + j] for i in range(3) for j in range(3)]
    return np.median(np.stack(shifted), axis=0)


def sorts(m):
    return np.sort(m, axis=0), np.sort(m), np.sort(m[:, :5], axis=1), np.median(m, axis=0)


def even_median(m):
    return np.median(m[:4], axis=0), np.median(m[0, :6])


def _with_nans(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    if x.dtype.kind == "f":
        x[RNG.random(shape) < 0.1] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
def test_short_axis_sorts_and_medians_match_numpy(dtype):
    x = _with_nans(40, dtype) if dtype[0] == "f" else RNG.integers(0, 200, 40).astype(dtype)
    m = _with_nans((5, 7), dtype) if dtype[0] == "f" else RNG.integers(0, 200, (5, 7)).astype(dtype)
    img = _with_nans((20, 17), dtype) if dtype[0] == "f" else \
        RNG.integers(0, 200, (20, 17)).astype(dtype)
    for fn, args in ((median3, (x,)), (median_filter_3x3, (img,)), (sorts, (m,)),
                     (even_median, (m,))):
        check_against_numpy(fn, *args, ulp=0)
        _native(fn, *args)


def long_sort(x):
    return np.sort(x)


def test_a_long_axis_is_numpys_sort():
    x = RNG.standard_normal(100)
    check_against_numpy(long_sort, x, ulp=0)
    kernels = nested(cppcodegen.explain(cppcodegen.compile(long_sort), x).kernels)
    assert [k.form for k in kernels] == ["extern"]


def whole_array(m):
    return np.sort(m, axis=None), np.median(m), np.sort(m[:2, :3], axis=None), np.median(m[:3, :3])


def test_axis_none_sorts_the_flattened_array():
    m = RNG.standard_normal((7, 9))
    check_against_numpy(whole_array, m, ulp=0)


def medians_and_quantiles(m):
    return (np.median(m), np.median(m, axis=0), np.median(m, axis=-1), np.percentile(m, 90),
            np.percentile(m, [0, 25, 50, 99.5, 100], axis=1), np.quantile(m, 0.3, axis=0),
            np.quantile(m, np.array([0.1, 0.75])), np.quantile(m, 1), np.quantile(m, [0, 1]))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16"])
@pytest.mark.parametrize("shape", [(1, 1), (13, 1), (40, 33), (2, 1000)])
def test_medians_and_quantiles_are_selections(dtype, shape):
    m = _with_nans(shape, dtype) if dtype[0] == "f" else \
        RNG.integers(-300, 300, shape).astype(dtype)
    check_against_numpy(medians_and_quantiles, m, ulp=0)
    if dtype[0] == "f":         # (a slice without NaN too)
        check_against_numpy(medians_and_quantiles, RNG.standard_normal(shape).astype(dtype),
                            ulp=0)
    _native(medians_and_quantiles, m)


def rolling_median(x, w):
    out = np.empty(x.shape[0] - w + 1)
    for i in range(x.shape[0] - w + 1):
        out[i] = np.median(x[i:i + w])
    return out


def rolling_spread(x, w):
    out = np.zeros(x.shape[0] - w + 1, dtype=x.dtype)
    for i in range(out.shape[0]):
        win = x[i:i + w]
        out[i] = np.percentile(win, 90) - np.quantile(win, 0.25)
    return out


def sorted_rows(m, k):
    acc = np.zeros(m.shape[1])
    for i in range(k):
        acc += np.sort(m[i]) * (i + 1)
    return acc


def ranks(m, k):
    acc = np.zeros(m.shape[0], dtype=np.int64)
    for i in range(k):
        acc += np.argsort(m[:, i], kind="stable") * (i + 1)
    return acc


def nearest(train, queries, k):
    votes = np.zeros(queries.shape[0], dtype=np.int64)
    for i in range(queries.shape[0]):
        d = np.sum((train - queries[i]) ** 2, axis=1)
        votes[i] = np.argsort(d)[:k].sum()
    return votes


def expanding_median(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.median(x[:i])       # a length that changes with i (the first is empty)
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # NumPy's: the empty slice
@pytest.mark.parametrize("fn,args", [
    (expanding_median, (_with_nans(60, "float64"),)), (expanding_median, (RNG.integers(0, 9, 41),)),
    (rolling_median, (_with_nans(300, "float64"), 25)), (rolling_median, (_with_nans(300, "float64"), 8)),
    (rolling_median, (RNG.integers(0, 9, 200), 8)), (rolling_median, (RNG.integers(0, 9, 200), 1)),
    (rolling_spread, (RNG.standard_normal(200), 16)), (rolling_spread, (_with_nans(200, "float32"), 9)),
    (sorted_rows, (_with_nans((30, 50), "float64"), 9)), (sorted_rows, (RNG.integers(0, 5, (30, 50)), 9)),
    (sorted_rows, (RNG.random((30, 50)) < 0.5, 9)),
    (ranks, (RNG.integers(0, 4, (40, 30)), 11)), (ranks, (_with_nans((40, 30), "float32"), 11)),
    (nearest, (RNG.standard_normal((60, 3)), RNG.standard_normal((25, 3)), 5)),
])
def test_sorts_inside_compiled_loops(fn, args):
    check_against_numpy(fn, *args, ulp=0)
    f = cppcodegen.compile(fn)
    ex = cppcodegen.explain(f, *args)
    kernels = nested(ex.kernels)
    assert not [k.name for k in kernels if k.form == "extern"]
    assert any(k.form == "control" for k in ex.kernels)     # the loop is a compiled loop
    if fn is not rolling_median or args[1] > 12:            # (else a sorting network)
        assert "sort" in [k.form for k in kernels]


def nearest_ids(d, k):
    out = np.empty((d.shape[0], k), dtype=np.int64)
    for i in range(d.shape[0]):
        out[i] = np.argsort(d[i])[:k]       # NumPy's default kind
    return out


@pytest.mark.parametrize("d", [
    RNG.integers(0, 5, (4, 64)).astype(np.float64),             # ties
    np.where(RNG.random((3, 40)) < 0.2, np.nan, RNG.random((3, 40))),   # NaNs: tied last
    np.array([[0.0, -0.0, 1.0, 2.0] * 9]),                       # signed zeros compare equal
])
def test_argsort_of_tied_values_in_a_loop_gives_numpys_order(d):
    """A compiled (stable) argsort of equal values need not give NumPy's default order: the
    call runs as Python (with a warning, once per function)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
        got = cppcodegen.compile(nearest_ids)(d, 8)
    np.testing.assert_array_equal(got, nearest_ids(d, 8))


def test_a_tied_argsort_warns_and_names_the_fix():
    def tied(d, k):                 # (a function of its own: its first warning)
        return nearest_ids(d, k)
    d = RNG.integers(0, 3, (2, 30)).astype(np.float64)
    with pytest.warns(cppcodegen.FallbackWarning, match="np.argsort met equal values.*kind="):
        np.testing.assert_array_equal(cppcodegen.compile(tied)(d, 8), nearest_ids(d, 8))


def test_argsort_without_ties_in_a_loop_stays_compiled():
    import warnings
    f = cppcodegen.compile(nearest_ids)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(3):
            d = np.random.default_rng(seed).random((5, 50))
            np.testing.assert_array_equal(f(d, 6), nearest_ids(d, 6))
    assert any(k.form == "control" for k in cppcodegen.explain(f, d, 6).kernels)


def test_sorts_in_loops_match_the_reference_interpreter():
    x = _with_nans(120, "float64")
    report = cppcodegen.check(rolling_spread, x, 10)
    assert report.ok, report
    report = cppcodegen.check(ranks, RNG.integers(0, 4, (20, 6)), 5)
    assert report.ok, report


def medians(m):
    return np.median(m), np.median(m, axis=0), np.median(m[1:], axis=1)


def test_symbolic_sizes_keep_selections():
    f = cppcodegen.compile(medians, dynamic=True)
    for shape in ((9, 12), (14, 7), (16, 20)):
        m = RNG.standard_normal(shape)
        for g, e in zip(f(m), medians(m)):
            np.testing.assert_array_equal(g, e)
    kernels = nested(cppcodegen.explain(f, m).kernels)
    assert "sort" in [k.form for k in kernels] and "extern" not in [k.form for k in kernels]


def methods_in_a_loop(m, k):
    acc = np.empty(m.shape[1])
    acc.fill(0.0)                       # ndarray.fill: in place
    for i in range(k):
        row = m[i].copy()
        row.sort()                      # ndarray.sort: in place, a compiled sort in the loop
        acc += row * (i + 1)
    spread = m.copy()
    spread.sort(axis=0)
    return acc, m[0].argsort(kind="stable"), spread[-1] - spread[0]


def test_sort_fill_and_argsort_methods():
    m = RNG.standard_normal((9, 30))
    check_against_numpy(methods_in_a_loop, m, 6, ulp=0)


def bootstrap_interval(x, idx):
    means = np.empty(idx.shape[0])
    for b in range(idx.shape[0]):
        s = 0.0
        for j in range(idx.shape[1]):
            s += x[idx[b, j]]
        means[b] = s / idx.shape[1]
    means = np.sort(means)
    B = idx.shape[0]
    return means[int(0.025 * (B - 1))], means[int(0.975 * (B - 1))]


def test_a_sort_after_a_loop_does_not_run_the_loop_while_tracing(monkeypatch):
    """A NumPy call between kernels whose output shape follows from its inputs' (np.sort)
    learns it on stand-ins: the trace so far was run with NumPy first, its loop of 10^5
    trips in Python (7 s of a bootstrap's first call; found by a new user's probe)."""
    from cppcodegen.checking import reference
    calls = []
    real = reference.evaluate_node

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(reference, "evaluate_node", counting)
    x = RNG.normal(size=200)
    idx = RNG.integers(0, 200, size=(300, 200))
    got = cppcodegen.compile(bootstrap_interval, fallback=False)(x, idx)
    assert got == bootstrap_interval(x, idx)
    assert len(calls) < 1000, len(calls)


def stretch(img, lo_pct, hi_pct):
    lo, hi = np.percentile(img, [lo_pct, hi_pct])
    out = (img.astype(np.float32) - lo) / max(hi - lo, 1e-6) * 255
    return np.clip(out, 0, 255).astype(np.uint8), np.quantile(img, (lo_pct / 100, 0.5))


def test_percentiles_given_as_a_list_of_float_arguments_are_numpys():
    """``np.percentile(img, [lo, hi])`` with float arguments (run-time values): NumPy's
    call with this call's numbers (one build for every value)."""
    import warnings
    img = np.random.default_rng(5).integers(0, 256, (30, 41), dtype=np.uint8)
    f = cppcodegen.compile(stretch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lo, hi in ((2.0, 98.0), (10.5, 60.0)):
            for g, w in zip(f(img, lo, hi), stretch(img, lo, hi)):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=1e-12)
    assert len(f.variants) == 1
