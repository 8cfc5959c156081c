"""Lowering of structured control flow: ``for``, ``while`` and ``if`` nodes to control stages.

In: a control node of the graph (``ir/graph.py``: its regions, carried values and bounds).
Out: one ``Stage`` of kind ``for``/``while``/``if`` whose ``regions`` hold the stages of each
body, lowered like a program of their own: every carried value lives in one buffer (its
*carry buffer*) for the whole construct, a region reads it through its ``carry`` parameters,
and the region's results are written back into the carry buffers at its end, with the same
rule as arguments updated in place (direct where every element is read before it is
overwritten, through a temporary otherwise). A ``loop_out`` node is its carry buffer.

Buffers a region computes are allocated once per call when their shape does not depend on an
induction variable, and inside the region otherwise (``Buffer.role == 'local'``).

A ``bind`` node (a slice with bounds from array values) becomes a ``bind`` stage: the C++
sets its data symbol from the value's buffer there, before the kernels that use it. A
``check`` node becomes a ``check`` stage: the C++ reports an error when a count is 0.
"""
from __future__ import annotations


import numpy as np

from ..errors import UnsupportedError
from ..ir.graph import CONTROL_OPS, VIEW_OPS, Graph, regions as regions_of
from ..ir.graph import walk as walk_nodes
from ..ir.loopir import STATUS, Load, Stage, control_reads, index_vars, nested, walk
from ..ir.ufuncs import OPS
from ..runtime.compiled import SITE
from .assign_steps import STEPS
from .indexing import same_index
from .liveness import live_carries

LINE = 64           # bytes of a cache line
SPREAD = 1024       # bytes of each written line run a block of column writes covers


class ControlLowering:
    """Methods of ``lower.Lowering`` for control nodes (mixed in)."""

    def lower_control(self, node):
        n = node.attr("ncarry")
        first = 1 if node.op == "if" else 0
        live = self._live_carries(node)
        carry = []              # (two carries of one value: two buffers)
        for k, init in enumerate(node.inputs[first:first + n]):
            carry.append(self._carry_buffer(node, k, init, carry) if k in live else None)
        self.carry_of[id(node)] = carry
        for i in node.inputs[first + n:]:   # a store the regions read as it is: made
            while i.op in VIEW_OPS:         # before the construct (lowered in a branch, it
                i = i.inputs[0]             # would be stored only where the branch runs)
            if i.op in STEPS:
                self.realize(i)
        if node.op != "if":         # values computed before a loop, once (not per iteration:
            for i in node.inputs[n:]:       # `scale = nbins / (hi - lo)` read in the body,
                while i.op in VIEW_OPS and id(i) not in self.buffer_of:   # an np.pad read at
                    i = i.inputs[0]                                       # shifted columns)
                if id(i) not in self.buffer_of and (i.op in BEFORE_LOOPS or i.op in OPS):
                    self.realize(i)     # (a gather ``xs = px[order]`` read at ``xs[k]``:
                                        # once, not in every iteration)
        self.loop_depth += node.op != "if"
        self.region_nodes.append(_made_in(regions_of(node)))
        try:
            control, regions = self._lower_construct(node, carry)
        finally:
            self.loop_depth -= node.op != "if"
            self.region_nodes.pop()
        if node.op == "for" and control["up"] is None:    # (a zero step's error: the line)
            control["site"] = self._site(0, node.where) // SITE
        self.stages.append(Stage("", node.op, (), None, nodes=self.names[id(node)],
                                 where=node.where, control=control, regions=tuple(regions)))

    def _lower_construct(self, node, carry):
        """The control of ``node``'s stage and its regions' stages."""
        if node.op == "if":
            control = {"cond": self.realize(node.inputs[0])}
            regions = [self._lower_region(node.attr(r), carry, swap=False)[0]
                       for r in ("then", "orelse")]
        elif node.op == "while":
            cond, (test,) = self._lower_region(node.attr("cond"), carry, writes=False)
            control = {"cond": test}
            regions = [cond, self._lower_region(node.attr("body"), carry)[0]]
        else:
            roles = node.attr("parallel", None)
            auto = node.attr("auto", False)
            # (a loop proved independent: its lowered stages are checked instead, and its
            # arrays do not trade buffers, which would swap the shared array)
            body, tests = self._lower_region(node.attr("body"), carry,
                                             roles=None if auto else roles,
                                             where=node.where, swap=not auto)
            if auto and not self._accesses_confined(carry, node.attr("confined"), body,
                                                    node.attr("var"), node.attr("step")):
                roles = None            # proved independent, but not lowered so: serial
            step = node.attr("step")
            control = {"var": node.attr("var"), "start": node.attr("start"),
                       "stop": node.attr("stop"), "step": step,
                       "up": node.attr("up", None) if not isinstance(step, int) else step > 0,
                       "test": tests[0] if tests else None}
            if control["up"] is None and STATUS not in self.buffers:   # (a zero step's error)
                self.new_buffer(STATUS, np.dtype(np.int64), (4,), "status")
            names = node.attr("bounds", ())     # bounds from array values: their buffers
            if names:
                control["bounds"] = tuple(zip(names, (self.realize(b) for b in
                                                      node.inputs[-len(names):])))
            if roles is not None:       # prange: what each carry buffer is to the threads
                control["parallel"] = tuple((buf, role) for buf, role in zip(carry, roles)
                                            if buf is not None)
                control["auto"] = auto  # (not prange: the threads only when it pays)
                control["lanes"] = node.attr("lanes", False)    # (never the threads)
                if auto:
                    control["block"] = self._block_floor(carry, node.attr("confined"),
                                                         node.attr("var"))
            regions = [body]
        return control, regions

    def lower_bind(self, node):
        """A data slice's start or length (``frontend/dataslice.py``): its value computed
        into a buffer, and a ``bind`` stage after which kernels read it as a size symbol."""
        buf = self.realize(node.inputs[0])
        self.buffer_of[id(node)] = buf
        self.stages.append(Stage("", "bind", (), None, nodes=self.names[id(node)],
                                 where=node.where, control={"bounds": ((node.attr("sym"), buf),)}))

    def lower_check(self, node):
        """A reduction's value whose element count is known only at run time: a ``check``
        stage after it reports NumPy's error (code ``code``) when the count is 0."""
        value, count = (self.realize(i) for i in node.inputs)
        self.buffer_of[id(node)] = value
        if STATUS not in self.buffers:
            self.new_buffer(STATUS, np.dtype(np.int64), (4,), "status")
        self.stages.append(Stage("", "check", (), None, nodes=self.names[id(node)],
                                 where=node.where,
                                 control={"count": count, "code": node.attr("code"),
                                          "site": self._site(0, node.where) // SITE}))

    def lower_print(self, node):
        """The user's print: a ``print`` stage, where the C++ hands the values to Python's
        print (``runtime/printing.py``)."""
        values = [self.realize(i) for i in node.inputs]
        self.stages.append(Stage("", "print", (), None, nodes=self.names[id(node)],
                                 where=node.where,
                                 control={"values": values, "spec": node.attr("spec")}))

    def _carry_buffer(self, node, k, init, taken=()) -> str:
        """The buffer of carried value ``k``: the buffer ``init`` is in, when nothing reads
        ``init`` once the construct has started (an array updated in a loop and then in a
        branch or a loop inside it stays in one buffer); otherwise a buffer of its own,
        holding ``init`` when the construct starts. An argument the construct updates in
        place for the caller (``for i in ...: A[i, 1:] += A[i - 1, 1:]``) is updated in its
        own memory, not copied in and out (``_written_back``). ``taken``: the buffers of the
        construct's carries before it (``p = r.copy()`` then both updated in the loop: ``p``
        and ``r`` start as one value, and each needs a buffer of its own)."""
        if init.op in ("setitem", "scatter") and id(init) not in self.buffer_of:
            self.add_stage(init, "temp")    # (into its base's buffer where that is dead)
        buf = self.buffer_of.get(id(init))
        if self.region_nodes and id(init) not in self.region_nodes[-1]:
            buf = None      # (a value from before the loop or branch around: every iteration
            # reads it again, ``s = np.log(S0)`` before an inner loop adds to ``s``; what
            # reads it after the branch is not among this region's users, ``k = lx`` in
            # the next branch)
        if buf is not None and buf not in taken and (self.buffers[buf].role == "temp" or
                                self._written_back(init, node, k, buf)):
            if self._free_after(init, node, at_end=init.op == "input"):
                return buf
        name = f"buf{len(self.buffers)}"
        self.new_buffer(name, init.dtype, init.shape)
        if init.op == "broadcast_to" and init.attr("uninit", False):
            return name                 # np.empty: any start value, so no fill
        nvars = index_vars(init.ndim)
        self.stages.append(Stage(name, "pointwise", init.shape, self.value(init, nvars), (),
                                 None, f"carry {k} of {node.op}", node.where))
        return name

    def _written_back(self, init, node, k, buf) -> bool:
        """Is ``buf`` an argument whose final value (its write-back) is carried value ``k``
        of ``node`` (maybe assigned in parts after it), or the carry of a construct around
        this one that is such an argument? (Not with NumPy steps between kernels: a call
        whose NumPy step gives another shape runs again as NumPy, which needs the arguments
        as they came, runtime/compiled.py ``run_fallback``.)"""
        if self.buffers[buf].role != "input" or not self.args_in_place:
            return False
        if init.op != "input":
            return buf in self.carried_args
        final = dict(self.graph.mutations).get(init.attr("index"))
        while final is not None and final.op == "setitem" and id(final) not in self.buffer_of:
            final = final.inputs[0]
        if final is None or final.op != "loop_out" or final.inputs[0] is not node or \
                final.attr("index") != k:
            return False
        self.carried_args.add(buf)
        return True

    def _live_carries(self, node) -> set:
        """The carried values that matter (``liveness.py``); others (a loop's index variable
        nobody reads) get no buffer."""
        if self.live is None:
            self.live = live_carries(self.graph.nodes, self.graph.roots())
        return self.live[id(node)]

    def _read_later(self, init, control, hoist=True, at_end=False):
        """The scalars to compute before ``control`` starts so that nothing after it reads
        ``init`` ([] when nothing does), or None when something else does. (A Metropolis
        sweep's ``if ...: spins[i, j] = -s`` keeps ``nb`` and ``dE``, read from the spins
        before the flip: computed before the branch, the branch flips the spins where they
        are instead of in a copy of the whole array.) Users already in a buffer were
        computed before; a result or another construct reads it later. ``hoist`` False:
        no scalars are offered, [] or None. ``at_end``: a read at the end (``init`` returned)
        does not count (an argument updated in place is returned as the updated array)."""
        stack, seen, early = [init], set(), []
        while stack:
            n = stack.pop()
            for u in self.users.get(id(n), ()):
                if u is control and _reads_inside(control, n):
                    # a value made from init that the construct reads as it runs (``t =
                    # a[0]`` before a loop that shifts a): computed before it starts; init
                    # itself read as it runs (``cur = start`` carried, ``cur == start``
                    # tested): its buffer stays init's
                    if not hoist or n.shape != () or n is init:
                        return None
                    early.append(n)
                    continue
                if u is control or (u is not None and (id(u) in self.buffer_of or
                                                        id(u) in self.carry_of)) or \
                        (u is None and at_end and n is init):   # (a construct lowered)
                    continue
                if u is None or u.op in CONTROL_OPS:
                    return None
                if id(u) in seen:
                    continue
                seen.add(id(u))
                if hoist and u.shape == () and u.op != "loop_out" and not self._needs(u, control):
                    early.append(u)
                else:
                    stack.append(u)
        return early

    def _free_after(self, init, control, at_end=False) -> bool:
        """Can ``control`` (a construct, an assignment) take over ``init``'s buffer? Yes when
        nothing computed after it reads ``init``, once the scalars read from ``init`` later
        are computed now (``_read_later``: a swap ``a[j], a[j + 1] = a[j + 1], a[j]`` reads
        both elements before either store)."""
        if self._dead_after(init, control, at_end):
            return True
        early = self._read_later(init, control, at_end=at_end)
        for u in early or ():
            self.realize(u)
        if early:               # (expressions made before read them inline: a while's
            self.memo.clear()   # s += x[i] stored at the end after the i += 1 it precedes)
        return early is not None

    def _dead_after(self, init, control, at_end=False) -> bool:
        """Is ``init`` read by nothing computed after ``control`` starts?"""
        return self._read_later(init, control, hoist=False, at_end=at_end) == []

    def _needs(self, node, control) -> bool:
        """Does ``node`` depend on ``control`` (or on something else not computed yet that
        is a construct's result)?"""
        stack, seen = list(node.inputs), set()
        while stack:
            n = stack.pop()
            if n is control or n.op in CONTROL_OPS or n.op == "loop_out" and \
                    id(n) not in self.buffer_of:    # (a loop lowered already: its value is
                return True                         # there, ``a[i], a[hi] = a[hi], a[i]``
            if id(n) in seen or id(n) in self.buffer_of:    # after a partition loop)
                continue
            seen.add(id(n))
            stack.extend(n.inputs)
        return False

    def _lower_region(self, region, carry, writes=True, roles=None, where="", swap=True):
        """The stages of one region (its carried values written back when ``writes``) and
        the buffers of its extra results (a while-condition's bool, a loop's go-on test).
        ``roles``: a prange body's (``frontend/parallel.py``), whose shared arrays must be
        updated where they are (a copy of the whole array back would race: an error).
        ``swap``: a loop body's (not a branch's, not a parallel one's) arrays may trade
        buffers at its end (``write_back``)."""
        saved, self.stages = self.stages, []
        known, names = set(self.buffer_of), set(self.buffers)
        outer, self.outer_buffers = self.outer_buffers, names
        for p, buf in zip(region.params, carry):
            if buf is not None:
                self.buffer_of[id(p)] = buf
        sub = Graph(inputs=[], nodes=list(region.nodes), outputs=tuple(region.results),
                    leaves=list(region.results))
        saved_users, self.users = self.users, users_of(region.nodes, region.results)
        self.lower_nodes(sub, outputs=set(), kept={      # (the carried values that are used)
            id(r) for buf, r in zip(carry, region.results) if buf is not None})
        extra = region.results[len(carry):] if writes else region.results
        tests = tuple(self.realize(r) for r in extra)
        if writes:
            pairs = [(buf, p, r) for buf, p, r in zip(carry, region.params, region.results)
                     if buf is not None and r is not p and self.buffer_of.get(id(r)) != buf]
            before = len(self.stages)
            self.write_back(pairs, swap=swap and roles is None,
                            local=set(self.buffers) - names)
            if roles is not None:
                self._check_shared_arrays(carry, roles, self.stages[before:], where)
        stages, self.stages = self.stages, saved
        self.users, self.outer_buffers = saved_users, outer
        self._forget_outer(region, known, names)
        return stages, tests

    def _forget_outer(self, region, known, names):
        """Values from outside ``region`` that its stages computed into buffers (a bound
        read by a loop in a branch: ``i + 1`` in ``if ok: for j in range(n): ... a[i]``) are
        there only where the region runs: forgotten, so that a read after the construct
        computes them again where it is. (One stored into a buffer that existed before, in
        place, cannot be undone: an internal error, and the function runs as Python.)"""
        inside = {id(p) for p in region.params}
        for n in walk_nodes(region.nodes):
            inside |= {id(n)} | {id(p) for r in regions_of(n) for p in r.params}
        outer = [k for k in self.buffer_of if k not in known and k not in inside]
        for k in outer:
            if self.buffer_of[k] in names:
                raise AssertionError("a value from outside a region stored in place in it")
            del self.buffer_of[k]
        if outer:
            self.memo.clear()

    def _accesses_confined(self, carry, confined, stages, var, step) -> bool:
        """Do the lowered stages of a loop proved independent (and those of the loops and
        branches inside it) read and write each shared array only where the proof says, at
        index ``e`` on axis ``d``? (An update lowered as a select over the whole array and a
        copy back would race with the other threads.) An array read ahead of its store
        (``frontend/parallel._ahead``) is read at ``e`` or at elements a later iteration of
        the loop (``var`` by ``step``) stores, all before its store."""
        shared = {carry[k]: (d, e) for k, d, e, _, _ in confined
                  if k < len(carry) and carry[k] is not None}
        ahead = {carry[k] for k, _, _, a, _ in confined if a and k < len(carry)}
        outside = {carry[k]: others for k, _, _, _, others in confined if k < len(carry)}
        stored = set()
        for s in nested(stages):
            if s.control is not None:
                if set(control_reads(s)) & set(shared):
                    return False
                continue
            if s.kind == "extern" and set((s.name,) + tuple(s.args)) & set(shared):
                return False
            for m in (s.members or (s,)):
                ones = {v: 0 for v, n in zip(index_vars(len(s.domain)), s.domain) if n == 1}
                for ld in walk(m.body) if m.body is not None else ():
                    if isinstance(ld, Load) and ld.buf in shared:
                        d, e = shared[ld.buf]
                        if len(ld.index) <= d or not (
                                any(same_index(ld.index[d], c, ones) for c in outside[ld.buf])
                                or ld.buf not in stored and (
                                    same_index(ld.index[d], e, ones) or ld.buf in ahead and
                                    _later(ld.index[d], e, ones, var, step))):
                            return False
                if m.name in shared:
                    d, e = shared[m.name]
                    if m.store is None or len(m.store) <= d or not same_index(m.store[d], e, ones):
                        return False
                    stored |= {m.name} & ahead
        return True

    def _block_floor(self, carry, confined, var) -> int:
        """The fewest iterations of a loop proved independent that one block on the threads
        should take: where consecutive iterations write elements closer than a cache line
        (``out[j, i] = ...`` in a loop over ``i``: a column), small blocks on two threads
        would write the same lines all the time (false sharing), so a block then covers
        ``SPREAD`` bytes of each line it writes; 1 elsewhere."""
        floor = 1
        for k, d, e, _, _ in confined:
            buf = self.buffers.get(carry[k]) if k < len(carry) and carry[k] else None
            slope = e.diff(next((v for v in e.free_symbols if str(v) == var), 0)) \
                if hasattr(e, "free_symbols") else 0
            if buf is None or d >= len(buf.strides) or not isinstance(buf.strides[d], int) \
                    or not slope.is_number:
                continue
            step = abs(int(buf.strides[d] * slope)) * buf.dtype.itemsize
            if 0 < step < LINE:
                floor = max(floor, -(-SPREAD // step))
        return floor

    def _check_shared_arrays(self, carry, roles, stages, where):
        """A prange body's stores into its shared arrays must be element- or region-wise:
        a stage writing the whole array (a copy back) would race with the other threads."""
        shared = {buf for buf, role in zip(carry, roles) if buf is not None and role[0] == "array"}
        for s in stages:
            buf = self.buffers.get(s.name)
            if s.name in shared and tuple(s.domain) == tuple(buf.shape) and (
                    s.store is None or tuple(s.store) == index_vars(len(buf.shape))):
                raise UnsupportedError(
                    f"the prange loop at {where or 'its line'} writes all of an array it "
                    "shares between iterations (each iteration would store the whole array, "
                    "which threads cannot share); use range for this loop")


# ops of values a loop reads from outside computed before it starts (with the pointwise ones)
BEFORE_LOOPS = ("cast", "setitem", "gather", "reduce", "scan", "sort", "search", "segment",
                "bincount")


def _made_in(regions_) -> set:
    """The ids of the nodes and parameters of ``regions_`` and of the regions inside them."""
    inside = set()
    for region in regions_:
        inside |= {id(p) for p in region.params}
        for n in walk_nodes(region.nodes):
            inside |= {id(n)} | {id(p) for r in regions_of(n) for p in r.params}
    return inside


def users_of(nodes, results) -> dict:
    """id(node) -> the nodes that read it (None for a read at the end: a result)."""
    out: dict = {}
    for n in nodes:
        for i in n.inputs:
            out.setdefault(id(i), []).append(n)
    for r in results:
        out.setdefault(id(r), []).append(None)
    return out


def _reads_inside(control, node) -> bool:
    """Does construct ``control`` read ``node`` other than as the start of a carried value
    (a value its regions read as it is, a bound)?"""
    if control.op not in CONTROL_OPS:
        return False
    first = 1 if control.op == "if" else 0
    n = control.attr("ncarry")
    return any(i is node for i in control.inputs[:first] + control.inputs[first + n:])


def _later(index, e, ones, var, step) -> bool:
    """Is ``index`` the element ``e`` plus a constant that an iteration after this one (of a
    loop over ``var`` by ``step``) stores, or that none does?"""
    import sympy
    ahead = sympy.expand(sympy.sympify(index - e).subs(ones or {}))
    sym = next((v for v in getattr(e, "free_symbols", ()) if str(v) == var), None)
    return sym is not None and ahead.is_number and isinstance(step, int) and \
        ahead * e.diff(sym) * step >= 0
