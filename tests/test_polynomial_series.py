"""``np.polynomial``'s evaluators on traced values (``frontend/polynomials.py``): polyval,
chebval, legval, hermval and hermeval of the numpy.polynomial modules, as course notes call
them (they converted the traced coefficients with np.array and were refused). The same
recurrences in the same order as NumPy's: bit for bit, for coefficients of every length,
int coefficients, array and scalar x, coefficients with an extra axis."""
import numpy as np
import pytest

import cppcodegen


def series(c, x):
    P = np.polynomial
    return (P.polynomial.polyval(x, c), P.chebyshev.chebval(x, c), P.legendre.legval(x, c),
            P.hermite.hermval(x, c), P.hermite_e.hermeval(x, c))


def fixed_coefficients(x):
    return np.polynomial.chebyshev.chebval(x, [1, -2, 0.5]) + \
        np.polynomial.polynomial.polyval(x * 2, (3, 1))


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_series_are_numpys_bit_for_bit(n):
    rng = np.random.default_rng(n)
    c = rng.standard_normal(n)
    f = cppcodegen.compile(series, fallback=False)
    for x in (np.linspace(-1.3, 1.3, 41), rng.standard_normal((3, 5)), 0.37):
        for got, want in zip(f(c, x), series(c, x)):
            assert np.shape(got) == np.shape(want)
            np.testing.assert_array_equal(got, want)
    for got, want in zip(f(np.arange(n), 0.5), series(np.arange(n), 0.5)):
        assert got == want
    c2 = rng.standard_normal((n, 2))            # (an extra axis: a series per column)
    for got, want in zip(f(c2, np.linspace(0, 1, 4)), series(c2, np.linspace(0, 1, 4))):
        np.testing.assert_array_equal(got, want)
    x = np.linspace(-1, 1, 9)
    np.testing.assert_array_equal(cppcodegen.compile(fixed_coefficients, fallback=False)(x),
                                  fixed_coefficients(x))
