"""Python's ``math`` functions on traced values: ``math.sqrt(A[i, i])``, ``math.exp(-x[k])``.

In: a call of a ``math`` function from the user's code during a trace (installed on the
``math`` module by ``replace.py``, like NumPy's constructors). Out: when an argument is
traced (a 0-d or one-element array value, or a loop's index), the NumPy ufunc computing the
same thing on the value as a Python float (float64, weak like a Python float), or a Python
int for ``floor``/``ceil``/``trunc``; ``math``'s own function otherwise.

One difference from Python: where ``math`` raises (``math.sqrt(-1.0)``: "math domain error")
the compiled value is NumPy's (NaN), as a compiled loop cannot raise in the middle.
``from math import sqrt`` binds the function before any trace and is not replaced. ``cmath``'s
functions likewise, on the value as a Python complex (NumPy's complex ufuncs).
"""
from __future__ import annotations

import cmath
import math

import numpy as np

from ..ir.graph import make_node
from ..ir.ufuncs import PYTHON_MATH
from ..errors import user_location
from .iteration import has_loop_symbol, size_proxy, symbolic_int
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


def _float(ufunc):
    def fn(*args, original):
        if not any(_traced(a) for a in args):
            return original(*args)
        r = ufunc(*[_value(a) for a in args])
        r.weak = True           # a Python float
        return r
    return fn


def _integral(ufunc):
    def fn(x, original):
        if not _traced(x):
            return original(x)
        if isinstance(x, Proxy) and x.dtype.kind in "iub":
            return _value(x, np.int64)
        return _value(ufunc(_value(x)), np.int64)
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
    r = np.log(_value(x)) if base is None else np.log(_value(x)) / np.log(_value(base))
    r.weak = True
    return r


TABLE = {name: _float(uf) for name, uf in {
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
        return wrap(make_node(name, (v.node,), (), np.dtype(np.float64), user_location()),
                    weak=True, scalar=True)
    return fn


TABLE.update({name: _no_ufunc(name) for name in PYTHON_MATH})
TABLE.update({"floor": _integral(np.floor), "ceil": _integral(np.ceil),
              "trunc": _integral(np.trunc), "isnan": _test(np.isnan),
              "isinf": _test(np.isinf), "isfinite": _test(np.isfinite), "log": _log})

replace.register(math, TABLE, pass_original=True)


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
