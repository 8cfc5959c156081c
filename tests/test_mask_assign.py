"""x[mask] = v for every v NumPy takes there: one value, a row painted into each selected row,
f(x[mask]) of the same mask, and one item per True element or row, stored in C order (NaN
gaps filled by np.interp, an n-body code's inv_r3[m] = inv_r3[m] ** -1.5, a colour painted
where a 2-D mask holds); NumPy's ValueError when the counts differ. All compared with NumPy,
including the arguments after the call."""
import numpy as np
import pytest

import cppcodegen


def interp_nans(y):
    y = y.copy()
    bad = np.isnan(y)
    idx = np.arange(len(y))
    y[bad] = np.interp(idx[bad], idx[~bad], y[~bad])
    return y


def fill_from(y, z):
    y = y.copy()
    bad = np.isnan(y)
    y[bad] = z[:bad.sum()]
    return y


def inverse_cube(x):
    inv_r3 = x * x
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
    return inv_r3


def paint(h, w, cx, cy, r, col):
    img = np.zeros((h, w, 3), dtype=np.float32)
    yy, xx = np.ogrid[:h, :w]
    m = (xx - cx) ** 2 + (yy - cy) ** 2 <= r ** 2
    img[m] = col
    return img


def sort_positives(x):
    x = x.copy()
    x[x > 0] = np.sort(x[x > 0])
    return x


def scale_rows(a, keep):
    a = a.copy()
    a[keep] = np.cumsum(a[keep], axis=0) * 2
    return a


def into_ints(counts, values):
    counts[counts > 2] = values[values > 0.5][:np.count_nonzero(counts > 2)] * 10
    return counts


RNG = np.random.default_rng(4)
WITH_NANS = np.array([1.0, np.nan, 3.0, np.nan, np.nan, 6.0, np.nan, 9.0])


@pytest.mark.parametrize("fn, args", [
    (interp_nans, (WITH_NANS,)),
    (interp_nans, (np.arange(6.0),)),                   # no NaN: an empty value
    (fill_from, (WITH_NANS, np.arange(10.0, 14.0))),
    (inverse_cube, (RNG.standard_normal((7, 5)) * (RNG.random((7, 5)) > 0.3),)),
    (paint, (9, 11, 4.0, 5.0, 3.0, np.array([1.0, 0.5, 0.25], np.float32))),
    (sort_positives, (RNG.standard_normal(40),)),
    (sort_positives, (-np.ones(5),)),                   # a mask of no True element
    (scale_rows, (RNG.standard_normal((6, 4)), np.array([1, 0, 1, 1, 0, 1], bool))),
    (into_ints, (RNG.integers(0, 5, 30), RNG.random(40) + 0.4)),
])
def test_as_numpy(fn, args):
    want_args = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    got_args = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = cppcodegen.compile(fn, fallback=False)(*got_args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    for g, w in zip(got_args, want_args):
        np.testing.assert_array_equal(g, w)
    assert cppcodegen.check(fn, *[np.copy(a) if isinstance(a, np.ndarray) else a
                                  for a in args]).ok


@pytest.mark.parametrize("z", [np.arange(3.0), np.arange(9.0)])
def test_count_mismatch_is_numpys_error(z):
    with pytest.raises(ValueError):
        _too_many_or_few(WITH_NANS.copy(), z)
    with pytest.raises(ValueError, match="boolean array indexing assignment"):
        cppcodegen.compile(_too_many_or_few, fallback=False)(WITH_NANS.copy(), z)


def _too_many_or_few(y, z):
    y[np.isnan(y)] = z
    return y
