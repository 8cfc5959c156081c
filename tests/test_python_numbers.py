"""A value that is a Python number in the plain function (``c = 0; c += 1``, a loop index,
``len(x[mask])``, a Python float argument) comes back as a Python ``int``/``float``/``complex``,
and a NumPy scalar as a NumPy scalar of the same dtype: the result's types are the plain
function's, leaf by leaf, whichever backend runs it."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cppcodegen

A = np.random.default_rng(7).normal(size=60)


def count_positive(a):
    c = 0
    for i in range(a.shape[0]):
        if a[i] > 0:
            c += 1
    return c


def first_above(a, t):
    k = 0
    for i in range(a.shape[0]):
        if a[i] > t:
            k = i
            break
    return k, k * 0.5, np.sqrt(k * 1.0), a.sum(), k * 1j


def scaled(a, alpha):
    return alpha * 2, alpha, a.shape[0] * 2


def mask_count(a):
    return len(a[a > 0]), (a > 0).sum()


def series(a):
    c = 0
    x = 0.5
    for i in range(a.shape[0]):
        c += i
        x = x * 0.5 + c
    return {"c": c, "x": [x, c], "total": x + a[0]}


def float_sum(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]           # a NumPy float64 from the first step: np.float64, as in Python
    return s


def call_payoff(s, t):
    if t <= 0:                  # max of Python floats: a Python float (it was np.float64)
        return max(s - 1.0, 0.0), max(1, 2, 0)
    return min(s * 2.0, 10.0), 3


def complex_parts(a):           # a Python complex's conjugate: a Python complex
    z = complex(a[0], a[1])
    return z.conjugate(), z.real, abs(z)


def medians(a):                 # np.median/percentile of floats: np.float64 (a 0-d array)
    return np.median(a), np.percentile(a, 30.0), np.quantile(a, 0.25)


CASES = [(count_positive, (A,)), (first_above, (A, 1.0)), (scaled, (A, 1.5)),
         (scaled, (A, np.float64(1.5))), (mask_count, (A,)), (series, (A,)), (float_sum, (A,)),
         (call_payoff, (3.0, np.float64(0.0))), (call_payoff, (3.0, np.float64(1.0))), (medians, (A,)), (complex_parts, (A,))]


def _types(tree):
    if isinstance(tree, dict):
        return {k: _types(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_types(v) for v in tree)
    return type(tree)


def _values(tree):
    if isinstance(tree, dict):
        return [v for k in sorted(tree) for v in _values(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [v for t in tree for v in _values(t)]
    return [tree]


@pytest.mark.parametrize("backend", ["cpp", "check"])
@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_result_types_are_the_plain_functions(fn, args, backend):
    expected = fn(*args)
    got = cppcodegen.compile(fn, backend=backend)(*args)
    assert _types(got) == _types(expected)
    for g, e in zip(_values(got), _values(expected)):
        assert g == pytest.approx(e, rel=1e-12, abs=1e-300)


def test_python_and_numpy_scalar_results_are_separate_builds():
    """The same graph returning a Python number or a NumPy scalar: both right in one process."""
    f = cppcodegen.compile(scaled)
    assert type(f(A, 2.5)[1]) is float
    assert type(f(A, np.float64(2.5))[1]) is np.float64
    assert type(f(A, 2.5)[1]) is float


def first_above(x, t):
    found = False
    idx = -1
    for i in range(x.shape[0]):
        if not found and x[i] > t:
            found = True
            idx = i
    return found, idx


def test_a_python_bool_carried_by_a_loop_comes_back_a_bool():
    """``found = False`` then ``found = True`` in a compiled loop: a Python bool, as the
    plain function returns it (weak, as NEP 50 treats Python bools), not np.bool_."""
    f = cppcodegen.compile(first_above)
    x = np.linspace(0.0, 1.0, 50)
    for t in (0.5, 2.0):
        got, want = f(x, t), first_above(x, t)
        assert got == want and type(got[0]) is bool and type(got[1]) is int


def rounded(x):
    out = np.empty(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = round(x[i] * 10)
    return out, round(x[0] * 10), round(x[1], 1), bool(x.any()), np.allclose(x, x)


def test_round_bool_and_allclose_give_python_types():
    """round(scalar) is a Python int (halves to even, as Python rounds NumPy floats), with
    ndigits NumPy's round; bool(...) and np.allclose are Python bools."""
    x = np.array([0.35, 1.25, -2.55, 0.25])
    got, want = cppcodegen.compile(rounded)(x), rounded(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1:] == want[1:]
    assert [type(g) for g in got[1:]] == [type(w) for w in want[1:]]


def _python_comparisons(x):
    k = int(np.argmax(x))
    cnt = 0
    for i in range(x.shape[0]):
        if x[i] > 1.5:
            cnt += 1
    return k == 2, cnt == x.shape[0], float(x.sum()) > 1.0, divmod(k, 2), x[0] > 1.0


def test_comparisons_of_python_numbers_are_python_bools():
    """A comparison of Python numbers is a Python bool and divmod of Python ints a tuple of
    Python ints, as Python returns them (np.bool_ / np.int64 before; found by a new user's
    probe); a NumPy scalar's comparison stays np.bool_."""
    x = np.array([3.0, 1.0, 5.0])
    got, want = cppcodegen.compile(_python_comparisons)(x), _python_comparisons(x)
    assert got == want
    assert [type(v) for v in got[:3]] == [bool] * 3 and type(got[4]) is np.bool_
    assert [type(v) for v in got[3]] == [int, int]


def floor_of_first(x):
    import math
    return math.floor(x[0]), math.ceil(x[1]), math.trunc(x[1])


@pytest.mark.parametrize("values", [[2.5, -2.5], [1e20, -1e30], [np.nan, 1.0], [np.inf, 0.5],
                                    [1.0, -np.inf]])
def test_math_floor_of_any_float_is_pythons_int_or_error(values):
    """math.floor/ceil/trunc of a float past int64 is Python's big int (the call runs as
    Python), of NaN or infinity Python's error; never int64's wrapped value."""
    x = np.array(values)
    try:
        want = floor_of_first(x)
    except (ValueError, OverflowError) as e:
        with pytest.raises(type(e)):
            cppcodegen.compile(floor_of_first)(x)
        return
    got = cppcodegen.compile(floor_of_first, fallback=True)(x)
    assert got == want and all(type(g) is int for g in got)


def divided_by_argument(x, k):
    return int(x[0]) / k, int(x[0]) // k


def test_python_numbers_divided_by_an_int_argument_that_is_zero():
    """k == 0 in the first call (a constant of that build) and in later ones (a value read
    at each call) raises ZeroDivisionError as Python does."""
    f = cppcodegen.compile(divided_by_argument)
    x = np.array([7, 1])
    for k in (0, 2, 0, 3):
        if k == 0:
            with pytest.raises(ZeroDivisionError):
                f(x, k)
        else:
            assert f(x, k) == divided_by_argument(x, k)


def nan_mean(a):
    count = 0
    total = 0.0
    for x in a:
        if not np.isnan(x):
            total += x
            count += 1
    return total / count


def largest_or_zero(a, scale):
    biggest = 0.0
    if a.sum() > 0:
        biggest = a.max()
    return scale / (biggest * 0), biggest + 1.0


def running_until(a, limit):
    s = 0.0
    i = 0
    while i < a.shape[0] and s < limit:
        s = s + a[i]
        i += 1
    return (s - 1.0) / (i - i)


def reciprocal_of_total(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s ** -1


def _call(f, *args):
    """(the value or the exception's type) with NumPy's division warnings off."""
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            return f(*args)
    except ZeroDivisionError as e:
        return type(e)


@pytest.mark.parametrize("fn,calls", [
    (nan_mean, [(np.array([1.0, np.nan, 3.0]),), (np.array([np.nan, np.nan]),),
                (np.zeros(0),), (np.array([np.nan, 2.0]),)]),
    (largest_or_zero, [(np.array([1.0, 2.0]), 3.0), (np.array([-1.0, -2.0]), 3.0),
                       (np.array([-1.0, 5.0]), -2.0)]),
    (running_until, [(np.array([0.5, 0.7, 0.2]), 1.0), (np.array([0.5, 0.7]), -1.0),
                     (np.zeros(0), 1.0)]),
    (reciprocal_of_total, [(np.zeros(0),), (np.zeros(2),), (np.array([2.0]),)]),
], ids=["nan_mean", "largest_or_zero", "running_until", "reciprocal_of_total"])
def test_python_number_on_some_paths_only_divides_as_python_does(fn, calls):
    """A value that stays a Python float when no iteration (no branch) assigns it, and is a
    NumPy float64 when one does: divided by zero, it raises ZeroDivisionError on the first
    kind of path only (NumPy's inf or nan on the others), in one build for both."""
    f = cppcodegen.compile(fn)
    for args in calls:
        want, got = _call(fn, *args), _call(f, *args)
        if want is ZeroDivisionError:
            assert got is ZeroDivisionError, (args, got)
            continue
        assert got is not ZeroDivisionError, args
        for w, g in zip(want if isinstance(want, tuple) else (want,),
                        got if isinstance(got, tuple) else (got,)):
            np.testing.assert_allclose(g, w, rtol=1e-12)


def variance_or_zero(x):
    n = 0
    m2 = 0.0
    for v in x:
        n += 1
        m2 += v * v
    return m2 / (n - 1) if n > 1 else 0.0


def largest_drop(p):
    best = 0.0
    for i in range(1, len(p)):
        d = p[i - 1] - p[i]
        if d > best:
            best = d
    return best, best * 2.0


def trapezoid(y, dx):
    s = 0.0
    for i in range(len(y) - 1):
        s += 0.5 * dx * (y[i] + y[i + 1])
    return s


def clipped_positive_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s += x[i]
    return max(s, 1.0), min(s, -1.0)


def capped_count(x):
    c = 0
    for i in range(x.shape[0]):
        if x[i] > 2:
            c += x[i]
    return max(c, 1), min(3, c)


def complex_total(z):
    acc = 0j
    for i in range(z.shape[0]):
        if abs(z[i]) > 0.5:
            acc += z[i]
    return acc * 2, abs(acc), acc.real, acc.imag, acc.conjugate(), acc / 2


def running_max_of_ints(x):
    best = 0
    low = 10
    for i in range(x.shape[0]):
        best = max(best, x[i])
        low = min(low, x[i])
    return best, low


@pytest.mark.parametrize("fn,calls", [
    (variance_or_zero, [(np.array([1.0, 3.0, 2.0]),), (np.ones(1),), (np.zeros(0),)]),
    (largest_drop, [(np.array([3.0, 1.0, 2.0]),), (np.arange(5.0),), (np.ones(1),)]),
    (trapezoid, [(np.array([1.0, 2.0, 4.0]), 0.5), (np.ones(1), 0.5)]),
    (clipped_positive_sum, [(np.array([-1.0, -2.0]),), (np.array([1.5, -2.0]),),
                            (np.array([0.5, 3.0]),)]),
    (capped_count, [(np.array([1, 2]),), (np.array([5, 1]),)]),
    (complex_total, [(np.array([0.1 + 0j]),), (np.array([0.9 + 1j, 0.2j]),)]),
    (running_max_of_ints, [(np.array([0, 0]),), (np.array([-1, -2] * 3000),),
                           (np.array([3, 1]),), (np.array([10, 10]),)]),
], ids=["variance_or_zero", "largest_drop", "trapezoid", "max_min_builtins", "int_max_min",
        "complex_ops", "running_max_of_ints"])
@pytest.mark.parametrize("backend", ["cpp", "check"])
def test_python_number_on_some_paths_comes_back_as_python_has_it(fn, calls, backend):
    """The value is returned as a Python float on the paths where Python's is one (no
    iteration, no branch side assigned it), and as a NumPy float64 on the others; one
    build serves both (the first call takes the other path)."""
    f = cppcodegen.compile(fn, backend=backend)
    for args in calls:
        got, want = f(*args), fn(*args)
        assert _types(got) == _types(want), (args, got, want)
        np.testing.assert_allclose(_values(got), _values(want), rtol=1e-12)


def item_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i].item()
    return s, x.sum().item() + x[1:2].item()


def items_of_kinds(f, i, b, z, m):
    return f.item(), i.item(1), b[2:3].item(), z.item(0), m.item(1, 2), m.item((0, 1))


def test_item_is_a_python_number():
    """``.item()`` of a traced one-element array (and ``.item(k)``, ``.item(i, j)``) is the
    Python number NumPy returns: float, int, bool or complex, by the array's kind."""
    x = np.array([1.5, 2.0, -3.25])
    got, want = cppcodegen.compile(item_sum)(x), item_sum(x)
    assert got == want and [type(v) for v in got] == [float, float]
    args = (np.array([2.5], np.float32), np.array([3, -7], np.int32), np.array([1, 0, 1], bool),
            np.array([1 - 2j]), np.arange(6.0).reshape(2, 3))
    got, want = cppcodegen.compile(items_of_kinds)(*args), items_of_kinds(*args)
    assert got == want and [type(v) for v in got] == [type(v) for v in want]


def item_of_two(x):
    return x[:2].item()


def item_out_of_range(x):
    return x.item(5)


def test_item_errors_are_numpys():
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="can only convert an array of size 1"):
        cppcodegen.compile(item_of_two, fallback=False)(x)
    with pytest.raises(IndexError):
        item_out_of_range(x)
    with pytest.raises(IndexError):
        cppcodegen.compile(item_out_of_range, fallback=False)(x)


def test_int_carried_in_a_float_is_exact_or_runs_as_python():
    """``m = -np.inf`` then ``m = x[i]`` of an int64 array: the loop carries a float64; an
    element past 2**53 would be rounded (Python keeps the int itself), so such a call runs
    as Python and its values are exact; smaller ones stay compiled."""
    import warnings
    from test_new_user_programs import running_max     # (m = -np.inf; if x[i] > m: m = x[i])
    f = cppcodegen.compile(running_max)
    for x in (np.array([3, 1, 7, 2]), np.array([2 ** 53, 2 ** 53 + 1, 2 ** 62 + 1]),
              np.array([-5, -2 ** 60, 9]), np.array([4, -9, 4])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = f(x)
        np.testing.assert_array_equal(got, running_max(x))


def _store_halving(y0, n):
    ys = np.zeros(n)
    y = y0
    for i in range(n):
        ys[i] = y           # a Python complex when y0 is one
        y = y * 0.5
    return ys


def test_a_python_complex_stored_into_a_float_array_is_numpys_type_error():
    f = cppcodegen.compile(_store_halving, fallback=True)
    with pytest.raises(TypeError):
        _store_halving(1 + 2j, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError):
            f(1 + 2j, 3)
        np.testing.assert_array_equal(f(1 + 2j, 0), _store_halving(1 + 2j, 0))  # (no store)
    np.testing.assert_array_equal(f(2.0, 3), _store_halving(2.0, 3))


def powers_of_python_floats(x, u, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = u ** i + (u + 0.001 * i) ** 2
    return x ** 2, out


def toeplitz_powers(u, a):
    n = a.shape[0]
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = u ** (i - j)       # (an exponent of two loop indices)
    return out


def test_python_float_powers_are_pythons_bits():
    """``x ** y`` of Python floats in scalar code is the C library's pow, as in Python, for an
    exponent known only at run time (``u ** i``); a constant integer exponent is multiplies
    rounded once, the correctly rounded power (``1.885376393636725 ** 2`` is ``x * x``,
    ...623, one unit in the last place from pow's ...6225); ``u ** (i - j)`` of loop indices
    compiles."""
    import warnings
    from fractions import Fraction
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = 1.885376393636725
        got = cppcodegen.compile(powers_of_python_floats, fallback=False)(x, 1.0063, 50)
        want = powers_of_python_floats(x, 1.0063, 50)
        assert want[0] == 3.5546441456826225 and got[0] == x * x == float(Fraction(x) ** 2)
        assert abs(got[0] - want[0]) == np.spacing(want[0])
        np.testing.assert_allclose(got[1], want[1], rtol=1e-15)
        a = np.zeros(30)
        np.testing.assert_allclose(cppcodegen.compile(toeplitz_powers, fallback=False)(1.01, a),
                                   toeplitz_powers(1.01, a), rtol=1e-15)


def _square_n(x0, n):
    x = x0
    for i in range(n):
        x = x ** 2.0
    return x


def test_python_float_power_overflow_raises_as_python():
    """A Python float ``**`` whose result overflows raises OverflowError, as Python does
    (it returned inf); an infinite operand still gives inf."""
    f = cppcodegen.compile(_square_n)
    assert f(1.5, 3) == _square_n(1.5, 3)
    with pytest.raises(OverflowError, match="Numerical result out of range"):
        f(1e10, 5)
    assert f(float("inf"), 2) == float("inf")
    assert f(1e300, 0) == 1e300


def running_max(x0, steps, rate):
    """A Python int argument kept as the maximum unless a step passes it (a float then)."""
    x, xmax = x0, x0
    for _ in range(steps):
        x = x * rate
        if x > xmax:
            xmax = x
    return xmax, xmax + 1, -xmax, xmax // 2, xmax / 2, (xmax if steps > 2 else 7)


def total_of(a, n):
    s = 0                       # an int until the loop adds a float: 0 when it adds nothing
    for i in range(n):
        s += 0.5 * a[i]
    return s


def positive_total(a):
    t = 0                       # a Python int, or a NumPy float64 once a value was added
    for v in a:
        if v > 0:
            t += v
    return t, t * 2


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("fn,args", [
    (running_max, (10, 5, 0.5)), (running_max, (10, 5, 1.5)), (running_max, (10.0, 5, 0.5)),
    (running_max, (3, 0, 2.0)), (total_of, (A, 0)), (total_of, (A, 7)),
    (positive_total, (-np.abs(A),)), (positive_total, (A,)), (positive_total, (A[:0],))])
def test_an_int_on_some_paths_is_returned_as_the_int_python_has(fn, args, dynamic):
    """A carried value that is a Python int on some paths and a float on others (its flag:
    frontend/pyflags.py) has Python's type on the path this call took."""
    expected = fn(*args)
    got = cppcodegen.compile(fn, dynamic=dynamic)(*args)
    assert _types(got) == _types(expected), (got, expected)
    for g, e in zip(_values(got), _values(expected)):
        assert g == pytest.approx(e, rel=1e-12, abs=1e-300)


def float_or_numpy(a, n):
    r = 2.675                   # a Python float, or an np.float64 once the loop ran
    for i in range(n):
        r = a[i] * 1.0
    return abs(r), -r, r ** 2, r ** 0.5, round(r, 2), r * 2


@pytest.mark.parametrize("n", [0, 1])
def test_a_maybe_python_float_keeps_its_kind_through_pow_abs_and_round(n):
    """``**``, ``abs`` and ``round(x, k)`` of a value that is a Python float on some paths
    only: Python's type there (and Python's decimal rounding: 2.675 -> 2.67, NumPy 2.68)."""
    a = np.array([2.675, 2.0])
    expected = float_or_numpy(a, n)
    got = cppcodegen.compile(float_or_numpy)(a, n)
    assert _types(got) == _types(expected)
    assert list(got) == pytest.approx(list(expected), rel=1e-15)


def constant_powers_of_python_floats(v, out):
    for i in range(v.shape[0]):
        x = float(v[i])
        out[i, 0] = x ** 3
        out[i, 1] = x ** 4
        out[i, 2] = x ** 5
        out[i, 3] = x ** -2
        out[i, 4] = abs(x) ** 1.5
    return out


def test_constant_powers_of_python_floats_within_a_unit_of_pythons():
    """A constant integer or half exponent of a Python float in scalar code (multiplies in
    double-double, rounded once) is within one unit in the last place of Python's pow, and
    equal to it almost always (pow itself is not always correctly rounded)."""
    rng = np.random.default_rng(7)
    v = np.concatenate([rng.uniform(-10, 10, 3000),
                        np.exp(rng.uniform(-60, 60, 3000)) * rng.choice([-1, 1], 3000)])
    got = cppcodegen.compile(constant_powers_of_python_floats, fallback=False)(
        v, np.zeros((v.size, 5)))
    want = constant_powers_of_python_floats(v, np.zeros((v.size, 5)))
    assert np.all(np.abs(got - want) <= np.spacing(np.abs(want)))
    assert np.mean(got == want) > 0.99


def shifted_count(x):
    c = 0
    for i in range(x.shape[0]):
        if x[i] > 2:
            c += x[i]
    return c << 1, ~c, 5 & c


def test_bitwise_operators_of_an_int_on_some_paths_only():
    """``c << 1`` where ``c`` is the Python int 0 unless a float element was added: the int
    Python computes on that path, and a TypeError where ``c`` became a float (the trace
    refused the float operand and the whole call failed)."""
    f = cppcodegen.compile(shifted_count, fallback=False)
    for x in (np.array([1.0, 2.0]), np.zeros(0)):
        got, want = f(x), shifted_count(x)
        assert got == want and _types(got) == _types(want)
    with pytest.raises(TypeError):
        shifted_count(np.array([3.0]))
    with pytest.raises(TypeError, match="<<"):
        f(np.array([3.0]))
