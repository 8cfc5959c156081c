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
import copy
import logging
import sys

import numpy as np

from ..errors import TraceError, UnsupportedError, user_location
from ..ir.graph import make_node, NODES_MADE, REGION_EFFECTS
from . import dictlocals, nones, products, pystate, replace, solve, whileloops, worklists
from .proxy import as_node, cast, Proxy, size_operand, wrap
from .trace import budgeted, trace, TRACE_LOCK
from .capture import UNDEFINED, convert, user_function
from .carried import INTERNAL, Carried, Unroll
from .carried_types import Peel, PEELS
from .truth import is_traced, truth
from .pyints import operand
from .creation import ndarray_new, PIN_BOUNDS
from .dataslice import COPIED, OutsideLoop
from .listargs import one_array_arguments
from .pymath import builtin_pow
from .listbuffer import CountAppends
from .printing import formatted, refuse_formatted
from .raises import bound, catching, user_error
from .trying import enter_try, leave_try, try_handler
from .parallel import independent_roles, parallel_roles
from .boolops import BoolOps
from .builtin_calls import BuiltinCalls
from .iteration import (PARALLEL_BODIES, prange, ConstantIter, constant_items, constant_numbers,
                        LoopRange, Enumerate, Zip, enter_loop, leave_loop, loop_spec,
                        spec_of, symbolic_int, varying_symbols)

log = logging.getLogger("cppcodegen")
_SHAPES = __package__.rpartition(".")[0] + ".ir.shapes"


UNROLL_TRIPS = 8        # a range of at most this many iterations, known when compiling,
UNROLL_BODIES = 16      # whose variable bounds slices is run by Python while tracing, while
                        # nested ones make at most this many copies of the innermost body
MAX_RECURSION = 24      # calls of a function inside itself while tracing (fib(10) of an int)
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


class TraceOps(BuiltinCalls, BoolOps):
    """What a captured function calls (as ``__ccg``) while it is traced."""

    UNDEFINED = UNDEFINED
    enter_try, try_handler, leave_try = map(staticmethod, (enter_try, try_handler, leave_try))
    MISSING, dict_item, dict_of = dictlocals.MISSING, staticmethod(dictlocals.dict_item), \
        staticmethod(dictlocals.dict_of)

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
        self.peel = {}              # loop (file:line) -> its first iterations Python runs
        self.inlined = {}           # the user's functions being traced now: how many calls deep

    def range_(self, *args):
        if any(is_traced(a) or symbolic_int(a) for a in args):
            return LoopRange(*args)
        return builtins.range(*args)

    def product_iters(self, callee, args, k):      # (np.ndindex: products.py)
        return products.product_iters(callee, args, k, self.range_)

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
        if isinstance(x, (tuple, list)) and is_traced(key) and x and \
                len({type(v) for v in x}) == 1 and type(x[0]) in (int, float):
            r = wrap(as_node(np.asarray(x)))[key]   # ``dims[i]`` of a tuple of numbers: a
            if isinstance(r, Proxy) and not r.shape:    # table, its items Python numbers
                r.weak = True
            return r
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
        if type(f).__hash__ is not None and f in solve.ROUTINES and REGION_EFFECTS and \
                (operands := solve.prepare(f, args, kwargs)) is not None:
            return convert(solve.ROUTINES[f], self)(*operands)  # (in a loop: compiled code)
        f = replace.by_name(f)          # (from random import random: ours while tracing)
        f = python_of(f)                # (a @numba.njit helper: its Python function)
        pystate.calling(f, args)        # (Python state it changes: not in a compiled body)
        args = one_array_arguments(f, args)     # (np.mean([a, b, c], axis=0))
        if not user_function(f):
            return f(*args, **kwargs)
        depth = self.inlined.get(f, 0)      # (a helper is traced where it is called)
        if depth >= MAX_RECURSION:
            raise UnsupportedError(
                f"{f.__qualname__} calls itself more than {MAX_RECURSION} levels deep (at "
                f"{user_location()}): the functions a compiled function calls are traced "
                "into it, so a recursion whose depth depends on values cannot be compiled; "
                "write it as a loop (with an explicit stack of the pending calls)")
        self.inlined[f] = depth + 1
        try:
            return (convert(f, self) or f)(*args, **kwargs)
        finally:
            self.inlined[f] = depth

    pow_ = staticmethod(builtin_pow)
    # ----------------------------------------------------------------- statements
    user_error = staticmethod(user_error)      # ``raise E`` (raises.py)
    bound = staticmethod(bound)                 # a read of a name that may be unbound
    is_none = staticmethod(nones.is_none)       # reads of a name that may be None

    def maybe_none(self, value, flag, name):
        return nones.maybe_none(value, flag, name, helper=any(self.inlined.values()))
    some = staticmethod(nones.some)
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

    def while_stmt(self, cond, body, get_state, set_state, names, where="", entry=(),
                   lists=()):
        if where in self.unroll:
            while _concrete(cond(), where):
                body()
            return
        loops = []

        def traced():
            loops.append(Carried(names, get_state, set_state, where, entry=entry))
            try:
                return self._inside(where, lambda: loops[-1].run([cond, body], test_first=True))
            except worklists.Learned:   # (traced again: what it carries as it was)
                loops[-1].restore()
                raise
        regions = worklists.learning(names, get_state, set_state, lists, where, traced)
        loop = loops[-1]
        if loop.never:                  # the condition is False before any iteration
            loop.restore()
            return
        cond_region, body_region = regions
        node = make_node("while", loop.inits() + loop.free, (), np.bool_, where,
                         cond=cond_region, body=body_region, ncarry=loop.ncarry)
        loop.finish(node)

    def for_stmt(self, iterable, body, get_state, set_state, names, extra_test=None, where="",
                 slices=False, fresh=(), entry=(), lists=(), unread=(), stacks=()):
        return worklists.learning(      # (the lists it pops kept as arrays: worklists.py)
            names, get_state, set_state, stacks, where, lambda: self._for_stmt(
                iterable, body, get_state, set_state, names, extra_test, where, slices, fresh,
                entry, lists, unread))

    def _for_stmt(self, iterable, body, get_state, set_state, names, extra_test, where,
                  slices, fresh, entry, lists, unread):
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
            except (Unroll, KeepLoop, Peel):
                raise
            except Exception as e:      # (a slice of run-time length needs its loop; an index
                raise KeepLoop(where) from e    # in a branch not taken): compiled after all
            finally:
                self.copies //= trips
            return
        if where in self.peel and extra_test is None:
            spec = _peeled(spec, body, self.peel[where])
            if spec is None:            # no iteration in this call (guarded): no loop
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
        except worklists.Learned:       # (traced again: the arrays it carries as they were)
            loop.restore()
            raise
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


def _peeled(spec, body, count: int):
    """``spec`` after its first ``count`` iterations, which Python runs now (its values widen:
    ``Peel``); None where no iteration is left in this call (guarded: nor in any call the
    build serves)."""
    from .sizes import symbolic
    for _ in range(count):
        first, stop = spec.first, spec.stop
        runs = first < stop if spec.positive else first > stop
        if not isinstance(runs, bool):
            runs = symbolic().less(first, stop) if spec.positive else \
                symbolic().less(stop, first)
        if not runs:
            return None
        body(spec.item(first))
        spec = copy.copy(spec)
        spec.start = first + spec.step
    return spec


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
    except (Unroll, CountAppends, Peel, worklists.Learned,     # (a list appended to under a
            OutsideLoop):                   # branch: for the loop that holds it, listbuffer.py;
        raise                               # a slice made before the loop: the whole body
                                            # traced again in a loop of one trip)
    except Exception as e:
        raise Unroll(where, f"{type(e).__name__}: {e}") from e


def _concrete(value, where) -> bool:
    t = truth(value)
    if not isinstance(t, bool):
        raise Unroll(where, "a traced condition in a loop that Python runs")
    return t


def _compiled_iterable(it) -> bool:
    """Does a compiled loop run over ``it`` inside ``enumerate``/``zip``? What a ``for`` runs
    a compiled loop over (``iteration.loop_spec``: a traced range or array, the spec of one,
    a list a compiled loop filled), but a range of Python ints (Python zips it with lists)."""
    return not isinstance(it, builtins.range) and loop_spec(it) is not None


def python_of(f):
    """The Python function of a Numba-compiled one (``@numba.njit`` helpers of code ported
    from Numba: traced as the Python they are), else ``f``."""
    if (type(f).__module__ or "").startswith("numba") and callable(getattr(f, "py_func", None)):
        return f.py_func
    return f


def _is_prange(f) -> bool:
    return f is prange or (getattr(f, "__name__", None) == "prange" and
                           (getattr(f, "__module__", "") or "").startswith("numba"))


# --------------------------------------------------------------------------- the driver

def trace_function(fn, specs, args):
    """The Graph of ``fn`` on a call's arguments (``trace``) with its control flow captured;
    a loop that cannot be captured is unrolled (traced again with it marked) where Python can
    run it. Every backend and Dask trace through here, so all see the same graph. A NumPy
    array of the module the trace updated is refused (``pystate.check_outside``), as is a
    traced value stored into a NumPy array (NumPy's ValueError: Python runs the call)."""
    outside = pystate.outside_arrays(fn)
    try:
        graph = _trace_function(fn, specs, args)
    except Exception as e:
        if any(formatted(a) for a in getattr(e, "args", ())):   # (the user's raise)
            refuse_formatted(f"the message of {type(e).__name__}", _user_line(e))
        if not isinstance(e, ValueError):
            raise
        pystate.check_outside(outside)
        if "setting an array element with a sequence" not in str(e):
            raise
        raise TraceError(f"{e} (at {_user_line(e)}): if the value is traced, the array it is "
                         "stored into is NumPy's, not the program's (np.zeros_like "
                         "of a NumPy array, a module array); make it with np.zeros/np.empty "
                         "of a shape") from e
    pystate.check_outside(outside)
    return graph


def _user_line(error) -> str:
    """file:line of the innermost frame of the user's code in ``error``'s traceback."""
    from ..errors import _users
    where, tb = "<unknown>:0", error.__traceback__
    while tb is not None:
        if _users(tb.tb_frame.f_code.co_filename):
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _trace_function(fn, specs, args):
    ops = TraceOps()
    pystate.check_function(fn)      # (a global it sets: set only while it is traced)
    captured = convert(fn, ops) if user_function(fn) else None
    shapes = sys.modules.get(_SHAPES)        # (not imported: no sympy on a warm start)
    saved = shapes.current() if shapes is not None else None
    with TRACE_LOCK:         # (INTERNAL is the trace's)
        try:
            if captured is None:
                return budgeted(fn, specs, args, UNROLL_NODES)
            return _trace_captured(trace, fn, captured, ops, specs, args, saved)
        except OutsideLoop as e:    # a slice of run-time length outside every loop: the
            ops = TraceOps()        # body in a compiled loop of one trip, where it can be
            once = convert(fn, ops, once=True) if user_function(fn) else None
            try:
                if once is None:
                    raise e
                graph = _trace_captured(trace, fn, once, ops, specs, args, saved)
            except Exception as again:  # the slice's reason first
                graph = _traced_with(PIN_BOUNDS, trace, fn, specs, args, saved)
                if graph is None:
                    graph = _traced_with(COPIED, trace, fn, specs, args, saved)
                if graph is None:
                    if again is not e:
                        e.add_note(f"(traced again with the function's body in a compiled "
                                   f"loop of one trip, it failed too: "
                                   f"{type(again).__name__}: {again})")
                    raise e from None
            log.debug("%s traced again for a slice outside every loop", fn.__qualname__)
            return graph


def _traced_with(flag, trace, fn, specs, args, saved):
    """The graph of ``fn`` traced with ``flag`` on, where its body could not be traced in a
    loop of one trip; else None. ``creation.PIN_BOUNDS``: slice bounds outside loops computed
    from scalar arguments alone are this call's values (a variant per value: ``pad[:, r:r +
    w] = img`` with ``r = int(3 * sigma)`` before a loop over ``2 * r + 1`` taps).
    ``dataslice.COPIED``: a slice outside loops whose bounds come from array values is
    copied between kernels, its length a count (``np.sort(out[:k])`` returned)."""
    ops = TraceOps()
    captured = convert(fn, ops)
    flag[0] = True
    try:
        return _trace_captured(trace, fn, captured, ops, specs, args, saved)
    except Exception:               # noqa: BLE001 -- the first reason is the one reported
        return None
    finally:
        flag[0] = False


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
            except Peel as p:
                if ops.peel.get(p.where, 0) >= PEELS:
                    raise TraceError(str(p)) from None
                ops.peel[p.where] = ops.peel.get(p.where, 0) + 1
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
