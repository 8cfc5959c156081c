"""``np.polynomial``'s series evaluated on traced values: ``polyval``, ``chebval``,
``legval``, ``hermval`` and ``hermeval`` of the ``numpy.polynomial`` modules, called as
course notes call them (``np.polynomial.chebyshev.chebval(x, c)``).

NumPy's functions convert the coefficients with ``np.array``, which a traced array cannot
be. While a trace runs, once the program has loaded ``numpy.polynomial`` (or the traced
function names it: ``wanted``), they are replaced (``replace.py``, for calls from the
user's code) by the same recurrences in the same order of operations, so the results are
NumPy's bit for bit: Horner's rule for a power series, the three-term recurrence run
backwards (Clenshaw's) for the others. The coefficients need a length known while tracing
(the loop over them is unrolled, as NumPy's Python loop runs); ``tensor`` is NumPy's (the
coefficients' extra axes broadcast against all of ``x``'s). A name imported from the module
before the call (``from numpy.polynomial.chebyshev import chebval``) is NumPy's own.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np

from . import replace
from .proxy import asproxy, Proxy
from .views import reshape

NAMES = {"polynomial", "chebval", "legval", "hermval", "hermeval"}


def _prepared(x, c, tensor):
    """(x, c) as NumPy's evaluators take them: c at least 1-D and float where it was
    integer or bool, its axes extended by x's where ``tensor``."""
    c = asproxy(c) if isinstance(c, Proxy) else asproxy(np.array(c, ndmin=1))
    if c.ndim == 0:
        c = reshape(c, (1,))
    if c.dtype.kind in "biu":
        c = c + 0.0
    if isinstance(x, (tuple, list)):
        x = asproxy(np.asarray(x))
    if isinstance(x, (Proxy, np.ndarray)) and tensor:
        c = reshape(c, tuple(c.shape) + (1,) * np.ndim(x))
    if not isinstance(c.shape[0], int):
        raise TypeError("a polynomial's coefficients must have a length known when the "
                        "function is compiled")
    return x, c


def polyval(x, c, tensor=True):
    x, c = _prepared(x, c, tensor)
    value = c[-1] + x * 0
    for i in range(2, c.shape[0] + 1):     # Horner: the highest coefficient first
        value = c[-i] + value * x
    return value


def _clenshaw(c, step, last):
    """The backward recurrence of a series: ``step(i, nd, b0, b1)`` the next pair from the
    coefficient ``c[-i]`` (``nd``: the degree NumPy's loop has counted down to), ``last``
    the value from the final pair."""
    n = c.shape[0]
    if n == 1:
        b0, b1 = c[0], 0
    elif n == 2:
        b0, b1 = c[0], c[1]
    else:
        b0, b1 = c[-2], c[-1]
        for i in range(3, n + 1):
            b0, b1 = step(i, n - i + 2, b0, b1)
    return last(b0, b1)


def chebval(x, c, tensor=True):
    x, c = _prepared(x, c, tensor)
    x2 = 2 * x if c.shape[0] > 2 else None
    return _clenshaw(c, lambda i, nd, b0, b1: (c[-i] - b1, b0 + b1 * x2),
                     lambda b0, b1: b0 + b1 * x)


def legval(x, c, tensor=True):
    x, c = _prepared(x, c, tensor)
    return _clenshaw(c, lambda i, nd, b0, b1: (c[-i] - b1 * ((nd - 1) / nd),   # (ratios of
                                               b0 + b1 * x * ((2 * nd - 1) / nd)),  # ints)
                     lambda b0, b1: b0 + b1 * x)


def hermval(x, c, tensor=True):
    x, c = _prepared(x, c, tensor)
    x2 = x * 2
    return _clenshaw(c, lambda i, nd, b0, b1: (c[-i] - b1 * (2 * (nd - 1)), b0 + b1 * x2),
                     lambda b0, b1: b0 + b1 * x2)


def hermeval(x, c, tensor=True):
    x, c = _prepared(x, c, tensor)
    return _clenshaw(c, lambda i, nd, b0, b1: (c[-i] - b1 * (nd - 1), b0 + b1 * x),
                     lambda b0, b1: b0 + b1 * x)


TABLES = {"polynomial": {"polyval": polyval}, "chebyshev": {"chebval": chebval},
          "legendre": {"legval": legval}, "hermite": {"hermval": hermval},
          "hermite_e": {"hermeval": hermeval}}
_DONE = []


def wanted(fn) -> None:
    """Load ``numpy.polynomial`` before a trace of ``fn`` when its code names it (it costs
    0.15 s: not at ``import cppcodegen``, nor for functions that do not use it)."""
    code = getattr(fn, "__code__", None)
    if code is not None and "numpy.polynomial" not in sys.modules and \
            NAMES & set(code.co_names):
        importlib.import_module("numpy.polynomial")


def install() -> None:
    """Register the replacements once numpy.polynomial is loaded (when a trace starts)."""
    if _DONE or "numpy.polynomial" not in sys.modules:
        return
    _DONE.append(True)
    for name, table in TABLES.items():
        replace.register(importlib.import_module(f"numpy.polynomial.{name}"), table)


replace.LAZY.append(install)
