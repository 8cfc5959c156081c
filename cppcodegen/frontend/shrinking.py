"""Carried arrays that shrink by the same amount in every iteration of a ``for`` loop.

In: a carried array's shape where the loop body starts and where it ends, from a body traced
with the array at its starting shape (``values = disc * (p * values[:-1] + q * values[1:])``
of a binomial tree: length ``n + 1`` in, ``n`` out; ``V = f(V[:, 1:i + 1], V[:, :i])``
counting ``i`` down: length ``i`` out). Out: each axis's length as an affine function of the
induction variable ``L(i)``, which is the starting length at the first iteration and falls by
a constant at each step.

The carried value then lives in one buffer of its starting shape: the body reads the view
``buf[:L(i)]`` and its result is stored into ``buf[:L(i + step)]`` (an ordinary region
update, in place where that is safe); after the loop the name is bound to the view of the
length after the last iteration. An axis whose length changes any other way (grows, halves,
depends on values, or on clamping that differs between iterations) is not solved: the loop
is refused as before (``carried.py``).
"""
from __future__ import annotations

from ..ir.graph import make_node
from .sizes import same_size, symbolic


def lengths(shape_in, shape_out, var, start, step):
    """Per axis ``L(i)`` (a sympy expression of ``var``) or None where the length stays
    the same, from a body traced with the array at its first shape ``shape_in``; None when
    the change is not a fixed shrink per iteration (or the step is not 1 or -1)."""
    if step not in (1, -1) or len(shape_in) != len(shape_out) or not shape_in:
        return None
    sh = symbolic()
    i, start = var, sh.canon(start)
    out, varies = [], False
    for p, q in zip(shape_in, shape_out):
        if _same(p, q):
            out.append(None)
            continue
        delta = sh.canon(q - p)
        free = getattr(sh.canon(q), "free_symbols", set())
        if isinstance(delta, int):                      # values[:-1]: one shorter each time
            if delta >= 0:
                return None
            length = sh.canon(p + delta * step * (i - start))
        elif i in free:                                 # V[:, 1:i + 1] counting i down
            length = sh.canon(sh.canon(q).subs(i, i - step))
            slope = sh.canon(after(length, i, step) - length)
            if sh.canon(length.subs(i, start) - p) != 0 or not isinstance(slope, int) \
                    or slope >= 0:
                return None
        else:
            return None
        out.append(length)
        varies = True
    return tuple(out) if varies else None


def after(length, var, step):
    """``L(i + step)``: the length the body's result has."""
    return symbolic().canon(length.subs(var, var + step)) if hasattr(length, "subs") else length


def fits(lens, shape_out, var, step) -> bool:
    """Does a body's result have the shape the solved lengths say (``L(i + step)``)?"""
    if len(lens) != len(shape_out):
        return False
    return all(_same(after(length, var, step), q) for length, q in zip(lens, shape_out)
               if length is not None)


def at_exit(length, var, start, stop, step):
    """The length after the loop: ``L`` at ``start + step * trips``; None when whether the
    loop runs at all is not decided (the decision is guarded, like a slice's clamping)."""
    sh = symbolic()
    start = sh.canon(start)
    span = sh.canon((sh.canon(stop) - start) * step)
    try:
        trips = 0 if sh.less(span, 0) else span
    except Exception:       # noqa: BLE001 -- bounds from array values: not decided
        return None
    return sh.canon(length.subs(var, start + step * trips)) if hasattr(length, "subs") else length


def _same(a, b) -> bool:
    if a == b:
        return True
    try:
        return same_size(a, b)
    except Exception:       # noqa: BLE001 -- not provably equal
        return False


def prefix(node, lengths, where):
    """The view of ``node``'s first ``lengths`` elements (None: the whole axis)."""
    shape = tuple(d if n is None else n for n, d in zip(lengths, node.shape))
    return make_node("slice", (node,), shape, node.dtype, where,
                     spec=tuple((0, 1, n) for n in shape))
