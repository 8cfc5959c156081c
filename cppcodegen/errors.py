"""The errors cppcodegen raises, and how they find the user's file:line."""
from __future__ import annotations

import functools
import os
import sys

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP = (_PKG_DIR, os.path.dirname(os.path.abspath(os.__file__)))


class CppCodegenError(Exception):
    """Base class of every error cppcodegen raises on purpose."""


class UnsupportedError(CppCodegenError, NotImplementedError):
    """The traced function uses a NumPy feature the compiler does not support."""


class DataDependentError(CppCodegenError):
    """Python control flow or a conversion needs the value of a traced array."""


class TraceError(CppCodegenError, TypeError):
    """The traced function did something invalid (bad shapes, bad dtypes, ...)."""


class MixedReturns(TraceError):
    """The function returns None (or a tuple) on one path and a value on another; the
    tracer adds the function's name and the lines of its returns."""


class PythonOnly(Exception):
    """A value of the compiled function left what it was compiled for (a Python int past
    int64 or a float made an int out of range, ``frontend/pyints.py``; a size taken from an
    array's value, ``creation.py``): a call that wrote no argument runs again as Python,
    which computes it exactly; otherwise this is raised, naming the line. ``reason``: the
    warning's words when Python runs the call."""
    reason = "a value left what the compiled function was compiled for"


class OutOfRange(PythonOnly):
    """A Python int argument outside the int dtype an operation takes it in (``img += v``
    with int8 ``img``, ``v = 300``), found as the call starts: nothing has run, and Python
    runs the call (NumPy's OverflowError where it happens, the arguments as Python leaves
    them)."""
    reason = ("a Python int argument is outside the range of the integer dtype it is used "
              "with (NumPy raises OverflowError there)")


class IntOverflow(PythonOnly, OverflowError):
    """A Python int left the int64 it is kept in."""
    reason = ("a Python int left the int64 the compiled function keeps it in (Python's ints "
              "have no limit)")


class SizeChanged(PythonOnly, ValueError):
    """An array made from a size that comes from an array's value (``np.zeros(x.max() +
    1)``) got another size than on the call the function was compiled for."""
    reason = ("an array made with a size from an array's value (np.zeros(x.max() + 1)) got "
              "another size than on the call the function was compiled for")


class ScalarSizeChanged(SizeChanged):
    """An array made from a size computed from scalar arguments alone (``r = int(3 *
    sigma)``, ``np.arange(-r, r + 1)``) got another size: a variant is traced for it, as for
    an argument of another type (``api.CompiledFunction._respecialize``)."""
    reason = ("an array made with a size computed from a scalar argument (np.arange(-r, r + 1) "
              "with r = int(3 * sigma)), or with a count of the values (x[mask]), got another "
              "size than on the call it was traced for")


class FloatToInt(PythonOnly, ValueError):
    """A float made an int (``int(x)``, a store into an int array) that is NaN, infinite or
    out of range: Python raises ValueError or OverflowError there, or makes a big int."""
    reason = "a float made an int was NaN, infinite or out of range"


class InexactCarry(PythonOnly, ValueError):
    """An int a loop or branch carries in a float (a maximum of an int64 array started from
    ``-np.inf``) past the float's exact integers: Python keeps the int itself."""
    reason = ("an int a loop or branch keeps in a float was past the float's exact integers "
              "(2**53 for float64)")


class NegativeIntPower(PythonOnly, ValueError):
    """A Python int raised to a negative Python int exponent known only at run time: Python's
    result is a float, the compiled one an int."""
    reason = "a Python int was raised to a negative int power (Python's result is a float)"


class ComplexPower(PythonOnly, ValueError):
    """A negative Python float raised to a fractional Python float known only at run time:
    Python's result is a complex number, the compiled one a float."""
    reason = ("a negative Python number was raised to a fractional power (Python's result is "
              "complex)")


class EmptyList(PythonOnly, ValueError):
    """A list a compiled loop appended ints (or bools, ...) or rows to got no item: NumPy
    makes a float64 array of shape (0,) of an empty list, the compiled function one of the
    items' dtype and shape."""
    reason = ("a list a compiled loop fills was empty (NumPy's array of an empty list is "
              "float64 of shape (0,), not the items' dtype and shape)")


class TiedOrder(PythonOnly, ValueError):
    """``np.argsort`` with NumPy's default kind inside a compiled loop met equal values: the
    compiled sort keeps them in index order (a stable sort), NumPy's quicksort in an order of
    its algorithm's (and of the CPU's vector sort)."""
    reason = ("np.argsort met equal values, whose order NumPy's default sort leaves to its "
              "algorithm (kind='stable' keeps them in index order and compiles)")


class RerunRaise(PythonOnly):
    """The user's ``raise kind(f"... {x} ...")`` whose arguments hold values computed from
    arrays (``frontend/raises.py``): made as an exception of ``kind`` that is also a
    ``PythonOnly``, so that a call that wrote no argument runs again as Python, which raises
    it with its values; otherwise it is raised with its text, the values shown as "..."."""

    def __new__(cls, kind=Exception, args=()):
        try:
            sub = type(kind.__name__, (cls, kind), {
                "__init__": _args_kept, "__module__": kind.__module__,
                "reason": f"the function raised {kind.__name__} with a message computed from "
                          "array values; Python runs the call to raise it"})
            return kind.__new__(sub, *args)
        except TypeError:       # a type that cannot be combined: the type itself
            return kind(*args)


def _args_kept(self, *args):
    """(the arguments were kept by ``__new__``)"""


class FallbackWarning(UserWarning):
    """A function ran as plain Python: it uses a construct cppcodegen cannot compile (the
    message names it and the line); option ``fallback=False`` raises the error instead."""


class PlainPython:
    """The variant of a function that could not be compiled for these arguments: it runs
    the plain function (``error`` says why). Option ``fallback`` (on by default)."""
    plan = None

    def __init__(self, fn, error: Exception):
        self.fn, self.error = fn, error

    def __call__(self, args):
        return self.fn(*args)


def fall_back(fn, error: Exception, enabled: bool) -> PlainPython:
    """The plain-Python variant for ``error`` (warning once), or ``error`` raised again when
    the fallback is off. Only a construct the compiler cannot take falls back: a user's own
    mistake (a shape mismatch, an index out of range) raises as NumPy raises it."""
    if not enabled or isinstance(error, AssertionError) and not internal(error):
        raise error             # (the user's own assert fails as it does in Python)
    import warnings
    warnings.warn(f"cppcodegen: {getattr(fn, '__qualname__', fn)} runs as plain Python for "
                  f"these arguments (not compiled): {type(error).__name__}: {error}",
                  FallbackWarning, stacklevel=4)
    return PlainPython(fn, error)


def internal(error: BaseException) -> bool:
    """Is ``error`` an assertion of the compiler itself failing (not the user's ``assert``)?
    With the fallback on, the function then runs as plain Python, the error in the warning."""
    if not isinstance(error, AssertionError) or error.__traceback__ is None:
        return False
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PKG_DIR)


def user_location() -> str:
    """file:line of the innermost frame outside cppcodegen and NumPy (the user's code)."""
    frame = sys._getframe(1)
    while frame is not None:
        fname = frame.f_code.co_filename
        if _users(fname):
            return f"{fname}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>:0"


def called_by_user(depth: int = 1) -> bool:
    """Is the caller's caller (``depth`` frames above it) the user's code?"""
    return _users(sys._getframe(depth + 1).f_code.co_filename)


@functools.lru_cache(maxsize=1024)
def _users(fname: str) -> bool:
    """Is the code of file ``fname`` the user's (not cppcodegen's, NumPy's or frozen)?
    Asked for every frame of every node a trace makes: once per file."""
    import numpy
    np_dir = os.path.dirname(os.path.abspath(numpy.__file__))
    path = os.path.abspath(fname) if not fname.startswith("<") else fname
    return not (path.startswith(_PKG_DIR) or path.startswith(np_dir) or
                fname.startswith("<frozen"))


RAISE_MARK = "_cppcodegen_raise"
"""The attribute naming where an exception is raised as the user's program raises it (their
``raise``, an index out of bounds): in a branch traced on an array value, a check that fails
where that branch runs (``frontend/raises.py``)."""


def out_of_bounds(index, dim: int, size) -> IndexError:
    """NumPy's IndexError for ``index`` on axis ``dim`` of ``size``, at the user's line."""
    where = user_location()
    e = IndexError(f"index {index} is out of bounds for axis {dim} with size {size} (at {where})")
    setattr(e, RAISE_MARK, where)
    return e

