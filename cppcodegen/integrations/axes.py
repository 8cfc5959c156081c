"""Axes of a traced graph: which input axes each node axis runs along (a union-find).

In: a ``Graph`` traced on the global shapes of a Dask call. Out: ``_Axes``, which ties every
axis of every node to the input axes it runs along (``of``, ``find``), and collects what the
graph asks of them: axes that must be one chunk (``whole``: scans, indexed axes, merging
reshapes, a matrix product's contracted axis), position-dependent values (``fixed``),
strided slices that need neighbours (``neighbours``) and windows ``x[s:s + size - L]``
(``shifts``: stencils). ``dask.dask_call`` plans the call's Dask layers from them.
"""
from __future__ import annotations

import itertools


class _Axes:
    """Which input axes each node axis runs along, and what the graph asks of them.

    ``elem[id(node)]`` lists one union-find element per axis. Elements of the inputs are
    ('in', i, k); others are fresh. ``fixed`` elements hold position-dependent values
    (constant arrays, arange, random draws, extern results, merged reshapes): a chunked
    input axis tied to one must be whole. ``whole`` collects elements that must not be
    chunked; ``neighbours`` (element, depth, where) the strided slices; ``shifts`` the
    windows ``x[s:s + size - L]`` (stencils, run with each chunk's neighbours when chunked).
    """

    def __init__(self, graph):
        self.parent, self.fixed, self.whole, self.neighbours = {}, set(), set(), []
        self.shifts = []        # (input element, output element, start, shrink L, where)
        self.elem = {}
        self._fresh = itertools.count()
        # x.argmax() traces as argmax(x.reshape(-1)): that reshape only numbers positions
        users = graph.users()
        self.flat = {}                  # id(arg reduce over a flattened array) -> the array
        for n in graph.nodes:
            if (n.op == "reduce" and n.attr("kind") in ("argmax", "argmin")
                    and n.inputs[0].op == "reshape" and n.inputs[0].ndim == 1
                    and len(users[id(n.inputs[0])]) == 1):
                self.flat[id(n)] = n.inputs[0].inputs[0]
        flat_reshapes = {id(n.inputs[0]) for n in graph.nodes if id(n) in self.flat}
        for node in graph.nodes:
            if id(node) in flat_reshapes:
                self.elem[id(node)] = [self.new()]
                continue
            self.elem[id(node)] = self._node(node)

    # union-find
    def find(self, e):
        root = e
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while e != root:
            self.parent[e], e = root, self.parent.get(e, e)
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if ra[0] == "in" and rb[0] != "in":
                ra, rb = rb, ra
            self.parent[ra] = rb        # prefer an input element as the root

    def new(self, fixed=False):
        e = ("new", next(self._fresh))
        self.parent[e] = e
        if fixed:
            self.fixed.add(e)
        return e

    def of(self, node) -> list:
        return [self.find(e) for e in self.elem[id(node)]]

    def _node(self, node):
        op, shape, ins = node.op, node.shape, node.inputs
        E = [self.elem[id(i)] for i in ins]
        if op == "input":
            out = [("in", node.attr("index"), k) for k in range(len(shape))]
            for e in out:
                self.parent.setdefault(e, e)
            return out
        if op in ("scalar", "const"):
            return [self.new() for _ in shape]
        if op in ("constant", "iota", "random"):
            return [self.new(fixed=s > 1) for s in shape]
        if op in ("scan", "sort"):  # a running sum, a sort: the whole axis in one chunk
            self.whole.add(E[0][node.attr("axis")])
            return list(E[0])
        if op == "reduce":
            axes = node.attr("axes")
            return [e for k, e in enumerate(E[0]) if k not in axes]
        if op == "transpose":
            return [E[0][p] for p in node.attr("perm")]
        if op == "reshape":
            return self._reshape(ins[0].shape, E[0], shape)
        if op == "broadcast_to":
            out = [self.new() for _ in shape]
            off = len(shape) - len(ins[0].shape)
            for k, s in enumerate(ins[0].shape):
                if s == shape[off + k]:
                    self.union(E[0][k], out[off + k])
            return out
        if op == "slice":
            out = []
            for k, ((start, step, n), size) in enumerate(zip(node.attr("spec"), ins[0].shape)):
                if start == 0 and step == 1 and n == size:
                    out.append(E[0][k])
                elif step == 1 and n > 0:       # a window x[s:s + size - L]: a stencil
                    out.append(self.new())
                    self.shifts.append((E[0][k], out[-1], start, size - n, node.where))
                else:
                    depth = max(start, size - (start + step * (n - 1)) - 1) if n else size
                    self.neighbours.append((E[0][k], depth, node.where))
                    out.append(self.new(fixed=True))
            return out
        if op == "setitem":
            self.whole.update(E[0])
            self.whole.update(E[1])
            return list(E[0])
        if op in ("gather", "scatter", "segment", "search", "bincount"):  # whole arrays
            for e in E:
                self.whole.update(e)
            return [self.new(fixed=True) for _ in shape]
        if op == "extern":
            call = node.attr("call")
            if (getattr(call, "name", "").endswith("matmul") and len(ins) == 2
                    and ins[0].ndim >= 2 and ins[1].ndim >= 2):
                out = self._pointwise(shape[:-2], [(i.shape[:-2], e[:-2]) for i, e in zip(ins, E)])
                self.union(E[0][-1], E[1][-2])
                self.whole.add(E[0][-1])
                return out + [E[0][-2], E[1][-1]]
            for e in E:
                self.whole.update(e)
            return [self.new(fixed=True) for _ in shape]
        # pointwise: ufuncs, cast, where
        return self._pointwise(shape, [(i.shape, e) for i, e in zip(ins, E)])

    def _pointwise(self, shape, operands):
        out = [self.new() for _ in shape]
        for ishape, ie in operands:
            off = len(shape) - len(ishape)
            for k, s in enumerate(ishape):
                if s == shape[off + k]:
                    self.union(ie[k], out[off + k])
        return out

    def _reshape(self, ishape, ie, oshape):
        ik = [k for k, s in enumerate(ishape) if s != 1]
        ok = [k for k, s in enumerate(oshape) if s != 1]
        out = [self.new() for _ in oshape]
        if [ishape[k] for k in ik] == [oshape[k] for k in ok]:
            for a, b in zip(ik, ok):            # only size-1 axes come and go
                self.union(ie[a], out[b])
            return out
        self.whole.update(ie[k] for k in ik)    # a reshape that merges or splits axes
        self.fixed.update(out[k] for k in ok)
        return out
