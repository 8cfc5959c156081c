"""Weighted means and covariances: ``np.average``, ``np.cov``, ``np.corrcoef``, traced as the
array operations NumPy's own code performs, so they fuse with what surrounds them and compile
inside loops.

In: NumPy's arguments (proxies among them). Out: proxies. NumPy's steps in its order:
``average`` is ``(a * w).sum(axis) / w.sum(axis)`` in the promoted dtype (float64 for integer
``a``), and weights summing to zero raise NumPy's ``ZeroDivisionError`` when the compiled call
runs (a check stage, runtime/compiled.py ``CHECK_MESSAGES``); ``cov`` subtracts the row means
and divides ``X @ X.T`` by ``n - ddof`` (the product's order of summation is ours, within a
dot product's rounding bound of NumPy's); ``corrcoef`` divides by the outer product of the
standard deviations row then column and clips to [-1, 1]. ``fweights``/``aweights`` and complex
``corrcoef`` run NumPy's function between kernels, which also raises NumPy's errors for
arguments NumPy refuses.
"""
from __future__ import annotations

import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import user_location
from .concat import atleast, join
from .elementwise import clip
from .externs import extern_call
from .indexing import checked, diagonal
from .linalg import matmul
from .proxy import asproxy, cast, Proxy
from .reductions import any_, mean, sum_
from .views import reshape, squeeze, transpose

_NO = np._NoValue
WEIGHTS_ZERO = 11       # check code (runtime/compiled.py CHECK_MESSAGES)


def _numpy(func, args, kwargs):
    return extern_call(func, args, {k: v for k, v in kwargs.items() if v is not _NO})


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NO):
    kw = dict(axis=axis, weights=weights, returned=returned, keepdims=keepdims)
    x = asproxy(a)
    keep = {} if keepdims is _NO else {"keepdims": keepdims}
    axes = None if axis is None else normalize_axis_tuple(axis, x.ndim, argname="axis")
    if weights is None:
        avg = mean(x, axis=axes, **keep)
        if not returned:
            return avg
        if not all(type(s) is int for s in x.shape):
            return _numpy(np.average, (a,), kw)
        avg_shape = np.shape(avg) if isinstance(avg, Proxy) else ()
        count = np.dtype(avg.dtype).type(x.size / max(int(np.prod(avg_shape)), 1))
        return avg, (np.full(avg_shape, count) if avg_shape else count)
    w = asproxy(weights)
    if x.shape != w.shape:
        if axes is None or w.shape != tuple(x.shape[ax] for ax in axes):
            return _numpy(np.average, (a,), kw)     # NumPy's TypeError / ValueError
        w = transpose(w, list(np.argsort(axes)))
        w = reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(x.shape)))
    dt = np.result_type(x.dtype, w.dtype, *(("f8",) if x.dtype.kind in "biu" else ()))
    scl = asproxy(sum_(w, axis=axes, dtype=dt, **keep))
    scl = checked(scl, ~any_(scl == 0.0), WEIGHTS_ZERO)
    total = sum_(cast(x, dt) * cast(w, dt), axis=axes, **keep)
    avg = total / scl
    if not returned:
        return avg
    if np.shape(scl) != np.shape(avg):
        scl = np.broadcast_to(scl, np.shape(avg)) * 1     # NumPy returns a copy
    return avg, scl


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    kw = dict(y=y, rowvar=rowvar, bias=bias, ddof=ddof, fweights=fweights, aweights=aweights,
              dtype=dtype)
    x = asproxy(m)
    if fweights is not None or aweights is not None or x.ndim > 2 or \
            y is not None and np.ndim(y) > 2 or ddof is not None and isinstance(ddof, Proxy):
        return _numpy(np.cov, (m,), kw)
    if dtype is None:
        dtype = np.result_type(x.dtype, *(() if y is None else (asproxy(y).dtype,)), np.float64)
    X = atleast(cast(x, dtype), 2)
    if not rowvar and x.ndim != 1:
        X = transpose(X)
    if X.shape[0] == 0:
        return _numpy(np.cov, (m,), kw)
    if y is not None:
        Y = atleast(cast(y, dtype), 2)
        if not rowvar and Y.shape[0] != 1:
            Y = transpose(Y)
        X = join([X, Y], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = X.shape[1] - ddof
    if fact <= 0:
        warnings.warn(f"Degrees of freedom <= 0 for slice (at {user_location()})",
                      RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - reshape(mean(X, axis=1), (X.shape[0], 1))
    Xc = np.conj(X) if X.dtype.kind == "c" else X
    if X.shape[0] == 1:         # one variable: its dot product (a 1x1 GEMM is NumPy's call)
        c = reshape(sum_(X * Xc, axis=1), (1, 1))
    else:
        c = matmul(X, transpose(Xc))
    return squeeze(cast(c * np.true_divide(1, fact), c.dtype))     # NumPy: c *= 1 / fact


def corrcoef(x, y=None, rowvar=True, bias=_NO, ddof=_NO, *, dtype=None):
    kw = dict(y=y, rowvar=rowvar, bias=bias, ddof=ddof, dtype=dtype)
    if bias is not _NO or ddof is not _NO or \
            np.result_type(asproxy(x).dtype, np.float64).kind == "c" or \
            y is not None and asproxy(y).dtype.kind == "c":
        return _numpy(np.corrcoef, (x,), kw)    # NumPy warns these are deprecated
    c = cov(x, y, rowvar, dtype=dtype)
    if not isinstance(c, Proxy) or c.ndim != 2:
        return c / c                            # one variable: nan for 0, inf or nan, else 1
    stddev = np.sqrt(diagonal(c))
    c = c / reshape(stddev, (c.shape[0], 1))
    c = c / reshape(stddev, (1, c.shape[0]))
    return clip(c, -1, 1)


FUNCTIONS = {np.average: average, np.cov: cov, np.corrcoef: corrcoef}
