"""float16 sums and means as NumPy computes them: the sum accumulated in float32 and rounded
to float16 once (NumPy's half pairwise sum), the mean summed and divided in float32.

Accumulated in float16 itself, 500 values near 2.6 summed to 1306 instead of NumPy's 1311
(five float16 ulps). The tolerance below is one float16 ulp relative (2^-10): NumPy adds
pairwise in float32 and we add in float32 in another order, which can move the one final
rounding by an ulp.
"""
import numpy as np
import pytest

import cppcodegen

ULP16 = 2.0 ** -10


def half_sum(x):
    return x.sum()


def half_sum_axis0(x):
    return x.sum(axis=0)


def half_sum_axis1(x):
    return np.sum(x, axis=1, keepdims=True)


def half_mean(x):
    return x.mean()


def half_mean_axis(x):
    return np.mean(x, axis=0)


def half_var(x):
    return x.var()


def _data(shape, seed=1):
    scale = 3.3 if np.prod(shape) < 10_000 else 0.05     # (a sum below float16's 65504)
    return (np.random.default_rng(seed).random(shape) * scale + scale / 3).astype(np.float16)


@pytest.mark.parametrize("fn, shape", [
    (half_sum, (500,)),
    (half_sum, (1 << 20,)),              # long enough to be split in chunks across threads
    (half_sum_axis0, (300, 7)),
    (half_sum_axis1, (7, 300)),
    (half_mean, (500,)),
    (half_mean, (1 << 20,)),
    (half_mean_axis, (400, 5)),
    (half_var, (600,)),
])
def test_float16_reductions_match_numpy(fn, shape):
    x = _data(shape)
    want = fn(x)
    got = cppcodegen.compile(fn)(x)
    assert np.asarray(got).dtype == np.float16
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=ULP16, atol=0)


def test_float16_sum_is_not_accumulated_in_float16():
    x = _data(500)
    exact = x.astype(np.float64).sum()
    got = float(cppcodegen.compile(half_sum)(x))
    # a float16 running sum loses ~5 ulps here; one rounding of the float32 sum loses < 1
    assert abs(got - exact) <= 1.0, (got, exact)
