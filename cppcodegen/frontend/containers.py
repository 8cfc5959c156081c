"""Python lists, dicts and sets that a compiled loop or branch would change.

A compiled construct runs its body once while tracing, so ``out.append(i)`` inside it would
append one placeholder (the loop's index as a symbol) where Python appends one item per
iteration that passes the test: a wrong list, and a wrong array made from it. Before a
construct's body is traced, each list, dict or set among the names it sees (``rewrite.py``
adds the names whose ``append``/``add``/``update``... it calls) is copied; a body that changed
one is undone and refused (``carried.py``: a loop then runs in Python, a branch on array
values is an error; with the fallback on, Python runs the function).
"""
from __future__ import annotations

import collections

BOXES = (list, dict, set, collections.deque, bytearray)
# the methods that change one in place (an array has none of these names)
MUTATORS = frozenset({"append", "extend", "insert", "remove", "clear", "add", "discard",
                      "update", "setdefault", "popitem", "pop", "appendleft", "extendleft",
                      "popleft", "difference_update", "intersection_update",
                      "symmetric_difference_update"})


def snapshot(values) -> list:
    """(container, its items) for each container in ``values``."""
    out, seen = [], set()
    for v in values:
        if isinstance(v, BOXES) and id(v) not in seen:
            seen.add(id(v))
            out.append((v, list(v.items()) if isinstance(v, dict) else list(v)))
    return out


def reachable(fn, depth: int = 4) -> list:
    """The values of the variables ``fn`` reads from enclosing scopes, and those of the
    functions among them (a branch's wrapper, a body's inner functions): every container the
    body can reach by name, also one it only stores into (``out[i] = v`` of a dict), and
    every other object (``pystate``: a generator it draws from)."""
    out, stack, seen = [], [(fn, depth)], set()
    while stack:
        f, d = stack.pop()
        if id(f) in seen or d == 0:
            continue
        seen.add(id(f))
        for cell in getattr(f, "__closure__", None) or ():
            try:
                v = cell.cell_contents
            except ValueError:          # (an empty cell)
                continue
            out.append(v)
            if callable(v) and getattr(v, "__closure__", None):
                stack.append((v, d - 1))
    return out


def undo_changes(snaps) -> list:
    """(container, its items before, its items after) of each container of ``snaps`` whose
    items changed, each put back as it was."""
    changed = []
    for box, items in snaps:
        now = list(box.items()) if isinstance(box, dict) else list(box)
        if len(now) == len(items) and all(_same(a, b) for a, b in zip(now, items)):
            continue
        changed.append((box, items, now))
        box.clear()
        if isinstance(box, dict):
            box.update(items)
        elif isinstance(box, set):
            box.update(items)
        else:
            box.extend(items)
    return changed


def _same(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):      # (a dict's items)
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b


def changed_argument(fn, args, box):
    """The error for ``fn`` changing ``box``, a list, dict or set among its arguments ``args``
    (or inside one of them: a list of arrays taken apart, ``argtree.py``): Python would change
    the caller's, the compiled function cannot."""
    from ..errors import TraceError
    i = next((i for i, a in enumerate(args) if _holds(a, box)), None)
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    name = f"'{code.co_varnames[i]}'" if code and i is not None and i < code.co_argcount \
        else str(i)
    return TraceError(f"{getattr(fn, '__qualname__', 'the function')} changes the "
                      f"{type(box).__name__} passed as argument {name}"
                      f"{'' if i is not None and args[i] is box else ' (inside it)'}"
                      "; compiled code changes arrays in place, not the caller's lists, dicts "
                      "or sets (return the items instead)")


def _holds(a, box) -> bool:
    if a is box:
        return True
    if isinstance(a, (list, tuple)):
        return any(_holds(v, box) for v in a)
    return isinstance(a, dict) and any(_holds(v, box) for v in a.values())
