"""Searching and counting: ``np.searchsorted``, ``np.digitize``, ``np.bincount``,
``np.histogram``, ``np.interp`` of traced arrays.

In: the arrays (proxies or constants) and NumPy's arguments. Out:

- ``search`` nodes (int64, the values' shape): a binary search per value of a sorted 1-D
  array, inlined into the kernels that use it. Values and array are compared in the dtype
  NumPy compares them in (their promoted dtype; NaN after every number). Results are
  NumPy's for a sorted array (NumPy's own are undefined otherwise).
- ``np.digitize``: searches, after NumPy's check of the bins (constants: while tracing;
  traced bins: a NumPy step, ``runtime/bins.py``, that raises NumPy's ValueError; bins going
  the other way than on the traced call run the function with NumPy).
- ``bincount`` nodes: counts (or weight sums) per bin of the kept values, an index outside
  the bins dropped or (``negative``) NumPy's ValueError. ``np.bincount`` is native when its
  length is known while tracing: ``minlength`` covers the largest value the index can have
  (``index_bounds``: searches, constants, ``where``, casts, shifts); otherwise it is NumPy's
  call between kernels (a length that depends on the values is never guessed).
- ``np.histogram`` without weights or density: with an array of edges, a search per value
  (NumPy's counts: bins closed on the left, the last one on both sides, values outside and
  NaN not counted); with ``bins=int, range=(lo, hi)``, NumPy's own arithmetic for uniform
  bins (the index from the scaled value, then corrected against the edges).

Other forms (``sorter=``, complex values, weights in np.histogram, ``range=None`` with an
int, string bins) run NumPy's function between kernels.
"""
from __future__ import annotations

import operator

import numpy as np

from ..errors import user_location
from ..ir.graph import MADE, make_node
from ..runtime import bins as checks
from .dataslice import data_length
from .externs import extern_call, values_now
from .proxy import Proxy, as_node, asproxy, broadcast_node, cast, cast_node, wrap
from .sizes import same_size, same_size_now
from .views import ravel

REAL = "biuf"


def _array(x):
    """``x`` as a traced or NumPy array (a list of traced values: as ``np.array`` makes it)."""
    if isinstance(x, Proxy):
        return x
    from .creation import array, holds_proxy
    if isinstance(x, (list, tuple)) and holds_proxy(x):
        return array(x, original=np.array)
    return np.asarray(x)


def _dtype_of(x) -> np.dtype:
    """The dtype NumPy gives ``x`` as an array (a Python float: float64)."""
    return x.dtype if isinstance(x, (Proxy, np.ndarray)) else np.asarray(x).dtype


def _compare_dtype(dt: np.dtype) -> np.dtype:
    """The same order in a dtype the search helper takes (bool as uint8, float16 as float32)."""
    return {"b": np.dtype(np.uint8)}.get(dt.kind, np.dtype(np.float32) if dt.itemsize == 2
                                          and dt.kind == "f" else dt)


def _search_node(a, v, side: str, dt: np.dtype):
    ct = _compare_dtype(dt)
    an, vn = cast_node(as_node(a), ct), cast_node(as_node(v), ct)
    return make_node("search", (an, vn), vn.shape, np.dtype(np.int64), user_location(),
                     side=side)


def searchsorted(a, v, side="left", sorter=None):
    a, v = _array(a), (_array(v) if isinstance(v, (list, tuple)) else v)
    dt = np.promote_types(a.dtype, _dtype_of(v))
    if sorter is not None or side not in ("left", "right") or a.ndim != 1 or dt.kind not in REAL:
        return extern_call(np.searchsorted, (a, v), dict(side=side, sorter=sorter))
    node = _search_node(a, v, side, dt)
    return wrap(node, scalar=not node.shape)


def _checked(bins: Proxy, check):
    """``bins`` passed through a NumPy step that checks its values (``runtime/bins.py``)."""
    from ..runtime.extern import ExternCall, Slot
    call = ExternCall(check, (Slot(0),), {}, None)
    return wrap(make_node("extern", (bins.node,), bins.shape, bins.dtype, user_location(),
                          call=call))


def _now(p: Proxy):
    values = values_now([p])
    return None if values is None else values[0]


def digitize(x, bins, right=False):
    xs, b = _array(x), _array(bins)
    dt = np.promote_types(b.dtype, xs.dtype)
    if xs.dtype.kind not in REAL or b.ndim != 1 or dt.kind not in REAL or \
            not isinstance(b.shape[0], int):
        return extern_call(np.digitize, (x, bins), dict(right=right))
    values = b if isinstance(b, np.ndarray) else _now(b)
    mono = checks._direction(values) if values is not None else 1
    if isinstance(b, Proxy):
        b = _checked(b, checks.increasing if mono == 1 else checks.decreasing)
    side = "left" if right else "right"
    if mono == 1:
        return wrap(_search_node(b, xs, side, dt), scalar=not xs.shape)
    flipped = b[::-1]
    found = wrap(_search_node(flipped, xs, side, dt), scalar=not xs.shape)
    return np.subtract(np.int64(b.shape[0]), found)


# ----------------------------------------------------------------------------- bincount

def index_bounds(node):
    """(lowest, highest) value an integer node can have, or None where unknown."""
    op = node.op
    if op == "search":
        n = node.inputs[0].shape[0]
        return (0, n) if isinstance(n, int) else None
    if op == "const":
        v = node.attr("value")
        return (int(v), int(v)) if isinstance(v, (int, np.integer, bool, np.bool_)) else None
    if op in ("reshape", "transpose", "broadcast_to", "slice"):
        return index_bounds(node.inputs[0])
    if op == "reduce" and node.attr("kind") in ("argmin", "argmax"):   # (k-means' labels)
        n = 1
        for a in node.attr("axes"):
            n = n * node.inputs[0].shape[a]
        return (0, n - 1) if isinstance(n, int) and n > 0 else None
    if op == "cast":
        src = node.inputs[0]
        if src.dtype.kind == "b":
            return (0, 1)
        inner = index_bounds(src)
        if inner is None or src.dtype.kind not in "iu":
            return None
        info = np.iinfo(node.dtype)
        return inner if info.min <= inner[0] and inner[1] <= info.max else None
    if node.dtype.kind not in "iu":
        return None
    parts = [index_bounds(i) for i in node.inputs[1:]] if op == "where" else \
        [index_bounds(i) for i in node.inputs]
    if None in parts or not parts:
        return _dtype_bounds(node)
    if op == "where":
        r = (min(parts[0][0], parts[1][0]), max(parts[0][1], parts[1][1]))
    elif op == "add":
        r = (parts[0][0] + parts[1][0], parts[0][1] + parts[1][1])
    elif op == "subtract":
        r = (parts[0][0] - parts[1][1], parts[0][1] - parts[1][0])
    elif op in ("minimum", "maximum"):
        f = min if op == "minimum" else max
        r = (f(parts[0][0], parts[1][0]), f(parts[0][1], parts[1][1]))
    else:
        return _dtype_bounds(node)
    info = np.iinfo(node.dtype)     # past the dtype's range the value wraps: anywhere in it
    return r if info.min <= r[0] and r[1] <= info.max else (int(info.min), int(info.max))


def _dtype_bounds(node):
    """The range of a narrow integer dtype (a uint8 image's values: 0..255), or None."""
    if node.dtype.kind in "iu" and node.dtype.itemsize <= 2:
        info = np.iinfo(node.dtype)
        return int(info.min), int(info.max)
    return None


def _count_node(index, length, weights=None, keep=None, negative=False, bind=None):
    inputs = [cast_node(index.node, np.dtype(np.int64))]
    if weights is not None:
        inputs.append(cast_node(weights.node, np.dtype(np.float64)))
    if keep is not None:
        inputs.append(keep.node)
    if bind is not None:                # (its length set from the values: ``bound``)
        inputs.append(bind)
    dtype = np.dtype(np.float64 if weights is not None else np.int64)
    return wrap(make_node("bincount", tuple(inputs), (length,), dtype, user_location(),
                          weighted=weights is not None, masked=keep is not None,
                          negative=negative, bound=bind is not None))


def bincount(x, weights=None, minlength=0):
    xs = _array(x)
    w = None if weights is None else _array(weights)
    if w is not None and isinstance(xs, Proxy) and xs.ndim == 1 and type(minlength) is int \
            and same_size_now(xs.node.shape[0], 0):   # (NumPy: weights of no values give int64 counts)
        return wrap(broadcast_node(as_node(np.int64(0)), (max(minlength, 0),)))
    bounds = index_bounds(xs.node) if isinstance(xs, Proxy) else None
    native = (isinstance(xs, Proxy) and xs.ndim == 1 and xs.dtype.kind in "biu"
              and np.can_cast(xs.dtype, np.intp) and type(minlength) is int and minlength >= 0
              and bounds is not None and bounds[1] + 1 <= minlength
              and (w is None or (w.ndim == 1 and w.dtype.kind in REAL
                                 and w.shape[0] == xs.shape[0])))
    traced_min = isinstance(minlength, Proxy) and minlength.ndim == 0 and \
        minlength.dtype.kind in "iu"        # (minlength=y.max() + 1: a kNN vote's classes)
    if not native and MADE and (bounds is None or traced_min) and isinstance(xs, Proxy) and \
            xs.ndim == 1 and xs.dtype.kind in "iu" and np.can_cast(xs.dtype, np.intp) and \
            (type(minlength) is int and minlength >= 0 or traced_min) and \
            (w is None or (w.ndim == 1 and w.dtype.kind in REAL)):
        # in a compiled loop (a vote per row): NumPy's length max(minlength, max + 1), known
        # when the loop runs (a data symbol), instead of a NumPy call that unrolls the loop
        if traced_min:
            from .raises import require
            require(minlength >= 0, (ValueError, ("'minlength' must not be negative (at "
                                                  f"{user_location()})",)), user_location())
            top = np.maximum(np.max(cast(xs, np.int64), initial=-1),
                             cast(minlength, np.int64) - 1)
        else:
            top = np.max(cast(xs, np.int64), initial=minlength - 1)
        sym, bind = data_length(top + 1)
        w = None if w is None else asproxy(w)
        if w is not None and not same_size(w.shape[0], xs.shape[0]):
            return extern_call(np.bincount, (x,), dict(weights=weights, minlength=minlength))
        return _count_node(xs, sym, w, negative=True, bind=bind)
    if not native:
        return extern_call(np.bincount, (x,), dict(weights=weights, minlength=minlength))
    return _count_node(xs, minlength, None if w is None else asproxy(w),
                       negative=bounds[0] < 0)


# ----------------------------------------------------------------------------- histogram

def histogram(a, bins=10, range=None, density=None, weights=None):
    arr = _array(a)
    if isinstance(arr, Proxy) and arr.dtype.kind in "iu" and arr.dtype.itemsize <= 4 and \
            weights is None and not density and isinstance(bins, (int, np.integer)):
        arr = arr.astype(np.float64)    # (ints of 32 bits or fewer: NumPy's differences and
        if range is not None:           # compares of them are exact, as in float64)
            range = tuple(r.astype(np.float64) if isinstance(r, Proxy) else r for r in range)
    native = weights is None and not density and arr.dtype.kind in "iuf" and \
        arr.dtype.itemsize >= 4 and isinstance(arr, Proxy)
    if native and not isinstance(bins, (str, int, np.integer)) and range is None:
        edges = _array(bins)
        if edges.ndim == 1 and isinstance(edges.shape[0], int) and edges.shape[0] >= 2 and \
                np.promote_types(arr.dtype, edges.dtype).kind in "iuf":
            return _histogram_edges(arr, edges)
    if native and isinstance(bins, (int, np.integer)) and range is not None and \
            not any(isinstance(r, Proxy) for r in range):
        return _histogram_uniform(arr, operator.index(bins), range)
    if native and isinstance(bins, (int, np.integer)) and range is not None and \
            len(range) == 2 and arr.dtype.kind == "f" and all(
                isinstance(r, (Proxy, float, int)) and np.ndim(r) == 0 and
                _dtype_of(r).kind in "iuf" for r in range):
        return _histogram_uniform_traced(arr, operator.index(bins), range)
    return extern_call(np.histogram, (a,), dict(bins=bins, range=range, density=density,
                                                weights=weights))


def _histogram_edges(arr, edges):
    """Counts per bin [e_k, e_k+1) (the last one closed): a search per value."""
    if isinstance(edges, np.ndarray):
        if np.any(edges[:-1] > edges[1:]):
            raise ValueError("`bins` must increase monotonically, when an array "
                             f"(at {user_location()})")
        if np.isnan(edges).any():
            return extern_call(np.histogram, (arr,), dict(bins=edges))
        searched, returned = edges, edges
    else:
        values = _now(edges)
        if values is not None:
            checks.histogram_edges(values)
        searched, returned = _checked(edges, checks.histogram_edges), edges
    dt = np.promote_types(arr.dtype, edges.dtype)
    v = ravel(arr)
    nb = edges.shape[0] - 1
    right = wrap(_search_node(searched, v, "right", dt))
    vc, lo, hi = (np.asarray(x, _compare_dtype(dt)) if isinstance(x, np.ndarray) else
                  x.astype(_compare_dtype(dt)) for x in (v, searched[0], searched[-1]))
    keep = np.logical_and(np.greater_equal(vc, lo), np.less_equal(vc, hi))
    index = np.subtract(np.minimum(right, np.int64(nb)), np.int64(1))
    return _count_node(index, nb, keep=keep), returned


def _histogram_uniform(arr, n: int, range):
    """NumPy's uniform-bins path: the bin from the scaled value, then corrected by a
    comparison with the edges around it (values within an ULP of an edge)."""
    if n < 1:
        raise ValueError(f"`bins` must be positive, when an integer (at {user_location()})")
    first, last = range
    if first > last:
        raise ValueError(f"max must be larger than min in range parameter. (at {user_location()})")
    if not (np.isfinite(first) and np.isfinite(last)):
        raise ValueError(f"supplied range of [{first}, {last}] is not finite "
                         f"(at {user_location()})")
    if first == last:
        first, last = first - 0.5, last + 0.5
    edges = np.histogram_bin_edges(np.zeros(0, arr.dtype), n, (first, last))
    bin_type = edges.dtype
    from numpy.lib._histograms_impl import _unsigned_subtract
    denom = _unsigned_subtract(last, first)
    v = ravel(arr)
    keep = np.logical_and(np.greater_equal(v, first), np.less_equal(v, last))
    tmp = v.astype(bin_type)
    dt = np.result_type(np.zeros(0, bin_type), first)
    f = np.multiply(np.true_divide(np.subtract(tmp, first, dtype=dt), denom), n)
    return _count_node(_corrected(f, tmp, asproxy(edges), n, keep), n, keep=keep), edges


def _corrected(f, tmp, table, n: int, keep):
    """NumPy's uniform bin of each value: ``f`` (its scaled position) truncated, then moved
    by a comparison with the edges ``table`` around it (values within an ULP of an edge)."""
    index = f.astype(np.intp)
    index = np.where(np.equal(index, n), index - 1, index)
    safe = np.where(keep, index, 0)                 # (values not kept: any index in range)
    index = np.where(np.less(tmp, table[safe]), index - 1, index)
    safe = np.where(keep, index, 0)
    up = np.logical_and(np.greater_equal(tmp, table[safe + 1]), np.not_equal(index, n - 1))
    return np.where(up, index + 1, index)


def _histogram_uniform_traced(arr, n: int, range):
    """``np.histogram(x, bins=n, range=(x.min(), x.max()))``: a range known when the program
    runs, checked there as NumPy checks it, its edges ``np.linspace``'s, then the uniform
    path's arithmetic (float data: the bins' dtype is the data's or float64)."""
    from .raises import require
    if n < 1:
        raise ValueError(f"`bins` must be positive, when an integer (at {user_location()})")
    where = user_location()
    bin_type = np.result_type(arr.dtype, *(          # (Python numbers weak: NEP 50)
        r.dtype.type(0).item() if isinstance(r, Proxy) and r.weak else
        r.dtype if isinstance(r, Proxy) else r for r in range))
    if bin_type != np.result_type(arr.dtype, *(
            r.dtype if isinstance(r, Proxy) else np.asarray(r).dtype for r in range)):
        return extern_call(np.histogram, (arr,), dict(bins=n, range=range))    # (float32
    # data, a range of Python floats: NumPy's edges from float64 arithmetic, rounded)
    first, last = (cast(asproxy(r), bin_type) if isinstance(r, Proxy) else
                   asproxy(np.asarray(r, bin_type))[()] for r in range)
    require(np.less_equal(first, last), (ValueError, (
        "max must be larger than min in range parameter.",)), where)
    require(np.logical_and(np.isfinite(first), np.isfinite(last)), (ValueError, (
        "supplied range is not finite",)), where)
    same = np.equal(first, last)
    first, last = np.where(same, first - 0.5, first), np.where(same, last + 0.5, last)
    from .creation import linspace             # (np.linspace is swapped in for the user's
    edges = linspace(first, last, n + 1, original=np.linspace)     # calls only; of bin_type
                                                                    # values: in bin_type)
    v = ravel(arr)
    keep = np.logical_and(np.greater_equal(v, first), np.less_equal(v, last))
    tmp = v.astype(bin_type)
    f = np.multiply(np.true_divide(np.subtract(tmp, first), np.subtract(last, first)), n)
    return _count_node(_corrected(f, tmp, edges, n, keep), n, keep=keep), edges


def interp(x, xp, fp, left=None, right=None, period=None):
    """np.interp on increasing ``xp`` (NumPy requires it and checks nothing): the interval
    from a search, then NumPy's own arithmetic (``slope * (x - xp[j]) + fp[j]``, the other
    end where that is NaN, ``fp[j]`` at a sample point, ``left``/``right`` outside, NaN for
    NaN), in float64."""
    xs, xa, fa = _array(x), _array(xp), _array(fp)
    dts = [_dtype_of(v) for v in (x, xp, fp, left, right) if v is not None]
    if period is not None or xa.ndim != 1 or fa.ndim != 1 or any(d.kind not in REAL for d in dts) \
            or not isinstance(xa.shape[0], int) or xa.shape != fa.shape or xa.shape[0] < 2:
        return extern_call(np.interp, (x, xp, fp), dict(left=left, right=right, period=period))
    f64 = np.float64
    xs, xa, fa = (asproxy(np.asarray(v, f64)) if isinstance(v, np.ndarray) else  # (a table
                  cast(asproxy(v), f64) for v in (xs, xa, fa))      # of the module: indexed)
    n = xa.shape[0]
    lo = fa[0] if left is None else cast(asproxy(left), f64)
    hi = fa[n - 1] if right is None else cast(asproxy(right), f64)
    j = searchsorted(xa, xs, side="right") - 1          # xp[j] <= x < xp[j + 1]
    k = np.clip(j, 0, n - 2)
    x0, x1, y0, y1 = xa[k], xa[k + 1], fa[k], fa[k + 1]
    slope = (y1 - y0) / (x1 - x0)
    inside = slope * (xs - x0) + y0
    other = slope * (xs - x1) + y1
    inside = np.where(np.isnan(inside), np.where(np.isnan(other) & (y0 == y1), y0, other),
                      inside)
    r = np.where(x0 == xs, y0, inside)
    r = np.where(j == n - 1, np.where(xs > xa[n - 1], hi, fa[n - 1]), r)
    r = np.where(j < 0, lo, r)
    r = np.where(np.isnan(xs), xs, r)
    if r.ndim == 0:             # a NumPy scalar, as NumPy's interp returns for any 0-d x
        r.scalar = True
    return r


FUNCTIONS = {np.searchsorted: searchsorted, np.digitize: digitize, np.bincount: bincount,
             np.histogram: histogram, np.interp: interp}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""
