"""try/except in a compiled function: Python runs the statement while tracing, so a try
whose body works on traced values is refused, naming it (the compiled program cannot catch
what its operations raise when it runs; the handler the first call took would answer every
call: a positive-definiteness test by np.linalg.cholesky gave later calls the first call's
answer). With the fallback, Python runs the function. A try around Python values only
compiles with the rest of the function."""
import os
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import UnsupportedError


def is_pos_def(A):
    try:
        np.linalg.cholesky(A)
        return True
    except np.linalg.LinAlgError:
        return False


def safe_div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return float("inf")


def swallowing(x):
    try:
        y = np.sqrt(x).sum()
    except Exception:           # (would catch the refusal itself)
        y = -1.0
    return y


def nested(x):
    try:
        try:
            s = x.max()
        except ValueError:
            s = 0.0
    except:                     # noqa: E722
        s = -1.0
    return s


def python_only(x, key):
    try:
        scale = float(os.environ[key])
    except KeyError:
        scale = 2.0
    return x * scale


def _spd(n, sign=1.0):
    m = np.random.default_rng(n).standard_normal((n, n))
    return sign * (m @ m.T + n * np.eye(n))


@pytest.mark.parametrize("fn, calls", [
    (is_pos_def, [(_spd(5),), (_spd(7, -1.0),), (_spd(4),), (_spd(7),)]),
    (safe_div, [(1.0, 2.0), (1.0, 0.0)]),
    (swallowing, [(np.arange(4.0),)]),
    (nested, [(np.arange(4.0),), (np.zeros(0),)]),
])
def test_refused_then_python_answers(fn, calls):
    with pytest.raises(UnsupportedError, match=r"inside try/except \(at .*test_try_statements"):
        cppcodegen.compile(fn, fallback=False)(*calls[0])
    f = cppcodegen.compile(fn, fallback=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
        for args in calls:
            assert f(*args) == fn(*args)


def test_a_try_of_python_values_compiles():
    x = np.arange(5.0)
    f = cppcodegen.compile(python_only, fallback=False)
    np.testing.assert_array_equal(f(x, "CCG_TEST_NO_SUCH_VARIABLE"),
                                  python_only(x, "CCG_TEST_NO_SUCH_VARIABLE"))
