"""Arrays made inside the compiled function (frontend/creation.py, issue 16 part 1):
np.zeros/ones/empty/full/eye/identity/arange/linspace/array, filled in place the way
published NumPy code fills them, compared with NumPy (static, dynamic and in loops)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import DataDependentError

from helpers import assert_matches_numpy, check_against_numpy, run_numpy

RNG = np.random.default_rng(16)
U = RNG.standard_normal(40)
M = RNG.standard_normal((12, 9))
M32 = M.astype(np.float32)
# sums and means are blocked, not NumPy's pairwise order: a few ULPs of the sum apart
SUMS = dict(rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------- programs

def tridiagonal_sweep(u):
    """The forward sweep of the Thomas algorithm, CFD-tutorial style: ``np.empty`` made
    from the argument's shape and dtype, filled row by row from the previous row."""
    n = u.shape[0]
    p = np.empty(u.shape, dtype=u.dtype)
    p[0] = 0.5
    for j in range(1, n):
        p[j] = -0.25 / (2.0 * p[j - 1] + 1.0 + u[j] ** 2)
    return p


def column_sweep(a):
    n, m = a.shape
    p = np.empty(a.shape, dtype=a.dtype)
    p[:, 0] = a[:, 0]
    for j in range(1, m):
        p[1:n - 1, j] = -0.5 / (a[1:n - 1, j] * p[1:n - 1, j - 1] + 3.0)
        p[0, j] = 0.0
        p[n - 1, j] = a[n - 1, j]
    return p


def row_means(x):
    npt = x.shape[0]
    res = np.zeros(npt)
    for i in range(npt):
        res[i] = x[i].mean()
    return res


def histogram_counts(x):
    counts = np.zeros(x.shape[1], dtype=np.int64)
    for i in range(x.shape[0]):
        counts += x[i] > 0
    return counts


def stencil_into_zeros(u):
    out = np.zeros_like(u)
    n = u.shape[0]
    new = np.zeros(n)
    new[1:-1] = u[:-2] - 2 * u[1:-1] + u[2:]
    out[:] = new
    return out, new


def identity_plus(x):
    n = x.shape[0]
    return x @ np.eye(n) + 2 * np.identity(n, dtype=np.float32) + np.eye(n, x.shape[1], k=1)


def eye_offsets(x):
    n, m = x.shape
    return (np.eye(n, m, k=-2, dtype=np.int32), np.eye(m, n, 3, dtype=bool),
            np.eye(n, dtype=x.dtype)[:, :m] * x)


def full_and_ones(x):
    a = np.full(x.shape, 2.5)
    b = np.full((x.shape[0], 1), x.max())        # a traced fill value
    c = np.ones((2, x.shape[1]), dtype=np.int16)
    d = np.full(x.shape[1], np.float32(1.5))
    e = np.full((x.shape[0], 3), [1, 2, 3])       # a fill broadcast along rows
    return a * x + b, c, d, e


def zeros_dtypes(x):
    n = x.shape[0]
    return (np.zeros(n, dtype=np.float32), np.zeros((n, 2), dtype=int), np.ones(n, bool),
            np.empty((0, n)), np.zeros(()), np.zeros((n,), order="F"), np.zeros(n, "u1"))


def linspace_traced(x):
    grid = np.linspace(x.min(), x.max(), 7)
    coarse, step = np.linspace(0.0, x.max(), 4, endpoint=False, retstep=True)
    return grid, coarse, step, np.linspace(0, 1, 5)


def arange_in_loop(x):
    total = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        total[i] = (np.arange(i + 1) * x[i]).sum()
    return total


def array_of_scalars(x):
    stats = np.array([x.sum(), x.max(), 1.0])
    pair = np.array([[x[0, 0], x[1, 1]], [2.0, x[2, 2]]], dtype=np.float32)
    return stats, pair, np.asarray(x) + 1


def contiguous_copies(x):
    strided = np.ascontiguousarray(x[:, ::2])       # a copy of a strided view
    return strided * 2, np.ascontiguousarray(x, dtype=np.float32), \
        np.ascontiguousarray(x.sum())                 # a 0-d value: one axis, as NumPy's


WEIGHTS = np.array([0.5, 1.5, 2.5, 3.5, 4.5])


def module_table_at_argmax(x):
    """A module's array indexed by a traced position computed from a slice."""
    return WEIGHTS[np.argmax(x[1:6, 0])] * x


def zeros_filled_by_slices(x):
    n = x.shape[0]
    out = np.zeros((n, 3))
    out[:, 0] = x.sum(axis=1)
    out[:, 1] = x.max(axis=1)
    out[:, 2] = x[:, 0]
    return out


def buffers_in_while(x):
    v = np.ones(x.shape[1]) / x.shape[1]
    it = 0
    while it < 5:
        w = np.zeros(x.shape[1])
        w[:] = x.T @ (x @ v)
        v = w / np.sqrt((w * w).sum())
        it += 1
    return v


# --------------------------------------------------------------------------- tests

@pytest.mark.parametrize("fn, args", [
    (tridiagonal_sweep, (U,)), (column_sweep, (M,)), (row_means, (M,)),
    (histogram_counts, (M,)), (stencil_into_zeros, (U,)), (identity_plus, (M[:9],)),
    (eye_offsets, (M,)), (full_and_ones, (M,)), (full_and_ones, (M32,)),
    (zeros_dtypes, (M,)), (linspace_traced, (M,)), (linspace_traced, (M32,)),
    (arange_in_loop, (U,)), (array_of_scalars, (M,)), (zeros_filled_by_slices, (M,)),
    (buffers_in_while, (M,)), (contiguous_copies, (M,)), (module_table_at_argmax, (M,)),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_matches_numpy(fn, args):
    check_against_numpy(fn, *args, **SUMS)


@pytest.mark.parametrize("fn, sizes", [
    (tridiagonal_sweep, (30, 57)), (row_means, ((7, 3), (11, 5))),
    (zeros_filled_by_slices, ((6, 4), (13, 2))), (eye_offsets, ((8, 6), (10, 7))),
    (linspace_traced, ((5, 5), (9, 3))),
])
def test_dynamic_sizes(fn, sizes):
    """One variant with symbolic sizes: constructors take their shapes from the symbols."""
    c = cppcodegen.compile(fn, dynamic=True)
    for k, size in enumerate(sizes):
        x = np.random.default_rng(k).standard_normal(size)
        assert_matches_numpy(c(x), run_numpy(fn, x), **SUMS)


def test_filled_zeros_is_one_buffer():
    """An np.zeros filled by slices is one buffer of the program, not a copy per write."""
    c = cppcodegen.compile(zeros_filled_by_slices)
    text = str(c.explain(M))
    loop_ir = text.split("== loop IR ==")[1].split("== kernels")[0]
    buffers = [ln for ln in loop_ir.splitlines() if ln.startswith("buffer ")]
    assert len([b for b in buffers if "float64[12, 3]" in b]) == 1, loop_ir


def test_update_through_contiguous_copy_of_view_is_refused():
    """NumPy's np.ascontiguousarray copies a view only when it is not contiguous: an update
    through its result might or might not reach the viewed array, so it is refused."""
    def update_it(x):
        y = np.ascontiguousarray(x[:, 1:])
        y[0] = 5.0
        return y
    with pytest.raises(cppcodegen.TraceError, match="ascontiguousarray"):
        cppcodegen.compile(update_it)(M.copy())


def test_size_from_random_values_is_a_clear_error():
    """A size from an array's value is this call's, checked (tests/test_value_sizes.py);
    from values drawn at random it is unknown until the program runs: refused."""
    def f(x):
        return np.zeros(int(np.random.random() * 4)) + x.sum()
    with pytest.raises(DataDependentError, match=r"np.zeros.*at random.*test_creation.py"):
        cppcodegen.compile(f, fallback=False)(U)


def test_size_from_integer_argument_is_read_at_each_call():
    """``np.zeros(n)`` with a NumPy int argument: one build for every n (its value is a size
    read from the argument), a negative n raises NumPy's error."""
    def f(x, n):
        out = np.zeros(n)
        out[: n // 2] = x[: n // 2]
        return out + x.sum()
    cf = cppcodegen.compile(f)
    for n in (4, 0, 9, 1, 30):
        got, want = cf(U, np.int64(n)), f(U, np.int64(n))
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(cf.variants) <= 2, cf.recompile_reasons     # (n = 0 and 1 may be their own)
    with pytest.raises(ValueError, match="negative dimensions"):
        cf(U, np.int64(-3))


def test_bad_arguments_raise_as_numpy():
    def negative(x):
        return np.zeros(x.shape[0] - 50) + 1
    with pytest.raises(ValueError, match="negative dimensions"):
        cppcodegen.compile(negative)(U)

    def bad_order(x):
        return np.zeros(3, order="Q") + x.sum()
    with pytest.raises(ValueError, match="order must be one of"):
        cppcodegen.compile(bad_order)(U)


def test_numpy_internals_and_other_threads_get_numpy_arrays():
    """While a trace runs, only the user's calls on the tracing thread are traced."""
    seen = {}

    def other_thread():
        seen["thread"] = type(np.zeros(3))

    def f(x):
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        seen["internal"] = np.histogram(U, bins=4)[0]     # calls np.zeros inside NumPy
        return x + np.zeros(x.shape)
    got = cppcodegen.compile(f)(U)
    np.testing.assert_array_equal(got, U)
    assert seen["thread"] is np.ndarray
    assert type(seen["internal"]) is np.ndarray
    np.testing.assert_array_equal(seen["internal"], np.histogram(U, bins=4)[0])
    assert type(np.zeros(2)) is np.ndarray


def test_constructors_restored_after_failed_trace():
    original = np.zeros

    def f(x):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        cppcodegen.compile(f)(U)
    assert np.zeros is original and np.arange.__module__ == "numpy"


def test_random_draws_of_other_threads_stay_numpys():
    """np.random's module functions are replaced like the constructors: for the user's
    calls on the tracing thread only."""
    seen = {}

    def other_thread():
        seen["draw"] = np.random.normal(size=3)

    def f(x):
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        return x + np.random.normal(size=x.shape)
    got = cppcodegen.compile(f)(U)
    assert type(seen["draw"]) is np.ndarray and seen["draw"].shape == (3,)
    assert got.shape == U.shape and not np.array_equal(got, U)


def test_plain_trace_replaces_constructors_too():
    """The tracer itself (the one Dask uses, without loop capture) traces np.zeros."""
    from cppcodegen.frontend.signature import classify
    from cppcodegen.frontend.trace import trace

    def f(x):
        out = np.zeros(x.shape)
        out[1:] = x[:-1]
        return out
    graph = trace(f, classify((U,)), (U,))
    assert any(n.op == "setitem" for n in graph.nodes)


def linspace_of_size(x):
    t, step = np.linspace(-1.0, 2.5, x.shape[0], retstep=True)
    u = np.linspace(0, 1, x.shape[0], endpoint=False)
    v = np.linspace(3, 9, x.shape[0] + 1, dtype=np.int64)
    return x * t + u, step, v


def arange_of_size(x):
    return (x * np.arange(1, x.size + 1, dtype=np.float64), np.arange(x.size, dtype=np.float32),
            np.arange(2, x.size * 2, 3, dtype=np.int32), np.arange(x.shape[0] - 1, -1, -1, dtype=float),
            np.arange(x.size, dtype=np.complex128) * 1j)


@pytest.mark.parametrize("fn", [linspace_of_size, arange_of_size])
def test_linspace_and_arange_with_dtype_follow_the_size_when_it_changes(fn):
    """The second size makes the sizes symbolic (automatic dynamic shapes): np.linspace of
    a symbolic count and np.arange of symbolic bounds with dtype= compile (were refused)."""
    f = cppcodegen.compile(fn)
    for n in (10, 11, 12, 2, 1, 3, 0):
        x = np.random.default_rng(n).random(n)
        for got, want in zip(f(x), fn(x)):
            assert np.shape(got) == np.shape(want)
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-300)
    assert any(r.dynamic for r in f.recompile_reasons)


def test_first_store_into_empty_writes_only_its_region():
    """``out = np.empty_like(x); out[0] = x[0]`` before a loop that fills the rest: the
    buffer starts as it is and only out[0] is stored (it was a pass over the whole array
    writing zeros around it); the result is Python's."""
    import cppcodegen
    from test_control_flow import ema
    x = np.random.default_rng(8).random(5000)
    compiled = cppcodegen.compile(ema, fallback=False)
    np.testing.assert_allclose(compiled(x, 0.1), ema(x, 0.1), rtol=1e-13)
    text = str(cppcodegen.explain(compiled, x, 0.1))
    assert "pointwise over [5000]" not in text, text[:3000]


def _kernel_offsets(s):
    r = int(s)
    return np.arange(-r, r + 1)


def _symmetric_range(n):
    return np.arange(-n, n + 1) * 2


def test_arange_bounds_may_be_negative():
    """np.arange's start is not a size: ``np.arange(-r, r + 1)`` with ``r = int(s)`` of a
    float argument (a Gaussian kernel's offsets) or with an int argument ``n``."""
    got = cppcodegen.compile(_kernel_offsets)(3.0)
    np.testing.assert_array_equal(got, _kernel_offsets(3.0))
    f = cppcodegen.compile(_symmetric_range)
    for n in (3, 0, 5, -2):
        np.testing.assert_array_equal(f(n), _symmetric_range(n))


def time_axis(T, dt):
    return np.arange(0, T, dt)


def float_range(a, b, step):
    return np.arange(a, b, step) * 2.0


def float32_range(a, b, step):
    return np.arange(a, b, step, dtype=np.float32)


def test_arange_of_float_arguments_is_numpys():
    """``np.arange(0, T, dt)`` of float arguments: NumPy's count ``ceil((stop - start) /
    step)`` and values (the second ``start + step``, the others ``start + i * delta``); a
    call with another count gets a variant of its own; NaN or infinite counts run as Python,
    which raises NumPy's error."""
    import warnings
    t = cppcodegen.compile(time_axis, fallback=False)
    r = cppcodegen.compile(float_range, fallback=False)
    for T, dt in ((1.0, 0.25), (1.0, 0.1), (0.3, 0.1), (2.5, 0.25), (-1.0, 0.5), (1e-3, 1e-4)):
        got, want = t(T, dt), time_axis(T, dt)
        assert got.dtype == want.dtype and got.shape == want.shape, (T, dt)
        np.testing.assert_array_equal(got, want)
    for a, b, step in ((0.5, 4.0, 1.0), (-0.0, 2.0, 0.5), (3.0, -1.0, -0.7), (0.1, 0.9, 0.1),
                       (5.0, 5.0, 1.0)):
        got, want = r(a, b, step), float_range(a, b, step)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
    r32 = cppcodegen.compile(float32_range, fallback=False)
    for a, b, step in ((1.0, 0.0, -0.1), (-3.3, 2.2, 0.7), (1.0, 2.0, np.inf)):
        got, want = r32(a, b, step), float32_range(a, b, step)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)    # (float32 arithmetic, as NumPy fills it)
    np.testing.assert_array_equal(r(1.0, 2.0, np.inf), float_range(1.0, 2.0, np.inf))  # [2.]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bad in ((0.0, 1.0, 0.0), (0.0, np.nan, 1.0), (0.0, np.inf, 1.0)):
            with pytest.raises((ValueError, ZeroDivisionError, OverflowError)) as e:
                float_range(*bad)
            with pytest.raises(e.type):
                r(*bad)


def mgrid_rays(s):
    ys, xs = np.mgrid[0:3, 0:4]
    d = xs / 3
    d /= s
    return d, ys


def indices_vignette(img):
    yy, xx = np.indices(img.shape)
    r = np.sqrt((yy - img.shape[0] / 2) ** 2 + (xx - img.shape[1] / 2) ** 2)
    r /= r.max()
    return img * (1 - r), np.indices(img.shape, sparse=True)[1], np.indices((2, 3), np.int32)


def ogrid_updated(img):
    y, x = np.ogrid[0:img.shape[0], 0:img.shape[1]]
    x = x * 1.0
    x += img[0, 0]
    y += 1
    return img + y + x


def mgrid_float_steps(n):
    a = np.mgrid[-1:1:5j, 0:2:0.5]
    a *= n
    return a, np.mgrid[0:4], np.ogrid[1:2:3j]


@pytest.mark.parametrize("fn, args", [
    (mgrid_rays, (np.array([2.0, 3.0, 4.0, 5.0]),)),
    (indices_vignette, (np.random.default_rng(3).random((30, 41)),)),
    (ogrid_updated, (np.random.default_rng(4).random((6, 5)),)),
    (mgrid_float_steps, (2.5,)),
])
def test_index_grids_are_arrays_made_in_the_function(fn, args):
    """np.mgrid / np.ogrid / np.indices give arrays the function may update in place with
    traced values (``dx /= n``), as NumPy's are its own."""
    check_against_numpy(fn, *args)
