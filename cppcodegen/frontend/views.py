"""Views: reshape, transpose, swapaxes, moveaxis, broadcast_to, expand_dims, squeeze, ravel.

In: a traced array and the view's parameters. Out: a proxy that views it (``proxy.view_of``):
a ``reshape``/``transpose``/``broadcast_to`` node that lowering turns into an index rewrite,
never a copy; it sees later in-place updates of the viewed array and writes into it.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import user_location
from ..ir.graph import make_node
from .proxy import asproxy, broadcast_node, broadcast_operands, Proxy, unsupported, view_of
from .sizes import dynamic, is_dim, symbolic


def reshape(a, shape, order="C", **kw):
    a = asproxy(a)
    if order == "F":            # Fortran order: the reversed axes reshaped in C order
        shape = (shape,) if isinstance(shape, (int, np.integer)) or is_dim(shape) else shape
        return transpose(reshape(transpose(a), tuple(shape)[::-1]))
    if order != "C":
        unsupported(f"reshape with order={order!r}")
    dims = a.node.shape                 # (first: a selection's count may make the trace's
    if dynamic() and (is_dim(shape) or not all(type(d) is int for d in dims)   # sizes symbolic)
                       or any(is_dim(s) for s in shape)):
        single = is_dim(shape) or isinstance(shape, (int, np.integer))
        return _reshape_symbolic(a, (shape,) if single else tuple(shape))
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension (at {user_location()})")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                             f"(at {user_location()})")
        shape = tuple(a.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != a.size or any(s < 0 for s in shape):
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                         f"(at {user_location()})")
    if shape == a.shape:
        return a
    return view_of(a, make_node("reshape", (a.node,), shape, a.dtype, user_location()))



def _reshape_symbolic(a: Proxy, shape) -> Proxy:
    sh = symbolic()
    shape = [sh.canon(s) for s in shape]
    if sum(1 for s in shape if type(s) is int and s == -1) > 1:
        raise ValueError(f"can only specify one unknown dimension (at {user_location()})")
    total = sh.prod(a.node.shape)
    if -1 in shape:
        known = sh.prod([s for s in shape if not (type(s) is int and s == -1)])
        if sh.equal(known, 0):
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                             f"(at {user_location()})")
        shape = [sh.exact_div(total, known) if type(s) is int and s == -1 else s for s in shape]
    shape = tuple(sh.canon(s) for s in shape)
    if not sh.equal(sh.prod(shape), total):
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                         f"(at {user_location()})")
    if shape == a.node.shape:
        return a
    return view_of(a, make_node("reshape", (a.node,), shape, a.dtype, user_location()))


def transpose(a, axes=None):
    a = asproxy(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    axes = normalize_axis_tuple(tuple(axes), a.ndim)
    if len(axes) != a.ndim:
        raise ValueError(f"axes don't match array (at {user_location()})")
    if axes == tuple(range(a.ndim)):
        return a
    shape = tuple(a.shape[i] for i in axes)
    return view_of(a, make_node("transpose", (a.node,), shape, a.dtype, user_location(), perm=axes))


def swapaxes(a, axis1, axis2):
    a = asproxy(a)
    i, j = normalize_axis_tuple((axis1, axis2), a.ndim, allow_duplicate=True)
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    a = asproxy(a)
    src = normalize_axis_tuple(source, a.ndim)
    dst = normalize_axis_tuple(destination, a.ndim)
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def broadcast_to(a, shape, subok=False):
    a = asproxy(a)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return view_of(a, broadcast_node(a.node, shape))


def broadcast_arrays(*args, subok=False):
    shape = broadcast_operands(args, "np.broadcast_arrays")
    return tuple(broadcast_to(a, shape) for a in args)


def expand_dims(a, axis):
    a = asproxy(a)
    axes = normalize_axis_tuple(axis, a.ndim + (len(axis) if isinstance(axis, tuple) else 1))
    shape = list(a.shape)
    for ax in sorted(axes):
        shape.insert(ax, 1)
    return reshape(a, shape)


def squeeze(a, axis=None):
    a = asproxy(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = normalize_axis_tuple(axis, a.ndim)
        for ax in axes:
            if a.shape[ax] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 f"equal to one (at {user_location()})")
    return reshape(a, [s for i, s in enumerate(a.shape) if i not in axes])


def ravel(a, order="C"):
    return reshape(a, (-1,), order=order)


def axis_slice(a, axis: int, lo, hi):
    """``a[..., lo:hi, ...]`` on ``axis`` (a proxy or a NumPy array)."""
    return a[(slice(None),) * axis + (slice(lo, hi),)]


def rot90(m, k=1, axes=(0, 1)):
    """NumPy's rotation as NumPy composes it: flips and a transpose, a view of ``m``."""
    from .indexing import flip
    m = asproxy(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return m[:]
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    return transpose(flip(m, axes[1]), order) if k == 1 else flip(transpose(m, order), axes[1])
