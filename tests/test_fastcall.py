"""The C call path (runtime/fastcall.py, runtime/fastcall.cpp): a call whose arguments have
the layout of a recent one runs from C. Every result is compared with the plain Python
function and with the Python call path (the C path turned off), including 0-d results (a
NumPy scalar), Python scalars passed by value, index errors reported by the kernel,
strided inputs, constants, and the calls the C path must hand back to Python (keywords,
NumPy scalars, subclasses, other layouts)."""
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import cppcodegen
from cppcodegen.runtime import fastcall

TABLE = np.linspace(0.0, 1.0, 7)


@pytest.fixture(scope="module", autouse=True)
def built():
    if fastcall.build() is None:
        pytest.skip("the C call path could not be built here (no compiler or headers)")


def compiled(fn, fast=True):
    fastcall.set_enabled(fast)
    try:
        return cppcodegen.compile(fn)
    finally:
        fastcall.set_enabled(True)


def total(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s


def axpy(a, x, y):
    return a * x + y


def pick(x, idx):
    out = np.empty(idx.shape[0])
    for i in range(idx.shape[0]):
        out[i] = x[idx[i]]
    return out


def scaled_rows(m, k, flag):
    out = m[:, ::2] * k
    return out + 1 if flag else out - 1


def rotate(z, w):
    return z * w + TABLE[3]


def stats(a):
    return a.sum(), [a * 2, 3, None], (a.max(),)


def scale_rows(a, k):                       # in place, returns None
    for i in range(a.shape[0]):
        a[i, :] *= k


def shift(a, b):                            # in place, returns the argument
    for i in range(1, a.shape[0]):
        a[i] += b[i - 1]
    return a


def largest_drop(p):
    best = 0.0
    for i in range(1, p.shape[0]):
        if p[i - 1] - p[i] > best:
            best = p[i - 1] - p[i]
    return best


def first_big(x, t):                    # None, a value, or a tuple as a whole (nones.py)
    best = None
    for i in range(x.shape[0]):
        if x[i] > t and (best is None or x[i] < best):
            best = x[i]
    if best is None:
        return None
    return best, best * 2


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


RNG = np.random.default_rng(0)
CASES = [
    (total, (RNG.random(11),)),
    (total, (RNG.random(3).astype(np.float32),)),
    (axpy, (np.float32(1.5), RNG.random(5).astype(np.float32), RNG.random(5).astype(np.float32))),
    (axpy, (np.float16(0.5), RNG.random(5), RNG.random(5))),       # (NumPy scalars: by value)
    (axpy, (np.int16(-3), RNG.integers(0, 9, 4), RNG.integers(0, 9, 4))),
    (axpy, (np.complex128(1 - 2j), RNG.random(3), RNG.random(3))),
    (largest_drop, (np.arange(5.0),)),      # (Python's 0.0 stays a float)
    (largest_drop, (np.array([3.0, 1.0, 2.0]),)),
    (axpy, (2.5, RNG.random(5), RNG.random(5))),
    (axpy, (3, RNG.integers(0, 9, 4), RNG.integers(0, 9, 4))),
    (pick, (RNG.random(6), np.array([0, 5, -1, 2]))),
    (scaled_rows, (RNG.random((4, 6)), 2.0, True)),
    (scaled_rows, (RNG.random((4, 6)), 2.0, False)),
    (rotate, (1.5 - 2j, RNG.random(4) + 0j)),
    (stats, (RNG.integers(0, 9, 7).astype(np.float64),)),   # (exact sums on any ISA)
    (first_big, (RNG.random(9), 0.5)),
    (first_big, (RNG.random(9), 2.0)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_c_path_matches_python(fn, args):
    f = compiled(fn)
    assert isinstance(f, fastcall.dispatcher())
    first = f(*args)                     # (compiles, then runs through Python's path)
    assert f._fast_count() == 1
    again = f(*args)                     # from C
    _same(first, fn(*args))
    _same(again, fn(*args))
    _same(compiled(fn, fast=False)(*args), again)


def test_off_gives_the_python_path():
    f = compiled(total, fast=False)
    assert type(f) is cppcodegen.CompiledFunction and not hasattr(f, "_fast_count")
    x = RNG.random(5)
    _same(f(x), total(x))


def test_index_error_from_c_is_pythons():
    f = compiled(pick)
    x = RNG.random(6)
    f(x, np.array([1, 2]))
    assert f._fast_count() == 1
    with pytest.raises(IndexError) as c_error:
        f(x, np.array([1, 6]))
    with pytest.raises(IndexError) as python_error:
        compiled(pick, fast=False)(x, np.array([1, 6]))
    assert str(c_error.value) == str(python_error.value)
    assert "index 6 is out of bounds for axis 0 with size 6" in str(c_error.value)


def test_other_layouts_and_kinds_go_to_python():
    f = compiled(axpy)
    x, y = RNG.random(5), RNG.random(5)
    _same(f(2.0, x, y), axpy(2.0, x, y))
    _same(f(2.0, x[::-1], y), axpy(2.0, x[::-1], y))                 # other strides
    _same(f(2.0, x.astype(np.float32), y), axpy(2.0, x.astype(np.float32), y))
    _same(f(np.float64(2.0), x, y), axpy(np.float64(2.0), x, y))     # a NumPy scalar
    _same(f(2.0, x, y=y), axpy(2.0, x, y))                           # a keyword
    sub = x.view(type("Sub", (np.ndarray,), {}))
    with pytest.raises(TypeError, match="ndarray subclass Sub is not supported"):
        f(2.0, sub, y)                                              # Python's own answer
    _same(f(2, x, y), axpy(2, x, y))                                 # an int, by value
    _same(f(3, x, y), axpy(3, x, y))
    assert 1 <= f._fast_count() <= 8


def test_many_layouts_keep_the_newest_entries():
    f = compiled(total)
    for n in range(1, 14):
        x = RNG.random(n)
        _same(f(x), total(x))
        _same(f(x), total(x))
    assert f._fast_count() == 8


def test_arguments_are_not_modified_and_results_are_fresh():
    f = compiled(axpy)
    x, y = RNG.random(5), RNG.random(5)
    keep = x.copy(), y.copy()
    first, second = f(1.5, x, y), f(1.5, x, y)
    assert first is not second and not np.shares_memory(first, second)
    np.testing.assert_array_equal(x, keep[0])
    np.testing.assert_array_equal(y, keep[1])


def test_calls_from_threads():
    f = compiled(axpy)
    x, y = RNG.random(1000), RNG.random(1000)
    want = axpy(0.5, x, y)
    f(0.5, x, y)
    with ThreadPoolExecutor(4) as pool:         # (the C path releases the GIL in the kernel)
        results = list(pool.map(lambda _: f(0.5, x, y), range(800)))
    assert all(np.array_equal(r, want) for r in results)


@pytest.mark.parametrize("fn, args", [(scale_rows, (RNG.random((5, 3)), 1.5)),
                                      (shift, (RNG.random(6), RNG.random(6)))],
                         ids=["returns_none", "returns_argument"])
def test_in_place_functions(fn, args):
    f = compiled(fn)
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    f(*fresh)
    assert f._fast_count() == 1
    for _ in range(2):                  # from C: the argument updated as Python updates it
        mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got, expected = f(*mine), fn(*want)
        if expected is None:
            assert got is None
        else:
            assert got is mine[0]
        for m, w in zip(mine, want):
            _same(m, w)


def test_in_place_overlap_and_read_only_go_to_python():
    f = compiled(shift)
    a, b = RNG.random(6), RNG.random(6)
    f(a.copy(), b)
    assert f._fast_count() == 1
    z = RNG.random(7)
    want = z.copy()
    shift(want[1:], want[:-1])
    with warnings.catch_warnings():     # (warned once a process: maybe by another test)
        warnings.simplefilter("ignore", UserWarning)
        f(z[1:], z[:-1])        # (the same layout, but the arrays share memory: NumPy runs it)
    _same(z, want)
    ro = a.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(ro, b)
    np.testing.assert_array_equal(ro, a)


def factorial(n):
    p = 1
    for i in range(1, n + 1):
        p *= i
    return p


def test_python_int_past_int64_on_the_c_path_runs_as_python():
    """A call whose Python int leaves int64 (checked, PythonOnly) comes back from the C path
    with Python's exact result; the other calls stay on the C path."""
    f = compiled(factorial)
    assert f(5) == 120 and f(5) == 120
    assert f._fast_count() >= 1
    with warnings.catch_warnings():     # (it may say so, once per process)
        warnings.simplefilter("ignore")
        assert f(25) == factorial(25)
        assert f(25) == factorial(25) and type(f(25)) is int
        assert f(20) == factorial(20)


def secant(p, x0, x1, tol=1e-12, maxiter=100):
    f0, f1 = x0 ** 3 - p * x0 - 1.0, x1 ** 3 - p * x1 - 1.0
    n = 0
    while abs(f1) > tol and n < maxiter:
        x0, f0, x1 = x1, f1, x1 - f1 * (x1 - x0) / (f1 - f0)
        f1 = x1 ** 3 - p * x1 - 1.0
        n += 1
    return x1, n


def test_a_call_leaving_out_defaults_runs_from_c(monkeypatch):
    """``secant(3.0, 1.0, 5.0)`` of ``secant(p, x0, x1, tol=1e-12, maxiter=100)``: the
    defaults filled in by the C path (through Python's it cost 4.9 us, 0.9 us from C),
    the same result as the plain function; another count of arguments falls to Python."""
    f = compiled(secant)
    assert f(3.0, 1.0, 5.0) == secant(3.0, 1.0, 5.0)
    slow = []
    monkeypatch.setattr(type(f), "_call_slow",
                        lambda self, *a, **k: slow.append(a) or secant(*a, **k))
    assert f(3.0, 1.0, 5.0) == secant(3.0, 1.0, 5.0) and not slow
    assert f(3.0, 1.0, 5.0, 1e-12) == secant(3.0, 1.0, 5.0) and not slow
    assert f(3.0, 1.0, 5.0, 1e-3, 4) == secant(3.0, 1.0, 5.0, 1e-3, 4)
    with pytest.raises(TypeError):
        f(3.0)


def scaled_and_inner(x, y):
    return y * 2.0, x[1:-1, ::2], x.T


def test_views_of_arguments_are_returned_from_c(monkeypatch):
    """A result that is a view of an argument (``x[1:-1, ::2]``, ``x.T``) beside computed
    ones: taken by the C path from the caller's array, as NumPy's view of it."""
    x, y = RNG.random((6, 7)), RNG.random(5)
    f = compiled(scaled_and_inner)
    first = f(x, y)
    assert f._fast_count() == 1
    monkeypatch.setattr(type(f), "_call_slow", lambda self, *a, **k: pytest.fail("slow"))
    got = f(x, y)
    for g, w in zip(got, scaled_and_inner(x, y)):
        np.testing.assert_array_equal(g, w)
    assert got[1].base is x or np.shares_memory(got[1], x)
    assert np.shares_memory(got[2], x) and not np.shares_memory(got[0], y)
    _same(first, got)
