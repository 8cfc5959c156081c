"""The ndarray interface of a traced array: operators, methods, properties and NumPy's
``__array_ufunc__`` / ``__array_function__`` protocols.

In: the ``Proxy`` class (``proxy.py``) and the modules that trace each kind of operation.
Out: the same class, now answering as an ``ndarray`` does: ``x + y``, ``x[i] = v``,
``x.sum(axis=0)``, ``np.exp(x)``, ``np.where(c, x, y)`` each call the tracing function of
their kind. This module sits above every one of them, so none imports it back; importing it
(``trace.py`` does) installs the interface.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataDependentError, UnsupportedError, called_by_user, user_location
from . import (complexes, composed, concat, counts, differences, einsum, nanfunctions, padding,
               sorting, statistics, windows)
from .creation import empty_like, full_like, ones_like, zeros_like
from .elementwise import (OPERATOR, clip, isclose, loop_dtypes, round_, select, trace_ufunc,
                          where)
from .externs import extern_call
from .indexing import diagonal, flip, getitem, setitem, take
from .puts import copyto, fill_diagonal, put, ufunc_at
from .linalg import dot, matmul, norm, outer, trace_, tril, triu
from ..ir.graph import make_node
from .proxy import (Proxy, asproxy, cast, cast_node, copy_of, descriptor, laid_out, store_result, unsupported,
                    wrap)
from . import pyflags
from .printing import placeholder
from .pyints import bitwise_symbol, checked_int, int_operands
from .raises import error_check
from .segments import reduceat
from .selection import is_selection, lift
from .reductions import (all_, allclose, amax, array_equal, amin, any_, argmax, argmin, cumprod, cumsum,
                         mean, prod, std, sum_, trace_ufunc_accumulate, trace_ufunc_reduce, var)
from .views import (broadcast_arrays, broadcast_to, expand_dims, moveaxis, ravel, reshape,
                    rot90, squeeze, swapaxes, transpose)

# --------------------------------------------------------------------------- protocols


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if method == "__call__" and ufunc is np.matmul:
        return matmul(*inputs, **kwargs)
    if method == "__call__" and ufunc is np.power:
        return _by_scalar(_integer_power(trace_ufunc(ufunc, inputs, dict(kwargs)), inputs,
                                         kwargs))
    if method == "__call__":
        return trace_ufunc(ufunc, inputs, kwargs)
    if method == "reduce":
        return trace_ufunc_reduce(ufunc, inputs, kwargs)
    if method == "accumulate":
        return trace_ufunc_accumulate(ufunc, inputs, kwargs)
    if method == "at":
        return ufunc_at(ufunc, *inputs)
    if method == "reduceat":
        return reduceat(ufunc, inputs, kwargs)
    if method == "outer" and len(inputs) == 2:     # a[..., None, None] op b
        a, b = asproxy(inputs[0]), asproxy(inputs[1])
        return trace_ufunc(ufunc, (reshape(a, a.shape + (1,) * b.ndim), b), kwargs)
    raise UnsupportedError(f"np.{ufunc.__name__}.{method} is not supported yet "
                           f"(at {user_location()})")


def _by_scalar(result):
    """np.power of an array of floats by one exponent known only when the program runs (a
    0-d value): the op power_by_scalar, NumPy's loop for a scalar exponent (square, sqrt and
    reciprocal for 2, 0.5 and -1, exact; pow's result is within an ulp of them). A NumPy
    scalar's power (``x[i] ** e``) is the C library's pow for every exponent: not this. (A
    selection, ``z[m] ** 3``, is kept lazy: its whole array's power was traced so.)"""
    if is_selection(result):
        return result
    n = getattr(result, "node", None)
    if n is None or n.op != "power" or not n.shape or n.dtype not in _FLOATS or \
            n.inputs[1].shape or _constant(n.inputs[1]):
        return result           # (a constant exponent: ccg::powc, backend/cexpr.py)
    return wrap(make_node("power_by_scalar", n.inputs, n.shape, n.dtype, n.where))


def _constant(node) -> bool:
    while node.op == "cast":
        node = node.inputs[0]
    return node.op in ("const", "constant")


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _integer_power(result, inputs, kwargs):
    """``result`` of np.power behind NumPy's check of an integer loop: a negative exponent
    raises ValueError where an element meets it (an empty result raises nothing). Python
    ints' own power is pyints.py's (a float)."""
    if result.weak or len(inputs) != 2:
        return result
    dts = loop_dtypes(np.power, inputs, kwargs.get("dtype"))
    exp = inputs[1]
    if dts[-1].kind not in "biu" or dts[1].kind != "i" or \
            not isinstance(exp, Proxy) and np.all(np.asarray(exp) >= 0):
        return result
    e = asproxy(exp)
    shape = result.shape
    if e.shape == () and all(type(d) is int and d > 0 for d in shape):
        ok = np.greater_equal(e, 0)
    else:
        ok = np.all(np.greater_equal(broadcast_to(e, shape), 0))
    error = (ValueError, ("Integers to negative integer powers are not allowed.",))
    checked = error_check(result, ok, error, user_location())
    return result if "out" in kwargs else wrap(checked.node, scalar=result.scalar)


def _array_function(self, func, types, args, kwargs):
    handler = FUNCTIONS.get(func)
    if handler is None:
        return extern_call(func, args, kwargs)
    return handler(*args, **kwargs)


Proxy.__array_ufunc__ = _array_ufunc
Proxy.__array_function__ = _array_function
Proxy.__getitem__ = getitem
Proxy.__setitem__ = setitem

# --------------------------------------------------------------------------- operators


def _binop(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def _inplace(ufunc):
    """``x op= y``: NumPy writes into x, which may be an argument, a view or a fresh array."""
    def op(self, other):
        if self.weak or self.scalar:    # a Python or NumPy scalar: `s += 1` rebinds `s`
            return ufunc(self, other)
        result = ufunc(self, other)
        if is_selection(self) and is_selection(result) and self.same_mask(result):
            if not np.can_cast(result.dtype, self.dtype, "same_kind"):
                store_result(self, result, ufunc.__name__)      # (raises NumPy's TypeError)
            self.base = cast(result.base, self.dtype)   # x[m] *= 2: a copy's values, lazy
            return self
        store_result(self, result, ufunc.__name__)
        return self
    return op


# Python operator name -> ufunc, for x op y, y op x and x op= y
BINARY_OPERATORS = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "truediv": np.true_divide, "floordiv": np.floor_divide, "mod": np.remainder,
                    "pow": np.power, "and": np.bitwise_and, "or": np.bitwise_or,
                    "xor": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift}
for _name, _uf in BINARY_OPERATORS.items():
    setattr(Proxy, f"__{_name}__", _binop(_uf))
    setattr(Proxy, f"__r{_name}__", _binop(_uf, reflected=True))
    setattr(Proxy, f"__i{_name}__", _inplace(_uf))
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(Proxy, f"__{_name}__", _binop(_uf))


def _hash(self):
    """A traced value as a set member or dict key (``seen.add(int(v))``, ``counts[k]``): an
    array is unhashable, as in NumPy; a scalar's hash is its value, which the trace does not
    have (each traced value would be a key of its own: wrong counts), so it is refused."""
    if self.node.shape:
        raise TypeError("unhashable type: 'numpy.ndarray'")
    raise DataDependentError(
        f"a traced value used as a set member or dict key at {user_location()}: its hash is "
        "its value, known only when the program runs; use an array indexed by the value "
        "instead (a lookup table as np.array, np.bincount or np.unique to count)")


Proxy.__hash__ = _hash


def _format(self, spec):
    """``f"{x.sum():.2f}"``: the text of a value the trace does not have, a placeholder that
    print() turns into the digits when the program runs (printing.py)."""
    if not called_by_user():                    # (cppcodegen's own messages)
        return format(_plain_repr(self), spec)
    if spec and self.node.shape:
        raise TypeError("unsupported format string passed to numpy.ndarray.__format__")
    return placeholder(self, spec)


Proxy.__format__ = _format
_plain_repr = Proxy.__repr__


def _text(conversion):
    def text(self):
        """``repr(x)`` / ``str(x)`` in the user's code (``f"{x!r}"``, ``str(x.sum())``):
        a placeholder, as ``format``; elsewhere (messages) the proxy's description."""
        if not self.node.shape and called_by_user():
            return placeholder(self, "", conversion)
        return _plain_repr(self)
    return text


Proxy.__repr__, Proxy.__str__ = _text("r"), _text("s")


def _scalar_like(x) -> bool:
    """A value NumPy's scalar math computes with (a NumPy or Python scalar), not an array."""
    if isinstance(x, Proxy):
        return bool(x.weak or x.scalar) and not is_selection(x) and not x.node.shape
    return isinstance(x, (int, float, complex, np.generic))


def _product(a, b):
    """``a * b``. Of two complex scalars NumPy's scalar math (and Python) multiplies naively
    (two roundings per part), its array loop with one fused rounding: ``s += x[i] * w`` in a
    loop is then Python's value bit for bit."""
    r = np.multiply(a, b)
    if isinstance(r, Proxy) and r.dtype.kind == "c" and _scalar_like(a) and \
            _scalar_like(b) and r.node.op == "multiply":     # (not .node of a lazy z[m] * w)
        n = r.node
        return pyflags.keep(wrap(make_node("mul_naive", n.inputs, n.shape, n.dtype, n.where),
                                 r.weak, r.scalar), r)
    return r


def _quotient(a, b):
    """``a / b``. Of two Python numbers one complex, Python's quotient (``_Py_c_quot``: tops
    and bottom divided by the larger part of ``b``), not NumPy's, which multiplies by a
    reciprocal: a hand DFT's ``-2j * np.pi * k * n / N`` is then Python's bit for bit."""
    r = np.true_divide(a, b)
    if isinstance(r, Proxy) and r.dtype == np.complex128 and r.node.op == "divide" and all(
            isinstance(v, (int, float, complex)) or isinstance(v, Proxy) and v.weak and
            not v.node.shape for v in (a, b)):
        n = r.node
        return pyflags.keep(wrap(make_node("div_py", n.inputs, n.shape, n.dtype, n.where),
                                 r.weak, r.scalar), r)
    return r


_itruediv_array = Proxy.__itruediv__
Proxy.__truediv__ = lambda self, other: _quotient(self, other)
Proxy.__rtruediv__ = lambda self, other: _quotient(other, self)
Proxy.__itruediv__ = lambda self, other: (_quotient(self, other) if self.weak or self.scalar
                                          else _itruediv_array(self, other))

_imul_array = Proxy.__imul__
Proxy.__mul__ = lambda self, other: _product(self, other)
Proxy.__rmul__ = lambda self, other: _product(other, self)
Proxy.__imul__ = lambda self, other: (_product(self, other) if self.weak or self.scalar
                                      else _imul_array(self, other))


def _abs(self):
    """abs(): of a complex scalar, NumPy's scalar math (and Python) take glibc's cabs, i.e.
    hypot; np.absolute of arrays runs NumPy's own SIMD algorithm (they differ by an ULP)."""
    if self.dtype.kind == "c" and _scalar_like(self):
        r = np.hypot(complexes.real(self), complexes.imag(self))
        r.pyflag = self.pyflag          # (of a Python complex: a Python float)
        return r
    return np.absolute(self)


def _pow(self, other):
    """``self ** other``, with the flag of a value that is a Python number on some paths only
    (``res ** 0.5`` of a carried ``res = 0.0``: a Python float there, frontend/pyflags.py)."""
    out = _power(self, other)
    return pyflags.pass_on(out, (self, other), user_location(), "power") \
        if self.pyflag is not None else out


def _power(self, other):
    if self.weak and self.dtype.kind == "c" and not self.node.shape and type(other) is int \
            and -100 < other < 0:       # Python's w ** -n: 1 / w ** n, its own quotient
        return _quotient(1.0 + 0j, _power(self, -other))
    if self.weak and self.dtype.kind in "biu" and not self.node.shape and \
            type(other) is int and other < 0:       # a Python int's n ** -k: a float
        self = wrap(cast_node(self.node, np.dtype(np.float64)), weak=True, scalar=self.scalar)
    if self.dtype.kind == "c" and not (self.weak or self.scalar):   # NumPy 2.4's array
        # fast_scalar_power (scalars: npy_cpow, i.e. np.power): only a
        if type(other) is int and other in (2, -1):     # Python int 2 / -1, a Python float 0.5
            return np.square(self) if other == 2 else np.reciprocal(self)
        if type(other) is float and other == 0.5:       # (square and power(z, 2) round
            return np.sqrt(self)                        # differently for complex z)
        return np.power(self, other)
    if self.scalar and not self.weak and self.dtype.kind == "f" and type(other) is float \
            and other == 0.5:   # a NumPy scalar's ** is C's pow: +0.0 of -0.0, inf of -inf
        return np.where(np.isinf(self), np.abs(self), np.sqrt(self) + 0.0)[()]
    # ndarray.__pow__'s fast paths for scalar exponents
    # (only where the fast path keeps power's result dtype: int ** 2.0 is float64)
    if type(other) in (int, float) and not self.weak and self.dtype.kind in "biuf":
        try:
            same = np.power.resolve_dtypes((self.dtype, type(other), None))[-1] == self.dtype
        except TypeError:
            same = False
        if same and other == 2:
            return np.square(self)
        if same and self.dtype.kind == "f" and other == 0.5:
            return np.sqrt(self)
        if same and self.dtype.kind == "f" and other == -1:
            return np.reciprocal(self)
    return np.power(self, other)


Proxy.__pow__ = _pow
Proxy.__neg__ = lambda self: np.negative(self)
Proxy.__pos__ = lambda self: np.positive(self)
Proxy.__abs__ = _abs


def _python_round(x, ndigits):
    """round() of a Python float with ``ndigits``: Python's (its decimal value rounded half
    to even: 2.675 is 2.67499999..., so 2.67; NumPy's multiply-and-rint gives 2.68), a Python
    float; OverflowError where the rounded value leaves the doubles, as Python."""
    n = asproxy(ndigits)
    if n.dtype.kind not in "biu":
        raise TypeError(f"'{type(ndigits).__name__}' object cannot be interpreted as an "
                        f"integer (at {user_location()})")
    r = wrap(make_node("python_round", (x.node, cast_node(n.node, np.dtype(np.int64))), (),
                       np.dtype(np.float64), user_location()), weak=True, scalar=True)
    ok = np.logical_or(np.isfinite(r), np.logical_not(np.isfinite(x)))
    error = (OverflowError, (f"rounded value too large to represent (at {user_location()})",))
    return wrap(error_check(r, ok, error, user_location(), stop=False).node, weak=True,
                scalar=True)


def _round(self, ndigits=None):
    """Python's round() of a NumPy scalar: a Python int (halves to even), or with ndigits
    NumPy's round as a NumPy scalar; an array has no __round__."""
    if not (self.scalar or self.weak) or self.node.shape:
        raise TypeError("type numpy.ndarray doesn't define __round__ method")
    if ndigits is not None and self.weak and self.dtype.kind == "f":
        return _python_round(self, ndigits)
    if ndigits is not None and self.pyflag is not None and self.dtype.kind == "f":
        # a Python float on some paths only: Python's round there, NumPy's elsewhere
        python = _python_round(wrap(self.node, weak=True, scalar=True), ndigits)
        out = np.where(self.pyflag, python, round_(self, ndigits))[()]
        out.scalar, out.pyflag = True, self.pyflag
        return out
    if ndigits is not None:
        r = round_(self, ndigits)
        r.scalar = True
        return r
    from .pyints import int_of_float    # (NaN, infinity: Python's errors, as int())
    whole = int_of_float(np.rint(self)) if self.dtype.kind == "f" else self
    return wrap(cast_node(whole.node, np.dtype(np.int64)), weak=True, scalar=True)


Proxy.__round__ = _round
Proxy.__invert__ = lambda self: np.invert(self)
Proxy.__divmod__ = lambda self, other: np.divmod(self, other)
Proxy.__rdivmod__ = lambda self, other: np.divmod(other, self)
Proxy.__matmul__ = lambda self, other: matmul(self, other)
Proxy.__rmatmul__ = lambda self, other: matmul(other, self)



def _operator(fn, name):
    """A Python operator: of Python scalars (weak) its result is a Python scalar, where an
    explicit np.<ufunc> call gives a NumPy scalar (``elementwise.OPERATOR``); a Python int's
    sums and products are checked for overflow (``pyints.py``)."""
    symbol = bitwise_symbol(name)

    def op(*args):
        if symbol is not None:          # (c << 1 of a float that may be a Python int)
            args = int_operands(symbol, args)
        OPERATOR[0] = True
        try:
            result = fn(*args)
        finally:
            OPERATOR[0] = False
        return checked_int(name, args, result)
    return op


for _name in [f"__{p}{n}__" for n in BINARY_OPERATORS for p in ("", "r", "i")] + [
        "__neg__", "__pos__", "__abs__", "__invert__", "__divmod__", "__rdivmod__",
        "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]:
    setattr(Proxy, _name, _operator(getattr(Proxy, _name), _name))

# --------------------------------------------------------------------------- methods


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if is_selection(self):              # x[m].astype(t): the selection of the cast
        return lift(lambda xs: cast(xs[0], np.dtype(dtype)), [self])
    if np.dtype(dtype) == self.dtype:       # NumPy copies: a later update of self
        return copy_of(self) if copy else laid_out(self, order)  # must not show in it
    return cast(self, np.dtype(dtype))


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return reshape(self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return transpose(self, axes or None)


Proxy.T = property(lambda self: transpose(self))
Proxy.mT = property(lambda self: swapaxes(self, -1, -2))
Proxy.astype = _astype
Proxy.reshape = _reshape
Proxy.transpose = _transpose
Proxy.dot = lambda self, other: dot(self, other)
Proxy.diagonal = lambda self, offset=0, axis1=0, axis2=1: diagonal(self, offset, axis1, axis2)
Proxy.trace = lambda self, offset=0, axis1=0, axis2=1, dtype=None, out=None: trace_(
    self, offset, axis1, axis2, dtype, out)
Proxy.swapaxes = lambda self, a, b: swapaxes(self, a, b)
Proxy.ravel = lambda self, order="C": reshape(self, (-1,), order=order)
Proxy.flatten = lambda self, order="C": reshape(copy_of(self), (-1,), order=order)   # (a copy)
Proxy.take = lambda self, indices, axis=None, out=None, mode="raise": take(
    self, indices, axis, out, mode)
Proxy.squeeze = lambda self, axis=None: squeeze(self, axis)
Proxy.put = lambda self, indices, values, mode="raise": put(self, indices, values, mode)
Proxy.copy = lambda self, order="C": copy_of(self)
Proxy.view = lambda self, dtype=None: self if dtype is None else unsupported("ndarray.view(dtype)")
Proxy.clip = lambda self, min=None, max=None, **kw: clip(self, min, max, **kw)
Proxy.round = lambda self, decimals=0, out=None: round_(self, decimals, out)
Proxy.searchsorted = lambda self, v, side="left", sorter=None: counts.searchsorted(
    self, v, side, sorter)
Proxy.fill = lambda self, value: setitem(self, Ellipsis, value)       # (in place, as NumPy's)
Proxy.sort = lambda self, axis=-1, kind=None, order=None: setitem(
    self, Ellipsis, sorting.sort(self, axis, kind, order))
Proxy.argsort = lambda self, axis=-1, kind=None, order=None, **kw: sorting.argsort(
    self, axis, kind, order, **kw)
for _name, _fn in {"sum": sum_, "prod": prod, "mean": mean, "var": var, "std": std,
                   "max": amax, "min": amin, "argmax": argmax, "argmin": argmin, "any": any_,
                   "all": all_, "cumsum": cumsum, "cumprod": cumprod}.items():
    setattr(Proxy, _name, lambda self, *a, _fn=_fn, **kw: _fn(self, *a, **kw))

# methods that are the NumPy function of the same name (its handler, or a NumPy call)
for _name in ("nonzero", "repeat", "compress", "argpartition"):
    if not hasattr(Proxy, _name) and hasattr(np.ndarray, _name):
        setattr(Proxy, _name, lambda self, *a, _f=getattr(np, _name), **kw: _f(self, *a, **kw))


def _missing(self, name):
    """An ndarray attribute the tracer lacks: an unsupported construct (with the fallback on,
    the function runs as Python), not an AttributeError from inside the compiler."""
    if not name.startswith("_") and hasattr(np.ndarray, name):
        unsupported(f"ndarray.{name}")
    raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")


Proxy.__getattr__ = _missing

# --------------------------------------------------------------------------- NumPy functions


def _shape_of(a):
    return asproxy(a).shape


def _ndim_of(a):
    return asproxy(a).ndim


def _size_of(a, axis=None):
    a = asproxy(a)
    return a.size if axis is None else a.shape[axis]


def _as_array(a, dtype=None, order=None, **kw):
    return laid_out(asproxy(a), order) if dtype is None else cast(a, dtype)


def _array(a, dtype=None, copy=True, **kw):
    if dtype is not None:
        return cast(a, dtype)
    return copy_of(asproxy(a), scalar=False) if copy else asproxy(a)


FUNCTIONS = {
    np.sum: sum_, np.prod: prod, np.max: amax, np.amax: amax, np.min: amin, np.amin: amin,
    np.any: any_, np.all: all_, np.argmax: argmax, np.argmin: argmin, np.mean: mean,
    np.cumsum: cumsum, np.cumprod: cumprod,
    np.flip: flip, np.fliplr: lambda m: flip(m, 1), np.flipud: lambda m: flip(m, 0),
    np.diagonal: diagonal, np.trace: trace_, np.tril: tril, np.triu: triu,
    np.var: var, np.std: std, np.matmul: matmul, np.dot: dot, np.outer: outer, np.linalg.norm: norm, np.where: where, np.clip: clip,
    np.round: round_, np.around: round_,
    np.isclose: isclose, np.allclose: allclose, np.array_equal: array_equal, np.select: select, np.reshape: reshape,
    np.transpose: transpose, np.swapaxes: swapaxes, np.moveaxis: moveaxis, np.rot90: rot90,
    np.broadcast_to: broadcast_to, np.broadcast_arrays: broadcast_arrays,
    np.expand_dims: expand_dims, np.squeeze: squeeze, np.ravel: ravel, np.take: take,
    np.put: put, np.fill_diagonal: fill_diagonal, np.copyto: copyto,
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.empty_like: empty_like, np.shape: _shape_of, np.ndim: _ndim_of, np.size: _size_of,
    np.copy: lambda a, *args, **kw: copy_of(asproxy(a), scalar=False),
    np.asarray: _as_array, np.ascontiguousarray: _as_array, np.array: _array,
    **complexes.FUNCTIONS, **composed.FUNCTIONS, **concat.FUNCTIONS, **counts.FUNCTIONS, **differences.FUNCTIONS,
    **einsum.FUNCTIONS, **nanfunctions.FUNCTIONS, **sorting.FUNCTIONS, **statistics.FUNCTIONS,
    **padding.FUNCTIONS, **windows.FUNCTIONS,
    np.result_type: lambda *args: np.result_type(*[descriptor(a) if isinstance(a, Proxy) else a
                                                   for a in args]),
}
"""NumPy function -> its tracing function, for ``__array_function__`` (any other function
runs as NumPy's own call between kernels: ``externs.extern_call``)."""
