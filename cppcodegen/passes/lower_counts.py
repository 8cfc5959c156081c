"""Lowering of searches and counts: ``search`` and ``bincount`` graph nodes.

In: the nodes ``frontend/counts.py`` makes, met by ``lower.Lowering`` (mixed in). Out: a
``search`` is an expression (``loopir.Search``: a binary search of the sorted 1-D array's
buffer, inlined into its consumers like a gather); a ``bincount`` is a stage of kind
'bincount' over the counted values (body group(bin index, weight, keep), ``binds`` = (number
of bins, whether a negative index is NumPy's ValueError)), rendered by
``backend/counts.py``.
"""
from __future__ import annotations

import numpy as np
import sympy

from ..ir.graph import Node
from ..ir.loopir import SEARCH_VAR, STATUS, Gather, Load, Stage, index_vars
from .indexing import broadcast_index


class CountLowering:
    """Methods of ``lower.Lowering`` for searches and counts (mixed in)."""

    def _search(self, node: Node, idx: tuple):
        """``np.searchsorted(a, v)`` at ``idx``: a's buffer read at a linear index of
        ``SEARCH_VAR`` (a view of a buffer in memory, or a buffer made for it)."""
        bins, values = node.inputs
        e = self.value(bins, (SEARCH_VAR,))
        if not _linear_load(e, self.buffers):
            e = self.eb.load(self.realize(bins), (SEARCH_VAR,), bins.dtype)
        v = self.value(values, broadcast_index(idx, values.shape, node.shape))
        return self.eb.search(e.buf, e.index, v, bins.shape[0], node.attr("side") == "right")

    def _bincount(self, node: Node, label, where) -> Stage:
        """Counts (or sums of weights) of the bin indices of the values kept: a stage over
        the values whose body is group(index, weight or 1, keep or True)."""
        index, *rest = node.inputs[:-1] if node.attr("bound", False) else node.inputs
        (i0,) = index_vars(1)
        eb, i64 = self.eb, np.dtype(np.int64)
        if STATUS not in self.buffers:          # where a negative value is reported
            self.new_buffer(STATUS, i64, (4,), "status")
        weight = (self.value(rest[0], (i0,)) if node.attr("weighted")
                  else eb.const(1, node.dtype))
        keep = (self.value(rest[-1], (i0,)) if node.attr("masked")
                else eb.const(True, np.dtype(bool)))
        body = eb.op("group", [self.value(index, (i0,)), weight, keep,
                               eb.load(STATUS, (0,), i64)], node.dtype)
        return Stage("", "bincount", tuple(index.shape), body, (), None, label, where,
                     binds=(node.shape[0], node.attr("negative")))


def _linear_load(e, buffers) -> bool:
    """A plain load of a buffer in memory whose offset is linear in ``SEARCH_VAR``."""
    if not isinstance(e, Load) or isinstance(e, Gather):
        return False
    buf = buffers[e.buf]
    off = sympy.expand(sum((i * s for i, s in zip(e.index, buf.strides)), sympy.Integer(0)))
    return off.is_polynomial(SEARCH_VAR) and sympy.degree(off, SEARCH_VAR) <= 1 and \
        not any(s.name.startswith("i") for s in off.free_symbols if s != SEARCH_VAR)
