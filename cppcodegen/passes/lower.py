"""Lowering: Graph -> LoopProgram.

In: a traced Graph. Out: a ``loopir.LoopProgram``. Every pointwise node becomes an
expression that is inlined into its consumers (no temporaries), unless inlining would compute
it many times over (``materialized``); every reduction and every graph output becomes a Stage
writing a buffer. Views (reshape, transpose, broadcast, slicing) are rewrites of the index
expressions of the loads under them, never copies. Arguments updated in place get stages
that write the caller's array last (``Lowering.writebacks``).
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import sympy

from ..ir.graph import (CONTROL_OPS, RUN_TIME, VIEW_OPS, Graph, Node, SliceOut,
                        run_time_size)
from ..ir.guardtext import pyexpr
from ..ir.shapes import prod
from ..ir.loopir import (STATUS, Buffer, ExprBuilder, Gather, Index, Load, LoopProgram, Op,
                         Stage, index_vars, nested, walk)
from ..ir.ufuncs import OPS
from ..runtime.compiled import SITE
from .indexing import broadcast_index, contiguous_strides, view_index
from .materialize import OWN_STAGE_OPS, materialized
from .strided_fill import strided_fill
from .assign_steps import steps_in_place
from .lower_assign import AssignLowering
from .lower_control import ControlLowering, users_of
from .lower_counts import CountLowering


# ----------------------------------------------------------------- lowering

class Lowering(ControlLowering, AssignLowering, CountLowering):
    def __init__(self, graph: Graph):
        self.graph = graph
        self.live = None        # construct -> its carried values that matter (liveness.py)
        self.outer_buffers = set()  # the buffers made before the region being lowered
        self.eb = ExprBuilder()
        self.buffers: dict[str, Buffer] = {}
        self.stages: list[Stage] = []
        self.scalars: list = []
        self.buffer_of: dict[int, str] = {}      # realized node id -> buffer name
        self.memo: dict = {}
        self.sites = []                          # the lines of the indexing (_site)
        self.carried_args = set()                # arguments updated in place by constructs
        self.args_in_place = not any(n.op == "extern" for n in graph.nodes)   # (_written_back)
        self.gathers = 0                         # names the gathers' index values
        self.loop_depth = 0                      # loops around the region being lowered
        self.region_nodes = []  # per construct around it: its regions' nodes and params (ids)
        self.counters: dict = {}                 # random draws in loops: see value()
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
            index = eb.index(flat, np.dtype(np.int64))
            if self.loop_depth:         # a draw in a loop: element i of its k-th run draws
                name = f"rng{slot}_base"        # i + k * size (``counters``)
                self.counters[name] = prod(node.shape)
                index = eb.op("add", [index, eb.scalar(name, np.dtype(np.int64))],
                              np.dtype(np.int64))
            args = [index, eb.scalar(f"rng{slot}_seed", u64), eb.scalar(f"rng{slot}_off", u64)]
            return eb.op(f"random_{node.attr('dist')}", args, node.dtype)
        if op == "setitem":
            side = self.region_known.get(id(node))
            if side is False:                   # a part of a split reduction: outside
                return self.value(node.inputs[0], idx)
            return self._setitem(node, idx, inside=side is True)
        if op == "gather":
            return self._gather(node, idx)
        if op == "search":          # np.searchsorted of a sorted 1-D array (lower_counts.py)
            return self._search(node, idx)
        if op == "scatter" or op in OWN_STAGE_OPS:  # (a scatter: a write-back may store it
            return eb.load(self.realize(node), idx, node.dtype)     # in place instead; an own
                                    # stage's value needed early: a scalar computed before a
                                    # store in place, ``_free_after``)
        if op == "cast" or op in OPS:
            args = [self.value(i, broadcast_index(idx, i.shape, node.shape)) for i in node.inputs]
            return eb.op(op, args, node.dtype)
        raise AssertionError(f"cannot lower {op}")

    def _gather(self, node: Node, idx: tuple):
        """``src[..., i0[b], i1[b], ...]`` at ``idx``: the index arrays' values (at the
        broadcast position ``b``) bound to names, the source loaded at them."""
        src, ixs = node.inputs[0], node.inputs[1:]
        guard = None
        if node.attr("guarded", False):
            ixs, guard = ixs[:-1], self.value(ixs[-1], broadcast_index(idx, ixs[-1].shape,
                                                                       node.shape))
        binds, src_idx = self._index_binds(node.attr("axis"), src.shape, ixs, node.shape, idx,
                                           node.where)
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
        binds, store = self._index_binds(node.attr("axis"), base.shape, ixs, value.shape, vvars,
                                         node.where)
        body = self.eb.op("group", [self.value(value, vvars)] + [b[2] for b in binds],
                          value.dtype)
        return Stage(name, "scatter", tuple(value.shape), body, (), node.attr("accumulate"),
                     label, where, store=store, binds=tuple(binds))

    def _index_binds(self, a: int, shape, ixs, out_shape, idx: tuple, where: str = ""):
        """Integer-array indexing of an array of ``shape`` along axes a, a+1, ... at ``idx``, a
        point of the indexed result (``out_shape``): the index values bound to names, (name,
        axis size, value, axis) each, and the element's index with the names in place. The
        axis reported for an index out of range carries the user's line too (``_site``)."""
        i64 = np.dtype(np.int64)
        if STATUS not in self.buffers:          # where an out-of-range index is reported
            self.new_buffer(STATUS, i64, (4,), "status")
        nb = len(idx) - (len(shape) - len(ixs))
        bshape = tuple(out_shape[a:a + nb])
        binds = []
        for j, ix in enumerate(ixs):
            v = self.value(ix, broadcast_index(idx[a:a + nb], ix.shape, bshape))
            binds.append((f"g{self.gathers}_{j}", shape[a + j],
                          v if v.dtype == i64 else self.eb.op("cast", [v], i64),
                          self._site(a + j, where)))
        self.gathers += 1
        names = tuple(sympy.Symbol(b[0], integer=True) for b in binds)
        return binds, tuple(idx[:a]) + names + tuple(idx[a + nb:])

    def _site(self, axis: int, where: str) -> int:
        """The axis an index out of range at ``where`` reports: with the position of the
        user's line in ``sites`` (``runtime.compiled.SITE``)."""
        if not where:
            return axis
        if where not in self.sites:
            self.sites.append(where)
        return axis + SITE * (self.sites.index(where) + 1)

    def add_buffer(self, node: Node, role: str, strides=None, arg=None) -> str:
        name = {"input": f"in{arg}", "constant": f"c{len(self.buffers)}"}.get(role, f"buf{len(self.buffers)}")
        self.new_buffer(name, node.dtype, node.shape, role, strides, arg)
        self.buffer_of[id(node)] = name
        return name

    def add_stage(self, node: Node, role: str):
        where, label = node.where, self.names[id(node)]
        if node.op == "extern":
            from ..backend.gemmgen import native_matmul_node, unswapped
            inputs, swapped, views = node.inputs, (), ()
            if native_matmul_node(node):    # ccg::gemm reads a transposed operand in place
                inputs, swapped = zip(*(unswapped(i) for i in node.inputs))
            else:                           # NumPy takes a transposed view as it is
                inputs, views = zip(*(_untransposed(i) for i in inputs))
            args = tuple(self.realize(i) for i in inputs)
            stage = Stage("", "extern", node.shape, None, (), None, label, where,
                          node.attr("call"), args, transposed=tuple(swapped),
                          views=views if any(views) else ())
        elif node.op == "setitem" and self._stored_in_place(node, role):
            # x[region] = v on a buffer nothing reads afterwards: v stored in its region
            name = self.buffer_of[id(node.inputs[0])]
            self.buffer_of[id(node)] = name
            self._took(name, role)
            domain, store, body = self._region(node)
            if 0 not in domain:
                self.stages.append(Stage(name, "pointwise", domain, body, (), None, label,
                                         where, store=store))
            return
        elif node.op == "setitem" and self._into_empty(node, role):
            # x = np.empty(n); x[0] = v: a buffer of any values, v stored in its region only
            # (not a pass that writes zeros around it)
            name = self.add_buffer(node, role)
            domain, store, body = self._region(node)
            if 0 not in domain:
                self.stages.append(Stage(name, "pointwise", domain, body, (), None, label,
                                         where, store=store))
            return
        elif node.op == "setitem" and strided_fill(self, node, role, label, where):
            return                  # out = np.empty(n); out[0::2] = a; out[1::2] = b
        elif node.op == "setitem" and self._in_memory(node.inputs[0]):
            # x[region] = v on an array in memory: copy the rest of it, store v in the region
            # (its buffer named once the values are: until then it is not computed, for
            # ``_free_after``'s question whether a store in place may precede it)
            parts = self._outside(node) + [self._region(node)]
            name = self.add_buffer(node, role)
            for domain, store, body in parts:
                if 0 not in domain:
                    self.stages.append(Stage(name, "pointwise", domain, body, (), None, label,
                                             where, store=store))
            return
        elif node.op == "scatter" and self._scatter_in_place(node, role, label, where):
            return                  # x[j + 1] = x[j] on a buffer nothing reads afterwards
        elif node.op == "scatter":  # a copy of the base, then the stores in NumPy's order
            nvars = index_vars(node.ndim)
            base = self.value(node.inputs[0], nvars)    # (then its buffer: as above)
            name = self.add_buffer(node, role)
            self.stages.append(Stage(name, "pointwise", node.shape, base, (), None, label, where))
            self.stages.append(self._scatter(node, name, label, where))
            return
        elif node.op == "scan":     # out[..., i, ...] = out[..., i - 1, ...] op src[..., i, ...]
            (src,) = node.inputs
            stage = Stage("", "scan", node.shape, self.value(src, index_vars(node.ndim)),
                          (node.attr("axis"),), node.attr("kind"), label, where)
        elif node.op == "sort":     # each slice along an axis sorted, its permutation, or
            (src,) = node.inputs    # (select) the values at some of its sorted positions
            stage = Stage("", "sort", src.shape, self.value(src, index_vars(src.ndim)),
                          (node.attr("axis"),), node.attr("kind"), label, where,
                          binds=node.attr("kth") or ())
        elif node.op == "segment":  # out[i] = op over src[idx[i]:idx[i+1]] (np.<op>.reduceat)
            stage = self._segment(node, label, where)
        elif node.op == "bincount":  # counts per bin (lower_counts.py)
            stage = self._bincount(node, label, where)
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

    def _segment(self, node: Node, label, where) -> Stage:
        """np.<op>.reduceat: body group(src at i1, the segment's start at i0, the next start
        at i0 + 1), rendered piece by piece (backend/kernels.py, form 'segment'); ``binds``
        holds the length of src and the ufunc's code for the error message."""
        src, ix = node.inputs
        i0, i1 = index_vars(2)
        if STATUS not in self.buffers:
            self.new_buffer(STATUS, np.dtype(np.int64), (4,), "status")
        i64 = np.dtype(np.int64)      # (the status buffer is read too: the kernel takes it)
        body = self.eb.op("group", [self.value(src, (i1,)), self.value(ix, (i0,)),
                                    self.value(ix, (i0 + 1,)), self.eb.load(STATUS, (0,), i64)],
                          node.dtype)
        return Stage("", "segment", node.shape, body, (), node.attr("kind"), label, where,
                     binds=(src.shape[0], node.attr("code")))

    def _scatter_in_place(self, node: Node, role: str, label, where) -> bool:
        """The stores of ``x[idx] = v`` straight into ``x``'s buffer when ``x`` is a
        temporary (a loop's carried array) that nothing reads once they are done, and ``v``
        does not read ``x`` or is one element (read before it is stored)."""
        base = node.inputs[0]
        if role == "temp" and (base.op == "scatter" or base.op == "setitem" and
                               self.loop_depth):    # a chain of stores (a swap's two, ``a[i],
            self.realize(base)      # a[k] = a[k], a[i]`` with a traced ``k`` in a loop): the
                                    # first one's buffer (in place), then this
        name = self.buffer_of.get(id(base))
        if name is None or not self._may_take(name, role) or not self.writable(name) or \
                tuple(self.buffers[name].shape) != tuple(node.shape) or base.dtype != node.dtype \
                or not self._free_after(base, node):
            return False
        stage = self._scatter_stage(node, name, label, where)
        if self._reads(name, stage.body) and stage.numel() != 1:
            return False
        self.buffer_of[id(node)] = name
        self._took(name, role)
        self.stages.append(stage)
        return True

    def _scatter_stage(self, node: Node, name: str, label, where) -> Stage:
        """``_scatter`` into buffer ``name``; where the stored values read it at more than
        one element (``M[[k, p]] = M[[p, k]]``, a row swap), those values first go into a
        buffer of their own (two rows, not a copy of the whole array per swap)."""
        stage = self._scatter(node, name, label, where)
        value = node.inputs[1]
        if self._reads(name, stage.body) and str(stage.numel()) not in ("0", "1") and \
                value.op not in ("input", "constant") and id(value) not in self.buffer_of \
                and not any(self._reads(name, b[2]) for b in stage.binds):
            self.realize(value)
            stage = self._scatter(node, name, label, where)
        return stage

    def realize(self, node: Node) -> str:
        """The buffer holding ``node`` (an extern op's operand), making one if needed."""
        if id(node) not in self.buffer_of:
            self.add_stage(node, "temp")
        return self.buffer_of[id(node)]

    def run(self, arg_strides: dict) -> LoopProgram:
        graph = self.graph
        self.arg_strides = arg_strides
        self.users = users_of(graph.nodes, graph.roots())
        checks = {id(n) for n in graph.nodes if n.op == "gather" and not self.users.get(id(n))}
        flags, ints = dict(graph.python_flags), dict(graph.int_flags)
        nones = dict(graph.none_flags)
        python = set(graph.python_leaves)
        final = {id(n): i for i, n in graph.mutations}     # (an argument updated in place)
        known = {sym.name for n in graph.inputs for d in n.shape if isinstance(d, sympy.Basic)
                 for sym in d.free_symbols} | {name for name, _ in graph.values}
        views = {id(n): v for k, n in enumerate(graph.leaves)    # x[::2], x.T of an argument:
                 if k not in python and (v := argument_view(n, final, known)) is not None}
        self.lower_nodes(graph, {id(n) for n in graph.leaves if id(n) not in views} | checks |
                         {id(n) for n in (*flags.values(), *ints.values(), *nones.values())})
        self.writebacks()                               # its indices checked, frontend/indexing)
        arrays = set(getattr(graph, "array_leaves", ()))
        lists = dict(getattr(graph, "list_leaves", ()))
        count = iter(range(len(graph.leaves)))

        def leaf(node):             # ('py', name): a Python number in the function
            k = next(count)
            if k in nones:          # None where its flag is set (frontend/nones.py)
                return ("none?", (self._leaf(nones[k])[1], value(node, k)))
            return value(node, k)

        def value(node, k):
            if k in ints:           # a Python int where its flag is set (frontend/pyflags.py)
                return ("int?", (self._leaf(ints[k])[1], kind(node, k)))
            return kind(node, k)

        def kind(node, k):
            if id(node) in views and k not in flags and k not in lists and k not in arrays:
                return views[id(node)]
            tag, v = self._leaf(node)
            if tag == "buf" and node.op != "input" and self.buffers[v].role == "input":
                tag = "copy"    # (x.copy() after x was updated in place: the caller's array
                                # holds its value; the result is a copy of it)
            if tag == "buf" and k in python:
                return ("py", v)
            if tag == "buf" and k in flags:     # a Python number where the flag is set
                return ("py?", (self._leaf(flags[k])[1], v))
            if tag == "buf" and k in lists:     # a list a loop appended to: its items
                return (f"list:{lists[k]}", v)
            return ("arr", v) if tag == "buf" and k in arrays else (tag, v)   # a 0-d array
        out_tree = _map_leaves(graph.outputs, leaf)
        if -1 in nones:             # the whole result None where its flag is set
            out_tree = ("none?", (self._leaf(nones[-1])[1], out_tree))
        program = LoopProgram(self.buffers, self.stages, self.scalars, out_tree)
        program.hints = dict(graph.hints)
        program.sizes = _size_symbols(self.buffers, self.stages)
        program.loopvars = _loop_symbols(self.stages)
        program.datavars = _bound_symbols(self.stages)
        program.counters = tuple(self.counters.items())
        program.sites = tuple(self.sites)
        _check_stores(program)
        return program

    def lower_nodes(self, graph, outputs: set, kept=None):
        """Stages for ``graph``'s nodes (the program's, or a region's: ``kept``, the ids of its
        results that are used)."""
        materialize = materialized(graph, kept)
        steps = steps_in_place(graph, self.users)
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
                if self.loop_depth:         # drawn by one kernel, once a run (``counters``)
                    self.add_stage(node, "temp")
            elif op == "constant":
                self.add_buffer(node, "constant", arg=node.attr("array").key)
            elif op in CONTROL_OPS:
                self.lower_control(node)
            elif op == "bind":
                self.lower_bind(node)
            elif op == "print":
                self.lower_print(node)
            elif op == "check":
                self.lower_check(node)
                buf = self.buffers[self.buffer_of[id(node)]]
                if id(node) in outputs and buf.role == "temp":   # the function's result
                    self.buffers[buf.name] = dataclasses.replace(buf, role="output")
            elif op == "loop_out":
                self.buffer_of[id(node)] = self.carry_of[id(node.inputs[0])][node.attr("index")]
            elif op in OWN_STAGE_OPS or id(node) in materialize and not (
                    id(node) in steps and id(node) not in outputs and
                    not self._in_place(node, "temp")):     # (stored in order by the
                self.add_stage(node, "output" if id(node) in outputs else "temp")  # write-back)
            if id(node) in outputs and id(node) not in self.buffer_of:
                self.add_stage(node, "output")

    def new_buffer(self, name, dtype, shape, role="temp", strides=None, arg=None):
        """A buffer; a temporary whose shape depends on an induction variable is allocated
        where it is computed, inside its loop (role 'local')."""
        if role == "temp" and any(run_time_size(d) for d in shape):
            role = "local"
        strides = contiguous_strides(shape) if strides is None else strides
        self.buffers[name] = Buffer(name, dtype, tuple(shape), strides, role, arg)
        return name

    def _in_memory(self, node: Node) -> bool:
        """Is ``node`` a buffer, or a view of one (reading it is a load)?"""
        while node.op in VIEW_OPS and id(node) not in self.buffer_of:
            node = node.inputs[0]
        return id(node) in self.buffer_of

    def _leaf(self, node: Node):
        if node.op == "input":
            return ("arg", node.attr("index"))
        name = self.buffer_of[id(node)]
        buf = self.buffers[name]
        if buf.role == "temp":      # a view of a temporary returned (``power.argmax()`` after
            self.buffers[name] = dataclasses.replace(buf, role="output")   # an extern step)
        return ("buf", name)


def _untransposed(node):
    """(the array under a chain of transposes, the axes order they give it, or None)."""
    perm = tuple(range(node.ndim))
    while node.op == "transpose" and node.ndim > 1:
        inner = node.attr("perm")
        perm = tuple(inner[k] for k in perm)
        node = node.inputs[0]
    return node, (None if perm == tuple(range(node.ndim)) else perm)


def argument_view(node, final=None, known=frozenset()):
    """``('view', argument index, steps)`` when ``node`` is a view of an argument made by
    slices, transposes and reshapes (``x[::2]``, ``a.T``, ``x[1:-1, 0]``; of its value after
    the function updated it in place: ``final``, id(node) -> index) whose sizes are ints or
    expressions of the call's sizes (``known``: names of the symbols the runtime reads from
    the arguments, their sizes and int values: ``img[top:top + h]``;
    written as text it evaluates): returned as NumPy makes it, a view of the caller's array
    (``runtime.compiled._view``); else None (and it is computed into an output of its own)."""
    def size(d):
        if type(d) is int:
            return d
        if isinstance(d, sympy.Basic) and {s.name for s in d.free_symbols} <= known:
            return pyexpr(d)
        raise ValueError(d)
    steps = []
    try:
        while node.op in ("slice", "transpose", "reshape") and len(node.inputs) == 1 and \
                node.ndim:
            shape = tuple(size(d) for d in node.shape)
            if node.op == "slice":
                steps.append(("slice", tuple(tuple(size(x) for x in sp)
                                             for sp in node.attr("spec"))))
            elif node.op == "transpose" and tuple(node.attr("perm")) == tuple(range(node.ndim)):
                return None                 # (an identity transpose: a copy, proxy.own)
            else:
                steps.append(("transpose", tuple(node.attr("perm"))) if node.op == "transpose"
                             else ("reshape", shape))
            node = node.inputs[0]
    except ValueError:                      # (a size known only inside the program)
        return None
    if not steps or node.op != "input" and id(node) not in (final or {}):
        return None
    index = node.attr("index") if node.op == "input" else final[id(node)]
    return ("view", (index, tuple(reversed(steps))))


def _map_leaves(tree, fn):
    if isinstance(tree, Node):
        return fn(tree)
    if isinstance(tree, SliceOut):
        return tree.mapped(lambda v: _map_leaves(v, fn))
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
            bounds = [s.control[k] for k in ("start", "stop", "step") if s.kind == "for"]
            # (a loop's bounds: ``range(n)``; a load's position: a view of a slice whose
            # length is an int argument's, reshaped, ``x[:h * k].reshape(h, k)``)
            for d in tuple(s.domain) + tuple(bounds) + tuple(s.store or ()) + _positions(s):
                names |= {x.name for x in sympy.sympify(d).free_symbols}
            for region in s.regions:
                visit(region)
    visit(stages)
    names = {n for n in names if not n.startswith(RUN_TIME)   # loops' own: local
             and not _LOCAL_NAME.match(n)}
    return tuple(sorted(names, key=lambda n: (n[0], int(n[1:].split("_")[0]), n)))


_LOCAL_NAME = re.compile(r"(i|lv)\d+$|g\d+_\d+$|sk$")
"""Symbols of a kernel's own in a load's position: a domain's index, a loop's induction
variable, a gathered index, the position of a search."""


def _positions(s) -> tuple:
    """The index expressions of ``s``'s loads."""
    if not isinstance(s.body, (Load, Op, Index)):
        return ()
    out = ()
    for e in walk(s.body):
        if isinstance(e, Load):
            out += tuple(e.index)
        elif isinstance(e, Index):
            out += (e.expr,)
    return out


def _bound_symbols(stages) -> tuple:
    """Names of the data symbols the program's bind stages set (``lower_bind``)."""
    return tuple(sym for s in nested(stages) if s.kind == "bind"
                 for sym, _ in s.control["bounds"])


def _loop_symbols(stages) -> tuple:
    """Names of the induction variables of the program's loops, outermost first."""
    return tuple(s.control["var"] for s in nested(stages) if s.kind == "for")


def lower(graph: Graph, arg_strides: dict, copies: bool = True) -> LoopProgram:
    """``arg_strides``: argument index -> strides in elements of that input array.
    ``copies``: column-major copies of matrices loops read by columns (not with hooks, which
    report the graph's buffers only)."""
    from .bool_bytes import bool_bytes
    from .column_copies import column_copies
    from .index_split import within_domains
    program = Lowering(graph).run(arg_strides)
    program.stages = within_domains(program.stages)
    program = bool_bytes(program)
    return column_copies(program) if copies else program


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
