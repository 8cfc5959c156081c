"""Small constant loops inside a loop's body, written out iteration by iteration, so that the
body is element code the SIMD lanes take (``simd.py``).

``for i in range(n): v = x[i]; r = 0; for b in range(8): r = (r << 1) | (v & 1); v >>= 1``
(a byte's bits), or a 3x3 neighbourhood's ``for di in range(-1, 2): for dj in range(-1, 2)``:
the inner loop has a few trips known at compile time and a straight-line body, but a body
with a loop in it runs one outer iteration at a time. Written out (its variable replaced by
each of its values in the stages' index expressions), the outer loop's iterations run in SIMD
lanes when they are independent (measured: bit reversal of 10^6 bytes 1.24 -> see README).

In: the kernels of a loop's body. Out: the same kernels with each ``for`` of at most
``MAX_TRIPS`` constant trips (no break, a body of element code and branches, iterations that
depend on each other: an independent one is better the lanes' own loop) replaced by its
iterations' kernels, or None when there is none to write out or the result would exceed
``MAX_KERNELS`` kernels.
"""
from __future__ import annotations

import dataclasses

import sympy

from ..ir.loopir import Gather, Index, Load, Op, walk
from ..passes.index_split import with_body

MAX_TRIPS = 16
MAX_KERNELS = 96


def unrolled(kernels) -> list | None:
    out, changed = _unrolled(kernels)
    if not changed or len(out) > MAX_KERNELS:
        return None
    return out


def _unrolled(kernels) -> tuple:
    out, changed = [], False
    for k in kernels:
        if k.form != "control":
            out.append(k)
            continue
        c, kind = k.stages[0].control, k.stages[0].kind
        inner = [_unrolled(r) for r in k.regions]
        if any(ch for _, ch in inner):
            k = dataclasses.replace(k, regions=tuple(r for r, _ in inner))
            changed = True
        values = _values(c) if kind == "for" else None
        if values is None or not _straight(k.regions[0]):
            out.append(k)
            continue
        var = sympy.Symbol(c["var"], integer=True)
        for t, v in enumerate(values):      # (each copy a function of its own: _t<trip>)
            out += [_with(sub, {var: sympy.Integer(v)}, f"_t{t}") for sub in k.regions[0]]
        changed = True
    return out, changed


def constant_range(c) -> range | None:
    """The values of a ``for`` control's variable when its bounds and step are ints, else
    None (also ``program.py``'s count for its unroll pragma)."""
    start, stop, step = c.get("start"), c.get("stop"), c.get("step")
    if not all(type(v) is int for v in (start, stop, step)) or step == 0:
        return None
    return range(start, stop, step)


def _values(c):
    """A loop to write out: a few constant trips, no break, iterations that depend on each
    other (an independent one is better the lanes' own loop)."""
    values = constant_range(c)
    if values is None or c.get("auto") or c.get("test") or c.get("bounds") or \
            len(values) > MAX_TRIPS:
        return None
    return values


def _straight(kernels) -> bool:
    """Element kernels and branches of them only (no loop, no NumPy call)."""
    for k in kernels:
        if k.form == "control":
            if k.stages[0].kind != "if" or not all(_straight(r) for r in k.regions):
                return False
        elif k.form in ("extern", "gemm") or any(
                s.kind != "pointwise" or not all(isinstance(d, int) for d in s.domain) or
                any(isinstance(e, Gather) and type(e) is not Gather for e in walk(s.body))
                for s in k.stages):
            return False
    return True


def _with(k, subs, suffix: str):
    """Kernel ``k`` with the loop variable replaced in every index expression."""
    def stage(s):
        store = None if s.store is None else tuple(_sub(ix, subs) for ix in s.store)
        return dataclasses.replace(with_body(s, _expr(s.body, subs)), store=store)
    return k.rewritten(suffix, stage)


def _sub(e, subs):
    return sympy.sympify(e).xreplace(subs) if isinstance(e, sympy.Basic) else e


def _expr(e, subs):
    """The expression ``e`` with ``subs`` applied to its index expressions (shared parts
    rebuilt once)."""
    memo = {}
    for x in walk(e):
        if id(x) in memo:
            continue
        if isinstance(x, Gather):
            memo[id(x)] = dataclasses.replace(
                x, index=tuple(_sub(i, subs) for i in x.index),
                binds=tuple((n, size, memo.get(id(v), v), axis) for n, size, v, axis in x.binds),
                guard=memo.get(id(x.guard), x.guard))
        elif isinstance(x, Load):
            memo[id(x)] = dataclasses.replace(x, index=tuple(_sub(i, subs) for i in x.index))
        elif isinstance(x, Index):
            memo[id(x)] = dataclasses.replace(x, expr=_sub(x.expr, subs))
        elif isinstance(x, Op):
            memo[id(x)] = dataclasses.replace(x, args=tuple(memo.get(id(a), a) for a in x.args))
        else:
            memo[id(x)] = x
    return memo[id(e)]
