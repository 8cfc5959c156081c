"""In-place updates seen while a region is traced.

In: every in-place update the tracer makes (``trace._update``). Out: for each region being
traced (a loop body, a branch), the list of (proxy, its node before the update), from which
``control.py`` learns which arrays a body updates and so must carry.
"""
from __future__ import annotations

UPDATED: list = []      # one list per open region, innermost last


def note_update(proxy, before) -> None:
    for updated in UPDATED:
        updated.append((proxy, before))
