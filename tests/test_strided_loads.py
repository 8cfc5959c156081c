"""Reads through views with steps -1, 2 and -2 (x[::-1], x[1::2], x[::-2]) are vector loads
with their lanes shuffled (include/cppcodegen/vec.h Vec::load_strided; was a lane-by-lane
gather: 0.3-0.5x NumPy's time): every dtype, every length (vector tails), every offset,
equal to NumPy's values bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import check_against_numpy

DTYPES = ["int8", "uint8", "int16", "int32", "float32", "int64", "float64"]


def views(x):
    n = x.shape[0]
    return (x[::-1] + x, x[::2] * 3, x[1::2] - 1, x[::-2] + 1, x[-2::-2] * 2,
            x[::-1][1:] - x[:-1], x[1::2] + x[::2][:n // 2])


def grid(m):
    k = m[:, 1::2].shape[1]
    return m[::-1, ::-1] - m, m[:, ::2] * 2, m[:, ::-2] + 1, m[::-2, 1::2] + m[::-2, ::2][:, :k]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reversed_and_every_other_element(dtype):
    rng = np.random.default_rng(DTYPES.index(dtype))
    for n in (0, 1, 2, 7, 16, 33, 67, 130):
        x = rng.integers(-50, 50, n).astype(dtype)
        check_against_numpy(views, x, ulp=0)
    m = rng.integers(-50, 50, (9, 37)).astype(dtype)
    check_against_numpy(grid, m, ulp=0)
