"""Boolean-mask reads kept lazy (frontend/selection.py): reductions of ``x[mask]``,
elementwise work on it, ``x[m] op= v`` and ``len(x[m])`` compile without the selected count,
so one build serves every mask (no NumPy call between kernels, no speculated count)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy

R = np.random.default_rng(5)


def pos_sum(x):
    return x[x > 0].sum()


def pair_stats(x, y):
    m = (x > 0.2) & (y < 0.5)
    return (x[m] - y[m]).mean(), np.sqrt(x[m] ** 2 + 1).max(initial=0.0), x[m].any(), \
        x[m].all(), np.prod(1.0 + 0.01 * y[m])


def clip_in_place(x):
    x = x.copy()
    x[x < 0] *= 2.0
    x[x > 1] = x[x > 1] - 1
    return x


def row_select(a):
    rows = a[:, 0] > 0
    return a[rows].sum(axis=0), a[rows].mean(axis=0), a[rows].sum(), a[rows].mean()


def float32_mean(x):
    return x[x > 0].astype(np.float32).mean(), x[x > 0].mean()


def int_counts(a, b):
    m = b != 0
    return (a[m] // b[m]).sum(), (a[m] % b[m]).sum(), len(a[m])


def mean_of_count(x):
    y = x[np.isfinite(x)]
    return y.sum() / len(y)


def centroid_update(C, sums, cnt):
    C = C.copy()
    nz = cnt > 0
    C[nz] = sums[nz] / cnt[nz][:, None]     # selections of one mask, broadcast per row
    return C


def weighted_rows(a, w):
    m = a[:, 0] > 0
    a = a.copy()
    a[m] = a[m] * w + a[m][:, 1:2]          # a row vector and a column of the selection
    return a, (a[m][:, 0] * 2).sum(), a[m][:, None, 2].sum()


X = R.standard_normal(101)
CASES = [
    (centroid_update, (np.zeros((5, 3)), R.random((5, 3)), np.array([2, 0, 4, 1, 0]))),
    (centroid_update, (np.ones((4, 2)), R.random((4, 2)), np.zeros(4, dtype=np.int64))),
    (weighted_rows, (R.standard_normal((13, 3)), np.array([0.5, 2.0, -1.0]))),
    (pos_sum, (X,)), (pos_sum, (-np.abs(X),)),                      # no element selected
    (pair_stats, (R.random(64), R.random(64))),
    (pair_stats, (np.zeros(64), np.ones(64))),                      # empty: mean is NaN
    (clip_in_place, (R.standard_normal(40) * 2,)),
    (row_select, (R.standard_normal((17, 5)),)),
    (float32_mean, (R.standard_normal(77),)),
    (int_counts, (np.arange(40), np.array([0, 1, 2, 0, -3] * 8))),
    (mean_of_count, (np.where(R.random(50) < 0.2, np.nan, R.standard_normal(50)),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_selection_matches_numpy(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy's "Mean of empty slice"
        # (a float32 mean of the selected values sums them in another order than NumPy's
        # sum of the compacted array: an ULP apart where the data makes them differ)
        tol = 1e-6 if fn is float32_mean else 1e-12
        check_against_numpy(fn, *args, rtol=tol, atol=tol)


def test_one_build_serves_every_mask_without_numpy_steps():
    cf = cppcodegen.compile(pair_stats)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)          # no extern-call warning
        warnings.simplefilter("ignore", RuntimeWarning)
        for seed in range(4):
            r = np.random.default_rng(seed)
            x, y = r.random(64) * seed, r.random(64)
            got, want = cf(x, y), pair_stats(x, y)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12)
    assert len(cf.variants) == 1


def test_selections_of_one_mask_broadcast_per_row_without_numpy_steps():
    cf = cppcodegen.compile(centroid_update, fallback=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)          # no extern-call warning
        for seed in range(3):
            r = np.random.default_rng(seed)
            args = (r.random((6, 2)), r.random((6, 2)), r.integers(0, 3, 6))
            np.testing.assert_array_equal(cf(*args), centroid_update(*args))
    assert len(cf.variants) == 1


def mismatched_rows(a, b):
    m = a[:, 0] > 0
    return (a[m] - b[m][:, 0]).sum()        # (count, 3) - (count,): NumPy's broadcasting


def test_selections_with_other_axes_broadcast_as_numpy_does():
    a, b = R.standard_normal((9, 3)), R.standard_normal((9, 3))
    a[:, 0] = [1, -1, 1, -1, 1, 1, -1, -1, -1]      # 4 rows: (4, 3) - (4,) does not broadcast
    with pytest.raises(ValueError):
        mismatched_rows(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            cppcodegen.compile(mismatched_rows, fallback=False)(a, b)
        a[:, 0] = [1, -1, 1, -1, 1, -1, -1, -1, -1]     # 3 rows: (3, 3) - (3,) broadcasts
        np.testing.assert_allclose(cppcodegen.compile(mismatched_rows, fallback=False)(a, b),
                                   mismatched_rows(a, b), rtol=1e-12)


def test_in_place_on_a_selection_keeps_numpy_casting():
    def f(a):
        a = a.copy()
        a[a > 2] *= 1.5         # NumPy: a copy of int64 elements cannot hold float64
        return a
    with pytest.raises(TypeError):
        f(np.arange(6))
    with pytest.raises(TypeError):
        cppcodegen.compile(f)(np.arange(6))


def test_other_uses_still_run_numpy_indexing():
    """Returning x[mask] needs its values: NumPy's indexing between kernels (speculated)."""
    def f(x):
        return x[x > 0] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = R.standard_normal(20)
        np.testing.assert_array_equal(cppcodegen.compile(f)(x), f(x))


def test_a_returned_selection_serves_every_count_without_running_the_function_again():
    """x[mask] returned (nothing after it reads it): the array NumPy's indexing gives is kept
    whatever its length; no fall back to the plain function, no rebuild."""
    calls = []

    def f(x, t):
        calls.append(1)                 # counts the traces and the fallbacks (plain runs)
        y = np.sqrt(np.abs(x)) * 2.0
        return y[y > t], y.sum()

    g = cppcodegen.compile(f)
    x = R.standard_normal(500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g(x, 0.5)
    traced = len(calls)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no "gave another output shape" fallback
        for t in (1.5, 100.0, -1.0, 0.1):
            sel, total = g(x, t)
            y = np.sqrt(np.abs(x)) * 2.0
            want_sel, want_total = y[y > t], y.sum()
            np.testing.assert_array_equal(sel, want_sel)
            assert sel.dtype == np.float64 and sel.ndim == 1
            np.testing.assert_allclose(total, want_total, rtol=1e-12)
    assert len(calls) == traced


def selected_extremes(c):
    return c[c > 0].min(), c[c < 5].max(), np.max(c[c != 3])


def row_min(x, m):
    return x[m].min()


@pytest.mark.parametrize("c", [np.array([0, 3, 1, 7, 0, 2]), np.array([0.0, np.nan, 4.0, 9.0]),
                               np.arange(10, dtype=np.uint8), np.array([-1, -2, 5])], ids=str)
def test_max_min_of_a_selection_serve_every_mask(c):
    """x[m].max() / .min() without initial=: of where(m, x, lowest/highest), NaN kept as
    NumPy keeps it, and NumPy's ValueError when nothing is selected; no NumPy step."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)          # no extern-call warning
        check_against_numpy(selected_extremes, c)
    f = cppcodegen.compile(selected_extremes)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        f(np.full(c.shape, 3, c.dtype))
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum") as e:
        cppcodegen.compile(row_min)(np.ones((4, 3)), np.zeros(4, bool))
    line = row_min.__code__.co_firstlineno + 1          # the error names the user's line
    assert str(e.value).endswith(f"(at {__file__}:{line})")
    check_against_numpy(row_min, np.arange(12.0).reshape(4, 3), np.array([0, 1, 1, 0], bool))


def _count_plus_sum(x):
    y = x[x > 0.5]
    return y.sum() + y.shape[0]


def _len_and_size(x):
    y = x[x > 0.25]
    return len(y) * 1.0 + y.size + np.nonzero(x < 0.1)[0].shape[0]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fn", [_count_plus_sum, _len_and_size])
def test_count_of_a_selection_is_this_calls(fn):
    """Only the shape of a lazy selection used (its sum is a masked reduction): the NumPy
    step that gives it still runs in every call and a count other than the traced one runs
    the call as NumPy. It was dropped as unused, so the first call's count was a constant:
    a wrong result for every later mask of the same shape (found by a new user's probe)."""
    rng = np.random.default_rng(3)
    f = cppcodegen.compile(fn, fallback=False)
    for _ in range(4):
        x = rng.random(1000)
        assert f(x) == pytest.approx(fn(x), rel=1e-12)


def kmeans_guarded(X, centers, iters):
    """The textbook k-means: an empty cluster keeps its center (``shape[0] > 0``)."""
    k = centers.shape[0]
    for it in range(iters):
        d = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = np.argmin(d, axis=1)
        new = np.zeros_like(centers)
        for j in range(k):
            members = X[labels == j]
            if members.shape[0] > 0:
                new[j] = members.mean(axis=0)
            else:
                new[j] = centers[j]
        centers = new
    return centers, labels


def selection_sizes(x, t):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        sel = x[i][x[i] > t]
        if sel.size >= 2 and sel.ndim == 1:
            out[i] = sel.sum() / sel.shape[0]
    return out


def test_shape_of_a_selection_in_a_loop_is_its_count_computed_there():
    """``X[labels == j].shape[0]`` in a compiled loop is the mask's count, computed in the
    loop: no NumPy call between kernels (which would unroll the loop), one build for every
    count, an empty cluster (count 0) taking the other branch."""
    r = np.random.default_rng(3)
    X = np.concatenate([r.standard_normal((300, 3)) + 4, r.standard_normal((300, 3)) - 4])
    starts = [X[[0, 1, 300]].copy(), np.array([[4.0, 4, 4], [-4, -4, -4], [50, 50, 50]])]
    cf = cppcodegen.compile(kmeans_guarded)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)          # no NumPy step, no fallback
        for c0 in starts:                                     # the second: cluster 2 empty
            got = cf(X, c0.copy(), 6)
            want = kmeans_guarded(X, c0.copy(), 6)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(got[1], want[1])
            assert got[1].dtype == want[1].dtype
    assert len(cf.variants) == 1
    x = r.standard_normal((9, 7))
    x[2] = -5.0                                              # a row selecting nothing
    check_against_numpy(selection_sizes, x, 0.3, rtol=1e-12, atol=1e-12)


def count_in_a_branch(x, t):
    s = 0.0
    if x.sum() > t:
        m = x[x > 0]
        if m.shape[0] > 2:
            s = m.mean() * m.shape[0]
        else:
            s = -1.0
    return s


@pytest.mark.parametrize("x, t", [(R.standard_normal(20), -100.0),
                                  (np.array([-1.0, 2.0, -3.0, 5.0]), -100.0),
                                  (R.standard_normal(20), 100.0), (-np.ones(5), -100.0)])
def test_shape_of_a_selection_in_a_branch_outside_loops(x, t):
    """Outside compiled loops the shape is NumPy's indexing's (in a branch on values the
    function then runs as Python): Python's values, never a crash of the tracer."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = cppcodegen.compile(count_in_a_branch, options={"fallback": True})
        assert f(x, t) == count_in_a_branch(x, t)


def rows_with_positive_sum(A):
    keep = A.sum(axis=1) > 0
    B = A[keep]                                 # (the line the warning must name)
    return B, B.mean(axis=0)


def test_a_selection_computed_later_is_named_by_the_line_that_wrote_it():
    import inspect
    import warnings
    from cppcodegen.frontend import externs
    externs.WARNED.discard("cppcodegen.runtime.extern.advanced_index")
    A = np.random.default_rng(0).standard_normal((20, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = cppcodegen.compile(rows_with_positive_sum)(A)
    want = rows_with_positive_sum(A)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    lines, first = inspect.getsourcelines(rows_with_positive_sum)
    line = first + next(k for k, s in enumerate(lines) if "A[keep]" in s)
    messages = [str(w.message) for w in caught if "index array" in str(w.message)]
    assert messages and all(m.endswith(f"test_selection.py:{line})") for m in messages), messages


def rotate_nearest(img, angle):
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    c, s = np.cos(angle), np.sin(angle)
    xi = np.round(c * (xx - (w - 1) / 2) + s * (yy - (h - 1) / 2) + (w - 1) / 2).astype(np.intp)
    yi = np.round(-s * (xx - (w - 1) / 2) + c * (yy - (h - 1) / 2) + (h - 1) / 2).astype(np.intp)
    valid = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    out = np.zeros_like(img)
    out[valid] = img[yi[valid], xi[valid]]
    return out


def lookup_selected(lut, idx, keep):
    return lut[idx[keep]].sum(axis=0), lut[idx[keep]] * 2


def lookup_unchecked(lut, idx):
    ok = idx < 4
    return lut[idx[ok]] + 1


@pytest.mark.parametrize("shape", [(23, 31), (17, 12, 3), (1, 1), (0, 4)])
@pytest.mark.parametrize("angle", [0.0, 0.4, 2.5])
def test_a_gather_by_selected_indices_is_a_selection_of_a_guarded_gather(shape, angle):
    """``img[yi[valid], xi[valid]]`` (indices selected by one mask) stored by
    ``out[valid] = ...``: the gather loaded only where the mask holds, kept lazy (no NumPy
    indexing step); the indices elsewhere (out of range) are never read or checked."""
    img = np.random.default_rng(1).random(shape).astype(np.float32)
    f = cppcodegen.compile(rotate_nearest)
    got, want = f(img, angle), rotate_nearest(img, angle)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    ex = cppcodegen.explain(rotate_nearest, img, angle)
    assert "advanced_index" not in str(ex)


def test_selected_indices_out_of_range_raise_numpys_index_error():
    rng = np.random.default_rng(2)
    lut = rng.random((6, 2))
    idx = rng.integers(-6, 6, 40)
    keep = rng.random(40) < 0.5
    for g, w in zip(cppcodegen.compile(lookup_selected)(lut, idx, keep),
                    lookup_selected(lut, idx, keep)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    idx[np.flatnonzero(keep)[0]] = 6            # selected and out of range: NumPy raises
    with pytest.raises(IndexError):
        lookup_selected(lut, idx, keep)
    with pytest.raises(IndexError, match="out of bounds"):
        cppcodegen.compile(lookup_selected)(lut, idx, keep)
    idx[~keep] = 100                            # only unselected ones out of range: no error
    idx[keep] = 1
    for g, w in zip(cppcodegen.compile(lookup_selected)(lut, idx, keep),
                    lookup_selected(lut, idx, keep)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    lut4 = rng.random(4)
    big = np.array([0, 9, 3, -4, 12])           # selected ones in range, others not
    np.testing.assert_array_equal(cppcodegen.compile(lookup_unchecked)(lut4, big),
                                  lookup_unchecked(lut4, big))
