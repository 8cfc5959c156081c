"""A small constant loop inside an independent loop's body is written out, so the outer
loop's iterations run in SIMD lanes (backend/unroll.py): results must be the plain
function's, bit for bit."""
import numpy as np
import pytest

import cppcodegen
from test_control_flow import _bit_reverse8 as bit_reverse8
from test_new_user_programs import box3_loops as box3


def popcount_weights(x, w):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        t = 0.0
        for b in range(4):
            if (x[i] >> b) & 1:
                t += w[b]
        out[i] = t
    return out


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_bits_reversed(n):
    x = np.random.default_rng(n).integers(0, 256, n).astype(np.uint8)
    f = cppcodegen.compile(bit_reverse8)
    got, want = f(x), bit_reverse8(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(3, 3), (5, 17), (40, 41)])
def test_neighbourhood_sums(shape):
    img = np.random.default_rng(1).random(shape)
    np.testing.assert_array_equal(cppcodegen.compile(box3)(img), box3(img))


def test_branches_in_the_written_out_loop():
    x = np.arange(100, dtype=np.int64)
    w = np.array([0.5, 1.5, -2.0, 4.0])
    np.testing.assert_array_equal(cppcodegen.compile(popcount_weights)(x, w),
                                  popcount_weights(x, w))


def test_the_outer_loop_runs_in_lanes():
    img = np.random.default_rng(2).random((30, 30))
    text = cppcodegen.explain(box3, img).source
    assert "omp simd" in text and "_t2_t2(" in text    # (3 x 3 written out)


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.int8])
def test_bit_tests_of_any_sign(dtype):
    """``(x & m) != 0`` is rendered ``> 0`` (backend/cexpr.py ``_bit_test``): the same truth
    for negative x and unsigned types."""
    def odd_or_even(x):
        out = np.zeros(x.shape[0], dtype=np.int64)
        for i in range(x.shape[0]):
            if x[i] & 1:
                out[i] = 1
            if (x[i] & 6) == 0:
                out[i] += 10
        return out
    x = np.arange(-60, 60).astype(dtype)
    np.testing.assert_array_equal(cppcodegen.compile(odd_or_even)(x), odd_or_even(x))
