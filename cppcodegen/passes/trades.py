"""Carried arrays that trade buffers at the end of a loop body instead of being copied.

A body that passes its arrays around by name (``u, un = un, u``, three time levels rotated
``u_prev, u, u_next = u, u_next, u_prev``) ends with carried values that are other carried
values as they were at its start: a *move* ``T <- S`` (buffer ``T`` must hold what buffer ``S``
holds). When the moves, together with the steps stored into another carried array's buffer
(``lower_assign._chain_swapped``), permute a set of buffers, the body ends with pointer swaps,
one per link of each cycle, and no element is copied. The entry's end puts returned arrays
back into their own memory (``backend/program.py``).
"""
from __future__ import annotations

import sympy

SWAPPABLE = ("temp", "output")      # buffers whose pointer the C++ may change
SWAP_MIN = 16           # elements: an array a loop step rewrites trades buffers from this size


def moves(pairs, buffer_of, buffers) -> dict:
    """``T -> S`` for the write-backs whose value is a carried value in buffer ``S``, another
    write-back's target (each ``S`` read by one move only): the value at the start of the
    body (``u, v = v, u``), or the result of a loop inside the body kept in ``S``'s memory
    (``v[i, j] = f(u)`` for every i and j, then ``u, v = v, u``)."""
    targets = {name for name, _, _ in pairs}
    out, used = {}, {}
    for name, _, node in pairs:
        src = buffer_of.get(id(node)) if node.op in ("carry", "loop_out") else None
        if src is None or src == name or src not in targets or \
                buffers[src].role not in SWAPPABLE or buffers[name].role not in SWAPPABLE:
            continue
        used[src] = used.get(src, 0) + 1
        out[name] = src
    return {t: s for t, s in out.items() if used[s] == 1}


def cycle(links: dict, start) -> dict | None:
    """The links of the cycle through ``start`` (``T -> S``: T gets S's buffer), or None when
    following them from ``start`` does not come back to it."""
    out, k = {}, start
    while k in links and k not in out:
        out[k] = links[k]
        k = links[k]
    return out if k == start else None


def swaps(cycle_links: dict) -> list:
    """The pointer swaps that make each ``T`` of a cycle point at its ``S``'s old buffer:
    following the cycle ``T1 <- T2 <- ... <- Tk <- T1``, swap(T1, T2), swap(T2, T3), ..."""
    out, done = [], set()
    for start in cycle_links:
        if start in done:
            continue
        k = start
        while cycle_links[k] != start:
            out.append((k, cycle_links[k]))
            done.add(k)
            k = cycle_links[k]
        done.add(k)
    return out


def alike(a, b) -> bool:
    """May buffers ``a`` and ``b`` trade places (one shape, dtype and layout)?"""
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype and \
        tuple(a.strides) == tuple(b.strides)


def local(name, node, pairs, own, buffer_of, buffers, moves):
    """The body's own buffer (one of ``own``: made for the body, written before it is read)
    that holds ``node``, when it may trade places with carried buffer ``name`` instead of
    being copied into it: alike in shape, dtype and layout, big enough, and the value of no
    other write-back; None otherwise."""
    other = buffer_of.get(id(node))
    if other not in own or buffers[other].role != "temp" or name in moves or \
            buffers[name].role not in SWAPPABLE:
        return None
    b = buffers[name]
    if not alike(buffers[other], b) or bool((sympy.Mul(*b.shape) - SWAP_MIN).is_negative) or \
            sum(buffer_of.get(id(n)) == other for _, _, n in pairs) != 1:
        return None
    return other
