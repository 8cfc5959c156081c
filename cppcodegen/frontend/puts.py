"""NumPy's functions that store at positions: ``np.<ufunc>.at``, ``np.put``,
``np.fill_diagonal`` and ``np.copyto``.

In: the user's call on a traced array (an argument or an array made in the function). Out: an
in-place update of it (``indexing._scatter``: a ``scatter`` node, accumulating for ``.at``; or
a ``setitem`` of a strided slice of the flat array), with NumPy's rules for repeated indices
and for values repeated cyclically.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataDependentError, user_location
from ..ir.ufuncs import ALIASES, BOOL_RESULT, OPS
from .indexing import _gather, _scatter, getitem, setitem
from .proxy import asproxy, copy_of, Proxy, unsupported
from .sizes import symbolic
from .views import ravel, reshape


def ufunc_at(ufunc, a, indices, b=None):
    """``np.add.at(a, indices, b)`` (any binary ufunc of ``AT_OPS``: maximum, divide, bitwise
    or, ...; complex arrays: add, subtract, multiply): every repeat accumulates."""
    name = ALIASES.get(ufunc.__name__, ufunc.__name__)
    complex_ok = name in ("add", "subtract", "multiply") or not any(
        np.result_type(u).kind == "c" for u in (a, b) if u is not None)
    if name not in AT_OPS or b is None or not complex_ok:
        unsupported(f"np.{ufunc.__name__}.at" + ("" if b is not None else " of one operand"))
    if not isinstance(a, Proxy):
        raise TypeError(f"np.{ufunc.__name__}.at: the array updated must be an argument or an "
                        f"array made in the function (at {user_location()})")
    masked = _masked_at(name, a, indices, b)
    if masked is not None:
        indices, b = masked
    _scatter(a, indices, b, name)


def _masked_at(name, a, indices, b):
    """``np.add.at(hist, idx[idx < n], w[idx < n])``: a boolean selection of indices (and of
    values, or one value) as the whole arrays, where the mask is False the index 0 and the
    ufunc's identity as the value (``x + -0.0`` is ``x``, -0.0 and NaN too; ``maximum(x,
    -inf)`` is ``x``), so the count of selected elements is never needed: one compiled
    scatter for every mask. An empty ``a`` (whose index 0 does not exist) runs as Python.
    (Selected into an empty ``a``, NumPy's IndexError.) None when that does not apply."""
    from .elementwise import where as select
    from .selection import is_selection
    if not (is_selection(indices) and indices.ndim == 1 and indices.mask.ndim == 1 and
            a.ndim >= 1):
        return None
    mask = indices.mask
    if is_selection(b):
        if not indices.same_mask(b) or b.ndim != 1:
            return None
        values = b.base
    elif np.ndim(b) == 0:
        values = b
    else:
        return None
    dt = np.result_type(a.dtype, values.dtype if isinstance(values, Proxy) else values)
    neutral = _identity(name, dt)
    if neutral is None:
        return None
    idx = select(mask, indices.base, 0)
    n = a.shape[0]
    if not (isinstance(n, int) and n > 0):
        from ..errors import EmptyList
        from .iteration import size_proxy
        from .raises import error_check
        where = user_location()
        size = size_proxy(n)
        idx = error_check(idx, np.logical_or(size > 0, np.any(mask)).astype(
            np.int64), (EmptyList, (f"np.{name}.at into an empty array (at {where}): this "
                                    "call already updated an argument",)), where)
    return idx, select(mask, values, np.asarray(neutral, dt))


def _identity(name, dt):
    """What ``np.<name>(x, v)`` leaves ``x`` as it is for, of dtype ``dt``, or None."""
    kind = dt.kind
    if name == "add":
        return complex(-0.0, -0.0) if kind == "c" else -0.0 if kind == "f" else 0
    if name == "subtract":
        return 0
    if name in ("multiply", "divide", "true_divide", "power", "float_power"):
        return 1
    if name in ("maximum", "fmax", "minimum", "fmin"):
        low = name in ("maximum", "fmax")
        if kind == "f":
            return -np.inf if low else np.inf
        if kind in "iu":
            info = np.iinfo(dt)
            return info.min if low else info.max
        return None
    if name in ("bitwise_or", "bitwise_xor") and kind in "iub":
        return 0
    if name == "bitwise_and" and kind in "iu":
        return np.array(-1).astype(dt)[()] if kind == "i" else np.iinfo(dt).max
    return None


AT_OPS = frozenset(n for n, op in OPS.items() if op.nin == 2 and n not in BOOL_RESULT
                   and n not in ("where", "complex", "mul_naive", "div_py", "arctan2", "hypot",
                                 "copysign", "nextafter", "ldexp", "heaviside"))


def put(a, ind, v, mode="raise"):
    """``np.put(a, ind, v)``: a scatter into ``a`` read flat in C order, ``v`` flattened and
    repeated to the number of indices (nothing happens when ``v`` is empty, as in NumPy)."""
    if mode != "raise":
        unsupported(f"np.put with mode={mode!r}")
    if not isinstance(a, Proxy):        # a NumPy constant of the trace (np.arange(5))
        raise DataDependentError(f"np.put: traced indices or values cannot be written into a "
                                 f"NumPy array (at {user_location()})")
    ind, vals = (ravel(asproxy(np.asarray(u) if isinstance(u, (list, tuple)) else u))
                 for u in (ind, v))
    ni, nv = ind.shape[0], vals.shape[0]
    if not isinstance(ni, int) or not isinstance(nv, int):
        if ni is not nv and nv != 1:
            unsupported("np.put with symbolic sizes of indices and values that may differ")
    elif nv == 0:
        return
    elif nv not in (1, ni):             # NumPy repeats the values cyclically
        vals = _gather(vals, (np.arange(ni) % nv,))
    flat = copy_of(ravel(a), scalar=False)
    _scatter(flat, (ind,), vals if nv != 1 else reshape(vals, ()))
    setitem(a, Ellipsis, reshape(flat, a.shape))


def fill_diagonal(a, val, wrap=False):
    """``np.fill_diagonal(a, val, wrap)``: ``a.flat[:end:step] = val`` as NumPy writes it
    (``val`` flattened and repeated along the diagonal; a tall matrix wraps only with
    ``wrap``); a store into ``a`` in place."""
    if not isinstance(a, Proxy):
        raise DataDependentError(f"np.fill_diagonal: traced values cannot be written into a "
                                 f"NumPy array (at {user_location()})")
    if a.ndim < 2:
        raise ValueError(f"array must be at least 2-d (at {user_location()})")
    if a.ndim == 2:
        step, end = a.shape[1] + 1, None if wrap else a.shape[1] * a.shape[1]
    else:
        if any(symbolic().equal(d, a.shape[0]) is False for d in a.shape[1:]):
            raise ValueError(f"All dimensions of input must be of equal length (at "
                             f"{user_location()})")
        step, end = 1 + int(np.cumprod([int(d) for d in a.shape[:-1]]).sum()), None
    flat = copy_of(ravel(a), scalar=False)
    n = getitem(flat, slice(None, end, step)).shape[0]
    vals = ravel(asproxy(np.asarray(val) if isinstance(val, (list, tuple)) else val))
    nv = vals.shape[0]
    if nv == 0 or n == 0:
        return
    if not isinstance(n, int) or not isinstance(nv, int):
        if nv != 1:
            unsupported("np.fill_diagonal of values other than one over symbolic sizes")
    elif nv not in (1, n):              # NumPy repeats the values cyclically
        vals = _gather(vals, (np.arange(n) % nv,))
    setitem(flat, slice(None, end, step), vals if nv != 1 else reshape(vals, ()))
    setitem(a, Ellipsis, reshape(flat, a.shape))


def copyto(dst, src, casting="same_kind", where=True):
    """``np.copyto(dst, src)``: ``dst[...] = src`` (``src`` broadcast), with NumPy's check of
    the cast (``same_kind`` by default: float into int raises TypeError) and ``where``."""
    if not isinstance(dst, Proxy):
        raise TypeError(f"np.copyto: the destination must be an argument or an array made in "
                        f"the function (at {user_location()})")
    src_dtype = src.dtype if isinstance(src, (Proxy, np.ndarray, np.generic)) else None
    if src_dtype is not None and not np.can_cast(src_dtype, dst.dtype, casting) or \
            src_dtype is None and not np.can_cast(np.result_type(dst.dtype, src), dst.dtype,
                                                  casting):
        raise TypeError(f"Cannot cast array data from {src_dtype or type(src).__name__!r} to "
                        f"{dst.dtype!r} according to the rule {casting!r} "
                        f"(at {user_location()})")
    if where is True:
        setitem(dst, Ellipsis, src)
        return
    from .elementwise import where as select
    setitem(dst, Ellipsis, select(where, src, dst))
