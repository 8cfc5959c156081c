"""int64 compared with uint64 compares values as NumPy's mixed loops do (-1 < 2**64 - 1),
elementwise and in scalar loops; C++ would convert the signed side to unsigned."""
import operator

import numpy as np
import pytest

import cppcodegen

A = np.array([1, -2, 3, 0, -5, 2**62])
B = np.array([1, 2, 7, 0, 2**63 + 5, 2**62], dtype=np.uint64)
OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("swap", [False, True])
def test_arrays(op, swap):
    x, y = (B, A) if swap else (A, B)
    got = cppcodegen.compile(lambda x, y: op(x, y))(x, y)
    want = op(x, y)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def count_less(a, b):
    c = 0
    for i in range(len(a)):
        if a[i] < b[i]:
            c += 1
    return c


def larger(a, b):
    return np.where(a > b, a, b)


def test_scalar_loop():
    fc = cppcodegen.compile(count_less)
    assert fc(A, B) == count_less(A, B) and fc(B, A) == count_less(B, A)


def test_where_of_a_comparison():
    got, want = cppcodegen.compile(larger)(A, B), larger(A, B)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
