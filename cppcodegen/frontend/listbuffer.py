"""A list a compiled loop appends one item to in every iteration, kept as an array.

``history = []; for t in range(steps): ...; history.append(energy)`` then
``np.array(history)``: traced once, the body would append one placeholder. When the first
trace of a ``for`` loop (a range with an int step, no ``break``) shows a list that grew by
exactly one item (a traced value or a number), the loop is traced again with the name bound
to an ``Appender``: ``append(v)`` stores ``v`` at the iteration's position of an array of
(trip count,) + the item's shape, made before the loop and carried by it. After the loop the
name is a ``ListBuffer``: ``np.array``/``np.asarray``/``len``/indexing/``for`` and NumPy
functions see the items before the loop followed by that array; returned, it is a list of
the array's items (``frontend/trace.py``). Any other use of it (list arithmetic, appending
after the loop) raises TraceError: with the fallback on,
Python runs the function. Hooks: ``carried.Carried`` (``plan``, ``bind``, ``finish``).
"""
from __future__ import annotations

import numpy as np

from ..errors import TraceError, user_location
from .proxy import asproxy, Proxy, python_number


class Retrace(Exception):
    """The loop is traced again, its appended lists bound to ``Appender``s."""


class _Plan:
    def __init__(self, prefix, buf, index):
        self.prefix, self.buf, self.index = prefix, buf, index
        self.appender = None


def plan(loop, changed) -> bool:
    """``changed``: (list, items before, items after) of the containers the body changed.
    True (and raises Retrace) when each grew by one item in a loop that can keep them."""
    if not loop.loop or loop.induction is None or not changed:
        return False
    spec, var = loop.induction
    plans = {}
    for box, before, after in changed:
        names = [n for n, v in zip(loop.names, loop.init_state) if v is box]
        if type(box) is not list or len(names) != 1 or len(after) != len(before) + 1 or \
                any(a is not b for a, b in zip(before, after)):
            return False
        item = _traced(after[-1])
        buf = None if item is None else _buffer(spec, item, before)
        if buf is None:
            return False
        plans[names[0]] = _Plan(list(before), buf, _position(spec, var))
    loop.lists = plans
    raise Retrace()


def bind(loop, state) -> None:
    """Each planned list's name bound to a fresh ``Appender`` for one trace of the body."""
    for name, p in getattr(loop, "lists", {}).items():
        p.appender = Appender(p)
        state[loop.names.index(name)] = p.appender


def check(loop, where, state) -> None:
    """Each ``Appender`` got exactly one item in the trace just made, a value no later
    update can change: a number, or an array that is not a view and that no name holds at
    the end of the iteration (Python's list would hold that very array, and show what a
    later ``u[...] = `` writes into it: ``frames.append(u)``; ``frames.append(u.copy())``
    is a copy)."""
    from .carried import Unroll
    for name, p in getattr(loop, "lists", {}).items():
        a = p.appender
        if a is not None and a.count != 1:
            raise Unroll(where, f"list '{name}' is appended to {a.count} times in an iteration")
        item = a.item if a is not None else None
        if isinstance(item, Proxy) and item.node.shape and (
                item._base is not None or item.arg is not None or
                any(v is item for v in state)):
            raise Unroll(where, f"list '{name}' gets an array that may change after it is "
                         "appended")


def finish(loop, state) -> None:
    for name, p in getattr(loop, "lists", {}).items():
        item = p.appender.item if p.appender is not None else None
        head = len(p.prefix) if all(map(python_number, p.prefix)) else 0
        python = -1 if head == len(p.prefix) and python_number(item) else head
        state[loop.names.index(name)] = ListBuffer(p.prefix, p.buf, python)


def _buffer(spec, item, before):
    from .creation import zeros
    from .sizes import symbolic
    if all(type(v) is int for v in (spec.start, spec.stop, spec.step)):
        trips = len(range(spec.start, spec.stop, spec.step))
    else:
        sh = symbolic()
        span = spec.stop - spec.start if spec.step > 0 else spec.start - spec.stop
        step = abs(spec.step)
        trips = sh.SymInt.wrap(sh.canon(span)) if step == 1 else \
            sh.SymInt.wrap(sh.canon(sh.floordiv(span + step - 1, step)))
        if not before and item.dtype != np.float64:
            try:                # (no trip: NumPy's np.array([]) is float64, not the items'
                if not sh.less(0, trips):   # dtype: a call without a trip is guarded out,
                    return None             # and builds with Python running the loop)
            except sh.LoopDependent:        # (in a loop: as it is)
                pass
    return zeros((trips,) + tuple(item.shape), dtype=item.dtype)


def _position(spec, var):
    from .sizes import symbolic
    sh = symbolic()
    k = var - spec.start if spec.step > 0 else spec.start - var
    step = abs(spec.step)
    return sh.SymInt.wrap(sh.canon(k if step == 1 else sh.floordiv(k, step)))


class Appender:
    """The list's name inside the loop body: ``append`` stores at the iteration's row."""

    def __init__(self, p):
        self.p, self.count, self.item = p, 0, None

    def append(self, value):
        self.count += 1
        self.item = value
        value = _traced(value)
        if value is None:
            raise TraceError(f"an item appended at {user_location()} is not a number or an "
                             "array")
        if tuple(value.shape) != tuple(self.p.buf.shape[1:]):
            raise TraceError(f"an item appended at {user_location()} has shape "
                             f"{tuple(value.shape)}, not {tuple(self.p.buf.shape[1:])}")
        self.p.buf[self.p.index] = value

    def __getattr__(self, name):
        raise TraceError(f"a list a compiled loop appends to is used in it other than by "
                         f"append ('{name}', at {user_location()})")


class ListBuffer:
    """The list after the loop: its items before it, then the array of those appended."""

    def __init__(self, prefix, buf, python=0):
        self.prefix, self.buf = prefix, buf
        self.python = python        # how many first items are Python numbers (-1: all)

    def traced_array(self, dtype=None) -> Proxy:
        from .concat import join
        if self.prefix:
            from .creation import array
            head = array(self.prefix, original=np.array)
            out = join([head, self.buf], 0)
        else:
            out = self.buf
        return out if dtype is None else out.astype(dtype)

    def __len__(self):
        raise TraceError(f"len() of a list a compiled loop filled, outside the rewritten code "
                         f"(at {user_location()})")

    def length(self):
        return len(self.prefix) + self.buf.shape[0]

    def __getitem__(self, index):
        return self.traced_array()[index]

    def __iter__(self):
        return iter(self.traced_array())

    def __array_function__(self, func, types, args, kwargs):    # np.mean(history)
        return func(*_arrays(args), **dict(zip(kwargs, _arrays(kwargs.values()))))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):   # np.sqrt(history)
        return getattr(ufunc, method)(*_arrays(inputs), **kwargs)

    def __getattr__(self, name):
        if not hasattr(list, name):     # (what a list has not: no list method of the user's)
            raise AttributeError(f"'list' object has no attribute '{name}'")
        raise TraceError(f"a list a compiled loop filled is used as a list ('{name}', at "
                         f"{user_location()}): only np.array/np.asarray/len/indexing/iteration "
                         "of it compile")


def _traced(item):
    """An appended item as a traced value (a loop index: its int64 value), or None."""
    from .iteration import size_proxy
    from .sizes import is_dim, symbolic
    if is_dim(item):
        return size_proxy(symbolic().canon(item))
    if isinstance(item, bool) or not isinstance(item, (Proxy, int, float, complex,
                                                       np.generic)):
        return None
    return asproxy(item)


def _arrays(values) -> list:
    return [v.traced_array() if isinstance(v, ListBuffer) else v for v in values]
