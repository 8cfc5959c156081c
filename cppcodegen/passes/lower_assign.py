"""Lowering of assignments: ``x[region] = v`` and what follows from it.

In: ``setitem`` nodes met by ``lower.Lowering`` (mixed in). Out: their values as loop-IR
expressions (``where(index in region, v, x)``), the stages that write an assigned region into
a buffer in place where that is safe (``_in_place``), the write-backs of arguments and loop
carries (``write_back``: only the region when the value is one assignment, straight into the
buffer unless a stage reads elements it overwrites), and full reductions of an assigned
array split into the region and the slabs around it (``_split_reduce``)."""
from __future__ import annotations

import dataclasses
import numpy as np
import sympy

from ..ir.graph import LEAF_OPS, VIEW_OPS, Node, reachable
from ..ir.loopir import FloorDiv, IMod, Load, Stage, index_vars, walk
from ..ir.ufuncs import OPS
from . import trades
from .assign_steps import fill_in_order, sequenced
from .chain_buffers import realize_chain
from .read_first import read_first
from .indexing import broadcast_index, same_index


class AssignLowering:
    """Methods of ``lower.Lowering`` for assignments (mixed in)."""

    def _setitem(self, node: Node, idx: tuple, inside=False):
        """where(idx in the assigned region, value at its region index, base at idx); with
        ``inside``, ``idx`` is known to be in the region: the value only."""
        eb, i64, b = self.eb, np.dtype(np.int64), np.dtype(bool)
        base, value = node.inputs[:2]     # (then the bind nodes of its data slices)
        conds, vidx = [], []

        def compare(name, expr, k):
            if not sympy.sympify(k).is_Integer:         # a symbolic size: compare expr - k with 0
                expr, k = expr - k, 0
            conds.append(eb.op(name, [eb.index(expr, i64), eb.const(int(k), i64)], b))

        for d, sp in enumerate(node.attr("spec")):
            i = idx[d]
            if sp[0] == "i":
                compare("equal", i, sp[1])
                continue
            _, start, step, length = sp
            if isinstance(length, int) and length == 0:
                return self.value(base, idx)
            up = not isinstance(step, int) or step > 0      # (a symbolic step is > 0)
            lo = start if up else start + (length - 1) * step
            st = abs(step) if isinstance(step, int) else step
            if _maybe_less(0, lo):
                compare("greater_equal", i, lo)
            if _maybe_less(lo + (length - 1) * st, base.shape[d] - 1):
                compare("less_equal", i, lo + (length - 1) * st)
            if not isinstance(st, int):         # x[i * i::i] = v: every i-th from its start
                compare("equal", IMod(i - lo, st), 0)
                k = FloorDiv(i - lo, st)
            elif st > 1:
                compare("equal", IMod(i - lo, st), 0)
            if isinstance(st, int):
                k = (i - lo) if st == 1 else sympy.floor((i - lo) / sympy.Integer(st))
            if conds and not inside:    # clamp: the value is loaded for every element,
                k = sympy.Max(0, sympy.Min(length - 1, k))      # used in the region
            vidx.append(k if up else length - 1 - k)
        region = node.attr("region")
        val = self.value(value, broadcast_index(tuple(vidx), value.shape, region))
        if not conds or inside:
            return val
        cond = conds[0]
        for c in conds[1:]:
            cond = eb.op("logical_and", [cond, c], b)
        return eb.op("where", [cond, val, self.value(base, idx)], node.dtype)

    def _split_reduce(self, node: Node, role: str) -> bool:
        """A full reduction of an expression of ``x[box] = v`` (``np.abs(u - un).max()`` after
        a stencil step): reduced over the box (the value, no per-element test: vector loops)
        and over the slabs around it (the base) separately, the partial results combined.
        False (nothing done) when the reduction is not of that form."""
        (src,) = node.inputs
        kind = node.attr("kind")
        if kind not in _COMBINE or tuple(node.attr("axes")) != tuple(range(src.ndim)) \
                or not src.ndim or node.shape:
            return False
        found, stack, seen = [], [src], set()
        while stack:                        # the fused expression: setitems of src's shape
            n = stack.pop()
            if id(n) in seen or id(n) in self.buffer_of:
                continue
            seen.add(id(n))
            if n.op == "setitem":
                found.append(n)
            elif n.op == "cast" or n.op in OPS:
                stack.extend(n.inputs)
            elif n.op not in LEAF_OPS and not (n.op in VIEW_OPS and self._in_memory(n)):
                return False                # (a view of a buffer, ``un = u.copy()``: loads)
        if len(found) == 1 and found[0].inputs[0].op == "setitem" and \
                len(self.users.get(id(found[0]), ())) > 1 and realize_chain(self, found[0]):
            return False                    # (a chain stored anyway: into a buffer first)
        if len(found) != 1 or found[0].shape != src.shape or not self._in_memory(found[0].inputs[0]):
            return False
        s = found[0]
        box = self._box(s)
        if box is None:
            return False
        nvars = index_vars(src.ndim)
        parts = [(tuple(n for _, n in box), tuple(lo + v for (lo, _), v in zip(box, nvars)), True)]
        parts += [(domain, store, False) for domain, store, _ in self._outside(s)]
        parts = [p for p in parts if not any(sympy.sympify(d).is_zero for d in p[0])]
        if len(parts) < 2:
            return False
        i_dt = node.dtype
        label, where = self.names[id(node)], node.where
        partials = []
        saved_memo = self.memo
        for domain, idx, inside in parts:
            self.memo = {}
            self.region_known[id(s)] = inside
            try:
                body = self.value(src, tuple(idx))
            finally:
                del self.region_known[id(s)]
                self.memo = saved_memo
            name = self.new_buffer(f"buf{len(self.buffers)}", i_dt, ())
            self.stages.append(Stage(name, "reduction", tuple(domain), body,
                                     tuple(range(len(domain))), kind, label, where))
            partials.append(self.eb.load(name, (), i_dt))
        total = partials[0]
        for p in partials[1:]:
            total = self.eb.op(_COMBINE[kind], [total, p], i_dt)
        name = self.add_buffer(node, role)
        self.stages.append(Stage(name, "pointwise", (), total, (), None, label, where))
        return True

    @staticmethod
    def _box(node: Node):
        """(lowest index, length) per dimension of ``x[spec] = v``'s region when it is a box
        (ints and slices of step +-1), else None."""
        out = []
        for sp in node.attr("spec"):
            if sp[0] == "i":
                out.append((sympy.sympify(sp[1]), 1))
            elif abs(sp[2]) == 1:
                out.append((sp[1] if sp[2] > 0 else sp[1] - sp[3] + 1, sp[3]))
            else:
                return None
        return out

    def writebacks(self):
        """Arguments updated in place: each one's final value is written into the caller's
        array, after every other stage (those read the arguments' old values, as the graph
        says). The rule, per argument:

        - what is written: the assigned region only when the final value is one assignment
          ``x[region] = v`` on the untouched argument (``out[...] = f(a)``,
          ``u[1:-1, 1:-1] = ...``); the whole array otherwise (``x += y``, ``x *= 2``, several
          assignments in a row);
        - directly into the argument's memory when that is safe: every element the stage
          reads of this argument is the element it writes at the same point (``x += y``,
          ``x[1:-1] = 2 * x[1:-1]``), and no other argument's write-back reads it. Each element
          is then read before it is overwritten, whatever the loop order, threads or lanes;
        - otherwise (a hazard: a stencil reading neighbours it also overwrites) into a
          temporary first, and copied into the argument once every write-back has computed
          its value: NumPy's semantics, the right-hand side evaluated as if into a temporary.

        Two arguments that are (parts of) the same memory are handled at call time, not here
        (``runtime.compiled``): such calls run the function with NumPy itself.
        """
        inputs = {n.attr("index"): n for n in self.graph.inputs if n.op == "input"}
        self.write_back([(self.buffer_of[id(inputs[m])], inputs[m], node)
                         for m, node in self.graph.mutations])

    def write_back(self, pairs, swap=False, local=frozenset()):
        """``pairs``: (buffer, the node it holds now, the node it must hold); see writebacks.
        ``swap`` (a loop's carried arrays at the end of its body): an assignment to most of
        an array that reads neighbours it overwrites (a stencil's time step) goes into a
        second buffer, with the frame outside its region copied, and the two buffers trade
        places for the next iteration (``_swapped``) instead of a temporary copied back;
        so does a new value the body computed into a buffer of its own (``local``: the
        buffers made for the body, which it writes before it reads them), such as the
        result of a loop inside it (``un = u.copy()`` then ``u[j, i] = f(un)`` for each
        j and i: the inner loops' ``u`` is a copy, and it becomes the next step's ``u``)."""
        targets = {name for name, _, _ in pairs}
        self._moves = trades.moves(pairs, self.buffer_of, self.buffers) if swap else {}
        self._local = set(local) - targets if swap else set()
        self._traded = {}               # the moves and steps that permute buffers (trades.py)
        planned = []
        for k, (name, start, node) in enumerate(pairs):
            before = len(self.stages)
            planned.append(self._plan_back(name, start, node, pairs, targets, swap))
            if len(self.stages) > before:   # stages made on the way (a scatter's in place,
                self.memo.clear()           # the elements it overwrites read first): values
                for j in range(k):          # planned before them read those (their
                    if planned[j][0] in ("plan", "scatter"):    # expressions made anew)
                        planned[j] = self._plan_back(*pairs[j], pairs, targets, swap)
        for name in list(self._moves):  # moves that permute buffers by themselves
            if name not in self._traded:    # (``a, b = b, a``)
                self._traded.update(trades.cycle(self._moves, name) or {})
        plans = [p for kind, p in planned if kind == "plan" and p[0] not in self._traded]
        scatters = [p for kind, p in planned if kind == "scatter"] + [
            s for kind, p in planned if kind == "steps" for s in p]
        swaps = trades.swaps(self._traded) + [
            p for kind, p in planned if kind == "swap" and p[0] not in self._traded]
        # in place where no element is read after it is overwritten: each plan's reads of
        # itself at the elements it writes, and the other plans that read those elements
        # stored before it (``cc[k] = cc[k] * inv; dd[k] = (dd[k] - dd[k-1] * a) / f(cc[k])``)
        pending = {name for name, parts, _, _, _ in plans if not any(
            self._overlaps(name, store, body, domain) or (k and self._reads(name, body))
            for k, (domain, store, body, _) in enumerate(parts))}
        readers = {name: {p[0] for p in plans if p[0] != name and
                          self._read_by_others(name, parts, [p])}
                   for name, parts, _, _, _ in plans}
        order = []
        while pending:
            ready = [p[0] for p in plans if p[0] in pending and not readers[p[0]] & pending]
            if not ready:   # a cycle (``v -= c * x; x += dt * v``): one goes through a
                pending.discard(next(p[0] for p in plans if p[0] in pending))  # temporary,
                continue    # computed first and copied last; the others may go in place
            order.append(ready[0])
            pending.discard(ready[0])
        temps, direct, copies = [], [], []
        for name, parts, full, where, node in sorted(plans, key=lambda p: order.index(p[0])
                                                     if p[0] in order else len(order)):
            if name in order:
                direct += [Stage(name, "pointwise", domain, body, (), None, lbl, where,
                                 store=tuple(store)) for domain, store, body, lbl in parts]
                continue
            if swap and len(parts) == 1 and self._mostly(parts[0][0], name):
                swaps += self._swapped(name, node, parts[0], where,
                                       node.op == "setitem" and parts is not full)
                continue
            if len(parts) > 1:
                parts = full
            for domain, store, body, lbl in parts:
                tmp = self.new_buffer(f"buf{len(self.buffers)}", body.dtype, tuple(domain))
                temps.append(Stage(tmp, "pointwise", domain, body, (), None, lbl, where))
                load = self.eb.load(tmp, index_vars(len(domain)), body.dtype)
                copies.append(Stage(name, "pointwise", domain, load, (), None, full[0][3], where,
                                    store=tuple(store)))
        self.stages += temps + direct + copies + scatters
        for name, other in swaps:       # (after every stage that reads the old values)
            self.stages.append(Stage("", "swap", (), None, nodes="", where="",
                                     control={"swap": (name, other)}))

    def _copied(self, node: Node, start: Node) -> bool:
        """``e = m.copy(); e[1:-1, 1:-1] = f(m); e[0, :] = ...; m = e``: the copy of the
        carried array (an identity view of it) into a buffer of its own, where the stores go
        and which then trades places with ``m`` (``_chain_swapped``), instead of one pass of
        nested selects over all of ``m``."""
        base = self._chain_base(node)
        if base is node or base.op != "transpose" or base.inputs[0] is not start or \
                base.attr("perm") != tuple(range(base.ndim)) or id(base) in self.buffer_of:
            return False
        self.realize(base)
        return True

    def _chain_base(self, node: Node) -> Node:
        while node.op == "setitem" and id(node) not in self.buffer_of:
            node = node.inputs[0]
        return node

    def _chain_swapped(self, name, node, pairs, label, start) -> bool:
        """A step computed into another buffer and then assigned to in a few places
        (``un = u.copy(); u[1:-1, 1:-1] = f(un); u[0, :] = u[1, :]``: the first assignment's
        array is in memory already): the later assignments are stored into that buffer where
        it is, and it trades places with ``name``, instead of a pass copying it into
        ``name``. Only when nothing else reads that buffer's value and every assignment reads
        it outside all of the assigned regions (so each reads what it would have read). A
        chain on a copy of ``start`` (``e = m.copy()``) gets that copy's buffer first."""
        self._copied(node, start)
        base = self._chain_base(node)
        other = self.buffer_of.get(id(base))
        if other is None or other == name:
            return False
        a, b = self.buffers[other], self.buffers[name]
        targets = {n for n, _, _ in pairs}
        links = trades.cycle({**self._moves, name: other}, name) if other in targets else {}
        if a.role not in (trades.SWAPPABLE if links else ("temp",)) or \
                not trades.alike(a, b) or not self._mostly(b.shape, name):
            return False
        if id(base) in reachable([n for _, _, n in pairs if n is not node]):
            return False
        if links is None:   # (another write-back's target, not passed on round a cycle of
            return False    # moves: ``u, un = un, u`` is, and those trade buffers)
        chain = []
        while node is not base:
            chain.append(node)
            node = node.inputs[0]
        boxes = [self._box(c) for c in chain]
        if any(box is None for box in boxes):
            return False
        stores = []
        for c in reversed(chain):
            domain, store, body = self._region(c)
            for ld in walk(body):
                if isinstance(ld, Load) and ld.buf == other and not all(
                        _apart(ld.index, domain, box) for box in boxes):
                    return False
            if 0 not in domain:
                stores.append(Stage(other, "pointwise", domain, body, (), None, label,
                                    c.where, store=tuple(store)))
        self._traded.update(links)      # (only now: a chain refused above is stored by a
        self.stages += stores           # plan, which a trade would drop)
        return True

    def _mostly(self, domain, name) -> bool:
        """Does a region of ``domain`` cover at least half of buffer ``name`` (so copying the
        rest costs less than copying the region back), an array of trades.SWAP_MIN elements or
        more (smaller ones, and a loop's scalars in registers, just copy)?"""
        total, part = 1, 1
        for n in self.buffers[name].shape:
            total = total * n
        for n in domain:
            part = part * n
        return self.buffers[name].role == "temp" and bool(
            sympy.sympify(2 * part - total).is_nonnegative) and not bool(
            sympy.sympify(total - trades.SWAP_MIN).is_negative)

    def _swapped(self, name, node, region, where, frame):
        """The stages of ``x[region] = v`` (``frame``: the frame outside the region copied
        from ``name`` too) or of a whole new value into a new buffer like ``name``, and
        [(name, the new buffer)]."""
        buf = self.buffers[name]
        other = self.new_buffer(f"buf{len(self.buffers)}", buf.dtype, tuple(buf.shape))
        label = self.names[id(node)]
        outside = [p + (label,) for p in self._outside(node)] if frame else []
        for domain, store, body, lbl in outside + [region]:
            if 0 not in domain:
                self.stages.append(Stage(other, "pointwise", domain, body, (), None, lbl,
                                         where, store=tuple(store)))
        return [(name, other)]

    def _may_take(self, name, role) -> bool:
        """May a value of ``role`` be stored in buffer ``name`` in place? A temporary's, and
        the function's result into a temporary, which ``_took`` makes the result (``v[m] =
        c`` after the loop that filled ``v``: no copy of all of ``v`` to store one element)"""
        return role == "temp" or role == "output" and self.buffers[name].role == "temp"

    def _took(self, name, role):
        if role == "output":
            self.buffers[name] = dataclasses.replace(self.buffers[name], role="output")

    def writable(self, name) -> bool:
        """May stages store into buffer ``name`` before its final value? A temporary, or an
        argument a construct updates in place for the caller (``carried_args``)."""
        return self.buffers[name].role == "temp" or name in self.carried_args

    def _mutated(self) -> set:
        return {m for m, _ in self.graph.mutations}

    def _into_empty(self, node: Node, role: str) -> bool:
        """Is ``x[region] = v`` the first store into ``x = np.empty(...)`` that nothing else
        reads, in a temporary (a loop's carried array)? Its other elements may be anything."""
        base = node.inputs[0]
        return role == "temp" and base.op == "broadcast_to" and base.attr("uninit", False) \
            and id(base) not in self.buffer_of and len(self.users.get(id(base), ())) == 1

    def _stored_in_place(self, node: Node, role: str) -> bool:
        """``_in_place``, where ``x`` may be a chain of assignments not computed yet to an
        array a loop or branch carries (``v[0, i] = 1; v[-1, i] = 1`` before a loop that
        reads ``v``) or a fresh array (``fill_in_order``): each one stored in place in turn,
        when it can be, not the chain as one select over the whole array."""
        root = base = node.inputs[0]
        while root.op == "setitem":
            root = root.inputs[0]
        if role in ("temp", "output") and not fill_in_order(self, node) and \
                base.op == "setitem" and root.op in ("carry",
                "loop_out") and id(base) not in self.buffer_of and self._stored_in_place(
                base, "temp"):                  # (its steps temporaries: as the result, the
            self.add_stage(base, "temp")        # first took the buffer, d[-1] = ... copied d)
        return self._in_place(node, role)

    def _in_place(self, node: Node, role: str) -> bool:
        """Can ``x[region] = v`` write into the buffer of ``x``? When ``x`` is a temporary
        (a loop's carried array) of the same shape that nothing reads once this assignment
        is computed, and ``v`` reads ``x`` only at the elements it overwrites (in a loop
        body, ``C[i, :i+1] *= beta`` then updates C's row where it is)."""
        base = node.inputs[0]
        name = self.buffer_of.get(id(base))
        if name is None or not self._may_take(name, role) or not (self.writable(name) or (
                base.op == "input" and base.attr("index") in self._mutated())) or \
                tuple(self.buffers[name].shape) != tuple(node.shape) or base.dtype != node.dtype:
            return False        # (an argument the function updates: its final value goes
                                # there anyway, so ``a[::2] += 1`` is stored in it directly)
        if not self._free_after(base, node, at_end=base.op == "input"):
            return False        # (an argument returned is the updated array: read at the end)
        domain, store, body = self._region(node)
        if not self._overlaps(name, store, body, domain):
            return True
        value = node.inputs[1]      # v reads x where it stores (``A[i, 1:-1] += A[i, 2:]``):
        if not value.shape or id(value) in self.buffer_of:  # v first, in a buffer of its
            return False                                    # own (a row), then stored in
        if read_first(self, node, base, name):              # (or only its parts that
            return True                                     # read x: read_first.py)
        self.realize(value)                                 # place (a copy of the whole of x
        domain, store, body = self._region(node)            # per row was O(n^2) each time)
        return not self._overlaps(name, store, body, domain)

    @staticmethod
    def _reads(name, body) -> bool:
        return any(isinstance(ld, Load) and ld.buf == name for ld in walk(body))

    @staticmethod
    def _read_by_others(name, parts, plans) -> bool:
        """Does another write-back read an element of ``name`` that ``parts`` write (it would
        see the new value)? Reads shown outside every written box are safe."""
        boxes = [_written_box(store, domain) for domain, store, _, _ in parts]
        return any(isinstance(ld, Load) and ld.buf == name and any(
            box is None or not _apart(ld.index, domain, box) for box in boxes)
            for p in plans if p[0] != name for domain, _, body, _ in p[1] for ld in walk(body))

    @staticmethod
    def _overlaps(name, store, body, domain) -> bool:
        """Does ``body`` read an element of buffer ``name`` that the stage (storing at
        ``store`` over ``domain``) may write at another point? A read at the element written
        is safe, and so is one shown outside the written box (``dd[:, :, k] = dd[:, :, k - 1]
        * a`` in place)."""
        if all(n == 1 for n in domain):
            return False        # one element: every load is done before its one store
        ones = {v: 0 for v, n in zip(index_vars(len(domain)), domain) if n == 1}
        box = _written_box(store, domain)
        return any(isinstance(ld, Load) and ld.buf == name and (
            len(ld.index) != len(store) or not all(
                same_index(a, b, ones) for a, b in zip(ld.index, store)))
            and (box is None or not _apart(ld.index, domain, box)) for ld in walk(body))

    def _outside(self, node: Node) -> list:
        """The elements of ``x[spec] = v``'s base outside the assigned region, copied:
        [(domain, store index, value)]. A box region (steps of 1) leaves at most two slabs per
        dimension (a stencil's frame); other regions copy the whole base (then overwritten)."""
        base = node.inputs[0]
        ranges = []
        for sp in node.attr("spec"):
            if sp[0] == "i":
                ranges.append((sp[1], 1))
            elif abs(sp[2]) == 1 or sympy.sympify(sp[3] - 1).is_nonpositive:   # may be symbolic
                ranges.append((sp[1] if sp[2] > 0 else sp[1] - sp[3] + 1, sp[3]))
            else:
                nvars = index_vars(node.ndim)
                return [(node.shape, nvars, self.value(base, nvars))]
        nvars = index_vars(node.ndim)
        if any(sympy.sympify(length).is_zero for _, length in ranges):     # writes nothing
            return [(node.shape, nvars, self.value(base, nvars))]
        parts = []
        for d, size in enumerate(node.shape):
            lo, length = ranges[d]
            for start, stop in ((0, lo), (lo + length, size)):
                if sympy.sympify(stop - start).is_nonpositive:
                    continue
                domain = [ranges[e][1] for e in range(d)] + [stop - start] + list(node.shape[d + 1:])
                offset = [ranges[e][0] for e in range(d)] + [start] + [0] * (node.ndim - d - 1)
                store = tuple(o + v for o, v in zip(offset, nvars))
                parts.append((tuple(domain), store, self.value(base, store)))
        return parts

    def _plan_back(self, name, start, node, pairs, targets, swap):
        """How ``write_back`` stores ``node`` into buffer ``name``: ("scatter", its stage in
        place), ("swap", the buffers that trade places), ("plan", the regions to store) or
        ("skip", None) when it is there already."""
        label = self.names[id(node)]
        if (other := trades.local(name, node, pairs, self._local, self.buffer_of, self.buffers,
                                   self._moves)) is not None:
            return "swap", (name, other)
        if node.op == "scatter" and id(node) not in self.buffer_of and node.inputs[0] is not start \
                and (steps := sequenced(self, node, start, name, targets)) is not None:
            return "steps", steps           # x[j], x[q] = x[q], x[j]: a store, then a scatter
        if node.op == "scatter" and id(node) not in self.buffer_of and node.inputs[0] is start:
            stage = self._scatter_stage(node, name, label, node.where)
            if (not self._reads(name, stage.body) or stage.numel() == 1) and not any(
                    self._reads(t, stage.body) for t in targets - {name}):
                return "scatter", stage    # in place: only the elements stored
        nvars = index_vars(node.ndim)
        full = [(node.shape, nvars, self.value(node, nvars), label)]
        body = full[0][2]
        if isinstance(body, Load) and body.buf == name and tuple(body.index) == tuple(nvars):
            return "skip", None     # already there (a view of the buffer as it is)
        parts = full
        if node.op == "setitem" and id(node) not in self.buffer_of:
            base = node.inputs[0]
            region = self._region(node) + (self.names[id(node.inputs[1])],)
            chain = self._setitem_chain(node, start, name)
            if base is start:
                parts = [read_first(self, node, base, name) or region]
            elif chain:                             # out[i, 0] = a; out[i, 1] = b
                parts = chain
            elif swap and self._chain_swapped(name, node, pairs, label, start):
                return "swap", (name, self.buffer_of[id(self._chain_base(node))])
            elif (steps := sequenced(self, node, start, name, targets)) is not None:
                return "steps", steps               # A[i, 1:] += A[i, :-1]; A[i, 1:] *= h
            elif self.buffer_of.get(id(base)) == name:  # stored here already (cc[:, :, k]
                parts = [read_first(self, node, base, name) or region]  # = v; cc[:, :, k]
                                                                        # *= s in a loop)
            elif self._in_memory(base):             # the last step of a time loop
                parts = [p + (label,) for p in self._outside(node)] + [region]
        parts = [p for p in parts if 0 not in p[0]]
        return "plan", (name, parts, full, node.where, node)

    def _setitem_chain(self, node: Node, start: Node, name: str):
        """``x[r1] = v1; x[r2] = v2; ...`` on the buffer's value ``start``, as one region store
        per assignment in their order, when no value reads the array (so each may be computed
        after the stores before it), or every value is one element (read before the stores);
        None otherwise (the chain becomes one pass over x)."""
        chain = []
        while node.op == "setitem" and id(node) not in self.buffer_of:
            chain.append(node)
            node = node.inputs[0]
        if node is not start or len(chain) < 2:
            return None
        parts = [self._region(n) + (self.names[id(n.inputs[1])],) for n in reversed(chain)]
        if any(self._reads(name, body) for _, _, body, _ in parts):
            # one-element values read first, into their own buffers: a swap
            # ``a[j], a[j + 1] = a[j + 1], a[j]`` is then two stores, not a pass over ``a``
            if not all(n.inputs[1].shape == () for n in chain):
                return None
            for n in reversed(chain):
                self.realize(n.inputs[1])
            parts = [self._region(n) + (self.names[id(n.inputs[1])],) for n in reversed(chain)]
            if any(self._reads(name, body) for _, _, body, _ in parts):
                return None
        return parts

    def _region(self, node: Node):
        """One assignment ``x[spec] = v`` on the argument: (domain, store index, value)."""
        base, value = node.inputs[:2]     # (then the bind nodes of its data slices)
        nvars = index_vars(node.ndim)
        domain, store, vidx = [], [], []
        for d, sp in enumerate(node.attr("spec")):
            if sp[0] == "i":
                domain.append(1)
                store.append(sympy.sympify(sp[1]))       # n - k for x[..., -k] = v
                continue
            _, start, step, length = sp
            domain.append(length)
            store.append(start + step * nvars[d])
            vidx.append(nvars[d])
        region = node.attr("region")
        body = self.value(value, broadcast_index(tuple(vidx), value.shape, region))
        return tuple(domain), tuple(store), body


def _apart(index, domain, box) -> bool:
    """Is the element ``index`` (over ``domain``'s index variables) outside ``box`` ((lowest,
    length) per axis) for every point of the domain? Shown on one axis whose index is
    affine with known bounds; False when it cannot be shown."""
    nvars = index_vars(len(domain))
    for e, (lo, length) in zip(index, box):
        e = sympy.sympify(e)
        try:
            poly = sympy.Poly(e, *nvars) if e.free_symbols else None
        except sympy.PolynomialError:
            continue
        if poly is not None and poly.total_degree() > 1:
            continue
        emin = emax = e.subs({v: 0 for v in nvars})
        if not all(e.diff(v).is_Number for v in nvars):
            continue
        for v, n in zip(nvars, domain):     # (a size may be a symbol: what is shown for
            c = e.diff(v)                   # every value of it >= 0 holds)
            if c > 0:
                emax += c * (n - 1)
            else:
                emin += c * (n - 1)
        rlo, rhi = sympy.sympify(lo), sympy.sympify(lo + length - 1)
        if sympy.expand(emax - rlo).is_negative or sympy.expand(emin - rhi).is_positive:
            return True
    return False


def _written_box(store, domain):
    """(lowest, length) per axis of the elements a store at ``store`` (affine in the
    domain's index variables, one variable per axis at most) writes over ``domain``; None
    when that is not so simple."""
    nvars = index_vars(len(domain))
    box = []
    for e in store:
        e = sympy.sympify(e)
        used = [v for v in nvars if v in e.free_symbols]
        if len(used) > 1:
            return None
        if not used:
            box.append((e, 1))
            continue
        (v,) = used
        n = domain[nvars.index(v)]
        c = e.diff(v)
        if not c.is_Integer or c == 0 or (e - c * v).has(v):
            return None
        base = e.subs(v, 0)
        span = abs(int(c)) * (n - 1)
        box.append((base + min(0, int(c)) * (n - 1), span + 1))
    return tuple(box)


_COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
            "any": "logical_or", "all": "logical_and"}


def _maybe_less(a, b) -> bool:
    """a < b unless sympy can show otherwise (sizes are symbols >= 2 or ints)."""
    rel = sympy.Lt(a, b)
    return rel if isinstance(rel, bool) else (rel != sympy.false)
