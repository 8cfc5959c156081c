"""Arrays made with a size from an array's value (``np.zeros(x.max() + 1)``: the count
buffer of a histogram or of a group-by over labels) were refused (DataDependentError; found
by a new user's probe). Outside loops the size is read when the program runs (a count,
``frontend/creation.py``), so one build serves every size; a size from scalar arguments gets a
variant per value. Compared with the plain function."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen


def counts_of(x):
    counts = np.zeros(x.max() + 1, dtype=np.int64)
    for v in x:
        counts[v] += 1
    return counts


def group_means(vals, labels):
    k = int(labels.max()) + 1
    s = np.zeros(k)
    n = np.zeros(k, dtype=np.int64)
    for i in range(len(vals)):
        s[labels[i]] += vals[i]
        n[labels[i]] += 1
    return s / np.maximum(n, 1)


def ramp_to_max(x):
    return np.arange(x.max()) * 2.0


def normalize_then_count(x, out):
    out *= 0.5                              # updates an argument first
    return np.zeros(x.max() + 1) + out.sum()


def sizes_in_a_loop(x):
    t = 0.0
    for i in range(3):
        b = np.ones(x[i])
        t += b.sum()
    return t


RNG = np.random.default_rng(3)


def _calls(fn, arg_sets):
    """The compiled function vs the plain one on each set of arguments, in turn."""
    compiled = cppcodegen.compile(fn, fallback=False)
    for args in arg_sets:
        want = fn(*[a.copy() for a in args])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            got = compiled(*[a.copy() for a in args])
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_count_buffer_sized_by_the_largest_value():
    _calls(counts_of, [(np.array([3, 1, 4, 1, 5, 9, 2, 6]),), (np.array([9, 0, 0, 2]),),
                       (np.array([2, 7, 1]),), (np.array([0]),)])


def test_group_means_over_labels():
    sets = []
    for n, k in ((50, 5), (80, 5), (80, 7), (30, 5)):
        sets.append((RNG.normal(size=n), RNG.integers(0, k, size=n)))
    _calls(group_means, sets)


def test_arange_to_a_value():
    _calls(ramp_to_max, [(np.array([4, 2]),), (np.array([1, 4]),), (np.array([6, 0]),)])


def test_another_size_is_compiled_too():
    """The size is read when the program runs: another value runs the same build (it ran
    as Python, with a warning, while sizes were this call's and checked)."""
    compiled = cppcodegen.compile(counts_of, fallback=False)
    compiled(np.array([1, 2, 3]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = compiled(np.array([1, 41, 3]))
    np.testing.assert_array_equal(got, counts_of(np.array([1, 41, 3])))
    assert len(compiled.variants) == 1


def test_another_size_after_an_argument_was_updated():
    """(Which, once an argument was updated, could only raise, naming the line.)"""
    compiled = cppcodegen.compile(normalize_then_count, fallback=False)
    out = np.ones(4)
    np.testing.assert_allclose(compiled(np.array([2, 1]), out), np.full(3, 2.0))
    out = np.ones(4)
    np.testing.assert_allclose(compiled(np.array([5, 1]), out), np.full(6, 2.0))
    np.testing.assert_array_equal(out, np.full(4, 0.5))


def test_a_negative_size_is_numpys_error():
    with pytest.raises(ValueError, match="negative dimensions"):
        cppcodegen.compile(counts_of, fallback=False)(np.array([-3, -2]))


def test_sizes_from_values_in_a_loop():
    """Inside a compiled loop the size would differ per trip: refused there; a loop of a
    few trips unrolls, each array checked."""
    _calls(sizes_in_a_loop, [(np.array([1, 2, 3]),), (np.array([1, 2, 3]),),
                             (np.array([4, 0, 2]),)])


def gaussian_smooth(x, sigma):
    r = int(3 * sigma)                      # the kernel's size from a float argument
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    out = np.zeros(x.shape[0])
    for i in range(r, x.shape[0] - r):
        acc = 0.0
        for j in range(2 * r + 1):
            acc += k[j] * x[i - r + j]
        out[i] = acc
    return out


def scale_then_window(x, out, w):
    out *= 2.0                              # updates an argument first
    return np.ones(int(w)) * out.sum()


def test_a_size_from_a_float_argument_gets_a_variant_per_value():
    """``r = int(3 * sigma)`` takes few values: each is traced and compiled once (as an
    argument of another type would be), not run as Python at every later call."""
    compiled = cppcodegen.compile(gaussian_smooth, fallback=False)
    x = RNG.normal(size=500)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no call runs as Python
        for sigma in (1.0, 2.0, 1.2, 2.1, 1.0, 0.2):
            got = compiled(x, sigma)
            np.testing.assert_allclose(got, gaussian_smooth(x, sigma), rtol=1e-12, atol=1e-15)
    reasons = [str(r) for r in compiled.recompile_reasons]
    assert len(reasons) == 2 and all("scalar argument" in r for r in reasons)   # r = 6, 3, 0
    with pytest.raises(IndexError), warnings.catch_warnings():   # (r = -3: out[500] as in
        warnings.simplefilter("ignore", UserWarning)                # Python, which runs it)
        compiled(x, -1.0)


def test_sizes_from_a_float_past_the_recompile_limit_run_as_python():
    compiled = cppcodegen.compile(gaussian_smooth, fallback=False, options={"recompile_limit": 2})
    x = RNG.normal(size=50)
    from cppcodegen.runtime import compiled as runtime
    runtime._WARNED.clear()
    compiled(x, 1.0), compiled(x, 2.0)
    with pytest.warns(UserWarning, match="computed from a scalar argument"):
        got = compiled(x, 3.0)
    np.testing.assert_allclose(got, gaussian_smooth(x, 3.0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(compiled(x, 2.0), gaussian_smooth(x, 2.0), rtol=1e-12, atol=1e-15)


def test_a_size_from_a_float_after_an_argument_was_updated_names_the_line():
    compiled = cppcodegen.compile(scale_then_window, fallback=False)
    np.testing.assert_allclose(compiled(np.ones(2), np.ones(3), 2.5), np.full(2, 6.0))
    out = np.ones(3)
    with pytest.raises(ValueError, match=r"test_value_sizes\.py:\d+"):
        compiled(np.ones(2), out, 4.0)


def blur_rows(img, sigma):
    r = int(3 * sigma)
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    h, w = img.shape
    pad = np.zeros((h, w + 2 * r))
    pad[:, r:r + w] = img                   # a slice's bounds from the float argument
    out = np.zeros((h, w))
    for t in range(2 * r + 1):
        out += k[t] * pad[:, t:t + w]
    return out


def test_slice_bounds_from_a_float_argument_get_a_variant_per_value():
    compiled = cppcodegen.compile(blur_rows, fallback=False)
    img = RNG.random((20, 30))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for sigma in (1.0, 2.0, 1.0, 0.4):
            np.testing.assert_allclose(compiled(img, sigma), blur_rows(img, sigma), rtol=1e-12)


def blur_rows_padded(img, sigma):
    r = int(3 * sigma)
    x = np.arange(-r, r + 1)
    k = np.exp(-x ** 2 / (2 * sigma ** 2))
    k = k / k.sum()
    pad = np.pad(img, ((0, 0), (r, r)), mode="edge")
    out = np.zeros_like(img)
    for i in range(2 * r + 1):
        out += k[i] * pad[:, i:i + img.shape[1]]
    return out


def test_pad_widths_from_a_float_argument_get_a_variant_per_value():
    """``np.pad(img, ((0, 0), (r, r)))`` with ``r = int(3 * sigma)``: the widths are this
    call's, each value compiled once (the whole function ran as Python, with a message about
    an array converted to a NumPy array)."""
    compiled = cppcodegen.compile(blur_rows_padded, fallback=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no call runs as Python
        for sigma in (1.0, 2.0, 1.0, 0.2):
            img = RNG.random((6, 20))
            np.testing.assert_allclose(compiled(img, sigma), blur_rows_padded(img, sigma),
                                       rtol=1e-12, atol=1e-15)
