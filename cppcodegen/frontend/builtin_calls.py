"""Python's builtins called on traced values while a captured function is traced.

In: ``max``/``min``/``abs``/``len``/``any``/``all``/``print``/``float``/``int``/``bool``/
``complex`` as the user wrote them (``capture`` routes the builtins through the ops object:
``__ccg.max_(...)``). Out: what Python would give on concrete values, and traced values (or
symbolic sizes) with Python's semantics on traced ones: the first of equal items, the kind
of number Python keeps, its errors.
"""
from __future__ import annotations

import builtins
import sys

import numpy as np

from ..errors import user_location
from ..ir.graph import make_node
from . import pyflags
from .iteration import PARALLEL_BODIES, size_proxy, symbolic_int
from .printing import print_call
from .proxy import as_node, cast_node, is_weak, Proxy, unsupported, wrap
from .pyints import int_of_float, int_of_uint64
from .reductions import selected_count
from .selection import is_selection
from .sizes import run_time_size
from .truth import as_scalar, is_traced, truth

_SHAPES = __package__.rpartition(".")[0] + ".ir.shapes"


class BuiltinCalls:
    """The builtins of the ops object (``control.TraceOps``)."""

    def max_(self, *args, **kw):
        return self._extreme(builtins.max, np.greater, args, kw)

    def min_(self, *args, **kw):
        return self._extreme(builtins.min, np.less, args, kw)

    @staticmethod
    def _extreme(py, better, args, kw):
        items = args[0] if len(args) == 1 else args
        if isinstance(items, Proxy) and items.ndim == 1 and not kw:
            return _extreme_of_elements(items, py is builtins.max)
        if kw or not isinstance(items, (list, tuple)) or not any(map(is_traced, items)):
            return py(*args, **kw)
        if all(symbolic_int(v) or isinstance(v, (int, np.integer)) for v in items):
            return _symbolic(py, items)     # min(i + 1, n - 1): still an index expression
        best = items[0]
        for v in items[1:]:          # Python keeps the first of equal values, and the kind of
            t = better(v, best)      # number the winner is (max(s, 1.0): a Python float; in a
            out = np.where(t, v, best)[()]      # prange, a NumPy value, as in Numba: blocks
            best = out if PARALLEL_BODIES[0] else pyflags.chosen(t, v, best, out)   # reduce)
        if all(is_weak(v) for v in items):
            best.weak = True            # of Python numbers: a Python number
        return best

    def any_(self, it):
        return self._truth_of_items(it, builtins.any, np.any)

    def all_(self, it):
        return self._truth_of_items(it, builtins.all, np.all)

    def _truth_of_items(self, it, py, reduce):
        """``any(x)`` / ``all(x)`` of a traced array: Python asks each row's truth, so a 1-D
        array (rows of one element) is ``bool(x.any())``; longer rows raise NumPy's error."""
        if not isinstance(it, Proxy):
            return py(it)
        if not it.ndim:
            raise TypeError("iteration over a 0-d array")
        rows, inner = it.shape[0], it.shape[1:]
        if any(d != 1 for d in inner) and rows != 0:
            if not all(isinstance(d, int) for d in (rows, *inner)):
                unsupported(f"{py.__name__}() of a traced array with rows of run-time size")
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return self.bool_(reduce(it))

    @staticmethod
    def print_(*args, **kw):
        """``print``: a step of the program, printing when it runs (printing.py)."""
        print_call(*args, **kw)

    @staticmethod
    def abs_(x):
        return _symbolic(builtins.abs, (x,)) if symbolic_int(x) else builtins.abs(x)

    @staticmethod
    def len_(x):
        if is_selection(x):             # len(x[mask]): the mask's count, a traced int
            return selected_count(x)
        if hasattr(type(x), "traced_array"):    # a list a compiled loop filled
            return x.length()
        if isinstance(x, Proxy) and x.ndim:
            return x.shape[0]           # a symbolic size (a dynamic argument, len(a[lo:hi]) in
        return builtins.len(x)          # a loop) stays one: len() would pin it to an int

    def float_(self, x=0.0):
        return scalar_of(x, np.float64, float)

    def int_(self, x=0, *base):
        if base or not is_traced(x):
            return builtins.int(x, *base)
        if isinstance(x, Proxy) and x.dtype.kind == "f" and not x.node.shape:
            x = int_of_float(x)         # (NaN, infinity: Python's errors)
        elif isinstance(x, Proxy) and x.dtype == np.uint64 and not x.node.shape:
            x = int_of_uint64(x)        # (past 2**63: Python's big int)
        elif isinstance(x, Proxy) and x.dtype.kind == "f":
            x = np.trunc(x)
        return scalar_of(x, np.int64, int)

    def bool_(self, x=False):
        t = truth(x)        # (a Python bool of a traced value: weak, returned as a bool)
        return wrap(t.node, weak=True, scalar=True) if isinstance(t, Proxy) else t

    def complex_(self, real=0.0, imag=None):
        """complex(re, im) of traced real scalars: a complex128 value made of its two parts
        (re + 1j * im would multiply: 1j * inf is nan+infj); complex(z) of a complex one."""
        if not is_traced(real) and not is_traced(imag):
            return builtins.complex(real) if imag is None else builtins.complex(real, imag)
        parts = []
        for x in (real, 0.0 if imag is None else imag):
            if isinstance(x, Proxy) and x.dtype.kind == "c":
                if imag is not None:
                    unsupported("complex(a, b) with a complex part")
                return scalar_of(x, np.complex128, builtins.complex)
            parts.append(scalar_of(x, np.float64, float))
        nodes = [as_node(p, np.float64) for p in parts]
        return wrap(make_node("complex", tuple(nodes), (), np.dtype(np.complex128),
                              user_location()), weak=True, scalar=True)


def _symbolic(py, items):
    """min/max/abs of loop indices and sizes (ints among them) as a symbolic int: sympy's
    Min/Max (abs(x) = Max(x, -x)), rendered std::min/std::max. (As a traced value, each use
    as an index or a bound would be a value known only when the loop runs: a loop around it
    was unrolled instead.)"""
    import sympy
    sh = sys.modules[_SHAPES]
    exprs = [sh.canon(v) for v in items]
    if py is builtins.abs:
        return sh.SymInt.wrap(sympy.Max(exprs[0], -exprs[0]))
    return sh.SymInt.wrap((sympy.Max if py is builtins.max else sympy.Min)(*exprs))


def _extreme_of_elements(x, largest: bool):
    """Python's max(x)/min(x) of a 1-d array's elements: the first one, replaced by each
    greater (smaller) one, so a NaN first stays and any other NaN is passed over: NumPy's
    nanmax/nanmin of the elements unless the first is NaN."""
    if x.node.shape[0] == 0:
        raise ValueError(f"{'max' if largest else 'min'}() iterable argument is empty")
    best = (np.max if largest else np.min)(x) if x.dtype.kind not in "fc" else \
        np.where(np.isnan(x[0]), x[0], (np.nanmax if largest else np.nanmin)(x))
    r = best[()] if isinstance(best, Proxy) else best
    r.scalar = True
    return r


def scalar_of(x, dtype, py):
    """float(x) / int(x): a Python number of a concrete value, a traced scalar otherwise."""
    if symbolic_int(x) and run_time_size(x.expr):     # (a loop index, a run-time length)
        x = size_proxy(x.expr)
    if not isinstance(x, Proxy):
        return py(x)
    if x.node.shape and any(d != 1 for d in x.node.shape):
        raise TypeError("only length-1 arrays can be converted to Python scalars")
    return wrap(cast_node(as_scalar(x).node, np.dtype(dtype)), weak=True, scalar=True)


def python_number(x):
    """``x.item()``: the Python number of a one-element traced array, by its kind (bool, int,
    float or complex), as ``bool()``/``int()``/``float()``/``complex()`` make it."""
    kind = x.dtype.kind
    if kind == "b":
        return wrap(as_scalar(x).node, weak=True, scalar=True)
    return scalar_of(x, {"c": np.complex128, "f": np.float64}.get(kind, np.int64),
                   {"c": builtins.complex, "f": float}.get(kind, int))
