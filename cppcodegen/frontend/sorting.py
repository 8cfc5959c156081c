"""Sorting along a short axis: ``np.sort`` and ``np.median`` over an axis of at most
``MAX_NETWORK`` elements (a median filter's stacked neighbours: ``np.median(np.stack([...9
shifted views...]), axis=0)``) as a sorting network of compare-exchanges.

In: a traced array and NumPy's arguments. Out: the sorted slices joined back along the axis
(``np.sort``), or the middle of them (``np.median``: the mean of the two middle values for an
even count, NaN where the slice holds a NaN), elementwise work that fuses into one loop over
the other axes: no NumPy call between kernels, vectorized across the image. The network is
odd-even transposition (every pair compared in alternating rounds), a sorting network for
any total order: NumPy's, where NaN sorts after every number. Equal values are
interchangeable except the sign of a zero, which NumPy's sort does not fix either.

Longer axes, ``axis=None`` over more elements, ``kind``/``order`` other than the default,
complex values and ``np.median`` with ``out``/``overwrite_input`` run NumPy's function.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import TiedOrder, user_location
from ..ir.graph import MADE, make_node
from .concat import stack
from .creation import holds_proxy
from .elementwise import where
from .externs import extern_call
from .proxy import asproxy, cast, Proxy, size_operand, wrap
from .sizes import canon_shape
from .views import ravel, reshape

MAX_NETWORK = 12


KINDS = (None, "quicksort", "stable", "mergesort", "heapsort")    # (one order for values)


def _sortable(t, ax) -> bool:
    """Does a network sort ``t`` along (normalized) axis ``ax``?"""
    return ax is not None and t.dtype.kind in "biuf" and type(t.shape[ax]) is int and \
        1 <= t.shape[ax] <= MAX_NETWORK


def _exchange(x, y):
    """(smaller, larger) of two slices in NumPy's sort order (NaN last)."""
    if x.dtype.kind != "f":
        return np.minimum(x, y), np.maximum(x, y)
    swap = (y < x) | (np.isnan(x) & ~np.isnan(y))
    return where(swap, y, x), where(swap, x, y)


def _sorted_slices(t, ax):
    n = t.shape[ax]
    v = [t[(slice(None),) * ax + (k,)] for k in range(n)]
    for rnd in range(n):
        for i in range(rnd % 2, n - 1, 2):
            v[i], v[i + 1] = _exchange(v[i], v[i + 1])
    return v


def _native(t, ax, select=False) -> bool:
    """A compiled sort along ``ax`` (``sort`` node): inside compiled loops (a rolling median's
    ``np.median(x[i:i + w])``); outside, NumPy's own sort (vectorized on x86: several times
    faster than ``std::sort``), except for medians and quantiles: selections as NumPy's
    partition, without its microseconds of Python per call (on the 2-core EPYC, 0.6-0.9x
    NumPy's time at 2^20 elements, 0.1-0.5x at 2^6..2^14, in one slice or many)."""
    if ax is None or t.dtype.kind not in "biuf":
        return False
    return select or bool(MADE)     # (MADE: in a compiled loop, where NumPy's call unrolls it)


def _axis(t, axis):
    if t.ndim == 0 or not isinstance(axis, (int, np.integer)):
        return None
    return normalize_axis_index(int(axis), t.ndim)


def _sort_node(t, ax, kind: str):
    """Each slice along ``ax`` sorted (``kind`` 'sort': values, NaN last) or its stable
    sorting permutation ('argsort': int64 positions)."""
    dt = t.dtype if kind == "sort" else np.dtype(np.int64)
    return wrap(make_node("sort", (t.node,), t.node.shape, dt, user_location(), kind=kind,
                          axis=ax, kth=None))


def _selected(t, ax, positions):
    """``pick(k)``: the value a sorted slice along ``ax`` holds at position ``k``, for each
    ``k`` of ``positions`` (ints, negative ones from the end; or symbolic ones in ascending
    order), from one selection node for all of them."""
    n = t.shape[ax]
    norm = lambda k: k % n if type(k) is int else k
    key = lambda k: str(getattr(k, "expr", k))     # (a symbolic size by its expression)
    kth = list({key(norm(k)): norm(k) for k in positions}.values())
    if all(type(k) is int for k in kth):
        kth.sort()
    shape = t.node.shape[:ax] + (len(kth),) + t.node.shape[ax + 1:]
    node = wrap(make_node("sort", (t.node,), shape, t.dtype, user_location(), kind="select",
                          axis=ax, kth=canon_shape(kth)))
    slot = {key(k): j for j, k in enumerate(kth)}
    return lambda k: node[(slice(None),) * ax + (slot[key(norm(k))],)]


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    t = ravel(asproxy(a)) if axis is None else asproxy(a)
    ax = _axis(t, 0 if axis is None else axis) if order is None and kind in KINDS else None
    if _sortable(t, ax):
        return stack(_sorted_slices(t, ax), axis=ax)
    if _native(t, ax):
        return _sort_node(t, ax, "sort")
    return extern_call(np.sort, (a,), dict(axis=axis, kind=kind, order=order, stable=stable))


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    t = ravel(asproxy(a)) if axis is None else asproxy(a)
    ax = _axis(t, 0 if axis is None else axis) if order is None and kind in KINDS else None
    if _native(t, ax):
        order = _sort_node(t, ax, "argsort")
        if kind in ("stable", "mergesort") or stable:
            return order
        return _untied(t, ax, order)
    return extern_call(np.argsort, (a,), dict(axis=axis, kind=kind, order=order, stable=stable))


def _untied(t, ax, order):
    """``order`` (a stable sort's permutation) behind a check that no two values of a slice
    are equal: where they are, NumPy's default sort puts them in an order of its own, and the
    call runs as Python (``errors.TiedOrder``)."""
    from .composed import take_along_axis
    from .raises import require
    if type(t.shape[ax]) is int and t.shape[ax] == 1:
        return order
    v = take_along_axis(t, order, ax)
    n = v.shape[ax]
    lo = v[(slice(None),) * ax + (slice(0, n - 1),)]
    hi = v[(slice(None),) * ax + (slice(1, n),)]
    tied = np.equal(lo, hi)
    if t.dtype.kind in "fc":
        tied = np.logical_or(tied, np.logical_and(np.isnan(lo), np.isnan(hi)))
    where = user_location()
    require(np.logical_not(np.any(tied)), (TiedOrder, (f"{TiedOrder.reason} (at {where})",)),
            where)
    return order


def _middle(mid, dt, nan_last):
    """NumPy's median from the middle sorted value(s) ``mid`` (one or two): their mean in
    ``dt`` (integers as float64), NaN where the slice holds one (``nan_last``: it sorts
    last)."""
    m = cast(mid[0], dt) if len(mid) == 1 else (cast(mid[0], dt) + cast(mid[1], dt)) / 2
    return where(np.isnan(nan_last), np.nan, m) if nan_last is not None else m


def _decided(test, otherwise: bool) -> bool:
    """A test of sizes as a bool, or ``otherwise`` where it changes with a compiled loop's
    index (a traced bool)."""
    return test if isinstance(test, bool) else otherwise


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    t = ravel(asproxy(a)) if axis is None else asproxy(a)
    ax = _axis(t, 0 if axis is None else axis) if out is None and not keepdims else None
    if ax is None or not (_sortable(t, ax) or _native(t, ax, True)) or \
            _decided(t.shape[ax] == 0, False):     # (a run-time 0: NaN below)
        return extern_call(np.median, (a,), dict(axis=axis, out=out,
                                                   overwrite_input=overwrite_input,
                                                   keepdims=keepdims))
    dt = np.result_type(t.dtype, np.float64) if t.dtype.kind in "biu" else t.dtype
    n = t.shape[ax]
    if _sortable(t, ax):
        v = _sorted_slices(t, ax)
        return _middle(v[n // 2:n // 2 + 1] if n % 2 else v[n // 2 - 1:n // 2 + 1], dt,
                       v[-1] if t.dtype.kind == "f" else None)
    odd = _decided((n % 2) == 1, None)     # None: a length that changes with a loop's index
    pick = _selected(t, ax, [n // 2 - 1, n // 2, n - 1] if odd is None or not odd
                     else [n // 2, n - 1])         # (symbolic positions: clamped to the slice)
    nan_last = pick(n - 1) if t.dtype.kind == "f" else None
    even = _middle([pick(n // 2 - 1), pick(n // 2)], dt, nan_last) if not odd else None
    if odd is not None:
        return _middle([pick(n // 2)], dt, nan_last) if odd else even
    m = where(size_operand(n) % 2 == 1, _middle([pick(n // 2)], dt, nan_last), even)
    return where(size_operand(n) == 0, np.nan, m)   # (NumPy: NaN, and a RuntimeWarning)


def _quantile_fn(numpy_fn, percent: bool):
    def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, *, weights=None, interpolation=None):
        t = ravel(asproxy(a)) if axis is None else asproxy(a)
        plain = out is None and not keepdims and method == "linear" and weights is None and \
            interpolation is None and not holds_proxy(q) and t.dtype.kind in "iuf"
        ax = _axis(t, 0 if axis is None else axis) if plain else None
        qa = np.asanyarray(np.true_divide(q, 100) if percent else q) if plain else None
        if ax is None or not _native(t, ax, True) or type(t.shape[ax]) is not int or \
                t.shape[ax] == 0 or qa.dtype.kind not in "iuf" or \
                not np.all((qa >= 0) & (qa <= 1)):
            kw = dict(axis=axis, out=out, overwrite_input=overwrite_input, method=method,
                      keepdims=keepdims, weights=weights, interpolation=interpolation)
            return extern_call(numpy_fn, (a, q), {k: v for k, v in kw.items() if v is not None})
        return _quantiles(t, ax, qa, type(q) in (int, float))
    return quantile


def _quantiles(t, ax, qa, weak: bool):
    """NumPy's 'linear' quantiles of the sorted slices (its ``_quantile``: the virtual index
    (n - 1) q, the values either side of it, ``_lerp`` from the nearer one; the last value of
    a slice holding a NaN), one result per element of ``qa``, stacked first."""
    n = t.shape[ax]
    vidx = np.asanyarray((n - 1) * qa)
    out = []
    if vidx.dtype.kind in "iu":         # integer quantiles (0 or 1): the values themselves
        pick = _selected(t, ax, [int(k) for k in vidx.ravel()] + [n - 1])
        out = [pick(int(k)) for k in vidx.ravel()]
    else:
        prev = np.array(np.floor(vidx))
        prev[...] = np.where(vidx >= n - 1, -1, prev)
        prev[...] = np.where(np.isnan(vidx), -1, prev)
        prev = prev.astype(np.intp)
        nxt = np.where(prev == -1, -1, prev + 1).astype(np.intp)
        gamma = np.asanyarray(vidx - prev, dtype=vidx.dtype)
        pick = _selected(t, ax, [int(k) for k in prev.ravel()] + [int(k) for k in nxt.ravel()]
                         + [n - 1])
        for p, q, g in zip(prev.ravel(), nxt.ravel(), gamma.ravel()):
            g = float(g) if weak else g     # a Python float is weak (NEP 50), as NumPy's
            a, b = pick(int(p)), pick(int(q))
            diff = b - a
            lerp = a + diff * g
            if g >= 0.5:                    # NumPy: from the upper value, in lerp's dtype
                lerp = cast(cast(b, lerp.dtype) - cast(diff * (1 - g), lerp.dtype), lerp.dtype)
            out.append(lerp)
    if t.dtype.kind == "f":
        last = pick(n - 1)
        out = [where(np.isnan(last), cast(last, r.dtype), r) for r in out]
    if vidx.ndim == 0:
        return out[0]
    return reshape(stack(out, axis=0), vidx.shape + tuple(out[0].shape))


def _scalar_result(fn):
    """A 0-d result of np.median/percentile/quantile is a NumPy scalar, as NumPy's."""
    def call(*args, **kwargs):
        r = fn(*args, **kwargs)
        if isinstance(r, Proxy) and not r.node.shape:
            r.scalar = True
        return r
    return call


FUNCTIONS = {np.sort: sort, np.argsort: argsort, np.median: _scalar_result(median),
             np.percentile: _scalar_result(_quantile_fn(np.percentile, True)),
             np.quantile: _scalar_result(_quantile_fn(np.quantile, False))}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""
