"""A chain of assignments to a carried array, computed into a buffer of its own where a
reduction reads it.

``pn = p.copy(); p[1:-1, 1:-1] = f(pn); p[:, 0] = 0; ...; p[-1, :] = 0`` and then
``np.sum((p - pn) ** 2)``: the reduction reads the array after every assignment of the chain,
which inlined is a select per assignment at every element (and the stencil computed again).
Instead the chain's first assignment goes into a new buffer with the frame around its region
copied, the later ones are stored there where they are (each reading only elements outside
the region it stores), and the reduction reads that buffer: vector loops, the stencil computed
once. At the end of a loop body the buffer trades places with the carried array
(``trades.local``) instead of being copied back.
"""
from __future__ import annotations

from ..ir.loopir import Load, Stage, walk


def realize_chain(lowering, top) -> bool:
    """Computes the chain of assignments ending at ``top`` (two or more, on an array in
    memory, read between them by nothing else) into a new buffer, the value of every link
    (one or more after a link already in a buffer of the loop body's own: into that one);
    False (nothing done) when a link reads elements a later link stores, or the regions are
    not boxes."""
    from .lower_assign import _apart
    chain, n = [], top
    while n.op == "setitem" and id(n) not in lowering.buffer_of:
        chain.append(n)
        n = n.inputs[0]
    chain.reverse()
    if not chain or tuple(n.shape) != tuple(top.shape) or not lowering._in_memory(n):
        return False
    own = lowering.buffer_of.get(id(n)) if n.op == "setitem" else None
    if own is not None and own not in lowering.outer_buffers and \
            lowering.buffers[own].role == "temp" and _feeds_only(n, chain[0], lowering.users):
        chain.insert(0, n)      # (the chain's start in a buffer of the body's own: the
    elif len(chain) < 2:        # links after it stored there too)
        return False
    else:
        own = None
    if not all(_feeds_only(c, nxt, lowering.users) for c, nxt in zip(chain, chain[1:])):
        return False        # (an array as it was between two links, read: its own value)
    boxes = [lowering._box(c) for c in chain]
    if any(b is None for b in boxes):
        return False
    first, where = chain[0], top.where
    saved = dict(lowering.buffer_of)
    if own is None:
        buf = lowering.new_buffer(f"buf{len(lowering.buffers)}", top.dtype, tuple(top.shape))
        region = lowering._region(first) + (lowering.names[id(first.inputs[1])],)
        outside = [p + (lowering.names[id(first)],) for p in lowering._outside(first)]
        stages = [Stage(buf, "pointwise", domain, body, (), None, lbl, where, store=tuple(store))
                  for domain, store, body, lbl in outside + [region] if 0 not in domain]
    else:
        buf, stages = own, []
    lowering.buffer_of[id(first)] = buf
    for c, box in zip(chain[1:], boxes[1:]):
        lowering.memo.clear()
        domain, store, body = lowering._region(c)
        if any(isinstance(ld, Load) and ld.buf == buf and not _apart(ld.index, domain, box)
               for ld in walk(body)):
            lowering.buffer_of.clear()
            lowering.buffer_of.update(saved)
            lowering.memo.clear()
            return False
        if 0 not in domain:
            stages.append(Stage(buf, "pointwise", domain, body, (), None,
                                lowering.names[id(c)], c.where, store=tuple(store)))
        lowering.buffer_of[id(c)] = buf
    lowering.stages += stages
    lowering.memo.clear()
    return True


def _feeds_only(node, nxt, users) -> bool:
    """Is every read of ``node`` part of ``nxt`` (its base, or its value: ``p[:, 0] =
    p[:, 1]``)?"""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        for u in users.get(id(n), ()):
            if u is nxt:
                continue
            if u is None:
                return False
            if id(u) in seen:
                continue
            seen.add(id(u))
            stack.append(u)
    return True
