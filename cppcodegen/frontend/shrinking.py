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

import numpy as np

from ..ir.graph import make_node
from .carried_types import type_of
from .proxy import Proxy
from .selection import is_selection
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


# ----------------------------------------------------------------------------- in Carried

def shrinks(loop, slot, t, results) -> bool:
    """Does ``slot`` of ``loop`` (a ``Carried``: an array of type ``t`` whose body results
    ``results`` have another shape) shrink by a fixed amount per iteration? Then its lengths
    are solved and the body is traced again with them."""
    if loop.induction is None or slot.lengths or slot.name is None or t is None \
            or t[3] or len(results) != 1 or not isinstance(results[0], tuple) or \
            results[0][0] != t[0] and np.result_type(results[0][0], t[0]) != t[0]:
        return False
    spec, var = loop.induction
    lens = lengths(t[2], results[0][2], var, spec.start, spec.step)
    if lens is None:
        return False
    exit_ = [n if n is None else at_exit(n, var, spec.start, spec.stop, spec.step)
             for n in lens]
    if any(e is None and n is not None for e, n in zip(exit_, lens)):
        return False
    slot.lengths, slot.exit = lens, tuple(exit_)
    return True


def shrunk_when_failed(loop) -> bool:
    """The body failed at the first shape (``C = C[:-1]; C = np.maximum(C, K - S)`` with
    ``S`` made shorter each iteration): the arrays ``loop`` had already rebound shorter are
    taken to shrink at that rate, and the body is traced again with them (a guess the next
    trace verifies)."""
    if loop.induction is None or any(s.lengths for s in loop.slots):
        return False
    state, found = loop.get(), False
    for slot, t in zip(loop.slots, loop.types):
        now = state[loop._index(slot)] if slot.name in loop.names else None
        if isinstance(now, Proxy) and not is_selection(now) and t is not None and \
                not (slot.alias and now is slot.init) and \
                shrinks(loop, slot, t, [type_of(now)]):
            slot.alias = False          # (a name rebound: carried as its value)
            found = True
    return found


def fitted(loop, slot, t, r):
    """A shrinking array's body result as its carried type when it has the length the
    solution says (then it is stored into the carry buffer's first elements)."""
    if not slot.lengths or not isinstance(r, tuple) or t is None:
        return r
    spec, var = loop.induction
    if not fits(slot.lengths, r[2], var, spec.step):
        return r
    return (r[0], r[1], t[2], r[3])
