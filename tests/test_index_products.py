"""Loops over index tuples, ``for i, j in np.ndindex(img.shape)`` and ``for y, x in
itertools.product(range(1, h - 1), range(1, w - 1))``, are nested compiled loops
(``frontend/products.py``). Python ran them by itself, one traced body per pixel: a 20x17
image was refused (recursion too deep) and a 100x100 one took minutes before running as
Python. Compared with the plain function."""
import itertools
from itertools import product

import numpy as np
import pytest

import cppcodegen


def invert(img):
    out = np.zeros_like(img)
    for i, j in np.ndindex(img.shape):
        out[i, j] = 255 - img[i, j]
    return out


def sobel_mag(img):
    h, w = img.shape
    out = np.zeros((h, w))
    for y, x in itertools.product(range(1, h - 1), range(1, w - 1)):
        gx = (img[y - 1, x + 1] + 2.0 * img[y, x + 1] + img[y + 1, x + 1]
              - img[y - 1, x - 1] - 2.0 * img[y, x - 1] - img[y + 1, x - 1])
        gy = (img[y + 1, x - 1] + 2.0 * img[y + 1, x] + img[y + 1, x + 1]
              - img[y - 1, x - 1] - 2.0 * img[y - 1, x] - img[y - 1, x + 1])
        if gx == 0 and gy == 0:
            continue
        out[y, x] = np.sqrt(gx * gx + gy * gy)
    return out


def channel_sums(img):
    s = np.zeros(img.shape[2])
    for i, j, c in np.ndindex(*img.shape[:2], img.shape[2]):
        s[c] += img[i, j, c]
    return s


def first_dark(img):
    for i, j in product(range(img.shape[0]), range(img.shape[1])):
        if img[i, j] < 10:
            return i, j             # (a return: leaves every loop)
    return -1, -1


@pytest.mark.parametrize("shape", [(40, 37), (1, 1), (3, 2), (0, 4)])
def test_index_tuples_are_nested_compiled_loops(shape):
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, shape, dtype=np.uint8)
    for fn, args in ((invert, (img,)), (sobel_mag, (img.astype(np.float64),)),
                     (channel_sums, (rng.random(shape + (3,)),)), (first_dark, (img,))):
        got, want = cppcodegen.compile(fn, fallback=False)(*args), fn(*args)
        np.testing.assert_allclose(got, want, rtol=1e-13)
    if shape == (40, 37):
        src = cppcodegen.explain(sobel_mag, img.astype(np.float64)).source
        assert src.count("for (int64_t") < 20          # loops, not 38 * 35 bodies


def test_other_callees_and_break_keep_the_loop_as_it_was():
    def product(a, b):                  # (the user's own, not itertools')
        return [(0, 1), (2, 3)]

    def pairs(x):
        s = 0.0
        for i, j in product(3, 4):
            s += x[i] * x[j]
        return s

    def until_dark(img):
        n = 0
        for i, j in np.ndindex(img.shape):
            if img[i, j] < 10:
                break
            n += 1
        return n
    x = np.arange(5.0)
    assert cppcodegen.compile(pairs)(x) == pairs(x)
    img = np.full((3, 4), 50, np.uint8)
    img[1, 2] = 3
    assert cppcodegen.compile(until_dark)(img) == until_dark(img)
