"""any(), all(), sum(), min() and max() of a generator expression over traced values compile as loops
(frontend/generators.py): results and Python types equal the plain function's, the
generator's names do not leak, and a module's own ``any`` is left alone."""
import re

import numpy as np
import pytest

import cppcodegen

rng = np.random.default_rng(3)


def above(x, t):
    if any(v > t for v in x):
        return 1
    return 0


def is_sorted(x):
    ok = all(x[i] <= x[i + 1] for i in range(len(x) - 1))
    return ok


def dot(x, y):
    return sum(a * b for a, b in zip(x, y))


def positive_mean(x):
    s = sum(v for v in x if v > 0) / len(x)
    return s


def row_sums(x):
    c = 0.0
    for i in range(len(x)):
        c += sum(x[i, j] for j in range(x.shape[1]))
    return c


def count_keeps_name(x):
    v = 3
    n = sum(1 for v in x if v > 0.5)
    return n, v


def finite_sum(x):
    if not any(np.isnan(v) for v in x):
        return x.sum()
    return np.float64(-1.0)


def no_match_in_elif(x, t):
    if x[0] > 10:
        r = 2
    elif all(v < t for v in x):
        r = 1
    else:
        r = 0
    return r


def two_filtered_sums(x):
    return sum(v for v in x if v > 0), sum(1 for v in x if v > 2), len(x)


def with_start(x):
    return sum((v * v for v in x), 10.0)


def smallest_magnitude(x):
    return min(abs(v) for v in x)


def largest_gap(x):
    g = max(x[i + 1] - x[i] for i in range(len(x) - 1) if x[i] > 0)
    return g


def widest_square(n):
    return max(i * (n - i) for i in range(n))     # (Python ints: a Python int)


def first_of_equal_zeros(x):
    return min(v for v in x), max(v for v in x)


def mixed_tuple(x):
    return sum(v * v for v in x), sum(x), max(x), min(abs(v) for v in x), x.mean()


SIGNED = np.array([0.0, -0.0, 0.0])
CASES = [
    (above, (np.array([1.0, 5.0, 2.0]), 3.0)), (above, (np.array([1.0, 2.0]), 3.0)),
    (above, (np.zeros(0), 3.0)), (is_sorted, (np.array([1.0, 2.0, 2.0, 3.0]),)),
    (is_sorted, (np.array([3.0, 2.0]),)), (is_sorted, (np.zeros(1),)),
    (dot, (np.arange(4.0), np.arange(4.0) + 1)), (positive_mean, (np.array([-1.0, 2.0, 3.0]),)),
    (row_sums, (np.arange(6.0).reshape(2, 3),)), (count_keeps_name, (rng.random(100),)),
    (finite_sum, (np.arange(3.0),)), (finite_sum, (np.array([1.0, np.nan]),)),
    (no_match_in_elif, (np.array([1.0, 2.0]), 3.0)), (no_match_in_elif, (np.array([1.0, 5.0]), 3.0)),
    (with_start, (np.arange(5.0),)), (two_filtered_sums, (np.array([1.0, -2.0, 3.0, 4.0]),)),
    (smallest_magnitude, (rng.standard_normal(50),)),
    (smallest_magnitude, (np.array([2.0, np.nan, 1.0]),)),     # (NaN never less: 1.0)
    (smallest_magnitude, (np.array([np.nan, 2.0, 1.0]),)),     # (NaN first: kept)
    (largest_gap, (np.cumsum(rng.random(40)) - 5,)), (widest_square, (9,)),
    (mixed_tuple, (rng.standard_normal(30),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_like_python(fn, args):
    got = cppcodegen.compile(fn, options={"fallback": False})(*args)
    want = fn(*args)
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert [type(g) for g in got] == [type(w) for w in want]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_one_build_for_every_length():
    compiled = cppcodegen.compile(above, options={"fallback": False})
    for n in (10, 1000, 100000):
        x = rng.random(n)
        assert compiled(x, 0.999) == above(x, 0.999)


def test_a_module_any_is_not_the_builtin():
    from numpy import any       # noqa: A004 -- np.any of a generator: True, as NumPy says

    def f(x):
        return any(v > 100 for v in x)
    source = cppcodegen.frontend.capture.convert_source(f)
    assert source is None or "__ccg_g" not in source


def any_all_of_arrays(x, col):
    hit = 0
    if any(x > 1.0):
        hit += 1
    if all(x > -5.0):
        hit += 10
    return hit, any(x), all(x), any(col > 0.5), all(col)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_any_and_all_of_an_array_are_python_bools(n):
    """``any(x > t)`` / ``all(x)`` of a traced array (Python iterates it: a 1-D array, or rows
    of one element) give Python's bools; they were refused as data-dependent."""
    x = np.array([0.0, -1.0, 2.5, np.nan])[:n]
    col = np.array([[0.25], [0.75], [0.0]])[:n]
    got = cppcodegen.compile(any_all_of_arrays, fallback=False)(x, col)
    want = any_all_of_arrays(x, col)
    assert got == want and [type(v) for v in got] == [type(v) for v in want]


def any_of_rows(m):
    return any(m)


def test_any_of_rows_of_several_elements_raises_as_python():
    m = np.ones((2, 3))
    with pytest.raises(ValueError, match="ambiguous"):
        any_of_rows(m)
    with pytest.raises(ValueError, match="ambiguous"):
        cppcodegen.compile(any_of_rows, fallback=False)(m)
    assert cppcodegen.compile(any_of_rows, fallback=False)(np.ones((0, 3))) is False


def test_min_and_max_keep_the_first_of_equal_items():
    lo, hi = cppcodegen.compile(first_of_equal_zeros, options={"fallback": False})(SIGNED)
    assert lo == 0.0 and hi == 0.0
    assert not np.signbit(lo) and not np.signbit(hi)      # Python's: the first 0.0, not -0.0
    assert type(lo) is np.float64


@pytest.mark.parametrize("fn, args", [(smallest_magnitude, (np.zeros(0),)),
                                      (largest_gap, (-np.arange(5.0),))])
def test_min_and_max_of_no_items_raise_as_python(fn, args):
    with pytest.raises(ValueError, match=r"arg is an empty sequence") as want:
        fn(*args)
    with pytest.raises(ValueError, match=re.escape(str(want.value))):
        cppcodegen.compile(fn, options={"fallback": False})(*args)
