"""Masks made by comparing one dtype and used with another: np.where over values of every
width, combined masks, counts, any/all and stored bool arrays equal NumPy's exactly. (On
AVX2 a mask is a vector of -1/0 lanes converted between lane widths, include/cppcodegen/
vec.h Mask and detail::mask_convert; on AVX-512 a k register.)"""
from __future__ import annotations

import numpy as np
import pytest

from helpers import check_against_numpy

DTYPES = ["int8", "uint8", "int16", "int32", "float32", "int64", "float64"]
RNG = np.random.default_rng(21)


def masks_of(a, b, *vals):
    m = (a > b) | (a == 0)
    n = ~(a < b) & (b != 1)
    outs = [np.where(m, v, v[::-1]) for v in vals]
    outs += [np.where(n ^ m, v * 2, v) for v in vals[:3]]
    return tuple(outs) + (m, n & m, np.count_nonzero(m), (a > b).any(), (a >= b).all(),
                          np.sum(n, dtype=np.int32))


@pytest.mark.parametrize("cond", DTYPES)
@pytest.mark.parametrize("n", [37, 4])
def test_a_mask_of_one_width_selects_values_of_every_width(cond, n):
    a = RNG.integers(-3, 4, n).astype(cond)
    b = RNG.integers(-3, 4, n).astype(cond)
    vals = tuple(RNG.integers(-100, 100, n).astype(d) for d in DTYPES)
    check_against_numpy(masks_of, a, b, *vals, ulp=0)


def column_any_all(z, b):
    return (z.any(axis=0), z.all(axis=0), np.logical_and.reduce(b, axis=0),
            (b & (z > 0)).any(axis=0, keepdims=True), b.all(axis=(0, 1)), z[:0].any(axis=0),
            z[:0].all(axis=0))


def test_column_any_all_are_byte_max_min():
    """Z.any(axis=0): the max of 0/1 bytes per column, vectorized across the kept axis as a
    column sum is (it was a strided loop per column: 0.15x NumPy's time)."""
    z = RNG.integers(-1, 2, (37, 45)).astype(np.int32)
    z[:, ::3] = 0
    b = RNG.random((37, 45)) < 0.9
    check_against_numpy(column_any_all, z, b)
    check_against_numpy(column_any_all, z.reshape(37, 5, 9), b.reshape(37, 5, 9))
