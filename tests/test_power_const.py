"""np.power / ** by a constant exponent: ccg::powc (include/cppcodegen/vec.h), chosen in
cppcodegen/backend/cexpr.py (const_power), vs NumPy; general pow with array exponents (libmvec).

Measured on an AMD EPYC (AVX-512 and CPPCODEGEN_ISA=avx2 alike), 2^22 float32 inputs
log-uniform in +-[2^-30, 2^30] and 2^20 float64 inputs in +-[2^-60, 2^60], exponents
2, 3, 4, 8, -2, -3, -8, 0.5, 1.5, 2.5, -0.5, -1.5, 7.5:
  float32: max 1 ULP from NumPy (NumPy's powf is itself up to 1 ULP from the float64 pow
           rounded to float32; ours 0 ULP there, except halfway cases and results whose
           float-float error terms are subnormal, < 2^-102: 1 ULP);
  float64: max 1 ULP from NumPy.
The test asserts those bounds on a smaller sample.
"""
import numpy as np
import pytest

import cppcodegen

EXPONENTS = [0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7, 8, 7.5, -0.5, -1, -1.5, -2, -2.5, -3, -8,
             -7.5, 9, 0.25, 3.0]


def _make(e, form):
    if form == "op":
        return lambda x: x ** e
    return lambda x: np.power(x, e)


def _specials(dt):
    return np.array([-np.inf, -2.5, -1, -0.0, 0.0, 1e-30, 0.3, 1, 1.7, 3.1, 1e10, np.inf,
                     np.nan] + list(np.linspace(-3, 3, 37)), dt)


def _ulps(got, ref, dt):
    m = np.isfinite(ref) & np.isfinite(got)
    d = np.abs(got[m].astype(np.float64) - ref[m].astype(np.float64))
    return (d / np.spacing(np.maximum(np.abs(ref[m]), np.finfo(dt).tiny)).astype(np.float64)).max(initial=0)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("e", EXPONENTS)
@pytest.mark.parametrize("form", ["op", "np.power"])
def test_const_power_special_values(dt, e, form):
    f = _make(e, form)
    x = _specials(dt)
    with np.errstate(all="ignore"):
        want = f(x)
        got = cppcodegen.compile(f)(x)
    assert got.dtype == want.dtype
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.signbit(got), np.signbit(want) | np.isnan(want) & np.signbit(got))
    assert _ulps(got, want, dt) <= 1


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
def test_const_power_ulp_bound(dt):
    rng = np.random.default_rng(0)
    n = 1 << 16
    span = 30 if dt == np.float32 else 60
    x = (np.exp2(rng.uniform(-span, span, n)) * rng.choice([-1, 1], n)).astype(dt)
    for e in (3, 4, 8, -2, -3, -8, 1.5, 2.5, -0.5, -1.5, 7.5):
        f = _make(e, "np.power")
        with np.errstate(all="ignore"):
            got, want = cppcodegen.compile(f)(x), f(x)
        assert np.array_equal(np.isfinite(got), np.isfinite(want)), e
        assert _ulps(got, want, dt) <= 1, e
        if dt == np.float32:       # vs the float64 pow rounded once: correctly rounded
            with np.errstate(all="ignore"):
                exact = np.power(x.astype(np.float64), e).astype(np.float32)
            assert _ulps(got, exact, dt) <= 1, e


def test_const_power_uses_multiplies():
    src = cppcodegen.explain(lambda x: 0.5 * x * (1 + np.tanh(0.79788 * (x + 0.044715 * x ** 3))),
                             np.ones(1000, np.float32)).source
    assert "ccg::powc<6>" in src and "ccg::pow(" not in src and "ccg::power(" not in src


def test_const_power_fused_in_expression_and_tail():
    x = np.linspace(-4, 4, 1003).astype(np.float32)      # a scalar tail after the vector loop
    f = lambda x: 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x ** 3)))
    g = lambda x: 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x * x * x)))
    got = cppcodegen.compile(f)(x)
    np.testing.assert_allclose(got, f(x), rtol=2e-6, atol=5e-7)  # 1 + tanh(~-3) cancels
    np.testing.assert_allclose(got, cppcodegen.compile(g)(x), rtol=2e-6, atol=5e-7)  # 1 + tanh(~-3) cancels


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
def test_general_power_array_exponent(dt):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.01, 10, 4099).astype(dt)
    y = rng.uniform(-6, 6, 4099).astype(dt)
    f = lambda x, y: np.power(x, y)
    got = cppcodegen.compile(f)(x, y)
    assert _ulps(got, f(x, y), dt) <= 4          # libmvec pow vs NumPy's pow / SVML
    assert "ccg::pow(" in cppcodegen.explain(f, x, y).source


def _power_by(x, e):
    return x ** e


def _power_in_loop(x, e):           # the scalar code of a compiled loop
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] ** e
    return out


@pytest.mark.parametrize("fn", [_power_by, _power_in_loop])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_exponent_known_when_the_program_runs_is_numpys_square_sqrt_reciprocal(fn, dtype):
    """NumPy's power loop computes a scalar exponent of 2, 0.5 and -1 as square, sqrt and
    reciprocal; with the exponent an argument, the compiled loop does the same (it was
    pow's result, one ulp off NumPy's in a quarter of the elements). A NumPy scalar's power
    (``x[i] ** e``) is C's pow for every exponent. Other exponents stay within pow's
    error."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.random(3000) * 4, [0.0, -0.0, np.inf, -np.inf, np.nan, -2.5, 1e-300
                                               if dtype == np.float64 else 1e-30]]).astype(dtype)
    f = cppcodegen.compile(fn, fallback=False)
    with np.errstate(all="ignore"):
        for e in (2.0, 0.5, -1.0, 2):
            got, want = f(x, e), fn(x, e)
            if fn is _power_by:
                np.testing.assert_array_equal(got, want)
            else:       # NumPy scalars: C's pow, whose vector form is within an ulp of it
                ok = np.isfinite(want)
                np.testing.assert_allclose(got[ok], want[ok], rtol=2 * np.finfo(dtype).eps)
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        got, want = f(x, 1.7), fn(x, 1.7)
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
def test_const_power_at_the_edges_of_the_range(dt):
    """Inputs whose powers overflow, or are subnormal or only just normal: NumPy's
    infinities and subnormals (x ** 1.5 of 3e262 is +inf, not -inf; 2e154 ** -2 is the
    subnormal 2.5e-309, not 0), within 1 ULP (of the subnormal spacing there)."""
    fi = np.finfo(dt)
    scale = np.array([0.25, 0.5, 0.9, 0.99, 1.0, 1.01, 1.1, 2.0, 4.0])
    for e in (2, 3, 4, 8, 1.5, 2.5, 7.5, -2, -3, -8, -0.5, -1.5, -2.5, -7.5):
        a = abs(e)
        with np.errstate(all="ignore"):
            base = np.power([float(fi.max), float(fi.tiny), float(fi.smallest_subnormal)],
                            1 / a)
            base = np.concatenate([base, [1e200, 3e262]])
            x = np.concatenate([np.outer(base, scale).ravel(), -np.outer(base, scale).ravel()])
            x = x[np.isfinite(x.astype(dt))].astype(dt)
            f = _make(e, "op")
            got, want = cppcodegen.compile(f)(x), f(x)
        assert np.array_equal(np.isnan(got), np.isnan(want)), e
        assert np.array_equal(np.isposinf(got), np.isposinf(want)), e
        assert np.array_equal(np.isneginf(got), np.isneginf(want)), e
        assert _ulps(got, want, dt) <= 1, (e, x[np.argmax(np.abs(got - want))])


def _pair_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] ** 1.5 + x[i] ** -0.5 + x[i] ** -3
    return s


def test_scalar_half_and_negative_powers_are_the_c_librarys():
    """A float64 scalar's ``** 1.5`` in a loop is Python's/NumPy's, the C library's pow, bit
    for bit (powc's double-double root was within an ulp, and 2.4x as slow in a pair loop)."""
    x = np.random.default_rng(8).random(3000) * 10
    assert cppcodegen.compile(_pair_sum, fallback=False)(x) == _pair_sum(x)
    src = cppcodegen.explain(_pair_sum, x).source
    assert "libm_pow" in src and "powc<3>" not in src
