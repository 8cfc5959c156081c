"""Assignment through integer arrays and ``np.add.at`` compiled as scatters (issue 16 part 3):
``x[idx] = v`` (a repeated index keeps NumPy's last write), ``x[:, idx] = v``,
``x[k] += 1`` with a traced ``k`` inside loops (histograms), ``np.add.at`` (every repeat
accumulates), ``x[mask] = scalar``; out-of-range indices raise NumPy's IndexError.
Compared with NumPy, arguments updated in place included."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen

from helpers import check_against_numpy

RNG = np.random.default_rng(11)
V = RNG.standard_normal(40)
M = RNG.standard_normal((6, 8))
IDX = np.array([1, 3, 3, -1, 0, 3])
VALS = np.arange(6.0) + 0.5


def put_values(x, idx, v):
    y = x.copy()
    y[idx] = v
    return y


def put_scalar_and_columns(m, jdx):
    m = m.copy()
    m[:, jdx] = -1.0
    m[[0, 2], 1] += 10
    m[jdx[:2], jdx[:2]] = m[0, 0] * 3
    return m


def add_at(x, idx, w):
    out = np.zeros_like(x)
    np.add.at(out, idx, w)
    np.subtract.at(out, idx[:2], 1.0)
    return out


def histogram_loop(data, nbins):
    counts = np.zeros(nbins, dtype=np.int64)
    for i in range(data.shape[0]):
        b = int(data[i] * nbins)
        counts[b] += 1
    return counts


def weighted_bincount(keys, w, n):
    out = np.zeros(n)
    np.add.at(out, keys, w)
    return out / max(1.0, float(w.sum()))


def clip_negative(x):
    y = x.copy()
    y[y < 0] = 0.0
    return y


def update_argument(x, idx):
    x[idx] = x[idx] * 2 + 1         # the caller's array is written


def permute_inverse(perm):
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.shape[0])
    return inv


@pytest.mark.parametrize("fn, args", [
    (put_values, (V, IDX, VALS)), (put_values, (V, IDX, 2.5)),
    (put_scalar_and_columns, (M, np.array([0, 5, -3]))), (add_at, (V, IDX, VALS)),
    (histogram_loop, (RNG.random(2000), 16)),
    (weighted_bincount, (RNG.integers(0, 9, 300), RNG.random(300), 9)),
    (clip_negative, (V,)), (clip_negative, (M,)), (permute_inverse, (RNG.permutation(50),)),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_matches_numpy(fn, args):
    check_against_numpy(fn, *args, rtol=1e-12, atol=1e-14)


def test_argument_updated_in_place():
    x = V.copy()
    expected = V.copy()
    update_argument(expected, IDX)
    cppcodegen.compile(update_argument)(x, IDX)
    np.testing.assert_array_equal(x, expected)


def test_histogram_is_a_compiled_loop():
    """The histogram's loop is one C++ loop of stores (not 2000 unrolled steps)."""
    text = str(cppcodegen.compile(histogram_loop).explain(RNG.random(2000), 16))
    cpp = text.split("== C++ ==")[1]
    assert "< 2000" in cpp and "ccg::checked_index" in cpp, cpp


def test_out_of_range_store_raises():
    """The indices are checked before any store, as NumPy does: the array is left as it was
    (an argument too)."""
    v = V.copy()
    with pytest.raises(IndexError, match="out of bounds"):
        cppcodegen.compile(put_values)(v, np.array([0, 40]), 1.0)
    np.testing.assert_array_equal(v, V)
    for idx in (np.array([3, -41]), np.array([2, 2, 40], np.uint8)):
        v = V.copy()
        with pytest.raises(IndexError, match="out of bounds"):
            cppcodegen.compile(lambda x, i: np.add.at(x, i, 1.0))(v, idx)
        np.testing.assert_array_equal(v, V)
    data = np.array([0.5, 1.0])         # int(1.0 * 4) == 4: past the last bin
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        histogram_loop(data, 4)
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        cppcodegen.compile(histogram_loop)(data, 4)


def test_value_shape_mismatch_is_numpys_error():
    with pytest.raises(ValueError, match="shape mismatch"):
        cppcodegen.compile(put_values)(V, IDX, np.ones(4))


def test_add_at_casting_like_numpy():
    def f(x, idx):
        out = np.zeros(5, dtype=np.int64)
        np.add.at(out, idx, x)
        return out
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        cppcodegen.compile(f)(V, IDX)


@pytest.mark.parametrize("backend", ["numpy", "check"])
def test_reference_backends(backend):
    for fn, args in [(put_values, (V, IDX, VALS)), (add_at, (V, IDX, VALS)),
                     (histogram_loop, (RNG.random(500), 8))]:
        np.testing.assert_allclose(cppcodegen.compile(fn, backend=backend)(*args), fn(*args),
                                   rtol=1e-12, atol=1e-14)


def swap_through(a, b, idx):
    """Two arguments updated in place, one scatter reading the other: NumPy's order."""
    b += 1.0
    a[idx] = b[idx] * 2


def repeated_read_write(x, idx):
    y = x.copy()
    y[idx] = y[idx] + 1          # a repeated index adds 1 once, as NumPy (read all, then store)
    return y


def test_in_place_orders():
    a, b = V.copy(), V[::-1].copy()
    ea, eb = a.copy(), b.copy()
    swap_through(ea, eb, IDX)
    cppcodegen.compile(swap_through)(a, b, IDX)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(b, eb)
    check_against_numpy(repeated_read_write, V, IDX)


def test_histogram_stores_in_place():
    """The loop stores into the counts (no copy of the counts per element)."""
    text = str(cppcodegen.compile(histogram_loop).explain(RNG.random(2000), 16))
    loop = text.split("== loop IR ==")[1].split("== kernels")[0]
    assert loop.count("over [16]") == 1, loop       # (the zeros; then scalar stages only)


def test_scatter_in_a_loop_body_stores_in_place():
    """Insertion sort: a[j + 1] = a[j] in a while body stores into the carried array where it
    is (one element, read before it is stored), not into a copy made every step."""
    def isort(a):
        a = a.copy()
        for i in range(1, a.shape[0]):
            key = a[i]
            j = i - 1
            while j >= 0 and a[j] > key:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = key
        return a
    x = np.random.default_rng(4).standard_normal(300)
    np.testing.assert_array_equal(cppcodegen.compile(isort)(x), np.sort(x))
    src = cppcodegen.explain(isort, x).source
    body = src.split("while (true) {")[1].split("\n      }\n")[0]
    assert "_store_at(" in body and "_copy(" not in body        # no copy of the array


def test_add_at_broadcasts_values_against_a_2d_index_as_documented():
    """np.add.at(t, idx, v) with idx of shape (2, 5) and v of shape (5,): every element of
    the broadcast v is added (NumPy 2.4's own ufunc.at gets this wrong: it adds v once, or
    uninitialized memory), so the reference broadcasts v explicitly."""
    def f(t, idx, v):
        t = t.copy()
        np.add.at(t, idx, v)
        return t

    t = np.linspace(-1.0, 1.0, 5).astype(np.float32)
    idx = np.array([[0, 1, 0, 2, 0], [0, 2, 0, 0, 1]])
    v = np.array([-5.0, 0.0, -3.0, 0.5, 0.25], np.float32)
    want = t.copy()
    np.add.at(want, idx, np.broadcast_to(v, idx.shape).copy())
    np.testing.assert_allclose(cppcodegen.compile(f)(t, idx, v), want, rtol=1e-6)


AT_CASES = [("maximum", "f8"), ("minimum", "f4"), ("fmax", "f8"), ("fmin", "f8"),
            ("divide", "f8"), ("power", "f8"), ("maximum", "i4"), ("minimum", "i8"),
            ("bitwise_or", "i8"), ("bitwise_xor", "u1"), ("bitwise_and", "i2"),
            ("floor_divide", "i8"), ("remainder", "i4"), ("fmod", "f8"), ("left_shift", "i8"),
            ("power", "i8"), ("subtract", "u2")]


@pytest.mark.parametrize("name,dt", AT_CASES)
def test_every_binary_ufunc_at_matches_numpy(name, dt):
    """np.<ufunc>.at accumulates every repeated index in order, in the ufunc's loop dtype,
    NaN (maximum/minimum propagate it, fmax/fmin drop it) and division by zero as NumPy's."""
    rng = np.random.default_rng(11)
    ufunc = getattr(np, name)
    x = (rng.standard_normal(9) * 4).astype(dt) if dt[0] == "f" else \
        rng.integers(1, 9, 9).astype(dt)
    v = (rng.standard_normal(30) * 2).astype(dt) if dt[0] == "f" else \
        rng.integers(0 if name in ("floor_divide", "remainder") else 1, 4, 30).astype(dt)
    if dt[0] == "f":
        v[3], x[2] = np.nan, np.nan
    idx = rng.integers(-9, 9, 30)

    def f(x, idx, v):
        out = x.copy()
        ufunc.at(out, idx, v)
        return out

    with np.errstate(all="ignore"):
        want = f(x, idx, v)
        got = cppcodegen.compile(f)(x, idx, v)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-7 if dt == "f4" else 1e-15, equal_nan=True)


def test_ufunc_at_of_a_complex_maximum_is_refused_clearly():
    def f(x, idx, v):
        out = x.copy()
        np.maximum.at(out, idx, v)
        return out
    z = np.ones(3, complex)
    with pytest.raises(cppcodegen.UnsupportedError, match="maximum.at"):
        cppcodegen.compile(f)(z, np.array([0, 1]), z[:2])


@pytest.mark.parametrize("shape,val,wrap", [
    ((5, 5), 0.0, False), ((7, 3), 2.5, False), ((7, 3), 2.5, True), ((3, 6), -1.0, False),
    ((4, 4, 4), 9.0, False), ((5, 5), [1.0, 2.0], False), ((6, 2), [3.0, 4.0, 5.0], True)])
def test_fill_diagonal_matches_numpy(shape, val, wrap):
    """np.fill_diagonal writes a.flat[:end:step] in place as NumPy does: values repeated
    along the diagonal, a tall matrix wrapped only with wrap=True, an n-d cube's diagonal."""
    def f(a, b):
        c = a * 2.0
        np.fill_diagonal(c, val, wrap=wrap)
        np.fill_diagonal(b, 7.0)                    # an argument, updated in place
        return c + 1.0
    a = np.arange(float(np.prod(shape))).reshape(shape)
    b0, b1 = np.zeros((3, 3)), np.zeros((3, 3))
    want = f(a, b0)
    got = cppcodegen.compile(f)(a, b1)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(b1, b0)


def test_fill_diagonal_over_symbolic_sizes():
    def f(a):
        d = a[:, None, :] - a[None, :, :]
        r2 = (d * d).sum(-1)
        np.fill_diagonal(r2, 1.0)
        return 1.0 / r2
    g = cppcodegen.compile(f, dynamic=True)
    for n in (3, 8, 1):
        a = np.random.default_rng(n).random((n, 2))
        np.testing.assert_allclose(g(a), f(a), rtol=1e-14)


def add_ints_at(x, idx):
    np.add.at(x, idx, idx)
    np.multiply.at(x, idx[:1], np.float64(2.0))
    return x


@pytest.mark.parametrize("dtype", [np.complex64, np.float32])
def test_ufunc_at_with_a_value_of_a_wider_loop_dtype(dtype):
    """np.add.at(complex64, idx, int32): NumPy's complex128 loop, stored as complex64
    (the C++ had no complex64 += complex128)."""
    idx = np.array([0, 1, 1, 3], dtype=np.int32)
    got = cppcodegen.compile(add_ints_at)(np.ones(4, dtype), idx)
    want = add_ints_at(np.ones(4, dtype), idx)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def store_each(x, idx):
    for k in range(idx.shape[0]):
        x[idx[k]] = k + 1.0


def gather_then_update(x, idx):
    y = x[idx]
    x[0] = 9.0
    return y


@pytest.mark.parametrize("fn,idx", [(store_each, [1, 5, 2]), (store_each, [7]),
                                    (store_each, [0, 2, -4, 1]), (gather_then_update, [0, 3])])
def test_an_index_error_stops_where_python_stops(fn, idx):
    """An out-of-bounds index in a compiled loop stores nothing there and runs nothing after
    it (the stores before it stay, as in Python); a failed gather stops the statements
    after it too."""
    x1, x2 = np.zeros(3), np.zeros(3)
    with pytest.raises(IndexError):
        fn(x1, np.array(idx))
    with pytest.raises(IndexError):
        cppcodegen.compile(fn)(x2, np.array(idx))
    np.testing.assert_array_equal(x2, x1)


def jacobi_with_copyto(u, sweeps):
    un = np.empty_like(u)
    for _ in range(sweeps):
        np.copyto(un, u)
        u[1:-1] = 0.5 * (un[2:] + un[:-2])
    return u


def copyto_where_and_scalar(a, b):
    np.copyto(a, b, where=b > 0.5)
    np.copyto(a[:2], 7)
    return a


@pytest.mark.parametrize("fn,make", [
    (jacobi_with_copyto, lambda: (np.random.default_rng(1).random(12), 6)),
    (copyto_where_and_scalar, lambda: (np.zeros(5), np.random.default_rng(2).random(5))),
])
def test_copyto_is_an_assignment(fn, make):
    a1, a2 = make(), make()
    np.testing.assert_array_equal(cppcodegen.compile(fn)(*a2), fn(*a1))
    for x, y in zip(a1, a2):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(TypeError, match="Cannot cast"):
        cppcodegen.compile(lambda a: np.copyto(a, 1.5))(np.zeros(3, np.int64))


SEL = np.random.default_rng(23)


def rdf_counts(pos, nbins, rmax):
    """Pair distances binned by np.add.at of a boolean selection, in a loop over a
    shrinking slice (a radial distribution function)."""
    n = pos.shape[0]
    hist = np.zeros(nbins)
    dr = rmax / nbins
    for i in range(n - 1):
        d = pos[i + 1:] - pos[i]
        r = np.sqrt((d ** 2).sum(axis=1))
        r = r[r < rmax]
        np.add.at(hist, (r / dr).astype(np.int64), 2.0)
    return hist


def weighted_in_range(idx, w, n):
    out = np.zeros(n)
    keep = (idx >= 0) & (idx < n)
    np.add.at(out, idx[keep], w[keep])
    return out


def max_of_selected(idx, w, out):
    out = out.copy()
    m = w > 0.25
    np.maximum.at(out, idx[m], w[m])
    return out


def complex_selected(idx, z, n):
    out = np.zeros(n, np.complex128)
    np.add.at(out, idx[idx < n], 1j)
    m = z.real > 0
    np.subtract.at(out, idx[m], z[m])
    return out


def count_selected(idx, n):
    out = np.zeros(n, np.int32)
    np.add.at(out, idx[idx >= 2], 1)
    return out


@pytest.mark.parametrize("fn, args", [
    (rdf_counts, (SEL.random((120, 3)) * 4.0, 25, 2.0)),
    (weighted_in_range, (SEL.integers(-5, 30, 400), SEL.standard_normal(400), 20)),
    (weighted_in_range, (SEL.integers(30, 40, 50), SEL.standard_normal(50), 20)),   # none kept
    (max_of_selected, (SEL.integers(0, 10, 200), SEL.random(200), np.full(10, -1.0))),
    (complex_selected, (SEL.integers(0, 12, 300), SEL.standard_normal(300) + 1j *
                        SEL.standard_normal(300), 12)),
    (count_selected, (SEL.integers(0, 9, 500), 9)),
])
def test_ufunc_at_of_a_boolean_selection_is_one_scatter(fn, args):
    """np.<op>.at(a, idx[mask], v[mask]): the whole arrays, the ufunc's identity where the
    mask is False; compared with NumPy, so signed zeros and NaNs are NumPy's."""
    check_against_numpy(fn, *args)


def test_ufunc_at_of_a_selection_keeps_signed_zeros_and_nans():
    out = np.array([-0.0, np.nan, 1.0, -0.0])
    idx = np.array([0, 1, 2, 3, 0])
    w = np.array([5.0, 6.0, 7.0, -0.0, 8.0])
    f = cppcodegen.compile(max_of_selected)
    got, ref = f(idx, w, out.copy()), max_of_selected(idx, w, out.copy())
    np.testing.assert_array_equal(got, ref)
    g = cppcodegen.compile(weighted_in_range)
    got = g(idx, np.array([-0.0, 1.0, -0.0, -0.0, -0.0]), 4)
    ref = weighted_in_range(idx, np.array([-0.0, 1.0, -0.0, -0.0, -0.0]), 4)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))


def test_ufunc_at_of_a_selection_into_an_empty_array_and_out_of_range():
    g = cppcodegen.compile(weighted_in_range)
    np.testing.assert_array_equal(g(np.array([3, 4]), np.ones(2), 0), np.zeros(0))
    f = cppcodegen.compile(count_selected)
    with pytest.raises(IndexError):
        f(np.array([1, 2, 9]), 9)
