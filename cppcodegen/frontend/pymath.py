"""Python's ``math`` functions on traced values: ``math.sqrt(A[i, i])``, ``math.exp(-x[k])``.

In: a call of a ``math`` function from the user's code during a trace (installed on the
``math`` module by ``replace.py``, like NumPy's constructors). Out: when an argument is
traced (a 0-d or one-element array value, or a loop's index), the NumPy ufunc computing the
same thing on the value as a Python float (float64, weak like a Python float), or a Python
int for ``floor``/``ceil``/``trunc``; ``math``'s own function otherwise.

Where ``math`` raises, the compiled function raises too, checked as the program runs (as
CPython decides it: a NaN from arguments that are not NaN is ValueError "math domain error",
``math.sqrt(-1.0)``, ``math.log(0.0)``'s infinity too; an infinity from finite arguments is
OverflowError "math range error" for the functions that can overflow, ``math.exp(1000.0)``).
``from math import sqrt`` binds the function before any trace and is not replaced. ``cmath``'s
functions likewise, on the value as a Python complex (NumPy's complex ufuncs).
"""
from __future__ import annotations

import cmath
import functools
import math

import numpy as np

from ..ir.graph import make_node
from ..ir.ufuncs import PYTHON_MATH
from ..errors import UnsupportedError, user_location
from .iteration import has_loop_symbol, size_proxy, symbolic_int
from .bounds import bounds
from .proxy import cast_node, Proxy, wrap
from . import replace


def _traced(x) -> bool:
    return isinstance(x, Proxy) or (symbolic_int(x) and has_loop_symbol(x))


def _value(x, dtype=np.float64):
    """``x`` as a 0-d traced value of ``dtype`` (what ``float(x)`` gives Python)."""
    if symbolic_int(x):
        x = size_proxy(x.expr)
    if not isinstance(x, Proxy):
        return x
    node = x.node
    if node.shape:
        if any(d != 1 for d in node.shape):
            raise TypeError(f"only length-1 arrays can be converted to Python scalars "
                            f"(at {user_location()})")
        node = make_node("reshape", (node,), (), node.dtype, user_location())
    return wrap(cast_node(node, np.dtype(dtype)), weak=True, scalar=True)


# math functions an infinity of finite arguments is an overflow of (else a domain error)
OVERFLOWS = {"exp", "expm1", "cosh", "sinh", "pow", "hypot", "gamma", "lgamma"}
UNCHECKED = {"fabs", "copysign", "degrees", "radians", "atan", "tanh", "erf", "erfc"}


# the arguments a math function of one argument raises ValueError for, as one comparison
DOMAINS = {"sqrt": lambda x: np.less(x, 0.0), "log": lambda x: np.less_equal(x, 0.0),
           "log2": lambda x: np.less_equal(x, 0.0), "log10": lambda x: np.less_equal(x, 0.0),
           "log1p": lambda x: np.less_equal(x, -1.0), "acosh": lambda x: np.less(x, 1.0),
           "asin": lambda x: np.greater(np.absolute(x), 1.0),
           "acos": lambda x: np.greater(np.absolute(x), 1.0),
           "atanh": lambda x: np.greater_equal(np.absolute(x), 1.0),
           "sin": np.isinf, "cos": np.isinf, "tan": np.isinf}


# (lo, hi) of an argument inside the function's domain (``bounds.py``): no check needed
INSIDE = {"sqrt": lambda lo, hi: lo >= 0, "log": lambda lo, hi: lo > 0,
          "log2": lambda lo, hi: lo > 0, "log10": lambda lo, hi: lo > 0,
          "log1p": lambda lo, hi: lo > -1, "acosh": lambda lo, hi: lo >= 1}


def _checked(name, r, values):
    """``r`` (``math.<name>`` of ``values``) behind CPython's checks: a NaN from no NaN is a
    ValueError, an infinity from finite arguments an OverflowError (``OVERFLOWS``; else a
    ValueError: ``math.log(0.0)``, or ``math.gamma(0.0)``'s pole)."""
    from .raises import error_check     # (raises.py imports indexing.py, which imports this)
    if name in UNCHECKED:               # (a Python float, as math returns)
        return wrap(r.node, weak=True, scalar=True)
    where = user_location()
    domain = (ValueError, (f"math domain error (at {where})",))
    if name in DOMAINS:                 # one comparison of the argument
        span = bounds(values[0])
        if span is not None and name in INSIDE and INSIDE[name](*span):
            return wrap(r.node, weak=True, scalar=True)     # (math.sqrt(gx * gx + gy * gy))
        ok = np.logical_not(DOMAINS[name](values[0]))
        return wrap(error_check(r, ok, domain, where, stop=False).node, weak=True, scalar=True)
    traced = [v for v in values if isinstance(v, Proxy)] or [r]
    finite = functools.reduce(np.logical_and, [np.isfinite(v) for v in traced])
    if name not in ("exp", "expm1", "cosh", "sinh"):    # (those are never NaN of a number)
        nan_in = functools.reduce(np.logical_or, [np.isnan(v) for v in traced])
        ok = np.logical_or(np.logical_not(np.isnan(r)), nan_in)
        r = wrap(error_check(r, ok, domain, where, stop=False).node, weak=True, scalar=True)
    infinite = np.logical_and(np.isinf(r), finite)
    if name in ("gamma", "lgamma", "pow"):  # a pole (gamma's at integers <= 0, 0.0 ** -1)
        at = np.less_equal(values[0], 0.0) if name != "pow" else np.equal(values[0], 0.0)
        pole = np.logical_and(infinite, at)         # is a domain error
        r = wrap(error_check(r, np.logical_not(pole), domain, where, stop=False).node, weak=True,
                 scalar=True)
    error = (OverflowError, (f"math range error (at {where})",)) if name in OVERFLOWS else domain
    return wrap(error_check(r, np.logical_not(infinite), error, where, stop=False).node,
                weak=True, scalar=True)


def _float(ufunc, name):
    def fn(*args, original):
        if not any(_traced(a) for a in args):
            return original(*args)
        values = [_value(a) for a in args]
        return _checked(name, ufunc(*values), values)      # a Python float (weak)
    return fn


def _integral(ufunc):
    def fn(x, original):
        if not _traced(x):
            return original(x)
        if isinstance(x, Proxy) and x.dtype.kind in "iub":
            return _value(x, np.int64)
        from .pyints import int_of_float        # (NaN, infinities, past int64: as Python,
        return _value(int_of_float(ufunc(_value(x))), np.int64)    # the call run again)
    return fn


def _test(ufunc):
    def fn(x, original):
        if not _traced(x):
            return original(x)
        return ufunc(_value(x))
    return fn


def _log(x, base=None, *, original):
    if not (_traced(x) or _traced(base)):
        return original(x) if base is None else original(x, base)
    values = [_value(x)] + ([] if base is None else [_value(base)])
    r = np.log(values[0]) if base is None else np.log(values[0]) / np.log(values[1])
    return _checked("log" if base is None else "log of a base", r, values)


TABLE = {name: _float(uf, name) for name, uf in {
    "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "fabs": np.absolute, "hypot": np.hypot, "pow": np.power,
    "copysign": np.copysign, "degrees": np.degrees, "radians": np.radians, "fmod": np.fmod,
}.items()}
def _no_ufunc(name):
    """math.erf and the like (no NumPy ufunc): an op of their own on the float64 value."""
    def fn(x, original):
        if not _traced(x):
            return original(x)
        v = _value(x)
        return _checked(name, wrap(make_node(name, (v.node,), (), np.dtype(np.float64),
                                             user_location()), weak=True, scalar=True), [v])
    return fn


TABLE.update({name: _no_ufunc(name) for name in PYTHON_MATH})
TABLE.update({"floor": _integral(np.floor), "ceil": _integral(np.ceil),
              "trunc": _integral(np.trunc), "isnan": _test(np.isnan),
              "isinf": _test(np.isinf), "isfinite": _test(np.isfinite), "log": _log})



def _isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0, original):
    """``math.isclose`` as CPython computes it: equal values (infinities too) are close, an
    infinity is close to nothing else, NaN to nothing; otherwise the difference is within
    ``rel_tol`` of either value or within ``abs_tol``."""
    if not any(_traced(v) for v in (a, b, rel_tol, abs_tol)):
        return original(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    if any(not _traced(t) and t < 0 for t in (rel_tol, abs_tol)):
        raise ValueError("tolerances must be non-negative")
    x, y, rt, at = (_value(v) for v in (a, b, rel_tol, abs_tol))
    diff = np.absolute(y - x)
    near = (diff <= np.absolute(rt * y)) | (diff <= np.absolute(rt * x)) | (diff <= at)
    close = (x == y) | (near & ~np.isinf(x) & ~np.isinf(y))
    return wrap(close.node, weak=True)      # (a Python bool)


TABLE["isclose"] = _isclose


def _not_compiled(name):
    """math.gcd and the like, which have no compiled form: of a traced value, a clear error
    naming the function (with the fallback on, the call runs as Python)."""
    def fn(*args, original, **kw):
        if any(_traced(a) for a in args):
            raise UnsupportedError(f"math.{name} of a value computed from arrays (at "
                                   f"{user_location()}) is not compiled")
        return original(*args, **kw)
    return fn


TABLE.update({name: _not_compiled(name) for name in ("gcd", "lcm", "comb", "perm", "factorial",
                                                     "isqrt", "prod", "fsum", "dist", "nextafter",
                                                     "ulp", "frexp", "ldexp", "modf", "remainder")
              if hasattr(math, name)})
replace.register(math, TABLE, pass_original=True)


def builtin_pow(base, exp, mod=None):
    """Python's ``pow``: ``base ** exp``; with ``mod`` of traced values, not compiled (a clear
    error; it raised TypeError)."""
    if mod is None:
        return base ** exp
    if any(_traced(v) for v in (base, exp, mod)):
        raise UnsupportedError(f"pow(base, exp, mod) of values computed from arrays (at "
                               f"{user_location()}) is not compiled")
    return pow(base, exp, mod)


def _complex(ufunc, dtype=np.complex128):
    """A ``cmath`` function: NumPy's complex ufunc on the value as a Python complex."""
    def fn(*args, original):
        if not any(_traced(a) for a in args):
            return original(*args)
        r = ufunc(*[_value(a, dtype) for a in args])
        for v in r if isinstance(r, tuple) else (r,):
            v.weak = True           # (Python numbers; polar: two floats)
        return r
    return fn


def _clog(x, base=None, *, original):
    if not (_traced(x) or _traced(base)):
        return original(x) if base is None else original(x, base)
    r = np.log(_value(x, np.complex128))
    r = r if base is None else r / np.log(_value(base, np.complex128))
    r.weak = True
    return r


def _rect(r, phi):
    return _value(r) * np.cos(_value(phi)) + 1j * (_value(r) * np.sin(_value(phi)))


CMATH = {name: _complex(uf) for name, uf in {
    "exp": np.exp, "sqrt": np.sqrt, "log10": np.log10, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "phase": np.angle, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "polar": lambda z: (np.abs(z), np.angle(z))}.items()}
CMATH.update({"log": _clog, "rect": _complex(_rect, np.float64)})
replace.register(cmath, CMATH, pass_original=True)
