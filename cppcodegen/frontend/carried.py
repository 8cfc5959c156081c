"""The values a loop or a branch carries, and the regions traced with them.

In: a captured construct's state (the names its body assigns, with getters and setters into
the user's frame) and its body functions. Out: ``Region``s (``ir/graph.py``) whose parameters
stand for the carried values and whose results are their values at the end, and the nodes
the construct leaves behind (``loop_out``).

Carried values are the names the body assigns and every traced array it updates in place
(``effects.py`` reports those). A name that starts bound to an array is carried as that array,
so an update through the name reaches every alias, until the body binds the name to another
array. The body runs with a ``carry`` placeholder per value; when a result's dtype differs
from its placeholder's (``s = 0`` then ``s += a[i]`` with float ``a``) the dtype is unified
as NumPy would end up with it and the body runs again, likewise when it updates an array
that was not carried yet. What cannot be carried raises ``Unroll``: Python runs the loop.
"""
from __future__ import annotations

import numpy as np

from ..errors import TraceError
from ..ir.graph import keep_for_errors, MADE, Region, REGION_EFFECTS, make_node, region_order
from . import containers, effects, listbuffer, nones, pyflags, pystate, shrinking, swaps, worklists
from .proxy import as_node, broadcast_node, cast_node, Proxy, SERIALS, wrap
from .capture import UNDEFINED
from .selection import is_selection
from .truth import truth
from .sizes import loop_dependent
from .iteration import forget_loops, loops_mark
from .settle import settle_types
from .carried_types import exact_in, ONE_TYPE, Slot, Snapshot, taken_over, type_of

INTERNAL: dict = {}     # id(node made in a captured region) -> (the construct's file:line,
                        # the node); trace_function checks that none is read outside it


SEEN_UPDATES: dict = {}
"""Construct's source location -> the arrays made before it that a trace of it found its body
updating in place. Traced again in the same function's trace (the loop around it traced
again, each time tracing the constructs in its body), it carries them from its first
attempt: a nest of loops is traced about twice per level, not three times (``trace.py``
clears it)."""


class Unroll(Exception):
    """Raised out of a construct that cannot be captured: the trace runs again with the
    loop at ``where`` executed by Python."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{reason} (loop at {where})")
        self.where, self.reason = where, reason


# --------------------------------------------------------------------------- regions

class Carried:
    """The carried values of one construct, and its regions traced until their types hold."""

    def __init__(self, names, get_state, set_state, where, fresh=(), keep=(), entry=()):
        self.names, self.get, self.set, self.where = tuple(names), get_state, set_state, where
        self.fresh = frozenset(fresh)   # names a loop body assigns before it reads them
        self.keep = frozenset(keep)     # an if's names read after it (bound on one side)
        self.entry = frozenset(entry)   # a loop's names first bound in it, passed on
        self.dropped_fresh = False      # ... one of them bound before the loop, not carried
        self.dropped_new = False        # a name first bound in the loop, not carried
        self.init_state = tuple(get_state())
        self.slots, self.types = [], []   # per slot: (dtype, weak, shape, scalar) or None
        for name, value in zip(self.names, self.init_state):
            t = type_of(value)
            if t != "other":
                self.slots.append(Slot(name=name, init=value))
                self.types.append(t)
        self.free = ()              # outer nodes the regions read
        self.views = []             # names of views only updated in place: not carried
        self.never = False          # a while-condition False before any iteration
        self.made = {}              # every node made in the regions (id -> node)
        self.induction = None       # a for loop without a break: (its spec, its symbol)
        self.counter = None         # a while loop's trip count, carried (``_count_trips``)
        self.moves = {}             # slot -> the slot its array is bound to next (swaps.py)
        self.branch_moves = []      # the moves of each region traced (an if's: each side)
        self.lists = {}             # name -> a list appended to in each iteration (listbuffer)
        self.private = ()           # the names of lists only the function sees (escapes.py)
        self.learned = {}           # a name without a type here -> the type a side binds
        self.pinned = {}            # name -> its value in a probe's trace (nones.probe)

    def _index(self, slot) -> int:
        return self.names.index(slot.name)

    def restore(self):
        self.set(self.init_state)
        for slot in self.slots:
            if slot.proxy is not None:
                slot.proxy._node = slot.init
            elif slot.init_node is not None:
                slot.init._node = slot.init_node

    def inits(self) -> tuple:
        """The carried values' nodes when the construct starts, in their carried types."""
        out = []
        for slot, t in zip(self.slots, self.types):
            if t is None:
                continue
            dtype, shape = t[0], t[2]
            if slot.proxy is not None:
                node = slot.init
            elif slot.init_node is not None:
                node = slot.init_node
            else:
                node = as_node(0 if slot.init is UNDEFINED else slot.init)
            node = cast_node(node, dtype)
            out.append(node if node.shape == shape else broadcast_node(node, shape))
        return tuple(out)

    def _enter(self) -> list:
        """Binds a placeholder for every carried value; returns them (None: no value yet)."""
        params = []
        state = list(self.init_state)
        for k, (slot, t) in enumerate(zip(self.slots, self.types)):
            if t is None:           # first bound in the body: no value on entry
                params.append(None)
                state[self._index(slot)] = UNDEFINED
                continue
            dtype, weak, shape, scalar = t
            p = make_node("carry", (), shape, dtype, self.where, index=k)
            params.append(p)
            if slot.proxy is not None:
                slot.proxy._node = p
            elif slot.alias:
                slot.init._node = p
            else:
                slot.placeholder = wrap(p, weak=weak, scalar=scalar)
                for kind, f in slot.flags.items():
                    setattr(slot.placeholder, pyflags.KINDS[kind][2], f.proxy)
                state[self._index(slot)] = slot.placeholder
        listbuffer.bind(self, state)
        self.set(tuple(state))
        return params

    def run(self, fns, test_first=False, continue_test=False) -> list:
        """One region per function of ``fns`` (a while's condition first with
        ``test_first``; a loop body returning its go-on test with ``continue_test``)."""
        self.loop = len(fns) == 1 or test_first
        self.appended = listbuffer.counts()     # (what the loops around appended so far)
        mark = loops_mark()
        held = {id(s.proxy) for s in self.slots} | {id(s.init) for s in self.slots}
        self.preset = set()         # (arrays an earlier trace of it found updated, that
        seen = SEEN_UPDATES.get(self.where, ())         # the body reaches now: not one a
        near = {id(v) for fn in fns for v in containers.reachable(fn)} if seen else ()
        for proxy in seen:                              # dropped trace made)
            if proxy._base is None and id(proxy) not in held and id(proxy) in near:
                self._carry_updated(proxy, proxy.node)
                self.preset.add(id(self.slots[-1]))
                held.add(id(proxy))
        for _ in range(8):
            try:
                if self.loop:
                    listbuffer.LOOPS.append(self)
                try:
                    regions = self._attempt(fns, test_first, continue_test)
                finally:
                    if self.loop:
                        listbuffer.LOOPS.pop()
            except listbuffer.CountAppends as e:    # (lists a branch in the body appends to)
                if not listbuffer.count(self, e):
                    raise
                regions = None
            except worklists.Restrengthened as e:   # (a list the loop keeps as arrays)
                if not any(v is e.worklist for v in self.init_state):
                    raise
                regions = None
            except listbuffer.Retrace:
                regions = None
            except Exception as e:      # noqa: BLE001 -- re-raised unless a shrink explains it
                if not (isinstance(e, ValueError) or loop_dependent(e)) or \
                        not shrinking.shrunk_when_failed(self):
                    raise
                regions = None
            if regions is not None:
                return regions
            self.restore()
            forget_loops(mark)
        raise TraceError(f"the values carried by the loop at {self.where} do not settle on "
                         "one dtype and shape")

    def _trace(self, fn, extra_test: bool, counts: bool = False):
        """Runs ``fn`` on placeholders: (params, nodes made, carried values at its end, its
        extra result as a bool node or None, the updates it made, whether that extra result
        is False before anything ran). ``counts``: a while loop's body (adds one trip)."""
        params = self._enter()
        if self.pinned:
            self.set(tuple(self.pinned.get(n, v) for n, v in zip(self.names, self.get())))
        seen = containers.reachable(fn) + list(self.init_state)     # (what the body reaches)
        boxes, calls = containers.snapshot(seen), pystate.mark(seen)
        made, updated, kept = {}, [], []
        MADE.append(made)
        effects.UPDATED.append(updated)
        REGION_EFFECTS.append(kept)
        try:
            try:
                self._bind_views()
                extra = fn()
                if counts and self.counter is not None:
                    k = self.slots.index(self.counter)
                    self.counter.proxy._node = make_node("add", (params[k], as_node(np.int64(1))),
                                                         (), np.int64, self.where)
                state = self.get()
                listbuffer.check(self, self.where, state, updated)
                for s in self.views:
                    if state[self._index(s)] is not s.init:
                        raise Unroll(self.where, f"variable '{s.name}' is a view updated in "
                                     "place and bound to another array in the loop or branch")
                values = [None] * len(self.slots)
                for k, s in sorted(enumerate(self.slots), key=lambda e: e[1].flag_of is not None):
                    if s.flag_of is not None:   # (a flag: set by its value's path)
                        v = values[self.slots.index(s.flag_of)]
                        if v is not UNDEFINED:
                            s.proxy._node = pyflags.start_node(pyflags.KINDS[s.flag_kind][0](v))
                    v = s.proxy if s.proxy is not None else state[self._index(s)]
                    values[k] = Snapshot(v) if isinstance(v, Proxy) and not is_selection(v) \
                        else v      # (a lazy x[mask]: kept lazy, never carried)
                never = False
                if extra_test:
                    t = truth(extra)
                    never = t is False  # (a while-condition: False whatever is carried)
                    extra = as_node(t) if isinstance(t, bool) else t.node
                else:
                    extra = None
            finally:
                MADE.pop()
                effects.UPDATED.pop()
                REGION_EFFECTS.pop()
            changed, stateful = containers.undo_changes(boxes), pystate.since(calls)
            if stateful:        # (next(it), a helper's nonlocal count: once, not per run)
                raise Unroll(self.where, stateful) if self.loop else TraceError(
                    f"{stateful} (the branch at {self.where})")
            if changed and not self.loop and listbuffer.growing(changed):
                raise listbuffer.CountAppends(listbuffer.refusal(self, changed), changed)
            planned = bool(changed) and listbuffer.plan(self, changed)
        except (listbuffer.Retrace, worklists.Restrengthened, worklists.Learned,
                UnboundLocalError):     # this trace is dropped
            containers.undo_changes(boxes)      # (traced again, maybe by a loop around it):
            for proxy, before in reversed(updated):     # its appends and its updates in
                proxy._node = before                    # place with it
            raise
        if changed and not planned:                             # (an append per iteration:
            if self.loop:                                       # an array, traced again)
                raise Unroll(self.where, listbuffer.what_changed(self, changed))
            raise TraceError(listbuffer.refusal(self, changed))
        for name, init, now in zip(self.names, self.init_state, state):
            if type_of(init) == "other" and now is not init and name not in self.lists:
                if init is None:
                    raise TraceError(f"variable '{name}' is None before the loop or branch at "
                                     f"{self.where} and bound to a value in it; {ONE_TYPE}")
                raise TraceError(f"variable '{name}' ({type(init).__name__}) is rebound in the "
                                 f"loop or branch at {self.where}{listbuffer.grown(init, now)}")
        self.made.update(made)
        return params, made, values, extra, updated, never, kept

    def _bind_views(self):
        """A shrinking array's name bound to the view of its length in this iteration."""
        if not any(s.lengths for s in self.slots):
            return
        state = list(self.get())
        for s in self.slots:
            if s.lengths and s.placeholder is not None:
                p = s.placeholder
                s.placeholder = wrap(shrinking.prefix(p.node, s.lengths, self.where), weak=p.weak,
                                     scalar=p.scalar)
                state[self._index(s)] = s.placeholder
        self.set(tuple(state))

    def _one_array(self, slot):
        """The array made before a branch that every side binds ``slot``'s name to, then
        bound to the name after it (Python's: that array, not a copy), else None."""
        i = self.slots.index(slot)
        values = [side[i] for side in getattr(self, "side_values", ())]
        first = values[0].proxy if values and isinstance(values[0], Snapshot) else None
        if not isinstance(first, Proxy) or first.scalar or first.weak or \
                first.serial >= self.first_serial or is_selection(first):
            return None
        return first if all(isinstance(v, Snapshot) and v.proxy is first for v in values) \
            else None

    def _unbound(self, error) -> bool:
        """Is ``error`` (``raises.bound``'s) a read of a name carried here without a type?"""
        return any(s.name == getattr(error, "name", None) and t is None
                   for s, t in zip(self.slots, self.types))

    def _check_cycles(self, traced):
        """An array name whose value at the end of the body (or branch) may be another
        carried array as it was at the start (``y1, y2 = y2, y1``) keeps that array's dtype,
        as in Python: when their dtypes differ (a float32 and a float64 array swapped) no
        one dtype is right, and the construct runs in Python (a loop) or is refused."""
        params, values = traced[0], traced[2]
        index = {id(p): k for k, p in enumerate(params) if p is not None}
        for i, v in enumerate(values):
            t = self.types[i]
            if not isinstance(v, Snapshot) or not isinstance(t, tuple) or t[3]:
                continue
            for k in swaps.passed(v.node, index):
                other = self.types[k]
                if k != i and isinstance(other, tuple) and other[0] != t[0]:
                    raise Unroll(self.where, f"{self.slots[i].describe()} is bound in turns "
                                 f"to arrays of dtypes {t[0]} and {other[0]}")

    def _cycled(self, slot) -> bool:
        """Does ``slot``'s array come back to it after a fixed number of iterations of a
        loop whose trip count is known when it starts, or counted (``u, un = un, u``)?"""
        return (self.induction is not None or self.counter is not None) and \
            swaps.orbit(self.moves, self.slots.index(slot)) is not None

    def _count_trips(self, hit) -> bool:
        """A while loop whose arrays come back to their names after a fixed number of
        iterations (``A, Anew = Anew, A`` after a Jacobi sweep into ``Anew``, with ``A`` an
        argument): which array each name holds at the end depends on the trip count's
        parity, so the loop counts its trips (a carried int64 the body adds one to). True
        when it did not count yet and that explains every array of ``hit``."""
        if self.counter is not None or not all(
                taken_over(s) or swaps.orbit(self.moves, self.slots.index(s)) is not None
                for s in hit):
            return False
        zero = wrap(as_node(np.int64(0)))
        self.counter = Slot(proxy=zero, init=zero.node)
        self.slots.append(self.counter)
        self.types.append((np.dtype(np.int64), False, (), False))
        return True

    def trips(self, outs):
        """The loop's trip count after it (``outs``: slot -> (loop_out node, type))."""
        if self.counter is not None:
            return wrap(outs[self.slots.index(self.counter)][0])
        return swaps.for_trips(self.induction[0])

    def _carry_updated(self, proxy, before):
        """Carries the array ``proxy`` (made before the construct) the body updates."""
        self.slots.append(Slot(proxy=proxy, init=before))
        self.types.append((proxy.dtype, False, tuple(before.shape), False))

    def _attempt(self, fns, test_first, continue_test):
        """The regions, or None when the carried values or their types changed."""
        traced, settled, unbound = [], True, None
        hits = set()                # (the arrays made before the construct it updated)
        self.branch_moves = []
        self.first_serial = next(SERIALS)       # (proxies made before the construct: less)
        for k, fn in enumerate(fns):
            is_cond = test_first and k == 0
            if not self.loop:           # (each side appends from the count before the if)
                listbuffer.restart(self.appended)
            try:
                params, made, values, extra, updated, never, kept = self._trace(
                    fn, is_cond or continue_test, counts=test_first and k == 1)
            except UnboundLocalError as e:  # a side reads a name only another side binds
                if nones.probe(self, *((fns[-1], e, continue_test, test_first) if self.loop
                                       else (fn, e, False, False))):
                    return None     # (a name that may be None: traced again with its type)
                if self.loop or unbound is not None or not self._unbound(e):
                    raise                   # (``if first: best = v`` / ``elif v < best``):
                unbound = e                 # traced again with the type the other side
                self.restore()              # gives it (the read is checked when it runs)
                continue
            if not self.loop:
                listbuffer.most(self.appended)
                for s, v, t in zip(self.slots, values, self.types):
                    if t is None and isinstance(bound_to := type_of(v), tuple):
                        self.learned[s.name] = bound_to     # (for a side that reads it)
            self.branch_moves.append(swaps.moves(self.slots, values, Snapshot))
            self.shared = swaps.shared(self.slots, values, Snapshot)
            if is_cond and never:
                self.never = True
                return []
            fresh = {id(s.placeholder): s for s in self.slots
                     if s.placeholder is not None and isinstance(s.init, Proxy)}
            hit = [fresh[id(proxy)] for proxy, _ in updated if id(proxy) in fresh]
            if hit and all(s.init._base is not None for s in hit):
                for s in hit:           # `row /= m` of a view: the name stays bound to the
                    if s in self.slots:             # view, which updates the array it views
                        k = self.slots.index(s)
                        del self.slots[k], self.types[k]
                        self.views.append(s)
                for proxy, before in reversed(updated):     # (traced again: no update of
                    proxy._node = before    # this trace stays, ``g[:-1] += q`` after it too)
                return None
            if hit and not is_cond:     # (and those whose array the body passes on to them)
                self.moves = self.branch_moves[-1]
                hit = swaps.reaching(self.slots, hit, self.moves)
            if hit and not all(taken_over(s) or self._cycled(s) for s in hit):
                if test_first and self._count_trips(hit):
                    return None             # (traced again, counting its trips)
                raise Unroll(self.where, "an array is updated in place through a name that "
                             "the loop binds to another array")
            for s in hit:               # (carried as the name's value; the array it was
                s.taken = True          # bound to is not read after the loop: ``finish``)
            # arrays made before the construct and updated in it: carried from now on
            known = {id(s.proxy) for s in self.slots if s.proxy is not None} | set(fresh)
            known |= {id(s.init) for s in self.slots if s.alias}
            for proxy, before in updated:
                if proxy._base is None and id(proxy) not in known and id(before) not in made \
                        and proxy.serial < self.first_serial:   # (a 0-d array made in the body
                                                                # of a constant: its own)
                    self._carry_updated(proxy, before)
                    SEEN_UPDATES.setdefault(self.where, []).append(proxy)
                    known.add(id(proxy))
                    settled = False
            traced.append((params, made, values, extra, kept))
            hits.update(id(proxy) for proxy, _ in updated)
        if unbound is not None:
            if unbound.name not in self.learned:
                raise unbound
            self.types[[s.name for s in self.slots].index(unbound.name)] = \
                self.learned[unbound.name]
            return None
        if not self.loop:               # (one side runs: the most either appends)
            listbuffer.settle(self.appended)
        for i, slot in enumerate(self.slots):   # a name bound to another array: a name
            if not slot.alias:
                continue
            ends = [None if t[2][i] is UNDEFINED else getattr(t[2][i], "proxy", None)
                    for t in traced]            # (UNDEFINED: unbound there, as by x = None)
            if not all(p is slot.init for p in ends):
                slot.alias = False
                slot.kept = any(p is slot.init for p in ends)
                settled = False
        if not settled:
            return None
        loop = len(fns) == 1 or test_first
        bodies = traced[1:] if test_first else traced
        if not loop:            # a branch that ends in the user's raise binds nothing
            bodies = [t for t in bodies if not _raised(t[4])] or bodies[:1]
        for t in bodies:
            self._check_cycles(t)
        new, solved, flags = settle_types(self, bodies, loop)
        # a type that changed: traced again with it (a branch's values on entry too: they
        # live in the carried buffer, of the unified type)
        unbound = [a is None and not (b is not None and loop and s.name in self.entry)
                   for a, b, s in zip(self.types, new, self.slots)]
        changed = any(a != b and (loop or b is not None) if a is not None else not u
                      for a, b, u in zip(self.types, new, unbound))  # (its value on entry
        if flags and not changed:   # is read); a flag's retrace: not bound on entry still
            new = [None if u else b for b, u in zip(new, unbound)]
        self.types = new
        if flags:
            return None
        if changed or solved:
            return None
        unused = [k for k, slot in enumerate(self.slots) if id(slot) in self.preset and
                  id(slot.proxy) not in hits]
        if unused:                  # (carried from what another trace of it found, but not
            for k in reversed(unused):      # updated by this one: traced again without)
                self.slots[k].proxy._node = self.slots[k].init
                del self.slots[k], self.types[k]
            return None
        self.side_values = [t[2] for t in bodies]
        return self._regions(traced, test_first, branch=not loop)

    def _regions(self, traced, test_first, branch=False) -> list:
        regions, free = [], {}
        for k, (params, made, values, extra, kept) in enumerate(traced):
            params = [p if p is not None or t is None else
                      make_node("carry", (), t[2], t[0], self.where, index=i)
                      for i, (p, t) in enumerate(zip(params, self.types))]
            if test_first and k == 0:
                results = [extra]
            elif branch and _raised(kept):      # ends in the user's raise: binds nothing
                results = [p for p, t in zip(params, self.types) if t is not None]
            else:
                MADE.append(made)       # the casts of the results belong to the region
                try:
                    results = [self._result(v, p, t, s) for v, p, t, s in
                               zip(values, params, self.types, self.slots) if t is not None]
                finally:
                    MADE.pop()
                if extra is not None:
                    results.append(extra)
            params = [p for p in params if p is not None]
            nodes = region_order(results + kept, params, lambda n, made=made: id(n) not in made,
                                 made)
            mine = {id(n) for n in nodes} | {id(p) for p in params}
            for n in list(nodes) + results:
                for i in (n.inputs if id(n) in mine else (n,)):
                    if id(i) not in mine:
                        free.setdefault(id(i), i)
            _check_region(nodes, self.where)
            regions.append(Region(tuple(params), tuple(nodes), tuple(results), tuple(kept)))
        self.free = tuple(free.values())
        return regions

    def _result(self, value, param, t, slot):
        if value is UNDEFINED:
            return param
        node = value.node if isinstance(value, Snapshot) else as_node(value)
        node = cast_node(exact_in(node, t[0], self.where), t[0])
        if slot.lengths:        # stored into the first elements of the carry buffer
            region = tuple(shrinking.after(n, self.induction[1], self.induction[0].step)
                           if n is not None else d for n, d in zip(slot.lengths, t[2]))
            return make_node("setitem", (param, node), param.shape, param.dtype, self.where,
                             spec=tuple(("s", 0, 1, n) for n in region), region=region)
        return node if node.shape == t[2] else broadcast_node(node, t[2])

    def finish(self, node) -> None:
        """The construct is ``node``: every carried value is now its ``loop_out``."""
        state = list(self.init_state)
        kept = [(s, t) for s, t in zip(self.slots, self.types) if t is not None]
        outs = {}
        for k, (slot, t) in enumerate(kept):
            out = make_node("loop_out", (node,), t[2], t[0], self.where, index=k)
            outs[self.slots.index(slot)] = (out, t)
            target = slot.proxy if slot.proxy is not None else slot.init if slot.alias else None
            if target is not None:
                target._node = out
                target.version += 1
            elif node.op == "if" and (same := self._one_array(slot)) is not None:
                state[self._index(slot)] = same     # (``return a, 0`` on each side: ``a``)
            else:
                if slot.lengths:        # the view of the length after the last iteration
                    out = shrinking.prefix(out, slot.exit, self.where)
                state[self._index(slot)] = wrap(out, weak=t[1], scalar=t[3])
                for kind, f in slot.flags.items():
                    setattr(state[self._index(slot)], pyflags.KINDS[kind][2], f.proxy)
                if node.op != "if":
                    swaps.mark_rebound(slot, state[self._index(slot)], self)
        for slot, t in zip(self.slots, self.types):
            if t is None and slot.name is not None:
                state[self._index(slot)] = UNDEFINED
            if slot.taken and self._cycled(slot):   # (the array is one of the carried
                swaps.settle(slot.init, swaps.orbit(self.moves, self.slots.index(slot)),
                             outs, self.trips(outs), self.where)    # values: which, by trips)
            elif slot.taken and not (node.op == "if" and swaps.settle_sides(  # (by side: the
                    slot.init, [m.get(self.slots.index(slot)) for m in self.branch_moves],
                    outs, node.inputs[0], self.where)):     # name an if's side moved it to)
                # the first iteration updated it where it is, as NumPy does: a
                slot.init._gone = Unroll(self.where, "an array it updates in place and then "
                                         "rebinds is read after it")
                slot.init._node = None          # later read: the loop unrolls (Proxy.node)
        (swaps.mark_shared if node.op == "if" else swaps.mark_aliases)(self, state)
        listbuffer.finish(self, state)
        self.set(tuple(state))
        for i, n in self.made.items():
            INTERNAL.setdefault(i, (self.where, n))
        if effects.may_raise(node) or effects.reads_raising(node):  # its value unused, its
            keep_for_errors(node)   # errors (its condition's: ``if M[j].sum() > 0: pass``)

    @property
    def ncarry(self) -> int:
        return sum(t is not None for t in self.types)


def _raised(kept) -> bool:
    """Did a branch end in the user's raise (``raises.py``: a check with its error)?"""
    return any(n.op == "check" and n.attr("ends", False) for n in kept)


def _check_region(nodes, where):
    for n in nodes:
        if n.op == "extern":
            from ..autotune import native_in_loop
            from ..backend.gemmgen import native_matmul_node    # (sympy: lazily)
            if not native_in_loop(n) and not native_matmul_node(n):
                raise Unroll(where, f"{n.attr('call')} runs as a NumPy call")
