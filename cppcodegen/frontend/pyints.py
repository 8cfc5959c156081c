"""Python ints in a compiled function: int64 values whose ``+``, ``-``, ``*`` and negation
raise ``OverflowError`` where the result leaves int64.

Python's ints have no limit, so a wrapped int64 (``p = 1; for i in range(1, 30): p *= i``,
a linear congruential generator's ``a * seed``) would be a wrong result. The operators of a
Python int (a weak int64 proxy, ``proxy.weak``) are followed by a check
(``raises.error_check``) that fails when the wrapped result differs from the exact one:

- ``a + b``: the operands have one sign and the result the other (not for a constant operand
  of at most 2^20 in magnitude: ``_small``);
- ``a - b``: the operands differ in sign and the result's differs from ``a``'s;
- ``a * b``: the multiply's overflow flag (``mul_fits``); by a constant, two compares of the
  other operand;
- ``-a``, ``abs(a)``: ``a`` is int64's minimum;
- ``a << b``: ``b`` in [0, 64) and the result shifted back is ``a``;
- ``a ** b``: ``|a| ** b`` in float64 below 2^62 (nearer int64's end the call runs as
  Python too: exact, only slower);
- ``a // b``, ``divmod(a, b)``: not int64's minimum over -1.

NumPy integers (``np.int64(5)``, an element of an int array) wrap as NumPy wraps them: no check.

Division of Python numbers (ints, floats, sizes, or a weak proxy of one) by a zero raises
``ZeroDivisionError`` as Python does (``1.0 / count`` after a loop that counted nothing), where
NumPy's scalars give inf/nan with a warning: ``/``, ``//``, ``%``, ``divmod`` and ``0 ** -k``
are followed by a check that the divisor is not zero. A Python int to a negative Python int
power is a float: ``n ** -1`` of an int ``n`` is computed in float64; an int exponent known
only when the program runs is checked not negative (``NegativeIntPower``: the call runs again
as Python, as for an overflow). A NumPy scalar operand (``x.sum() / n``)
keeps NumPy's rule.
"""
from __future__ import annotations

import numpy as np

from ..errors import (ComplexPower, FloatToInt, IntOverflow, NegativeIntPower, TraceError,
                      user_location)
from ..ir.graph import make_node, RANGES
from .proxy import as_node, cast_node, Proxy, python_number, size_operand, wrap
from .elementwise import traced_python_int
from .raises import error_check
from .bounds import bounds, cannot_overflow
from .sizes import is_dim
from .iteration import in_prange
from . import pyflags

INT64_MIN = np.int64(np.iinfo(np.int64).min)

# Python operator -> (operation, operands reflected)
CHECKED = {"__add__": ("add", False), "__radd__": ("add", True), "__iadd__": ("add", False),
           "__sub__": ("sub", False), "__rsub__": ("sub", True), "__isub__": ("sub", False),
           "__mul__": ("mul", False), "__rmul__": ("mul", True), "__imul__": ("mul", False),
           "__neg__": ("neg", False), "__abs__": ("neg", False),
           "__lshift__": ("lshift", False), "__rlshift__": ("lshift", True),
           "__ilshift__": ("lshift", False)}


def _ok(kind, a, r, b=None):
    """1 where ``r`` is the exact result of ``a <kind> b``."""
    if kind == "add":
        return np.greater_equal(np.bitwise_and(np.bitwise_xor(a, r), np.bitwise_xor(b, r)), 0)
    if kind == "sub":
        return np.greater_equal(np.bitwise_and(np.bitwise_xor(a, b), np.bitwise_xor(a, r)), 0)
    if kind == "mul" and _constant(a) != _constant(b):  # (c * k: two compares, no division)
        c, v = (int(a), b) if _constant(a) else (int(b), a)
        if c == 0:
            return np.equal(r, r)
        m = abs(c)                  # the v with MIN <= v * c <= MAX
        lo, hi = (-(2 ** 63 // m), (2 ** 63 - 1) // m) if c > 0 else \
            (-((2 ** 63 - 1) // m), 2 ** 63 // m)
        return np.logical_and(np.greater_equal(v, np.int64(lo)),
                              np.less_equal(v, np.int64(min(hi, 2 ** 63 - 1))))
    if kind == "mul":       # (the multiply's overflow flag, not a division)
        shape = tuple(r.node.shape) if isinstance(r, Proxy) else ()
        return wrap(make_node("mul_fits", (as_node(a, np.dtype(np.int64)),
                                           as_node(b, np.dtype(np.int64))),
                              shape, np.dtype(bool), user_location()), scalar=not shape)
    if kind == "lshift":    # (a shift in range whose result shifted back is a)
        return np.logical_and(np.logical_and(np.greater_equal(b, 0), np.less(b, 64)),
                              np.equal(np.right_shift(r, np.clip(b, 0, 63)), a))
    if kind == "pow":       # (|a| ** b below 2**62 in float64, whose error is far smaller:
        big = np.power(np.abs(np.float64(a) if not isinstance(a, Proxy)     # one nearer
                              else a.astype(np.float64)), b)            # int64's end runs
        return np.less(big, 2.0 ** 62)                                  # as Python)
    return np.not_equal(a, INT64_MIN)


SMALL = 2 ** 20


def _constant(v) -> bool:
    return type(v) is int or isinstance(v, np.integer)


def _small(v) -> bool:
    """A constant step (``c += 1``, ``i - 2``): a sum of it and a value that is itself exact
    would need 2^43 steps to leave int64 (hours of a loop doing nothing else): not checked,
    so a counter under a branch stays a select, not a branch on every element."""
    return (type(v) is int or isinstance(v, np.integer)) and -SMALL <= int(v) <= SMALL


# Python operator -> operands reflected, for the operators that raise ZeroDivisionError
DIVIDING = {f"__{p}{n}__": p == "r" for n in ("truediv", "floordiv", "mod", "pow")
            for p in ("", "r", "i")}
DIVIDING.update(__divmod__=False, __rdivmod__=True)


def _int(v) -> bool:
    return type(v) in (int, bool) or is_dim(v) or isinstance(v, Proxy) and v.dtype.kind in "biu"


def _divided(name: str, args: tuple, result):
    """``result`` of ``/``, ``//``, ``%``, ``divmod`` or ``**`` of Python numbers behind a
    check that raises ZeroDivisionError where Python does."""
    if len(args) != 2 or not all(python_number(v) or pyflags.dynamic(pyflags.flag(v))
                                 for v in args) or not any(isinstance(v, Proxy) for v in args):
        return result
    a, b = (args[1], args[0]) if DIVIDING[name] else args
    a, b = (size_operand(v) if is_dim(v) else v for v in (a, b))  # (u ** (i - j): a loop's
    where = user_location()                                         # index, a traced int)
    python = pyflags.all_python(args, where)    # (a Python number on some paths only: a
                                                # bool node; Python's rule where both are)
    if "pow" in name and _int(a) and _int(b) and isinstance(b, Proxy):
        error = (NegativeIntPower, (f"a Python int raised to a negative Python int at {where} "
                                    "is a float, where the compiled function keeps an int; "
                                    "write float(base) ** exponent",))
        return wrap(error_check(result, np.greater_equal(b, 0), error, where,
                                stop=False).node, weak=True, scalar=result.scalar)
    if "pow" in name:
        result = _finite_power(a, b, _real_power(a, b, result, where), where, python)
        if not isinstance(a, Proxy) and a != 0 or not isinstance(b, Proxy) and b >= 0:
            return result
        ok = np.logical_not(np.logical_and(np.equal(a, 0), np.less(b, 0)))
        message = "0.0 cannot be raised to a negative power"
    else:
        if not isinstance(b, Proxy) and b != 0:
            return result               # (a constant divisor that is not 0)
        ok = np.not_equal(b, 0)         # (a constant 0: False wherever this runs)
        message = "float division by zero" if "truediv" in name else \
            "integer division or modulo by zero"
    if pyflags.dynamic(python):     # NumPy's inf or nan where an operand is NumPy's
        ok = np.logical_or(ok, np.logical_not(wrap(python, scalar=True)))
    error = (ZeroDivisionError, (f"{message} (at {where})",))
    if isinstance(result, tuple):       # divmod of Python numbers: Python numbers, the
        q, r = result                   # check on the quotient (kept either way)
        return wrap(error_check(q, ok, error, where, stop=False).node, weak=True), \
            wrap(r.node, weak=True)
    out = wrap(error_check(result, ok, error, where, stop=False).node, weak=result.weak,
               scalar=result.scalar)
    return pyflags.keep(out, result)


def _real_power(a, b, result, where):
    """``a ** b`` of Python numbers behind a check that the result is real: a finite negative
    base to a finite fractional exponent is complex in Python (NaN in NumPy), so such a call
    runs again as Python (``ComplexPower``)."""
    if result.dtype.kind != "f" or _int(b) or is_dim(a) or not isinstance(a, Proxy) and a >= 0 or \
            not isinstance(b, Proxy) and (not np.isfinite(b) or b == np.floor(b)):
        return result
    complex_ = np.logical_and(np.logical_and(np.less(a, 0), np.isfinite(a)),
                              np.logical_and(np.isfinite(b), np.not_equal(np.floor(b), b)))
    error = (ComplexPower, (f"a negative number raised to a fractional power at {where} is "
                            "complex in Python, where the compiled function keeps a float",))
    out = wrap(error_check(result, np.logical_not(complex_), error, where, stop=False).node,
               weak=result.weak, scalar=result.scalar)
    return pyflags.keep(out, result)


def _finite_power(a, b, result, where, python):
    """``a ** b`` of Python floats behind a check that a finite base and exponent give a
    finite result: Python raises OverflowError there (NumPy's inf)."""
    if result.dtype.kind != "f" or result.shape != ():
        return result
    finite = np.logical_and(np.logical_and(np.isfinite(a), np.isfinite(b)),
                            np.not_equal(a, 0))     # (0.0 ** -1: ZeroDivisionError)
    ok = np.logical_or(np.isfinite(result), np.logical_not(finite))
    if pyflags.dynamic(python):     # (a NumPy number on some paths: NumPy's inf there)
        ok = np.logical_or(ok, np.logical_not(wrap(python, scalar=True)))
    error = (OverflowError, (34, "Numerical result out of range"))
    out = wrap(error_check(result, ok, error, where, stop=False).node, weak=result.weak,
               scalar=result.scalar)
    return pyflags.keep(out, result)


BITWISE = {"and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>", "invert": "~"}


def bitwise_symbol(name: str):
    """The symbol of the Python bitwise operator method ``name`` (``__rlshift__``: ``<<``), else
    None: asked once per operator method, when ndarray.py wraps it."""
    core = name.strip("_")
    return next((sym for op, sym in BITWISE.items() if core in (op, "r" + op, "i" + op)), None)


def int_operands(symbol: str, args: tuple) -> tuple:
    """``args`` of the Python bitwise operator ``symbol`` (``c << 1``, ``~c``), where one is a
    float carried for a value that is a Python int on some paths only (``c = 0`` before a
    loop that may add float elements: its int flag, frontend/pyflags.py): that value as the
    Python int it is, behind a check that it is one where the operator runs (Python's
    TypeError on a float there)."""
    if not any(isinstance(a, Proxy) and a.intflag is not None and
                                 a.dtype.kind == "f" for a in args):
        return args
    where = user_location()
    out = []
    for a in args:
        if isinstance(a, Proxy) and a.intflag is not None and a.dtype.kind == "f":
            error = (TypeError, (f"unsupported operand type(s) for {symbol}: 'float' (a value "
                                 f"that is a float on the path this call took, at {where})",))
            a = wrap(error_check(a, a.intflag, error, where, stop=not in_prange()).node,
                     weak=True, scalar=a.scalar)
            a = wrap(cast_node(a.node, np.dtype(np.int64)), weak=True)
        out.append(a)
    return tuple(out)


def checked_int(name: str, args: tuple, result):
    """``result`` of the Python operator ``name`` on ``args``, behind an overflow check when
    it is a Python int, and a zero-divisor check when it divides Python numbers (see the
    module docstring)."""
    if name in DIVIDING:
        result = _divided(name, args, result)
        if "floordiv" in name or "divmod" in name:
            return _quotient_fits(name, args, result)
        if "pow" not in name or len(args) != 2:
            return result
        kind, reflected = "pow", DIVIDING[name]
    else:
        kind, reflected = CHECKED.get(name, (None, False))
    if kind is None or not isinstance(result, Proxy) or not result.weak or \
            result.dtype.kind != "i" or result.shape != () or \
            kind in ("add", "sub") and any(_small(v) for v in args):
        return result
    ops = tuple(np.int64(v) if type(v) is int else v for v in args)
    if any(isinstance(v, Proxy) and v.dtype != np.int64 for v in ops):
        return result                   # (a bool operand: its sums stay small)
    a, b = (ops[1], ops[0]) if reflected else (ops + (None,))[:2]
    if cannot_overflow(kind, a, b):
        return result                   # (``int(img[i, j]) * 2``: no check to run)
    where = user_location()
    error = (IntOverflow, (f"Python int arithmetic at {where} leaves int64, where the "
                             "compiled function keeps Python ints (Python's have no limit); "
                             "compute it with np.int64 values to wrap as NumPy does, or "
                             "with floats",))
    return wrap(error_check(result, _ok(kind, a, result, b), error, where,   # (a prange's
                            stop=not in_prange()).node, weak=True)  # threads go on)


def _quotient_fits(name: str, args: tuple, result):
    """``a // b`` (or ``divmod``) of Python ints behind a check that it is not int64's
    minimum over -1, whose quotient 2**63 leaves int64 (the call runs as Python)."""
    q = result[0] if isinstance(result, tuple) else result
    if len(args) != 2 or not isinstance(q, Proxy) or not q.weak or q.dtype != np.int64 or \
            q.shape != ():
        return result
    a, b = (args[1], args[0]) if DIVIDING[name] else args
    if _constant(a) and int(a) != INT64_MIN or _constant(b) and int(b) != -1:
        return result               # (a constant operand that cannot make it: n // 2)
    where = user_location()
    error = (IntOverflow, (f"Python int floor division at {where} leaves int64 (the minimum "
                           "over -1), where the compiled function keeps Python ints",))
    ok = np.logical_or(np.not_equal(a, INT64_MIN), np.not_equal(b, -1))
    q = wrap(error_check(q, ok, error, where, stop=not in_prange()).node, weak=True)
    return (q, result[1]) if isinstance(result, tuple) else q


def _in_range(x, lo: float, hi: float, what: str, where: str):
    """``x`` (a float scalar) behind one check that its truncation is in [lo, hi), which NaN
    and infinities fail too: a call that fails it runs again as Python, which raises
    Python's error or computes the big int (``FloatToInt``); the program goes on meanwhile,
    so a prange loop may hold it."""
    t = np.trunc(x)
    ok = np.logical_and(np.less(t, hi), np.greater_equal(t, lo))
    error = (FloatToInt, (f"{what} at {where} of a float that is NaN, infinite or out of "
                          "range: Python raises ValueError or OverflowError there",))
    return wrap(error_check(x, ok, error, where, stop=False).node, weak=x.weak, scalar=x.scalar)


def int_of_float(x):
    """Python's ``int(x)`` of a float scalar (truncated, checked; cast by the caller)."""
    return np.trunc(_in_range(x, -float(2 ** 63), float(2 ** 63), "int()", user_location()))


def int_of_uint64(x):
    """Python's ``int(x)`` of a uint64 scalar, behind a check that it fits the int64 a Python
    int is kept in (past 2**63 the call runs again as Python: ``IntOverflow``)."""
    where = user_location()
    ok = np.less_equal(x, np.uint64(2 ** 63 - 1))
    error = (IntOverflow, (f"int() at {where} of a uint64 of 2**63 or more",))
    return wrap(error_check(x, ok, error, where, stop=False).node, weak=x.weak, scalar=x.scalar)


def stored_scalar(value, dtype: np.dtype, into_argument: bool = False):
    """``value`` stored by ``x[...] = value`` into an int array of ``dtype``: where NumPy's
    setitem converts the scalar through a Python int and raises OverflowError out of
    ``dtype``'s range, the store is checked: a Python int or float (a constant, or traced: a
    weak scalar) into any int array, and a NumPy scalar into a signed one; arrays and NumPy
    scalars into an unsigned array are cast (they wrap, as in NumPy). A Python complex
    (constant or traced) into an array that is not complex is NumPy's TypeError (a NumPy
    complex scalar is cast, with NumPy's ComplexWarning): refused (TraceError, a TypeError),
    so the call runs as Python, which raises where the store runs."""
    if dtype.kind in "iuf" and (type(value) is complex or isinstance(value, Proxy) and
                                value.weak and value.dtype.kind == "c" and not value.shape):
        what = "float() argument must be a string or a real number" if dtype.kind == "f" \
            else "int() argument must be a string, a bytes-like object or a real number"
        raise TraceError(f"{what}, not 'complex' (a Python complex stored into a {dtype} array "
                         f"at {user_location()}; NumPy raises TypeError where the store runs)")
    if dtype.kind not in "iu":
        return value
    into_argument = into_argument and not in_prange()   # (threads cannot stop one another)
    if is_dim(value) and type(value) is not int:     # (a loop's index or a size, ``a[i] =
        if dtype == np.int64:                           # k + i``: it is an int64 already)
            return value
        value = size_operand(value)
    where = user_location()
    info = np.iinfo(dtype)
    if type(value) in (int, float):         # a constant: NumPy's error where the store runs
        t = int(value) if type(value) is int or np.isfinite(value) else None
        if t is not None and info.min <= t <= info.max:
            return value
        error = (OverflowError, (f"Python integer {t} out of bounds for {dtype} (at {where})",)) \
            if t is not None else (ValueError, (f"cannot convert float NaN to integer (at "
                                                f"{where})",)) if np.isnan(value) else \
            (OverflowError, (f"cannot convert float infinity to integer (at {where})",))
        zero = wrap(as_node(np.int64(0)), weak=True, scalar=True)
        return wrap(error_check(zero, np.int64(0), error, where).node, weak=True, scalar=True)
    if not isinstance(value, Proxy) or value.shape != () or \
            not (value.weak or value.scalar and dtype.kind == "i") or \
            value.dtype.kind not in "fiu" or \
            value.dtype.kind != "f" and np.can_cast(value.dtype, dtype):
        return value
    message = ("Python int too large to convert to C long" if dtype == np.int64 else
               f"Python integer out of bounds for {dtype}")
    error = (OverflowError, (f"{message} (at {where})",))
    if value.dtype.kind != "f":         # (into the caller's array: the program stops at
        return _fitting(value, dtype, error, where, stop=into_argument)    # the bad store)
    if into_argument:                   # (the caller's array: Python's error at the bad
        return _stored_float(value, info, dtype, where)         # store, nothing after it)
    return _in_range(value, float(info.min), float(info.max) + 1.0, f"a store into {dtype}",
                     where)


def _stored_float(x, info, dtype: np.dtype, where: str):
    """A float scalar ``x`` stored into the caller's int array of ``dtype``: behind Python's
    checks where the store runs (NaN: ValueError; infinite or out of range after truncation:
    OverflowError), so the program stops there and writes nothing after it, as Python does."""
    nan = (ValueError, (f"cannot convert float NaN to integer (a store into {dtype} at "
                        f"{where})",))
    x = wrap(error_check(x, np.logical_not(np.isnan(x)), nan, where).node, weak=x.weak,
             scalar=x.scalar)
    t = np.trunc(x)
    ok = np.logical_and(np.less(t, float(info.max) + 1.0), np.greater_equal(t, float(info.min)))
    out = (OverflowError, (f"a float out of range of {dtype} (or infinite) stored into {dtype} "
                           f"at {where}: Python integer out of bounds",))
    return wrap(error_check(x, ok, out, where).node, weak=x.weak, scalar=x.scalar)


def python_int_into(value, dtype: np.dtype, into_argument: bool = False):
    """``value``, or where it is a Python int (a constant, or traced: a weak int scalar) and
    ``dtype`` an int type, behind NumPy's OverflowError check (``stored_scalar``): the value
    of ``x[mask] = v``, ``x[idx] = v``, ``np.full(n, v, dtype)``. (A NumPy scalar is cast
    there, as NumPy casts it.)"""
    if dtype.kind in "iu" and (type(value) is int or is_dim(value) or isinstance(value, Proxy)
                               and value.weak and not value.shape and value.dtype.kind in "iu"):
        return stored_scalar(value, dtype, into_argument)
    return value


def _fitting(value, dtype: np.dtype, error, where, stop: bool = False):
    """The int scalar ``value`` behind a check that it is inside ``dtype``'s range, else
    ``error`` when the program returns (a prange loop may hold the check), or with ``stop``
    where the check fails (a store into an argument: nothing after it is written)."""
    info = np.iinfo(dtype)
    span = bounds(value)
    if span is not None and info.min <= span[0] and span[1] <= info.max:
        return value                    # (``(int(a) + int(b)) // 2`` of uint8 into uint8)
    if value.node.op == "scalar" and value.dtype.kind in "iu":     # an argument: checked as
        RANGES.append((value.node.attr("index"), int(info.min), int(info.max)))  # a call
        return value                    # starts, before anything is written (``img += v``)
    ok = np.logical_and(np.less_equal(value, info.max), np.greater_equal(value, info.min))
    return wrap(error_check(value, ok, error, where, stop=stop).node, weak=value.weak,
                scalar=value.scalar)


def operand(value, dtype: np.dtype):
    """A Python int operand (traced: a weak int scalar) of a NumPy operation whose loop is
    the narrower int ``dtype`` (NEP 50 casts it to the array's dtype): behind a check that
    it fits, else NumPy's OverflowError where the operation runs. (A size or a loop's index
    too: ``x[i] + i`` with uint8 ``x`` past 255 iterations.)"""
    if not traced_python_int(value, dtype):
        return value
    if not isinstance(value, Proxy):
        value = size_operand(value)
    where = user_location()
    return _fitting(value, dtype, (OverflowError, (f"Python integer out of bounds for {dtype} "
                                                   f"(at {where})",)), where)


# --------------------------------------------------------------------------- int methods

def _magnitude(x: Proxy) -> Proxy:
    """|x| of an integer scalar as uint64 (int64's minimum: 2**63, exactly)."""
    if x.dtype.kind != "u":
        x = np.absolute(x.astype(np.int64))         # (int64's minimum stays: 2**63 as uint64)
    return x.astype(np.uint64)


def _ones(u: Proxy) -> Proxy:
    """The set bits of uint64 ``u``, counted in its lanes (no table, no branch)."""
    m1, m2, m4 = (np.uint64(0x5555555555555555), np.uint64(0x3333333333333333),
                  np.uint64(0x0F0F0F0F0F0F0F0F))
    u = u - ((u >> np.uint64(1)) & m1)
    u = (u & m2) + ((u >> np.uint64(2)) & m2)
    u = (u + (u >> np.uint64(4))) & m4
    return (u * np.uint64(0x0101010101010101)) >> np.uint64(56)


def _int_method(name):
    def method(self):
        if self.ndim or self.dtype.kind not in "biu" or name == "bit_length" and not self.weak:
            kind = f"numpy.{self.dtype}" if not self.ndim else "numpy.ndarray"
            raise AttributeError(f"'{kind}' object has no attribute '{name}' (at "
                                 f"{user_location()})")     # (NumPy's ints: no bit_length)
        u = _magnitude(self)
        if name == "bit_length":            # every bit below the highest set, then counted
            for s in (1, 2, 4, 8, 16, 32):
                u = u | (u >> np.uint64(s))
        out = _ones(u).astype(np.int64)
        return wrap(out.node, weak=True, scalar=True)       # (a Python int)
    method.__name__ = name
    method.__doc__ = (f"int.{name}() of a traced integer (``int(a[i]).{name}()``): of its "
                      "magnitude, as Python's, a Python int.")
    return method


for _name in ("bit_count", "bit_length"):
    setattr(Proxy, _name, _int_method(_name))
