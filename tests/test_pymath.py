"""Python's ``math`` functions on traced values inside compiled functions (frontend/pymath.py).

Each program is run plain (Python's ``math`` on floats) and compiled (NumPy's ufuncs on
float64 values); results must agree to a few ULP of float64 (libm in both)."""
from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy

R = np.random.default_rng(7)
X = R.uniform(0.5, 3.0, 50)


def loop_sqrt_exp_log(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sqrt(x[i]) + math.exp(-x[i]) - math.log(x[i]) + math.log(x[i], 2.0)
    return s


def loop_trig(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = math.atan2(math.sin(x[i]), math.cos(x[i])) + math.hypot(x[i], 1.0) \
            + math.tanh(x[i]) + math.fabs(math.cos(3.0 * x[i]))
    return out


def loop_floor_index(x, table):
    s = 0.0
    for i in range(x.shape[0]):
        k = math.floor(x[i])            # a Python int: indexes the table
        s += table[k]
    return s


def cholesky_row_update(A):
    n = A.shape[0]
    for i in range(n):
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = math.sqrt(A[i, i])
    return A


def isnan_branch(x):
    count = 0
    for i in range(x.shape[0]):
        if math.isnan(x[i]) or math.isinf(x[i]):
            count += 1
    return count


def constant_math(x):
    return x * math.sqrt(2.0) + math.pi + math.floor(2.7)


def loop_index_math(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * math.sqrt(i) + math.exp(-0.1 * i)
    return out


def loop_erf_gamma(s, k, t, v):
    """Black-Scholes terms one option at a time (math.erf, erfc), and math.gamma/lgamma."""
    out = np.empty_like(s)
    for i in range(s.shape[0]):
        d1 = (math.log(s[i] / k[i]) + 0.5 * v * v * t[i]) / (v * math.sqrt(t[i]))
        d2 = d1 - v * math.sqrt(t[i])
        out[i] = s[i] * 0.5 * (1 + math.erf(d1 / math.sqrt(2))) \
            + k[i] * 0.5 * math.erfc(-d2 / math.sqrt(2)) \
            + 1e-3 * (math.gamma(t[i] + 1.0) + math.lgamma(s[i]))
    return out


@pytest.mark.parametrize("fn, args", [
    (loop_erf_gamma, (X * 30, X[::-1] * 30, X / 2, 0.3)),
    (loop_sqrt_exp_log, (X,)),
    (loop_trig, (X,)),
    (loop_floor_index, (X, np.arange(4.0) * 1.5)),
    (cholesky_row_update, (np.eye(6) * 4 + 0.1,)),
    (isnan_branch, (np.array([1.0, np.nan, 2.0, np.inf, -np.inf, 0.0]),)),
    (constant_math, (X,)),
    (loop_index_math, (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_math_on_traced_values(fn, args):
    check_against_numpy(fn, *args, writes=(0,) if fn is cholesky_row_update else (), ulp=8)


def test_math_stays_itself_outside_traces():
    """The replacement is installed only while a trace runs, and only for the user's calls."""
    cf = cppcodegen.compile(loop_sqrt_exp_log)
    cf(X)
    assert math.sqrt.__module__ == "math" and math.sqrt(4.0) == 2.0
    with pytest.raises(ValueError):
        math.sqrt(-1.0)


def _pendulum_rhs(t, th, om, gamma, drive):
    return om, -gamma * om - math.sin(th) + drive * math.cos(0.667 * t)


def chaotic_pendulum(th0, om0, dt, nsteps, gamma, drive):
    traj = np.zeros((nsteps + 1, 2))
    th, om, t = th0, om0, 0.0
    traj[0, 0], traj[0, 1] = th, om
    for i in range(nsteps):
        k1a, k1b = _pendulum_rhs(t, th, om, gamma, drive)
        k2a, k2b = _pendulum_rhs(t + dt / 2, th + dt / 2 * k1a, om + dt / 2 * k1b, gamma, drive)
        k3a, k3b = _pendulum_rhs(t + dt / 2, th + dt / 2 * k2a, om + dt / 2 * k2b, gamma, drive)
        k4a, k4b = _pendulum_rhs(t + dt, th + dt * k3a, om + dt * k3b, gamma, drive)
        th = th + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
        om = om + dt / 6 * (k1b + 2 * k2b + 2 * k3b + k4b)
        t += dt
        traj[i + 1, 0] = th
        traj[i + 1, 1] = om
    return traj


def scalar_functions(x):
    out = np.empty((x.shape[0], 6))
    for i in range(x.shape[0]):
        v = x[i]
        out[i, 0] = math.sin(v) + math.cos(v)
        out[i, 1] = math.exp(v / 4) - math.log(abs(v) + 1)
        out[i, 2] = math.atan2(v, 1.5) + math.tanh(v)
        out[i, 3] = np.sin(v) * math.asinh(v)
        out[i, 4] = math.expm1(v / 8) + math.log1p(abs(v))
        out[i, 5] = math.cosh(v / 5) + math.tan(v / 3)
    return out


def test_scalar_loops_take_the_c_librarys_math():
    """Scalar code in a loop computes float64 math with the C library, as Python's math
    module and NumPy's scalar loops do: a chaotic system integrated for 20,000 steps ends on
    Python's bits (libmvec's vector functions are within 4 ulp, enough to diverge)."""
    args = (0.2, 0.0, 0.01, 20000, 0.5, 1.15)
    np.testing.assert_array_equal(cppcodegen.compile(chaotic_pendulum, fallback=False)(*args),
                                  chaotic_pendulum(*args))
    x = np.random.default_rng(1).uniform(-20, 20, 2000)
    np.testing.assert_array_equal(cppcodegen.compile(scalar_functions, fallback=False)(x),
                                  scalar_functions(x))


def complex_functions(z):
    out = np.empty((z.shape[0], 6), dtype=np.complex128)
    for i in range(z.shape[0]):
        w = z[i]
        out[i, 0] = cmath.exp(w) + cmath.sqrt(w)
        out[i, 1] = cmath.log(w) + cmath.log(w, 10)
        out[i, 2] = cmath.sin(w) * cmath.cosh(w / 3)
        r, phi = cmath.polar(w)
        out[i, 3] = cmath.rect(r, phi) + cmath.phase(w)
        out[i, 4] = cmath.atan(w / 4) + cmath.tanh(w / 5)
        out[i, 5] = cmath.sqrt(z[i].real) + (1.0 if cmath.isfinite(w) else 0.0)
    return out


def test_cmath_of_elements():
    """``cmath`` functions of traced values are NumPy's complex ufuncs on the value as a
    Python complex (they were refused as a conversion of a traced array)."""
    rng = np.random.default_rng(4)
    z = rng.uniform(-3, 3, 200) + 1j * rng.uniform(-3, 3, 200)
    got = cppcodegen.compile(complex_functions, fallback=False)(z)
    np.testing.assert_allclose(got, complex_functions(z), rtol=1e-13, atol=1e-13)


def _math_loop(name, nargs):
    def f(x):
        s = 0.0
        for v in x:
            s += getattr(math, name)(*((v,) if nargs == 1 else (v, 0.5 * v - 1.0)))
        return s
    f.__name__ = f"sum_of_{name}"
    return f


@pytest.mark.parametrize("name,nargs", [("sqrt", 1), ("log", 1), ("exp", 1), ("acos", 1),
                                        ("atanh", 1), ("gamma", 1), ("tan", 1), ("pow", 2),
                                        ("fmod", 2)])
def test_math_raises_where_python_does(name, nargs):
    """math.sqrt(-1.0) is ValueError "math domain error", math.exp(1000.0) OverflowError "math
    range error", as CPython decides (they returned NumPy's NaN and infinity): each value
    compared with Python, its exception type too."""
    fn = _math_loop(name, nargs)
    compiled = cppcodegen.compile(fn, fallback=False)
    for v in (0.5, -1.0, 0.0, 1000.0, np.nan, np.inf, -np.inf, 2.0, -3.0, 200.0):
        x = np.array([v])
        try:
            want = fn(x)
        except (ValueError, OverflowError) as e:
            with pytest.raises(type(e), match=r"math (domain|range) error \(at .*test_pymath"):
                compiled(x)
            continue
        got = compiled(x)
        assert type(got) is type(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _zero_to_the(x):
    s = 0.0
    for v in x:
        s += math.pow(0.0, v)
    return s


def test_a_pole_of_a_constant_base_is_a_domain_error():
    """math.pow(0.0, -1.0) with the base a constant: ValueError, as Python (the check looked
    at the exponent for the base and raised OverflowError)."""
    compiled = cppcodegen.compile(_zero_to_the, fallback=False)
    for v in (2.0, 0.0):
        assert compiled(np.array([v])) == _zero_to_the(np.array([v]))
    with pytest.raises(ValueError, match="math domain error"):
        compiled(np.array([-1.0]))


def _softened_force(pos, mass):
    acc = 0.0
    for j in range(pos.shape[0]):
        dx = pos[j, 0] - pos[0, 0]
        dy = pos[j, 1] - pos[0, 1]
        r2 = dx * dx + dy * dy + 1e-3
        acc += mass[j] / (r2 * math.sqrt(r2)) + math.log(r2)
    return acc


def _unsoftened(x, c):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sqrt(x[i] * x[i] + c)      # c may be negative: checked
    return s


def test_sums_of_squares_need_no_domain_check():
    """``math.sqrt(dx * dx + dy * dy + 1e-3)`` and its log: a square is >= 0 and float sums
    are monotone, so the argument is >= 1e-3 (bounds.py): no check in the loop (an n-body
    step kept a domain check per pair). A constant that may be negative keeps it."""
    rng = np.random.default_rng(5)
    pos, mass = rng.random((50, 2)), rng.random(50)
    got = cppcodegen.compile(_softened_force, fallback=False)(pos, mass)
    assert got == pytest.approx(_softened_force(pos, mass), rel=1e-12)
    text = cppcodegen.explain(_softened_force, pos, mass).source
    assert "// check at" not in text
    x = np.array([0.5, 0.1])
    f = cppcodegen.compile(_unsoftened, fallback=False)
    assert f(x, 1.0) == pytest.approx(_unsoftened(x, 1.0), rel=1e-12)
    with pytest.raises(ValueError, match="math domain error"):
        f(x, -1.0)


def angles_of(x, z):
    return math.degrees(x), math.radians(x), math.fabs(-x), math.copysign(x, -1.0), \
        math.degrees(cmath.phase(z))


def test_unchecked_math_functions_return_python_floats():
    got = cppcodegen.compile(angles_of, fallback=False)(0.5, 1 + 1j)
    want = angles_of(0.5, 1 + 1j)
    assert got == want and all(type(g) is float for g in got)


def _fermat_count(a):
    c = 0
    for i in range(a.shape[0]):
        n = int(a[i])
        if pow(2, n - 1, n) == 1:
            c += 1
    return c


def _gcd_all(a, b):
    g = np.zeros(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        g[i] = math.gcd(int(a[i]), int(b[i]))
    return g


def _pow_two_args(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += pow(a[i], 2) + pow(2.0, a[i])
    return s


def test_functions_without_a_compiled_form_name_themselves():
    """pow(b, e, m) and math.gcd of traced values are not compiled: the error names them and
    their line (pow raised TypeError; math.gcd a DataDependentError about an index), and with
    the fallback on the call runs as Python. Two-argument pow is ``**``."""
    a = np.array([7, 9, 11, 15])
    with pytest.raises(cppcodegen.UnsupportedError, match=r"pow\(base, exp, mod\).*test_pymath"):
        cppcodegen.compile(_fermat_count)(a)
    with pytest.raises(cppcodegen.UnsupportedError, match=r"math\.gcd.*test_pymath"):
        cppcodegen.compile(_gcd_all)(a, a + 3)
    with pytest.warns(cppcodegen.FallbackWarning):
        assert cppcodegen.compile(_fermat_count, options={"fallback": True})(a) == _fermat_count(a)
    x = np.linspace(-2, 2, 9)
    assert cppcodegen.compile(_pow_two_args)(x) == _pow_two_args(x)


def count_close(x, t):
    n = 0
    for i in range(x.shape[0]):
        if math.isclose(x[i], t, abs_tol=0.01):
            n += 1
        if math.isclose(x[i], x[i - 1]):
            n += 10
    return n


def pairs_close(x, y, r):
    return [math.isclose(x[i], y[i], rel_tol=r) for i in range(x.shape[0])]


def test_isclose_of_traced_values():
    """``math.isclose`` as CPython computes it (was refused: float() of a traced array):
    infinities close only to themselves, NaN to nothing, Python bools."""
    x = np.array([0.5, 0.505, np.inf, np.inf, np.nan, np.nan, 0.499, -np.inf, 1e300,
                  1e300 * (1 + 1e-10), 0.0, -0.0])
    assert cppcodegen.compile(count_close)(x, 0.5) == count_close(x, 0.5)
    a = np.array([0.5, np.inf, np.nan, -np.inf, 0.0, 1.0])
    b = np.array([0.5 + 1e-9, np.inf, np.nan, np.inf, -0.0, 1.0 + 2e-8])
    for r in (1e-8, 1e-9, 0.0):
        got = cppcodegen.compile(pairs_close)(a, b, r)
        assert got == pairs_close(a, b, r) and all(type(v) is bool for v in got)
