"""Arrays made inside the traced function: ``np.zeros``, ``np.ones``, ``np.empty``,
``np.full``, ``np.eye``, ``np.identity``, ``np.arange``, ``np.linspace`` and ``np.array`` of
a list holding traced values.

In: the user's call, with shapes from Python ints, array sizes (``x.shape[0]``, symbolic in
a dynamic trace or inside a loop) or traced size expressions. Out: a proxy whose node is a
broadcast constant or an ``iota`` expression: the array the user fills in place is then one
buffer of the compiled program (its writes are ``setitem`` nodes that lowering fuses), not a
NumPy array the trace cannot write traced values into.

NumPy's constructors take no array argument, so ``__array_function__`` never sees them:
they are registered with ``replace.py``, which installs them on the ``numpy`` module for
the user's calls while a trace runs.

``np.empty`` reads as zeros where its value is read (any start value is allowed; a defined
one costs nothing where the array is then overwritten, as the fused writes replace the
fill); a loop that carries it starts from its buffer as allocated, not filled.
``order='F'`` is accepted; results are C-ordered (the values are the same).
"""
from __future__ import annotations

import numpy as np

from ..errors import DataDependentError, ScalarSizeChanged, SizeChanged, user_location
from ..ir.graph import make_node, MADE
from . import replace
from .proxy import (as_node, asproxy, broadcast_node, cast, cast_node, copy_of, laid_out, Proxy,
                    size_operand, unsupported, wrap)
from .dataslice import PendingSlice
from .iteration import concrete_int, size_proxy, symbolic_int, value_size
from .sizes import canon_shape, current_env, is_dim, symbolic

# --------------------------------------------------------------------------- arguments

def _dim(d, what: str, bound: bool = False):
    """One size of a shape argument: an int, or a symbolic size (sympy expression).
    ``bound``: np.arange's start or stop, which may be negative."""
    if isinstance(d, (bool, np.bool_)):
        raise TypeError(f"{what}: a bool is not a size (at {user_location()})")
    if isinstance(d, (int, np.integer)):
        return int(d)
    if is_dim(d):
        return symbolic().canon(d)
    if isinstance(d, Proxy):
        if d.node.op == "size":
            return d.node.attr("expr")
        n = _integer_size(d)                # an integer argument, or n + 1 of one
        if n is not None:
            if not bound and symbolic().less(n, 0):
                raise ValueError(f"{what}: negative dimensions are not allowed "
                                 f"(at {user_location()})")
            return n
        if d.dtype.kind in "iu" and d.ndim == 0:
            return _speculated(d, what, bound)
    raise TypeError(f"{what}: {type(d).__name__!r} object cannot be interpreted as an "
                    f"integer (at {user_location()})")


def _speculated(d: Proxy, what: str, bound: bool = False) -> int:
    """A size from an array's value (``np.zeros(x.max() + 1)``): this call's value, and a
    check that a later call's is the same (one that is not runs again as Python, as a call
    whose Python int overflows does: ``errors.SizeChanged``)."""
    from .externs import values_now
    env = current_env()
    if not bound and not MADE and not (env is not None and env.loops) and not _of_scalars(d):
        return _counted_size(d)
    values = None if env is not None and env.loops else values_now([d])
    if values is None:                  # (in a loop body, of random values)
        raise DataDependentError(
            f"{what}: the size comes from values computed in a loop or drawn at random (at "
            f"{user_location()}); an array made in a compiled function must have its size "
            "from Python ints, argument shapes (x.shape[0]), loop variables, or values of "
            "the arguments")
    v = int(values[0])
    where = user_location()
    if v < 0 and not bound:
        raise ValueError(f"{what}: negative dimensions are not allowed (at {where})")
    if _of_scalars(d):
        error = (ScalarSizeChanged, (f"{what}: the size comes from a scalar argument (at "
                                     f"{where}), traced with {v}; a call that gives another "
                                     "size is traced again, but this call already updated an "
                                     "argument",))
    else:
        error = (SizeChanged, (f"{what}: the size comes from an array's value (at {where}), "
                               f"compiled for {v}; a call that gives another size runs as "
                               "Python, but this call already updated an argument",))
    SIZE_CHECKS.append((np.equal(d, v), error, where))
    return v


def _counted_stop(d) -> bool:
    """Is ``np.arange(d)``'s stop an int from array values outside every compiled loop (its
    length a count read when the program runs, as ``np.zeros(x.max() + 1)``'s size)?"""
    env = current_env()
    return isinstance(d, Proxy) and d.dtype.kind in "iu" and d.ndim == 0 and \
        d.node.op != "size" and _integer_size(d) is None and not MADE and \
        not (env is not None and env.loops) and not _of_scalars(d)


def _counted_size(d: Proxy):
    """A size from array values outside every compiled loop (``np.empty(lens.sum())``, a
    CSR's ``np.empty(indptr[-1])``): a step between kernels gives it, its value a count
    symbol the runtime reads there (``runtime.extern.sized``, ``counted.py``), so one build
    serves every value. (It was this call's value, checked: every other value ran the whole
    function as Python, and a size computed by loops was found by running them while
    tracing.)"""
    from ..runtime.extern import sized
    from .externs import extern_call
    return extern_call(sized, (d,), {}, speculate=True, where=user_location()).node.shape[0]


PIN_BOUNDS = [False]    # slice bounds from scalar arguments pinned (control._pinned_bounds)


def pinned_bound(d: Proxy) -> int:
    """A slice bound outside every loop computed from scalar arguments alone (``pad[:, r:r +
    w]`` with ``r = int(3 * sigma)``): this call's value, checked at each call as a size from
    them is (a call with another value gets a variant of its own)."""
    from .raises import require
    v = _speculated(d, "a slice's bound", bound=True)
    require(*SIZE_CHECKS.pop())         # (ok, error, where)
    return v


def decided_ints(x):
    """Ints a shape depends on (a pad width, a window), or tuples and lists of them, as the
    ints of this call, guarded: symbolic sizes in them (``kernel.shape[0] // 2`` of a
    dynamic argument) and ints computed from scalar arguments (``r = int(3 * sigma)``, an
    int argument read at each call) are checked at each call, another value getting a
    variant of its own. Anything else is returned as it is."""
    if symbolic_int(x):
        return concrete_int(x)
    if isinstance(x, Proxy) and x.dtype.kind in "iu" and not x.shape and _of_scalars(x):
        return pinned_bound(x)
    if isinstance(x, (tuple, list)):
        return type(x)(decided_ints(v) for v in x)
    return x


def of_scalars(d) -> bool:
    return PIN_BOUNDS[0] and isinstance(d, Proxy) and d.dtype.kind in "iu" and not d.shape and _of_scalars(d)


def _of_scalars(d: Proxy) -> bool:
    """Is ``d`` computed from scalar (0-d) arguments and constants alone? Such a size takes
    few values (a filter's radius from its sigma): each gets a variant of its own."""
    seen, todo = set(), [d.node]
    while todo:
        n = todo.pop()
        if id(n) not in seen:
            seen.add(id(n))
            if n.op == "input" and n.shape != ():
                return False
            todo.extend(n.inputs)
    return True


SIZE_CHECKS: list = []  # the size checks of the array being made (``_speculated``; cleared
                        # when a trace starts)


def _after_size_checks(value: Proxy) -> Proxy:
    """``value`` (an array being made, or its fill value) behind the checks of its sizes
    taken from array values, so that every use of the array runs after them (an index
    check of ``counts[v] += 1`` would fail first)."""
    from .raises import error_check
    while SIZE_CHECKS:
        ok, error, where = SIZE_CHECKS.pop()
        value = wrap(error_check(value, ok, error, where).node, value.weak, value.scalar)
    return value


def _integer_size(d):
    """A 0-d integer proxy as a size expression (``n``, ``n + 1`` of integer arguments and
    sizes), or None when it depends on array values."""
    if d.dtype.kind not in "iu" or d.ndim:
        return None
    try:
        return value_size(d)
    except DataDependentError:
        return None


def shape_argument(shape, what: str) -> tuple:
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    out = tuple(_dim(d, what) for d in dims)
    for d in out:
        if type(d) is int and d < 0:
            raise ValueError(f"{what}: negative dimensions are not allowed "
                             f"(at {user_location()})")
    return canon_shape(out)


def _dtype(dtype, default, what: str) -> np.dtype:
    dt = np.dtype(default if dtype is None else dtype)
    if dt.kind not in "biufc" or dt.itemsize > 16:
        unsupported(f"{what} with dtype {dt}")
    return dt


def _order(order, what: str):
    if order not in ("C", "F", "A", "K", None):
        raise ValueError(f"{what}: order must be one of 'C', 'F', 'A', or 'K' "
                         f"(got {order!r}, at {user_location()})")


# --------------------------------------------------------------------------- constructors

def full(shape, fill_value, dtype=None, order="C", *, like=None, device=None):
    return _full(shape, fill_value, dtype, order, "np.full")


def zeros(shape, dtype=float, order="C", *, like=None, device=None):
    return _full(shape, 0, float if dtype is None else dtype, order, "np.zeros")


def ones(shape, dtype=None, order="C", *, like=None, device=None):
    return _full(shape, 1, float if dtype is None else dtype, order, "np.ones")


def empty(shape, dtype=float, order="C", *, like=None, device=None):
    return _uninit(_full(shape, 0, float if dtype is None else dtype, order, "np.empty"))


def _uninit(r):
    """``np.empty``'s zeros, marked as any values: zeros where its value is read; a loop
    that fills it, or a first store into it, starts from its memory as it is."""
    node = r.node
    if node.op != "broadcast_to":
        return r
    return wrap(make_node("broadcast_to", node.inputs, node.shape, node.dtype, node.where,
                          uninit=True))


def ndarray_new(shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    """``np.ndarray(shape, dtype)`` as code written for Numba makes buffers: ``np.empty``."""
    if buffer is not None or strides is not None:
        unsupported("np.ndarray(...) over a buffer or with strides")
    return empty(shape, dtype, order or "C")


def _full(shape, fill_value, dtype, order, what):
    shp = shape_argument(shape, what)
    _order(order, what)
    if isinstance(fill_value, Proxy):
        dt = _dtype(dtype, fill_value.dtype, what)
        value = cast_node(as_node(_int_fill(fill_value, dt)), dt)
    else:
        arr = np.asarray(fill_value)
        dt = _dtype(dtype, arr.dtype, what)
        value = as_node(arr.astype(dt)[()])
    return wrap(broadcast_node(_after_size_checks(wrap(value)).node, shp))


def _int_fill(value, dt: np.dtype):
    """A fill value of an array of ``dt`` (a Python int: NumPy's OverflowError check)."""
    from .pyints import python_int_into     # (pyints imports this module's users)
    return python_int_into(value, dt)


def _iota(n, start=0, step=1):
    iota = wrap(make_node("iota", (), (n,), np.int64, user_location()))
    if step != 1:
        iota = np.multiply(iota, size_operand(step))
    if not (type(start) is int and start == 0):
        iota = np.add(iota, size_operand(start))
    return iota


def eye(N, M=None, k=0, dtype=float, order="C", *, like=None, device=None):
    n = _dim(N, "np.eye")
    m = n if M is None else _dim(M, "np.eye")
    dt = _dtype(dtype, float, "np.eye")
    _order(order, "np.eye")
    rows = np.reshape(_iota(n), (n, 1))
    diag = np.equal(np.subtract(_iota(m), rows), size_operand(_dim(k, "np.eye")))
    return _after_size_checks(cast(diag, dt))


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


def arange(*args, original, **kwargs):
    """With a symbolic bound (a size, a loop variable): an iota expression (int64);
    otherwise NumPy's own result, a constant of the trace."""
    args = tuple(_pinned_float(a) for a in args)
    if not any(is_dim(a) or isinstance(a, Proxy) for a in args):
        return asproxy(original(*args, **kwargs))     # traced: indexable by traced values
    if set(kwargs) <= {"dtype"} and 2 <= len(args) <= 3 and any(
            type(a) is float or isinstance(a, Proxy) and a.dtype.kind == "f" for a in args):
        return _float_arange(*args, dtype=kwargs.get("dtype"))
    dtype = kwargs.pop("dtype", None)
    if len(args) > 3 or kwargs or (dtype is not None and np.dtype(dtype).kind not in "iufc"):
        unsupported(f"np.arange with a symbolic bound and {kwargs or {'dtype': dtype}}")
    if dtype is not None:       # integer bounds and step: the integers, cast
        return cast(arange(*args, original=original), dtype)
    if len(args) == 1 and _counted_stop(args[0]):    # np.arange(labels.max() + 1): a count
        return _iota(_counted_size(np.maximum(args[0], 0)), 0, 1)
    sh = symbolic()
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    start, stop = (sh.canon(_dim(v, "np.arange", bound=True)) for v in (start, stop))
    step = int(step)
    if step == 0:
        raise ValueError("Maximum allowed size exceeded")
    length = sh.canon(stop - start) if step > 0 else sh.canon(start - stop)
    if sh.less(length, 1):
        return _after_size_checks(asproxy(original(0))) if SIZE_CHECKS else original(0)
    if abs(step) > 1:
        length = sh.canon(sh.floordiv(length - 1, abs(step)) + 1)
    return _after_size_checks(_iota(length, start, step))


def _float_arange(start, stop, step=1, dtype=None):
    """``np.arange(0.0, T, dt)`` of traced floats, as NumPy makes it: ``ceil((stop - start)
    / step)`` elements (1 where that quotient underflows to +0, a step of inf; this call's
    count, checked at each call: a count from scalar arguments alone gets a variant per
    value, ``_speculated``), the first ``start`` and the second ``start + step`` in the
    result's dtype, the others ``first + i * delta`` with ``delta`` their difference, in
    that dtype. A count NumPy cannot compute (NaN, infinite) runs the call as Python."""
    from .pyints import int_of_float
    dt = np.dtype(dtype) if dtype is not None else \
        np.result_type(*[_weak(v) for v in (start, stop, step)])
    if dt.kind not in "fc":
        unsupported(f"np.arange of float bounds with dtype={dt}")
    a, b, s = (cast(asproxy(v), np.float64) for v in (start, stop, step))
    span = np.subtract(b, a)
    q = np.divide(span, s)
    tiny = np.logical_and(np.equal(q, 0.0), np.not_equal(span, 0.0))
    count = np.where(tiny, np.where(np.signbit(q), 0.0, 1.0), np.maximum(np.ceil(q), 0.0))
    n = _dim(cast(int_of_float(count), np.int64), "np.arange")
    first, second = cast(a, dt), cast(np.add(a, s), dt)
    i = cast(_iota(n), dt)
    y = np.where(np.equal(i, 0), first, np.where(np.equal(i, 1), second, np.add(
        first, np.multiply(i, np.subtract(second, first)))))   # (the first is start: -0.0 too)
    return _after_size_checks(y)


def _pinned_float(v):
    """A float bound of np.arange computed from sizes (``dx = 2.0 / (nx - 1)``): this call's
    value, guarded (the length depends on it)."""
    if isinstance(v, Proxy) and v.dtype.kind == "f":
        from .iteration import pinned_number
        n = pinned_number(v)
        return v if n is None else n
    return v


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             original, **kw):
    """NumPy's formula (``start + i * step``, the last point ``stop`` exactly) on traced
    scalar ends or a symbolic count; NumPy's own result when everything is concrete."""
    traced = [isinstance(v, Proxy) for v in (start, stop)]
    if not any(traced) and not is_dim(num) and not isinstance(num, Proxy):
        out = original(start, stop, num, endpoint, retstep, dtype, axis, **kw)
        return (asproxy(out[0]), out[1]) if retstep else asproxy(out)
    if axis != 0 or any(isinstance(v, Proxy) and v.ndim for v in (start, stop)):
        unsupported("np.linspace of array ends or with axis= on traced values")
    n = _dim(num, "np.linspace")
    if type(n) is int and n < 0:
        raise ValueError(f"Number of samples, {n}, must be non-negative.")
    sh = symbolic() if type(n) is not int else None   # a symbolic count: its cases guarded
    more = (lambda a, b: a > b) if sh is None else (lambda a, b: sh.less(b, a))
    div = n - 1 if endpoint else n
    a, b = asproxy(start), asproxy(stop)
    dt = np.result_type(*[_weak(v) for v in (start, stop)], 1.0)
    delta = np.subtract(cast(b, dt), cast(a, dt))
    y = cast(_iota(n), dt)
    if more(div, 0):
        step = np.divide(delta, size_operand(div))
        # NumPy divides first where the step underflows to zero
        y = np.where(np.equal(step, 0), np.multiply(np.divide(y, size_operand(div)), delta),
                     np.multiply(y, step))
    else:
        step = np.multiply(delta, np.nan)
        y = np.multiply(y, delta)
    y = np.add(y, cast(a, dt))
    if endpoint and more(n, 1):
        y[n - 1] = cast(b, dt)
    out_dt = dt if dtype is None else np.dtype(dtype)
    if out_dt.kind in "iu":
        y = np.floor(y)
    y = cast(y, out_dt)
    y = _after_size_checks(y)
    return (y, step) if retstep else y


def _weak(v):
    """``v`` for np.result_type: Python scalars (and traced ones) promote weakly."""
    if isinstance(v, Proxy):
        return v.dtype.type(0).item() if v.weak else v.dtype
    return v


def array(obj, dtype=None, *, original, **kw):
    """``np.array([a[0], s, 1.0])``: a list (nested) holding traced values, one array
    filled element by element (dtype as NumPy gives for the list's items)."""
    if hasattr(type(obj), "traced_array"):      # a list a compiled loop filled
        obj = obj.traced_array(dtype)
        if isinstance(obj, PendingSlice):   # (filled under a branch: a fresh array's first
            return obj                      # items, returned: no copy to be made)
    if isinstance(obj, Proxy):        # np.array copies, np.asarray does not
        if dtype is not None:
            r = cast(obj, dtype)
            return copy_of(r, scalar=False) if r.scalar else r
        copy = kw.get("copy", original.__name__ == "array")     # (np._CopyMode too:
        copy = copy is True or copy is np._CopyMode.ALWAYS          # scipy's asarray)
        return copy_of(obj, scalar=False) if copy or obj.scalar else \
            laid_out(obj, kw.get("order"))      # (a NumPy scalar: a 0-d array; a strided
                                                # argument asked for order="C": a copy)
    if not holds_proxy(obj):
        made = original(obj, dtype, **kw) if dtype is not None else original(obj, **kw)
        return _literal(obj, made)
    items = [asproxy(v) if isinstance(v, Proxy) else array(v, original=original)
             if isinstance(v, (list, tuple)) else asproxy(np.asarray(v)) for v in obj]
    shapes = {tuple(p.shape) for p in items}
    if len(shapes) != 1:
        raise ValueError(f"setting an array element with a sequence: the items have shapes "
                         f"{sorted(shapes)} (at {user_location()})")
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*[p.dtype for p in items])
    if dtype is None:
        from .concat import frames              # (np.array([x[k * hop:k * hop + n] ...]))
        framed = frames(items, 0)
        if framed is not None:
            return framed
    out = _full((len(items),) + shapes.pop(), 0, dt, "C", "np.array")
    for k, p in enumerate(items):
        out[k] = p
    return out


def _literal(obj, made):
    """``np.array([0.0, 0.0])`` of numbers in the function: an array of the program (as
    ``np.zeros(2)`` is), so a traced value can be stored into it and a compiled loop can
    update it (NumPy's array, a constant, would take the update once, while tracing); other
    objects (an array argument's copy, strings) stay NumPy's. Until it is updated, what
    needs its values while tracing (``np.quantile(x, np.array([0.1, 0.9]))``) has them."""
    if isinstance(obj, (list, tuple)) and isinstance(made, np.ndarray) and \
            made.dtype.kind in "biufc" and 0 < made.size <= LITERAL_ITEMS:
        return Literal(copy_of(asproxy(made), scalar=False).node, made)
    return made


class Literal(Proxy):
    """An array made from numbers in the function: traced, with its values at hand while
    nothing has updated it (``__array__``; ``holds_proxy`` sees a constant)."""

    def __init__(self, node, value):
        super().__init__(node)
        self.value = value

    def unchanged(self) -> bool:
        return self.version == 0 and self._base is None

    def __array__(self, dtype=None, copy=None):
        if not self.unchanged():
            return super().__array__(dtype, copy)
        return self.value.copy() if dtype is None else self.value.astype(dtype)

    def __getitem__(self, key):
        """An element at Python ints of an unchanged literal (``k[1, 2]`` of a filter's taps
        in a loop Python runs): its value, a constant of the program."""
        if self.unchanged() and all(type(k) is int for k in
                                    (key if isinstance(key, tuple) else (key,))):
            try:
                value = self.value[key]
            except IndexError:
                pass
            else:
                if not np.ndim(value):
                    r = wrap(as_node(value))
                    r.scalar = True
                    return r
        return Proxy.__getitem__(self, key)


LITERAL_ITEMS = 64      # (a longer literal list: a table, kept a constant)


def ascontiguousarray(a, dtype=None, *, original, **kw):
    """The array itself, or a copy of a view: NumPy copies a view only when its elements are
    not contiguous, so an update through the result of a view's is refused (proxy.update)."""
    if not holds_proxy(a):
        return original(a, dtype, **kw)
    r = laid_out(array(a, dtype, original=np.asarray), "C")
    if isinstance(a, Proxy) and a._base is not None and r is a:
        r = copy_of(a, scalar=False)
        r._sides = (f"the result of np.ascontiguousarray of a view (at {user_location()}: "
                    "the view itself where it is contiguous, else a copy)")
    return r if r.ndim else r.reshape(1)        # (at least one axis, as NumPy's)


def holds_proxy(obj) -> bool:
    if isinstance(obj, Proxy):
        return not (isinstance(obj, Literal) and obj.unchanged())
    return isinstance(obj, (list, tuple)) and any(holds_proxy(v) for v in obj)


# --------------------------------------------------------------------------- installation

_PLAIN = {"zeros": zeros, "ones": ones, "empty": empty, "full": full, "eye": eye,
          "identity": identity}
_WITH_ORIGINAL = {"arange": arange, "linspace": linspace, "array": array, "asarray": array,
                  "ascontiguousarray": ascontiguousarray}

replace.register(np, _PLAIN)
replace.register(np, _WITH_ORIGINAL, pass_original=True)


def fftfreq(n, d=1.0, *, original, **kw):
    """The sample frequencies of an FFT of ``n`` points, ``n`` a symbolic size too (NumPy's
    own steps: the integers times ``1 / (n * d)``, so the values are NumPy's bits)."""
    if not is_dim(n) or isinstance(n, int) or kw:
        return original(n, d, **kw)
    from .concat import join        # (concat makes its zeros here: imported when used)
    half = (n - 1) // 2 + 1
    ints = join([arange(half, original=np.arange), arange(-(n // 2), 0, original=np.arange)], 0)
    return ints * (1.0 / (size_proxy(n) * d))


def rfftfreq(n, d=1.0, *, original, **kw):
    if not is_dim(n) or isinstance(n, int) or kw:
        return original(n, d, **kw)
    return arange(n // 2 + 1, original=np.arange) * (1.0 / (size_proxy(n) * d))


replace.register(np.fft, {"fftfreq": fftfreq, "rfftfreq": rfftfreq}, pass_original=True)


# --------------------------------------------------------------------------- *_like

def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    a = a if type(a) is np.ndarray else asproxy(a)     # (NumPy's: its shape and dtype)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    shp = a.shape if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    value = as_node(_int_fill(fill_value, dt)) if isinstance(fill_value, Proxy) else None
    if value is not None:
        return wrap(broadcast_node(cast_node(value, dt), shp))
    scalar = make_node("const", (), (), dt, user_location(),
                       value=np.array(fill_value).astype(dt).item())
    return wrap(broadcast_node(scalar, shp))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None):
    return full_like(a, 0, dtype, shape=shape)


def empty_like(a, dtype=None, order="K", subok=True, shape=None):
    return _uninit(full_like(a, 0, dtype, shape=shape))


def ones_like(a, dtype=None, order="K", subok=True, shape=None):
    return full_like(a, 1, dtype, shape=shape)


def _of_numpy(like):
    """``np.zeros_like(X)`` in the function of a NumPy array (``np.mgrid``'s grid, a module
    table): an array of the program, as ``np.zeros(X.shape)`` is (NumPy's, updated in a
    compiled loop, would take the update once)."""
    def call(a, *args, original, **kw):
        if type(a) is np.ndarray and a.dtype.kind in "biufc" and not isinstance(
                kw.get("shape", None), Proxy):
            return like(a, *args, **kw)
        return original(a, *args, **kw)
    call.__name__ = like.__name__
    return call


replace.register(np, {"zeros_like": _of_numpy(zeros_like), "ones_like": _of_numpy(ones_like),
                      "empty_like": _of_numpy(empty_like), "full_like": _of_numpy(full_like)},
                 pass_original=True)
