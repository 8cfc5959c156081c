"""Python numbers whose type depends on the path the program took.

``total = 0.0`` before a loop that adds elements of a float64 array is a Python float until
an iteration runs and a NumPy float64 after. The loop carries one dtype (float64, unified as
NumPy would), but which of the two *kinds* of number it holds is known only when the program
runs. Where the kind matters, it is carried too: a 0-d bool beside the value (its ``pyflag``,
True while the value is a Python number), set by each path's end (``Carried``: a flag slot
for every carried scalar that is a Python number on some paths and a NumPy scalar on others).

Python's operators pass it on (``total / count`` is a Python number when both operands
are), and a division of Python numbers by zero raises ``ZeroDivisionError`` only where
the flag says both are (``pyints._divided``): with an all-NaN input, ``total / count``
after a loop that counted nothing raises, as in Python; after one that counted, a NumPy
scalar divided by ``0`` gives NaN, as NumPy's does.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import make_node
from .proxy import Proxy, as_node, python_number, wrap

BOOL = np.dtype(bool)


def flag(v):
    """True (a Python number now), False (a NumPy value), or a 0-d bool node (known only
    when the program runs)."""
    if isinstance(v, Proxy):
        f = getattr(v, "pyflag", None)
        if f is not None:
            return f.node
        return bool(v.weak and not v.node.shape)
    if hasattr(v, "pyflag") and not isinstance(v, type):    # (a Snapshot: as it was then)
        return v.pyflag
    return python_number(v)


def dynamic(f) -> bool:
    return f is not True and f is not False


def all_python(values, where: str):
    """Are all of ``values`` Python numbers? True, False, or a 0-d bool node."""
    nodes = []
    for v in values:
        f = flag(v)
        if f is False:
            return False
        if f is not True:
            nodes.append(f)
    out = True
    for n in nodes:
        out = n if out is True else make_node("logical_and", (out, n), (), BOOL, where)
    return out


def pass_on(result, inputs, where: str):
    """``result`` of a Python operator on ``inputs`` with the flag it has (a Python number
    when every operand is one) when an operand's is known only when the program runs."""
    if not any(isinstance(x, Proxy) and x.pyflag is not None for x in inputs) or \
            not isinstance(result, Proxy) or result.weak or result.node.shape:
        return result       # (the common case first: no operand's kind is dynamic)
    f = all_python(inputs, where)
    if dynamic(f):
        result.pyflag = wrap(f, scalar=True)
    return result


def chosen(t, yes, no, out):
    """``out``, the 0-d value ``yes if t else no``, with the flag it has when one of the two
    is a Python number and the other is not (``m2 / (n - 1) if n > 1 else 0.0``)."""
    fy, fn = flag(yes), flag(no)
    if out.weak or out.node.shape or fy is fn:
        return out
    out.pyflag = np.where(t, wrap(start_node(fy)), wrap(start_node(fn)))[()]
    out.pyflag.scalar = True
    return out


def start_node(f):
    """A flag slot's value where its construct starts (a node)."""
    return as_node(np.bool_(f)) if not dynamic(f) else f


def needs_flag(t, flags) -> bool:
    """Does a carried value of type ``t`` whose paths end with ``flags`` need a flag slot?"""
    if not isinstance(t, tuple) or t[1] or not t[3] or t[2] != ():
        return False
    return any(map(dynamic, flags)) or len(set(flags)) > 1
