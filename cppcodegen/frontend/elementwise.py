"""Elementwise operations: ufuncs, ``np.where``, ``np.clip``, ``np.select``, ``np.isclose``.

In: a ufunc (or function) and its operands. Out: one graph node of the ufunc's name over the
operands broadcast together and cast to the loop NumPy picks (``ufunc.resolve_dtypes`` with
NEP 50 weak scalars, so promotion matches by construction). Ufuncs the loop IR has no op for
are composed from ones it has, as NumPy's loops compute them (``COMPOSED``).
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from ..ir import ufuncs
from ..ir.graph import make_node
from .externs import extern_call
from .proxy import (as_node, asproxy, broadcast_node, broadcast_operands, cast, cast_node,
                    copy_of, descriptor, is_weak, own, Proxy, store_result, unsupported, wrap,
                    WEAK_TYPES)
from .selection import lift
from .sizes import fit, is_dim
from .views import broadcast_to
from . import pyflags


OPERATOR = [False]      # set by a Python operator (ndarray.py) for the ufunc it calls


def trace_ufunc(ufunc, inputs, kwargs):
    # Python scalars in, NumPy scalar out (np.exp(1j * k) is a complex128 that promotes
    # like an array), unless the call is a Python operator's (Python numbers stay weak)
    operator, OPERATOR[0] = OPERATOR[0], False
    name = ufunc.__name__
    if "out" not in kwargs and ufunc.nout == 1:     # f(x[m]) is f(x)[m]: kept lazy
        lifted = lift(lambda xs: trace_ufunc(ufunc, tuple(xs), dict(kwargs)), inputs)
        if lifted is not None:
            return lifted
    if kwargs.get("where", True) is not True and ufunc.nout == 1:
        return _masked_call(ufunc, inputs, dict(kwargs), name)
    out = kwargs.pop("out", None)
    if out is not None:
        out = out if isinstance(out, tuple) else (out,)
        if len(out) != 1 or not isinstance(out[0], Proxy) or ufunc.nout != 1:
            unsupported(f"np.{name}(..., out=...) with other than one traced array")
        result = trace_ufunc(ufunc, inputs, kwargs)
        store_result(out[0], result, name)
        return out[0]
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("out", None)
    if kwargs.pop("casting", "same_kind") != "same_kind" or kwargs.pop("where", True) is not True:
        unsupported(f"np.{name} with casting=/where=")
    if kwargs:
        unsupported(f"np.{name} keyword arguments {sorted(kwargs)}")
    if name == "divmod":            # (of Python numbers, a Python operator's: Python ints)
        OPERATOR[0] = operator
        q = trace_ufunc(np.floor_divide, inputs, {})
        OPERATOR[0] = operator
        return q, trace_ufunc(np.remainder, inputs, {})
    if name == "modf":      # (fraction, integral part), each with x's sign; of inf: (±0, inf)
        (x,) = _loop_operands(ufunc, inputs, dtype)
        whole = np.trunc(x)
        zero = _const(x, 0)
        return where(np.isinf(x), np.copysign(zero, x), np.copysign(x - whole, x)), whole
    if name in COMPOSED:
        ops = _loop_operands(ufunc, inputs, dtype)
        half = ops[0].dtype == np.float16       # NumPy's half loops compute in float32
        r = COMPOSED[name](*[cast(x, np.float32) for x in ops] if half else ops)
        r = cast(r, np.float16) if half else r
        r.scalar = not r.shape
        return r
    if name not in ufuncs.TRACEABLE:    # (np.bitwise_count, ...: NumPy's own ufunc, between
        if ufunc.nout != 1:             # kernels; a loop around it runs as Python runs it)
            unsupported(f"np.{name}")
        kw = {} if dtype is None else {"dtype": dtype}
        return extern_call(ufunc, tuple(inputs), kw)
    name = ufuncs.ALIASES.get(name, name)
    dts = loop_dtypes(ufunc, inputs, dtype)
    in_dts, out_dt = dts[:-1], dts[-1]
    if name == "conjugate" and out_dt.kind != "c":      # of a real number: itself
        name = "positive"
    if name == "clip" and out_dt.kind == "c":           # NumPy's complex clip (clip.cpp)
        return _complex_clip(*[cast(asproxy(x), dt) for x, dt in zip(inputs, in_dts)])
    if name in ufuncs.LOGICAL:      # logical ops work on truth values
        in_dts = (np.dtype(bool),) * len(inputs)
    if name in ufuncs.COMPARISONS and any(type(x) is int for x in inputs):
        in_dts = _widen_for_python_ints(inputs, in_dts)
    elif any(map(traced_python_int, inputs, in_dts)):
        if name in ufuncs.COMPARISONS and np.dtype(np.uint64) in in_dts:
            return _unsigned_vs_python_int(ufunc, inputs)
        if name in ufuncs.COMPARISONS:
            in_dts = (np.dtype(np.int64),) * len(in_dts)        # compared by value
        else:
            from .pyints import operand     # (raises.py, which pyints uses, imports this)
            inputs = [operand(x, dt) for x, dt in zip(inputs, in_dts)]
    if name in ufuncs.COMPARISONS and sorted(dt.kind for dt in in_dts) == ["i", "u"]:
        return _signed_unsigned(name, *inputs, unsigned_first=in_dts[0].kind == "u")
    shape = broadcast_operands(inputs, f"np.{ufunc.__name__}")
    args = [fit(as_node(x, dt), shape) for x, dt in zip(inputs, in_dts)]
    if name in ("floor", "ceil", "trunc") and out_dt.kind in "biu":
        return wrap(own(broadcast_node(args[0], shape)), scalar=not shape)   # whole
    node = make_node(name, args, shape, out_dt, user_location())
    weak = operator and all(is_weak(x) for x in inputs)   # (a comparison of Python
    out = wrap(node, weak, scalar=not weak and not shape)   # numbers: a Python bool)
    return pyflags.pass_on(out, inputs, node.where, name) if operator else out


def loop_dtypes(ufunc, inputs, dtype) -> tuple:
    """The dtypes of the loop NumPy picks for ``inputs`` (NEP 50 promotion, ``dtype=``):
    the inputs', then the outputs'."""
    descs = tuple(descriptor(x) for x in inputs)
    if all(isinstance(d, type) for d in descs):     # Python scalars only (a carried `i`):
        descs = tuple(np.dtype(d) for d in descs)   # Python's int/float/bool, as int64/float64
    try:
        outs = (None,) * ufunc.nout
        if dtype is None:
            return ufunc.resolve_dtypes(descs + outs)
        sig = (None,) * len(inputs) + (np.dtype(dtype),) * ufunc.nout
        return ufunc.resolve_dtypes(descs + outs, signature=sig)
    except TypeError as e:
        raise TypeError(f"np.{ufunc.__name__}: {e} (at {user_location()})") from None


def _loop_operands(ufunc, inputs, dtype):
    """``inputs`` cast to the loop NumPy picks for them."""
    return [cast(asproxy(x), dt) for x, dt in zip(inputs, loop_dtypes(ufunc, inputs, dtype)[:-1])]


def _const(x: Proxy, value):
    """``value`` as a NumPy scalar of ``x``'s dtype (a strong operand of that dtype)."""
    return x.dtype.type(value)


def _logaddexp(x, y, ln2, log1p_exp):
    """NumPy's npy_logaddexp(2): equal inputs (infinities of one sign) give x + ln 2, the
    larger one plus log(1 + exp(-|x - y|)) otherwise, NaN propagates through x - y."""
    tmp = x - y
    return where(x == y, x + ln2,
                 where(tmp > 0, x + log1p_exp(-tmp),
                       where(tmp <= 0, y + log1p_exp(tmp), tmp)))


def _pi(x):     # NumPy's float32 loops use float constants: (float)pi / 180.0f
    return x.dtype.type(np.pi)


# ufuncs that are a few traceable ones, written exactly as NumPy's loops compute them (the
# constants in the loop's dtype), so results are bit-equal (logaddexp: to exp/log1p's ULP)
COMPOSED = {
    "fabs": lambda x: np.absolute(x),
    "deg2rad": lambda x: x * (_pi(x) / _const(x, 180)),
    "radians": lambda x: x * (_pi(x) / _const(x, 180)),
    "rad2deg": lambda x: x * (_const(x, 180) / _pi(x)),
    "degrees": lambda x: x * (_const(x, 180) / _pi(x)),
    "heaviside": lambda x1, x2: where(np.isnan(x1), _const(x1, np.nan), where(
        x1 == 0, x2, where(x1 < 0, _const(x1, 0), _const(x1, 1)))),
    "logaddexp": lambda x, y: _logaddexp(x, y, _const(x, np.log(2)),
                                         lambda t: np.log1p(np.exp(t))),
    "logaddexp2": lambda x, y: _logaddexp(x, y, _const(x, 1), lambda t: _const(
        x, 1 / np.log(2)) * np.log1p(np.exp2(t))),
    "float_power": lambda x, y: np.power(x, y),         # its loops are float64's
}


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.isclose as NumPy computes it: |a - b| <= atol + rtol * |b| where b is finite, or
    a == b; b made inexact first (no abs(INT_MIN))."""
    x = a if isinstance(a, (int, float)) else asproxy(np.asarray(a) if isinstance(a, list) else a)
    y = np.asarray(b) if isinstance(b, list) else b
    if isinstance(y, Proxy) and y.weak:
        if y.dtype.kind in "biu":                                # a Python int: float(y)
            y = wrap(cast_node(y.node, np.dtype(np.float64)), weak=True)
    elif isinstance(y, (Proxy, np.ndarray, np.generic)):
        y = cast(asproxy(y), np.result_type(descriptor(y), 1.0))
    elif isinstance(y, int):
        y = float(y)
    y = asproxy(y)
    result = ((np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y)) | (x == y))
    if equal_nan:
        result = result | (np.isnan(x) & np.isnan(y))
    return result


def select(condlist, choicelist, default=0):
    """np.select: the choice of the first true condition, else ``default``, in the dtype of
    the choices and the default (Python numbers weak, as NumPy's result_type takes them)."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"list of cases must be same length as list of conditions "
                         f"(at {user_location()})")
    if not condlist:
        raise ValueError(f"select with an empty condition list is not possible "
                         f"(at {user_location()})")
    conds = [asproxy(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray "
                            f"(at {user_location()})")
    values = list(choicelist) + [default]
    dt = np.result_type(*[v if type(v) in (int, float, complex) else descriptor(v)
                          if isinstance(v, Proxy) else np.asarray(v) for v in values])
    values = [cast(asproxy(v), dt) for v in values]
    shape = broadcast_operands(conds + values, "np.select")
    result = broadcast_to(values[-1], shape)
    for cond, choice in zip(conds[::-1], values[-2::-1]):
        result = where(cond, choice, result)
    return broadcast_to(result, shape)



def _signed_unsigned(name, a, b, unsigned_first):
    """NumPy's int64-uint64 comparison loops compare values (-1 < 2**64 - 1); C++ would
    convert the signed side. A negative value decides it; otherwise both are uint64."""
    if unsigned_first:
        a, b, name = b, a, ufuncs.MIRRORED.get(name, name)       # a: the signed side
    a = cast(asproxy(a), np.int64)
    negative = np.less(a, 0)
    same = getattr(np, name)(cast(a, np.uint64), cast(asproxy(b), np.uint64))
    if name in ("less", "less_equal", "not_equal"):
        return np.logical_or(negative, same)
    return np.logical_and(np.logical_not(negative), same)


def _widen_for_python_ints(inputs, in_dts):
    """NumPy compares arrays with out-of-range Python ints by value (int8 < 1000 is True)."""
    for x, dt in zip(inputs, in_dts):
        if type(x) is int and dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= x <= info.max:
                wide = np.dtype(np.int64) if -2**63 <= x < 2**63 else np.dtype(np.float64)
                if dt.kind == "u" and dt.itemsize == 8 and wide.kind == "i":
                    wide = np.dtype(np.float64)
                return tuple(wide for _ in in_dts)
    return in_dts


def traced_python_int(x, dt) -> bool:
    """Is ``x`` a traced Python int (a weak int scalar, a size, a loop's index) in a loop of
    the narrower int ``dt``? NEP 50 casts it, and NumPy raises where it does not fit."""
    return (isinstance(x, Proxy) and x.weak and x.dtype.kind == "i" and not x.shape or
            is_dim(x) and type(x) is not int) and dt.kind in "iu" and dt != np.int64


def _unsigned_vs_python_int(ufunc, inputs):
    """A uint64 array compared with a traced Python int: by value, as NumPy compares them
    (a negative int is below every element; others compare as uint64)."""
    py = next(i for i, x in enumerate(inputs) if is_weak(x))
    k = asproxy(inputs[py]) if isinstance(inputs[py], Proxy) else wrap(
        as_node(inputs[py], np.dtype(np.int64)), weak=True)
    below = ufunc(-1, 0) if py == 0 else ufunc(0, -1)       # the answer where k < 0
    ops = list(inputs)
    ops[py] = k.astype(np.uint64)
    return where(k < 0, bool(below), ufunc(*ops))


def _masked_call(ufunc, inputs, kwargs, name):
    """``np.divide(a, b, out=c, where=b != 0)``: the ufunc everywhere, kept where the mask
    is True; elsewhere ``out`` keeps its values (without ``out``, NumPy leaves a fresh
    array's values there as they happen to be: zeros here)."""
    cond, out = kwargs.pop("where"), kwargs.pop("out", None)
    result = trace_ufunc(ufunc, inputs, kwargs)
    if out is None:
        return where(cond, result, np.zeros((), result.dtype))
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if not isinstance(out, Proxy):
        unsupported(f"np.{name}(..., out=..., where=...) with other than one traced array")
    store_result(out, where(cond, result, out), name)
    return out


def where(cond, x=None, y=None):
    if x is None and y is None:         # the indices of the true elements: np.nonzero
        return extern_call(np.nonzero, (cond,), {}, speculate=True)
    if x is None or y is None:
        raise ValueError(f"either both or neither of x and y should be given "
                         f"(at {user_location()})")
    descs = [descriptor(v) for v in (x, y)]
    weak_values = [{bool: True, int: 0, float: 0.0, complex: 0j}[d] if isinstance(d, type) else d
                   for d in descs]
    dt = np.result_type(*weak_values)
    shape = broadcast_operands((cond, x, y), "np.where")
    x, y = (_where_scalar(v, dt) for v in (x, y))
    args = [fit(as_node(cond, bool), shape), fit(as_node(x, dt), shape), fit(as_node(y, dt), shape)]
    return wrap(make_node("where", args, shape, dt, user_location()))


def _where_scalar(v, dt):
    """A Python number operand of np.where as NumPy converts it: unlike a ufunc's, it wraps
    into the result dtype (np.where(img > 1, img, 300) on uint8 puts 44) and only a value
    beyond 64 bits raises (NumPy's own OverflowError, at the user's line)."""
    if type(v) not in WEAK_TYPES:
        return v
    try:
        return np.where(True, v, np.zeros((), dt))[()]
    except OverflowError as e:
        raise OverflowError(f"{e} (at {user_location()})") from None


def clip(a, a_min=None, a_max=None, out=None, **kw):
    if out is not None:         # np.clip(b, lo, hi, out=b): the result stored into ``out``
        if not isinstance(out, Proxy):
            unsupported("np.clip(..., out=) into an array that is not traced")
        store_result(out, clip(a, a_min, a_max, **kw), "clip")
        return out
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    if kw:
        unsupported(f"np.clip keyword arguments {sorted(kw)}")
    if a_min is None and a_max is None:
        return asproxy(a)
    # a missing bound never wins: -inf/+inf (or the integer extremes) in its place
    x = asproxy(a)
    if x.dtype.kind == "c" or any(isinstance(b, complex) or _kind(b) == "c" for b in (a_min, a_max)):
        if a_min is None:           # NumPy's _clip: a missing bound is np.minimum/maximum
            return np.minimum(x, a_max)
        if a_max is None:
            return np.maximum(x, a_min)
    lo = a_min if a_min is not None else _extreme(x, a_max, low=True)
    hi = a_max if a_max is not None else _extreme(x, a_min, low=False)
    if x.dtype.kind in "iu":    # a Python int bound is compared by value, as NumPy's clip
        info = np.iinfo(x.dtype)    # does: past the dtype's range on its own side it clamps
        lo = max(lo, info.min) if type(lo) is int else lo       # nothing (np.clip(u8, -5,
        hi = min(hi, info.max) if type(hi) is int else hi       # 300)); on the other, raises
    return trace_ufunc(np._core.umath.clip, (x, lo, hi), {})


def _kind(x) -> str:
    return x.dtype.kind if isinstance(x, (Proxy, np.ndarray, np.generic)) else ""


def _complex_clip(x, lo, hi):
    """clip of complex values as NumPy's clip loop (clip.cpp): Min(Max(x, lo), hi), where
    Max(a, b) is a if a holds a NaN or a > b (real parts first; equal real parts: imaginary
    parts, with no NaN rule), else b; Min likewise with <."""
    def beyond(a, b, cmp):
        return where(np.equal(a.real, b.real), cmp(a.imag, b.imag), cmp(a.real, b.real))
    t = where(np.isnan(x) | beyond(x, lo, np.greater), x, lo)
    return where(np.isnan(t) | beyond(t, hi, np.less), t, hi)


def _extreme(x, other, low: bool):
    dt = np.result_type(x.dtype if not x.weak else x.dtype.type(0),
                        other.dtype if isinstance(other, (Proxy, np.ndarray, np.generic)) else other)
    if dt.kind == "f":
        return dt.type(-np.inf if low else np.inf)
    if dt.kind == "b":
        return np.bool_(not low)
    info = np.iinfo(dt)
    return dt.type(info.min if low else info.max)


def round_(a, decimals=0, out=None):
    """np.round / np.around / ndarray.round as NumPy computes them: rint (halves to even) of
    ``a * 10**decimals``, divided back (``a / 10**-decimals`` and multiplied back when
    decimals < 0), in a's own float dtype; integers with decimals >= 0 are themselves."""
    a = asproxy(a)
    if out is not None or not isinstance(decimals, int) or a.dtype.kind not in "fiub" or (
            a.dtype.kind != "f" and decimals < 0):
        unsupported("np.round of complex values, into out=, with negative decimals of "
                    "integers or with traced decimals")
    if a.dtype.kind != "f":
        return copy_of(a)
    if decimals == 0:
        return np.rint(a)
    f = 10.0 ** abs(decimals)
    return np.rint(a * f) / f if decimals > 0 else np.rint(a / f) * f
