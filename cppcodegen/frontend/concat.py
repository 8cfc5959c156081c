"""Joining arrays: ``np.concatenate``, ``np.append``, ``np.hstack``, ``np.vstack``,
``np.column_stack``, ``np.stack`` of traced arrays and constants.

In: the arrays (proxies, NumPy arrays, lists, scalars where NumPy takes them), NumPy's
keywords. Out: a fresh array built from a zero array by one slice assignment per part
(``out[..., start:start + n_k, ...] = part_k``): lowered as a pointwise ``where`` on index
ranges, so the join is fused into its consumers (``np.add.reduceat`` of
``np.concatenate((vals * x[cols], [0.0]))`` reads the products and the zero inside its loop,
no copy). NumPy's rules: the result dtype (``np.result_type`` of the parts, or ``dtype=``
checked with ``casting=``), its errors for ranks and sizes that do not match.

``out=`` and a traced array as the sequence itself (``np.concatenate(a2d)``) run NumPy's own
function between kernels. A boolean-mask selection's part has the length of its count
(``frontend/counted.py``).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import user_location
from .creation import array, holds_proxy, zeros
from .externs import extern_call
from .indexing import setitem
from . import replace
from .proxy import asproxy, Proxy, unsupported, update, wrap
from .sizes import is_dim, same_size
from .views import expand_dims, ravel, reshape


def _part(x):
    """A part as an array: a list holding traced values (``[x[0]]``) as ``np.array`` of it."""
    if isinstance(x, Proxy):
        return x
    return array(x, original=np.array) if holds_proxy(x) else np.asarray(x)


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if isinstance(arrays, (Proxy, np.ndarray)) or (out is not None and (
            not isinstance(out, Proxy) or dtype is not None)):
        return extern_call(np.concatenate, (arrays,),
                           dict(axis=axis, out=out, dtype=dtype, casting=casting))
    parts = [_part(a) for a in arrays]
    if out is None:
        return join(parts, axis, dtype, casting)
    result = join(parts, axis, out.dtype, casting)       # out=: its dtype, its exact shape
    if result.ndim != out.ndim or not all(same_size(a, b) for a, b in zip(result.shape,
                                                                          out.shape)):
        raise ValueError(f"Output array has wrong shape (at {user_location()})")
    update(out, result.node)
    return out


def join(parts, axis, dtype=None, casting="same_kind"):
    """``np.concatenate(parts, axis)`` of proxies and NumPy arrays (``axis`` None: of the
    flattened parts)."""
    if not parts:
        raise ValueError(f"need at least one array to concatenate (at {user_location()})")
    if axis is None:
        parts = [ravel(p) if isinstance(p, Proxy) else p.ravel() for p in parts]
        axis = 0
    nd = parts[0].ndim
    if nd == 0:
        raise ValueError(f"zero-dimensional arrays cannot be concatenated (at {user_location()})")
    axis = normalize_axis_index(axis, nd)
    first = parts[0].shape
    for k, p in enumerate(parts[1:], 1):
        if p.ndim != nd:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at "
                f"index 0 has {nd} dimension(s) and the array at index {k} has {p.ndim} "
                f"dimension(s) (at {user_location()})")
        for d in range(nd):
            if d != axis and not same_size(p.shape[d], first[d]):
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first[d]} and the array at index {k} has size {p.shape[d]} "
                    f"(at {user_location()})")
    if dtype is None:
        dt = np.result_type(*[p.dtype for p in parts])
    else:
        dt = np.dtype(dtype)
        for p in parts:
            if not np.can_cast(p.dtype, dt, casting):
                raise TypeError(f"Cannot cast array data from {p.dtype!r} to {dt!r} according "
                                f"to the rule {casting!r} (at {user_location()})")
    total = 0
    for p in parts:
        total = total + p.shape[axis]
    shape = tuple(total if d == axis else first[d] for d in range(nd))
    result = zeros(shape, dtype=dt)
    start = 0
    for p in parts:
        n = p.shape[axis]
        if type(n) is int and n == 0:
            continue
        setitem(result, (slice(None),) * axis + (slice(start, start + n),), p)
        start = start + n
    return result


def atleast(x, nd):
    """``np.atleast_<nd>d(x)``: (1, n) from n; atleast_3d: (1, n, 1) from n, (m, n, 1)
    from (m, n); a scalar (1,) * nd."""
    p = _part(x)
    if p.ndim >= nd:
        return p
    if nd == 3 and p.ndim:
        shape = (1,) * (2 - p.ndim) + tuple(p.shape) + (1,)
    else:
        shape = (1,) * (nd - p.ndim) + tuple(p.shape)
    return reshape(p, shape) if isinstance(p, Proxy) else p.reshape(shape)


def append(arr, values, axis=None):
    if axis is None:
        return join([_part(arr), _part(values)], None)
    return join([_part(arr), _part(values)], axis)


def insert(arr, obj, values, axis=None):
    """``np.insert`` at one index (an int): the part before it, the values (cast to the
    array's dtype, broadcast to a slab of the array, as NumPy does for an int index) and the
    part after it, joined. Index arrays and slices are not compiled."""
    if isinstance(obj, Proxy) or not isinstance(obj, (int, np.integer)):
        unsupported("np.insert at an index array, a slice or a traced index (an int is "
                    "compiled)")
    a = _part(arr)
    if axis is None:
        a = np.ravel(a)
        axis = 0
    axis = normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    index = int(obj)
    if not isinstance(n, (int, np.integer)):
        if index < 0:
            unsupported("np.insert at a negative index of an axis of run-time length")
    elif not -n <= index <= n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    elif index < 0:
        index += n
    v = _part(values)
    v = v.astype(a.dtype) if isinstance(v, Proxy) else np.asarray(v, dtype=a.dtype)
    if v.ndim < a.ndim:
        v = np.reshape(v, (1,) * (a.ndim - v.ndim) + tuple(v.shape))
    v = np.moveaxis(v, 0, axis)
    shape = list(a.shape)
    shape[axis] = v.shape[axis]
    v = np.broadcast_to(v, tuple(shape))
    before = tuple(slice(None) if d != axis else slice(None, index) for d in range(a.ndim))
    after = tuple(slice(None) if d != axis else slice(index, None) for d in range(a.ndim))
    return join([a[before], v, a[after]], axis)


def hstack(tup, *, dtype=None, casting="same_kind"):
    parts = [atleast(a, 1) for a in tup]
    return _or_extern(np.hstack, tup, parts, 0 if parts and parts[0].ndim == 1 else 1,
                      dtype, casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    return _or_extern(np.vstack, tup, [atleast(a, 2) for a in tup], 0, dtype, casting)


def column_stack(tup):
    parts = []
    for a in tup:
        p = _part(a)
        if p.ndim < 2:
            p = atleast(p, 1)
            p = reshape(p, (p.shape[0], 1)) if isinstance(p, Proxy) else p.reshape(-1, 1)
        parts.append(p)
    return _or_extern(np.column_stack, tup, parts, 1, None, "same_kind")


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None or isinstance(arrays, (Proxy, np.ndarray)):
        return extern_call(np.stack, (arrays,),
                           dict(axis=axis, out=out, dtype=dtype, casting=casting))
    parts = [_part(a) for a in arrays]
    if not parts:
        raise ValueError(f"need at least one array to stack (at {user_location()})")
    shape = parts[0].shape
    for p in parts[1:]:
        if p.ndim != len(shape) or not all(same_size(a, b) for a, b in zip(p.shape, shape)):
            raise ValueError(f"all input arrays must have the same shape (at {user_location()})")
    axis = normalize_axis_index(axis, len(shape) + 1)
    framed = frames(parts, axis) if dtype is None else None
    if framed is not None:
        return framed
    parts = [expand_dims(p, axis) if isinstance(p, Proxy) else np.expand_dims(p, axis)
             for p in parts]
    return _or_extern(np.stack, arrays, parts, axis, dtype, casting)


def frames(parts, axis):
    """``np.stack([x[k * hop:k * hop + n] for k in range(m)])`` (a signal's frames): slices
    of one array that differ only in where one axis starts, in steps of one stride apart,
    read as one gather (element [k, j] is ``x[start + k * hop + j * step]``) rather than one
    part joined after another (a chain of selects as long as the list); None otherwise."""
    import sympy
    if len(parts) < 3 or not all(
            isinstance(p, Proxy) and p.node.op == "slice" and len(p.node.inputs) == 1
            for p in parts):
        return None
    src, specs = parts[0].node.inputs[0], [p.node.attr("spec") for p in parts]
    if any(p.node.inputs[0] is not src or len(sp) != len(specs[0]) for p, sp in
           zip(parts, specs)) or len(specs[0]) != src.ndim or parts[0].ndim != src.ndim:
        return None
    moving = [d for d in range(src.ndim) if any(sp[d] != specs[0][d] for sp in specs)]
    if len(moving) != 1:
        return None
    (ax,) = moving
    starts = [sympy.sympify(sp[ax][0]) for sp in specs]
    if any(sp[ax][1:] != specs[0][ax][1:] or any(sp[d] != specs[0][d] for d in range(src.ndim)
                                                 if d != ax) for sp in specs):
        return None
    hop = sympy.expand(starts[1] - starts[0])
    if any(sympy.expand(st - starts[0] - k * hop) != 0 for k, st in enumerate(starts)):
        return None
    hop = int(hop) if hop.is_Integer else hop
    start, step, length = specs[0][ax]
    whole = tuple(slice(None) if d == ax else slice(sp[0], sp[0] + sp[1] * sp[2], sp[1])
                  if sp[1] > 0 else None for d, sp in enumerate(specs[0]))
    if None in whole or not all(isinstance(x, (int, np.integer)) for x in (step,)):
        return None
    from .creation import _iota
    from .views import moveaxis
    source = wrap(src)[whole]
    index = _iota(len(parts), start, hop)[:, None] + _iota(length, 0, step)[None, :]
    framed = source[(slice(None),) * ax + (index,)]
    return framed if axis == ax else moveaxis(framed, ax, axis).copy()


def _or_extern(func, tup, parts, axis, dtype, casting):
    if isinstance(tup, (Proxy, np.ndarray)):
        return extern_call(func, (tup,), {} if dtype is None else dict(dtype=dtype))
    return join(parts, axis, dtype, casting)


FUNCTIONS = {np.concatenate: concatenate, np.append: append, np.insert: insert, np.hstack: hstack,
             np.vstack: vstack, np.column_stack: column_stack, np.stack: stack}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""


class _RowJoin:
    """``np.r_[a, b, ...]`` while a trace runs (``np.r_[True, s[1:] != s[:-1]]``, the start
    of each run): with a traced item, NumPy's rule, joined by ``join``: scalars and 0-d arrays
    as one-element arrays, slices as NumPy's ranges, every item in the result dtype of the
    arrays' dtypes and the scalars' values. NumPy's own object does the rest (no traced
    item, a string directive)."""
    replaces_object = True

    def __init__(self, original):
        self.original = original

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if any(isinstance(i, str) for i in items) or not any(
                isinstance(i, Proxy) or holds_proxy(i) or is_dim(i) for i in items):
            return self.original[key]
        parts, kinds = [], []
        for item in items:
            part = self.original[item] if isinstance(item, slice) else \
                asproxy(item) if is_dim(item) else _part(item)
            weak = isinstance(part, Proxy) and part.weak and not part.shape
            kinds.append(_WEAK_VALUE[part.dtype.kind] if weak else
                         item if isinstance(item, (bool, int, float, complex, np.generic))
                         else part.dtype)
            parts.append(part)
        final = np.result_type(*kinds)
        parts = [reshape(p.astype(final), (1,)) if isinstance(p, Proxy) and not p.shape else
                 p.astype(final) if isinstance(p, Proxy) else np.array(p, final, ndmin=1)
                 for p in parts]
        return join(parts, 0)


_WEAK_VALUE = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}   # (a Python number's kind)
replace.register(np, {"r_": _RowJoin(np.r_)})
