"""The user's own ``raise`` (and ``assert``) in a branch on array values compiles to a check:
the compiled function raises the same exception type with the same arguments exactly when
the plain function does (the branch taken at run time), and returns its result otherwise.
It was raised while tracing, whatever the values (``if np.any(x < 0): raise`` made every
call fail). In loops and in chains of elif too; the NumPy reference and the check backend
agree."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy


class SolverError(RuntimeError):
    pass


def validated_sqrt(x):
    if np.any(x < 0):
        raise ValueError("negative input")
    return np.sqrt(x)


def jacobi(A, b, tol, maxit):
    x = np.zeros_like(b)
    D = np.diag(A)
    it = 0
    while True:
        x_new = (b - A @ x + D * x) / D
        if np.abs(x_new - x).max() < tol:
            break
        x = x_new
        it += 1
        if it >= maxit:
            raise SolverError("no convergence", maxit)
    return x_new, it


def centred(x):
    m = x.mean()
    if m > 10:
        raise OverflowError("too big", 10)
    elif m < -10:
        raise ValueError
    else:
        y = x - m               # bound on the way that does not raise only
    return y


def checked_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            raise IndexError("bad element")
        s += x[i]
    return s


def asserted(x):
    assert np.all(np.isfinite(x)), "non-finite values"
    return x.sum()


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:      # noqa: BLE001 -- compared below
        return type(e), e.args


def _same_outcome(fn, *args, backend="cpp"):
    want = _outcome(fn, *args)
    got = _outcome(cppcodegen.compile(fn, backend=backend), *args)
    if want[0] == "ok":
        assert got[0] == "ok", got
        for g, w in zip(np.atleast_1d(got[1]) if not isinstance(want[1], tuple) else got[1],
                        np.atleast_1d(want[1]) if not isinstance(want[1], tuple) else want[1]):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    elif want[0] is AssertionError:     # (pytest explains its own asserts in the message)
        assert got[0] is want[0] and want[1][0].startswith(got[1][0])
    else:
        assert got == want


@pytest.mark.parametrize("backend", ["cpp", "numpy", "check"])
def test_a_raise_in_a_branch_on_values(backend):
    x = np.linspace(0.0, 4.0, 33)
    _same_outcome(validated_sqrt, x, backend=backend)
    _same_outcome(validated_sqrt, x - 1.0, backend=backend)


def test_one_compiled_function_raises_or_returns_as_the_values_say():
    f = cppcodegen.compile(validated_sqrt)
    x = np.linspace(0.0, 4.0, 33)
    np.testing.assert_allclose(f(x), np.sqrt(x))
    with pytest.raises(ValueError, match="negative input"):
        f(x - 1.0)
    np.testing.assert_allclose(f(x + 1.0), np.sqrt(x + 1.0))
    assert len(f.recompile_reasons) == 0


def test_a_custom_exception_in_a_while_loop():
    A, b = np.eye(5) * 4 + 0.5, np.ones(5)
    _same_outcome(jacobi, A, b, 1e-10, 100)
    _same_outcome(jacobi, A, b, 1e-10, 3)
    with pytest.raises(SolverError):
        cppcodegen.compile(jacobi)(A, b, 1e-10, 2)


@pytest.mark.parametrize("shift", [0.0, 20.0, -20.0])
def test_elif_chain_of_raises_binds_the_other_way(shift):
    _same_outcome(centred, np.arange(6.0) + shift)


def test_a_raise_in_an_element_loop():
    x = np.linspace(0.5, 2.0, 40)
    check_against_numpy(checked_sum, x)
    x[17] = -1.0
    _same_outcome(checked_sum, x)


def test_assert_on_array_values():
    x = np.arange(5.0)
    _same_outcome(asserted, x)
    x[3] = np.inf
    _same_outcome(asserted, x)


def test_a_raise_python_reaches_while_tracing_still_raises():
    def on_shape(x):
        if x.ndim != 1:
            raise TypeError("1-d only")
        return x

    with pytest.raises(TypeError, match="1-d only"):
        cppcodegen.compile(on_shape)(np.ones((2, 2)))


def raises_a_value(x):
    if x.sum() > 0:
        raise ValueError("sum", x.sum())
    return x


def diverged(x, tol):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        if s > tol:
            raise FloatingPointError(f"sum {s:.3f} passed {tol} at step {i}")
    return s


def doubled_until_negative(x, out):
    for i in range(x.shape[0]):
        out[i] = 2 * x[i]
        if x[i] < 0:
            raise RuntimeError(f"negative value {x[i]} at {i}")
    return out


@pytest.mark.parametrize("backend", ["cpp", "check"])
def test_a_raise_with_values_in_its_message_raises_python_s_exception(backend):
    """``raise E(f"... {s} ...")`` of traced values (was refused): the compiled program
    stops there, and Python runs the call again, which raises it with its values."""
    x = np.arange(10.0)
    for fn, args in ((raises_a_value, (x - 5.0,)), (raises_a_value, (x,)),
                     (diverged, (x, 100.0)), (diverged, (x, 10.0))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
            _same_outcome(fn, *args, backend=backend)


def test_a_raise_with_values_after_a_write_raises_its_type_without_the_values():
    """A call that wrote an argument cannot run again: the type, the text without its values."""
    f = cppcodegen.compile(doubled_until_negative)
    out = np.zeros(4)
    with pytest.raises(RuntimeError, match=r"^negative value \.\.\. at \.\.\.$"):
        f(np.array([1.0, 2.0, -1.0, 3.0]), out)
    np.testing.assert_array_equal(out[:2], [2.0, 4.0])


def test_an_exception_class_made_inside_a_function():
    """Its plan cannot be stored in the graph cache (pickle): the call still works."""
    class LocalError(Exception):
        pass

    def doubled(x):
        if x.sum() < 0:
            raise LocalError("negative sum")
        return x * 2

    f = cppcodegen.compile(doubled)
    np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))
    with pytest.raises(LocalError, match="negative sum"):
        f(-np.ones(3))


class _NotPD(Exception):
    pass


def _diag_roots(A):
    out = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        d = A[i, i] - 0.0
        if d <= 0:
            raise _NotPD("not positive definite")
        out[i] = math.sqrt(d)
    return out


def _roots_then_check(A):
    out = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        out[i] = math.sqrt(A[i, i])
        if A[i, i] <= 0:
            raise _NotPD("not positive definite")
    return out


@pytest.mark.parametrize("fn, error", [(_diag_roots, _NotPD), (_roots_then_check, ValueError)])
def test_the_first_error_in_statement_order_is_raised(fn, error):
    """A user's raise before ``math.sqrt(d)`` in the loop body is the error Python raises (the
    square root's domain check ran first: ValueError); after it, the domain error is."""
    f = cppcodegen.compile(fn)
    np.testing.assert_array_equal(f(np.eye(3) * 4.0), fn(np.eye(3) * 4.0))
    with pytest.raises(error):
        fn(-np.eye(3))
    with pytest.raises(error):
        f(-np.eye(3))


def _sum_at_then_check(a, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        s += a[idx[i]]                      # IndexError first where idx[i] is out of range
        if idx[i] > 3:
            raise KeyError("idx big")
    return s


def _read_ahead_then_check(a, idx):
    s = 0.0
    for i in range(a.shape[0]):
        v = a[i + 1]
        if a[i] < 0:
            raise KeyError("negative")
        s += v
    return s


def _between_two_checks(a, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        if a[i] > 100:
            raise OSError("too big")
        v = a[idx[i]]
        if a[i] < 0:
            raise KeyError("negative")
        s += v
    return s


@pytest.mark.parametrize("fn, a, idx", [
    (_sum_at_then_check, [1.0, -2.0, 3.0, 4.0, 5.0], [1, 7, 4]),
    (_read_ahead_then_check, [1.0, 2.0, -3.0], [0]),
    (_between_two_checks, [1.0, -2.0, 3.0], [0, 5, 1])])
def test_an_index_error_before_a_raise_in_the_same_iteration_wins(fn, a, idx):
    """An element read out of range (``a[idx[i]]``, ``a[i + 1]``) raises its IndexError before
    a user's raise later in the same iteration, as in Python (the read was computed where its
    value was used, after the raise's check: the user's exception came out instead)."""
    f = cppcodegen.compile(fn)
    a, idx = np.array(a), np.array(idx)
    assert _outcome(fn, a, idx)[0] is IndexError
    assert _outcome(f, a, idx)[0] is IndexError
    if fn is not _read_ahead_then_check:           # (that one reads past the end at the last)
        ok = (np.abs(a), np.zeros_like(idx))
        assert f(*ok) == fn(*ok)


def _asserted_step(a, k):
    assert k > 0, "k must be positive"
    s = 0
    i = 0
    while i < a.shape[0]:
        s += a[i]
        i += k
    return s


def test_an_assert_on_an_int_argument_runs_before_the_loop_it_guards():
    """``assert k > 0`` before ``while ...: i += k``: once k is read at run time (a second
    value), the assert is a check of the function's own statements, which run in the order
    Python runs them (the loop ran first: k = -1 gave an IndexError, k = 0 never ended)."""
    f = cppcodegen.compile(_asserted_step)
    a = np.arange(10)
    for k in (3, 2, 5):
        assert f(a, k) == _asserted_step(a, k)
    for k in (-1, 0):
        with pytest.raises(AssertionError, match="k must be positive"):
            f(a, k)
