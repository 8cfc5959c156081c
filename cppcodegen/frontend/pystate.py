"""Python state a compiled loop or branch would change once instead of at every run.

A compiled construct's body runs once while tracing. A call in it that changes Python
objects would change them once: ``next(it)`` on a Python iterator, a draw of a Python or
NumPy random generator made inside the function (``random.Random(seed).random()``,
``np.random.default_rng(seed).random()``), a helper that counts its calls through
``nonlocal``, ``global`` or an attribute (``self.nfev += 1``). Every run of the compiled body
would then see that one value (the same draw in every iteration, a count of one).

``record`` notes such a call while a construct is traced (``control.TraceOps.call``, the
constant-seeded Generator of ``replace.py``); ``since`` says what a construct's body
recorded, and ``carried.py`` then runs the loop in Python (each iteration traced, the calls
made once per iteration, as Python makes them) or, for a branch on array values, refuses it.
"""
from __future__ import annotations

import copy
import dis
import random
import types

import numpy as np

from ..errors import TraceError, user_location
from ..ir.graph import MADE
from .capture import user_function

CHANGES: list = []      # what the calls traced inside constructs change, in order
_STORES: dict = {}      # code object -> what it stores outside its own frame ("" if nothing)
_ARRAY_ATTRS = frozenset({"real", "imag", "shape", "flat", "strides", "dtype", "data"})
# (``z.imag = x``: an array's own attributes, stores into the array)
_GENERATORS = (random.Random, np.random.Generator, np.random.RandomState,
               np.random.BitGenerator)


def mark(seen) -> tuple:
    """Where a construct's body starts: the calls recorded so far, the state of the random
    generators among ``seen`` (what the body reads from its enclosing function,
    ``containers.reachable``, and its names' values: ``rnd = random.Random(seed)`` before
    the loop, whose method calls are not the trace's calls) and a copy of each NumPy array
    among them (``Z = np.zeros_like(X)`` of an ``np.mgrid`` grid: NumPy's arrays, which an
    update in the body would change once, while tracing)."""
    gens = [(g, _state(g)) for g in seen if isinstance(g, _GENERATORS)]
    return len(CHANGES), gens, _copies((None, a) for a in seen)


_COPIED_BYTES = 1 << 26     # (a larger NumPy array: not copied, an update in a body not seen)


def _copies(named) -> list:
    """(name, array, a copy) of each writable NumPy array among ``named`` ((name, value)
    pairs), once each."""
    out, seen = [], set()
    for name, a in named:
        if type(a) is np.ndarray and id(a) not in seen and a.flags.writeable and \
                a.nbytes <= _COPIED_BYTES:
            seen.add(id(a))
            out.append((name, a, a.copy()))
    return out


def _put_back(copies) -> list:
    """(name, array) of each array of ``copies`` changed since they were made, put back."""
    changed = []
    for name, a, before in copies:
        if not np.array_equal(a, before, equal_nan=a.dtype.kind in "fc"):
            a[...] = before
            changed.append((name, a))
    return changed


def since(start) -> str | None:
    """What the body changed since ``start`` (``mark``): the first change recorded, or a
    generator drawn from or a NumPy array updated (each put back as it was), or None."""
    count, gens, arrays = start
    new = CHANGES[count:]
    del CHANGES[count:]
    for g, before in gens:
        if not _same(_state(g), before):
            _restore(g, before)
            new.append(_once(f"{type(g).__name__} draws in the loop or branch"))
    for _, a in _put_back(arrays):
        new.append(_once(f"a NumPy array of shape {a.shape} (made from constants, not "
                         "traced) is updated in place in the loop or branch"))
    return new[0] if new else None


def _once(what: str) -> str:
    return (f"{what}: a compiled loop or branch runs its body once while it is traced, so "
            "the change would happen once, not at every run")


def _bits(g):
    return g if isinstance(g, np.random.BitGenerator) else \
        getattr(g, "bit_generator", None) or g._bit_generator


def _state(g):
    if isinstance(g, random.Random):
        return g.getstate()
    return copy.deepcopy(_bits(g).state)


def _same(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def _restore(g, before):
    if isinstance(g, random.Random):
        g.setstate(before)
    else:
        _bits(g).state = before


def record(what: str) -> None:
    """Note a change of Python state made while a construct's body is traced."""
    if MADE:
        CHANGES.append(_once(f"{what} (at {user_location()})"))


def calling(f, args) -> None:
    """``f(*args)`` is called in the user's code: record it where it changes Python state in a
    construct's body; refuse it where it changes state that outlives the call (a global, an
    attribute), which the compiled function would change only while it is traced."""
    code = _code_of(f)
    if code is not None:
        kind, what, line = _stores(code)
        if kind in ("global", "attribute"):
            _refuse(f, what, code, line)
        if kind and MADE:
            record(f"{getattr(f, '__qualname__', type(f).__name__)} changes {what}")
        return
    if not MADE:
        return
    if f is next and args and not hasattr(args[0], "node"):
        record("next() advances a Python iterator")
        return
    owner = getattr(f, "__self__", None)
    if isinstance(owner, _GENERATORS):
        record(f"{type(owner).__name__}.{getattr(f, '__name__', '?')} draws from a random "
               "generator made outside the compiled draws")


def check_function(fn) -> None:
    """The compiled function itself: refused where it changes a global, an attribute or a
    variable of a function around it (state the compiled code would change only while it is
    traced)."""
    fn = getattr(fn, "__ccg_packed__", (fn,))[0]     # (a function of its arguments' leaves)
    code = _code_of(fn)
    if code is not None:
        kind, what, line = _stores(code)
        if kind:
            _refuse(fn, what, code, line)


def _refuse(f, what, code, line):
    raise TraceError(
        f"{getattr(f, '__qualname__', type(f).__name__)} changes {what} (at "
        f"{code.co_filename}:{line}): Python state outside the compiled function's arrays "
        "changes only while the function is traced, not at every call; return the value "
        "instead (or keep a count in an array argument)")


def _code_of(f):
    """The code of a user's Python function, method or callable object, else None."""
    if isinstance(f, types.MethodType):
        f = f.__func__
    elif not isinstance(f, types.FunctionType):
        f = getattr(type(f), "__call__", None)
    return f.__code__ if user_function(f) else None


def _stores(code) -> tuple:
    """(kind, what, line) of the first store of ``code`` outside its own frame: a global, a
    variable of an enclosing function (``nonlocal``) or an attribute; ("", "", 0) if none."""
    found = _STORES.get(code)
    if found is not None:
        return found
    found = ("", "", 0)
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions else 0
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            found = ("global", f"the global '{ins.argval}'", line)
        elif ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars:
            found = ("nonlocal", f"the variable '{ins.argval}' of an enclosing function "
                     "(nonlocal)", line)
        elif ins.opname in ("STORE_ATTR", "DELETE_ATTR") and ins.argval not in _ARRAY_ATTRS:
            found = ("attribute", f"the attribute '{ins.argval}' of an object", line)
        if found[0]:
            break
    _STORES[code] = found
    return found


def outside_arrays(fn) -> list:
    """(name, array, a copy) of the NumPy arrays ``fn`` reads by name from its module or from
    enclosing functions (``COUNTS[0] += 1`` of a module array): an update made while tracing
    would be made once, not at every call (``check_outside``)."""
    fn = getattr(fn, "__ccg_packed__", (fn,))[0]
    code = _code_of(fn)
    if code is None:
        return []
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    glob = getattr(fn, "__globals__", {})
    named = [(n, glob[n]) for n in sorted(names) if n in glob]
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            named.append((name, cell.cell_contents))
        except ValueError:              # (an empty cell)
            pass
    return _copies(named)


def check_outside(arrays) -> None:
    """Refuse a trace that updated one of ``arrays`` (``outside_arrays``) in place, each put
    back as it was: Python runs the call (with the fallback on), updating it at every call."""
    changed = _put_back(arrays)
    if changed:
        raise TraceError(f"the function updates '{changed[0][0]}' in place, a NumPy array of "
                         "its module or of an enclosing function: the compiled code would "
                         "update it only while it is traced, not at every call; pass the "
                         "array as an argument")
