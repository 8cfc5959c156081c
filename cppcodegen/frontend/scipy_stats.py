"""``scipy.stats.norm``'s ``cdf``, ``sf``, ``pdf`` and ``logpdf`` of traced values (Black-Scholes
as blogs write it: ``S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)``).

scipy's methods convert their arguments to NumPy arrays, which a traced array cannot be
(``proxy.__array__``). While a trace runs, and only when the user's program has imported
scipy.stats, the methods of ``norm``'s class are replaced (``replace.py``) by these, which
compute from the C library's ``erfc`` (the op ``math.erfc`` compiles to) as scipy's ``ndtr``
does from Cephes': ``cdf(x) = erfc(-z / sqrt 2) / 2`` with ``z = (x - loc) / scale``. scipy
itself is not imported by cppcodegen. Other arguments, and every call not from the user's
code, get scipy's method.
"""
from __future__ import annotations

import sys

import numpy as np

from ..errors import user_location
from ..ir.graph import make_node
from . import replace
from .proxy import asproxy, Proxy, wrap

_SQRT1_2 = 0.7071067811865476
_LOG_SQRT_2PI = 0.9189385332046727      # log(sqrt(2 pi))


def _erfc(x: Proxy) -> Proxy:
    node = x.node
    return wrap(make_node("erfc", (node,), node.shape, np.dtype(np.float64), user_location()),
                scalar=not node.shape)


def _standard(x, loc, scale) -> Proxy:
    x = asproxy(x)
    x = x.astype(np.float64) if x.dtype != np.float64 else x
    return (x - loc) / scale


def _traced(*args) -> bool:
    return any(isinstance(a, Proxy) for a in args)


def _method(name, formula):
    def method(self, x, loc=0, scale=1, *, original):
        if not _traced(x, loc, scale):
            return original(self, x, loc, scale)
        return formula(_standard(x, loc, scale), scale)
    method.__name__ = name
    return method


METHODS = {
    "cdf": _method("cdf", lambda z, s: 0.5 * _erfc(-z * _SQRT1_2)),
    "sf": _method("sf", lambda z, s: 0.5 * _erfc(z * _SQRT1_2)),
    "pdf": _method("pdf", lambda z, s: np.exp(-0.5 * z * z - _LOG_SQRT_2PI) / s),
    "logpdf": _method("logpdf", lambda z, s: -0.5 * z * z - _LOG_SQRT_2PI - np.log(s)),
}
_DONE = []


def install():
    """Register the replacements once scipy.stats is loaded (called when a trace starts)."""
    stats = sys.modules.get("scipy.stats")
    if _DONE or stats is None or not hasattr(stats, "norm"):
        return
    _DONE.append(True)
    replace.register(type(stats.norm), METHODS, pass_original=True)


replace.LAZY.append(install)
