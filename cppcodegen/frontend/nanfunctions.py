"""NaN-ignoring reductions: ``np.nansum``, ``np.nanprod``, ``np.nanmean``, ``np.nanmax``,
``np.nanmin``, ``np.nanargmax``, ``np.nanargmin``, traced as NumPy writes them (NaN replaced
by the reduction's identity, then the plain reduction), so they fuse into one pass like
``sum``.

In: NumPy's arguments. Out: proxies. NumPy's results: ``nanmean`` divides the sum of the kept
values by their count in float64 and rounds to the sum's dtype (float32 stays float32);
``nanmax``/``nanmin`` of an all-NaN slice are NaN (NumPy also warns ``All-NaN slice
encountered``, and ``nanmean`` ``Mean of empty slice``: compiled code gives the NaN without
the warning). Integer and boolean arrays have no NaN: the plain reduction. ``out=``,
``initial=``, ``where=`` run NumPy's function between kernels.
"""
from __future__ import annotations

import numpy as np

from .elementwise import where as _where
from .externs import extern_call
from .proxy import asproxy, cast
from ..errors import user_location
from .raises import error_check
from .reductions import all_, amax, amin, any_, argmax, argmin, mean, prod, sum_

_NO = np._NoValue


def _plain(kw) -> bool:
    return all(v is None or v is _NO for v in kw.values())


def _replaced(a, value):
    t = asproxy(a)
    return t if t.dtype.kind not in "fc" else _where(np.isnan(t), value, t)


def _nan_sum_prod(name, fn, identity):
    numpy_fn = getattr(np, name)

    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=_NO):
        if not _plain(dict(out=out, initial=initial, where=where)):
            return extern_call(numpy_fn, (a,), dict(axis=axis, dtype=dtype, out=out,
                                                    keepdims=keepdims, initial=initial,
                                                    where=where))
        return fn(_replaced(a, identity), axis=axis, dtype=dtype, keepdims=keepdims)
    return reduce


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO):
    t = asproxy(a)
    if not _plain(dict(out=out, where=where)):
        return extern_call(np.nanmean, (a,), dict(axis=axis, dtype=dtype, out=out,
                                                  keepdims=keepdims, where=where))
    if t.dtype.kind not in "fc":
        return mean(t, axis=axis, dtype=dtype, keepdims=keepdims)
    count = sum_(~np.isnan(t), axis=axis, dtype=np.intp, keepdims=keepdims)
    total = sum_(_replaced(t, 0), axis=axis, dtype=dtype, keepdims=keepdims)
    return cast(total / count, total.dtype)     # NumPy: true_divide into the sum, unsafe


def _nan_extreme(name, fn, fill):
    numpy_fn = getattr(np, name)

    def reduce(a, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
        t = asproxy(a)
        if not _plain(dict(out=out, initial=initial, where=where)):
            return extern_call(numpy_fn, (a,), dict(axis=axis, out=out, keepdims=keepdims,
                                                    initial=initial, where=where))
        keep = False if keepdims is _NO else keepdims
        if t.dtype.kind not in "f":
            return fn(t, axis=axis, keepdims=keep) if t.dtype.kind != "c" else \
                extern_call(numpy_fn, (a,), dict(axis=axis, keepdims=keepdims))
        best = fn(_replaced(t, fill), axis=axis, keepdims=keep)
        r = _where(all_(np.isnan(t), axis=axis, keepdims=keep), np.nan, best)
        r.scalar = not r.node.shape         # (of everything: a NumPy scalar, as NumPy's)
        return r
    return reduce


def _nan_arg(name, fn, fill):
    numpy_fn = getattr(np, name)

    def arg(a, axis=None, out=None, *, keepdims=_NO):
        """As NumPy computes it: NaN replaced by -inf (inf), then argmax (argmin); a slice of
        NaN only raises NumPy's ValueError where the program meets it."""
        t = asproxy(a)
        if out is not None or t.dtype.kind == "c":
            return extern_call(numpy_fn, (a,), dict(axis=axis, out=out, keepdims=keepdims))
        keep = False if keepdims is _NO else keepdims
        if t.dtype.kind != "f":
            return fn(t, axis=axis, keepdims=keep)
        nan = np.isnan(t)
        r = fn(_where(nan, fill, t), axis=axis, keepdims=keep)
        ok = ~any_(all_(nan, axis=axis)) if t.node.shape and all(t.node.shape) else True
        if ok is True:
            return r
        return error_check(r, cast(ok, np.int64), (ValueError, ("All-NaN slice encountered",)),
                           user_location())
    return arg


nansum = _nan_sum_prod("nansum", sum_, 0)
nanprod = _nan_sum_prod("nanprod", prod, 1)
nanmax = _nan_extreme("nanmax", amax, -np.inf)
nanmin = _nan_extreme("nanmin", amin, np.inf)
nanargmax = _nan_arg("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", argmin, np.inf)

FUNCTIONS = {np.nansum: nansum, np.nanprod: nanprod, np.nanmean: nanmean,
             np.nanmax: nanmax, np.nanmin: nanmin, np.nanargmax: nanargmax,
             np.nanargmin: nanargmin}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""
