"""In-place updates seen while a region is traced, and the errors a construct may raise.

In: every in-place update the tracer makes (``trace._update``). Out: for each region being
traced (a loop body, a branch), the list of (proxy, its node before the update), from which
``control.py`` learns which arrays a body updates and so must carry. ``may_raise`` and
``reads_raising``: is a construct kept for its errors though nothing reads its values.
"""
from __future__ import annotations

from ..ir.graph import MADE, walk

UPDATED: list = []      # one list per open region, innermost last


def note_update(proxy, before) -> None:
    for updated in UPDATED:
        updated.append((proxy, before))


RAISING = frozenset({"gather", "scatter", "check", "segment", "bincount",   # (EFFECTS)
                     "print"})      # (not an error: a construct that prints is kept too)


def may_raise(node) -> bool:
    return any(n.op in RAISING for n in walk([node]))


def reads_raising(node) -> bool:
    """Does the construct read a value (an if's condition, a loop's bound) made in the
    region it is in by a node that may raise?"""
    mine = MADE[-1] if MADE else None
    stack, seen = list(node.inputs), set()
    while stack:
        n = stack.pop()
        if id(n) in seen or mine is not None and id(n) not in mine:
            continue
        seen.add(id(n))
        if n.op in RAISING:
            return True
        stack.extend(n.inputs)
    return False
