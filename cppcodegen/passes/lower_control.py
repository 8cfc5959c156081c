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
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import CONTROL_OPS, Graph
from ..ir.loopir import Stage, index_vars


class ControlLowering:
    """Methods of ``lower.Lowering`` for control nodes (mixed in)."""

    def lower_control(self, node):
        n = node.attr("ncarry")
        first = 1 if node.op == "if" else 0
        inits = node.inputs[first:first + n]
        carry = [self._carry_buffer(node, k, init) for k, init in enumerate(inits)]
        self.carry_of[id(node)] = carry
        control = {"where": node.where}
        bodies = []
        if node.op == "if":
            control["cond"] = self.realize(node.inputs[0])
            for region in (node.attr("then"), node.attr("orelse")):
                bodies.append(self._lower_region(region, carry))
        elif node.op == "while":
            cond, body = node.attr("cond"), node.attr("body")
            stages, (test,) = self._lower_region(cond, carry, results=False)
            control["cond"] = test
            bodies += [(stages, ()), self._lower_region(body, carry)]
        else:
            control.update(var=node.attr("var"), start=node.attr("start"),
                           stop=node.attr("stop"), step=node.attr("step"))
            body = node.attr("body")
            stages, tests = self._lower_region(body, carry, test=node.attr("test"))
            control["test"] = tests[0] if tests else None
            bodies.append((stages, ()))
        self.stages.append(Stage("", node.op, (), None, nodes=self.names.get(id(node), node.op),
                                 where=node.where, control=control,
                                 regions=tuple(stages for stages, _ in bodies)))

    def _carry_buffer(self, node, k, init) -> str:
        """The buffer of carried value ``k``: the buffer ``init`` is in, when nothing reads
        ``init`` once the construct has started (an array updated in a loop and then in a
        branch or a loop inside it stays in one buffer); otherwise a buffer of its own,
        holding ``init`` when the construct starts."""
        buf = self.buffer_of.get(id(init))
        if buf is not None and self.buffers[buf].role == "temp" \
                and self._dead_after(init, node):
            return buf
        name = f"buf{len(self.buffers)}"
        self.new_buffer(name, init.dtype, init.shape)
        nvars = index_vars(init.ndim)
        self.stages.append(Stage(name, "pointwise", init.shape, self.value(init, nvars), (),
                                 None, f"carry {k} of {node.op}", node.where))
        return name

    def _dead_after(self, init, control) -> bool:
        """Is ``init`` read by nothing computed after ``control`` starts? (Users already in
        a buffer were computed before it; a result or another construct reads it later.)"""
        stack, seen = [init], set()
        while stack:
            n = stack.pop()
            for u in self.users.get(id(n), ()):
                if u is control or (u is not None and id(u) in self.buffer_of):
                    continue
                if u is None or u.op in CONTROL_OPS:
                    return False
                if id(u) not in seen:
                    seen.add(id(u))
                    stack.append(u)
        return True

    def _lower_region(self, region, carry, results=True, test=False):
        """The stages of one region (its carried values written back when ``results``) and
        the buffers of its extra results (a while-condition's bool, a loop's go-on test)."""
        saved, self.stages = self.stages, []
        for p, buf in zip(region.params, carry):
            self.buffer_of[id(p)] = buf
        sub = Graph(inputs=[], nodes=list(region.nodes), outputs=tuple(region.results),
                    leaves=list(region.results))
        saved_users, self.users = self.users, users_of(region.nodes, region.results)
        self.lower_nodes(sub, outputs=set())
        extra = region.results if not results else region.results[len(carry):]
        tests = tuple(self.realize(r) for r in extra)
        if results:
            pairs = [(buf, p, r) for buf, p, r in zip(carry, region.params, region.results)
                     if r is not p and self.buffer_of.get(id(r)) != buf]
            self.write_back(pairs)
        stages, self.stages = self.stages, saved
        self.users = saved_users
        return stages, tests


def users_of(nodes, results) -> dict:
    """id(node) -> the nodes that read it (None for a read at the end: a result)."""
    out: dict = {}
    for n in nodes:
        for i in n.inputs:
            out.setdefault(id(i), []).append(n)
    for r in results:
        out.setdefault(id(r), []).append(None)
    return out


def has_control(graph) -> bool:
    return any(n.op in CONTROL_OPS for n in graph.nodes)
