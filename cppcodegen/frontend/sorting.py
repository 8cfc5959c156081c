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

from .concat import stack
from .elementwise import where
from .externs import extern_call
from .proxy import asproxy, cast, Proxy
from .views import ravel

MAX_NETWORK = 12


def _sortable(t, axis):
    """The axis (normalized) when a network sorts ``t`` along it, else None."""
    if t.dtype.kind not in "biuf" or t.ndim == 0 or not isinstance(axis, (int, np.integer)):
        return None
    ax = normalize_axis_index(int(axis), t.ndim)
    n = t.shape[ax]
    return ax if type(n) is int and 1 <= n <= MAX_NETWORK else None


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


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    t = ravel(asproxy(a)) if axis is None else asproxy(a)
    ax = _sortable(t, 0 if axis is None else axis) \
        if kind is None and order is None and not stable else None
    if ax is None:
        return extern_call(np.sort, (a,), dict(axis=axis, kind=kind, order=order,
                                                 stable=stable))
    return stack(_sorted_slices(t, ax), axis=ax)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    t = ravel(asproxy(a)) if axis is None else asproxy(a)
    ax = _sortable(t, 0 if axis is None else axis) if out is None and not keepdims else None
    if ax is None:
        return extern_call(np.median, (a,), dict(axis=axis, out=out,
                                                   overwrite_input=overwrite_input,
                                                   keepdims=keepdims))
    v = _sorted_slices(t, ax)
    n = len(v)
    # NumPy: the mean of the middle element(s) (integers as float64), NaN for a slice with NaN
    mid = [v[n // 2]] if n % 2 else [v[n // 2 - 1], v[n // 2]]
    dt = np.result_type(t.dtype, np.float64) if t.dtype.kind in "biu" else t.dtype
    m = cast(mid[0], dt) if len(mid) == 1 else (cast(mid[0], dt) + cast(mid[1], dt)) / 2
    if t.dtype.kind == "f":
        m = where(np.isnan(v[-1]), np.nan, m)
    return m


FUNCTIONS = {np.sort: sort, np.median: median}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""
