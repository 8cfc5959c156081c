"""A loop-carried value that starts as a Python number and is then assigned elements of an
array (a sentinel: ``best = -1`` then ``best = img[i, j]`` of a uint8 image). NumPy's
promotion gives uint8, where -1 is 255: no pixel was ever brighter and every row's argmax
was 0. The carried type now holds the Python ints it starts with (int16 here), so the
comparisons are Python's. Compared with the plain function."""
import numpy as np
import pytest

import cppcodegen


def row_argmax(img):
    h, w = img.shape
    res = np.zeros(h, dtype=np.int64)
    for i in range(h):
        best = -1
        bj = 0
        for j in range(w):
            if img[i, j] > best:
                best = img[i, j]
                bj = j
        res[i] = bj
    return res


def lowest(x):
    m = 300
    for v in x:
        if v < m:
            m = v
    return m


def last_below(x, t):
    k = -1
    for i in range(x.shape[0]):
        if x[i] < t:
            k = x[i]
    return k


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16])
def test_a_python_int_sentinel_outside_the_elements_dtype(dtype):
    rng = np.random.default_rng(3)
    img = rng.integers(0, 100, (37, 29)).astype(dtype)
    np.testing.assert_array_equal(cppcodegen.compile(row_argmax)(img), row_argmax(img))
    f, g = cppcodegen.compile(lowest), cppcodegen.compile(last_below)
    for x in (img[0], img[1, :0], np.full(5, 99, dtype)):
        assert int(f(x)) == int(lowest(x))
        assert int(g(x, 50)) == int(last_below(x, 50))
    assert f(img[1, :0]) == 300 and type(f(img[1, :0])) is int
