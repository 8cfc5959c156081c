"""Lowering: Graph -> LoopProgram.

In: a traced Graph. Out: a ``loopir.LoopProgram``. Every pointwise node becomes an
expression that is inlined into its consumers (no temporaries), unless inlining would compute
it many times over (``materialized``); every reduction and every graph output becomes a Stage
writing a buffer. Views (reshape, transpose, broadcast, slicing) are rewrites of the index
expressions of the loads under them, never copies. Arguments updated in place get stages
that write the caller's array last (``Lowering.writebacks``).
"""
from __future__ import annotations

import numpy as np
import sympy

from ..ir.graph import CONTROL_OPS, LEAF_OPS, VIEW_OPS, Graph, Node
from ..ir.loopir import STATUS, Buffer, ExprBuilder, Gather, IMod, Load, LoopProgram, Stage, index_vars, walk
from ..ir.ufuncs import OPS
from .indexing import broadcast_index, contiguous_strides, view_index
from .lower_control import ControlLowering, users_of


# ----------------------------------------------------------------- lowering

class Lowering(ControlLowering):
    def __init__(self, graph: Graph):
        self.graph = graph
        self.eb = ExprBuilder()
        self.buffers: dict[str, Buffer] = {}
        self.stages: list[Stage] = []
        self.scalars: list = []
        self.buffer_of: dict[int, str] = {}      # realized node id -> buffer name
        self.memo: dict = {}
        self.gathers = 0                         # names the gathers' index values
        self.names = graph.all_names()
        self.carry_of: dict = {}                 # control node id -> its carry buffers
        self.region_known: dict = {}             # setitem id -> index known in (True) or
                                                 # out of (False) its region (_split_reduce)

    def value(self, node: Node, idx: tuple):
        """The expression for ``node`` at index ``idx``."""
        if id(node) in self.buffer_of:      # (its memo holds the stage body that computed it)
            return self.eb.load(self.buffer_of[id(node)], idx, node.dtype)
        key = (id(node), idx)
        e = self.memo.get(key)
        if e is None:
            e = self.memo[key] = self._value(node, idx)
        return e

    def _value(self, node: Node, idx: tuple):
        eb, op = self.eb, node.op
        if id(node) in self.buffer_of:
            return eb.load(self.buffer_of[id(node)], idx, node.dtype)
        if op == "const":
            return eb.const(node.attr("value"), node.dtype)
        if op == "scalar":
            return eb.scalar(f"s{node.attr('index')}", node.dtype)
        if op in ("reshape", "transpose", "broadcast_to", "slice"):
            return self.value(node.inputs[0], view_index(node, idx))
        if op == "iota":
            return eb.index(node.attr("start", 0) + node.attr("step", 1) * idx[-1], node.dtype)
        if op == "size":
            return eb.index(node.attr("expr"), node.dtype)
        if op == "random":
            slot = node.attr("slot")
            flat = sum((i * st for i, st in zip(idx, contiguous_strides(node.shape))),
                       sympy.Integer(0))
            u64 = np.dtype(np.uint64)
            args = [eb.index(flat, np.dtype(np.int64)), eb.scalar(f"rng{slot}_seed", u64),
                    eb.scalar(f"rng{slot}_off", u64)]
            return eb.op(f"random_{node.attr('dist')}", args, node.dtype)
        if op == "setitem":
            side = self.region_known.get(id(node))
            if side is False:                   # a part of a split reduction: outside
                return self.value(node.inputs[0], idx)
            return self._setitem(node, idx, inside=side is True)
        if op == "gather":
            return self._gather(node, idx)
        if op == "scatter":         # (a write-back may store it in place instead: write_back)
            return eb.load(self.realize(node), idx, node.dtype)
        if op == "cast" or op in OPS:
            args = [self.value(i, broadcast_index(idx, i.shape, node.shape)) for i in node.inputs]
            return eb.op(op, args, node.dtype)
        raise AssertionError(f"cannot lower {op}")

    def _setitem(self, node: Node, idx: tuple, inside=False):
        """where(idx in the assigned region, value at its region index, base at idx); with
        ``inside``, ``idx`` is known to be in the region: the value only."""
        eb, i64, b = self.eb, np.dtype(np.int64), np.dtype(bool)
        base, value = node.inputs
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
            lo = start if step > 0 else start + (length - 1) * step
            st = abs(step)
            if _maybe_less(0, lo):
                compare("greater_equal", i, lo)
            if _maybe_less(lo + (length - 1) * st, base.shape[d] - 1):
                compare("less_equal", i, lo + (length - 1) * st)
            if st > 1:
                compare("equal", IMod(i - lo, st), 0)
            k = (i - lo) if st == 1 else sympy.floor((i - lo) / sympy.Integer(st))
            if conds and not inside:    # clamp: the value is loaded for every element,
                k = sympy.Max(0, sympy.Min(length - 1, k))      # used in the region
            vidx.append(length - 1 - k if step < 0 else k)
        region = node.attr("region")
        val = self.value(value, broadcast_index(tuple(vidx), value.shape, region))
        if not conds or inside:
            return val
        cond = conds[0]
        for c in conds[1:]:
            cond = eb.op("logical_and", [cond, c], b)
        return eb.op("where", [cond, val, self.value(base, idx)], node.dtype)

    def _gather(self, node: Node, idx: tuple):
        """``src[..., i0[b], i1[b], ...]`` at ``idx``: the index arrays' values (at the
        broadcast position ``b``) bound to names, the source loaded at them."""
        src, ixs = node.inputs[0], node.inputs[1:]
        guard = None
        if node.attr("guarded", False):
            ixs, guard = ixs[:-1], self.value(ixs[-1], ())
        binds, src_idx = self._index_binds(node.attr("axis"), src.shape, ixs, node.shape, idx)
        e = self.value(src, src_idx)
        if not isinstance(e, Load) or isinstance(e, Gather):
            e = self.eb.load(self.realize(src), src_idx, src.dtype)
        return self.eb.gather(e.buf, e.index, e.dtype, binds, guard)

    def _scatter(self, node: Node, name: str, label, where) -> Stage:
        """``x[..., i0, i1, ...] = v`` (or ``op.at``): a serial loop over the value's elements
        storing each at the position its indices give (a repeated position keeps the last
        value, or accumulates them all)."""
        base, value, *ixs = node.inputs
        vvars = index_vars(value.ndim)
        binds, store = self._index_binds(node.attr("axis"), base.shape, ixs, value.shape, vvars)
        body = self.eb.op("group", [self.value(value, vvars)] + [b[2] for b in binds],
                          value.dtype)
        return Stage(name, "scatter", tuple(value.shape), body, (), node.attr("accumulate"),
                     label, where, store=store, binds=tuple(binds))

    def _index_binds(self, a: int, shape, ixs, out_shape, idx: tuple):
        """Integer-array indexing of an array of ``shape`` along axes a, a+1, ... at ``idx``, a
        point of the indexed result (``out_shape``): the index values bound to names, (name,
        axis size, value, axis) each, and the element's index with the names in place."""
        i64 = np.dtype(np.int64)
        if STATUS not in self.buffers:          # where an out-of-range index is reported
            self.new_buffer(STATUS, i64, (4,), "status")
        nb = len(idx) - (len(shape) - len(ixs))
        bshape = tuple(out_shape[a:a + nb])
        binds = []
        for j, ix in enumerate(ixs):
            v = self.value(ix, broadcast_index(idx[a:a + nb], ix.shape, bshape))
            binds.append((f"g{self.gathers}_{j}", shape[a + j],
                          v if v.dtype == i64 else self.eb.op("cast", [v], i64), a + j))
        self.gathers += 1
        names = tuple(sympy.Symbol(b[0], integer=True) for b in binds)
        return binds, tuple(idx[:a]) + names + tuple(idx[a + nb:])

    def add_buffer(self, node: Node, role: str, strides=None, arg=None) -> str:
        name = {"input": f"in{arg}", "constant": f"c{len(self.buffers)}"}.get(role, f"buf{len(self.buffers)}")
        self.new_buffer(name, node.dtype, node.shape, role, strides, arg)
        self.buffer_of[id(node)] = name
        return name

    def add_stage(self, node: Node, role: str):
        where, label = node.where, self.names[id(node)]
        if node.op == "extern":
            from ..backend.gemmgen import native_matmul_node, unswapped
            inputs, swapped = node.inputs, ()
            if native_matmul_node(node):    # ccg::gemm reads a transposed operand in place
                inputs, swapped = zip(*(unswapped(i) for i in node.inputs))
            args = tuple(self.realize(i) for i in inputs)
            stage = Stage("", "extern", node.shape, None, (), None, label, where,
                          node.attr("call"), args, transposed=tuple(swapped))
        elif node.op == "setitem" and self._in_place(node, role):
            # x[region] = v on a buffer nothing reads afterwards: v stored in its region
            name = self.buffer_of[id(node.inputs[0])]
            self.buffer_of[id(node)] = name
            domain, store, body = self._region(node)
            if 0 not in domain:
                self.stages.append(Stage(name, "pointwise", domain, body, (), None, label,
                                         where, store=store))
            return
        elif node.op == "setitem" and self._in_memory(node.inputs[0]):
            # x[region] = v on an array in memory: copy the rest of it, store v in the region
            name = self.add_buffer(node, role)
            for domain, store, body in self._outside(node) + [self._region(node)]:
                if 0 not in domain:
                    self.stages.append(Stage(name, "pointwise", domain, body, (), None, label,
                                             where, store=store))
            return
        elif node.op == "scatter":  # a copy of the base, then the stores in NumPy's order
            name = self.add_buffer(node, role)
            nvars = index_vars(node.ndim)
            self.stages.append(Stage(name, "pointwise", node.shape, self.value(node.inputs[0], nvars),
                                     (), None, label, where))
            self.stages.append(self._scatter(node, name, label, where))
            return
        elif node.op == "scan":     # out[..., i, ...] = out[..., i - 1, ...] op src[..., i, ...]
            (src,) = node.inputs
            stage = Stage("", "scan", node.shape, self.value(src, index_vars(node.ndim)),
                          (node.attr("axis"),), node.attr("kind"), label, where)
        elif node.op == "reduce" and self._split_reduce(node, role):
            return
        elif node.op == "reduce":
            (src,) = node.inputs
            domain = src.shape
            body = self.value(src, index_vars(len(domain)))
            stage = Stage("", "reduction", domain, body, node.attr("axes"), node.attr("kind"),
                          label, where)
        else:
            body = self.value(node, index_vars(node.ndim))
            stage = Stage("", "pointwise", node.shape, body, (), None, label, where)
        stage.name = self.add_buffer(node, role)
        self.stages.append(stage)

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
            elif n.op not in LEAF_OPS:
                return False
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

    def realize(self, node: Node) -> str:
        """The buffer holding ``node`` (an extern op's operand), making one if needed."""
        if id(node) not in self.buffer_of:
            self.add_stage(node, "temp")
        return self.buffer_of[id(node)]

    def run(self, arg_strides: dict) -> LoopProgram:
        graph = self.graph
        self.arg_strides = arg_strides
        self.users = users_of(graph.nodes, list(graph.leaves) + [n for _, n in graph.mutations])
        self.lower_nodes(graph, {id(n) for n in graph.leaves})
        self.writebacks()
        out_tree = _map_leaves(graph.outputs, self._leaf)
        program = LoopProgram(self.buffers, self.stages, self.scalars, out_tree)
        program.hints = dict(graph.hints)
        program.sizes = _size_symbols(self.buffers, self.stages)
        program.loopvars = _loop_symbols(self.stages)
        _check_stores(program)
        return program

    def lower_nodes(self, graph, outputs: set):
        """Stages for ``graph``'s nodes (the program's, or a region's)."""
        materialize = materialized(graph)
        for node in graph.nodes:
            op = node.op
            if op == "input":
                i = node.attr("index")
                self.add_buffer(node, "input", self.arg_strides[i], i)
                continue
            if id(node) in self.buffer_of:
                continue
            if op == "scalar":
                self.scalars.append((f"s{node.attr('index')}", node.dtype, node.attr("index")))
            elif op == "random":
                slot, source = node.attr("slot"), node.attr("source")
                u64 = np.dtype(np.uint64)
                self.scalars.append((f"rng{slot}_seed", u64, ("rng", slot, "seed", source)))
                self.scalars.append((f"rng{slot}_off", u64, ("rng", slot, "off", source)))
            elif op == "constant":
                self.add_buffer(node, "constant", arg=node.attr("array").key)
            elif op in CONTROL_OPS:
                self.lower_control(node)
            elif op == "loop_out":
                self.buffer_of[id(node)] = self.carry_of[id(node.inputs[0])][node.attr("index")]
            elif op in ("reduce", "extern", "scan") or id(node) in materialize:
                self.add_stage(node, "output" if id(node) in outputs else "temp")
            if id(node) in outputs and id(node) not in self.buffer_of:
                self.add_stage(node, "output")

    def new_buffer(self, name, dtype, shape, role="temp", strides=None, arg=None):
        """A buffer; a temporary whose shape depends on an induction variable is allocated
        where it is computed, inside its loop (role 'local')."""
        if role == "temp" and any(_loop_dependent(d) for d in shape):
            role = "local"
        strides = contiguous_strides(shape) if strides is None else strides
        self.buffers[name] = Buffer(name, dtype, tuple(shape), strides, role, arg)
        return name

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

    def write_back(self, pairs):
        """``pairs``: (buffer, the node it holds now, the node it must hold); see writebacks."""
        plans, scatters = [], []
        targets = {name for name, _, _ in pairs}
        for name, start, node in pairs:
            label = self.names[id(node)]
            if node.op == "scatter" and id(node) not in self.buffer_of and node.inputs[0] is start:
                stage = self._scatter(node, name, label, node.where)
                if (not self._reads(name, stage.body) or stage.numel() == 1) and not any(
                        self._reads(t, stage.body) for t in targets - {name}):
                    scatters.append(stage)      # in place: only the elements stored
                    continue
            nvars = index_vars(node.ndim)
            full = [(node.shape, nvars, self.value(node, nvars), label)]
            parts = full
            if node.op == "setitem" and id(node) not in self.buffer_of:
                base = node.inputs[0]
                region = self._region(node) + (self.names[id(node.inputs[1])],)
                if base is start:
                    parts = [region]
                elif self._in_memory(base):             # the last step of a time loop
                    parts = [p + (label,) for p in self._outside(node)] + [region]
            parts = [p for p in parts if 0 not in p[0]]
            plans.append((name, parts, full, node.where))
        temps, direct, copies = [], [], []
        for name, parts, full, where in plans:
            if any(isinstance(ld, Load) and ld.buf == name for p in plans if p[0] != name
                   for _, _, body, _ in p[1] for ld in walk(body)):
                hazard = True
            else:
                hazard = any(self._reads_other(name, store, body, domain) or
                             (k and self._reads(name, body))
                             for k, (domain, store, body, _) in enumerate(parts))
            if not hazard:
                direct += [Stage(name, "pointwise", domain, body, (), None, lbl, where,
                                 store=tuple(store)) for domain, store, body, lbl in parts]
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

    def _in_place(self, node: Node, role: str) -> bool:
        """Can ``x[region] = v`` write into the buffer of ``x``? When ``x`` is a temporary
        (a loop's carried array) of the same shape that nothing reads once this assignment
        is computed, and ``v`` reads ``x`` only at the elements it overwrites (in a loop
        body, ``C[i, :i+1] *= beta`` then updates C's row where it is)."""
        base = node.inputs[0]
        name = self.buffer_of.get(id(base))
        if name is None or role != "temp" or self.buffers[name].role != "temp" or \
                tuple(self.buffers[name].shape) != tuple(node.shape) or base.dtype != node.dtype:
            return False
        if not self._dead_after(base, node):
            return False
        domain, store, body = self._region(node)
        return not self._reads_other(name, store, body, domain)

    def _in_memory(self, node: Node) -> bool:
        """Is ``node`` a buffer, or a view of one (reading it is a load)?"""
        while node.op in VIEW_OPS and id(node) not in self.buffer_of:
            node = node.inputs[0]
        return id(node) in self.buffer_of

    @staticmethod
    def _reads(name, body) -> bool:
        return any(isinstance(ld, Load) and ld.buf == name for ld in walk(body))

    @staticmethod
    def _reads_other(name, store, body, domain=()) -> bool:
        """Does ``body`` read buffer ``name`` anywhere but at ``store`` (the element written)?
        (An index variable over a ``domain`` dimension of size 1 is 0.)"""
        ones = {v: 0 for v, n in zip(index_vars(len(domain)), domain) if n == 1}

        def same(a, b):
            return sympy.expand(sympy.sympify(a - b).subs(ones)) == 0
        return any(isinstance(ld, Load) and ld.buf == name and (len(ld.index) != len(store) or not all(
            same(a, b) for a, b in zip(ld.index, store))) for ld in walk(body))

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

    def _region(self, node: Node):
        """One assignment ``x[spec] = v`` on the argument: (domain, store index, value)."""
        base, value = node.inputs
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

    def _leaf(self, node: Node):
        if node.op == "input":
            return ("arg", node.attr("index"))
        return ("buf", self.buffer_of[id(node)])


_COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
            "any": "logical_or", "all": "logical_and"}


def _maybe_less(a, b) -> bool:
    """a < b unless sympy can show otherwise (sizes are symbols >= 2 or ints)."""
    rel = sympy.Lt(a, b)
    return rel if isinstance(rel, bool) else (rel != sympy.false)


def _map_leaves(tree, fn):
    if isinstance(tree, Node):
        return fn(tree)
    if isinstance(tree, dict):
        return {k: _map_leaves(v, fn) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_map_leaves(v, fn) for v in tree)
    return ("value", tree)


def _size_symbols(buffers, stages) -> tuple:
    """Names of the size and stride symbols the kernels use (each becomes an int64 argument)."""
    names = set()
    for b in buffers.values():
        for d in tuple(b.shape) + tuple(b.strides):
            names |= {s.name for s in sympy.sympify(d).free_symbols}
    def visit(stages):
        nonlocal names
        for s in stages:
            bounds = [s.control[k] for k in ("start", "stop") if s.kind == "for"]
            for d in tuple(s.domain) + tuple(bounds):     # (a loop's bounds: ``range(n)``)
                names |= {x.name for x in sympy.sympify(d).free_symbols}
            for region in s.regions:
                visit(region)
    visit(stages)
    names = {n for n in names if not n.startswith("lv")}       # induction variables: local
    return tuple(sorted(names, key=lambda n: (n[0], int(n[1:].split("_")[0]), n)))


def _loop_dependent(d) -> bool:
    return any(s.name.startswith("lv") for s in getattr(d, "free_symbols", ()))


def _loop_symbols(stages) -> tuple:
    """Names of the induction variables of the program's loops, outermost first."""
    out = []
    for s in stages:
        if s.kind == "for":
            out.append(s.control["var"])
        for region in s.regions:
            out += _loop_symbols(region)
    return tuple(out)


INLINE_LIMIT = 256      # ops in one inlined expression before a producer gets a buffer
SHARED_MIN = 4          # ops a producer read through several views must have to get one


def materialized(graph: Graph) -> set:
    """ids of pointwise nodes computed into a buffer of their own instead of being inlined
    into every consumer. Inlining recomputes a producer once per distinct way it is read:

    - a node read through two different views (``u[:-2]`` and ``u[2:]``, ``h[:, None]`` and
      ``h[None, :]``) is materialized once it has ``SHARED_MIN`` ops: inlined, a time loop of
      stencils (each step reading the last at five offsets) would grow as 5**T;
    - a node whose inlined expression passes ``INLINE_LIMIT`` ops is materialized: the C++ and
      the compile time stay bounded. The expression is counted as the renderer writes it: one
      term per distinct (node, chain of views from the root) pair, since lowering shares a
      subexpression read at the same index (Black-Scholes' d1 feeds both outputs four times),
      while one read through another view is new code (a time step read at five offsets).
    """
    compute = [n for n in graph.nodes
               if n.op not in LEAF_OPS and n.op not in VIEW_OPS and n.op not in CONTROL_OPS
               and n.op not in ("reduce", "extern", "scan", "iota", "random", "carry",
                                "loop_out")]
    paths: dict = {}
    for node in graph.nodes:
        if node.op in VIEW_OPS:
            continue
        for inp in node.inputs:
            src, chain = _through_views(node, inp)
            paths.setdefault(id(src), set()).add(chain)
    is_compute = {id(n) for n in compute}
    terms, out = {}, set()        # compute node id -> its inlined terms {(node id, chain)}
    for node in compute:
        mine = set()
        for inp in node.inputs:
            src, chain = _through_views(node, inp)
            mine.add((id(src), chain))
            if id(src) in is_compute and id(src) not in out:
                mine.update((i, chain + c) for i, c in terms[id(src)])
        if len(mine) >= INLINE_LIMIT or (len(paths.get(id(node), ())) > 1
                                         and len(mine) + 1 >= SHARED_MIN):
            out.add(id(node))
            mine = set()
        terms[id(node)] = mine
    return out


def _through_views(node: Node, inp: Node) -> tuple:
    """(the node ``inp`` is a view of, the chain of views from ``node`` down to it)."""
    chain, src = [], inp
    while src.op in VIEW_OPS:
        chain.append((src.op, src.attrs, src.shape))
        src = src.inputs[0]
    if inp.shape != node.shape and node.op not in ("reduce", "extern", "setitem"):
        chain.append(("broadcast", node.shape))
    return src, tuple(chain)


def lower(graph: Graph, arg_strides: dict) -> LoopProgram:
    """``arg_strides``: argument index -> strides in elements of that input array."""
    return Lowering(graph).run(arg_strides)


def _check_stores(program: LoopProgram) -> None:
    """Every partial store (``x[region] = v``) stays inside its buffer at the traced sizes
    (``program.hints`` for symbolic ones): the lowest and highest element each affine store
    index reaches over the stage's domain. A miss is a bug in the lowering: it raises here
    instead of writing outside memory."""
    def size(e):
        e = sympy.sympify(e).subs(program.hints) if program.hints else sympy.sympify(e)
        return int(e) if e.is_number else None

    seen = set()        # (store, domain, shape): a time loop repeats one assignment
    for st in program.stages:
        if st.store is None or st.kind == "scatter":     # (checked as it runs)
            continue
        key = (st.store, st.domain, program.buffers[st.name].shape)
        if key in seen:
            continue
        seen.add(key)
        domain = [size(d) for d in st.domain]
        shape = [size(n) for n in program.buffers[st.name].shape]
        if None in domain or None in shape or 0 in domain:
            continue
        ivars = index_vars(len(domain))
        for axis, (e, n) in enumerate(zip(st.store, shape)):
            e = sympy.sympify(e)
            if program.hints:
                e = e.subs(program.hints)
            if not e.is_polynomial(*ivars) or sympy.Poly(e, *ivars).total_degree() > 1:
                continue
            lo = hi = e.subs({v: 0 for v in ivars})
            for v, d in zip(ivars, domain):
                c = e.coeff(v)
                lo, hi = lo + min(0, c * (d - 1)), hi + max(0, c * (d - 1))
            if lo.is_number and hi.is_number and (lo < 0 or hi >= n):
                raise AssertionError(
                    f"cppcodegen internal error: stage {st.name} over {list(st.domain)} stores "
                    f"at {list(st.store)}, axis {axis} reaching [{lo}, {hi}] of size {n} "
                    f"({st.where}); please report it")
