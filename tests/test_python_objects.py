"""Python objects around traced values, as new users' programs use them: sets and dicts keyed
by values, formatted text, recursive helpers, dtype arguments, lists of arrays. What compiled
code cannot hold is refused (the call runs as Python with the fallback on), never a wrong
answer: a traced value hashed by identity counted every element as distinct."""
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import DataDependentError, UnsupportedError


def distinct_count(x):
    seen = set()
    for i in range(x.shape[0]):
        seen.add(int(x[i]))
    return len(seen)


def most_common_count(x):
    counts = {}
    for v in x:
        counts[int(v)] = counts.get(int(v), 0) + 1
    return max(counts.values())


TABLE = {0: 1.5, 1: 2.5, 2: 4.5}


def table_lookup(codes):
    total = 0.0
    for i in range(codes.shape[0]):
        total += TABLE[int(codes[i])]
    return total


def formatted(x):
    return f"{x.sum():.2f}"


def gcd(a, b):
    return a if b == 0 else gcd(b, a % b)


def gcd_rows(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = gcd(x[i, 0], x[i, 1])
    return out


def layers(weights, x):
    for w in weights:
        x = np.tanh(x @ w)
    return x


@pytest.mark.parametrize("fn, arg", [
    (distinct_count, np.array([1, 2, 2, 3, 3, 3])),
    (most_common_count, np.array([1, 2, 2, 3, 3, 3])),
    (table_lookup, np.array([0, 2, 1, 1])),
    (formatted, np.array([1.0, 2.0])),
    (gcd_rows, np.array([[12, 18], [7, 21], [9, 4]])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_then_python_runs_it(fn, arg):
    with pytest.raises((DataDependentError, UnsupportedError)):
        cppcodegen.compile(fn, fallback=False)(arg)
    with pytest.warns(cppcodegen.FallbackWarning):
        got = cppcodegen.compile(fn, fallback=True)(arg)
    want = fn(arg)
    assert type(got) is type(want) and np.array_equal(got, want), (got, want)


def test_an_array_is_unhashable_as_in_numpy():
    def keyed(x):
        return {x: 1}
    with pytest.raises(TypeError, match="unhashable"):
        cppcodegen.compile(keyed, fallback=False)(np.ones(3))


def cast_to(x, dtype=np.float32):
    return (x * 2).astype(dtype)


def zeros_of(x, dt):
    return np.zeros(x.shape, dtype=dt) + x


def test_dtype_arguments_are_constants_of_the_build():
    """``dtype=np.float32`` as an argument (a type, a np.dtype, a builtin): a constant
    guarded by value, one build per dtype; the fast path keys it by value (np.float32 and
    np.float64 have the same class and the same dtype/shape attributes)."""
    x = np.arange(5.0)
    casts, zeros = (cppcodegen.compile(f, fallback=False) for f in (cast_to, zeros_of))
    for dt in (np.float32, np.float64, np.int16, np.dtype("float32"), float, int, np.float64):
        for fn, c in ((cast_to, casts), (zeros_of, zeros)):
            got, want = c(x, dt), fn(x, dt)
            assert got.dtype == want.dtype, (fn.__name__, dt)
            np.testing.assert_array_equal(got, want)


def test_other_arguments_name_the_parameter_and_python_runs_them():
    """A list of arrays compiles (tests/test_container_args.py); an iterator of them does not:
    the error names the parameter, and with the fallback on Python runs the call."""
    ws = [np.ones((3, 4)) * 0.1, np.ones((4, 2)) * 0.2]
    x = np.ones((5, 3))
    np.testing.assert_array_equal(cppcodegen.compile(layers, fallback=False)(ws, x),
                                  layers(ws, x))
    with pytest.raises(TypeError, match="parameter 'weights' of layers"):
        cppcodegen.compile(layers, fallback=False)(iter(ws), x)
    with pytest.warns(cppcodegen.FallbackWarning):
        got = cppcodegen.compile(layers, fallback=True)(iter(ws), x)
    np.testing.assert_array_equal(got, layers(iter(ws), x))


def test_an_int_then_an_array_in_one_position():
    """The fast path's key holds an int argument's value; an array there later made the key
    unhashable (TypeError out of the call)."""
    def add(x, k):
        return x + k
    c = cppcodegen.compile(add)
    x = np.arange(3.0)
    for k in (3, 3, np.arange(3.0), np.arange(3.0), 4):
        np.testing.assert_array_equal(c(x, k), add(x, k))


def best_or_minus_one(x):
    return np.nanargmax(x) if not np.isnan(x).all() else -1


def median_or_zero(x, t):
    return np.median(x[:3]) * 2 if x.sum() > t else 0.0


def test_a_numpy_call_on_the_side_not_taken_does_not_run():
    """``np.nanargmax(x) if ... else -1``: the NumPy call between kernels ran on both sides,
    so an all-NaN x raised NumPy's ValueError where Python takes the other side. It runs
    only where its side is taken (the reference interpreter too)."""
    c = cppcodegen.compile(best_or_minus_one, fallback=False)
    for x in (np.array([np.nan, np.nan]), np.array([1.0, np.nan, 3.0]), np.array([np.nan] * 2)):
        assert c(x) == best_or_minus_one(x)
    m = cppcodegen.compile(median_or_zero, fallback=False)
    for x, t in ((np.arange(5.0), 100.0), (np.arange(5.0), 1.0), (np.arange(5.0), 100.0)):
        assert m(x, t) == median_or_zero(x, t)
    checked = cppcodegen.compile(best_or_minus_one, backend="check", fallback=False)
    assert checked(np.array([np.nan, np.nan])) == -1


def test_a_function_without_source_warns_and_is_right():
    """A function made by ``exec`` (or ``python -``) has no source to rewrite: its loops run
    in Python while tracing. It says so; a long recurrence unrolled that way is too deep to
    lower and runs as Python (it raised RecursionError)."""
    env = {"np": np}
    exec("def ewma(x, a):\n"
         "    out = np.empty_like(x)\n"
         "    out[0] = x[0]\n"
         "    for i in range(1, x.shape[0]):\n"
         "        out[i] = a * x[i] + (1.0 - a) * out[i - 1]\n"
         "    return out\n", env)
    x = np.random.default_rng(3).random(400)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = cppcodegen.compile(env["ewma"], fallback=True)(x, 0.1)
    np.testing.assert_allclose(got, env["ewma"](x, 0.1), rtol=1e-12)
    assert any("source of ewma is not available" in str(w.message) for w in seen)


def test_a_long_loop_without_source_stops_tracing_and_runs_as_python():
    """Its loop run by Python while tracing, a recurrence of 10^5 trips would trace and build
    for minutes: the trace stops past as many operations as an unrolled loop may add, and the
    call runs as Python, saying why."""
    import time
    env = {"np": np}
    exec("def recur(x):\n"
         "    s1 = s2 = 0.0\n"
         "    for n in range(x.shape[0]):\n"
         "        s0 = x[n] + 1.5 * s1 - s2\n"
         "        s2, s1 = s1, s0\n"
         "    return s1\n", env)
    x = np.random.default_rng(4).random(100_000) * 1e-6
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = cppcodegen.compile(env["recur"], fallback=True)(x)
    assert got == env["recur"](x)
    assert time.perf_counter() - t < 60         # (minutes before: a generous bound)
    assert any("passed 5000 operations" in str(w.message) for w in seen)


def _squares_table(n):
    return np.array([k * k for k in range(n)])


def test_a_constant_result_is_a_new_array_each_call():
    """A function whose loops see no array values returns a constant of its build: each call
    gets its own copy (every call returned the same array, so a caller that changed it
    changed what later calls returned)."""
    f = cppcodegen.compile(_squares_table)
    first = f(5)
    first[0] = -7
    second = f(5)
    assert second is not first
    np.testing.assert_array_equal(second, _squares_table(5))
