"""Sizes of traced arrays: plain ints, or symbolic sizes in a dynamic trace or a loop body.

In: shapes and indices as the user's code gives them (ints, ``x.shape[0]`` as a ``SymInt``,
sympy expressions of size symbols and loop variables). Out: canonical shapes (tuples of
ints, or of sympy expressions once ``ir.shapes`` is active), broadcast results, the
(start, step, length) of a slice on a symbolic size (where NumPy clamps, the case of this
call is taken and guarded).

Static traces never import sympy: every helper takes the plain-int path first and reaches
``ir.shapes`` (which imports sympy) only when a size is symbolic.
"""
from __future__ import annotations

import contextlib
import sys

import numpy as np

from ..errors import out_of_bounds, user_location
from ..ir.graph import make_node, Node, run_time_size  # noqa: F401 (for the frontend)


# Dynamic shapes (shapes.py): sizes may be sympy expressions. Static traces never import
# sympy: every helper below takes the plain-int path first.

_SHAPES = "cppcodegen.ir.shapes"     # loaded (with sympy) only by a trace with symbolic sizes


def symbolic():
    from ..ir import shapes     # lazy: sympy stays off static traces and the warm path
    return shapes


def dynamic() -> bool:
    mod = sys.modules.get(_SHAPES)
    return mod is not None and mod.current() is not None


def current_env():
    """The trace's ``ShapeEnv`` (dynamic shapes, or made by a loop), or None."""
    mod = sys.modules.get(_SHAPES)
    return mod.current() if mod is not None else None


def loop_dependent(error) -> bool:
    """Is ``error`` a fact about sizes that holds in some iterations of a loop only?"""
    mod = sys.modules.get(_SHAPES)
    return mod is not None and isinstance(error, mod.LoopDependent)


def is_int(n) -> bool:
    """A Python or NumPy integer (not a bool): an int argument as NumPy takes it."""
    return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))


def is_dim(x) -> bool:
    """A symbolic size from the user's code (``x.shape[0]``) or the compiler."""
    mod = sys.modules.get(_SHAPES)
    return mod is not None and (isinstance(x, mod.SymInt) or hasattr(x, "free_symbols"))


def user_shape(shape):
    if all(type(d) is int for d in shape):
        return shape
    return tuple(symbolic().SymInt.wrap(d) for d in shape)


def user_dim(d):
    return d if type(d) is int else symbolic().SymInt.wrap(d)


def as_int(d) -> int:
    return d if type(d) is int else symbolic().as_int(d)


def canon_shape(shape) -> tuple:
    if all(type(d) is int for d in shape):
        return tuple(shape)
    if not dynamic():
        return tuple(int(d) for d in shape)
    return symbolic().canon_shape(shape)


def broadcast_sizes(*shapes):
    shapes = [canon_shape(s) for s in shapes]
    if all(type(d) is int for s in shapes for d in s):
        return np.broadcast_shapes(*shapes)
    from ..ir import broadcasting       # (sympy: lazily)
    return broadcasting.broadcast_shapes(*shapes)


def same_size(a, b) -> bool:
    return a == b if type(a) is int and type(b) is int else symbolic().equal(a, b)


def same_size_now(a, b) -> bool:
    """``same_size``, False where a compiled loop's iterations differ (undecidable)."""
    try:
        return same_size(a, b)
    except Exception as e:      # noqa: BLE001 -- LoopDependent
        if loop_dependent(e):
            return False
        raise


def fit(node: Node, shape) -> Node:
    """An operand whose derived symbolic size (``n0 - 9``) broadcasts as 1 in this call (a
    guarded fact): sliced to length 1 there, so lowering sees the broadcast. (Lengths from
    array values that broadcasting took as equal: checked when the program runs.)"""
    if all(type(d) is int for d in node.shape):
        return node
    from .dataslice import checked_equal
    node = checked_equal(node, shape)
    lead = len(shape) - node.ndim
    spec, fit = [], False
    for k, d in enumerate(node.shape):
        out = shape[lead + k]
        if type(d) is not int and not d.is_Symbol and d != out and \
                not same_size_now(d, out) and symbolic().equal(d, 1):  # (equal sizes: no
            # question whether one is 1, which may depend on a loop's iteration: x[i + 1:])
            spec.append((0, 1, 1))
            fit = True
        else:
            spec.append((0, 1, d))
    if not fit:
        return node
    return make_node("slice", (node,), [s[2] for s in spec], node.dtype, user_location(),
                     spec=tuple(spec))


def input_shape(spec, value, hints) -> tuple:
    """An input's shape from its dynamic spec: the names become size symbols."""
    sh = symbolic()
    out = []
    for name, size in zip(spec[2], value.shape):
        if isinstance(name, str):
            sym = sh.size_symbol(name)
            hints[sym] = size
            out.append(sym)
        else:
            out.append(name)
    return tuple(out)


def shape_env(env):
    """``with shape_env(env):`` a trace's shape environment: ``env``, or none at all (one
    left by an earlier trace must not decide this one's sizes); the caller's after."""
    if env is None and _SHAPES not in sys.modules:
        return contextlib.nullcontext()
    return symbolic().active(env)


def symbolic_index(ix, size, dim):
    """(start, step, length) of a slice or an int index on a symbolic size, as sympy
    expressions; where NumPy clamps, the case of this call is taken and guarded."""
    sh = symbolic()
    if not isinstance(ix, slice) and is_dim(ix):     # a[i] with i an induction variable
        i = sh.canon(ix)
        if sh.less(i, 0):
            i = sh.canon(size + i)
        if sh.less(i, 0) or not sh.less(i, size):
            raise out_of_bounds(_now(sh, ix), dim, _now(sh, size))
        return i, 1, 1
    if not isinstance(ix, slice):
        i = int(ix)
        if sh.less(i, 0) if i >= 0 else sh.less(size, -i):
            raise out_of_bounds(i, dim, sh.current().hint(size))
        if not (i < 0 or sh.less(i, size)):
            raise out_of_bounds(i, dim, sh.current().hint(size))
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
        if type(v) is int and step > 0:     # (v <= size: v itself, guarded so)
            return size if sh.less(size, v) else v
        if type(v) is int:
            return v if sh.less(v, size) else size - 1
        return v
    if step > 0:
        start, stop = bound(ix.start, 0), bound(ix.stop, size)
        length = stop - start
    else:
        start, stop = bound(ix.start, size - 1), bound(ix.stop, -1)
        length = start - stop
    length = sh.canon(length)
    if _empty(sh, length):
        return 0, step, 0
    if abs(step) > 1:
        length = sh.canon(sh.floordiv(length - 1, abs(step)) + 1)
    return sh.canon(start), step, length


def _now(sh, d):
    """A size or index's value in this call, for NumPy's words in an error."""
    try:
        return sh.current().hint(sh.canon(d))
    except Exception:       # noqa: BLE001 -- (a loop's index: no one value)
        return d


def _empty(sh, length) -> bool:
    """Is a slice of ``length`` (its bounds clamped) empty in this trace? A length that is 0
    in some iterations of a compiled loop and more in others, never below 0 (``U[i, i + 1:n]``
    of a back substitution over U with a column more than n: the first row's is empty), is
    one formula for every iteration, not a fact that depends on the iteration (LoopDependent:
    the loop was unrolled, its C++ growing with the square of n)."""
    try:
        return sh.less(length, 1)
    except sh.LoopDependent:
        if sh.less(length, 0):      # (negative in some iterations: LoopDependent again)
            raise
        return False
