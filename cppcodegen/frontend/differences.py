"""Differences and sliding sums written as slices of the traced array: ``np.diff``,
``np.ediff1d``, ``np.gradient``, ``np.trapezoid``, ``np.convolve``, ``np.correlate``,
``np.unwrap``.

In: NumPy's arguments (proxies among them). Out: proxies of slice arithmetic, so each result
fuses into its consumers like any expression (``np.diff(u) / dx`` is one loop reading ``u``
twice). Each follows NumPy's own formulation, term for term, so results match it:

- ``diff``: ``a[1:] - a[:-1]`` along ``axis``, ``n`` times (``!=`` for booleans);
  ``prepend``/``append`` joined first (a scalar broadcast to one slice);
- ``gradient``: central differences ``(f[2:] - f[:-2]) / (2 * h)`` inside, one-sided ones of
  ``edge_order`` 1 or 2 at the ends, per axis, for scalar spacings (integers give float64);
- ``trapezoid``: ``(d * (y[1:] + y[:-1]) / 2.0).sum(axis)``, ``d`` the spacing or
  ``np.diff(x)``;
- ``convolve``/``correlate``: for a second operand of a length known when compiling (at
  most ``MAX_TAPS``), the sum of its taps times shifted slices of the zero-padded first one
  (NumPy computes each output as a dot product of the same terms: its sum order may differ
  in the last bits). ``correlate`` conjugates a complex second operand, as NumPy does;
- ``unwrap``: the differences brought into ``[-period/2, period/2)``, their corrections
  summed along the axis (``np.cumsum``) and added to all but the first element.

Anything else (coordinate arrays for ``gradient``, run-time lengths of a kernel, object or
boolean ``convolve``, ``ediff1d``'s ``to_begin``/``to_end``) runs NumPy's own function
between kernels, which also raises NumPy's errors for arguments it rejects.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .concat import join
from .creation import zeros
from .externs import extern_call
from .elementwise import where
from .proxy import asproxy, cast, Proxy
from .iteration import concrete_int
from .sizes import is_int, symbolic
from .views import axis_slice, broadcast_to, ravel, reshape

MAX_TAPS = 64       # convolve/correlate kernels longer than this run NumPy's own function
_NO = np._NoValue


def diff(a, n=1, axis=-1, prepend=_NO, append=_NO):
    def numpy_diff():
        return extern_call(np.diff, (a,), dict(n=n, axis=axis, prepend=prepend, append=append))
    if not is_int(n) or not is_int(axis) or n < 0 or np.ndim(a) == 0:
        return numpy_diff()             # NumPy's errors
    if n == 0:
        return a                        # NumPy returns its argument itself
    x = asproxy(a)
    ax = normalize_axis_index(int(axis), x.ndim)
    parts = []
    for end in (prepend, x, append):
        if end is _NO:
            continue
        if end is not x:
            end = end if isinstance(end, Proxy) else np.asanyarray(end)
            if end.ndim == 0:
                shape = tuple(1 if d == ax else s for d, s in enumerate(x.shape))
                end = broadcast_to(asproxy(end), shape)
        parts.append(end)
    if len(parts) > 1:
        x = join(parts, ax)
    for _ in range(int(n)):
        hi, lo = axis_slice(x, ax, 1, None), axis_slice(x, ax, None, -1)
        x = np.not_equal(hi, lo) if x.dtype == np.bool_ else hi - lo
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    if to_end is not None or to_begin is not None:
        return extern_call(np.ediff1d, (ary,), dict(to_end=to_end, to_begin=to_begin))
    return diff(ravel(asproxy(ary)))


def gradient(f, *varargs, axis=None, edge_order=1):
    def numpy_gradient():
        return extern_call(np.gradient, (f, *varargs), dict(axis=axis, edge_order=edge_order))
    x = asproxy(f)
    if x.ndim == 0 or edge_order not in (1, 2) or x.dtype.kind not in "iuf":
        return numpy_gradient()
    try:
        axes = tuple(range(x.ndim)) if axis is None else tuple(
            normalize_axis_index(int(a), x.ndim) for a in np.atleast_1d(axis))
    except (TypeError, ValueError):
        return numpy_gradient()
    if len(set(axes)) != len(axes):
        return numpy_gradient()
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        return numpy_gradient()
    if any(np.ndim(h) != 0 for h in spacing) or any(
            _shorter(x.shape[ax], edge_order + 1) for ax in axes):
        return numpy_gradient()         # coordinates, NumPy's ValueError
    if x.dtype.kind in "iu":
        x = cast(x, np.float64)         # NumPy converts integer input to float64
    otype = x.dtype
    results = []
    for ax, h in zip(axes, spacing):
        n = x.shape[ax]
        inner = (axis_slice(x, ax, 2, None) - axis_slice(x, ax, None, -2)) / (2. * h)
        if edge_order == 1:
            head = (axis_slice(x, ax, 1, 2) - axis_slice(x, ax, 0, 1)) / h
            tail = (axis_slice(x, ax, n - 1, n) - axis_slice(x, ax, n - 2, n - 1)) / h
        else:
            a, b, c = -1.5 / h, 2. / h, -0.5 / h
            head = a * axis_slice(x, ax, 0, 1) + b * axis_slice(x, ax, 1, 2) + c * axis_slice(x, ax, 2, 3)
            a, b, c = 0.5 / h, -2. / h, 1.5 / h
            tail = (a * axis_slice(x, ax, n - 3, n - 2) + b * axis_slice(x, ax, n - 2, n - 1)
                    + c * axis_slice(x, ax, n - 1, n))
        # NumPy assigns each part into an array of f's (float) dtype
        results.append(join([cast(p, otype) for p in (head, inner, tail)], ax))
    return tuple(results) if len(results) > 1 else results[0]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    yy = asproxy(y)
    if not is_int(axis) or yy.ndim == 0 or isinstance(dx, Proxy) and dx.ndim != 0:
        return extern_call(np.trapezoid, (y,), dict(x=x, dx=dx, axis=axis))
    ax = normalize_axis_index(int(axis), yy.ndim)
    if x is None:
        d = dx
    else:
        xx = asproxy(x)
        if xx.ndim == 1:
            d = diff(xx)
            d = reshape(d, tuple(d.shape[0] if k == ax else 1 for k in range(yy.ndim)))
        else:
            d = diff(xx, axis=ax)
    return (d * (axis_slice(yy, ax, 1, None) + axis_slice(yy, ax, None, -1)) / 2.0).sum(ax)


def _shorter(n, k) -> bool:
    """n < k, for a symbolic length too (decided for this call, guarded)."""
    return n < k if type(n) is int else symbolic().less(n, k)


def _taps(v) -> int:
    """The number of taps of a filter: a symbolic length as this call's, guarded (the
    terms are unrolled; a filter's length rarely changes from call to call)."""
    m = np.shape(v)[0]
    return m if type(m) is int else concrete_int(m)


def _sliding(a, v, mode, conjugate):
    """NumPy's correlate of 1-d ``a`` and ``v`` (``len(v) <= len(a)``): output ``k`` is the
    sum over ``j`` of ``a[k + j - left] * v[j]``, ``a`` zero outside."""
    x = asproxy(a)
    n, m = x.shape[0], _taps(v)
    dtype = np.result_type(x.dtype, v.dtype)
    if conjugate and dtype.kind == "c":
        v = np.conj(v)
    left, right = {"valid": (0, 0), "same": (m // 2, m - 1 - m // 2),
                   "full": (m - 1, m - 1)}[mode]
    if left or right:
        x = join([zeros((left,), dtype), cast(x, dtype), zeros((right,), dtype)], 0)
    width = n + left + right - m + 1
    total = None
    for j in range(m):
        term = axis_slice(x, 0, j, j + width) * v[j]
        total = term if total is None else total + term
    return cast(total, dtype)


def _modes(mode):
    key = mode.lower()[:1] if isinstance(mode, str) else mode if is_int(mode) else None
    return {"v": "valid", "s": "same", "f": "full", 0: "valid", 1: "same", 2: "full"}.get(key)


def convolve(a, v, mode="full"):
    m = _modes(mode)
    if m is None or np.ndim(a) != 1 or np.ndim(v) != 1:
        return extern_call(np.convolve, (a, v), dict(mode=mode))
    given = (a, v)                      # (NumPy's errors name them in this order)
    if _shorter(np.shape(a)[0], np.shape(v)[0]):
        a, v = v, a                     # NumPy convolves the longer with the shorter
    na, nv = np.shape(a)[0], _taps(v)   # (a term per tap; the signal may be symbolic)
    kinds = {np.asarray(t).dtype.kind if not isinstance(t, Proxy) else t.dtype.kind
             for t in (a, v)}
    if na == 0 or nv == 0 or nv > MAX_TAPS or not kinds <= set("iufc"):
        return extern_call(np.convolve, given, dict(mode=mode))
    v = v if isinstance(v, Proxy) else np.asarray(v)
    return _sliding(a, v[::-1], m, conjugate=False)


def correlate(a, v, mode="valid"):
    m = _modes(mode)
    if m is None or np.ndim(a) != 1 or np.ndim(v) != 1:
        return extern_call(np.correlate, (a, v), dict(mode=mode))
    na, nv = np.shape(a)[0], _taps(v)
    kinds = {np.asarray(t).dtype.kind if not isinstance(t, Proxy) else t.dtype.kind
             for t in (a, v)}
    if _shorter(na, max(nv, 1)) or nv == 0 or nv > MAX_TAPS or not kinds <= set("iufc"):
        return extern_call(np.correlate, (a, v), dict(mode=mode))
    return _sliding(a, v if isinstance(v, Proxy) else np.asarray(v), m, conjugate=True)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    x = asproxy(p)
    if not is_int(axis) or x.ndim == 0 or x.dtype.kind not in "iuf" or \
            isinstance(discont, Proxy) or isinstance(period, Proxy):
        return extern_call(np.unwrap, (p,), dict(discont=discont, axis=axis, period=period))
    ax = normalize_axis_index(int(axis), x.ndim)
    dd = diff(x, axis=ax)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(dd.dtype, period)       # a Python number is weak (NEP 50)
    if dtype.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    # NumPy's steps: each difference brought into [low, high), its correction summed along
    ddmod = np.mod(dd - low, period) + low
    if ambiguous:
        ddmod = where((ddmod == low) & (dd > 0), high, ddmod)
    correct = where(abs(dd) < discont, 0, ddmod - dd)
    rest = axis_slice(x, ax, 1, None) + np.cumsum(correct, axis=ax)
    return join([cast(axis_slice(x, ax, None, 1), dtype), cast(rest, dtype)], ax)


FUNCTIONS = {np.diff: diff, np.ediff1d: ediff1d, np.gradient: gradient,
             np.trapezoid: trapezoid, np.convolve: convolve, np.correlate: correlate,
             np.unwrap: unwrap}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""
