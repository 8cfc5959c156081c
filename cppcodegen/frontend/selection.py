"""Boolean-mask selections kept lazy: ``x[mask]`` as (x, mask) until its values are needed.

In: ``x[mask]`` with a boolean mask of ``x``'s shape (or of its leading dimensions). Out: a
``Selection`` proxy. Elementwise operations on selections of one mask (and scalars) give the
selection of the operation on the whole arrays (``f(x[m]) == f(x)[m]``); reductions over it
(``sum``, ``prod``, ``any``, ``all``, ``mean``, and ``max``/``min`` with ``initial=``) reduce
``where(mask, x, identity)`` (``reductions.py``); ``y[m] = <selection of m>`` (so ``x[m] *= 2``) is
``where(m, value, y)``. None of them needs the number of selected elements, so the compiled
code serves every mask (a count is a reduction of the mask). In a compiled loop its shape is
the mask's count, computed there (``data_length``). Any other use (its shape
elsewhere, a return, an index) asks for ``node``: NumPy's own indexing between kernels, with the count of
this call (speculated, checked at run time: ``externs.extern_call``).
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from ..ir.graph import MADE
from .dataslice import data_length
from .externs import extern_call
from .proxy import Proxy, wrap
from .sizes import symbolic, user_dim, user_shape


class Selection(Proxy):
    """``base[mask]``, not yet computed. ``base`` has the mask's shape in its leading
    dimensions; ``mask_node`` identifies the mask (selections of one mask combine)."""

    def __init__(self, base: Proxy, mask: Proxy):
        super().__init__(None)
        # their values now (NumPy's x[mask] is a copy: a later x += 1 does not show in it)
        self.base, self.mask, self.mask_node = wrap(base.node), wrap(mask.node), mask.node
        self._count = None              # (the data symbol of its length: ``shape``)
        self.where = user_location()    # (computed later: named by the line that wrote it)

    @property
    def node(self):
        if self._node is None:          # its values are needed: NumPy's indexing
            from ..runtime.extern import advanced_index
            self._node = extern_call(advanced_index, (self.base, self.mask), {},
                                     speculate=True, where=self.where).node
        return self._node

    @node.setter
    def node(self, value):
        self._node = value

    dtype = property(lambda self: self.base.dtype)
    ndim = property(lambda self: self.base.ndim - self.mask.ndim + 1)

    @property
    def shape(self):
        """In a compiled loop, the count of the mask's True elements as a length the
        compiled code computes (``if X[labels == j].shape[0] > 0:``), the selection kept
        lazy; elsewhere the shape of NumPy's indexing (``externs``: one build serves every
        count)."""
        env = symbolic().current() if MADE else None
        if self._node is None and env is not None and env.loops:
            if self._count is None:
                self._count = data_length(np.count_nonzero(self.mask))[0]
            return user_shape((self._count,) + tuple(self.base.node.shape[self.mask.ndim:]))
        return user_shape(self.node.shape)

    @property
    def size(self):
        from ..ir.shapes import prod    # (while tracing: import cppcodegen loads no sympy)
        return user_dim(prod(self.shape))

    def same_mask(self, other) -> bool:
        return isinstance(other, Selection) and same_value(other.mask_node, self.mask_node)


def same_value(a, b, depth: int = 12) -> bool:
    """Do nodes ``a`` and ``b`` compute the same value (the same op of the same operands:
    ``x > 1`` written twice)? Leaves (inputs, loop parameters) must be the same node."""
    if a is b:
        return True
    if depth == 0 or a.op != b.op or a.shape != b.shape or a.dtype != b.dtype or \
            len(a.inputs) != len(b.inputs) or a.op in ("input", "scalar", "carry", "random"):
        return False
    if a.op not in ("const",) and not a.inputs:
        return False
    try:
        if dict(a.attrs) != dict(b.attrs):
            return False
    except Exception:                   # noqa: BLE001 -- attributes that do not compare
        return False
    return all(same_value(x, y, depth - 1) for x, y in zip(a.inputs, b.inputs))


def is_selection(x) -> bool:
    return isinstance(x, Selection) and x._node is None


def lift(fn, inputs):
    """``fn`` over the whole arrays of selections of one mask (other inputs broadcast along
    their trailing axes only: 0-d, or fewer axes than the selections): the selection of the
    result; None when ``inputs`` are not such a combination. (Selections of one mask with
    the same number of axes align their trailing axes as their bases do: ``s[m] / c[m][:,
    None]`` is ``(s / c[:, None])[m]``.)"""
    sels = [x for x in inputs if is_selection(x)]
    if not sels or any(not sels[0].same_mask(s) for s in sels[1:]):
        return None
    k, nd = sels[0].mask.ndim, sels[0].ndim
    if any(s.ndim != nd for s in sels) or \
            any(not is_selection(x) and np.ndim(x) >= nd for x in inputs):
        return None
    result = fn([x.base if is_selection(x) else x for x in inputs])
    if not isinstance(result, Proxy) or result.node.ndim != k + nd - 1 or \
            tuple(result.node.shape[:k]) != tuple(sels[0].base.node.shape[:k]):
        return None
    return Selection(result, sels[0].mask)
