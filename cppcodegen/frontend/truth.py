"""Python's truth of traced values: a condition of a compiled branch or loop as a 0-d bool.

In: a value a ``if``/``while``/``and``/``not`` tests (a Python value, a traced array of one
element, a loop index). Out: a Python bool for a concrete value, a traced 0-d bool for a
traced one (``as_scalar`` raises NumPy's ValueError for more than one element).
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from ..ir.graph import make_node
from .iteration import has_loop_symbol, size_proxy, symbolic_int
from .proxy import Proxy, wrap


def is_traced(x) -> bool:
    return isinstance(x, Proxy) or (symbolic_int(x) and has_loop_symbol(x))


def as_scalar(p):
    """A traced array of one element as a 0-d value."""
    if not p.node.shape:
        return p
    if any(d != 1 for d in p.node.shape):
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")
    return wrap(make_node("reshape", (p.node,), (), p.dtype, user_location()),
                  weak=p.weak, scalar=True)


def truth(x):
    """A Python bool for a concrete value; a traced 0-d bool for a traced one."""
    if symbolic_int(x) and has_loop_symbol(x):
        x = size_proxy(x.expr)
    if isinstance(x, Proxy):
        x = as_scalar(x)
        return x if x.dtype == np.bool_ else np.not_equal(x, 0)
    if hasattr(type(x), "traced_truth"):    # (a list kept as arrays: worklists.py)
        return x.traced_truth()
    return bool(x)
