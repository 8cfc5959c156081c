"""The parts of a stored value that read the array it is stored into, computed first.

``x[region] = v`` is stored straight into ``x``'s buffer when ``v`` reads ``x`` only at the
elements it overwrites, or outside them (``lower_assign._in_place``). Where ``v`` reads
``x`` elsewhere in the region, NumPy has computed ``v`` before storing any of it; computing
all of ``v`` into a buffer first and copying it keeps that, at two passes over the region.
Often only a small part of ``v`` is the trouble: an elimination's row update
``M[k+1:, k:] -= np.outer(M[k+1:, k] / M[k, k], M[k, k:])`` reads column ``k`` of the rows it
writes through the quotient, a vector. Computed first into a buffer of its own, the update
stores in place in one pass.

In: the lowering (``lower_assign``'s methods), the assignment's node, the array's node and
buffer. Out: the nodes to compute first, those of the value's expression with fewer
dimensions than it that read the array (the largest such, through any chain of
operations), computed; and the region to store, or None where that does not remove every
such read.
"""
from __future__ import annotations


def smaller_reads(value, base, buffered) -> list:
    """The nodes of ``value``'s expression with fewer dimensions than ``value`` that read
    ``base`` (not through a node in ``buffered``), outermost first."""
    reading: dict = {}

    def reads(n) -> bool:
        if n is base:
            return True
        if id(n) in buffered:
            return False
        if id(n) not in reading:
            reading[id(n)] = False          # (a shared input: visited once)
            reading[id(n)] = any(reads(i) for i in n.inputs)
        return reading[id(n)]

    out, seen = [], set()

    def visit(n):
        if n is base or id(n) in seen or id(n) in buffered:
            return
        seen.add(id(n))
        if len(n.shape) < len(value.shape) and reads(n):
            out.append(n)
            return
        for i in n.inputs:
            visit(i)

    for i in value.inputs:
        visit(i)
    return out


def read_first(low, node, base, name):
    """``x[region] = v`` (``node``; ``x``'s buffer ``name``) whose ``v`` reads ``x`` where it
    stores: its smaller parts that read ``x`` computed first; the region (domain, store,
    body, label) then, when that leaves no such read, else None."""
    value = node.inputs[1]
    domain, store, body = low._region(node)
    if not value.shape or id(value) in low.buffer_of or \
            not low._overlaps(name, store, body, domain):
        return None
    parts = smaller_reads(value, base, low.buffer_of)
    if not parts:
        return None
    for p in parts:
        low.realize(p)
    low.memo.clear()
    domain, store, body = low._region(node)
    if low._overlaps(name, store, body, domain):
        return None
    return domain, store, body, low.names[id(value)]
