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

A second kind of flag says whether such a value is a Python *int* now (``int_flag``): a
carried float that starts as ``xmax = x0`` of an int argument and becomes a float only on
some paths (or ``s = 0`` before a loop that may add nothing) is returned as the int Python
has there. Python's arithmetic keeps it (``+ - * // %``, unary minus, ``abs``: an int when
every operand is one), a true division drops it.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import make_node
from .proxy import Proxy, as_node, python_number, wrap
from .sizes import is_dim

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


def int_flag(v):
    """True (a Python int now), False (a Python float, a NumPy value), or a 0-d bool node."""
    if isinstance(v, Proxy):
        f = getattr(v, "intflag", None)
        if f is not None:
            return f.node
        return bool(v.weak and not v.node.shape and v.dtype.kind in "iu")
    if hasattr(v, "intflag") and not isinstance(v, type):    # (a Snapshot: as it was then)
        return v.intflag
    return type(v) is int or is_dim(v)


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


def pass_on(result, inputs, where: str, op: str = ""):
    """``result`` of a Python operator ``op`` on ``inputs`` with the flags it has (a Python
    number when every operand is one; a Python int when every operand is one and ``op``
    keeps ints) when an operand's is known only when the program runs."""
    if not any(isinstance(x, Proxy) and (x.pyflag is not None or x.intflag is not None)
               for x in inputs) or not isinstance(result, Proxy) or result.node.shape:
        return result       # (the common case first: no operand's kind is dynamic)
    f = all_python(inputs, where)
    if dynamic(f) and not result.weak:
        result.pyflag = wrap(f, scalar=True)
    if op in INT_OPS and result.dtype.kind == "f":
        f = all_of([int_flag(x) for x in inputs], where)
        if dynamic(f):
            result.intflag = wrap(f, scalar=True)
    return result


INT_OPS = frozenset({"add", "subtract", "multiply", "floor_divide", "remainder", "negative",
                     "positive", "absolute"})   # (Python ints in, a Python int out)


def all_of(flags, where: str):
    """True, False, or a 0-d bool node: the flags all hold."""
    if False in flags:
        return False
    nodes = [f for f in flags if dynamic(f)]
    out = True
    for n in nodes:
        out = n if out is True else make_node("logical_and", (out, n), (), BOOL, where)
    return out


def keep(out, result):
    """``out``, computed from ``result`` (a check around it), with its flags."""
    out.pyflag, out.intflag = result.pyflag, result.intflag
    return out


def chosen(t, yes, no, out):
    """``out``, the 0-d value ``yes if t else no``, with the flags it has when one of the two
    is a Python number and the other is not (``m2 / (n - 1) if n > 1 else 0.0``), or one a
    Python int and the other not (``x if x > 0 else 0.5``)."""
    if out.node.shape:
        return out
    fy, fn = flag(yes), flag(no)
    if not out.weak and fy is not fn:
        out.pyflag = either(t, fy, fn)
    iy, ino = int_flag(yes), int_flag(no)
    if out.dtype.kind == "f" and iy is not ino and (iy is not False or ino is not False):
        out.intflag = either(t, iy, ino)
    return out


def either(t, a, b):
    """The flag ``a if t else b``: with a constant one, ``and``/``or`` of the other (``m =
    max(m, x[i])`` carries ``m``'s flag as ``flag and not t``, a reduction a prange loop
    takes), else a select."""
    if a is b or not dynamic(a) and not dynamic(b) and a == b:
        return a
    a_, b_ = wrap(start_node(a)), wrap(start_node(b))
    if dynamic(a) and dynamic(b):
        r = np.where(t, a_, b_)
    elif not dynamic(a):
        r = np.logical_or(t, b_) if a else np.logical_and(np.logical_not(t), b_)
    else:
        r = np.logical_and(t, a_) if not b else np.logical_or(np.logical_not(t), a_)
    r = r[()]
    r.scalar = True
    return r


def start_node(f):
    """A flag slot's value where its construct starts (a node)."""
    return as_node(np.bool_(f)) if not dynamic(f) else f


def needs_flag(t, flags) -> bool:
    """Does a carried value of type ``t`` whose paths end with ``flags`` need a flag slot?"""
    if not isinstance(t, tuple) or t[1] or not t[3] or t[2] != ():
        return False
    return any(map(dynamic, flags)) or len(set(flags)) > 1


def needs_int_flag(t, flags) -> bool:
    """... an int flag slot (``flags``: the paths' int flags)? A float that is a Python int
    on some paths."""
    if not isinstance(t, tuple) or not t[3] or t[2] != () or t[0].kind != "f":
        return False
    return any(map(dynamic, flags)) or True in flags


def none_flag(v):
    """True (a value returned as None: nones.maybe_none), False, or a 0-d bool node."""
    if isinstance(v, Proxy):
        f = getattr(v, "noneflag", None)
        return f.node if f is not None else False
    if hasattr(v, "noneflag") and not isinstance(v, type):  # (a Snapshot: as it was then)
        return v.noneflag
    return False


def needs_none_flag(t, flags) -> bool:
    """... a None flag slot? A value returned as None on some paths (``return best`` with
    ``best`` None where the program ran so, carried out of a branch as the value returned)."""
    return isinstance(t, tuple) and (any(map(dynamic, flags)) or len(set(flags)) > 1)


# the kinds of flag a carried value may need: (its flag of a value, whether its paths' flags
# need a slot, the proxy attribute that holds it)
KINDS = {"python": (flag, needs_flag, "pyflag"), "int": (int_flag, needs_int_flag, "intflag"),
         "none": (none_flag, needs_none_flag, "noneflag")}


def needed(t, values, have) -> list:
    """The kinds of flag (``KINDS``) a carried value of type ``t`` whose paths end with
    ``values`` needs and does not have yet (``have``)."""
    return [kind for kind, (of, needs, _) in KINDS.items()
            if kind not in have and needs(t, [of(v) for v in values])]
