"""NumPy functions compiled as a few traceable ops, written as NumPy's loops compute them:
fabs, deg2rad/radians, rad2deg/degrees, heaviside, logaddexp(2), float_power, isclose,
allclose, select, and reductions with ``where=``/``initial=``. Special values (NaN, +-0,
+-inf, the extremes) included; bit-equal to NumPy except logaddexp/logaddexp2 (exp and
log1p: 4 ULP, as every transcendental function here)."""
import numpy as np
import pytest

import cppcodegen
from helpers import assert_matches_numpy, run_compiled

TRANSCENDENTAL = {"ulp": 4}

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 90.0, -180.0, 1e-30, 1e30, 700.0, -700.0,
           np.inf, -np.inf, np.nan]


def _values(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        info = np.finfo(dt)
        base = SPECIAL + [float(info.max), float(-info.max), float(info.tiny)]
        rng = np.random.default_rng(11)
        return np.array(base + list(rng.standard_normal(40) * 100), dt)
    if dt.kind == "b":
        return np.array([True, False] * 8)
    info = np.iinfo(dt)
    return np.array([0, 1, -1, 7, -90, 180, info.min, info.max] * 3, dt)


def _pairs(dtype):
    v = _values(dtype)
    a, b = np.meshgrid(v, v[: min(len(v), 23)])
    return a.ravel().copy(), b.ravel().copy()


def check(fn, *args, **tol):
    with np.errstate(all="ignore"):
        want = fn(*args)
    got = run_compiled(cppcodegen.compile(fn), *args)
    assert_matches_numpy(got, want, check_zero_sign=not tol, **tol)


@pytest.mark.parametrize("name", ["fabs", "deg2rad", "radians", "rad2deg", "degrees"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_unary(name, dtype):
    fn = getattr(np, name)
    check(lambda x: fn(x), _values(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_heaviside(dtype):
    a, b = _pairs(dtype)
    check(lambda x, y: np.heaviside(x, y), a, b)
    check(lambda x: np.heaviside(x, 0.5), a)                # a Python float: x's dtype


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logaddexp(name, dtype):
    fn = getattr(np, name)
    a, b = _pairs(dtype)
    check(lambda x, y: fn(x, y), a, b, **TRANSCENDENTAL)


def test_float_power_is_float64():
    x = _values("float32")
    check(lambda x: np.float_power(np.abs(x), 0.5), x, **TRANSCENDENTAL)
    check(lambda x: np.float_power(x, 2), _values("int32")[:6])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_isclose_and_allclose(dtype):
    a, b = _pairs(dtype)
    check(lambda x, y: np.isclose(x, y), a, b)
    check(lambda x, y: np.isclose(x, y, rtol=0.5, atol=1.0, equal_nan=True), a, b)
    check(lambda x, y: np.isclose(x, 1), a, b)
    x = _values(dtype)
    for y in (x, x * 1, np.where(np.arange(len(x)) == 3, x + 100, x).astype(x.dtype)):
        check(lambda p, q: np.allclose(p, q), x, y)


def test_select_first_true_condition_wins():
    x = _values("float64")
    check(lambda x: np.select([x > 0, x < -1, np.isnan(x)], [x, -x, 0.0], 7), x)
    check(lambda x: np.select([x > 0], [x.astype(np.float32)]), x)      # a weak 0 default
    check(lambda x: np.select([x > 0, x > 1], [1, 2], default=-1), x)
    with pytest.raises(TypeError, match="boolean"):
        cppcodegen.compile(lambda x: np.select([x], [x]))(x)


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min", "any", "all"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_reductions_with_where_and_initial(kind, dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((9, 13)) * 3).astype(dtype)
    m = rng.random((9, 13)) > 0.4
    fn = getattr(np, kind)
    ident = kind in ("sum", "prod", "any", "all")
    init = {"sum": 2, "prod": 3, "max": -5, "min": 5, "any": False, "all": True}[kind]
    tol = dict(rtol=1e-5, atol=1e-5) if np.dtype(dtype).kind == "f" and kind in (
        "sum", "prod") else {}
    for axis in (None, 0, 1):
        if ident:
            check(lambda x, m: fn(x, axis=axis, where=m), x, m, **tol)
            check(lambda x, m: fn(x, axis=axis, where=m[0], keepdims=True), x, m, **tol)
        if kind not in ("any", "all"):
            check(lambda x, m: fn(x, axis=axis, initial=init), x, m, **tol)
            check(lambda x, m: fn(x, axis=axis, where=m, initial=init), x, m, **tol)
    check(lambda x, m: fn(x, axis=1, where=np.zeros_like(m), initial=init)
          if kind not in ("any", "all") else fn(x, axis=1, where=np.zeros_like(m)), x, m)
    if not ident:
        with pytest.raises(ValueError, match="initial"):
            cppcodegen.compile(lambda x, m: fn(x, where=m))(x, m)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "fabs"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_half_loops_compute_in_float32(name, dtype):
    """int8/uint8 inputs take NumPy's float16 loop, which computes in float32 and rounds once
    (rounding after every step in float16 differed on most elements)."""
    fn = getattr(np, name)
    x = np.arange(-128, 128).astype(dtype)
    check(lambda x: fn(x), x)


def test_reduction_where_and_initial_edge_cases():
    """initial= of an empty max/min is the value; a mask that does not broadcast to the
    array raises; out= sets the loop's dtype as without where=/initial=."""
    check(lambda x: np.max(x, initial=-5.0), np.zeros(0))
    check(lambda x: np.min(x, axis=0, initial=5.0), np.zeros((0, 3)))
    x = np.arange(100000, dtype=np.float32) / 7

    def f(x, o):
        np.sum(x, out=o, initial=0.0)
        return o
    with np.errstate(all="ignore"):
        want = f(x, np.zeros((), np.float64))
    got = run_compiled(cppcodegen.compile(f), x, np.zeros((), np.float64), writes=(1,))
    np.testing.assert_allclose(got, want, rtol=1e-12)        # summed in float64, as NumPy
    with pytest.raises(ValueError, match="where"):
        cppcodegen.compile(lambda x: np.sum(x, where=np.ones((2, 3), bool)))(np.arange(3.0))


def test_heaviside_of_nan_is_positive_nan_and_isclose_of_weak_ints():
    x = np.array([-np.nan, np.nan, 0.0, -1.0])
    check(lambda x: np.signbit(np.heaviside(x, 0.5)), x)
    check(lambda x: np.isclose(x, [1, 2, 3, 4]), np.arange(4, dtype=np.int8))
