"""Python control flow during a trace: the runtime that captured functions call.

In: the calls ``capture.convert`` put where the user wrote ``for``, ``while``, ``if``,
``x if c else y``, ``and``/``or``/``not`` and a few builtins. Out: plain Python behaviour when
the values involved are concrete; structured regions in the graph (``ir/graph.py``) when they
are traced: a loop over a range becomes one ``for`` node whatever its trip count, a branch
on an array value one ``if`` node, a ``while`` one ``while`` node (``carried.py`` traces
their bodies, ``iteration.py`` their induction variables).

``trace_function`` is the tracer's entry: it captures the function, traces it, and traces
it again with a loop unrolled (run by Python, as before loops were captured) each time one
cannot be captured.
"""
from __future__ import annotations

import builtins
import logging
import sys
import types

import numpy as np

from ..errors import TraceError, UnsupportedError, user_location
from ..ir.graph import make_node, NODES_MADE, REGION_EFFECTS
from . import pyflags, replace, solve, whileloops
from .proxy import as_node, cast, cast_node, is_weak, Proxy, size_operand, unsupported, wrap
from .reductions import selected_count
from .selection import is_selection
from .sizes import run_time_size
from .trace import budgeted, trace, TRACE_LOCK
from .capture import UNDEFINED, convert
from .carried import INTERNAL, Carried, Unroll
from .truth import as_scalar, is_traced, truth
from .pyints import int_of_float, int_of_uint64, operand
from .creation import ndarray_new
from .dataslice import OutsideLoop
from .listargs import one_array_arguments
from .pymath import builtin_pow
from .listbuffer import CountAppends
from .raises import bound, catching, user_error
from .parallel import independent_roles, parallel_roles
from .boolops import BoolOps
from .iteration import (PARALLEL_BODIES, prange, ConstantIter, constant_items, constant_numbers,
                        LoopRange, Enumerate, Zip, enter_loop, leave_loop, loop_spec,
                        size_proxy, spec_of, symbolic_int, varying_symbols)

log = logging.getLogger("cppcodegen")
_SHAPES = __package__.rpartition(".")[0] + ".ir.shapes"


UNROLL_TRIPS = 8        # a range of at most this many iterations, known when compiling,
UNROLL_BODIES = 16      # whose variable bounds slices is run by Python while tracing, while
                        # nested ones make at most this many copies of the innermost body
UNROLL_NODES = 5000     # a loop that could not be compiled, run by Python while tracing,
                        # may add this many graph nodes (a 300-step binomial tree that
                        # shrinks its array each step: ~2400 nodes, a 4 s build); beyond,
                        # the function is refused (the fallback runs it as Python)


class KeepLoop(Exception):
    """A small loop Python ran while tracing failed where a compiled one may not: traced
    again with it compiled (``where``: the loop's file:line, the exception's argument)."""
    where = property(lambda self: self.args[0])


def _small_trips(spec, extra_test, slices: bool) -> int:
    """The trip count of a loop Python runs while tracing, else 0: a plain ``range`` of at
    most UNROLL_TRIPS iterations whose variable bounds slices, or a loop over at most
    UNROLL_BODIES numbers known while tracing (constant tables: their values become the
    body's shifts and indices), with bounds known when compiling and no ``break``/``return``."""
    if spec.parallel or extra_test is not None or not all(
            isinstance(v, int) for v in (spec.start, spec.stop, spec.step)):
        return 0
    n = len(range(spec.start, spec.stop, spec.step))
    if type(spec) is LoopRange and slices:
        return n if 1 < n <= UNROLL_TRIPS else 0
    return n if 1 < n <= UNROLL_BODIES and constant_items(spec) else 0


class TraceOps(BoolOps):
    """What a captured function calls (as ``__ccg``) while it is traced."""

    UNDEFINED = UNDEFINED

    def __init__(self):
        self.unroll = {}            # loops (file:line) that Python runs (unrolled): why
        self.dropped = []           # loops whose temporaries (names written first in the body,
                                    # bound before it) were not carried, in trace order
        self.dropped_new = []       # loops that did not carry a name first bound in them
        self.carry_all = set()      # ... whose temporaries are read after them: carried
        self.loops = []             # the compiled loops being captured now, outermost first
        self.parent = {}            # a construct (file:line) -> the compiled loop around it
        self.copies = 1             # bodies the small loops Python runs make of one body
        self.keep = set()           # small loops (file:line) compiled as loops all the same

    # ----------------------------------------------------------------- builtins
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
        """``print`` of Python values prints while tracing; of traced ones it is refused
        (the fallback runs the function as plain Python, which prints them)."""
        if any(is_traced(a) or symbolic_int(a) for a in args):
            raise UnsupportedError(f"print() of array values inside a compiled function (at "
                                   f"{user_location()}): compiled code does not print")
        builtins.print(*args, **kw)

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
        return _scalar(x, np.float64, float)

    def int_(self, x=0, *base):
        if base or not is_traced(x):
            return builtins.int(x, *base)
        if isinstance(x, Proxy) and x.dtype.kind == "f" and not x.node.shape:
            x = int_of_float(x)         # (NaN, infinity: Python's errors)
        elif isinstance(x, Proxy) and x.dtype == np.uint64 and not x.node.shape:
            x = int_of_uint64(x)        # (past 2**63: Python's big int)
        elif isinstance(x, Proxy) and x.dtype.kind == "f":
            x = np.trunc(x)
        return _scalar(x, np.int64, int)

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
                return _scalar(x, np.complex128, builtins.complex)
            parts.append(_scalar(x, np.float64, float))
        nodes = [as_node(p, np.float64) for p in parts]
        return wrap(make_node("complex", tuple(nodes), (), np.dtype(np.complex128),
                              user_location()), weak=True, scalar=True)

    def range_(self, *args):
        if any(is_traced(a) or symbolic_int(a) for a in args):
            return LoopRange(*args)
        return builtins.range(*args)

    def enumerate_(self, it, start=0):
        if _compiled_iterable(it):
            return Enumerate(spec_of(it), start)
        return builtins.enumerate(it, start)

    def zip_(self, *its):
        if any(map(_compiled_iterable, its)):
            return Zip(*map(spec_of, its))
        return builtins.zip(*its)

    def reversed_(self, it):
        if isinstance(it, LoopRange):
            return it.reversed()
        if isinstance(it, builtins.range):
            return it[::-1]             # still a range: a compiled loop
        return builtins.reversed(it)

    @staticmethod
    def getitem(x, key):
        if isinstance(x, np.ndarray) and (is_traced(key) or isinstance(key, tuple) and
                                          any(is_traced(k) for k in key)):
            return wrap(as_node(x))[key]        # a constant table read at traced positions
        return x[key]

    def call(self, f, *args, **kwargs):
        if _is_prange(f):               # ours, or Numba's: the same promise
            return prange(*args, **kwargs)
        scalar_type = isinstance(f, type) and issubclass(f, np.number) and len(args) == 1 \
            and not kwargs
        x = size_operand(args[0]) if scalar_type and symbolic_int(args[0]) else \
            args[0] if scalar_type else None                # (np.uint32(i) of a loop's index)
        if isinstance(x, Proxy):
            if x.ndim:                  # np.float64(x) of a traced value: a cast of it
                raise TypeError(f"only 0-dimensional arrays can be converted to "
                                f"{f.__name__} (at {user_location()})")
            if issubclass(f, np.integer) and x.weak and x.dtype.kind in "iu":
                x = operand(x, np.dtype(f))     # np.uint8(v): NumPy's range check
            r = cast(x, f)
            r.scalar = True
            return r
        if f is np.ndarray:             # np.ndarray(shape, dtype): np.empty
            return ndarray_new(*args, **kwargs)
        if f in solve.ROUTINES and REGION_EFFECTS and \
                (operands := solve.prepare(f, args, kwargs)) is not None:
            return convert(solve.ROUTINES[f], self)(*operands)  # (in a loop: compiled code)
        f = replace.by_name(f)          # (from random import random: ours while tracing)
        args = one_array_arguments(f, args)     # (np.mean([a, b, c], axis=0))
        return ((convert(f, self) if _user_function(f) else None) or f)(*args, **kwargs)

    pow_ = staticmethod(builtin_pow)
    # ----------------------------------------------------------------- statements
    user_error = staticmethod(user_error)      # ``raise E`` (raises.py)
    bound = staticmethod(bound)                 # a read of a name that may be unbound
    counted_while = staticmethod(whileloops.counted_while)     # ``while i < n: ...; i += 1``

    def while_exit(self, start, stop, step):                    # (as a for: whileloops.py)
        return whileloops.while_exit(start, stop, step, self.max_)

    def if_stmt(self, test, then, orelse, get_state, set_state, names, where="", keep=()):
        t = truth(test)
        if isinstance(t, bool):
            return then() if t else orelse()
        self.parent[where] = self.loops[-1] if self.loops else None
        branches = Carried(names, get_state, set_state, where, keep=keep)
        then_region, else_region = branches.run([catching(then), catching(orelse)])
        node = make_node("if", (t.node,) + branches.inits() + branches.free, (), np.bool_,
                         where, then=then_region, orelse=else_region, ncarry=branches.ncarry)
        branches.finish(node)

    def _inside(self, where, trace_regions):
        """A compiled loop's regions (``_captured``), the loop known as the parent of the
        constructs inside it."""
        self.parent[where] = self.loops[-1] if self.loops else None
        self.loops.append(where)
        try:
            return _captured(where, trace_regions)
        finally:
            self.loops.pop()

    def while_stmt(self, cond, body, get_state, set_state, names, where="", entry=()):
        if where in self.unroll:
            while _concrete(cond(), where):
                body()
            return
        loop = Carried(names, get_state, set_state, where, entry=entry)
        regions = self._inside(where, lambda: loop.run([cond, body], test_first=True))
        if loop.never:                  # the condition is False before any iteration
            loop.restore()
            return
        cond_region, body_region = regions
        node = make_node("while", loop.inits() + loop.free, (), np.bool_, where,
                         cond=cond_region, body=body_region, ncarry=loop.ncarry)
        loop.finish(node)

    def for_stmt(self, iterable, body, get_state, set_state, names, extra_test=None, where="",
                 slices=False, fresh=(), entry=(), lists=(), unread=()):
        spec = loop_spec(iterable)
        if spec is None and where in self.unroll and constant_numbers(iterable):
            spec = ConstantIter(iterable)   # Python could not run it: a compiled loop
        elif spec is None or where in self.unroll:      # Python iterates
            if spec is not None and _data_bounds(spec):
                raise Unroll(where, "its bounds come from array values, which Python does not "
                             "know while tracing")
            start = NODES_MADE[0]
            for item in (iterable if spec is None else spec.python_items()):
                body(item)
                if extra_test is not None and not _concrete(extra_test(), where):
                    break
                if NODES_MADE[0] - start > UNROLL_NODES and where in self.unroll:
                    raise UnsupportedError(
                        f"the loop at {where} could not be compiled as a loop "
                        f"({self.unroll[where]}), and run by Python while tracing it makes a "
                        f"program of more than {UNROLL_NODES} operations, too large to "
                        "compile quickly")
            return
        trips = _small_trips(spec, extra_test, slices)
        if trips and self.copies * trips <= UNROLL_BODIES and where not in self.keep:
            # a few iterations known when compiling (a filter's taps): Python runs them, so
            # their array statements fuse into one pass (``out += w[k] * x[k:k + n]``)
            self.copies *= trips
            try:
                for item in spec.python_items():
                    body(item)
            except (Unroll, KeepLoop):
                raise
            except Exception as e:      # (a slice of run-time length needs its loop; an index
                raise KeepLoop(where) from e    # in a branch not taken): compiled after all
            finally:
                self.copies //= trips
            return
        loop = Carried(names, get_state, set_state, where,
                       () if where in self.carry_all else fresh, entry=entry)
        loop.private = lists        # (lists only the function sees: kept as arrays)
        var = enter_loop(spec)
        if extra_test is None and isinstance(spec.step, int):
            loop.induction = (spec, var.expr)       # (its carried arrays may shrink)

        def run_body():
            body(spec.item(var))
            return None if extra_test is None else extra_test()
        PARALLEL_BODIES[0] += spec.parallel
        try:
            (region,) = self._inside(where, lambda: loop.run(
                [run_body], continue_test=extra_test is not None))
        finally:
            leave_loop(var)
            PARALLEL_BODIES[0] -= spec.parallel
        attrs = {}
        if spec.parallel and spec.positive is None:
            raise UnsupportedError(f"prange at {where} with a step whose sign only the run "
                                   "decides; use range")
        if spec.parallel:
            attrs = {"parallel": parallel_roles(region, loop, extra_test, where, unread)}
        elif extra_test is None and not spec.single_trip() and spec.positive is not None:
            # (not the body of ``ONCE``, not a loop whose direction the run decides)
            confined: dict = {}
            roles = independent_roles(region, loop, var.expr, varying_symbols(), confined,
                                      spec)
            if roles is not None:       # proved: the threads may share it (when it pays;
                attrs = {"parallel": roles, "auto": True, "confined": tuple(   # an array read
                    (k,) + c for k, c in sorted(confined.items())),
                    "lanes": any(c[2] for c in confined.values())}  # ahead: lanes)
        if not isinstance(spec.step, int):  # range(i * i, n + 1, i): its direction
            attrs["up"] = spec.positive
        bounds = _data_bounds(spec)         # range(indptr[i], indptr[i + 1]): read at the start
        if bounds:
            attrs["bounds"] = tuple(str(sym) for sym, _ in bounds)
        node = make_node("for", loop.inits() + loop.free + tuple(n for _, n in bounds), (),
                         np.bool_, where,
                         var=str(var.expr), start=spec.start, stop=spec.stop, step=spec.step,
                         body=region, ncarry=loop.ncarry, test=extra_test is not None, **attrs)
        loop.finish(node)
        if loop.dropped_fresh:
            self.dropped.append(where)
        if loop.dropped_new:
            self.dropped_new.append(where)


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


def _data_bounds(spec) -> list:
    """(data symbol, the node computing it) of each bound of ``spec`` computed from array
    values (``iteration.data_size``)."""
    env = sys.modules[_SHAPES].current() if _SHAPES in sys.modules else None
    if env is None or not env.data:
        return []
    syms = set()
    for b in (spec.start, spec.stop, spec.step):
        syms |= getattr(b, "free_symbols", set()) & set(env.data)
    return [(sym, env.data[sym]) for sym in sorted(syms, key=str)]


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


def _inside_of(parent: dict, where, outer) -> bool:
    """Is the construct at ``where`` nested (at any depth) in the loop at ``outer``?"""
    seen = set()
    while where in parent and where not in seen:
        seen.add(where)
        where = parent[where]
        if where == outer:
            return True
    return False


def _captured(where, trace_regions):
    """The regions, or ``Unroll`` when the body cannot be captured: Python runs it then."""
    try:
        return trace_regions()
    except (Unroll, CountAppends):      # (a list appended to under a branch: for the loop
        raise                           # that holds it, listbuffer.py)
    except Exception as e:
        raise Unroll(where, f"{type(e).__name__}: {e}") from e


def _concrete(value, where) -> bool:
    t = truth(value)
    if not isinstance(t, bool):
        raise Unroll(where, "a traced condition in a loop that Python runs")
    return t


def _scalar(x, dtype, py):
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
    return _scalar(x, {"c": np.complex128, "f": np.float64}.get(kind, np.int64),
                   {"c": builtins.complex, "f": float}.get(kind, int))


def _compiled_iterable(it) -> bool:
    """Does a compiled loop run over ``it`` inside ``enumerate``/``zip``? What a ``for`` runs
    a compiled loop over (``iteration.loop_spec``: a traced range or array, the spec of one,
    a list a compiled loop filled), but a range of Python ints (Python zips it with lists)."""
    return not isinstance(it, builtins.range) and loop_spec(it) is not None


def _is_prange(f) -> bool:
    return f is prange or (getattr(f, "__name__", None) == "prange" and
                           (getattr(f, "__module__", "") or "").startswith("numba"))


def _user_function(f) -> bool:
    """A plain Python function of the user's (not NumPy's, not ours): its control flow is
    captured."""
    if not isinstance(f, types.FunctionType):
        return False
    mod = getattr(f, "__module__", "") or ""
    return not (mod.startswith(("numpy", "cppcodegen", "sympy")) or
                mod in ("builtins", "math", "operator", "functools"))


# --------------------------------------------------------------------------- the driver

def trace_function(fn, specs, args):
    """The Graph of ``fn`` on a call's arguments (``trace``) with its control flow captured;
    a loop that cannot be captured is unrolled (traced again with it marked) where Python can
    run it. Every backend and Dask trace through here, so all see the same graph."""
    ops = TraceOps()
    captured = convert(fn, ops) if _user_function(fn) else None
    shapes = sys.modules.get(_SHAPES)        # (not imported: no sympy on a warm start)
    saved = shapes.current() if shapes is not None else None
    with TRACE_LOCK:         # (INTERNAL is the trace's)
        try:
            if captured is None:
                return budgeted(fn, specs, args, UNROLL_NODES)
            return _trace_captured(trace, fn, captured, ops, specs, args, saved)
        except OutsideLoop as e:    # a slice of run-time length outside every loop: the
            ops = TraceOps()        # body in a compiled loop of one trip, where it can be
            once = convert(fn, ops, once=True) if _user_function(fn) else None
            if once is None:
                raise
            try:
                graph = _trace_captured(trace, fn, once, ops, specs, args, saved)
            except Exception as again:  # the slice's reason first
                graph = _pinned_bounds(trace, fn, specs, args, saved)
                if graph is None:
                    e.add_note(f"(traced again with the function's body in a compiled loop "
                               f"of one trip, it failed too: {type(again).__name__}: {again})")
                    raise e from None
            log.debug("%s traced with its body in a loop of one trip", fn.__qualname__)
            return graph


def _pinned_bounds(trace, fn, specs, args, saved):
    """The graph of ``fn`` traced with slice bounds outside loops computed from scalar
    arguments alone taken at this call's values (``creation.pinned_bound``: a variant per
    value), where the body could not be traced in a loop of one trip (``pad[:, r:r + w] =
    img`` with ``r = int(3 * sigma)`` before a loop over ``2 * r + 1`` taps); else None."""
    from .creation import PIN_BOUNDS
    ops = TraceOps()
    captured = convert(fn, ops)
    PIN_BOUNDS[0] = True
    try:
        return _trace_captured(trace, fn, captured, ops, specs, args, saved)
    except Exception:               # noqa: BLE001 -- the first reason is the one reported
        return None
    finally:
        PIN_BOUNDS[0] = False


def _trace_captured(trace, fn, captured, ops, specs, args, saved):
    try:
        for _ in range(64):
            INTERNAL.clear()
            ops.dropped.clear()
            ops.dropped_new.clear()
            try:
                graph = trace(captured, specs, args)
            except KeepLoop as k:
                if k.where in ops.keep:
                    raise k.__cause__ from None
                ops.keep.add(k.where)
                continue
            except Unroll as u:
                outer = ops.parent.get(u.where) if u.where in ops.unroll else None
                while outer is not None and outer in ops.unroll:
                    outer = ops.parent.get(outer)
                if outer is not None:   # (a branch on a loop's index around a NumPy call:
                    log.debug("loop at %s unrolled for %s", outer, u.where)    # Python runs
                    ops.unroll[outer] = f"{u.where} inside it: {u.reason}"      # the loop)
                    continue
                if u.where in ops.unroll:
                    raise UnsupportedError(
                        f"the loop at {u.where} cannot be compiled as a loop "
                        f"({ops.unroll[u.where]}) nor unrolled ({u.reason})") from u
                log.debug("loop at %s unrolled: %s", u.where, u.reason)
                for inner in [w for w in ops.unroll if _inside_of(ops.parent, w, u.where)]:
                    del ops.unroll[inner]   # (decided with u.where compiled: tried again)
                ops.unroll[u.where] = u.reason
                continue
            except UnboundLocalError as e:  # a loop's temporary read after it: carried after all
                fresh = [w for w in ops.dropped if w not in ops.carry_all]
                made = ops.dropped + ops.dropped_new
                if not fresh and made:      # (None or a tuple in Python: the call runs as
                    raise TraceError(f"{e} (the loop at {made[0]})") from e   # Python, which
                if not fresh:                                                 # may bind it)
                    raise
                ops.carry_all.update(fresh)
                continue
            except Exception as e:      # in a loop Python ran: say why it was not compiled
                error = TraceError(str(e)) if isinstance(e, CountAppends) else e
                for where, reason in ops.unroll.items():    # (CountAppends: no loop could
                    error.add_note(f"(the loop at {where} runs in Python while tracing, as "
                                   f"it could not be compiled as a loop: {reason})")
                if error is e:                              # count the items)
                    raise
                raise error from None
            finally:                # a loop may have made a shape environment: drop it
                shapes = sys.modules.get(_SHAPES)
                if shapes is not None:
                    shapes.set_current(saved)
            escaped = next((INTERNAL[id(n)][0] for n in graph.nodes if id(n) in INTERNAL), None)
            if escaped is None:
                return graph
            if escaped in ops.unroll:
                raise TraceError(f"a value computed in the loop at {escaped} is used outside it")
            ops.unroll[escaped] = "a value computed in it is used outside it"
        raise TraceError(f"{fn.__qualname__}: too many loops could not be compiled")
    finally:
        INTERNAL.clear()
