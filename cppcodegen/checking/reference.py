"""The NumPy reference interpreter: run a traced Graph node by node with NumPy.

In: a Graph and the call's arguments. Out: the output tree with NumPy values, plus (through
``on_node``) every intermediate value. It is the oracle of check mode and the ``numpy``
backend, and it reads the same op table as the C++ renderers.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node, map_tree
from ..ir.ufuncs import OPS

_REDUCERS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any,
             "all": np.all}


def evaluate_node(node: Node, vals: list, args) -> np.ndarray:
    op = node.op
    if op == "input":
        return np.asarray(args[node.attr("index")])
    if op == "scalar":
        return np.asarray(args[node.attr("index")], dtype=node.dtype)
    if op == "const":
        return np.asarray(node.attr("value"), dtype=node.dtype)
    if op == "constant":
        return node.attr("array").array
    if op == "iota":
        start, step = node.attr("start", 0), node.attr("step", 1)
        row = start + step * np.arange(node.shape[-1] if node.shape else 1)
        return np.broadcast_to(row.astype(node.dtype), node.shape)
    if op == "cast":
        return vals[0].astype(node.dtype)
    if op == "reshape":
        return vals[0].reshape(node.shape)
    if op == "transpose":
        return vals[0].transpose(node.attr("perm"))
    if op == "broadcast_to":
        return np.broadcast_to(vals[0], node.shape)
    if op == "slice":
        index = tuple(slice(s, s + st * n if s + st * n >= 0 else None, st) if n else slice(0, 0)
                      for s, st, n in node.attr("spec"))
        return vals[0][index]
    if op == "reduce":
        kind, axes = node.attr("kind"), node.attr("axes")
        if kind in ("argmax", "argmin"):
            (axis,) = axes
            return getattr(np, kind)(vals[0], axis=axis)
        return _REDUCERS[kind](vals[0], axis=axes).astype(node.dtype)
    if op == "scan":
        fn = np.cumsum if node.attr("kind") == "sum" else np.cumprod
        return fn(vals[0], axis=node.attr("axis"), dtype=node.dtype)
    if op == "random":          # draws of the same scheme, from a fresh reservation
        from ..runtime import random as rnd
        from ..runtime.device import get_device_hooks
        source = node.attr("source")
        if source is None:
            seed, off = get_device_hooks().default_generator(0).reserve(1)
        else:
            seed, off = int(args[source].integers(0, 2 ** 63)), 0
        values = getattr(rnd, node.attr("dist"))(seed, off, int(np.prod(node.shape)), node.dtype)
        return values.reshape(node.shape)
    if op == "setitem":
        out = vals[0].copy()
        index = tuple(sp[1] if sp[0] == "i" else
                      slice(sp[1], sp[1] + sp[2] * sp[3] if sp[1] + sp[2] * sp[3] >= 0 else None,
                            sp[2]) for sp in node.attr("spec"))
        out[index] = vals[1]
        return out
    if op == "extern":
        out = np.empty(node.shape, node.dtype)
        node.attr("call")(*vals, out=out)
        return out
    opdef = OPS[op]
    return np.asarray(opdef.numpy(*vals)).astype(node.dtype, copy=False)


def run_graph(graph: Graph, args, on_node=None):
    values = {}
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            out = evaluate_node(node, [values[id(i)] for i in node.inputs], args)
            values[id(node)] = out
            if on_node is not None:
                on_node(node, out)
    # every value is taken before any argument is written (they may be views of arguments)
    outputs = map_tree(graph.outputs, lambda n: values[id(n)] if n.op == "input"
                       else np.array(values[id(n)]))
    written = [(i, np.array(values[id(n)])) for i, n in graph.mutations]
    for i, value in written:
        if not args[i].flags.writeable:
            raise ValueError(f"argument {i} is read-only (flags.writeable is False) but the "
                             "function updates it in place")
        np.copyto(args[i], value, casting="unsafe")
    return outputs
