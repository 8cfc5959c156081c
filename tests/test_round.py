"""np.round / np.around / ndarray.round compile as NumPy computes them (rint of x * 10**d,
divided back; halves to even; in the array's own float dtype): bit for bit equal."""
import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy, rng


def rounds(x):
    return np.round(x), np.round(x, 2), np.around(x, -1), x.round(3) + 1, np.round(x, 1) * 2


def round_int(x):
    return np.round(x, 1), np.around(x)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_float_rounding_is_numpys(dt):
    x = (rng(21).standard_normal(1037) * 1000).astype(dt)
    x[:10] = [0.5, 1.5, 2.5, -0.5, -2.5, np.nan, np.inf, -0.0, 1.005, 0.125]
    check_against_numpy(rounds, x, ulp=0)
    assert all(k.form != "extern" for k in cppcodegen.explain(rounds, x).kernels)  # no NumPy call


def test_integers_round_to_themselves():
    check_against_numpy(round_int, np.arange(-20, 20, dtype=np.int32))


def horner(x, coeffs):
    r = np.zeros_like(x)
    for c in coeffs:
        r = r * x + c
    return r


def test_a_list_of_numbers_is_a_constant_guarded_by_value():
    x = rng(22).standard_normal(100)
    check_against_numpy(horner, x, [1.0, -2.0, 3, 0.5])
    f = cppcodegen.compile(horner)
    np.testing.assert_array_equal(f(x, [1.0, 2.0]), horner(x, [1.0, 2.0]))   # another list
    np.testing.assert_array_equal(f(x, (1.0, 2.0)), horner(x, (1.0, 2.0)))
