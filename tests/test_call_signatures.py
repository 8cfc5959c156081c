"""Functions with keyword-only parameters, defaults and *args compile as written: a call binds
its arguments as Python would (defaults applied), and the compiled result equals the plain one."""
import numpy as np
import pytest

import cppcodegen


def scaled_prefix(x, *, n=3, scale=2.0):
    s = 0.0
    for i in range(n):
        s += x[i] * scale
    return s


def write_into(a, *, out):
    out[:] = a * 2
    return out


def shifted(x, *shifts):
    return x + sum(shifts)


def keywords(x, **kw):
    return x * kw.get("a", 1)


@pytest.mark.parametrize("kwargs", [{}, {"n": 5}, {"scale": 1.0, "n": 4}, {"n": 0}])
def test_keyword_only_parameters(kwargs):
    x = np.arange(10.0)
    fc = cppcodegen.compile(scaled_prefix)
    got, want = fc(x, **kwargs), scaled_prefix(x, **kwargs)
    # (n=0: Python's s stays 0.0, a float; the compiled one is np.float64 whatever the trip
    # count, a subclass of float)
    assert isinstance(got, float) and got == want


def test_keyword_only_output_argument_is_written():
    x = np.arange(6.0)
    out = np.zeros(6)
    got = cppcodegen.compile(write_into)(x, out=out)
    assert got is out
    np.testing.assert_array_equal(out, x * 2)
    with pytest.raises(TypeError):
        cppcodegen.compile(write_into)(x)        # Python's own error: `out` missing


def test_var_positional_parameters():
    x = np.arange(4.0)
    fc = cppcodegen.compile(shifted)
    np.testing.assert_array_equal(fc(x, 1.0, 2.0), shifted(x, 1.0, 2.0))
    np.testing.assert_array_equal(fc(x), shifted(x))


def total(*arrays, weight=1.0):
    return sum(a.sum() for a in arrays) * weight


def test_var_keyword_parameters_are_refused_clearly_and_python_runs_them():
    """``**kwargs`` and keyword-only parameters after ``*args`` are not compiled: an error
    naming the keywords and the function without the fallback, Python's result with it."""
    x = np.arange(3.0)
    with pytest.raises(cppcodegen.UnsupportedError, match=r"\(a of keywords\)"):
        cppcodegen.compile(keywords, fallback=False)(x, a=2)
    for fn, args, kw in ((keywords, (x,), dict(a=2)), (total, (x, x[:2]), dict(weight=2.0))):
        with pytest.warns(cppcodegen.FallbackWarning, match="are not compiled"):
            got = cppcodegen.compile(fn, fallback=True)(*args, **kw)
        np.testing.assert_array_equal(got, fn(*args, **kw))
    np.testing.assert_array_equal(cppcodegen.compile(total)(x, x), total(x, x))


def with_defaults(x, scale=2.0, shift=1.0, *, power=1):
    return (x * scale + shift) ** power


@pytest.mark.parametrize("call", [
    lambda f, x: f(x), lambda f, x: f(x, 3.0), lambda f, x: f(x, 3.0, 0.5),
    lambda f, x: f(x, shift=0.0), lambda f, x: f(x, power=2), lambda f, x: f(x, 1.0, power=3)])
def test_defaults_bind_as_python(call):
    """A positional call that leaves parameters to their defaults binds without inspect's
    slow path; every form of call gives the plain function's result."""
    x = np.arange(5.0)
    compiled = cppcodegen.compile(with_defaults)
    for _ in range(2):                          # (the second call: the fast path)
        np.testing.assert_array_equal(call(compiled, x), call(with_defaults, x))
    with pytest.raises(TypeError):
        compiled()                              # Python's missing-argument error
    with pytest.raises(TypeError):
        compiled(x, 1.0, 2.0, 3.0)


def rk4(f, y0, dt, n):
    y, t = y0.copy(), 0.0
    out = np.zeros((n + 1, y0.shape[0]))
    out[0] = y
    for i in range(n):
        k1 = f(t, y)
        k2 = f(t + dt / 2, y + dt / 2 * k1)
        k3 = f(t + dt / 2, y + dt / 2 * k2)
        k4 = f(t + dt, y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + dt
        out[i + 1] = y
    return out


def lorenz(t, s):
    x, y, z = s[0], s[1], s[2]
    return np.array([10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z])


def decay(t, y):
    return -0.5 * y


def applied(g, x):
    return g(x) + 1


def test_functions_as_arguments_are_traced_where_they_are_called():
    """An integrator given its right-hand side (a function, a lambda, a compiled function):
    each function is a constant of its own build, its calls traced into the loop."""
    f = cppcodegen.compile(rk4, fallback=False)
    y0 = np.array([1.0, 1.0, 1.0])
    for rhs in (lorenz, decay, lambda t, y: -y * t, cppcodegen.compile(decay)):
        np.testing.assert_allclose(f(rhs, y0, 0.01, 100), rk4(rhs, y0, 0.01, 100), rtol=1e-10)
    assert len(f.variants) == 4
    g = cppcodegen.compile(applied, fallback=False)
    for fn in (np.sin, np.exp, abs, np.abs):
        np.testing.assert_allclose(g(fn, y0 - 2), applied(fn, y0 - 2))


@cppcodegen.compile
def _smooth(x):
    return 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]


def smoothed_twice(x):
    return _smooth(_smooth(x)).sum()


def test_a_compiled_helper_called_from_a_compiled_function_is_inlined():
    x = np.random.default_rng(0).random(50)
    got = cppcodegen.compile(smoothed_twice, fallback=False)(x)
    np.testing.assert_allclose(got, smoothed_twice(x), rtol=1e-12)


def test_keyword_calls_bind_by_a_plan_learned_once():
    """The first call with a set of keywords binds with inspect (its errors are Python's);
    later calls with the same keywords place them by position (8 us -> 3 us a call), in
    whatever order they come, with defaults for the rest."""
    x = np.arange(5.0)
    compiled = cppcodegen.compile(with_defaults)
    calls = [dict(shift=0.5, power=2), dict(power=2, shift=0.5), dict(power=3),
             dict(scale=-1.0, shift=0.5, power=2), dict(shift=2.0)]
    for _ in range(2):
        for kw in calls:
            np.testing.assert_array_equal(compiled(x, **kw), with_defaults(x, **kw))
            np.testing.assert_array_equal(compiled(x=x, **kw), with_defaults(x=x, **kw))
    assert (1, ("shift", "power")) in compiled._keyword_plans
    assert (1, ("power", "shift")) in compiled._keyword_plans
    with pytest.raises(TypeError):
        compiled(x, scale=1.0, x=x)             # Python's "multiple values" error, each time
    with pytest.raises(TypeError):
        compiled(x, bogus=1.0)


def test_numpy_scalars_where_a_float_was_take_the_fast_path():
    x = np.arange(6.0)
    compiled = cppcodegen.compile(with_defaults, fallback=False)
    compiled(x, 2.0, 1.0)
    for s in (np.float64(3.0), np.float32(0.5), np.float64(-1.0)):
        got = compiled(x, s, 1.0)
        want = with_defaults(x, s, 1.0)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert len(compiled._fast) == 3          # float, np.float64, np.float32: one entry each


def quicksorted(a):
    b = a.copy()
    _quicksort(b, 0, b.shape[0] - 1)
    return b


def _quicksort(b, lo, hi):
    if lo >= hi:
        return
    p = b[(lo + hi) // 2]
    i, j = lo, hi
    while i <= j:
        while b[i] < p:
            i += 1
        while b[j] > p:
            j -= 1
        if i <= j:
            b[i], b[j] = b[j], b[i]
            i += 1
            j -= 1
    _quicksort(b, lo, j)
    _quicksort(b, i, hi)


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def scaled_by_fib(x):
    return x * _fib(10)


def test_recursion_on_values_is_a_clear_error_and_python_runs_it():
    x = np.random.default_rng(5).random(40)
    with pytest.raises(cppcodegen.UnsupportedError, match=r"_quicksort calls itself .* loop"):
        cppcodegen.compile(quicksorted, options={"fallback": False})(x)
    with pytest.warns(cppcodegen.FallbackWarning):
        np.testing.assert_array_equal(
            cppcodegen.compile(quicksorted, options={"fallback": True})(x), np.sort(x))


def test_recursion_on_python_ints_is_traced_through():
    x = np.arange(4.0)
    np.testing.assert_array_equal(
        cppcodegen.compile(scaled_by_fib, options={"fallback": False})(x), x * 55)
