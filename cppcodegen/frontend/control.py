"""Python control flow during a trace: the runtime that captured functions call.

In: the calls that ``capture.convert`` put where the user wrote ``for``, ``while``, ``if``,
``x if c else y``, ``and``/``or``/``not`` and a few builtins. Out: plain Python behaviour when
the values involved are concrete, or structured regions in the graph (``ir/region.py``) when
they are traced: a loop over a range becomes one ``for`` node whatever its trip count, a
branch on an array value one ``if`` node, a ``while`` one ``while`` node.

How a loop is traced: every value the body may change (the variables it assigns, which the
capture names, and every traced array it updates in place, which ``inplace`` reports) is a
*carried* value. The body runs once with a placeholder (``carry``) node standing for each
carried value and a symbolic induction variable; its nodes form the region, the carried
values at its end its results. When a result's dtype differs from its placeholder's (``s = 0``
then ``s += a[i]`` with float ``a``) the carried dtype is unified as NumPy would end up with
it and the body is traced again; likewise when it finds an array updated in place that was
not carried yet. A loop the trace cannot capture (the body calls NumPy functions that run
between kernels, reads the induction variable where a Python int is needed, lets a traced
value escape through a list, ...) is unrolled instead when its trip count is known; the
tracer retraces with that loop marked (``Unroll``).
"""
from __future__ import annotations

import builtins
import itertools
import logging

import numpy as np

from ..errors import TraceError
from ..ir import graph as _graph
from ..ir.graph import Region, make_node, region_order
from . import effects
from .capture import UNDEFINED, convert


log = logging.getLogger("cppcodegen")


class Unroll(Exception):
    """Raised out of a loop that cannot be an IR loop: the trace is run again with the loop
    at ``where`` executed by Python (unrolled)."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{reason} (loop at {where})")
        self.where, self.reason = where, reason





# --------------------------------------------------------------------------- hooks the
# tracer calls: nodes made and arrays updated while a region is traced

_MADE = _graph.MADE         # one set of node ids per region being traced (innermost last)
_UPDATED = effects.UPDATED  # one list of (proxy, its node before) per region being traced


# --------------------------------------------------------------------------- carried values

class _Slot:
    """One carried value: a variable the body assigns (``name``), or a traced array the
    body updates in place (``proxy``)."""

    def __init__(self, name=None, proxy=None, init=None):
        self.name, self.proxy, self.init = name, proxy, init
        self.alias = name is not None and _P().is_proxy(init) and init._base is None
        self.init_node = init.node if _P().is_proxy(init) else None
        self.placeholder = None     # the fresh proxy bound to the name (not an alias)
        self.dtype = self.shape = None
        self.weak = self.scalar = False

    def describe(self) -> str:
        return f"variable '{self.name}'" if self.name else "an array updated in place"


def _kind(value, P) -> str:
    if isinstance(value, P):
        return "proxy"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return "number"
    if _symbolic_int(value):
        return "number"
    return "other"


def _symbolic_int(value) -> bool:
    return hasattr(value, "expr") and type(value).__name__ in ("SymInt", "LoopIndex")


# --------------------------------------------------------------------------- the runtime

class TraceOps:
    """What a captured function calls (as ``__ccg``) while it is traced."""

    UNDEFINED = UNDEFINED

    def __init__(self, unroll=frozenset()):
        self.unroll = set(unroll)       # loops (file:line) that Python runs (unrolled)
        self.counter = itertools.count()

    # ----------------------------------------------------------------- expressions
    def not_(self, x):
        t = _truth(x)
        return (not t) if isinstance(t, bool) else np.logical_not(t)

    def and_(self, *thunks):
        """``a and b``: Python's value while operands are concrete; once one is traced, the
        bool of them all (every operand is evaluated: no short circuit on traced values)."""
        acc = value = None
        for thunk in thunks:
            value = thunk()
            t = _truth(value)
            if isinstance(t, bool):
                if not t:
                    return value if acc is None else False
            else:
                acc = t if acc is None else np.logical_and(acc, t)
        return value if acc is None else acc

    def or_(self, *thunks):
        acc = value = None
        for thunk in thunks:
            value = thunk()
            t = _truth(value)
            if isinstance(t, bool):
                if t:
                    return value if acc is None else True
            else:
                acc = t if acc is None else np.logical_or(acc, t)
        return value if acc is None else acc

    def if_exp(self, test, then, orelse, where=""):
        t = _truth(test)
        if isinstance(t, bool):
            return then() if t else orelse()
        a, b = then(), orelse()
        return np.where(t, a, b)[()]

    # ----------------------------------------------------------------- builtins
    def max_(self, *args, **kw):
        return self._extreme(builtins.max, np.greater, args, kw)

    def min_(self, *args, **kw):
        return self._extreme(builtins.min, np.less, args, kw)

    def _extreme(self, py, better, args, kw):
        items = args[0] if len(args) == 1 else args
        if kw or not any(_is_traced(v) for v in (items if isinstance(items, (list, tuple)) else ())):
            return py(*args, **kw)
        best = items[0]
        for v in items[1:]:          # Python keeps the first of equal values; NaN: see max()
            best = np.where(better(v, best), v, best)[()]
        return best

    def abs_(self, x):
        return builtins.abs(x)

    def len_(self, x):
        return builtins.len(x)

    def float_(self, x=0.0):
        return _cast_scalar(x, np.float64, float)

    def int_(self, x=0, *base):
        if base or not _is_traced(x):
            return builtins.int(x, *base)
        return _cast_scalar(np.trunc(x) if _P().dtype_kind(x) == "f" else x, np.int64, int)

    def bool_(self, x=False):
        t = _truth(x)
        return t

    def range_(self, *args):
        if not any(_is_traced(a) or _symbolic_int(a) for a in args):
            return builtins.range(*args)
        return LoopRange(*args)

    def enumerate_(self, it, start=0):
        if isinstance(it, (LoopRange,)) or _P().is_proxy(it):
            return Enumerate(_iter_spec(it), start)
        return builtins.enumerate(it, start)

    def zip_(self, *its):
        if any(isinstance(it, LoopRange) or _P().is_proxy(it) for it in its):
            return Zip(*[_iter_spec(it) for it in its])
        return builtins.zip(*its)

    def reversed_(self, it):
        if isinstance(it, LoopRange):
            return it.reversed()
        if isinstance(it, builtins.range) and _P().env_active():
            return it[::-1]
        return builtins.reversed(it)

    def call(self, f, *args, **kwargs):
        g = convert(f, self) if _user_function(f) else None
        return (g or f)(*args, **kwargs)

    # ----------------------------------------------------------------- statements
    def if_stmt(self, test, then, orelse, get_state, set_state, names, where=""):
        t = _truth(test)
        if isinstance(t, bool):
            return then() if t else orelse()
        cond = _P().as_node(t)
        branches = _Traced(self, names, get_state, set_state, where)
        regions = branches.run([then, orelse])
        node = make_node("if", (cond,) + branches.inits() + branches.free, (), np.bool_, where,
                         then=regions[0], orelse=regions[1], ncarry=len(branches.slots))
        branches.finish(node)

    def while_stmt(self, cond, body, get_state, set_state, names, where=""):
        if where in self.unroll:
            while _concrete(cond(), where):
                body()
            return
        loop = _Traced(self, names, get_state, set_state, where)
        try:
            regions = loop.run([cond, body], test_first=True)
        except Unroll:
            raise
        except Exception as e:          # cannot be an IR loop: Python runs it (if it can)
            raise Unroll(where, f"{type(e).__name__}: {e}") from e
        if loop.never:                  # the condition is False before any iteration
            loop.restore()
            return
        cond_region, body_region = regions
        node = make_node("while", loop.inits() + loop.free, (), np.bool_, where,
                         cond=cond_region, body=body_region, ncarry=len(loop.slots))
        loop.finish(node)

    def for_stmt(self, iterable, body, get_state, set_state, names, extra_test=None, where=""):
        spec = iterable if isinstance(iterable, _LoopSpec) else None
        if spec is None and (_P().is_proxy(iterable) or isinstance(iterable, builtins.range)):
            spec = _iter_spec(iterable)
        if spec is None or where in self.unroll:
            if spec is not None:
                iterable = spec.python_items()
            for item in iterable:
                body(item)
                if extra_test is not None and not _concrete(extra_test(), where):
                    break
            return
        loop = _Traced(self, names, get_state, set_state, where)
        var = _P().loop_symbol(spec.first, spec.last)
        try:
            def run_body():
                body(spec.item(var))
                return None if extra_test is None else extra_test()
            (region,) = loop.run([run_body], continue_test=extra_test is not None)
        except Unroll:
            raise
        except Exception as e:
            raise Unroll(where, f"{type(e).__name__}: {e}") from e
        finally:
            _P().loop_symbol_done(var)
        node = make_node("for", loop.inits() + loop.free, (), np.bool_, where,
                         var=str(var.expr), start=spec.start, stop=spec.stop, step=spec.step,
                         body=region, ncarry=len(loop.slots),
                         test=extra_test is not None)
        loop.finish(node)


def _concrete(value, where) -> bool:
    t = _truth(value)
    if not isinstance(t, bool):
        raise Unroll(where, "a traced condition in a loop that Python runs")
    return t


class _Snapshot:
    """A traced value as it was when a region ended (later regions rebind the proxies)."""

    def __init__(self, proxy):
        self.proxy, self.node = proxy, proxy.node
        self.dtype, self.weak, self.scalar = proxy.dtype, proxy.weak, proxy.scalar


def _snapshot(value):
    return _Snapshot(value) if _P().is_proxy(value) else value


def _type_of(value):
    """(dtype, weak, shape, scalar) of a carried value, or None for UNDEFINED."""
    P = _P()
    if value is UNDEFINED:
        return None
    if isinstance(value, _Snapshot) or P.is_proxy(value):
        return (value.dtype, bool(value.weak), tuple(value.node.shape), bool(value.scalar))
    if isinstance(value, (bool, np.bool_)):
        return (np.dtype(bool), False, (), True)
    if isinstance(value, int) or _symbolic_int(value):
        return (np.dtype(np.int64), True, (), True)
    if isinstance(value, float):
        return (np.dtype(np.float64), True, (), True)
    if isinstance(value, np.generic):
        return (value.dtype, False, (), True)
    return "other"


def _unify(a, b):
    """The type both values fit: NumPy's promotion, Python scalars weak (NEP 50)."""
    if a is None or b is None:
        return a if b is None else b
    (da, wa, sa, ca), (db, wb, sb, cb) = a, b
    if sa != sb:
        return "shape"
    if wa and wb:
        dt = np.result_type(da, db)
    elif wa or wb:
        strong, weak = (db, da) if wa else (da, db)
        dt = np.result_type(strong, weak.type(0).item())
    else:
        dt = np.result_type(da, db)
    return (np.dtype(dt), wa and wb, sa, ca or cb)


class _Traced:
    """The carried values of one construct, and its regions traced until their types hold."""

    def __init__(self, ops, names, get_state, set_state, where):
        self.names, self.get, self.set, self.where = tuple(names), get_state, set_state, where
        self.init_state = tuple(get_state())
        self.slots = []
        self.types = []             # per slot: (dtype, weak, shape, scalar) or None (unknown)
        for name, value in zip(self.names, self.init_state):
            t = _type_of(value)
            if t != "other":
                self._add(_Slot(name=name, init=value), t)
        self.free = ()
        self.never = False
        self.made_all = set()

    def _add(self, slot, t):
        self.slots.append(slot)
        self.types.append(t)

    def restore(self):
        self.set(self.init_state)
        for slot in self.slots:
            if slot.proxy is not None:
                slot.proxy._node = slot.init
            elif slot.init_node is not None:
                slot.init._node = slot.init_node

    def inits(self) -> tuple:
        P = _P()
        out = []
        for slot, t in zip(self.slots, self.types):
            dtype, _, shape, _ = t
            if slot.proxy is not None:
                node = slot.init
            elif slot.init_node is not None:
                node = slot.init_node
            elif slot.init is UNDEFINED:
                node = P.broadcast(P.as_node(0, dtype), shape)
            else:
                node = P.as_node(slot.init)
            out.append(P.broadcast(P.cast(node, dtype), shape))
        return tuple(out)

    def _enter(self) -> list:
        P = _P()
        params = []
        state = list(self.init_state)
        for k, (slot, t) in enumerate(zip(self.slots, self.types)):
            if t is None:           # first bound in the body: no value on entry
                params.append(None)
                state[self.names.index(slot.name)] = UNDEFINED
                continue
            dtype, weak, shape, scalar = t
            p = make_node("carry", (), shape, dtype, self.where, index=k)
            params.append(p)
            if slot.proxy is not None:
                slot.proxy._node = p
            elif slot.alias:
                slot.init._node = p
            else:
                slot.placeholder = P.wrap(p, weak=weak, scalar=scalar)
                state[self.names.index(slot.name)] = slot.placeholder
        self.set(tuple(state))
        return params

    def run(self, fns, test_first=False, continue_test=False) -> list:
        for _ in range(8):
            regions, settled = self._attempt(fns, test_first, continue_test)
            if settled:
                return regions
            self.restore()
        raise TraceError(f"the values carried by the loop at {self.where} do not settle on "
                         "one dtype and shape")

    def _attempt(self, fns, test_first, continue_test):
        P = _P()
        traced = []                  # per fn: (params, made, results, extra)
        settled = True
        for k, fn in enumerate(fns):
            params = self._enter()
            made, updated = set(), []
            _MADE.append(made)
            _UPDATED.append(updated)
            try:
                extra = fn()
                state = self.get()
                values = [_Snapshot(slot.proxy) if slot.proxy is not None else
                          _snapshot(state[self.names.index(slot.name)]) for slot in self.slots]
                is_cond = test_first and k == 0
                if is_cond or continue_test:
                    t = _truth(extra)
                    if is_cond and t is False:      # False whatever the carried values are
                        self.never = True
                        return None, True
                    extra = P.as_node(t, np.dtype(bool))
                else:
                    extra = None
            finally:
                _MADE.pop()
                _UPDATED.pop()
                for m in _MADE:
                    m.update(made)
            self.made_all |= made
            placeholders = {id(s.placeholder) for s in self.slots if s.placeholder is not None
                            and _P().is_proxy(s.init)}
            if any(id(proxy) in placeholders for proxy, _ in updated):
                raise Unroll(self.where, "an array is updated in place through a name that "
                             "the loop binds to another array")
            # arrays made before the construct and updated in it: carried from now on
            known = {id(s.proxy) for s in self.slots if s.proxy is not None}
            known |= {id(s.init) for s in self.slots if s.alias}
            for proxy, before in updated:
                if proxy._base is None and id(proxy) not in known and id(before) not in made \
                        and before not in params:
                    self._add(_Slot(proxy=proxy, init=before), _type_of(proxy) if False else
                              (proxy.dtype, False, tuple(before.shape), False))
                    known.add(id(proxy))
                    settled = False
            # variables of other kinds (lists, functions, ...) must not be rebound
            for name, init, now in zip(self.names, self.init_state, state):
                if _type_of(init) == "other" and now is not init:
                    raise TraceError(f"variable '{name}' ({type(init).__name__}) is rebound "
                                     f"in the loop or branch at {self.where}")
            traced.append((params, made, values, extra))
            if not test_first or k > 0:
                pass
        if not settled:
            return None, False
        # a name that starts bound to an array is carried as that array (updates through
        # the name reach every alias of it) until the body binds the name to another one
        for i, slot in enumerate(self.slots):
            if not slot.alias:
                continue
            if all(getattr(t[2][i], "proxy", None) is slot.init for t in traced):
                continue
            slot.alias = False          # (an update through it then unrolls the loop)
            settled = False
        if not settled:
            return None, False
        # the types every region agrees on
        loop = len(fns) == 1 or test_first
        new_types = []
        for i, slot in enumerate(self.slots):
            t = self.types[i]
            result_types = [_type_of(tr[2][i]) for tr in traced if not (test_first and tr is traced[0])]
            if not loop:                     # if: either branch's value (or the one before)
                t = None if any(r is None for r in result_types) else t
                for r in result_types:
                    t = _unify(t, r)
                if any(r is None for r in result_types):
                    t = None
            else:
                for r in result_types:
                    t = _unify(t, r)
            if t in ("shape", "other"):
                raise TraceError(f"{slot.describe()} changes its shape or kind in the loop or "
                                 f"branch at {self.where}; a carried value keeps one shape")
            new_types.append(t)
        if loop and any(a != b and a is not None for a, b in zip(self.types, new_types)):
            self.types = new_types
            return None, False
        if loop and any(a is None and b is not None for a, b in zip(self.types, new_types)):
            self.types = new_types      # loop-local: its placeholder is never read
        self.types = new_types
        return self._regions(traced, test_first), True

    def _regions(self, traced, test_first):
        P = _P()
        regions, free = [], {}
        for k, (params, made, values, extra) in enumerate(traced):
            params = [p if p is not None else make_node("carry", (), t[2], t[0], self.where, index=i)
                      for i, (p, t) in enumerate(zip(params, self.types))]
            if test_first and k == 0:
                results = [extra]
            else:
                _MADE.append(made)
                try:
                    results = []
                    for v, p, t in zip(values, params, self.types):
                        if v is UNDEFINED:
                            results.append(p)
                            continue
                        node = v.node if isinstance(v, _Snapshot) else P.as_node(v)
                        results.append(P.broadcast(P.cast(node, t[0]), t[2]))
                    if extra is not None:
                        results.append(extra)
                finally:
                    _MADE.pop()
                    for m in _MADE:
                        m.update(made)
            inside = made
            nodes = region_order(results, params, lambda n: id(n) not in inside)
            mine = {id(n) for n in nodes} | {id(p) for p in params}
            for n in list(nodes) + results:
                for i in (n.inputs if id(n) in mine else (n,)):
                    if id(i) not in mine and id(i) not in free:
                        free[id(i)] = i
            _check_region(nodes, self.where)
            regions.append(Region(tuple(params), tuple(nodes), tuple(results)))
        self.free = tuple(free.values())
        return regions

    def finish(self, node):
        P = _P()
        state = list(self.init_state)
        for k, (slot, t) in enumerate(zip(self.slots, self.types)):
            if t is None:
                continue
            out = make_node("loop_out", (node,), t[2], t[0], self.where, index=k)
            if slot.proxy is not None:
                slot.proxy._node = out
                slot.proxy.version += 1
            elif slot.alias:
                slot.init._node = out
                slot.init.version += 1
            else:
                state[self.names.index(slot.name)] = P.wrap(out, weak=t[1], scalar=t[3])
        for slot, t in zip(self.slots, self.types):
            if t is None and slot.name is not None:
                state[self.names.index(slot.name)] = UNDEFINED
        self.set(tuple(state))
        P.note_internal(self.made_all, self.where)


def _check_region(nodes, where):
    for n in nodes:
        if n.op == "random":
            raise Unroll(where, "random numbers drawn in a loop")
        if n.op == "extern" and not _P().native_extern(n):
            raise Unroll(where, f"{n.attr('call')} runs as a NumPy call")


# --------------------------------------------------------------------------- iteration

class _LoopSpec:
    """What a ``for`` iterates over, as an induction variable's range and the item at it."""
    start = stop = step = 0

    @property
    def first(self):
        return self.start

    @property
    def last(self):
        return self.stop - 1 if self.step > 0 else self.stop + 1

    def item(self, var):
        return var

    def python_items(self):
        P = _P()
        return (self.item(P.concrete_int(i)) for i in builtins.range(
            P.concrete_int(self.start), P.concrete_int(self.stop), self.step))


class LoopRange(_LoopSpec):
    def __init__(self, *args):
        P = _P()
        if len(args) == 1:
            args = (0, args[0], 1)
        elif len(args) == 2:
            args = (args[0], args[1], 1)
        start, stop, step = (P.size_value(a) for a in args)
        if not isinstance(step, int):
            raise TraceError("range() with a step that is not a constant int is not supported "
                             "in a compiled loop")
        if step == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step

    def reversed(self):
        r = LoopRange.__new__(LoopRange)
        r.start, r.stop, r.step = self.last, self.first - (1 if self.step > 0 else -1), -self.step
        if abs(self.step) != 1:
            raise TraceError("reversed() of a range with a step other than 1 is not supported")
        return r

    def __len__(self):
        raise TraceError("len() of a range with a symbolic bound")


class _ArrayIter(_LoopSpec):
    def __init__(self, array):
        if not array.node.shape:
            raise TypeError("iteration over a 0-d array")
        self.array = array
        self.start, self.stop, self.step = 0, _P().size_value(array.node.shape[0]), 1

    def item(self, var):
        return self.array[var]


class Enumerate(_LoopSpec):
    def __init__(self, inner, start=0):
        if inner.step != 1:
            raise TraceError("enumerate() over a range with a step other than 1 is not supported")
        self.inner, self.offset = inner, start
        self.start, self.stop, self.step = inner.start, inner.stop, 1

    def item(self, var):
        return (var - self.inner.start + self.offset, self.inner.item(var))


class Zip(_LoopSpec):
    def __init__(self, *inner):
        if any(s.step != 1 for s in inner):
            raise TraceError("zip() over a range with a step other than 1 is not supported")
        self.inner = inner
        self.start = 0
        lengths = [_P().size_min(s.stop - s.start, 0, lower=True) for s in inner]
        self.stop = _P().size_min(*lengths)
        self.step = 1

    def item(self, var):
        return tuple(s.item(var + s.start) for s in self.inner)


def _iter_spec(it):
    if isinstance(it, _LoopSpec):
        return it
    if isinstance(it, builtins.range):
        return LoopRange(it.start, it.stop, it.step)
    if _P().is_proxy(it):
        return _ArrayIter(it)
    raise TraceError(f"cannot iterate over {type(it).__name__} in a compiled loop together "
                     "with a range or an array")


# --------------------------------------------------------------------------- values

def _is_traced(x) -> bool:
    P = _P()
    return P.is_proxy(x) or (_symbolic_int(x) and P.has_loop_symbol(x))


def _truth(x):
    """A Python bool for a concrete value; a traced 0-d bool for a traced one."""
    P = _P()
    if P.is_proxy(x):
        if x.node.shape and any(d != 1 for d in x.node.shape):
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        b = x if x.dtype == np.bool_ else np.not_equal(x, 0)
        return P.reshape0(b)
    if _symbolic_int(x) and P.has_loop_symbol(x):
        return np.not_equal(P.size_proxy(x), 0)
    return bool(x)


def _cast_scalar(x, dtype, py):
    P = _P()
    if _symbolic_int(x) and P.has_loop_symbol(x):
        x = P.size_proxy(x)
    if not P.is_proxy(x):
        return py(x)
    if x.node.shape and any(d != 1 for d in x.node.shape):
        raise TypeError("only length-1 arrays can be converted to Python scalars")
    out = P.wrap(P.cast(P.reshape0(x).node, np.dtype(dtype)), weak=True, scalar=True)
    return out


def _user_function(f) -> bool:
    import types
    if not isinstance(f, types.FunctionType):
        return False
    mod = getattr(f, "__module__", "") or ""
    return not (mod.startswith(("numpy", "cppcodegen", "sympy", "builtins")) or
                mod in ("math", "operator", "functools"))


# --------------------------------------------------------------------------- the tracer's side

class _Frontend:
    """The few tracer functions this module uses (bound once: the tracer imports this module)."""

    def __init__(self):
        from . import trace as T
        self.T = T
        self.Proxy = T.Proxy
        self.internal: dict = {}        # id(node made in a region) -> the construct's line

    @property
    def S(self):
        from ..ir import shapes        # sympy: only once a loop is traced (warm starts)
        if shapes.TRACED_VALUE is None:
            shapes.TRACED_VALUE = self.size_proxy
        return shapes

    def is_proxy(self, x) -> bool:
        return isinstance(x, self.Proxy)

    def wrap(self, node, weak=False, scalar=False):
        return self.T.wrap(node, weak=weak, scalar=scalar)

    def as_node(self, x, dtype=None):
        return self.T.as_node(x, dtype)

    def cast(self, node, dtype):
        return self.T.cast_node(node, np.dtype(dtype))

    def broadcast(self, node, shape):
        return node if tuple(node.shape) == tuple(shape) else self.T.broadcast_node(node, shape)

    def reshape0(self, p):
        if not p.node.shape:
            return p
        return self.T.wrap(make_node("reshape", (p.node,), (), p.dtype, self.T.user_location()),
                           weak=p.weak, scalar=True)

    def size_value(self, a):
        if isinstance(a, (bool, np.bool_)):
            return int(a)
        if isinstance(a, (int, np.integer)):
            return int(a)
        if _symbolic_int(a):
            return self.S.canon(a)
        if self.is_proxy(a):
            raise TraceError("a loop bound computed from array values is not supported yet; "
                             "use a size, a Python int or an argument")
        return self.S.canon(a)

    def size_proxy(self, x):
        n = self.T._size_operand(self.S.canon(x))
        return n if self.is_proxy(n) else self.T.wrap(self.T.as_node(n), weak=True, scalar=True)

    def has_loop_symbol(self, x) -> bool:
        env = self.S.current()
        expr = getattr(x, "expr", x)
        return env is not None and hasattr(expr, "free_symbols") and \
            bool(expr.free_symbols & set(env.loops))

    def loop_symbol(self, first, last):
        env = self.S.current()
        if env is None:                 # a static trace: sizes are ints, loops need symbols
            env = self.S.ShapeEnv({})
            self.S.active(env).__enter__()
        sym = self.S.loop_symbol(len(env.loops) + len(env.retired))
        env.loops[sym] = (first, last)
        return self.S.SymInt(sym)

    def loop_symbol_done(self, var):
        env = self.S.current()
        env.retired[var.expr] = env.loops.pop(var.expr)

    def concrete_int(self, x) -> int:
        return x if isinstance(x, int) else self.S.as_int(x)

    def size_min(self, *xs, lower=False):
        if lower:
            return self.S.canon(self.S.sympy_max(*xs))
        return self.S.canon(self.S.sympy_min(*xs))

    def native_extern(self, node) -> bool:
        from ..backend.gemmgen import native_matmul_node    # (an op rule, no circle)
        return native_matmul_node(node)

    def env_active(self) -> bool:
        return self.S.current() is not None

    def dtype_kind(self, x) -> str:
        return x.dtype.kind

    def note_internal(self, made, where):
        for i in made:
            self.internal.setdefault(i, where)


_FRONTEND = None


def _P() -> _Frontend:
    global _FRONTEND
    if _FRONTEND is None:
        _FRONTEND = _Frontend()
    return _FRONTEND


# --------------------------------------------------------------------------- the driver

def trace_function(trace, fn, specs, args):
    """``trace(fn, specs, args)`` of ``fn`` with its control flow captured; a loop that
    cannot be captured is unrolled (traced again with it marked) where Python can run it."""
    ops = TraceOps()
    captured = convert(fn, ops) if _user_function(fn) else None
    if captured is None:
        return trace(fn, specs, args)
    from ..ir import shapes     # (imported with the captured function's first trace)
    saved = shapes.current()
    P = _P()
    try:
        for _ in range(64):
            P.internal = {}
            try:
                graph = trace(captured, specs, args)
            except Unroll as u:
                if u.where in ops.unroll:
                    raise
                log.debug("loop at %s unrolled: %s", u.where, u.reason)
                ops.unroll.add(u.where)
                continue
            finally:
                shapes.active(saved).__enter__()
            escaped = [P.internal[id(n)] for n in graph.nodes if id(n) in P.internal]
            if escaped and escaped[0] not in ops.unroll:
                ops.unroll.add(escaped[0])      # a body's value got out by another way
                continue
            return graph
        raise TraceError(f"{fn.__qualname__}: too many loops could not be compiled")
    finally:
        P.internal = {}
