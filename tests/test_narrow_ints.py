"""8-, 16-bit and unsigned integer arrays run in vector loops (ccg::Vec of narrow lanes):
every result equal to NumPy's, bit for bit, on rows long enough for the vector loops, with
their partial tails (37 = 2 vectors of 16 + 5), NumPy's edge values (MIN, MAX, 0, -1) and
zero divisors (NumPy gives 0)."""
import numpy as np
import pytest

from helpers import check_against_numpy, int_mixed_1d, rng
import narrow_int_programs as P

NARROW = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]


def _pair(dt, n=37 * 9):
    a = int_mixed_1d(dt, n=n, seed=11).reshape(9, 37)
    b = int_mixed_1d(dt, n=n, seed=12).reshape(9, 37)
    b.flat[::13] = 0                       # x // 0 and x % 0 are 0 in NumPy (with a warning)
    return a, b


@pytest.mark.parametrize("dt", NARROW)
@pytest.mark.parametrize("prog", [P.arith, P.division, P.compare])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_binary_programs(prog, dt):
    check_against_numpy(prog, *_pair(dt))


@pytest.mark.parametrize("dt", NARROW)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_casts(dt):
    a, _ = _pair(dt)
    f = rng(13).uniform(0, 3, a.shape).astype(np.float32)
    check_against_numpy(P.casts, a, f, rtol=1e-6)


def test_image_programs():
    img = rng(14).integers(0, 256, (67, 131), dtype=np.uint8)
    check_against_numpy(P.box_blur, img)
    cells = (rng(15).random((67, 131)) < 0.35).astype(np.uint8)
    check_against_numpy(P.life_step, cells)


@pytest.mark.parametrize("dt", ["float32", "uint8", "int16"])
def test_condition_on_outer_axis(dt):
    """The frame of ``out`` (a condition on the row index inside the loop over columns) is
    computed once per row and broadcast; values as NumPy's."""
    x = rng(16).integers(0, 100, (23, 70)).astype(dt)
    check_against_numpy(P.frame_scale, x, 1.5)
