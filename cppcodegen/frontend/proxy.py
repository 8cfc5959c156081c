"""Traced arrays and their operands.

In: the values a traced function computes with: proxies, Python and NumPy scalars, constant
arrays, symbolic sizes. Out: graph nodes (``as_node``, ``cast_node``, ``broadcast_node``)
with NumPy's dtype rules (NEP 50: Python int and float are weak), and proxies around them.

A ``Proxy`` holds the node of an array's current value. Views keep the array they view
(``view_of``), so an in-place update (``update``) through either one shows in both, as in
NumPy; an argument updated in place is written back to the caller's array when the compiled
function returns. The ndarray interface (operators, methods, NumPy's protocols) is installed
on the class by ``ndarray.py``, which sits above the modules that implement it.
"""
from __future__ import annotations

import hashlib
import itertools
import warnings

import numpy as np

from ..errors import DataDependentError, TraceError, UnsupportedError, user_location
from ..ir.graph import complex_warning, MADE, make_node, Node, VIEW_OPS
from . import effects
from .sizes import (as_int, broadcast_sizes, canon_shape, fit, is_dim, same_size, symbolic,
                    user_dim, user_shape)


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

SERIALS = itertools.count()


class Proxy:
    """A traced array. ``weak`` marks a runtime Python scalar (NEP 50 weak promotion);
    ``scalar`` a NumPy scalar (what NumPy returns for a 0-d ufunc or reduction result and for
    ``x[i, j]`` of every axis): a value, not a view, and ``s op= y`` makes a new one."""

    __array_priority__ = 1000
    pyflag = None       # a 0-d bool proxy: is the value a Python number now (pyflags.py)
    intflag = None      # ... is the value a Python int now (a float that may hold one)
    noneflag = None     # a 0-d bool proxy: is a returned value None (nones.py)
    none_whole = False  # ... the tuple it is an item of None as a whole
    _sides = None       # why this name may or may not be the array an update should reach
                        # (a branch chose among arrays, a loop may rebind it: carried.py,
                        # swaps.py, control.py): an update in place through it is refused
    copied_from = None  # the error an update raises: the array is a copy standing for a view

    def __init__(self, node: Node, weak: bool = False):
        self._node = node
        self.weak = weak
        self.scalar = False
        self.arg = None         # an argument of the traced function: its index
        self.version = 0        # bumped by every in-place update
        self._base = None       # a view: (the array it views, that array's node then, the
                                # view nodes leading from that node to this one)
        self.serial = next(SERIALS)     # (made before a construct: a smaller one)

    @property
    def node(self) -> Node:
        if self._node is None:          # an array a compiled loop took over (carried.py)
            raise self._gone
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
    def _set_shape(self, shape):
        """``y.shape = n``: ``y`` becomes its reshape, a view as NumPy's in-place reshape
        is. (Where NumPy's would need a copy, ``x.T.shape = n``, NumPy raises; this does
        not: the trace does not know every view's layout.)"""
        from .views import reshape
        r = reshape(self, shape)
        base = r._base
        if base is not None and base[0] is self:    # (a view of what it was: of its base)
            base = None if self._base is None else \
                (self._base[0], self._base[1], tuple(self._base[2]) + tuple(base[2]))
        self._node, self._base = r.node, base

    shape = property(lambda self: user_shape(self.node.shape), _set_shape)
    dtype = property(lambda self: self.node.dtype)
    ndim = property(lambda self: self.node.ndim)
    size = property(lambda self: user_dim(self.node.size))
    itemsize = property(lambda self: self.node.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.node.dtype.itemsize)
    # .real / .imag: installed by complexes.py (views of a complex array's parts)

    def __len__(self):
        if not self.shape:
            raise TypeError(f"len() of unsized object (0-d traced array) at {user_location()}")
        return as_int(self.shape[0])

    def __repr__(self):
        return f"<traced array shape={self.shape} dtype={self.dtype}>"

    def __array__(self, dtype=None, copy=None):
        where, by = _converter()
        raise DataDependentError(
            f"a traced array was converted to a concrete NumPy array at {where}{by}; the "
            "value of an array is not known while the function is compiled. Use NumPy "
            "functions on the array instead of np.asarray / list conversions.")

    # --- value-dependent Python: refused with a clear message
    def _data_dependent(self, what):
        raise DataDependentError(
            f"{what} of a traced array at {user_location()}: Python control flow that depends "
            "on array values (data-dependent) cannot be compiled; use np.where(...) "
            f"or move the branch outside the compiled function.{_in_comprehension()}")

    def __bool__(self):
        self._data_dependent("bool()")

    def __float__(self):
        return float(self._pinned("float()", number=True))

    def __int__(self):
        return self._pinned("int()")

    def __index__(self):
        return self._pinned("using as an index/int the value")

    def _pinned(self, what, number=False):
        """A number of integer arguments and sizes: this call's value, guarded."""
        from .iteration import pinned_int, pinned_number
        v = pinned_number(self) if number else pinned_int(self)
        if v is None:
            self._data_dependent(what)
        return v

    def __complex__(self):
        self._data_dependent("complex()")

    def item(self, *args):
        """The Python number of one element: all of a one-element array, the ``k``-th in C
        order, or the one at an index tuple (NumPy's errors for other sizes and indices)."""
        from .builtin_calls import python_number
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if not args:
            if not isinstance(self.size, int):
                self._data_dependent(".item() of an array of run-time size")
            if self.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            return python_number(self)
        if len(args) == 1:
            return python_number(self.reshape(-1)[args[0]])
        if len(args) != self.ndim:
            raise ValueError("incorrect number of indices for array")
        return python_number(self[tuple(args)])

    def tolist(self):
        self._data_dependent(".tolist()")

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        n = self.shape[0]
        rows = range(n)
        if type(n) is not int and len(rows) > PYTHON_ROWS:
            raise UnsupportedError(         # (each row's index decided against the length:
                f"a loop Python runs over the {len(rows)} rows of an array whose length is "
                f"known only at run time (at {user_location()}): one compiled function per "
                f"length; iterate with `for v in x` or `for i in range(len(x))` in a loop "
                f"that compiles")          # seconds per row, for nothing)
        return (self[i] for i in rows)


PYTHON_ROWS = 64        # rows of a symbolic length Python iterates while tracing, at most


def unsupported(what):
    raise UnsupportedError(f"{what} is not supported by cppcodegen yet (at {user_location()})")


# --------------------------------------------------------------------------- operands

WEAK_TYPES = (int, float, complex)  # NEP 50: Python int, float, complex are weak; bool is np.bool_
_WEAK_KIND = {"i": int, "u": int, "f": float, "c": complex}


def is_weak(x) -> bool:
    return type(x) in WEAK_TYPES or (isinstance(x, Proxy) and x.weak) or is_dim(x)


def python_number(x) -> bool:
    """A Python number as the user's code has it: a Python int, float, bool or complex, a
    size, or a traced one (a weak 0-d value)."""
    return type(x) in (int, float, bool, complex) or is_dim(x) or \
        isinstance(x, Proxy) and x.weak and not x.node.shape


def descriptor(x):
    """What NumPy's promotion sees: a dtype, or a Python type for weak scalars."""
    if isinstance(x, Proxy):
        if x.weak and x.dtype.kind != "b":
            return _WEAK_KIND[x.dtype.kind]
        return x.dtype
    if type(x) is bool:
        return np.dtype(bool)
    if type(x) in WEAK_TYPES:
        return type(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    if is_dim(x):                  # a symbolic size (x.shape[0]) acts as a Python int
        return int
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
    elif is_dim(x):
        n = size_operand(symbolic().canon(x))
        if isinstance(n, int):
            return as_node(n, dtype)
        node = n.node
    else:
        descriptor(x)      # raises with a good message
        raise AssertionError
    if dtype is not None and node.dtype != np.dtype(dtype):
        node = cast_node(node, np.dtype(dtype))
    return node


def constant_array(x: np.ndarray, where: str) -> Node:
    if x.dtype.kind not in "biufc" or x.dtype.itemsize > 16:
        unsupported(f"arrays of dtype {x.dtype}")
    flat = x.reshape(-1)
    if x.size > 1 and x.size == np.count_nonzero(flat == flat[0]):
        scalar = make_node("const", (), (), x.dtype, where, value=flat[0].item())
        return broadcast_node(scalar, x.shape)
    return make_node("constant", (), x.shape, x.dtype, where, array=ConstArray(x))


def cast_node(node: Node, dtype: np.dtype) -> Node:
    if node.dtype == dtype:
        return node
    if node.op == "const":
        if node.dtype.kind == "c" and dtype.kind in "iuf":
            complex_warning()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            try:
                value = np.array(node.attr("value"), dtype=node.dtype).astype(dtype).item()
            except OverflowError:       # (a Python int argument past int64: 2**70)
                raise UnsupportedError(
                    f"the Python int {node.attr('value')} is past the int64 that compiled "
                    f"code keeps Python ints in (at {user_location()}); Python's have no "
                    "limit") from None
        return make_node("const", (), (), dtype, node.where, value=value)
    return make_node("cast", (node,), node.shape, dtype, user_location())


def broadcasts_to(shape, target) -> bool:
    """Does an array of ``shape`` broadcast to ``target`` (without growing it)?"""
    try:
        full = broadcast_sizes(shape, target)
    except ValueError:
        return False
    return len(full) == len(target) and all(same_size(a, b) for a, b in zip(full, target))


def broadcast_node(node: Node, shape) -> Node:
    shape = canon_shape(shape)
    if node.shape == shape:
        return node
    if not broadcasts_to(node.shape, shape):
        raise ValueError(f"cannot broadcast shape {node.shape} to {shape} "
                         f"(at {user_location()})")
    node = fit(node, shape)
    return make_node("broadcast_to", (node,) + bind_nodes(shape), shape, node.dtype,
                     user_location())


def bind_nodes(shape) -> tuple:
    """The ``bind`` nodes of the run-time slice lengths in ``shape`` (frontend/dataslice.py):
    a node of that shape made from a constant (``np.full``, an empty reduction's initial)
    takes them as trailing inputs, so they run before it."""
    env = symbolic().current() if any(not isinstance(d, int) for d in shape) else None
    if env is None or not env.data or not MADE:
        return ()
    syms = set().union(*(getattr(d, "free_symbols", set()) for d in shape))
    binds = [env.data[s] for s in sorted(syms, key=str)
             if env.data.get(s) is not None and env.data[s].op == "bind"]
    return tuple(b for b in binds if any(id(b) in made for made in MADE))  # (of an open
                                                                # region: not one traced before)


def broadcast_operands(operands, what):
    shapes = [x.node.shape if isinstance(x, Proxy) else x.shape
              if isinstance(x, (np.ndarray, np.generic)) else () for x in operands]
    try:
        return broadcast_sizes(*shapes)
    except ValueError:
        raise ValueError(f"{what}: operands could not be broadcast together with shapes "
                         f"{' '.join(map(str, shapes))} (at {user_location()})") from None


def wrap(node: Node, weak=False, scalar=False) -> Proxy:
    p = Proxy(node, weak)
    p.scalar = scalar
    return p


def own(node: Node) -> Node:
    """``node``, or for an argument (or a loop's carried value) an identity view of it: a
    value of its own, so that a later update of the argument does not show in it (and the
    result is not the caller's array; ``g = filled.copy(); g |= ...`` in a loop is a new
    array, not an update of the carried ``filled``)."""
    return _identity(node) if node.op in ("input", "carry") else node


def _identity(node: Node) -> Node:
    """A value of its own with ``node``'s elements (an identity view, no copy)."""
    return make_node("transpose", (node,), node.shape, node.dtype, user_location(),
                     perm=tuple(range(node.ndim)))


def copy_of(a: Proxy, scalar=None) -> Proxy:

    """A copy: a new array with ``a``'s value now (a NumPy scalar's copy is a scalar unless
    ``scalar`` says otherwise: np.copy and np.array make 0-d arrays). In a loop's or a
    branch's body a copy of an array made before it is a node of the body (an identity
    view), so updates of the copy are the body's own, not the earlier array's."""
    node = own(a.node)
    if MADE and node is a.node and a.node.shape and not any(id(node) in m for m in MADE):
        node = _identity(node)
    elif node is a.node and node.op in VIEW_OPS and node.shape:
        node = _identity(node)      # (x[:, ::2].copy() returned: not a view of x)
    return wrap(node, a.weak, a.scalar if scalar is None else scalar)


def laid_out(a, order="K"):
    """``a``, or a copy of it where ``a`` is an argument whose layout is not the one ``order``
    asks for ("C", "F"; NumPy copies then: ``np.ascontiguousarray(x)`` of a strided x is
    not x). The build is for the argument's layout, so this is decided while tracing."""
    from .externs import TraceState
    if order not in ("C", "F") or not isinstance(a, Proxy) or a.arg is None or \
            TraceState.args is None or not isinstance(TraceState.args[a.arg], np.ndarray):
        return a
    flags = TraceState.args[a.arg].flags
    return a if (flags.c_contiguous if order == "C" else flags.f_contiguous) else \
        copy_of(a, scalar=False)


def view_of(base: Proxy, node: Node) -> Proxy:
    """A view of ``base`` (NumPy would alias the memory): it sees later in-place updates of
    ``base``, and writing into it writes into ``base``."""
    view = Proxy(node, base.weak)
    view._base = (base, base.node, _view_chain(base.node, node))
    return view


def _view_chain(base_node: Node, node: Node) -> tuple:
    """The view nodes (reshape, transpose, broadcast_to, slice, gather of a NumPy integer)
    from ``base_node`` to ``node``."""
    chain = []
    while node is not base_node:
        chain.append(node)
        node = node.inputs[0]
    return tuple(reversed(chain))


def _replay(chain, node: Node) -> Node:
    for v in chain:         # (a gather's index and a slice's bind nodes as they were)
        node = make_node(v.op, (node,) + v.inputs[1:], v.shape, v.dtype, v.where,
                         **dict(v.attrs))
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
        return make_node("setitem", (below, new) + v.inputs[1:], below.shape, below.dtype,
                         where, spec=spec, region=tuple(new.shape))   # (+ its bind nodes)
    if v.op == "gather":                # A[k] with a NumPy integer k (indexing.py)
        return make_node("scatter", (below, new) + v.inputs[1:], below.shape, below.dtype,
                         where, axis=v.attr("axis"), accumulate=None)
    if v.op in ("real", "imag"):       # x.real / x.imag written: x with that part replaced
        new = cast_node(new, v.dtype)
        other = make_node("imag" if v.op == "real" else "real", (below,), below.shape, v.dtype,
                          where)
        parts = (new, other) if v.op == "real" else (other, new)
        return make_node("complex", parts, below.shape, below.dtype, where)
    raise ValueError(f"assignment destination is read-only: a broadcast view is written "
                     f"(at {user_location()})")


def _store_through(v: Node, below: Node, new: Node, view: Node):
    """``new``, a store into a region of the view (``y[i] = -y[i]`` with ``y = x[1:]``, a
    row ``r = A[i]`` with ``r[k:] -= f * p[k:]``), as the same store into the array under a
    slice or under a reshape that only drops unit axes, else None. Written as "the view with
    its region replaced, stored over the view's region" it copies the whole view per
    store: an element loop through a view took time quadratic in its length."""
    from ..ir.shapes import identical   # (while tracing: import cppcodegen loads no sympy)
    if new.op != "setitem" or not _same_value(new.inputs[0], view):
        return None
    spec = list(new.attr("spec"))
    if v.op == "reshape":               # (A[i]: a slice of one row, its unit axis dropped)
        full, sizes = [], list(v.shape)
        for d in below.shape:
            if sizes and identical(d, sizes[0]):
                full.append(spec.pop(0))
                sizes.pop(0)
            elif d == 1:
                full.append(("i", 0))
            else:
                return None
        if sizes:
            return None
        spec = full
    elif v.op == "slice":
        spec = [(("i", s0 + st0 * sp[1]) if sp[0] == "i" else
                 ("s", s0 + st0 * sp[1], st0 * sp[2], sp[3]))
                for (s0, st0, _), sp in zip(v.attr("spec"), spec)]
    else:
        return None
    binds = tuple(dict.fromkeys(v.inputs[1:] + new.inputs[2:]))
    return make_node("setitem", (below, new.inputs[1]) + binds, below.shape, below.dtype,
                     new.where, spec=tuple(spec), region=new.attr("region"))


def _same_value(a: Node, b: Node) -> bool:
    """Are ``a`` and ``b`` one value: the same node, or the same views of one node?"""
    return a is b or (a.op == b.op and a.op in ("slice", "reshape", "transpose") and
                      a.shape == b.shape and dict(a.attrs) == dict(b.attrs) and
                      len(a.inputs) == len(b.inputs) and
                      all(_same_value(x, y) for x, y in zip(a.inputs, b.inputs)))


def _in_comprehension() -> str:
    """A hint where the value is tested in a comprehension's ``if`` (``[i for i in
    range(n) if sieve[i]]``): the loop it stands for compiles."""
    import sys
    from ..errors import _users
    frame = sys._getframe(2)
    while frame is not None and not _users(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is not None and frame.f_code.co_name in ("<listcomp>", "<genexpr>", "<setcomp>",
                                                     "<dictcomp>"):
        return (f" It is tested in a comprehension ({frame.f_code.co_name}), which Python "
                "runs while tracing: write it as a for loop that appends to a list made by "
                "name = [] (compiled), or select with a mask (x[mask], np.nonzero(mask)[0]).")
    return ""


def _converter() -> tuple:
    """(the user's line, who asked for the values): a library that takes NumPy arrays only
    (numpy.ma's masked arrays, scipy), named in the message, the line the user's code
    called it from (``scipy.stats.norm.cdf(d1)``: the user's line, not scipy's)."""
    import sys
    from ..errors import _users
    frame, lib = sys._getframe(2), None
    while frame is not None:
        module = frame.f_globals.get("__name__", "") or ""
        if module.startswith(("numpy.ma", "scipy", "pandas", "numba")):
            top = module.split(".")[0] + (".ma" if module.startswith("numpy.ma") else "")
            lib = (f" by {top} ({module}.{frame.f_code.co_name}, at "
                   f"{frame.f_code.co_filename}:{frame.f_lineno}), which is not compiled")
        elif lib is not None and _users(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}", lib
        frame = frame.f_back
    return user_location(), lib or ""


def update(a: Proxy, node: Node):
    """``a`` now holds ``node`` (its shape and dtype): an in-place update. Through a view it
    updates the viewed array (and so every other view of it); on an argument the caller's
    array is written when the compiled function returns (see ``lower.Lowering.writebacks``)."""
    if a.weak:
        raise TypeError(f"cannot assign into a Python scalar (at {user_location()})")
    if a._sides is not None:
        raise TraceError(f"{a._sides} is updated in place (at {user_location()}): the update "
                         "would reach one array or another depending on the run; copy "
                         "the array where the name is bound (y = x.copy()) or update the "
                         "arrays by their own names")
    if getattr(a, "readonly", False):       # the imaginary part of a real array
        raise ValueError(f"assignment destination is read-only (at {user_location()})")
    if a.copied_from is not None:       # a copy standing for a view (dataslice.PendingSlice)
        raise a.copied_from
    if a._base is not None:
        base, _, chain = a._base
        levels = [base.node]
        for v in chain:
            levels.append(_replay((v,), levels[-1]))
        new, direct = node, True
        for k in reversed(range(len(chain))):
            through = _store_through(chain[k], levels[k], new, levels[k + 1])
            direct = direct and through is not None
            new = through if through is not None else _unview(chain[k], levels[k], new)
        update(base, new)
        a._base = (base, base.node, chain)
        if direct:                  # (the store reached the array itself: the view is its
            node = _replay(chain, base.node)    # view again, for the next store through it)
    if effects.UPDATED:           # (a loop body or branch being traced records it)
        effects.note_update(a, a._node)
    a._node = node
    a.version += 1


def store_result(target: Proxy, result: Proxy, name: str):
    """``result`` written into ``target`` as a ufunc's ``out=`` (same_kind casting)."""
    if not np.can_cast(result.dtype, target.dtype, "same_kind"):
        ufunc = getattr(np, name, None)
        if isinstance(ufunc, np.ufunc) and ufunc.nout == 1:
            try:                    # NumPy's own error (a UFuncTypeError), raised by NumPy
                ufunc(*[np.zeros(1, result.dtype)] * ufunc.nin, out=np.zeros(1, target.dtype))
            except TypeError as e:
                e.add_note(f"(at {user_location()})")
                raise
        raise TypeError(f"Cannot cast ufunc '{name}' output from {result.dtype!r} "
                        f"to {target.dtype!r} with casting rule 'same_kind' "
                        f"(at {user_location()})")
    if not broadcasts_to(result.shape, target.shape):
        raise ValueError(f"non-broadcastable output operand with shape {target.shape} doesn't "
                         f"match the broadcast shape {result.shape} (at {user_location()})")
    update(target, broadcast_node(cast_node(result.node, target.dtype), target.shape))



def asproxy(x) -> Proxy:
    if isinstance(x, Proxy):
        return x
    if hasattr(type(x), "traced_array"):    # a list a compiled loop filled (listbuffer.py)
        return x.traced_array()
    return wrap(as_node(x), is_weak(x))


def cast(x, dtype) -> Proxy:
    x = asproxy(x)
    return wrap(cast_node(x.node, np.dtype(dtype)), scalar=x.scalar)


def size_operand(n):
    """A count of elements as an operand: a Python int, or a weak int64 node of its expression."""
    if type(n) is int:
        return n
    expr = symbolic().canon(n)          # (a slice's run-time length: after its bind nodes)
    return wrap(make_node("size", bind_nodes((expr,)), (), np.int64, user_location(),
                          expr=expr), weak=True)
