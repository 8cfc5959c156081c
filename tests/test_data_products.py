"""A dot product of two slices whose lengths come from array values inside a compiled loop:
an autocorrelation pitch detector's ``for lag in range(int(fs), N): r[lag] = np.dot(x[:N -
lag], x[lag:])`` (``int(fs)`` of a float argument is a value of the data). The lengths are
equal in every iteration, which the tracer cannot prove: they are taken as equal and checked
when the program runs (NumPy's ValueError where they differ), as broadcasting does. It used
to refuse the loop (LoopDependent)."""
import numpy as np
import pytest

import cppcodegen


def acf(x, fs):
    N = len(x)
    lo = int(fs)
    r = np.zeros(N)
    for lag in range(lo, N):
        r[lag] = np.dot(x[:N - lag], x[lag:])
    return r


def uneven(x, cuts):
    out = np.zeros(cuts.shape[0])
    for i in range(cuts.shape[0]):
        out[i] = x[:cuts[i]] @ x[cuts[i] // 2:]
    return out


@pytest.mark.parametrize("fs", [5.0, 0.0, 99.5, 2.7])
def test_autocorrelation_from_a_float_start(fs):
    x = np.random.default_rng(0).standard_normal(100)
    np.testing.assert_allclose(cppcodegen.compile(acf)(x, fs), acf(x, fs), rtol=1e-12,
                               atol=1e-12)


def test_unequal_lengths_raise_numpys_error():
    x = np.arange(10.0)
    f = cppcodegen.compile(uneven)
    ok = np.array([7, 7])
    np.testing.assert_array_equal(f(x, ok), uneven(x, ok))
    bad = np.array([7, 6])
    with pytest.raises(ValueError):
        uneven(x, bad)
    with pytest.raises(ValueError):
        f(x, bad)
