"""Outputs whose length is a count of the values: ``x[mask]``, ``np.nonzero``, ``np.unique``,
``np.bincount`` (of values it cannot bound).

In: a NumPy function whose output shape depends on the values (``externs.SPECULATED``), its
argument structure (``Slot`` where a traced array goes) and the traced arrays. Out: each
output's shape with ``COUNT`` at the one axis whose length the values decide (the number of
True elements of a mask, of distinct values), every other axis as the inputs' sizes; None for
the forms with no such rule (``x[:, mask]``, ``np.unique(..., axis=0)``, ``return_inverse``).

The caller (``externs.extern_call``) makes that axis a *count symbol* (``m0``, ``m1``, ...:
``ir.graph.COUNTED``): the runtime reads its value from the array NumPy's step returns,
then allocates the buffers whose shapes use it and passes it to the kernels after the step
(``runtime.compiled``). A fact the trace relied on (``y[0]`` needs ``m0 >= 1``) is a guard
checked right after the step; a call that breaks it is traced again for its count. So one
build serves every count, where it used to serve the first call's count only.
"""
from __future__ import annotations

import numpy as np

COUNT = "count"     # the axis the values decide (in the shapes ``counted_shapes`` returns)


def counted_shapes(name: str, targs: tuple, tkwargs: dict, proxies: list):
    """Each output's shape with ``COUNT`` at its counted axis; None when no rule applies."""
    from ..runtime.extern import Slot

    def shape(k):
        t = arg(k, None)
        if isinstance(t, Slot):
            return tuple(proxies[t.k].node.shape)
        return None if t is None else np.shape(t)

    def arg(k, key, default=None):
        if k < len(targs):
            return targs[k]
        return tkwargs.get(key, default)
    short = name.rsplit(".", 1)[-1]
    first = shape(0)
    if short == "advanced_index":       # x[mask], x[mask, :]: (count, the rest of x's axes)
        key = targs[1]
        if not isinstance(key, Slot) or proxies[key.k].dtype.kind != "b" or \
                not 0 < proxies[key.k].ndim <= len(first):
            return None
        return [(COUNT, *first[proxies[key.k].ndim:])]
    if first is None or not isinstance(arg(0, None), Slot):
        return None
    if short == "axis_slice":           # a[lo:hi] along an axis (dataslice.PendingSlice)
        return [tuple(COUNT if k == targs[1] else d for k, d in enumerate(first))]
    if short == "nonzero":
        return [(COUNT,)] * len(first) if first else None
    if short == "argwhere":
        return [(COUNT, len(first))]
    if short in ("flatnonzero", "unique_values", "sized", "bincount"):   # (bincount's: the
                                        # largest value + 1, or minlength)
        return [(COUNT,)]
    if short == "extract":
        return [(COUNT,)] if isinstance(arg(1, "arr"), Slot) else None
    if short == "compress":             # np.compress(condition, a, axis)
        a, axis = shape(1), arg(2, "axis")
        if a is None or axis is None:
            return None if a is None else [(COUNT,)]
        axis = int(axis) % len(a) if a else 0
        return [tuple(COUNT if k == axis else d for k, d in enumerate(a))]
    if short == "unique":               # values, and the indices and counts asked for
        flags = [bool(arg(k, key, False)) for k, key in
                 ((1, "return_index"), (2, "return_inverse"), (3, "return_counts"))]
        if flags[1] or arg(4, "axis") is not None:
            return None
        return [(COUNT,)] * (1 + flags[0] + flags[2])
    return None


def count_order(roots, counts: dict) -> list:
    """The nodes computed for ``roots``, operands first, and every node whose shape or
    attributes use a count symbol after the step that gives the count (``len(y)`` of
    ``y = x[mask]`` is a ``size`` node with no operands: it must not run before the step)."""
    from ..ir.graph import postorder, toposort
    steps = {str(sym): node for sym, node in counts.items() if node is not None}
    if not steps:
        return toposort(roots)

    def children(n):
        return list(n.inputs) + [steps[name] for name in _symbols(n)
                                 if name in steps and steps[name] is not n]
    return postorder(roots, children)


def _symbols(node) -> set:
    """Names of the symbols in ``node``'s shape, attributes and regions."""
    from ..ir.graph import Region
    out, stack = set(), [node.shape, [v for _, v in node.attrs]]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, Region):
            stack.extend([n.shape for n in v.nodes] + [[a for _, a in n.attrs] for n in v.nodes])
        elif hasattr(v, "free_symbols"):
            out |= {s.name for s in v.free_symbols}
    return out


SELECTED: dict = {}     # id(count node) -> (the node, its selection): ``len(x[mask])``, a
                        # masked sum until it is used as a size (cleared as a trace starts)


def count_size(node):
    """The count symbol of ``len(x[mask])`` (``node``, a masked sum) used as a size
    (``np.zeros(len(y) + 1)``, ``range(len(y))``): the selection is made by NumPy's step and
    its length is the size; None for any other node, or inside a compiled loop."""
    from ..ir.graph import MADE
    from .externs import TraceState
    pair = SELECTED.get(id(node))
    if pair is None or pair[0] is not node or MADE or TraceState.args is None:
        return None
    d = pair[1].node.shape[0]
    return None if isinstance(d, int) else d
