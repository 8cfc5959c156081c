"""``heapq`` on a list a compiled loop keeps as arrays (``worklists.py``): Dijkstra's
``heap = [(0.0, s)]; while heap: d, u = heapq.heappop(heap); ...; heapq.heappush(heap,
(nd, v))``.

In: ``heapq.heappush(heap, item)`` and ``heapq.heappop(heap)`` called from the user's code
while it is traced, ``heap`` a ``WorkList``. Out: the heap's arrays updated as CPython's
``heapq`` updates the list, step for step, so ties (equal distances) come off in the same
order: ``heappush`` appends and moves the item up while it is less than its parent;
``heappop`` takes the last item off, puts it at the root and moves the smaller child up
until a leaf, then that item up again (CPython's ``_siftup``). The moves are compiled
``while`` loops (``control.TraceOps.while_stmt``). Items compare as Python compares them:
numbers by value, tuples field by field. ``heapify`` and the other functions of a
``WorkList`` are refused by name; on a Python list, ``heapq`` is itself.
"""
from __future__ import annotations

import heapq
import sys

import numpy as np

from ..errors import TraceError, user_location
from . import replace


def _ops():
    """The ``TraceOps`` of the converted function calling (its ``__ccg`` cell)."""
    from .control import TraceOps
    frame = sys._getframe(2)
    while frame is not None:
        ops = frame.f_locals.get("__ccg") if "__ccg" in frame.f_code.co_freevars else None
        if isinstance(ops, TraceOps):
            return ops
        frame = frame.f_back
    raise TraceError(f"heapq on a list kept as arrays outside a converted function (at "
                     f"{user_location()})")


def _less(a, b):
    """Python's ``a < b`` of two items (tuples field by field)."""
    if not isinstance(a, tuple):
        return np.less(a, b)
    out = np.less(a[-1], b[-1])
    for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
        out = np.logical_or(np.less(x, y), np.logical_and(np.equal(x, y), out))
    return out


def _sift_down(ops, heap, start, pos, item, where):
    """CPython's ``_siftdown``: ``item`` (at ``pos``) up past its larger parents. (The loop's
    values are cells of these functions, as the rewritten code keeps them: a dict the body
    changed would be a container it changes, ``containers.py``.)"""
    def cond():
        return np.logical_and(pos > start, _less(item, heap.at((pos - 1) >> 1)))

    def body():
        nonlocal pos
        parent = (pos - 1) >> 1
        heap.put(pos, heap.at(parent))
        pos = parent

    def get():
        return (pos,)

    def set_(values):
        nonlocal pos
        (pos,) = values
    ops.while_stmt(cond, body, get, set_, ("pos",), where)
    heap.put(pos, item)


def heappush(heap, item, *, original):
    from .worklists import WorkList
    if not isinstance(heap, WorkList):
        return original(heap, item)
    where = user_location()
    ops = _ops()
    pos = heap.length()
    heap.append(item)
    _sift_down(ops, heap, 0, pos, heap.at(pos), where + " (heappush)")


def heappop(heap, *, original):
    from .worklists import WorkList
    if not isinstance(heap, WorkList):
        return original(heap)
    where = user_location()
    ops = _ops()
    last = heap.pop(empty="index out of range")     # (CPython's heappop of [])
    end = heap.length()
    top = heap.at(0)                # (read where the heap is not empty)
    nonempty = end > 0
    heap.put(0, last)               # (empty: past the end, where nothing reads it)
    pos = end * 0
    child = pos + 1

    def cond():                     # (CPython's _siftup: the smaller child up to a leaf)
        return np.logical_and(nonempty, child < end)

    def body():
        nonlocal pos, child
        right = child + 1
        take_right = np.logical_and(right < end, np.logical_not(
            _less(heap.at(child), heap.at(right))))
        smaller = np.where(take_right, right, child)[()]
        heap.put(pos, heap.at(smaller))
        pos = smaller
        child = 2 * smaller + 1

    def get():
        return (pos, child)

    def set_(values):
        nonlocal pos, child
        pos, child = values
    ops.while_stmt(cond, body, get, set_, ("pos", "child"), where + " (heappop)")
    # the last item where the moves ended, then up past larger parents (from the root)
    _sift_down(ops, heap, 0, pos, last, where + " (heappop, up)")
    if isinstance(last, tuple):
        return tuple(np.where(nonempty, t, a)[()] for t, a in zip(top, last))
    return np.where(nonempty, top, last)[()]


def _refused(name):
    def fn(*args, original, **kw):
        from .worklists import WorkList
        if args and isinstance(args[0], WorkList):
            raise TraceError(f"heapq.{name} of the list '{args[0].name}' a compiled loop keeps "
                             f"as arrays (at {user_location()}): heappush and heappop compile")
        return original(*args, **kw)
    return fn


REGISTERED = False      # (set by worklists.py, which imports this module)
replace.register(heapq, {"heappush": heappush, "heappop": heappop,
                         **{n: _refused(n) for n in ("heapify", "heappushpop", "heapreplace",
                                                     "nlargest", "nsmallest")}},
                 pass_original=True)
