"""Reads of a name that may hold None (``optionals.py`` rewrites them into these calls).

In: the name's value and its flag: a Python bool (True: it holds a value), or a 0-d bool
proxy when a compiled loop or branch decided it. Out: while the flag is a Python bool,
Python's own value of the expression. Once it is traced: ``x is None`` is the flag's
negation; a returned ``x`` is the value with a ``noneflag`` (the runtime returns None where it
is set, ``trace.py``); an operand read is the value behind a check that raises Python's
TypeError where the flag is False when the program runs; any other read is refused.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, user_location
from . import optionals
from .capture import UNDEFINED
from .carried_types import type_of
from .proxy import asproxy, Proxy, wrap
from .raises import require


def _typed(value, name, where):
    """``value``, which a flag known only when the program runs says may hold a value: it
    has none yet while the construct that binds it learns its type (``Carried``)."""
    if value is UNDEFINED:
        e = UnboundLocalError(f"variable '{name}' has no type yet at {where}")
        e.name = name
        raise e
    return value


def is_none(value, flag, negate=False, eq=False):
    """``value is None`` (``is not`` with ``negate``; ``eq``: ``==`` / ``!=``, the same but
    for an array, which NumPy compares element by element)."""
    if eq and flag is not False and value is not UNDEFINED and (
            value.ndim if isinstance(value, Proxy) else np.ndim(value)):
        if isinstance(flag, Proxy):
            raise UnsupportedError(
                f"an array that may be None compared with == None (at {user_location()}): "
                "NumPy compares an array element by element; write `is None`")
        return (value != None) if negate else (value == None)   # noqa: E711 (NumPy's ==)
    if isinstance(flag, Proxy):
        return wrap((flag if negate else np.logical_not(flag)).node, weak=True)
    if not flag:
        return not negate
    return (value is not None) if negate else (value is None)


def maybe_none(value, flag, name, helper=False):
    """``value`` returned: None where the flag is False (a tuple: None as a whole). Only the
    compiled function's own result can be None when it runs: a helper's result is read by
    its caller, whose ``is None`` would not see the flag (``helper``: refused)."""
    if not isinstance(flag, Proxy):
        return value if flag else None
    if helper:
        what = "its return value" if name.startswith("__ccg_ret") else f"'{name}'"
        raise UnsupportedError(
            f"a helper function returns None or a value ({what} in {user_location()}), "
            "known only when the program runs; the compiled function can return such a "
            "value itself, a function it calls cannot (return a value that stands for none, "
            "e.g. -1 or np.nan)")
    none = wrap(np.logical_not(flag).node, scalar=True)
    if not isinstance(value, tuple):
        return _flagged(value, none, name)

    def whole(v):               # (every item marked: trace.py returns None for the tuple)
        if isinstance(v, tuple):
            return tuple(map(whole, v))
        out = _flagged(v, none, name)
        out.none_whole = True
        return out
    return whole(value)


def _flagged(value, none, name):
    """A copy of ``value``'s proxy that is None where ``none`` is set."""
    p = asproxy(_typed(value, name, "a return"))
    out = wrap(p.node, weak=p.weak, scalar=p.scalar)
    out.pyflag, out.intflag, out.noneflag = p.pyflag, p.intflag, none
    return out


def some(value, flag, name, where, raising):
    """Another read of ``value``: None where it is None (``raising``: an operand where None
    raises TypeError)."""
    if not isinstance(flag, Proxy):
        return value if flag else None
    if not raising:
        raise UnsupportedError(
            f"variable '{name}' may be None at {where}, known only when the program runs; "
            "the compiled function reads such a name in `is None` tests, as an operand of "
            "arithmetic, order comparisons and indexing, and in a return (copy it after an "
            "`is None` test, or give it a value that stands for none, e.g. np.nan)")
    _typed(value, name, where)
    require(flag, (TypeError, (f"variable '{name}' is None where it is used as an operand "
                               f"(at {where})",)), where)
    return value


def probe(carried, fn, error, extra_test, counts) -> bool:
    """A loop (its condition or its body ``fn``) or a side ``fn`` of a branch (``carried``:
    its ``Carried``) that reads a name that may hold None where its flag is known only when
    the program runs, before the name has a type (``error``, from ``_typed``): ``fn`` traced
    once with the flag False (as where the name is None) gives the type it binds. True when
    it did (the construct is traced again with it)."""
    untyped = [s.name for s, t in zip(carried.slots, carried.types) if t is None and s.name
               and optionals.flag_name(s.name) in carried.names]     # (all of them at once:
    if getattr(error, "name", None) not in untyped:                  # ``lo = hi = None``)
        return False
    carried.restore()
    carried.pinned = {optionals.flag_name(name): False for name in untyped}
    try:
        traced = carried._trace(fn, extra_test, counts)
    except Exception:       # noqa: BLE001 -- the first error is the one reported
        return False
    else:
        values = traced[2]
        for proxy, before in reversed(traced[4]):   # (its updates in place: dropped too)
            proxy._node = before
    finally:
        carried.pinned = {}
        carried.restore()
    names = [s.name for s in carried.slots]
    for name in untyped:
        t = type_of(values[names.index(name)])
        if isinstance(t, tuple):
            carried.types[names.index(name)] = t
    return carried.types[names.index(error.name)] is not None
