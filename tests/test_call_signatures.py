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


def test_var_keyword_parameters_are_refused_clearly():
    with pytest.raises(TypeError, match=r"\*\*kwargs parameters .* of keywords"):
        cppcodegen.compile(keywords)(np.arange(3.0), a=2)


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
