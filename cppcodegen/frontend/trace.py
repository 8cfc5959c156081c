"""Tracing: run the user's NumPy function on proxy arrays and record a Graph.

In: a Python function and a call's arguments (already classified by ``signature.py``).
Out: a ``graph.Graph``. Proxies implement NumPy's ``__array_ufunc__`` and
``__array_function__`` protocols, the operators, methods and properties of ``ndarray``,
and basic indexing. dtype rules are NumPy's own (``ufunc.resolve_dtypes`` and
``np.result_type`` with weak Python scalars, NEP 50), so promotion matches by construction.
"""
from __future__ import annotations

import contextlib
import hashlib
import sys
import threading
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..ir import ufuncs
from ..errors import DataDependentError, TraceError, UnsupportedError, user_location
from ..ir.graph import Graph, Node, flatten_tree, make_node, map_tree, toposort
from . import effects, replace


class ConstArray:
    """A constant array captured during tracing; hashed by content, passed to kernels."""

    def __init__(self, array: np.ndarray):
        self.array = np.array(array, order="C", copy=True)
        self.array.flags.writeable = False
        h = hashlib.sha256(self.array.tobytes())
        h.update(f"{self.array.dtype}{self.array.shape}".encode())
        self.key = h.hexdigest()[:16]

    def __repr__(self):
        return f"array#{self.key}"

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, ConstArray) and other.key == self.key


# --------------------------------------------------------------------------- proxies

class Proxy:
    """A traced array. ``weak`` marks a runtime Python scalar (NEP 50 weak promotion);
    ``scalar`` a NumPy scalar (what NumPy returns for a 0-d ufunc or reduction result and for
    ``x[i, j]`` of every axis): a value, not a view, and ``s op= y`` makes a new one."""

    __array_priority__ = 1000

    def __init__(self, node: Node, weak: bool = False):
        self._node = node
        self.weak = weak
        self.scalar = False
        self.arg = None         # an argument of the traced function: its index
        self.version = 0        # bumped by every in-place update
        self._base = None       # a view: (the array it views, that array's node then, the
                                # view nodes leading from that node to this one)

    @property
    def node(self) -> Node:
        if self._base is not None:      # the viewed array was updated in place since: NumPy
            base, seen, chain = self._base      # shows the new values through the view
            current = base.node
            if current is not seen:
                self._node = _replay(chain, current)
                self._base = (base, current, chain)
        return self._node

    @node.setter
    def node(self, value: Node):
        self._node = value

    # --- properties
    shape = property(lambda self: _user_shape(self.node.shape))
    dtype = property(lambda self: self.node.dtype)
    ndim = property(lambda self: self.node.ndim)
    size = property(lambda self: _user_dim(self.node.size))
    itemsize = property(lambda self: self.node.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.node.dtype.itemsize)
    T = property(lambda self: transpose(self))
    mT = property(lambda self: swapaxes(self, -1, -2))
    real = property(lambda self: self)

    def __len__(self):
        if not self.shape:
            raise TypeError(f"len() of unsized object (0-d traced array) at {user_location()}")
        return _as_int(self.shape[0])

    def __repr__(self):
        return f"<traced array shape={self.shape} dtype={self.dtype}>"

    # --- protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and ufunc is np.matmul:
            return matmul(*inputs, **kwargs)
        if method == "__call__":
            return trace_ufunc(ufunc, inputs, kwargs)
        if method == "reduce":
            return trace_ufunc_reduce(ufunc, inputs, kwargs)
        if method == "accumulate":
            return trace_ufunc_accumulate(ufunc, inputs, kwargs)
        if method == "at":
            return ufunc_at(ufunc, *inputs)
        if method == "outer" and len(inputs) == 2:     # a[..., None, None] op b
            a, b = asproxy(inputs[0]), asproxy(inputs[1])
            return trace_ufunc(ufunc, (reshape(a, a.shape + (1,) * b.ndim), b), kwargs)
        raise UnsupportedError(f"np.{ufunc.__name__}.{method} is not supported yet "
                               f"(at {user_location()})")

    def __array_function__(self, func, types, args, kwargs):
        handler = FUNCTIONS.get(func)
        if handler is None:
            return extern_call(func, args, kwargs)
        return handler(*args, **kwargs)

    def __array__(self, dtype=None, copy=None):
        raise DataDependentError(
            f"a traced array was converted to a concrete NumPy array at {user_location()}; "
            "the value of an array is not known while the function is compiled. "
            "Use NumPy functions on the array instead of np.asarray / list conversions.")

    # --- value-dependent Python: refused with a clear message
    def _data_dependent(self, what):
        raise DataDependentError(
            f"{what} of a traced array at {user_location()}: Python control flow that depends "
            "on array values (data-dependent) cannot be compiled; use np.where(...) "
            "or move the branch outside the compiled function.")

    def __bool__(self):
        self._data_dependent("bool()")

    def __float__(self):
        self._data_dependent("float()")

    def __int__(self):
        self._data_dependent("int()")

    def __index__(self):
        self._data_dependent("using as an index/int the value")

    def __complex__(self):
        self._data_dependent("complex()")

    def item(self, *a):
        self._data_dependent(".item()")

    def tolist(self):
        self._data_dependent(".tolist()")

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index):
        return getitem(self, index)

    def __setitem__(self, index, value):
        setitem(self, index, value)

    # --- methods
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if np.dtype(dtype) == self.dtype:       # NumPy copies: a later update of self
            return _copy(self) if copy else self    # must not show in the result
        return cast(self, np.dtype(dtype))

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return reshape(self, shape, order=order)

    diagonal = lambda self, offset=0, axis1=0, axis2=1: diagonal(self, offset, axis1, axis2)
    trace = lambda self, offset=0, axis1=0, axis2=1, dtype=None, out=None: trace_(
        self, offset, axis1, axis2, dtype, out)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return transpose(self, axes or None)

    swapaxes = lambda self, a, b: swapaxes(self, a, b)
    ravel = lambda self, order="C": reshape(self, (-1,), order=order)
    take = lambda self, indices, axis=None, out=None, mode="raise": take(self, indices, axis, out, mode)
    flatten = lambda self, order="C": reshape(self, (-1,), order=order)
    squeeze = lambda self, axis=None: squeeze(self, axis)
    copy = lambda self, order="C": _copy(self)
    view = lambda self, dtype=None: self if dtype is None else _unsupported("ndarray.view(dtype)")
    clip = lambda self, min=None, max=None, **kw: clip(self, min, max, **kw)
    sum = lambda self, *a, **kw: sum_(self, *a, **kw)
    prod = lambda self, *a, **kw: prod(self, *a, **kw)
    mean = lambda self, *a, **kw: mean(self, *a, **kw)
    var = lambda self, *a, **kw: var(self, *a, **kw)
    std = lambda self, *a, **kw: std(self, *a, **kw)
    max = lambda self, *a, **kw: amax(self, *a, **kw)
    min = lambda self, *a, **kw: amin(self, *a, **kw)
    argmax = lambda self, *a, **kw: argmax(self, *a, **kw)
    argmin = lambda self, *a, **kw: argmin(self, *a, **kw)
    any = lambda self, *a, **kw: any_(self, *a, **kw)
    all = lambda self, *a, **kw: all_(self, *a, **kw)
    cumsum = lambda self, *a, **kw: cumsum(self, *a, **kw)
    cumprod = lambda self, *a, **kw: cumprod(self, *a, **kw)


def _binop(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


# Python operator name -> ufunc, for x op y, y op x and x op= y
BINARY_OPERATORS = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "truediv": np.true_divide, "floordiv": np.floor_divide, "mod": np.remainder,
                    "pow": np.power, "and": np.bitwise_and, "or": np.bitwise_or,
                    "xor": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift}
for _name, _uf in BINARY_OPERATORS.items():
    setattr(Proxy, f"__{_name}__", _binop(_uf))
    setattr(Proxy, f"__r{_name}__", _binop(_uf, reflected=True))
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(Proxy, f"__{_name}__", _binop(_uf))
Proxy.__hash__ = object.__hash__


def _pow(self, other):
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
Proxy.__abs__ = lambda self: np.absolute(self)
Proxy.__invert__ = lambda self: np.invert(self)
Proxy.__divmod__ = lambda self, other: np.divmod(self, other)
Proxy.__matmul__ = lambda self, other: matmul(self, other)
Proxy.__rmatmul__ = lambda self, other: matmul(other, self)
Proxy.dot = lambda self, other: dot(self, other)


def _unsupported(what):
    raise UnsupportedError(f"{what} is not supported by cppcodegen yet (at {user_location()})")


# --------------------------------------------------------------------------- operands

WEAK_TYPES = (int, float)      # NEP 50: Python int and float are weak; bool is np.bool_


def _is_weak(x) -> bool:
    return type(x) in WEAK_TYPES or (isinstance(x, Proxy) and x.weak) or _is_dim(x)


def _descriptor(x):
    """What NumPy's promotion sees: a dtype, or a Python type for weak scalars."""
    if isinstance(x, Proxy):
        if x.weak and x.dtype.kind != "b":
            return {"i": int, "u": int, "f": float}[x.dtype.kind]
        return x.dtype
    if type(x) is bool:
        return np.dtype(bool)
    if type(x) in WEAK_TYPES:
        return type(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    if _is_dim(x):                  # a symbolic size (x.shape[0]) acts as a Python int
        return int
    if isinstance(x, complex):
        _unsupported("complex numbers")
    if x is None:
        raise TraceError(f"None used as an array operand at {user_location()}")
    raise TraceError(f"cannot use {type(x).__name__} as an array operand at {user_location()}")


def as_node(x, dtype=None) -> Node:
    """The node for an operand, cast to ``dtype`` when given."""
    where = user_location()
    if isinstance(x, Proxy):
        node = x.node
    elif type(x) in WEAK_TYPES or type(x) is bool:
        dt = np.dtype(dtype) if dtype is not None else np.result_type(x)
        try:
            value = np.array(x, dtype=dt)
        except OverflowError as e:
            raise OverflowError(f"{e} (at {where})") from None
        return make_node("const", (), (), dt, where, value=value.item())
    elif isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        node = make_node("const", (), (), x.dtype, where, value=np.asarray(x).item())
    elif isinstance(x, np.ndarray):
        node = constant_array(x, where)
    elif _is_dim(x):
        n = _size_operand(_shapes().canon(x))
        if isinstance(n, int):
            return as_node(n, dtype)
        node = n.node
    else:
        _descriptor(x)      # raises with a good message
        raise AssertionError
    if dtype is not None and node.dtype != np.dtype(dtype):
        node = cast_node(node, np.dtype(dtype))
    return node


def constant_array(x: np.ndarray, where: str) -> Node:
    if x.dtype.kind not in "biuf":
        _unsupported(f"arrays of dtype {x.dtype}")
    flat = x.reshape(-1)
    if x.size > 1 and x.size == np.count_nonzero(flat == flat[0]):
        scalar = make_node("const", (), (), x.dtype, where, value=flat[0].item())
        return broadcast_node(scalar, x.shape)
    return make_node("constant", (), x.shape, x.dtype, where, array=ConstArray(x))


def cast_node(node: Node, dtype: np.dtype) -> Node:
    if node.dtype == dtype:
        return node
    if node.op == "const":
        value = np.array(node.attr("value"), dtype=node.dtype).astype(dtype).item()
        return make_node("const", (), (), dtype, node.where, value=value)
    return make_node("cast", (node,), node.shape, dtype, user_location())


def _broadcasts_to(shape, target) -> bool:
    """Does an array of ``shape`` broadcast to ``target`` (without growing it)?"""
    try:
        full = _bshapes(shape, target)
    except ValueError:
        return False
    return len(full) == len(target) and all(_same_size(a, b) for a, b in zip(full, target))


def broadcast_node(node: Node, shape) -> Node:
    shape = _canon_shape(shape)
    if node.shape == shape:
        return node
    if not _broadcasts_to(node.shape, shape):
        raise ValueError(f"cannot broadcast shape {node.shape} to {shape} "
                         f"(at {user_location()})")
    node = _fit(node, shape)
    return make_node("broadcast_to", (node,), shape, node.dtype, user_location())


def wrap(node: Node, weak=False, scalar=False) -> Proxy:
    p = Proxy(node, weak)
    p.scalar = scalar
    return p


def _own(node: Node) -> Node:
    """``node``, or for an argument an identity view of it: a value of its own, so that a
    later update of the argument does not show in it (and the result is not the caller's
    array)."""
    if node.op == "input":
        return make_node("transpose", (node,), node.shape, node.dtype, user_location(),
                         perm=tuple(range(node.ndim)))
    return node


def _copy(a: Proxy, scalar=None) -> Proxy:
    """A copy: a new array with ``a``'s value now (a NumPy scalar's copy is a scalar unless
    ``scalar`` says otherwise: np.copy and np.array make 0-d arrays)."""
    return wrap(_own(a.node), a.weak, a.scalar if scalar is None else scalar)


def _view_of(base: Proxy, node: Node) -> Proxy:
    """A view of ``base`` (NumPy would alias the memory): it sees later in-place updates of
    ``base``, and writing into it writes into ``base``."""
    view = Proxy(node, base.weak)
    view._base = (base, base.node, _view_chain(base.node, node))
    return view


def _view_chain(base_node: Node, node: Node) -> tuple:
    """The view nodes (reshape, transpose, broadcast_to, slice) from ``base_node`` to ``node``."""
    chain = []
    while node is not base_node:
        chain.append(node)
        node = node.inputs[0]
    return tuple(reversed(chain))


def _replay(chain, node: Node) -> Node:
    for v in chain:
        node = make_node(v.op, (node,), v.shape, v.dtype, v.where, **dict(v.attrs))
    return node


def _unview(v: Node, below: Node, new: Node) -> Node:
    """The value of the array under view node ``v`` (now ``below``) once the view's elements
    are replaced by ``new``."""
    where = user_location()
    if v.op == "reshape":
        return make_node("reshape", (new,), below.shape, new.dtype, where)
    if v.op == "transpose":
        perm = v.attr("perm")
        inverse = tuple(sorted(range(len(perm)), key=lambda k: perm[k]))
        return make_node("transpose", (new,), below.shape, new.dtype, where, perm=inverse)
    if v.op == "slice":
        spec = tuple(("s",) + tuple(sp) for sp in v.attr("spec"))
        return make_node("setitem", (below, new), below.shape, below.dtype, where, spec=spec,
                         region=tuple(new.shape))
    raise ValueError(f"assignment destination is read-only: a broadcast view is written "
                     f"(at {user_location()})")


def _update(a: Proxy, node: Node):
    """``a`` now holds ``node`` (its shape and dtype): an in-place update. Through a view it
    updates the viewed array (and so every other view of it); on an argument the caller's
    array is written when the compiled function returns (see ``lower.Lowering.writebacks``)."""
    if a.weak:
        raise TypeError(f"cannot assign into a Python scalar (at {user_location()})")
    if a._base is not None:
        base, _, chain = a._base
        levels = [base.node]
        for v in chain:
            levels.append(_replay((v,), levels[-1]))
        new = node
        for k in reversed(range(len(chain))):
            new = _unview(chain[k], levels[k], new)
        _update(base, new)
        a._base = (base, base.node, chain)
    if effects.UPDATED:           # (a loop body or branch being traced records it)
        effects.note_update(a, a._node)
    a._node = node
    a.version += 1


def _inplace(ufunc):
    """``x op= y``: NumPy writes into x, which may be an argument, a view or a fresh array."""
    def op(self, other):
        if self.weak or self.scalar:    # a Python or NumPy scalar: `s += 1` rebinds `s`
            return ufunc(self, other)
        result = ufunc(self, other)
        _store_result(self, result, ufunc.__name__)
        return self
    return op


def _store_result(target: Proxy, result: Proxy, name: str):
    """``result`` written into ``target`` as a ufunc's ``out=`` (same_kind casting)."""
    if not np.can_cast(result.dtype, target.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc '{name}' output from {result.dtype!r} "
                        f"to {target.dtype!r} with casting rule 'same_kind' "
                        f"(at {user_location()})")
    if not _broadcasts_to(result.shape, target.shape):
        raise ValueError(f"non-broadcastable output operand with shape {target.shape} doesn't "
                         f"match the broadcast shape {result.shape} (at {user_location()})")
    _update(target, broadcast_node(cast_node(result.node, target.dtype), target.shape))


for _name, _uf in BINARY_OPERATORS.items():
    setattr(Proxy, f"__i{_name}__", _inplace(_uf))


# --------------------------------------------------------------------------- ufuncs

def _broadcast_shapes(operands, what):
    shapes = [x.node.shape if isinstance(x, Proxy) else x.shape
              if isinstance(x, (np.ndarray, np.generic)) else () for x in operands]
    try:
        return _bshapes(*shapes)
    except ValueError:
        raise ValueError(f"{what}: operands could not be broadcast together with shapes "
                         f"{' '.join(map(str, shapes))} (at {user_location()})") from None


def trace_ufunc(ufunc, inputs, kwargs):
    name = ufunc.__name__
    out = kwargs.pop("out", None)
    if out is not None:
        out = out if isinstance(out, tuple) else (out,)
        if len(out) != 1 or not isinstance(out[0], Proxy) or name == "divmod":
            _unsupported(f"np.{name}(..., out=...) with other than one traced array")
        result = trace_ufunc(ufunc, inputs, kwargs)
        _store_result(out[0], result, name)
        return out[0]
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("out", None)
    if kwargs.pop("casting", "same_kind") != "same_kind" or kwargs.pop("where", True) is not True:
        _unsupported(f"np.{name} with casting=/where=")
    if kwargs:
        _unsupported(f"np.{name} keyword arguments {sorted(kwargs)}")
    if name == "divmod":
        return (trace_ufunc(np.floor_divide, inputs, {}), trace_ufunc(np.remainder, inputs, {}))
    if name in COMPOSED:
        ops = _loop_operands(ufunc, inputs, dtype)
        half = ops[0].dtype == np.float16       # NumPy's half loops compute in float32
        r = COMPOSED[name](*[cast(x, np.float32) for x in ops] if half else ops)
        r = cast(r, np.float16) if half else r
        r.scalar = not r.shape
        return r
    if name not in ufuncs.TRACEABLE:
        _unsupported(f"np.{name}")
    name = ufuncs.ALIASES.get(name, name)
    dts = _loop_dtypes(ufunc, inputs, dtype)
    in_dts, out_dt = dts[:-1], dts[-1]
    if name in ufuncs.LOGICAL:      # logical ops work on truth values
        in_dts = (np.dtype(bool),) * len(inputs)
    if name in ufuncs.COMPARISONS and any(type(x) is int for x in inputs):
        in_dts = _widen_for_python_ints(inputs, in_dts)
    shape = _broadcast_shapes(inputs, f"np.{ufunc.__name__}")
    args = [_fit(as_node(x, dt), shape) for x, dt in zip(inputs, in_dts)]
    if name in ("floor", "ceil", "trunc") and out_dt.kind in "biu":
        return wrap(_own(broadcast_node(args[0], shape)), scalar=not shape)   # whole
    node = make_node(name, args, shape, out_dt, user_location())
    weak = all(_is_weak(x) for x in inputs)
    if weak and name in ufuncs.COMPARISONS:
        weak = False
    return wrap(node, weak, scalar=not weak and not shape)


def _loop_dtypes(ufunc, inputs, dtype) -> tuple:
    """The dtypes of the loop NumPy picks for ``inputs`` (NEP 50 promotion, ``dtype=``):
    the inputs', then the output's."""
    descs = tuple(_descriptor(x) for x in inputs)
    if all(isinstance(d, type) for d in descs):     # Python scalars only (a carried `i`):
        descs = tuple(np.dtype(d) for d in descs)   # Python's int/float/bool, as int64/float64
    try:
        if dtype is None:
            return ufunc.resolve_dtypes(descs + (None,))
        sig = (None,) * len(inputs) + (np.dtype(dtype),)
        return ufunc.resolve_dtypes(descs + (None,), signature=sig)
    except TypeError as e:
        raise TypeError(f"np.{ufunc.__name__}: {e} (at {user_location()})") from None


def _loop_operands(ufunc, inputs, dtype):
    """``inputs`` cast to the loop NumPy picks for them."""
    return [cast(asproxy(x), dt) for x, dt in zip(inputs, _loop_dtypes(ufunc, inputs, dtype)[:-1])]


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
        y = cast(asproxy(y), np.result_type(_descriptor(y), 1.0))
    elif isinstance(y, int):
        y = float(y)
    y = asproxy(y)
    result = ((np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y)) | (x == y))
    if equal_nan:
        result = result | (np.isnan(x) & np.isnan(y))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.allclose; a NumPy bool (NumPy returns a Python bool: a traced function cannot)."""
    return all_(isclose(a, b, rtol, atol, equal_nan))


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
    dt = np.result_type(*[v if type(v) in (int, float) else _descriptor(v)
                          if isinstance(v, Proxy) else np.asarray(v) for v in values])
    values = [cast(asproxy(v), dt) for v in values]
    shape = _broadcast_shapes(conds + values, "np.select")
    result = broadcast_to(values[-1], shape)
    for cond, choice in zip(conds[::-1], values[-2::-1]):
        result = where(cond, choice, result)
    return broadcast_to(result, shape)


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


def trace_ufunc_reduce(ufunc, inputs, kwargs):
    kinds = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
             "logical_and": "all", "logical_or": "any"}
    if ufunc.__name__ not in kinds:
        _unsupported(f"np.{ufunc.__name__}.reduce")
    (x,) = inputs
    axis = kwargs.pop("axis", 0)
    return _reduce_fn(kinds[ufunc.__name__])(x, axis=axis, **kwargs)


def trace_ufunc_accumulate(ufunc, inputs, kwargs):
    """np.add.accumulate / np.multiply.accumulate: the scans of cumsum / cumprod."""
    kind = {"add": "sum", "multiply": "prod"}.get(ufunc.__name__)
    (x,) = inputs
    axis, dtype, out = kwargs.pop("axis", 0), kwargs.pop("dtype", None), kwargs.pop("out", None)
    if kind is None or kwargs:
        _unsupported(f"np.{ufunc.__name__}.accumulate"
                     + (f" with {sorted(kwargs)}" if kwargs else ""))
    return _scan(asproxy(x), kind, axis, dtype, _out_operand(f"np.{ufunc.__name__}.accumulate", out))


# --------------------------------------------------------------------------- elementwise functions

def asproxy(x) -> Proxy:
    return x if isinstance(x, Proxy) else wrap(as_node(x), _is_weak(x))


def cast(x, dtype) -> Proxy:
    x = asproxy(x)
    return wrap(cast_node(x.node, np.dtype(dtype)), scalar=x.scalar)


def where(cond, x=None, y=None):
    if x is None and y is None:         # the indices of the true elements: np.nonzero
        return extern_call(np.nonzero, (cond,), {}, speculate=True)
    if x is None or y is None:
        raise ValueError(f"either both or neither of x and y should be given "
                         f"(at {user_location()})")
    descs = [_descriptor(v) for v in (x, y)]
    weak_values = [{bool: True, int: 0, float: 0.0}[d] if isinstance(d, type) else d for d in descs]
    dt = np.result_type(*weak_values)
    shape = _broadcast_shapes((cond, x, y), "np.where")
    args = [_fit(as_node(cond, bool), shape), _fit(as_node(x, dt), shape), _fit(as_node(y, dt), shape)]
    return wrap(make_node("where", args, shape, dt, user_location()))


def clip(a, a_min=None, a_max=None, out=None, **kw):
    if out is not None:
        _unsupported("np.clip(..., out=...)")
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    if kw:
        _unsupported(f"np.clip keyword arguments {sorted(kw)}")
    if a_min is None and a_max is None:
        return asproxy(a)
    # a missing bound never wins: -inf/+inf (or the integer extremes) in its place
    x = asproxy(a)
    lo = a_min if a_min is not None else _extreme(x, a_max, low=True)
    hi = a_max if a_max is not None else _extreme(x, a_min, low=False)
    return trace_ufunc(np._core.umath.clip, (x, lo, hi), {})


def _extreme(x, other, low: bool):
    dt = np.result_type(x.dtype if not x.weak else x.dtype.type(0),
                        other.dtype if isinstance(other, (Proxy, np.ndarray, np.generic)) else other)
    if dt.kind == "f":
        return dt.type(-np.inf if low else np.inf)
    if dt.kind == "b":
        return np.bool_(not low)
    info = np.iinfo(dt)
    return dt.type(info.min if low else info.max)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    a = asproxy(a)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    shp = a.shape if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    value = fill_value.node if isinstance(fill_value, Proxy) else None
    if value is not None:
        return wrap(broadcast_node(cast_node(value, dt), shp))
    scalar = make_node("const", (), (), dt, user_location(),
                       value=np.array(fill_value).astype(dt).item())
    return wrap(broadcast_node(scalar, shp))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None):
    return full_like(a, 0, dtype, shape=shape)


def ones_like(a, dtype=None, order="K", subok=True, shape=None):
    return full_like(a, 1, dtype, shape=shape)


# --------------------------------------------------------------------------- views

def reshape(a, shape, order="C", **kw):
    a = asproxy(a)
    if order != "C":
        _unsupported(f"reshape with order={order!r}")
    if _dynamic() and (_is_dim(shape) or not all(type(d) is int for d in a.node.shape)
                       or any(_is_dim(s) for s in shape)):
        single = _is_dim(shape) or isinstance(shape, (int, np.integer))
        return _reshape_symbolic(a, (shape,) if single else tuple(shape))
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension (at {user_location()})")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                             f"(at {user_location()})")
        shape = tuple(a.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != a.size or any(s < 0 for s in shape):
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                         f"(at {user_location()})")
    if shape == a.shape:
        return a
    return _view_of(a, make_node("reshape", (a.node,), shape, a.dtype, user_location()))


def transpose(a, axes=None):
    a = asproxy(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    axes = normalize_axis_tuple(tuple(axes), a.ndim)
    if len(axes) != a.ndim:
        raise ValueError(f"axes don't match array (at {user_location()})")
    if axes == tuple(range(a.ndim)):
        return a
    shape = tuple(a.shape[i] for i in axes)
    return _view_of(a, make_node("transpose", (a.node,), shape, a.dtype, user_location(), perm=axes))


def swapaxes(a, axis1, axis2):
    a = asproxy(a)
    i, j = normalize_axis_tuple((axis1, axis2), a.ndim, allow_duplicate=True)
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    a = asproxy(a)
    src = normalize_axis_tuple(source, a.ndim)
    dst = normalize_axis_tuple(destination, a.ndim)
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def broadcast_to(a, shape, subok=False):
    a = asproxy(a)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _view_of(a, broadcast_node(a.node, shape))


def broadcast_arrays(*args, subok=False):
    shape = _broadcast_shapes(args, "np.broadcast_arrays")
    return tuple(broadcast_to(a, shape) for a in args)


def expand_dims(a, axis):
    a = asproxy(a)
    axes = normalize_axis_tuple(axis, a.ndim + (len(axis) if isinstance(axis, tuple) else 1))
    shape = list(a.shape)
    for ax in sorted(axes):
        shape.insert(ax, 1)
    return reshape(a, shape)


def squeeze(a, axis=None):
    a = asproxy(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = normalize_axis_tuple(axis, a.ndim)
        for ax in axes:
            if a.shape[ax] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 f"equal to one (at {user_location()})")
    return reshape(a, [s for i, s in enumerate(a.shape) if i not in axes])


def ravel(a, order="C"):
    return reshape(a, (-1,), order=order)


def _basic_index(a: Proxy, index):
    """Normalize a basic index: per input dim (start, step, length) (an int index is
    (i, 1, 1) and listed in ``ints``), the result shape, the sliced shape."""
    if not isinstance(index, tuple):
        index = (index,)
    for ix in index:
        if isinstance(ix, (Proxy, np.ndarray, list)) or (ix is not None and not isinstance(
                ix, (int, np.integer, slice, type(Ellipsis))) and not _is_dim(ix)):
            _unsupported("advanced indexing (integer or boolean arrays as indices)")
    n_ell = sum(ix is Ellipsis for ix in index)
    if n_ell > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...') (at {user_location()})")
    n_real = sum(ix is not None and ix is not Ellipsis for ix in index)
    if n_real > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{n_real} were indexed (at {user_location()})")
    if n_ell == 0:
        index = index + (Ellipsis,)
    pos = index.index(Ellipsis)
    index = index[:pos] + (slice(None),) * (a.ndim - n_real) + index[pos + 1:]
    spec, out_shape, sliced_shape, ints, dim = [], [], [], [], 0
    for ix in index:
        if ix is None:
            out_shape.append(1)
            continue
        size = a.node.shape[dim]
        if not isinstance(size, int) or _is_dim(ix) or (isinstance(ix, slice) and any(
                _is_dim(b) for b in (ix.start, ix.stop))):     # a loop's index: symbolic
            spec.append(_symbolic_index(ix, size, dim))
            length = spec[-1][2]
            if isinstance(ix, slice):
                out_shape.append(length)
            else:
                ints.append(dim)
            sliced_shape.append(length)
            dim += 1
            continue
        if isinstance(ix, slice):
            start, stop, step = ix.indices(size)
            length = len(range(start, stop, step))
            spec.append((start if length else 0, step, length))
            out_shape.append(length)
            sliced_shape.append(length)
        else:
            i = int(ix)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size} "
                                 f"(at {user_location()})")
            spec.append((i % size, 1, 1))
            sliced_shape.append(1)
            ints.append(dim)
        dim += 1
    return spec, out_shape, sliced_shape, ints


def _is_advanced(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(ix, (Proxy, np.ndarray, list)) for ix in parts)


def getitem(a: Proxy, index):
    if _is_advanced(index):
        return advanced_getitem(a, index)
    spec, out_shape, sliced_shape, _ = _basic_index(a, index)
    node = a.node
    if any(s != (0, 1, n) for s, n in zip(spec, a.shape)):
        node = make_node("slice", (node,), sliced_shape, a.dtype, user_location(), spec=tuple(spec))
    parts = index if isinstance(index, tuple) else (index,)
    if not out_shape and not any(ix is Ellipsis for ix in parts):    # x[i, j]: a scalar,
        r = reshape(wrap(_own(node)), ())        # a copy of the element (not a view)
        r.scalar = True
        return r
    return reshape(_view_of(a, node), out_shape)


def advanced_getitem(a: Proxy, index):
    """``x[idx]``, ``x[i_arr, j_arr]``, ``x[:, idx]``, ``x[k]`` with a traced int ``k``: a
    gather, loaded inside the fused kernels (negative indices wrap, an out-of-range one raises
    NumPy's IndexError when the program returns). ``x[mask]`` (a data-dependent shape) and
    indices with np.newaxis are NumPy's own indexing between kernels (see
    ``extern_call(speculate=True)``)."""
    from ..runtime.extern import advanced_index
    parts = index if isinstance(index, tuple) else (index,)
    for ix in parts:
        if isinstance(ix, list):
            ix = np.asarray(ix)
        dt = ix.dtype if isinstance(ix, (Proxy, np.ndarray)) else None
        if dt is not None and dt.kind not in "biu":
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type "
                             f"(at {user_location()})")
    masked = any(isinstance(ix, (Proxy, np.ndarray)) and ix.dtype.kind == "b" or
                 isinstance(ix, list) and np.asarray(ix).dtype.kind == "b" for ix in parts)
    if not masked and not any(ix is None for ix in parts):
        return _gather(a, parts)
    key = tuple(asproxy(np.asarray(ix)) if isinstance(ix, (np.ndarray, list)) else ix
                for ix in parts)
    return extern_call(advanced_index, (a, key if isinstance(index, tuple) else key[0]), {},
                       speculate=masked)


GUARDS: list = []
"""Traced 0-d bools under which the values being traced are used: the later operands of
``a and b``/``a or b`` and the arms of ``x if c else y``, which Python would not evaluate
when the guard is False. A gather's index error counts only where its guard holds
(``while i < n and a[i] > t`` reads a[n] and discards it)."""


@contextlib.contextmanager
def guarded(cond):
    cond = asproxy(cond)
    if GUARDS:
        cond = np.logical_and(GUARDS[-1], cond)
    GUARDS.append(cond)
    try:
        yield
    finally:
        GUARDS.pop()


def _advanced(a: Proxy, parts):
    """NumPy's integer-array indexing, normalized: slices first (a view of ``a``), then the
    array (and int) indices, broadcast together; when they are not next to each other the
    broadcast axes come first, as in NumPy (the view is transposed so they are together).
    Returns (the view, the index nodes, the first indexed axis, the broadcast shape)."""
    dots = [k for k, ix in enumerate(parts) if ix is Ellipsis]
    if len(dots) > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...') (at {user_location()})")
    if dots:
        k = dots[0]
        parts = parts[:k] + (slice(None),) * (a.ndim - len(parts) + 1) + parts[k + 1:]
    if len(parts) > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{len(parts)} were indexed (at {user_location()})")
    parts = tuple(parts) + (slice(None),) * (a.ndim - len(parts))
    adv = [k for k, ix in enumerate(parts) if not isinstance(ix, slice)]
    b = a if all(ix == slice(None) for ix in parts if isinstance(ix, slice)) else \
        getitem(a, tuple(ix if isinstance(ix, slice) else slice(None) for ix in parts))
    nodes = []
    for k in adv:
        ix = parts[k]
        if isinstance(ix, (bool, np.bool_)):
            _unsupported("a bool among integer-array indices")
        node = as_node(np.asarray(ix) if isinstance(ix, list) else ix)
        if node.dtype.kind not in "iu":
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             f"(`None`) and integer or boolean arrays are valid indices "
                             f"(at {user_location()})")
        nodes.append(node)
    try:
        bshape = _bshapes(*[n.shape for n in nodes])
    except ValueError:
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {' '.join(str(tuple(n.shape)) for n in nodes)} "
                         f"(at {user_location()})") from None
    axis = adv[0]
    if adv != list(range(adv[0], adv[0] + len(adv))):      # apart: broadcast axes first
        rest = [k for k in range(a.ndim) if k not in adv]
        b, axis = transpose(b, adv + rest), 0
    return b, nodes, axis, tuple(bshape)


def _gather(a: Proxy, parts) -> Proxy:
    """``a[parts]`` with integer arrays: a ``gather`` node."""
    b, nodes, axis, bshape = _advanced(a, parts)
    shape = tuple(b.shape[:axis]) + bshape + tuple(b.shape[axis + len(nodes):])
    guard = (GUARDS[-1].node,) if GUARDS else ()
    out = wrap(make_node("gather", (b.node, *nodes, *guard), _canon_shape(shape), a.dtype,
                         user_location(), axis=axis, guarded=bool(guard)))
    out.scalar = not shape
    return out


def take(a, indices, axis=None, out=None, mode="raise"):
    """``np.take``: a gather (``mode='raise'``; other modes stay NumPy's own call)."""
    if out is not None or mode != "raise":
        return extern_call(np.take, (a, indices), {"axis": axis, "out": out, "mode": mode})
    a = asproxy(a)
    if axis is None:
        return _gather(ravel(a), (indices,))
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    return _gather(a, (slice(None),) * axis + (indices,))


def _scatter(a: Proxy, index, value, accumulate=None):
    """``a[index] = value`` with integer arrays (``accumulate``: ``np.<op>.at(a, index,
    value)``): a ``scatter`` node, the stores in C order of the value (a repeated index keeps
    the last one, or accumulates them all); ``a[mask] = scalar`` is ``np.where``."""
    parts = index if isinstance(index, tuple) else (index,)
    masks = [ix for ix in parts if isinstance(ix, (Proxy, np.ndarray)) and ix.dtype.kind == "b"]
    if masks:
        if (accumulate is None and len(parts) == 1 and tuple(masks[0].shape) == tuple(a.shape)
                and np.ndim(value) == 0):
            _update(a, broadcast_node(as_node(where(masks[0], value, a), a.dtype), a.shape))
            return
        _unsupported("boolean-mask assignment other than x[mask] = scalar with a mask of x's shape")
    if any(ix is None for ix in parts):
        _unsupported("np.newaxis in an assignment index")
    b, nodes, axis, bshape = _advanced(a, parts)
    region = _canon_shape(tuple(b.shape[:axis]) + bshape + tuple(b.shape[axis + len(nodes):]))
    v = as_node(value)
    dt = a.dtype
    if accumulate is not None:
        dt = _loop_dtypes(getattr(np, accumulate), (a, value), None)[-1]
        if not np.can_cast(dt, a.dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{accumulate}' output from {dt!r} to "
                            f"{a.dtype!r} with casting rule 'same_kind' (at {user_location()})")
    if not _broadcasts_to(v.shape, region):
        raise ValueError(f"shape mismatch: value array of shape {v.shape} could not be "
                         f"broadcast to indexing result of shape {region} "
                         f"(at {user_location()})")
    v = broadcast_node(cast_node(_fit(v, region), dt), region)
    _update(b, make_node("scatter", (b.node, v, *nodes), b.shape, b.dtype, user_location(),
                         axis=axis, accumulate=accumulate))


def ufunc_at(ufunc, a, indices, b=None):
    """``np.add.at(a, indices, b)`` (also subtract, multiply): every repeat accumulates."""
    if ufunc.__name__ not in ("add", "subtract", "multiply") or b is None:
        _unsupported(f"np.{ufunc.__name__}.at")
    if not isinstance(a, Proxy):
        raise TypeError(f"np.{ufunc.__name__}.at: the array updated must be an argument or an "
                        f"array made in the function (at {user_location()})")
    _scatter(a, indices, b, ufunc.__name__)


def _same_view(a: Proxy, index, value) -> bool:
    """Is ``value`` the view ``a[index]`` of ``a`` as it is now? (Python's augmented assignment
    ``x[idx] += v`` updates x through the view, then assigns the view to ``x[idx]``.)"""
    if not isinstance(value, Proxy) or value._base is None:
        return False
    mine, root = _views_to_root(value)
    if root is not a or mine is None:
        return False
    again = getitem(a, index)
    if not isinstance(again, Proxy) or again.scalar:
        return False
    other, _ = _views_to_root(again)
    return other is not None and len(other) == len(mine) and all(
        x.op == y.op and x.shape == y.shape and dict(x.attrs) == dict(y.attrs)
        for x, y in zip(mine, other))


def _views_to_root(p: Proxy):
    """(the view nodes from the array ``p`` views down to ``p``, that array), or (None, _)
    when an array on the way was updated since the view was made (updates through a view
    keep both in step, so then the view no longer shows its base as it is)."""
    chain = ()
    while p._base is not None:
        base, node_then, part = p._base
        if node_then is not base.node:
            return None, None
        chain, p = tuple(part) + chain, base
    return chain, p


def setitem(a: Proxy, index, value):
    """``a[index] = value`` on a fresh result: ``a`` becomes a new node that holds ``value``
    in the indexed region and ``a`` elsewhere (value cast unsafely, as NumPy's setitem does).
    On a view it updates the viewed array; on an argument, the caller's array."""
    if _is_advanced(index):
        return _scatter(a, index, value)
    if isinstance(index, tuple) and any(ix is None for ix in index) or index is None:
        _unsupported("np.newaxis in an assignment index")
    if _same_view(a, index, value):     # `x[i, :k] += v` stores x[i, :k] back into itself
        return
    spec, region, _, ints = _basic_index(a, index)
    v = as_node(value)
    want = _canon_shape(region)
    if not _broadcasts_to(v.shape, want):
        raise ValueError(f"could not broadcast input array from shape {v.shape} into shape "
                         f"{tuple(region)} (at {user_location()})")
    v = _fit(v, want)
    if v.dtype != a.dtype:
        v = make_node("cast", (v,), v.shape, a.dtype, user_location()) if v.op != "const" else \
            cast_node(v, a.dtype)
    spec = tuple(("i", s[0]) if d in ints else ("s",) + tuple(s) for d, s in enumerate(spec))
    _update(a, make_node("setitem", (a.node, v), a.shape, a.dtype, user_location(),
                         spec=spec, region=tuple(region)))


# --------------------------------------------------------------------------- reductions

_NO_VALUE = np._NoValue


def _axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    return tuple(sorted(normalize_axis_tuple(axis, x.ndim)))


def _reduce_node(x: Proxy, kind: str, axes, keepdims: bool, dtype=None) -> Proxy:
    node = x.node
    out_shape = tuple(s for i, s in enumerate(x.node.shape) if i not in axes)
    count = _count(x, axes)
    if not isinstance(count, int) and kind in ("max", "min", "argmax", "argmin"):
        count = 0 if _shapes().less(count, 1) else 1     # symbolic: decided now, guarded
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
    if axes:
        node = make_node("reduce", (node,), out_shape, out_dt, user_location(), kind=kind, axes=axes)
    r = wrap(_own(node), scalar=not keepdims and not out_shape)
    if keepdims:
        r = reshape(r, tuple(1 if i in axes else s for i, s in enumerate(x.node.shape)))
    return r


def _check_plain(name, out=None, initial=_NO_VALUE, where=_NO_VALUE, **extra):
    if out is not None:
        _unsupported(f"{name}(..., out=...)")
    if initial is not _NO_VALUE or where is not _NO_VALUE:
        _unsupported(f"{name}(..., initial=/where=)")
    if extra:
        _unsupported(f"{name} keyword arguments {sorted(extra)}")


_REDUCE_UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
                 "any": np.logical_or, "all": np.logical_and}


def _reduce_fn(kind):
    ufunc = _REDUCE_UFUNC[kind]

    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
               where=_NO_VALUE, **extra):
        _check_plain(f"np.{kind}", None, **extra)
        out = _out_operand(f"np.{kind}", out)
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
        result = _reduce_node(x, kind, _axes(x, axis), bool(keepdims), dtype)
        if initial is not _NO_VALUE:            # cast to the reduction's dtype, as NumPy
            result = ufunc(result, cast(asproxy(initial), result.dtype))
        return result if out is None else _reduce_into(out, result, ufunc)
    return reduce


_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}


def _masked(kind, x: Proxy, mask: Proxy, initial) -> Proxy:
    """``where=``: the masked-out elements replaced by the operation's identity (by
    ``initial`` for max/min, which have none)."""
    try:
        ok = _bshapes(mask.shape, x.shape) == tuple(x.shape)
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
        _unsupported(f"{name}(..., out=) into other than an array of the traced function")
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
    if not all(_same_size(a, b) for a, b in zip(out.shape, result.shape)):
        raise ValueError(f"{name}: output shape {out.shape} does not match the "
                         f"reduction's shape {result.shape} (at {user_location()})")
    _update(out, cast_node(result.node, out.dtype))
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
    return _shapes().prod(dims)


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


_SCAN_DTYPES = frozenset(np.dtype(t) for t in ("int32", "int64", "float32", "float64"))


def _scan_node(x: Proxy, kind: str, axis, dtype) -> Proxy:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis_tuple(axis, x.ndim)[0]
    if dtype not in _SCAN_DTYPES:       # (int8, uint16, ... accumulators: NumPy's own loop)
        return extern_call(getattr(np, f"cum{kind}"), (x,), {"axis": axis, "dtype": dtype})
    node = cast_node(x.node, dtype)
    return wrap(make_node("scan", (node,), node.shape, dtype, user_location(), kind=kind,
                          axis=axis))


cumsum = _scan_fn("sum")
cumprod = _scan_fn("prod")


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO_VALUE):
    _check_plain("np.mean", None, where=where)
    out = _out_operand("np.mean", out)
    x = asproxy(a)
    axes = _axes(x, axis)
    count = _size_operand(_count(x, axes))
    if out is not None:     # as NumPy: the sum is stored into out, then divided in out's dtype
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.dtype(np.float64)
        total = sum_(x, axis=axes, dtype=dtype, out=out, keepdims=keepdims)
        return _reduce_into(out, np.true_divide(total, count), np.add)
    dtype = np.mean(np.ones(1, x.dtype), dtype=dtype).dtype
    total = _reduce_node(x, "sum", axes, bool(keepdims), dtype)
    return np.true_divide(total, count)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO_VALUE,
        mean=_NO_VALUE, correction=_NO_VALUE):
    _check_plain("np.var", None, where=where)
    out = _out_operand("np.var", out)
    if mean is not _NO_VALUE:
        _unsupported("np.var(..., mean=)")
    if correction is not _NO_VALUE:
        ddof = correction
    x = asproxy(a)
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.dtype(np.float64)
    axes = _axes(x, axis)
    n = _count(x, axes)
    mu = _reduce_node(x, "sum", axes, True, dtype)
    mu = np.true_divide(mu, _size_operand(n))
    d = np.subtract(x, mu)
    d = np.multiply(d, d)
    if out is not None and dtype is None:   # as NumPy: the last sum's loop takes out's dtype
        dtype = _out_loop_dtype(np.add, out, d.dtype)
    total = _reduce_node(d, "sum", axes, bool(keepdims), dtype)
    if out is not None:                     # ... lands in out, and is divided there
        total = _reduce_into(out, total, "var")
    if not isinstance(n, int):
        import sympy
        r = np.true_divide(total, _size_operand(sympy.Max(n - ddof, 0)))
    else:
        r = np.true_divide(total, max(n - ddof, 0))
    return r if out is None else _reduce_into(out, r, "var")


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    v = var(a, axis, dtype, out, ddof, keepdims, **kw)
    return np.sqrt(v) if out is None else np.sqrt(v, out=v)     # NumPy: sqrt in out's dtype


# --------------------------------------------------------------------------- matrix products

def matmul(a, b, out=None, **kw):
    """np.matmul: an extern op (the BLAS NumPy links); elementwise work around it is fused."""
    if kw:
        _unsupported("np.matmul with keywords other than out=")
    if out is not None:
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not isinstance(out, Proxy):
            _unsupported("np.matmul(..., out=) into other than a traced array")
        _store_result(out, matmul(a, b), "matmul")
        return out
    a, b = asproxy(a), asproxy(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: Input operand does not have enough dimensions "
                         f"(at {user_location()})")
    try:
        dt = np.matmul.resolve_dtypes((_descriptor(a), _descriptor(b), None))[-1]
    except TypeError as e:
        raise TypeError(f"np.matmul: {e} (at {user_location()})") from None
    if dt.kind not in "fiu":
        _unsupported(f"np.matmul on {dt}")
    a2 = reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    if not _same_size(a2.node.shape[-1], b2.node.shape[-2]):
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2.shape[-2]} is different from {a2.shape[-1]}) "
                         f"(at {user_location()})")
    try:
        batch = tuple(_bshapes(a2.node.shape[:-2], b2.node.shape[:-2]))
    except ValueError:
        raise ValueError(f"np.matmul: operands could not be broadcast together with shapes "
                         f"{a2.shape} {b2.shape} (at {user_location()})") from None
    shape = batch + (a2.node.shape[-2], b2.node.shape[-1])
    from ..runtime.extern import ExternCall, Slot
    call = ExternCall(np.matmul, (Slot(0), Slot(1)), {}, writes_out=True)
    node = make_node("extern", (as_node(a2, dt), as_node(b2, dt)), shape, dt, user_location(),
                     call=call)
    r = wrap(node)
    if a.ndim == 1 or b.ndim == 1:
        drop = ([len(shape) - 2] if a.ndim == 1 else []) + ([len(shape) - 1] if b.ndim == 1 else [])
        r = reshape(r, tuple(s for i, s in enumerate(shape) if i not in drop))
        r.scalar = not r.shape                  # vector @ vector: a NumPy scalar
    return r


def dot(a, b, out=None):
    a, b = asproxy(a), asproxy(b)
    if a.ndim <= 2 and b.ndim <= 2 and a.ndim and b.ndim:
        return matmul(a, b, out=out)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    _unsupported("np.dot on arrays with more than 2 dimensions")


def flip(m, axis=None):
    """A view with negative strides: slices with step -1."""
    m = asproxy(m)
    axes = range(m.ndim) if axis is None else normalize_axis_tuple(axis, m.ndim)
    return getitem(m, tuple(slice(None, None, -1) if d in axes else slice(None)
                            for d in range(m.ndim)))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """A view: the two axes moved last and flattened, then every (m+1)-th element."""
    a = asproxy(a)
    axis1, axis2 = normalize_axis_tuple((axis1, axis2), a.ndim, allow_duplicate=False)
    rest = [d for d in range(a.ndim) if d not in (axis1, axis2)]
    t = transpose(a, rest + [axis1, axis2])
    n, m = a.shape[axis1], a.shape[axis2]
    if offset >= 0:
        start, length = offset, max(0, min(n, m - offset))
    else:
        start, length = -offset * m, max(0, min(n + offset, m))
    flat = reshape(t, t.shape[:-2] + (n * m,))
    if length == 0:
        return getitem(flat, (Ellipsis, slice(0, 0)))
    return getitem(flat, (Ellipsis, slice(start, start + (length - 1) * (m + 1) + 1, m + 1)))


def trace_(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _check_plain("np.trace", out)
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _tri_mask(a, k, lower: bool):
    """j - i <= k (lower) or j - i >= k over the last two axes."""
    n, m = a.shape[-2], a.shape[-1]
    i64 = np.dtype(np.int64)
    rows = wrap(make_node("iota", (), (n,), i64, user_location(), start=0, step=1))
    cols = wrap(make_node("iota", (), (m,), i64, user_location(), start=0, step=1))
    diff = np.subtract(cols, reshape(rows, (n, 1)))
    return np.less_equal(diff, int(k)) if lower else np.greater_equal(diff, int(k))


def tril(m, k=0):
    m = asproxy(m)
    if m.ndim < 2:
        return extern_call(np.tril, (m,), {"k": k})
    return where(_tri_mask(m, k, True), m, m.dtype.type(0))


def triu(m, k=0):
    m = asproxy(m)
    if m.ndim < 2:
        return extern_call(np.triu, (m,), {"k": k})
    return where(_tri_mask(m, k, False), m, m.dtype.type(0))


def shape_of(a):
    return asproxy(a).shape


def ndim_of(a):
    return asproxy(a).ndim


def size_of(a, axis=None):
    a = asproxy(a)
    return a.size if axis is None else a.shape[axis]


FUNCTIONS = {
    np.sum: sum_, np.prod: prod, np.max: amax, np.amax: amax, np.min: amin, np.amin: amin,
    np.any: any_, np.all: all_, np.argmax: argmax, np.argmin: argmin, np.mean: mean,
    np.cumsum: cumsum, np.cumprod: cumprod,
    np.flip: flip, np.fliplr: lambda m: flip(m, 1), np.flipud: lambda m: flip(m, 0),
    np.diagonal: diagonal, np.trace: trace_, np.tril: tril, np.triu: triu,
    np.var: var, np.std: std, np.matmul: matmul, np.dot: dot, np.where: where, np.clip: clip,
    np.isclose: isclose, np.allclose: allclose, np.select: select, np.reshape: reshape,
    np.transpose: transpose, np.swapaxes: swapaxes, np.moveaxis: moveaxis,
    np.broadcast_to: broadcast_to, np.broadcast_arrays: broadcast_arrays,
    np.expand_dims: expand_dims, np.squeeze: squeeze, np.ravel: ravel, np.take: take,
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.empty_like: zeros_like, np.shape: shape_of, np.ndim: ndim_of, np.size: size_of,
    np.copy: lambda a, *args, **kw: _copy(asproxy(a), scalar=False), np.asarray: lambda a, dtype=None, **kw:
    asproxy(a) if dtype is None else cast(a, dtype),
    np.ascontiguousarray: lambda a, dtype=None, **kw: asproxy(a) if dtype is None else cast(a, dtype),
    np.array: lambda a, dtype=None, copy=True, **kw: (_copy(asproxy(a), scalar=False) if copy
                                                      else asproxy(a))
    if dtype is None else cast(a, dtype),
    np.result_type: lambda *args: np.result_type(*[_descriptor(a) if isinstance(a, Proxy) else a
                                                   for a in args]),
}


# --------------------------------------------------------------------------- extern NumPy calls

# functions whose output shape depends on the values: compiled for the shape they give on
# the first call's values (``extern_call(speculate=True)``)
SPECULATED = {"nonzero", "argwhere", "flatnonzero", "extract", "compress", "unique",
              "unique_values", "trim_zeros"}
# other functions never run as extern steps
DATA_DEPENDENT = {"unique_counts", "unique_inverse", "unique_all",
                  "delete", "insert", "select", "piecewise", "histogram_bin_edges", "place",
                  "put", "putmask", "copyto", "fill_diagonal", "save", "savez", "savetxt",
                  "array_equal", "array_equiv", "allclose", "isclose", "array2string",
                  "array_repr", "array_str", "shape", "ndim", "size"}
_WARNED: set = set()


def extern_call(func, args, kwargs, speculate=False):
    """Any other NumPy function on traced arrays: a call to NumPy itself between compiled
    kernels, when its output shapes and dtypes follow from its inputs' (found by running it
    once on stand-in arrays). Warns once per function.

    With ``speculate`` (``np.nonzero``, ``x[mask]``, ...: the output shape depends on the
    values) the shapes are those of this call: the traced graph so far is run with NumPy on
    the call's arguments. The compiled code is right for every call whose values give the
    same shapes; a call that gives others is detected at the step and runs the whole function
    with NumPy instead (``runtime.compiled``), with a warning."""
    from ..runtime.extern import ExternCall, Slot, qualified_name
    name = qualified_name(func)
    speculate = speculate or func.__name__ in SPECULATED
    if func.__name__ in DATA_DEPENDENT or "random" in name or "fft" in name or "linalg.eig" in name:
        raise UnsupportedError(f"{name} is not supported by cppcodegen "
                               f"(called at {user_location()})")
    proxies = []

    def template(x):
        if isinstance(x, Proxy):
            proxies.append(x)
            return Slot(len(proxies) - 1)
        if isinstance(x, np.ndarray) and x.size > 16:
            proxies.append(asproxy(x))
            return Slot(len(proxies) - 1)
        if isinstance(x, tuple):
            return tuple(template(v) for v in x)
        if isinstance(x, list):
            return [template(v) for v in x]
        if isinstance(x, dict):
            return {k: template(v) for k, v in x.items()}
        if callable(x) and not isinstance(x, (np.dtype, type)):
            _unsupported(f"{name} with a function argument")
        return x
    targs, tkwargs = template(tuple(args)), template(dict(kwargs))
    if speculate:
        result = _concrete_call(func, name, targs, tkwargs, proxies)
    else:
        result = _stand_in_call(func, name, targs, tkwargs, proxies)
    several = isinstance(result, (tuple, list))     # np.array_split, np.meshgrid: a list
    results = result if several else (result,)
    outs = []
    for k, r in enumerate(results):
        r = np.asarray(r)
        if r.dtype.kind not in "biuf":
            _unsupported(f"{name} returning {r.dtype}")
        call = ExternCall(func, targs, tkwargs, k if several else None)
        node = make_node("extern", [p.node for p in proxies], r.shape, r.dtype,
                         user_location(), call=call)
        outs.append(wrap(node, scalar=not r.shape))
    if name not in _WARNED:
        _WARNED.add(name)
        extra = (" (its output shape depends on the values: compiled for this call's shape, "
                 "other shapes run the function with NumPy)") if speculate else ""
        warnings.warn(f"cppcodegen: {name} runs as a NumPy call between compiled kernels"
                      f"{extra} (at {user_location()})", stacklevel=3)
    if not several:
        return outs[0]
    return type(result)(*outs) if hasattr(result, "_fields") else type(result)(outs)


def _concrete_call(func, name, targs, tkwargs, proxies):
    """Run ``func`` on the values the traced arrays have in this call."""
    from ..checking.reference import evaluate_node
    from ..runtime.extern import fill
    roots = [p.node for p in proxies]
    nodes = toposort(roots)
    if _TraceState.args is None or any(n.op == "random" for n in nodes):
        raise DataDependentError(f"{name} of random or unknown values has a data-dependent "
                                 f"output shape (at {user_location()}); call it outside the "
                                 "compiled function")
    values = {}
    with np.errstate(all="ignore"):
        for n in nodes:
            values[id(n)] = evaluate_node(n, [values[id(i)] for i in n.inputs], _TraceState.args)
    arrays = [values[id(r)] for r in roots]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return func(*fill(targs, arrays), **fill(tkwargs, arrays))
    except IndexError as e:
        raise IndexError(f"{e} (at {user_location()})") from None


class _TraceState:
    args = None         # the arguments of the call being traced (for speculated shapes)


def _stand_in_call(func, name, targs, tkwargs, proxies):
    """Run ``func`` on stand-ins of the traced arrays (zeros, then random values) to learn
    its output shapes and dtypes."""
    from ..runtime.extern import fill
    rng = np.random.default_rng(0)
    errors = []
    for make in (lambda p: np.zeros(p.shape, p.dtype),
                 lambda p: (rng.random(p.shape) * 4 + 1).astype(p.dtype)):
        arrays = [make(p) for p in proxies]
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return func(*fill(targs, arrays), **fill(tkwargs, arrays))
        except Exception as e:          # noqa: BLE001 -- reported below
            errors.append(e)
    raise UnsupportedError(f"{name} could not be run on traced arrays ({errors[-1]}) "
                           f"(at {user_location()})")


# --------------------------------------------------------------------------- random numbers

class _RandomState:
    """Counts the random ops of the trace in progress (each gets a slot: its own draws)."""
    slots = None


def _size_shape(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)) or _is_dim(size):
        size = (size,)
    return _canon_shape(size)            # symbolic sizes (x.shape[0]) stay symbolic


def _random_shape(size, a, b, what):
    """The shape of a draw: ``size`` broadcast with its parameters' shapes."""
    shapes = [_size_shape(size)] + [x.node.shape if isinstance(x, Proxy) else np.shape(x)
                                    for x in (a, b)]
    try:
        return _bshapes(*shapes)
    except ValueError:
        raise ValueError(f"{what}: shape mismatch: objects cannot be broadcast to a single "
                         f"shape {shapes} (at {user_location()})") from None


def _random_node(dist: str, shape, dtype=np.float64, source=None) -> Proxy:
    if _RandomState.slots is None:
        raise TraceError("random numbers outside a trace")
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        _unsupported(f"random numbers of dtype {dtype}")
    slot = _RandomState.slots
    _RandomState.slots += 1
    return wrap(make_node("random", (), shape, dtype, user_location(), dist=dist, slot=slot,
                          source=source))


def _affine(p: Proxy, loc, scale) -> Proxy:
    return p if (type(loc) in (int, float) and loc == 0 and type(scale) in (int, float)
                 and scale == 1) else np.add(np.multiply(p, scale), loc)


def _uniform(low=0.0, high=1.0, size=None, source=None):
    shape = _random_shape(size, low, high, "uniform")
    u = _random_node("uniform", shape, source=source)
    return _affine(u, low, np.subtract(high, low) if isinstance(high, Proxy) or
                   isinstance(low, Proxy) else high - low)


def _normal(loc=0.0, scale=1.0, size=None, source=None):
    shape = _random_shape(size, loc, scale, "normal")
    return _affine(_random_node("normal", shape, source=source), loc, scale)


RANDOM_FUNCTIONS = {
    "random": lambda size=None: _random_node("uniform", _size_shape(size)),
    "random_sample": lambda size=None: _random_node("uniform", _size_shape(size)),
    "sample": lambda size=None: _random_node("uniform", _size_shape(size)),
    "rand": lambda *dims: _random_node("uniform", _size_shape(dims)),
    "randn": lambda *dims: _random_node("normal", _size_shape(dims)),
    "standard_normal": lambda size=None: _random_node("normal", _size_shape(size)),
    "uniform": _uniform,
    "normal": _normal,
}


class TracedGenerator:
    """Stands for a ``numpy.random.Generator`` argument: its draws happen in the kernel, seeded
    from the Generator itself at each call (so its own seed makes the results reproducible)."""

    def __init__(self, index: int):
        self.index = index

    def random(self, size=None, dtype=np.float64, out=None):
        return _random_node("uniform", _size_shape(size), dtype, self.index)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return _random_node("normal", _size_shape(size), dtype, self.index)

    def uniform(self, low=0.0, high=1.0, size=None):
        return _uniform(low, high, size, self.index)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return _normal(loc, scale, size, self.index)

    def __getattr__(self, name):
        _unsupported(f"numpy.random.Generator.{name}")


replace.register(np.random, RANDOM_FUNCTIONS)


# --------------------------------------------------------------------------- symbolic sizes
# Dynamic shapes (shapes.py): sizes may be sympy expressions. Static traces never import
# sympy: every helper below takes the plain-int path first.

_SHAPES = "cppcodegen.ir.shapes"     # loaded (with sympy) only by a trace with symbolic sizes


def _shapes():
    from ..ir import shapes     # lazy: sympy stays off static traces and the warm path
    return shapes


def _dynamic() -> bool:
    mod = sys.modules.get(_SHAPES)
    return mod is not None and mod.current() is not None


def _is_dim(x) -> bool:
    """A symbolic size from the user's code (``x.shape[0]``) or the compiler."""
    mod = sys.modules.get(_SHAPES)
    return mod is not None and (isinstance(x, mod.SymInt) or hasattr(x, "free_symbols"))


def _user_shape(shape):
    if all(type(d) is int for d in shape):
        return shape
    return tuple(_shapes().SymInt.wrap(d) for d in shape)


def _user_dim(d):
    return d if type(d) is int else _shapes().SymInt.wrap(d)


def _as_int(d) -> int:
    return d if type(d) is int else _shapes().as_int(d)


def _canon_shape(shape) -> tuple:
    if all(type(d) is int for d in shape):
        return tuple(shape)
    if not _dynamic():
        return tuple(int(d) for d in shape)
    return _shapes().canon_shape(shape)


def _bshapes(*shapes):
    shapes = [_canon_shape(s) for s in shapes]
    if all(type(d) is int for s in shapes for d in s):
        return np.broadcast_shapes(*shapes)
    return _shapes().broadcast_shapes(*shapes)


def _same_size(a, b) -> bool:
    return a == b if type(a) is int and type(b) is int else _shapes().equal(a, b)


def _fit(node: Node, shape) -> Node:
    """An operand whose derived symbolic size (``n0 - 9``) broadcasts as 1 in this call (a
    guarded fact): sliced to length 1 there, so lowering sees the broadcast."""
    if all(type(d) is int for d in node.shape):
        return node
    lead = len(shape) - node.ndim
    spec, fit = [], False
    for k, d in enumerate(node.shape):
        out = shape[lead + k]
        if type(d) is not int and not d.is_Symbol and d != out and _shapes().equal(d, 1):
            spec.append((0, 1, 1))
            fit = True
        else:
            spec.append((0, 1, d))
    if not fit:
        return node
    return make_node("slice", (node,), [s[2] for s in spec], node.dtype, user_location(),
                     spec=tuple(spec))


def _input_shape(spec, value, hints) -> tuple:
    """An input's shape from its dynamic spec: the names become size symbols."""
    sh = _shapes()
    out = []
    for name, size in zip(spec[2], value.shape):
        if isinstance(name, str):
            sym = sh.size_symbol(name)
            hints[sym] = size
            out.append(sym)
        else:
            out.append(name)
    return tuple(out)


def _shape_env(env):
    import contextlib
    return contextlib.nullcontext() if env is None else _shapes().active(env)


def _reshape_symbolic(a: Proxy, shape) -> Proxy:
    sh = _shapes()
    shape = [sh.canon(s) for s in shape]
    if sum(1 for s in shape if type(s) is int and s == -1) > 1:
        raise ValueError(f"can only specify one unknown dimension (at {user_location()})")
    total = sh.prod(a.node.shape)
    if -1 in shape:
        known = sh.prod([s for s in shape if not (type(s) is int and s == -1)])
        if sh.equal(known, 0):
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                             f"(at {user_location()})")
        shape = [sh.exact_div(total, known) if type(s) is int and s == -1 else s for s in shape]
    shape = tuple(sh.canon(s) for s in shape)
    if not sh.equal(sh.prod(shape), total):
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape} "
                         f"(at {user_location()})")
    if shape == a.node.shape:
        return a
    return _view_of(a, make_node("reshape", (a.node,), shape, a.dtype, user_location()))


def _symbolic_index(ix, size, dim):
    """(start, step, length) of a slice or an int index on a symbolic size, as sympy
    expressions; where NumPy clamps, the case of this call is taken and guarded."""
    sh = _shapes()
    if not isinstance(ix, slice) and _is_dim(ix):     # a[i] with i an induction variable
        i = sh.canon(ix)
        if sh.less(i, 0):
            i = sh.canon(size + i)
        if sh.less(i, 0) or not sh.less(i, size):
            raise IndexError(f"index {ix} is out of bounds for axis {dim} with size {size} "
                             f"(at {user_location()})")
        return i, 1, 1
    if not isinstance(ix, slice):
        i = int(ix)
        if sh.less(i, 0) if i >= 0 else sh.less(size, -i):
            raise IndexError(f"index {i} is out of bounds for axis {dim} with size "
                             f"{sh.current().hint(size)} (at {user_location()})")
        if not (i < 0 or sh.less(i, size)):
            raise IndexError(f"index {i} is out of bounds for axis {dim} with size "
                             f"{sh.current().hint(size)} (at {user_location()})")
        return (size + i if i < 0 else i), 1, 1
    step = 1 if ix.step is None else int(ix.step)
    if step == 0:
        raise ValueError(f"slice step cannot be zero (at {user_location()})")

    def bound(v, default):
        if v is None:
            return default
        v = sh.canon(v)
        if type(v) is not int and step > 0:     # symbolic: NumPy's clamping, decided
            if sh.less(v, 0):
                v = sh.canon(size + v)
            return 0 if sh.less(v, 0) else size if sh.less(size, v) else v
        if type(v) is int and v < 0:
            v = size + v
            return v if not sh.less(v, 0) else (0 if step > 0 else -1)
        if type(v) is int:
            return v if sh.less(v, size) else (size if step > 0 else size - 1)
        return v
    if step > 0:
        start, stop = bound(ix.start, 0), bound(ix.stop, size)
        length = stop - start
    else:
        start, stop = bound(ix.start, size - 1), bound(ix.stop, -1)
        length = start - stop
    length = sh.canon(length)
    if sh.less(length, 1):
        return 0, step, 0
    if abs(step) > 1:
        length = sh.canon(sh.floordiv(length - 1, abs(step)) + 1)
    return sh.canon(start), step, length


def _size_operand(n):
    """A count of elements as an operand: a Python int, or a weak int64 node of its expression."""
    if type(n) is int:
        return n
    return wrap(make_node("size", (), (), np.int64, user_location(), expr=_shapes().canon(n)),
                weak=True)


# --------------------------------------------------------------------------- driver

_TRACE_LOCK = threading.RLock()

def trace(fn, arg_specs, args):
    """Run ``fn`` on proxies. ``arg_specs`` come from signature.classify(); returns a Graph."""
    inputs, call_args, hints = [], [], {}
    env = None
    if any(spec[0] == "darray" for spec in arg_specs):
        env = _shapes().ShapeEnv(hints)
    for i, (spec, value) in enumerate(zip(arg_specs, args)):
        kind = spec[0]
        if kind in ("array", "darray"):
            shape = value.shape if kind == "array" else _input_shape(spec, value, hints)
            node = make_node("input", (), shape, value.dtype, "", index=i)
            inputs.append(node)
            arg = wrap(node)
            arg.arg = i             # the caller's array: in-place updates are written back
            call_args.append(arg)
        elif kind == "scalar":
            dt = np.dtype(spec[1])
            node = make_node("scalar", (), (), dt, "", index=i)
            inputs.append(node)
            call_args.append(wrap(node, weak=spec[2]))
        elif kind == "generator":
            call_args.append(TracedGenerator(i))
        else:
            call_args.append(value)
    if env is not None:
        env.hints.update(hints)
    inputs_by_arg = {n.attr("index"): n for n in inputs if n.op == "input"}
    with _TRACE_LOCK, np.errstate(all="ignore"), _shape_env(env), replace.replaced():
        _RandomState.slots = 0
        _TraceState.args = args
        try:
            result = fn(*call_args)
        finally:
            _RandomState.slots = None
            _TraceState.args = None
    # an argument updated in place: its final value is written into the caller's array;
    # the argument itself returned is the caller's array (as NumPy returns it)
    mutations = [(p.arg, p.node) for p in call_args
                 if isinstance(p, Proxy) and p.arg is not None and p.node is not inputs_by_arg[p.arg]]
    if env is not None:         # a symbolic size returned: computed at run time (int64)
        result = map_tree(result, lambda d: _size_operand(d.expr), leaf_type=_shapes().SymInt)
    outputs = map_tree(result, lambda p: inputs_by_arg[p.arg] if p.arg is not None else p.node,
                       leaf_type=Proxy)
    _check_outputs(result)
    leaves = flatten_tree(outputs)
    nodes = toposort(leaves + [n for _, n in mutations] + inputs)
    constants = {n.attr("array").key: n.attr("array").array for n in nodes if n.op == "constant"}
    graph = Graph(inputs=inputs, nodes=nodes, outputs=outputs, leaves=leaves, constants=constants,
                  mutations=mutations)
    if env is not None:
        graph.hints, graph.guards = env.hints, tuple(env.guards)
    return graph


def _check_outputs(result):
    ok = (Proxy, np.ndarray, np.generic, int, float, bool, str, type(None))
    if isinstance(result, dict):
        for v in result.values():
            _check_outputs(v)
    elif isinstance(result, (tuple, list)):
        for v in result:
            _check_outputs(v)
    elif not isinstance(result, ok):
        raise TraceError(f"the compiled function returned a {type(result).__name__}; "
                         "return arrays, scalars, or tuples/lists/dicts of them")
