"""Reductions and scans: sum, prod, max, min, any, all, argmax/argmin, mean, var, std,
cumsum/cumprod, their ufunc forms (``np.add.reduce``, ``np.add.accumulate``) and their
``out=``, ``where=``, ``initial=``, ``keepdims=`` arguments.

In: a traced array and NumPy's arguments. Out: ``reduce`` / ``scan`` nodes in the dtype NumPy
accumulates in (int32 sums in int64, ``out=`` resolving the loop), with NumPy's errors for
empty max/min; ``out=`` is an in-place update of the output array.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import user_location
from ..ir.graph import MADE, make_node
from .creation import full_like
from .elementwise import isclose, where
from .counted import SELECTED
from .externs import extern_call
from .indexing import checked
from .proxy import (asproxy, cast, cast_node, own, Proxy, size_operand, unsupported,
                    update, wrap)
from .selection import is_selection
from .sizes import broadcast_sizes, loop_dependent, same_size, symbolic
from .views import reshape


_NO_VALUE = np._NoValue


def _axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    return tuple(sorted(normalize_axis_tuple(axis, x.ndim)))


# np.max/min/argmax/argmin of an empty array: the error a ``check`` node reports (its code;
# runtime/compiled.py raises NumPy's ValueError for it)
EMPTY_CODES = {"max": 5, "min": 6, "argmax": 7, "argmin": 8}


def _reduce_node(x: Proxy, kind: str, axes, keepdims: bool, dtype=None,
                 initial=False) -> Proxy:
    """A count of elements known only at run time (a slice in a loop) is checked then for
    max/min/argmax/argmin: a ``check`` node (NumPy's ValueError when it is 0), unless
    ``initial`` (max/min combined with an initial value after: the identity, then initial)."""
    node = x.node
    out_shape = tuple(s for i, s in enumerate(x.node.shape) if i not in axes)
    count = _count(x, axes)
    run_time = None
    if not isinstance(count, int) and kind in ("max", "min", "argmax", "argmin"):
        try:
            count = 0 if symbolic().less(count, 1) else 1     # symbolic: decided now, guarded
        except Exception as e:
            if not loop_dependent(e):
                raise
            run_time, count = (None if initial else count), 1
    if count == 0 and kind in ("max", "min", "argmax", "argmin") and MADE and not initial:
        run_time, count = 0, 1      # in a branch or loop: NumPy's error where it is reached
    if count == 0 and kind in ("max", "min", "argmax", "argmin"):
        op = {"max": "maximum", "min": "minimum"}.get(kind)
        msg = (f"zero-size array to reduction operation {op} which has no identity" if op
               else f"attempt to get {kind} of an empty sequence")
        raise ValueError(f"{msg} (at {user_location()})")
    if dtype is not None:
        node = cast_node(node, np.dtype(dtype))
    if node.dtype == bool and kind in ("sum", "prod", "max", "min"):   # bool add is or, ...
        kind = {"sum": "any", "max": "any", "prod": "all", "min": "all"}[kind]
    if kind in ("any", "all"):
        node = cast_node(node, np.dtype(bool))
    out_dt = {"argmax": np.dtype(np.int64), "argmin": np.dtype(np.int64)}.get(kind, node.dtype)
    if axes and kind in ("any", "all") and node.ndim - 1 not in axes:
        # a column any/all (Z.any(axis=0)): the max/min of 0/1 bytes, vectorized across the
        # kept innermost axis like a column sum (bool lanes are not), then a bool again
        node = make_node("reduce", (cast_node(node, np.dtype(np.uint8)),), out_shape,
                         np.dtype(np.uint8), user_location(), kind="max" if kind == "any"
                         else "min", axes=axes)
        node = cast_node(node, np.dtype(bool))
    elif axes:
        node = make_node("reduce", (node,), out_shape, out_dt, user_location(), kind=kind, axes=axes)
    if run_time is not None:        # the value, once the count is checked to be > 0
        node = checked(wrap(node), size_operand(run_time), EMPTY_CODES[kind]).node
    r = wrap(own(node), scalar=not keepdims and not out_shape)
    if keepdims:
        r = reshape(r, tuple(1 if i in axes else s for i, s in enumerate(x.node.shape)))
    return r


def check_plain(name, out=None, initial=_NO_VALUE, where=_NO_VALUE, **extra):
    if out is not None:
        unsupported(f"{name}(..., out=...)")
    if initial is not _NO_VALUE or where is not _NO_VALUE:
        unsupported(f"{name}(..., initial=/where=)")
    if extra:
        unsupported(f"{name} keyword arguments {sorted(extra)}")


_REDUCE_UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
                 "any": np.logical_or, "all": np.logical_and}


def _reduce_fn(kind):
    ufunc = _REDUCE_UFUNC[kind]

    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
               where=_NO_VALUE, **extra):
        check_plain(f"np.{kind}", None, **extra)
        if kind in ("max", "min") and is_selection(a) and axis is None and not keepdims and \
                initial is _NO_VALUE and where is _NO_VALUE and out is None and dtype is None \
                and a.dtype.kind in "biuf":
            return _selection_extreme(a, kind)
        out = _out_operand(f"np.{kind}", out)
        whole = _unselect(a, kind, axis, keepdims, initial, where)
        if whole is not None:           # x[mask].sum(): no selected count needed
            a, axis = whole
        x = asproxy(a)
        if keepdims is _NO_VALUE:
            keepdims = False
        if where is not _NO_VALUE and where is not True:
            x = _masked(kind, x, asproxy(where), initial)
        if initial is not _NO_VALUE and kind in ("max", "min"):
            x = _empty_to_initial(x, axis, initial)
        if out is not None and dtype is None and kind not in ("any", "all"):
            # as NumPy: the loop is resolved with out's dtype (int32 into float64 sums in float64)
            dtype = _out_loop_dtype(ufunc, out, x.dtype)
        elif kind in ("sum", "prod"):
            probe = np.add.reduce if kind == "sum" else np.multiply.reduce
            dtype = probe(np.zeros(1, x.dtype), dtype=dtype).dtype
        elif kind in ("max", "min"):
            dtype = None
        result = _reduce_node(x, kind, _axes(x, axis), bool(keepdims), dtype,
                              initial=initial is not _NO_VALUE)
        if initial is not _NO_VALUE:            # cast to the reduction's dtype, as NumPy
            result = ufunc(result, cast(asproxy(initial), result.dtype))
        return result if out is None else _reduce_into(out, result, ufunc)
    return reduce


_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}


def _unselect(a, kind, axis, keepdims, initial, where_arg):
    """A reduction of a lazy selection ``x[m]`` (``selection.py``) along all its elements
    (or its rows): (the whole ``x`` with the unselected elements replaced by the identity,
    or by ``initial`` for max/min; the axes of ``x`` to reduce); None otherwise."""
    if not is_selection(a) or keepdims or (where_arg is not _NO_VALUE and where_arg is not True):
        return None
    fill = _IDENTITY.get(kind, None if initial is _NO_VALUE else initial)
    base, mask = a.base, a.mask
    lead = mask.ndim
    if axis is None:
        axes = tuple(range(base.ndim))
    elif axis in (0, -1 if base.ndim == lead else 0):
        axes = tuple(range(lead)) if lead < base.ndim else tuple(range(base.ndim))
    else:
        return None
    if fill is None:
        return None
    if lead < base.ndim:                # rows selected: the mask over each row's elements
        mask = reshape(mask, tuple(mask.shape) + (1,) * (base.ndim - lead))
    fill = asproxy(fill)
    return where(mask, base, fill if fill.weak else cast(fill, base.dtype)), axes


def _selection_extreme(sel, kind) -> Proxy:
    """``x[m].max()`` / ``.min()``: of ``where(m, x, lowest)`` (highest for min), checked at
    run time to have selected something (NumPy's ValueError when not), so the compiled code
    serves every mask (``cdf[cdf > 0].min()`` of a histogram equalization)."""
    base, mask, dt = sel.base, sel.mask, sel.dtype
    if dt.kind == "f":
        fill = -np.inf if kind == "max" else np.inf
    elif dt.kind == "b":
        fill = kind != "max"
    else:
        info = np.iinfo(dt)
        fill = int(info.min if kind == "max" else info.max)
    if mask.ndim < base.ndim:
        mask = reshape(mask, tuple(mask.shape) + (1,) * (base.ndim - mask.ndim))
    x = where(mask, base, cast(asproxy(fill), dt))
    node = _reduce_node(x, kind, tuple(range(x.ndim)), False).node
    node = checked(wrap(node), selected_count(sel), EMPTY_CODES[kind]).node
    return wrap(own(node), scalar=True)


def selected_count(sel) -> Proxy:
    """``len(x[mask])``: the number of selected elements (rows), a weak int64 (a size where
    it is used as one: ``counted.count_size``)."""
    n = _selected(sel, ())
    SELECTED[id(n.node)] = (n.node, sel)
    return n


def _selected(sel, axes) -> Proxy:
    """How many elements of ``sel``'s base a reduction over ``axes`` of it takes per result:
    the mask's count (a weak int64, as a Python int divides)."""
    n = sum_(sel.mask, dtype=np.int64)
    for d in axes:
        if d >= sel.mask.ndim:
            n = n * sel.base.shape[d]
    n.weak = True
    return n


def _masked(kind, x: Proxy, mask: Proxy, initial) -> Proxy:
    """``where=``: the masked-out elements replaced by the operation's identity (by
    ``initial`` for max/min, which have none)."""
    try:
        ok = broadcast_sizes(mask.shape, x.shape) == tuple(x.shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"np.{kind}: where= mask of shape {mask.shape} does not broadcast "
                         f"to the array's shape {x.shape} (at {user_location()})")
    if kind not in _IDENTITY and initial is _NO_VALUE:
        raise ValueError(f"reduction operation '{_REDUCE_UFUNC[kind].__name__}' does not "
                         f"have an identity, so to use a where mask one has to specify "
                         f"'initial' (at {user_location()})")
    fill = _IDENTITY[kind] if kind in _IDENTITY else initial
    return where(mask, x, cast(asproxy(fill), x.dtype))


def _empty_to_initial(x: Proxy, axis, initial) -> Proxy:
    """max/min with initial=: size-0 reduced axes grown to size 1 holding ``initial``
    (NumPy's answer for an empty reduction); ``x`` itself otherwise."""
    axes = _axes(x, axis)
    if not any(x.node.shape[a] == 0 for a in axes):
        return x
    shape = tuple(1 if (i in axes and s == 0) else s for i, s in enumerate(x.node.shape))
    if any(s == 0 for s in shape):          # an empty kept axis: the result is empty anyway
        return x
    return full_like(x, initial, shape=shape)


def _out_loop_dtype(ufunc, out: Proxy, dtype) -> np.dtype:
    """The loop dtype NumPy resolves for a reduction (or scan) of ``dtype`` into ``out``."""
    return ufunc.resolve_dtypes((out.dtype, dtype, None), reduction=True, casting="unsafe")[0]


def _out_operand(name, out):
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if out is not None and not isinstance(out, Proxy):
        unsupported(f"{name}(..., out=) into other than an array of the traced function")
    return out


def _reduce_into(out: Proxy, result: Proxy, ufunc) -> Proxy:
    """A reduction's ``out=``: exactly the result's shape, any cast (NumPy's rules for
    reductions), written as an in-place update of ``out``. ``ufunc``: the ufunc or the
    function's name, for messages."""
    name = getattr(ufunc, "__name__", ufunc)
    if out.ndim != result.ndim:
        raise ValueError(f"output parameter for reduction operation {name} has the "
                         f"wrong number of dimensions: Found {out.ndim} but expected "
                         f"{result.ndim} (at {user_location()})")
    if not all(same_size(a, b) for a, b in zip(out.shape, result.shape)):
        raise ValueError(f"{name}: output shape {out.shape} does not match the "
                         f"reduction's shape {result.shape} (at {user_location()})")
    update(out, cast_node(result.node, out.dtype))
    return out


sum_ = _reduce_fn("sum")
prod = _reduce_fn("prod")
amax = _reduce_fn("max")
amin = _reduce_fn("min")
any_ = _reduce_fn("any")
all_ = _reduce_fn("all")


def _arg_reduce(kind):
    def arg(a, axis=None, out=None, *, keepdims=False):
        out = _out_operand(f"np.{kind}", out)
        x = asproxy(a)
        if axis is not None and not isinstance(axis, (int, np.integer)):
            raise TypeError(f"np.{kind}: '{type(axis).__name__}' object cannot be interpreted "
                            f"as an integer: one axis or None (at {user_location()})")
        if axis is None:
            r = _reduce_node(reshape(x, (-1,)) if x.ndim != 1 else x, kind, (0,), False)
            r = reshape(r, (1,) * x.ndim) if keepdims else r
        else:
            r = _reduce_node(x, kind, _axes(x, axis), bool(keepdims))
        if out is None:
            return r
        try:                # which out dtypes NumPy takes (int64 and int32, not float64 ...)
            getattr(np, kind)(np.zeros(2), out=np.zeros((), out.dtype))
        except TypeError as e:
            raise TypeError(f"np.{kind}: {e} (at {user_location()})") from None
        return _reduce_into(out, r, kind)
    return arg


argmax = _arg_reduce("argmax")
argmin = _arg_reduce("argmin")


def _count(x, axes):
    """The number of elements reduced: an int, or a sympy expression of symbolic sizes."""
    dims = [x.node.shape[i] for i in axes]
    if all(isinstance(d, int) for d in dims):
        return int(np.prod(dims, dtype=np.int64))
    return symbolic().prod(dims)


def _scan_fn(kind):
    def scan(a, axis=None, dtype=None, out=None):
        """np.cumsum / np.cumprod: a running sum (product) along one axis, compiled as a scan
        (the dtype as NumPy's: int32 and bool accumulate in int64)."""
        return _scan(asproxy(a), kind, axis, dtype, _out_operand(f"np.cum{kind}", out))
    return scan


def _scan(x: Proxy, kind: str, axis, dtype, out) -> Proxy:
    ufunc = _REDUCE_UFUNC[kind]
    if out is not None and dtype is None:       # as reductions: the loop resolved with out's
        dtype = _out_loop_dtype(ufunc, out, x.dtype)
    else:
        dtype = ufunc.accumulate(np.zeros(1, x.dtype), dtype=dtype).dtype
    r = _scan_node(x, kind, axis, np.dtype(dtype))
    return r if out is None else _reduce_into(out, r, ufunc)


_SCAN_DTYPES = frozenset(np.dtype(t) for t in ("int32", "int64", "uint32", "uint64", "float32",
                                             "float64"))


def _scan_node(x: Proxy, kind: str, axis, dtype) -> Proxy:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis_tuple(axis, x.ndim)[0]
    if dtype not in _SCAN_DTYPES:       # (int8, uint16, ... accumulators: NumPy's own loop)
        fn = np.cumsum if kind == "sum" else np.cumprod if kind == "prod" else \
            _REDUCE_UFUNC[kind].accumulate
        return extern_call(fn, (x,), {"axis": axis, "dtype": dtype})
    node = cast_node(x.node, dtype)
    return wrap(make_node("scan", (node,), node.shape, dtype, user_location(), kind=kind,
                          axis=axis))


cumsum = _scan_fn("sum")
cumprod = _scan_fn("prod")


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO_VALUE):
    if where is not _NO_VALUE and where is not True:    # NumPy's: the sum where it holds
        if out is not None:                             # over the count where it holds
            unsupported("np.mean(..., where=, out=)")
        x = asproxy(a)
        dtype = np.mean(np.ones(1, x.dtype), dtype=dtype).dtype
        total = sum_(x, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
        w = np.broadcast_to(asproxy(where), x.shape)
        count = sum_(w, axis=axis, dtype=np.intp, keepdims=keepdims)
        return cast(np.true_divide(total, count), total.dtype)
    check_plain("np.mean", None, where=where)
    out = _out_operand("np.mean", out)
    whole = _unselect(a, "sum", axis, keepdims, _NO_VALUE, _NO_VALUE) if out is None else None
    if whole is not None:               # x[mask].mean(): a sum over the mask and its count
        x, axes = whole
        dtype = np.mean(np.ones(1, x.dtype), dtype=dtype).dtype
        return np.true_divide(_reduce_node(x, "sum", axes, False, dtype), _selected(a, axes))
    x = asproxy(a)
    axes = _axes(x, axis)
    count = size_operand(_count(x, axes))
    if out is not None:     # as NumPy: the sum is stored into out, then divided in out's dtype
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.dtype(np.float64)
        total = sum_(x, axis=axes, dtype=dtype, out=out, keepdims=keepdims)
        return _reduce_into(out, np.true_divide(total, count), np.add)
    if dtype is None and x.dtype == np.float16:     # NumPy's: summed and divided in float32
        total = _reduce_node(x, "sum", axes, bool(keepdims), np.dtype(np.float32))
        return cast(np.true_divide(total, count), np.float16)
    dtype = np.mean(np.ones(1, x.dtype), dtype=dtype).dtype
    total = _reduce_node(x, "sum", axes, bool(keepdims), dtype)
    return np.true_divide(total, count)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO_VALUE,
        mean=_NO_VALUE, correction=_NO_VALUE):
    check_plain("np.var", None, where=where)
    out = _out_operand("np.var", out)
    if mean is not _NO_VALUE:
        unsupported("np.var(..., mean=)")
    if correction is not _NO_VALUE:
        ddof = correction
    x = asproxy(a)
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.dtype(np.float64)
    axes = _axes(x, axis)
    n = _count(x, axes)
    mu = _reduce_node(x, "sum", axes, True, dtype)
    mu = np.true_divide(mu, size_operand(n))
    d = np.subtract(x, mu)
    if d.dtype.kind == "c":     # NumPy's _var: |d|**2 as re*re + im*im (a float)
        d = np.add(np.multiply(d.real, d.real), np.multiply(d.imag, d.imag))
    else:
        d = np.multiply(d, d)
    if out is not None and dtype is None:   # as NumPy: the last sum's loop takes out's dtype
        dtype = _out_loop_dtype(np.add, out, d.dtype)
    total = _reduce_node(d, "sum", axes, bool(keepdims), dtype)
    if out is not None:                     # ... lands in out, and is divided there
        total = _reduce_into(out, total, "var")
    if not isinstance(n, int):
        import sympy
        r = np.true_divide(total, size_operand(sympy.Max(n - ddof, 0)))
    else:
        r = np.true_divide(total, max(n - ddof, 0))
    return r if out is None else _reduce_into(out, r, "var")


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    v = var(a, axis, dtype, out, ddof, keepdims, **kw)
    return np.sqrt(v) if out is None else np.sqrt(v, out=v)     # NumPy: sqrt in out's dtype



def trace_ufunc_reduce(ufunc, inputs, kwargs):
    kinds = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
             "logical_and": "all", "logical_or": "any"}
    (x,) = inputs
    axis = kwargs.pop("axis", 0)
    if ufunc is np.logical_xor and not kwargs:      # odd count of true values
        odd = sum_(cast(asproxy(x), np.bool_), axis=axis, dtype=np.int64) % 2
        return cast(odd, np.bool_)
    if ufunc.__name__ not in kinds:     # (np.bitwise_or.reduce, ...: NumPy's own call)
        return extern_call(ufunc.reduce, (x,), dict(axis=axis, **kwargs))
    return _reduce_fn(kinds[ufunc.__name__])(x, axis=axis, **kwargs)


def trace_ufunc_accumulate(ufunc, inputs, kwargs):
    """np.add/multiply/maximum/minimum.accumulate: scans (running sums, products, extremes)."""
    kind = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}.get(
        ufunc.__name__)
    (x,) = inputs
    axis, dtype, out = kwargs.pop("axis", 0), kwargs.pop("dtype", None), kwargs.pop("out", None)
    if kind is None and not kwargs and out is None:     # np.maximum.accumulate & co.:
        return extern_call(ufunc.accumulate, (x,), {"axis": axis, "dtype": dtype})  # NumPy's
    if kind is None or kwargs:
        unsupported(f"np.{ufunc.__name__}.accumulate"
                     + (f" with {sorted(kwargs)}" if kwargs else ""))
    return _scan(asproxy(x), kind, axis, dtype, _out_operand(f"np.{ufunc.__name__}.accumulate", out))


def array_equal(a1, a2, equal_nan=False):
    """np.array_equal: False for other shapes (symbolic sizes: as in this call, guarded), else
    whether every element is equal (NaN equal to NaN with ``equal_nan``): a Python bool."""
    a1, a2 = asproxy(a1), asproxy(a2)
    if a1.ndim != a2.ndim:
        return False
    if not all(same_size(x, y) for x, y in zip(a1.shape, a2.shape)):   # (guarded)
        return False
    same = np.equal(a1, a2)
    if equal_nan and a1.dtype.kind in "fc" and a2.dtype.kind in "fc":
        same = np.logical_or(same, np.logical_and(np.isnan(a1), np.isnan(a2)))
    r = all_(same)
    return wrap(r.node, weak=True, scalar=True) if isinstance(r, Proxy) else bool(r)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.allclose: a Python bool, as NumPy returns (weak: returned as a bool)."""
    r = all_(isclose(a, b, rtol, atol, equal_nan))
    return wrap(r.node, weak=True, scalar=True) if isinstance(r, Proxy) else bool(r)
