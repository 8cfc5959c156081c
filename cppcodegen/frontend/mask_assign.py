"""``x[mask] = v``: boolean-mask assignment as a select over ``x``.

In: ``indexing._scatter``'s target, its index parts (one of them a mask), the value.
Out: ``x`` updated in place (``proxy.update``) and True, or False when the form is not
one of these (the caller refuses it):

- ``v`` one value for every selected element or row: a 0-d value, ``f(x[m])`` of the same
  mask (``f(x)`` where ``m`` holds), or, with a mask of ``x``'s leading axes, a row
  broadcast to each selected row (``img[m] = color``: ``np.where(m[..., None], color,
  img)``);
- ``v`` with one item per selected element or row (``y[bad] = np.interp(...)``,
  ``r[m] = r[m] ** -1.5`` computed as an array): the k-th True element of ``m`` takes
  ``v[k]``. Its rank is a running count of ``m`` in C order, and ``v`` is read there only
  where ``m`` holds (a guarded gather), so every pass is a fused loop. NumPy's ValueError
  when ``len(v)`` is not the mask's count (the program stops there).
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from .elementwise import where
from .proxy import as_node, asproxy, broadcast_node, broadcasts_to, size_operand, update
from .selection import is_selection, same_value
from .views import ravel, reshape


def mask_store(a, parts, value, accumulate) -> bool:
    m, k = asproxy(parts[0]), np.ndim(parts[0])
    if accumulate is not None or len(parts) != 1 or k > a.ndim or \
            tuple(m.shape) != tuple(a.shape[:k]):
        return False
    if is_selection(value) and same_value(value.mask_node, m.node) and \
            value.base.shape == a.shape:
        value = value.base              # x[m] = f(x[m]): f(x) where m holds
    elif is_selection(value) or np.ndim(value) > a.ndim - k and not _one_each(a, value, k):
        return False
    elif np.ndim(value) > a.ndim - k:   # one item per selected element or row
        value = _ranked(asproxy(value), m, a.ndim - k)
    elif not broadcasts_to(np.shape(value), tuple(a.shape[k:])):
        return False
    m = reshape(m, tuple(m.shape) + (1,) * (a.ndim - k))
    update(a, broadcast_node(as_node(where(m, value, a), a.dtype), a.shape))
    return True


def _one_each(a, value, k) -> bool:
    """Does ``value`` hold one item (of ``a``'s trailing shape) per selected element?"""
    shape = np.shape(value)
    return len(shape) == a.ndim - k + 1 and broadcasts_to(shape[1:], tuple(a.shape[k:]))


def _ranked(v, m, trailing: int):
    """``v[rank]`` where ``m`` holds (rank: the number of True elements before, in C order),
    after the check that ``v`` has the mask's count of items."""
    from .indexing import _gather, guarded     # (indexing and raises call this module)
    from .raises import require
    from .reductions import cumsum
    flat = ravel(m).astype(np.int64)
    count = flat.sum()
    n = size_operand(v.node.shape[0])
    require(count == n, (ValueError, ("NumPy boolean array indexing assignment cannot "
                                      "assign the values (their number is not the number "
                                      "of True elements of the mask)",)), user_location())
    rank = reshape(cumsum(flat) - 1, tuple(m.shape))
    with guarded(reshape(m, tuple(m.shape) + (1,) * trailing)):
        return _gather(v, (rank,))
