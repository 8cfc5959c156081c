"""``scipy.stats.norm``'s cdf, sf, pdf and logpdf of traced values (Black-Scholes with
``norm.cdf(d1)``, as blogs write it) compile, from the C library's erfc as scipy's ndtr
computes from Cephes' (so within a few ulps of scipy's: 1e-14 relative on |x| < 8, where
option pricing lives; far in the tails, where the values underflow, erfc's slope amplifies
an ulp of its argument). Calls with concrete values get scipy's own method."""
import numpy as np
import pytest

import cppcodegen

stats = pytest.importorskip("scipy.stats")
norm = stats.norm


def bs_call(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + sigma ** 2 / 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)


def every(x):
    return (norm.cdf(x), norm.sf(x, 1.0, 2.0), norm.pdf(x), norm.logpdf(x, loc=0.5),
            norm.cdf(0.3), norm.pdf(x, scale=3.0))


def in_a_loop(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = norm.cdf(x[i]) - norm.cdf(-x[i])
    return out


def test_black_scholes():
    S = np.linspace(60.0, 140.0, 101)
    for args in ((100.0, 1.0, 0.02, 0.3), (90.0, 0.25, 0.05, 0.6)):
        np.testing.assert_allclose(cppcodegen.compile(bs_call)(S, *args), bs_call(S, *args),
                                   rtol=1e-13, atol=1e-12)


def test_each_method_near_scipys():
    x = np.linspace(-8.0, 8.0, 1601)
    for got, want in zip(cppcodegen.compile(every)(x), every(x)):
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


def test_float32_and_loops():
    x = np.linspace(-3, 3, 50).astype(np.float32)
    np.testing.assert_allclose(cppcodegen.compile(every)(x)[0], every(x)[0], rtol=1e-13)
    np.testing.assert_allclose(cppcodegen.compile(in_a_loop)(x.astype(np.float64)),
                               in_a_loop(x.astype(np.float64)), rtol=1e-13, atol=1e-15)


def test_other_scipy_calls_name_the_users_line():
    def student(x):
        return stats.t.cdf(x, 3)            # (not compiled: scipy converts its argument)
    with pytest.raises(cppcodegen.DataDependentError,
                       match=r"at .*test_scipy_norm\.py:\d+ by scipy \(scipy\.stats"):
        cppcodegen.compile(student, fallback=False)(np.linspace(-1, 1, 5))
