"""NumPy functions that NumPy itself writes as a few array operations, traced as those
operations so they fuse: ``np.cross``, ``np.polyval``, ``np.sinc``, ``np.nan_to_num``,
``np.ptp``, ``np.isposinf``, ``np.isneginf``, ``np.count_nonzero``, ``np.inner``, ``np.vdot``, ``np.meshgrid``, ``np.tile``,
``np.repeat``, ``np.diag``, ``np.diagflat``, ``np.atleast_1d/2d/3d``, ``np.kron``,
``np.vander``, ``np.isin`` (a few test elements), ``np.piecewise``.

In: NumPy's arguments (proxies among them). Out: proxies of the same operations NumPy's own
implementation performs, in its order (``polyval`` is Horner's rule from ``zeros_like(x)``;
``cross`` is ``a1 * b2 - a2 * b1``, ...; ``sinc`` is ``sin(y) / y`` of ``y = pi * x`` with
``eps`` for zeros), so results are NumPy's bit for bit. Arguments outside what is written
here (2-element ``cross`` vectors, axis arguments of ``cross``, repeat counts from an array,
complex ``nan_to_num``, ...) run NumPy's own function between kernels, which also raises
NumPy's errors. NumPy's versions of these start with ``np.asarray``, which a traced array
cannot pass through: hence written out here.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import user_location
from ..ir.graph import make_node
from .concat import atleast, join, stack
from . import replace
from .creation import _iota, arange, eye, ones_like, zeros, zeros_like
from .elementwise import where
from .externs import extern_call
from .indexing import checked, diagonal
from .linalg import as_array, dot, matmul
from .proxy import asproxy, cast, copy_of, Proxy, wrap
from .reductions import all_, amax, amin, sum_
from .sizes import is_int
from .views import broadcast_arrays, broadcast_to, ravel, reshape

_NO = np._NoValue


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    x, y = asproxy(a), asproxy(b)
    if (axisa, axisb, axisc, axis) != (-1, -1, -1, None) or x.ndim == 0 or y.ndim == 0 or \
            x.shape[-1] != 3 or y.shape[-1] != 3 or \
            np.result_type(x.dtype, y.dtype).kind not in "iufc":
        return extern_call(np.cross, (a, b), dict(axisa=axisa, axisb=axisb, axisc=axisc,
                                                  axis=axis))
    a0, a1, a2 = (x[..., k] for k in range(3))
    b0, b1, b2 = (y[..., k] for k in range(3))
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def polyval(p, x):
    if isinstance(p, Proxy) and (p.ndim != 1 or type(p.shape[0]) is not int) or \
            isinstance(p, np.poly1d) or isinstance(x, np.poly1d):
        return extern_call(np.polyval, (p, x), {})
    coeffs = p if isinstance(p, Proxy) else np.asarray(p)
    y = zeros_like(asproxy(x))
    for k in range(coeffs.shape[0]):
        y = y * x + coeffs[k]
    return y


def sinc(x):
    t = asproxy(x)
    if t.dtype.kind not in "iufc":
        return extern_call(np.sinc, (x,), {})
    t = np.pi * t
    eps = np.finfo(t.dtype).eps if t.dtype.kind == "f" else 1e-20
    y = where(t, t, eps)
    return np.sin(y) / y


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = asproxy(x)
    if t.dtype.kind not in "fiub" or isinstance(nan, Proxy) or isinstance(posinf, Proxy) or \
            isinstance(neginf, Proxy) or not copy:
        return extern_call(np.nan_to_num, (x,), dict(copy=copy, nan=nan, posinf=posinf,
                                                     neginf=neginf))
    if t.dtype.kind != "f":
        return copy_of(t)               # NumPy returns integers and booleans as they are
    info = np.finfo(t.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    # NumPy writes each replacement into x's own dtype (copyto): a cast value, not a promotion
    fill = lambda v: np.asarray(v).astype(t.dtype)[()]
    out = where(np.isnan(t), fill(nan), t)
    out = where(isposinf(t), fill(hi), out)
    return where(isneginf(t), fill(lo), out)


def isposinf(x, out=None):
    t = asproxy(x)
    if out is not None or t.dtype.kind not in "fiub":
        return extern_call(np.isposinf, (x,), dict(out=out))   # complex: NumPy's TypeError
    return t == np.inf


def isneginf(x, out=None):
    t = asproxy(x)
    if out is not None or t.dtype.kind not in "fiub":
        return extern_call(np.isneginf, (x,), dict(out=out))
    return t == -np.inf


def ptp(a, axis=None, out=None, keepdims=_NO):
    if out is not None:
        return extern_call(np.ptp, (a,), dict(axis=axis, out=out, keepdims=keepdims))
    kw = {} if keepdims is _NO else dict(keepdims=keepdims)
    return amax(a, axis=axis, **kw) - amin(a, axis=axis, **kw)


def count_nonzero(a, axis=None, *, keepdims=False):
    t = asproxy(a)
    if t.dtype.kind not in "biufc":
        return extern_call(np.count_nonzero, (a,), dict(axis=axis, keepdims=keepdims))
    return sum_(cast(t, np.bool_), axis=axis, dtype=np.intp, keepdims=keepdims)


def inner(a, b):
    x, y = as_array(a), as_array(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.ndim <= 2 and y.ndim <= 2:     # contract the last axes: a @ b.T
        return dot(x, y) if y.ndim == 1 else matmul(x, np.swapaxes(y, -1, -2))
    return extern_call(np.inner, (a, b), {})


def vdot(a, b):
    """np.vdot; of complex vectors as BLAS's zdotc sums it, four real dot products (``re =
    xr.yr + xi.yi``, ``im = xr.yi - xi.yr``): ``np.vdot(a, a)`` has an imaginary part of
    exactly 0, as NumPy's (a complex multiply per element, fused, left a last-bit residue)."""
    x, y = ravel(asproxy(a)), ravel(asproxy(b))
    if x.dtype.kind != "c" and y.dtype.kind != "c":
        return dot(x, y)
    ct = np.result_type(x.dtype, y.dtype)
    x, y = cast(x, ct), cast(y, ct)
    xr, xi, yr, yi = np.real(x), np.imag(x), np.real(y), np.imag(y)
    re, im = np.add(dot(xr, yr), dot(xi, yi)), np.subtract(dot(xr, yi), dot(xi, yr))
    return wrap(make_node("complex", (re.node, im.node), (), ct, user_location()), scalar=True)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij") or not all(isinstance(v, bool) for v in (copy, sparse)):
        return extern_call(np.meshgrid, xi, dict(copy=copy, sparse=sparse, indexing=indexing))
    n = len(xi)
    shapes = [[1] * n for _ in range(n)]
    for i in range(n):
        shapes[i][i] = -1
    if indexing == "xy" and n > 1:
        shapes[0][:2], shapes[1][:2] = [1, -1], [-1, 1]
    out = [reshape(ravel(asproxy(x)), tuple(s)) for x, s in zip(xi, shapes)]
    if not sparse:
        out = list(broadcast_arrays(*out))
    if copy:
        out = [copy_of(o, scalar=False) for o in out]
    return tuple(out)


class _IndexGrid:
    """``np.mgrid[0:h, 0:w]`` / ``np.ogrid[...]`` in the user's code while a trace runs:
    arrays made in the function (``xs /= n`` updates them in place), from NumPy's own 1-D
    vectors of each axis (``np.ogrid``'s: its dtype and values, linspace's for a complex
    step). NumPy's own uses get NumPy's object."""
    replaces_object = True

    def __init__(self, original, sparse):
        self.original, self.sparse = original, sparse

    def __getitem__(self, key):
        if not replace.from_user():
            return self.original[key]
        vectors = np.ogrid[key]
        if isinstance(vectors, np.ndarray):         # (one slice: one vector)
            return copy_of(asproxy(vectors), scalar=False)
        traced = [asproxy(v) for v in vectors]
        if self.sparse:
            return tuple(copy_of(t, scalar=False) for t in traced)
        return stack(list(broadcast_arrays(*traced)), 0)

    def __getattr__(self, name):
        return getattr(self.original, name)


def indices(dimensions, dtype=int, sparse=False):
    """``np.indices(img.shape)``: each axis's index as an array made in the function (sizes
    symbolic or not)."""
    dims = tuple(dimensions)
    n = len(dims)
    out = []
    for k, d in enumerate(dims):
        shape = [1] * n
        shape[k] = d
        out.append(reshape(cast(asproxy(arange(d, original=np.arange)), np.dtype(dtype)),
                           tuple(shape)))
    if sparse:
        return tuple(copy_of(o, scalar=False) for o in out)
    if not out:
        return zeros((0,), dtype=dtype)
    return stack(list(broadcast_arrays(*out)), 0)


def _repeat_axis(t, reps: int, ax: int):
    """Each element of ``t`` along ``ax`` ``reps`` times in a row."""
    shape = t.shape
    spread = broadcast_to(reshape(t, shape[:ax + 1] + (1,) + shape[ax + 1:]),
                          shape[:ax + 1] + (reps,) + shape[ax + 1:])
    return reshape(spread, shape[:ax] + (shape[ax] * reps,) + shape[ax + 1:])


def repeat(a, repeats, axis=None):
    t = asproxy(a)
    if not is_int(repeats) or repeats < 0 or (axis is not None and not is_int(axis)) or \
            any(type(s) is not int for s in t.shape):
        return extern_call(np.repeat, (a, repeats), dict(axis=axis))
    if axis is None:
        t, ax = ravel(t), 0
    else:
        ax = normalize_axis_index(int(axis), t.ndim)
    return _repeat_axis(t, int(repeats), ax)


def tile(A, reps):
    t = asproxy(A)
    tup = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    if not all(is_int(r) and r >= 0 for r in tup) or any(type(s) is not int for s in t.shape):
        return extern_call(np.tile, (A, reps), {})
    d = max(len(tup), t.ndim)
    tup = (1,) * (d - len(tup)) + tuple(int(r) for r in tup)
    shape = (1,) * (d - t.ndim) + tuple(t.shape)
    # (1, s0, 1, s1, ...) spread to (r0, s0, r1, s1, ...), then rows of whole copies
    lifted = reshape(t, tuple(v for s in shape for v in (1, s)))
    spread = broadcast_to(lifted, tuple(v for r, s in zip(tup, shape) for v in (r, s)))
    return copy_of(reshape(spread, tuple(r * s for r, s in zip(tup, shape))), scalar=False)


def diag(v, k=0):
    t = asproxy(v)
    if not is_int(k) or t.ndim not in (1, 2):
        return extern_call(np.diag, (v,), dict(k=k))
    k = int(k)
    if t.ndim == 2:
        return copy_of(diagonal(t, k), scalar=False)
    n = t.shape[0] + abs(k)
    padded = join([t, zeros((abs(k),), t.dtype)], 0) if k else t
    # out[i, i + k] = v[i] (k >= 0), out[j - k, j] = v[j] (k < 0)
    spread = reshape(padded, (n, 1) if k >= 0 else (1, n))
    return where(eye(n, k=k, dtype=bool), spread, zeros((1, 1), t.dtype))


def diagflat(v, k=0):
    if not is_int(k):
        return extern_call(np.diagflat, (v,), dict(k=k))
    return diag(ravel(asproxy(v)), k)


def kron(a, b):
    x, y = asproxy(a), asproxy(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    nd = max(x.ndim, y.ndim)
    xs, ys = (1,) * (nd - x.ndim) + tuple(x.shape), (1,) * (nd - y.ndim) + tuple(y.shape)
    # a's axes at even positions, b's at odd: (a0, 1, a1, 1) * (1, b0, 1, b1), then merged
    prod = reshape(x, tuple(v for s in xs for v in (s, 1))) * \
        reshape(y, tuple(v for s in ys for v in (1, s)))
    return reshape(prod, tuple(p * q for p, q in zip(xs, ys)))


VANDER_MAX = 64     # columns written out as products; more run NumPy's call


def vander(x, N=None, increasing=False):
    t = asproxy(x)
    n = t.shape[0] if t.ndim == 1 and N is None else N
    if t.ndim != 1 or not is_int(n) or not 0 < int(n) <= VANDER_MAX:
        return extern_call(np.vander, (x,), dict(N=N, increasing=increasing))
    dt = np.promote_types(t.dtype, int)
    # NumPy: a column of ones, then multiply.accumulate of x along the row (x, x*x, ...)
    cols = [ones_like(t, dtype=dt)]
    for k in range(1, int(n)):
        cols.append(cast(t, dt) if k == 1 else cols[-1] * cast(t, dt))
    return stack(cols if increasing else cols[::-1], axis=1)


ISIN_MAX = 32       # test elements compared one by one; more run NumPy's call


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    t = asproxy(element)
    e = test_elements if isinstance(test_elements, Proxy) else np.asarray(test_elements)
    if not all(type(s) is int for s in e.shape) or e.size > ISIN_MAX or \
            np.result_type(t.dtype, e.dtype).kind not in "biuf" or kind not in (None, "sort", "table"):
        return extern_call(np.isin, (element, test_elements),
                           dict(assume_unique=assume_unique, invert=invert, kind=kind))
    flat = ravel(e) if isinstance(e, Proxy) else e.ravel()
    found = zeros(t.shape, bool) if e.size == 0 else t == flat[0]
    for k in range(1, e.size):
        found = found | (t == flat[k])
    return copy_of(asproxy(~found if invert else found), scalar=False)


def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's steps: each function applied to ``x[cond]`` (a lazy selection, so an
    elementwise function is ``np.where(cond, f(x), y)``), constants assigned where their
    condition holds, the last one "otherwise" when there is one more function than
    conditions."""
    t = asproxy(x)
    conds = condlist
    if isinstance(conds, (Proxy, np.ndarray, bool, np.bool_)) and (
            np.ndim(conds) == t.ndim or t.ndim == 0):
        conds = [conds]
    conds = [asproxy(c) if isinstance(c, Proxy) else np.asarray(c, dtype=bool) for c in conds]
    if any(c.dtype != np.bool_ for c in conds):
        conds = [cast(asproxy(c), np.bool_) for c in conds]
    if len(conds) == len(funclist) - 1:
        other = conds[0]
        for c in conds[1:]:
            other = other | c
        conds.append(~asproxy(other))
    elif len(conds) != len(funclist):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    y = zeros_like(t)
    for cond, func in zip(conds, funclist):
        cond = broadcast_to(asproxy(cond), t.shape)
        if callable(func):
            y[cond] = func(t[cond], *args, **kw)
        else:
            y[cond] = func
    return y


INDEX_RANGE = 13     # check code (runtime/compiled.py CHECK_MESSAGES)


def unravel_index(indices, shape, order="C"):
    """Each flat index as its coordinates, ``(i // stride) % size`` per axis (C order), after
    NumPy's check that every index is in range (when the program runs)."""
    t = asproxy(indices)
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if order not in ("C", "F") or t.dtype.kind not in "iu" or not all(is_int(d) for d in dims):
        return extern_call(np.unravel_index, (indices, shape), dict(order=order))
    dims = tuple(int(d) for d in dims)
    size = int(np.prod(dims))
    t = checked(cast(t, np.intp), all_((t >= 0) & (t < size)), INDEX_RANGE)
    out, stride = [], 1
    for d in (dims[::-1] if order == "C" else dims):
        out.append((t // stride) % d)
        stride *= d
    return tuple(out[::-1] if order == "C" else out)


def _atleast(nd):
    def atleast_nd(*arys):
        res = [atleast(a, nd) for a in arys]
        return res[0] if len(res) == 1 else tuple(res)
    return atleast_nd


def _along_axis(arr, indices, axis, what):
    """(the array, the fancy index that picks ``indices`` along ``axis``): every other axis
    indexed by its own positions, shaped to broadcast (NumPy's rule for *_along_axis)."""
    arr, indices = asproxy(arr), asproxy(indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"when axis=None, `indices` must have a single dimension "
                             f"(np.{what})")
        arr, axis = ravel(arr), 0
    axis = normalize_axis_index(axis, arr.ndim)
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    index = []
    for d in range(arr.ndim):
        if d == axis:
            index.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            index.append(reshape(_iota(arr.node.shape[d]), tuple(shape)))
    return arr, tuple(index)


def take_along_axis(arr, indices, axis=-1):
    arr, index = _along_axis(arr, indices, axis, "take_along_axis")
    return arr[index]


def put_along_axis(arr, indices, values, axis):
    arr, index = _along_axis(arr, indices, axis, "put_along_axis")
    arr[index] = values


FUNCTIONS = {np.cross: cross, np.polyval: polyval, np.sinc: sinc, np.nan_to_num: nan_to_num,
             np.ptp: ptp, np.isposinf: isposinf, np.isneginf: isneginf, np.count_nonzero: count_nonzero, np.inner: inner, np.vdot: vdot,
             np.meshgrid: meshgrid, np.diag: diag, np.diagflat: diagflat, np.repeat: repeat, np.tile: tile,
             np.kron: kron, np.vander: vander, np.isin: isin, np.piecewise: piecewise,
             np.unravel_index: unravel_index,
             np.take_along_axis: take_along_axis, np.put_along_axis: put_along_axis,
             np.atleast_1d: _atleast(1), np.atleast_2d: _atleast(2), np.atleast_3d: _atleast(3)}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""


replace.register(np, {"indices": indices})
replace.register(np, {"mgrid": _IndexGrid(np.mgrid, False), "ogrid": _IndexGrid(np.ogrid, True)})
