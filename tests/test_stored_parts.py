"""Reading back one part of a fresh joined array (``np.sort(np.stack([...]), axis=0)[4]``)
reads that part's value instead of the whole joined buffer (``frontend/stored.py``): a 3x3
median filter written with ``np.sort(stack, axis=0)[4]`` computed all nine sorted rows (2x
NumPy's time on 400x400; 37x faster than NumPy after, on the Xeon). Views keep NumPy's
semantics: in-place updates of the array show in the view, writes through the view in the
array. Compared with NumPy."""
import numpy as np
import pytest

import cppcodegen


def median3x3(img):
    stack = np.stack([img[:-2, :-2], img[:-2, 1:-1], img[:-2, 2:],
                      img[1:-1, :-2], img[1:-1, 1:-1], img[1:-1, 2:],
                      img[2:, :-2], img[2:, 1:-1], img[2:, 2:]], axis=0)
    return np.sort(stack, axis=0)[4]


def update_after_view(a, b):
    s = np.stack([a, b])
    v = s[0]
    s[0] += 1.0
    return v * 1.0, s


def write_through_view(a, b):
    s = np.concatenate([a, b])
    v = s[:a.shape[0]]
    v[1:3] = -7.0
    return s


def overwritten_part(a, b):
    s = np.stack([a, b])
    s[:, 0] = 9.0
    return s[0] + s[1][::-1]


def across_parts(a, b):
    return np.concatenate([a, b, a])[3:9] * 2.0


def last_part_twice(a, b):
    s = np.stack([a, b, a + b])
    s[2] = s[0] - s[1]
    return s[2], s[1]


R = np.random.default_rng(5)
A, B = R.random(6), R.random(6)


@pytest.mark.parametrize("fn", [update_after_view, write_through_view, overwritten_part,
                                across_parts, last_part_twice])
def test_as_numpy(fn):
    got, want = cppcodegen.compile(fn, fallback=False)(A, B), fn(A, B)
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)


def test_median_filter_reads_one_sorted_row():
    img = R.random((41, 29))
    img[5, 7] = np.nan
    f = cppcodegen.compile(median3x3, fallback=False)
    np.testing.assert_array_equal(f(img), median3x3(img))
    text = str(cppcodegen.explain(median3x3, img))
    loops = text[text.index("== loop IR"):text.index("== kernels")]
    assert "[9, 39, 27]" not in loops      # (no buffer of the nine sorted rows)


def classical_gram_schmidt(a):
    m, n = a.shape
    q = np.zeros((m, n))
    r = np.zeros((n, n))
    for k in range(n):
        v = a[:, k].copy()
        if k > 0:
            r[:k, k] = q[:, :k].T @ a[:, k]
            v = v - q[:, :k] @ r[:k, k]
        r[k, k] = np.linalg.norm(v)
        q[:, k] = v / r[k, k]
    return q, r


def test_a_part_stored_then_read_in_a_loop_reads_it_without_selects():
    """``r[:k, k] = ...`` then ``q[:, :k] @ r[:k, k]`` in the same iteration: the product reads
    the part just computed; the select between it and ``r`` per element (``where(i1 - k + 1 <=
    0, part[Min(i1, k - 1)], r[i1, k])``) is decided by the loop's domain ``i1 < k`` and
    folded away (it ran the loop at 2.3x NumPy's time)."""
    a = np.random.default_rng(5).random((60, 17))
    f = cppcodegen.compile(classical_gram_schmidt, fallback=False)
    for got, want in zip(f(a), classical_gram_schmidt(a)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    ir = str(cppcodegen.explain(f, a).program)
    assert not [line for line in ir.splitlines() if "reduction" in line and "where(" in line], ir
