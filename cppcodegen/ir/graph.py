"""The traced program as plain data.

In: nodes created by the tracer. Out: a ``Graph`` (inputs, nodes in topological order,
an output tree) with a canonical text form that is printable and hashed into cache keys.
No sympy here: a warm start traces and hashes without it.

Node ops:
  input(index)            an array argument           scalar(index)   a runtime float argument
  const(value)            a 0-d constant              constant(key)   a constant array (passed in)
  <ufunc name>            pointwise op, inputs already cast to the loop dtype
  cast, where             pointwise
  reduce(kind, axes)      reduction over ``axes`` (reduced dims removed)
  reshape, transpose(perm), broadcast_to, slice(spec)      views: index rewrites, no copies
  iota                    arange along the last axis (np.arange with a symbolic bound)
  size(expr)              a symbolic element count as an int64 value (mean over dynamic sizes)
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class Node:
    op: str
    inputs: tuple
    attrs: tuple            # sorted (name, value) pairs; values are hashable plain data
    shape: tuple
    dtype: np.dtype
    where: str = ""

    def attr(self, name, default=None):
        for k, v in self.attrs:
            if k == name:
                return v
        return default

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        if all(type(d) is int for d in self.shape):
            return int(np.prod(self.shape, dtype=np.int64))
        from .shapes import prod          # symbolic sizes (dynamic shapes)
        return prod(self.shape)

    def __repr__(self):
        return f"Node({self.op}, shape={self.shape}, dtype={self.dtype})"


def make_node(op, inputs, shape, dtype, where="", **attrs) -> Node:
    return Node(op, tuple(inputs), tuple(sorted(attrs.items())), tuple(map(_dim, shape)),
                np.dtype(dtype), where)


def _dim(d):
    """A size: an int, or (dynamic shapes) a sympy expression of size symbols."""
    if type(d) is int:
        return d
    if isinstance(d, (np.integer, bool)):
        return int(d)
    from .shapes import canon
    return canon(d)


VIEW_OPS = frozenset({"reshape", "transpose", "broadcast_to", "slice"})
LEAF_OPS = frozenset({"input", "scalar", "const", "constant"})


@dataclass
class Graph:
    inputs: list            # input/scalar nodes, in argument order
    nodes: list             # every node, topologically sorted
    outputs: object         # the output tree: nested tuple/list/dict with Node leaves
    leaves: list            # flat list of output nodes (in tree order)
    constants: dict = field(default_factory=dict)   # key -> np.ndarray for 'constant' nodes
    hints: dict = field(default_factory=dict)       # size symbol -> its value when traced
    guards: tuple = ()      # facts about symbolic sizes the trace relied on (sympy relations)
    mutations: list = field(default_factory=list)   # (argument index, its final value node):
                                                    # arguments the function updated in place

    def users(self) -> dict:
        out = {id(n): [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                out[id(i)].append(n)
        return out

    def names(self) -> dict:
        return {id(n): f"%{i}" for i, n in enumerate(self.nodes)}

    def text(self, with_locations: bool = False) -> str:
        """Canonical form: one line per node; the cache key hashes it."""
        names = self.names()
        lines = []
        for n in self.nodes:
            args = ", ".join(names[id(i)] for i in n.inputs)
            attrs = "".join(f", {k}={v!r}" for k, v in n.attrs)
            loc = f"   # {n.where}" if with_locations and n.where else ""
            lines.append(f"{names[id(n)]} = {n.op}({args}{attrs}) : {n.dtype}{list(n.shape)}{loc}")
        lines += [f"write arg{i} = {names[id(n)]}" for i, n in self.mutations]
        lines.append("return " + _tree_text(self.outputs, names))
        if self.guards:
            from .shapes import guard_text
            lines += [f"guard {guard_text(g)}" for g in self.guards]
        return "\n".join(lines)

    def key(self) -> str:
        return hashlib.sha256(self.text().encode()).hexdigest()

    def __str__(self):
        return self.text(with_locations=True)


def _tree_text(tree, names) -> str:
    if isinstance(tree, Node):
        return names[id(tree)]
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_tree_text(v, names)}" for k, v in tree.items()) + "}"
    if isinstance(tree, (tuple, list)):
        inner = ", ".join(_tree_text(v, names) for v in tree)
        return f"({inner},)" if isinstance(tree, tuple) else f"[{inner}]"
    return repr(tree)


def flatten_tree(tree, leaf_type=Node):
    """Leaves of a nested tuple/list/dict in order."""
    if isinstance(tree, leaf_type):
        return [tree]
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in flatten_tree(v, leaf_type)]
    if isinstance(tree, (tuple, list)):
        return [x for v in tree for x in flatten_tree(v, leaf_type)]
    return []


def map_tree(tree, fn, leaf_type=Node):
    if isinstance(tree, leaf_type):
        return fn(tree)
    if isinstance(tree, dict):
        return {k: map_tree(v, fn, leaf_type) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(map_tree(v, fn, leaf_type) for v in tree)
    if isinstance(tree, list):
        return [map_tree(v, fn, leaf_type) for v in tree]
    return tree


def postorder(roots, children) -> list:
    """Every node reachable from ``roots`` once, each after its children (iterative DFS, so
    deep graphs do not hit the recursion limit). ``children(node)`` lists a node's operands."""
    order, seen = [], set()
    stack = [(n, False) for n in reversed(list(roots))]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children(node)) if id(c) not in seen)
    return order


def toposort(outputs: list) -> list:
    return postorder(outputs, lambda n: n.inputs)
