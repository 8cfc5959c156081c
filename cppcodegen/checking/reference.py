"""The NumPy reference interpreter: run a traced Graph node by node with NumPy.

In: a Graph and the call's arguments. Out: the output tree with NumPy values, plus (through
``on_node``) every intermediate value. It is the oracle of check mode and the ``numpy``
backend, and it reads the same op table as the C++ renderers.

Sizes: a symbolic size (dynamic shapes: ``n0``; a loop's induction variable: ``lv0``) is
evaluated with the sizes bound at that point: the input symbols from the arguments' shapes,
an induction variable to its value in the current iteration. So ``a[i]`` inside a loop
(``slice(spec=((lv0, 1, 1),))``), ``x[i, :i]`` and ``size(expr=lv0)`` read what Python would.

Control flow (``for``, ``while``, ``if`` nodes, ``ir/graph.py``) runs as Python runs it: a
``for`` binds its variable to each value of ``range(start, stop, step)`` and evaluates its
body region on the carried values (stopping after an iteration whose go-on test is False:
``break``), a ``while`` evaluates its condition region then its body until the condition is
False, an ``if`` evaluates one of its two regions. A ``loop_out`` node is the carried value
when the construct ends. Values are never updated in place (``setitem`` copies), so a value
kept from an earlier iteration stays what it was.

What ``on_node`` sees (and so check mode and anything else watching the reference): each
node of the graph's own node list once, in order; for a construct that is the value of each
carried value at its end (its ``loop_out`` nodes). The control node itself has no value and
is not reported. The nodes inside a construct's regions are reported only with
``each_iteration=True``, then every time they are evaluated (once per iteration, the
branch not taken not at all), with ``sizes()`` of the interpreter giving the induction
variables' current values. Compiled code reports likewise: its intermediate hooks run after
the C++ entry returns, so a buffer a loop carries holds its value at the loop's exit and a
buffer local to a loop body is not reported.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..ir.graph import CONTROL_OPS, Graph, Node, map_tree, take_views, walk
from ..ir.ufuncs import OPS
from ..runtime.compiled import check_error

_REDUCERS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any,
             "all": np.all}


# ----------------------------------------------------------------- sizes

_CODE: dict = {}        # sympy size expression -> its compiled Python text


def size_value(d, sizes=None):
    """An int for a size (an int, or a sympy expression of the symbols bound in ``sizes``,
    name -> int); other values (a float start of an iota) as they are."""
    if type(d) is int or not hasattr(d, "free_symbols"):
        return d
    code = _CODE.get(d)
    if code is None:
        from ..ir.guardtext import pyexpr          # sympy: only for graphs with symbolic sizes
        from ..runtime.sizes import compile_expr
        code = _CODE[d] = compile_expr(pyexpr(d))
    from ..runtime.sizes import evaluate
    try:
        return int(evaluate(code, sizes or {}))
    except NameError as e:
        raise UnboundSize(f"the NumPy reference cannot evaluate the size {d}: {e}") from None


class UnboundSize(ValueError):
    """A size names a symbol that is not bound here (an induction variable outside its loop)."""


class Unbound:
    """The value of a node whose size names an induction variable outside its loop: the start
    value of a name the loop binds before reading it (``t = np.zeros(i)`` in the body). Nothing
    reads it; a node that does raises the error it stands for."""

    def __init__(self, error: UnboundSize):
        self.error = error


def _shape(shape, sizes) -> tuple:
    if all(type(d) is int for d in shape):
        return shape
    return tuple(size_value(d, sizes) for d in shape)


def input_sizes(graph: Graph, args) -> dict:
    """The size symbols of the graph's inputs (dynamic shapes) bound to this call's sizes."""
    sizes = {}
    for node in graph.inputs:
        if node.op != "input" or all(type(d) is int for d in node.shape):
            continue
        shape = np.shape(args[node.attr("index")])
        for d, n in zip(node.shape, shape):
            if getattr(d, "is_Symbol", False):
                sizes[d.name] = int(n)
    for name, i in graph.values:        # integer arguments used as sizes (``np.zeros(n)``)
        sizes[name] = int(args[i])
    return sizes


# ----------------------------------------------------------------- one node

def _slice(spec, sizes) -> tuple:
    out = []
    for s, st, n in spec:
        s, n, st = size_value(s, sizes), size_value(n, sizes), size_value(st, sizes)
        out.append(slice(s, s + st * n if s + st * n >= 0 else None, st) if n else slice(0, 0))
    return tuple(out)


def _counts(node: Node, vals: list, nb: int):
    """A ``bincount`` node: the kept values' counts (weight sums) in ``nb`` bins."""
    vals = vals[:-1] if node.attr("bound", False) else vals     # (its length's bind)
    index = np.asarray(vals[0]).ravel().astype(np.int64)
    keep = np.asarray(vals[-1]).ravel() if node.attr("masked") else np.ones(index.shape, bool)
    if node.attr("negative") and (index[keep] < 0).any():
        raise ValueError("'list' argument must have no negative elements")
    ok = keep & (index >= 0) & (index < nb)
    w = np.asarray(vals[1]).ravel()[ok] if node.attr("weighted") else None
    return np.bincount(index[ok], w, minlength=nb).astype(node.dtype)


def evaluate_node(node: Node, vals: list, args, sizes=None):
    """The value of ``node`` from its inputs' values ``vals``; ``sizes`` binds the size
    symbols (name -> int) its shape and attributes use. A control node's value is the tuple
    of its carried values at its end (its ``loop_out`` nodes index it)."""
    op = node.op
    if op == "input":
        return np.asarray(args[node.attr("index")])
    if op == "scalar":
        return np.asarray(args[node.attr("index")], dtype=node.dtype)
    if op == "const":
        return np.asarray(node.attr("value"), dtype=node.dtype)
    if op == "constant":
        return node.attr("array").array
    if op == "size":
        return np.asarray(size_value(node.attr("expr"), sizes), dtype=node.dtype)
    if op == "loop_out":
        return vals[0][node.attr("index")]
    if op in CONTROL_OPS:
        return Interpreter(args, sizes).control(node, vals)
    if op == "gather":          # NumPy's integer-array indexing (it raises IndexError)
        src, ixs, axis = vals[0], [np.asarray(i) for i in vals[1:]], node.attr("axis")
        if node.attr("guarded", False):     # read (and checked) only where the guard holds
            *ixs, guard = ixs
            return _guarded_gather(src, ixs, axis, guard)
        return np.asarray(src[(slice(None),) * axis + tuple(ixs)])
    if op == "scatter":         # x[idx] = v (the last repeat wins) or np.<op>.at
        out, index = vals[0].copy(), (slice(None),) * node.attr("axis") + tuple(vals[2:])
        if node.attr("accumulate"):
            getattr(np, node.attr("accumulate")).at(out, index, vals[1])
        else:
            out[index] = vals[1]
        return out
    if op == "iota":
        shape = _shape(node.shape, sizes)
        start, step = (size_value(node.attr(k, d), sizes) for k, d in (("start", 0), ("step", 1)))
        row = start + step * np.arange(shape[-1] if shape else 1)
        return np.broadcast_to(row.astype(node.dtype), shape)
    if op == "cast":
        if vals[0].dtype.kind == "c" and node.dtype.kind != "c":    # the real part, as NumPy
            with warnings.catch_warnings():                         # (the trace warned once)
                warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                return vals[0].astype(node.dtype)
        return vals[0].astype(node.dtype)
    if op == "reshape":
        return vals[0].reshape(_shape(node.shape, sizes))
    if op == "transpose":
        return vals[0].transpose(node.attr("perm"))
    if op == "broadcast_to":
        return np.broadcast_to(vals[0], _shape(node.shape, sizes))
    if op == "slice":
        return vals[0][_slice(node.attr("spec"), sizes)]
    if op == "check":           # np.max of an empty array (frontend/reductions.py)
        if int(vals[1]) == 0:
            raise check_error(node.attr("code"), node.attr("error", None), node.where)
        return vals[0]
    if op == "print":           # the user's print (frontend/printing.py)
        from ..runtime import printing
        spec = printing.parse(node.attr("spec"))
        printing.emit(spec, [printing.value_of(k, v) for (k, _), v in zip(spec["values"], vals)])
        return np.False_
    if op == "bind":            # a data slice's start or length (frontend/dataslice.py)
        sizes[node.attr("sym")] = int(vals[0])
        return vals[0]
    if op == "reduce":
        kind, axes = node.attr("kind"), node.attr("axes")
        shape = np.shape(vals[0])
        if kind in ("max", "min", "argmax", "argmin") and any(shape[a] == 0 for a in axes):
            # empty only at run time: the ``check`` node after it raises where it is taken
            return np.zeros(tuple(n for a, n in enumerate(shape) if a not in axes), node.dtype)
        if kind in ("argmax", "argmin"):
            (axis,) = axes
            return getattr(np, kind)(vals[0], axis=axis)
        return _REDUCERS[kind](vals[0], axis=axes).astype(node.dtype)
    if op == "segment":         # np.<op>.reduceat (raises NumPy's IndexError)
        ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
        return ufunc[node.attr("kind")].reduceat(vals[0], vals[1]).astype(node.dtype)
    if op == "search":          # np.searchsorted of a sorted array
        return np.asarray(np.searchsorted(vals[0], vals[1], node.attr("side")), np.int64)
    if op == "bincount":        # counts per bin of the kept values (frontend/counts.py)
        return _counts(node, vals, _shape(node.shape, sizes)[0])
    if op == "sort":            # NaN last; argsort's ties in order (frontend/sorting.py)
        fn = np.argsort if node.attr("kind") == "argsort" else np.sort
        out = fn(vals[0], axis=node.attr("axis"), kind="stable").astype(node.dtype)
        if node.attr("kind") == "select":   # the values at some sorted positions
            kth = [size_value(k, sizes) for k in node.attr("kth")]
            out = np.take(out, kth, axis=node.attr("axis"))
        return out
    if op == "scan":
        ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
        return ufunc[node.attr("kind")].accumulate(vals[0], axis=node.attr("axis"),
                                                   dtype=node.dtype)
    if op == "setitem":
        out = vals[0].copy()
        index = tuple(size_value(sp[1], sizes) if sp[0] == "i" else
                      _slice([sp[1:]], sizes)[0] for sp in node.attr("spec"))
        out[index] = vals[1]
        return out
    if op == "extern" and node.attr("call").counted:    # x[mask]: its count read from it
        call = node.attr("call")
        out = call.fresh(*vals, dtype=node.dtype, ndim=node.ndim)
        if sizes is not None:
            sizes.update((name, out.shape[axis]) for name, axis in call.counted)
        return out
    if op == "extern":
        out = np.empty(_shape(node.shape, sizes), node.dtype)
        node.attr("call")(*vals, out=out)
        return out
    opdef = OPS[op]
    return np.asarray(opdef.numpy(*vals)).astype(node.dtype, copy=False)


# ----------------------------------------------------------------- a graph, regions

def _reservations(nodes, args) -> dict:
    """slot -> [seed, offset, runs so far] of every random op in ``nodes`` and their regions,
    reserved in slot order as the compiled call reserves them when it starts."""
    from ..runtime.device import reservations
    ops = [(n.attr("slot"), n.attr("source")) for n in walk(nodes) if n.op == "random"]
    return {slot: [*pair, 0] for slot, pair in reservations(ops, args).items()}


class Interpreter:
    """Evaluates nodes in order, keeping every value by node id; runs control nodes' regions
    with the induction variables bound in ``sizes``."""

    def __init__(self, args, sizes=None, on_node=None, each_iteration=False, nodes=()):
        self.args = args
        self._sizes = dict(sizes or {})
        self.values: dict = {}
        self.on_node = on_node
        self.each_iteration = each_iteration
        self.depth = 0          # how many regions enclose the node being evaluated
        self.draws = _reservations(nodes, args)     # random op slot -> [seed, offset, runs]

    def random(self, node):
        """A random op's values: the draws of the compiled scheme, from the reservation the
        call made for its slot (its k-th run in a loop: elements k * size on of it)."""
        from ..runtime import random as rnd
        slot = node.attr("slot")
        if slot not in self.draws:
            self.draws.update(_reservations([node], self.args))
        seed, off, runs = self.draws[slot]
        n = int(np.prod([size_value(d, self._sizes) for d in node.shape]))
        self.draws[slot][2] += 1
        values = getattr(rnd, node.attr("dist"))(seed, off, n, node.dtype, start=runs * n)
        return values.reshape([size_value(d, self._sizes) for d in node.shape])

    def sizes(self) -> dict:
        """The size symbols bound now (name -> int): the inputs' and, inside a loop, the
        induction variables' current values."""
        return dict(self._sizes)

    def run(self, nodes) -> None:
        values, report = self.values, self.on_node
        if report is not None and self.depth and not self.each_iteration:
            report = None
        for node in nodes:
            vals = [values[id(i)] for i in node.inputs]
            if node.op in CONTROL_OPS:          # (its carried values may be Unbound)
                values[id(node)] = self.control(node, vals)
                continue
            for v in vals:
                if type(v) is Unbound:
                    raise v.error
            try:
                out = values[id(node)] = (self.random(node) if node.op == "random" else
                                          evaluate_node(node, vals, self.args, self._sizes))
            except UnboundSize as e:
                values[id(node)] = Unbound(e)
                continue
            if report is not None and type(out) is not Unbound:
                report(node, out)

    def control(self, node, vals) -> tuple:
        """The carried values at the end of ``node`` (``vals``: its inputs' values)."""
        for i, v in zip(node.inputs, vals):     # (the regions read them by node)
            self.values[id(i)] = v
        n = node.attr("ncarry")
        if node.op == "if":
            region = node.attr("then") if bool(vals[0]) else node.attr("orelse")
            return tuple(self.region(region, vals[1:1 + n]))
        carried = list(vals[:n])
        if node.op == "while":
            cond, body = node.attr("cond"), node.attr("body")
            while bool(self.region(cond, carried)[0]):
                carried = self.region(body, carried)[:n]
            return tuple(carried)
        var, body, test = node.attr("var"), node.attr("body"), node.attr("test")
        data = node.attr("bounds", ())     # bounds from array values: the last inputs
        for name, v in zip(data, vals[len(vals) - len(data):]):
            self._sizes[name] = int(v)
        bounds = [size_value(node.attr(k), self._sizes) for k in ("start", "stop", "step")]
        outer = self._sizes.get(var)
        try:
            for i in range(*bounds):
                self._sizes[var] = i
                results = self.region(body, carried)
                carried = results[:n]
                if test and not bool(results[n]):
                    break
        finally:
            if outer is None:
                self._sizes.pop(var, None)
            else:
                self._sizes[var] = outer
        return tuple(carried)

    def region(self, region, carried) -> list:
        """The results of one evaluation of ``region`` with its parameters bound to
        ``carried``."""
        for p, v in zip(region.params, carried):
            self.values[id(p)] = v
        self.depth += 1
        try:
            self.run(region.nodes)
        finally:
            self.depth -= 1
        return [self.values[id(r)] for r in region.results]


def run_graph(graph: Graph, args, on_node=None, each_iteration: bool = False):
    """The outputs of ``graph`` on ``args`` (arguments the function updates in place are
    written); ``on_node(node, value)`` sees the values as the module docstring says."""
    interp = Interpreter(args, input_sizes(graph, args), on_node, each_iteration, graph.nodes)
    with np.errstate(all="ignore"):
        interp.run(graph.nodes)
    values = interp.values
    for n in graph.leaves + [n for _, n in graph.mutations]:
        if type(values[id(n)]) is Unbound:
            raise values[id(n)].error
    # every value is taken before any argument is written (they may be views of arguments)
    outputs = take_views(map_tree(graph.outputs, lambda n: values[id(n)] if n.op == "input"
                                  else np.array(values[id(n)])))
    written = [(i, np.array(values[id(n)])) for i, n in graph.mutations]
    for i, value in written:
        if not args[i].flags.writeable:
            raise ValueError(f"argument {i} is read-only (flags.writeable is False) but the "
                             "function updates it in place")
        np.copyto(args[i], value, casting="unsafe")
    return outputs


def _guarded_gather(src, ixs, axis, guard):
    """A gather whose guard (a condition, or an array of the result's trailing-aligned
    shape, constant along the source's other axes) says which positions are read: zeros
    elsewhere, where an index out of range is not an error (a read Python would not make)."""
    shape = np.broadcast_shapes(*[i.shape for i in ixs])
    k = len(shape)
    out_shape = src.shape[:axis] + shape + src.shape[axis + len(ixs):]
    ok = np.broadcast_to(np.asarray(guard, bool), out_shape)
    ok = ok[(0,) * axis + (slice(None),) * k + (0,) * (ok.ndim - axis - k)] if ok.size else \
        np.zeros(shape, bool)
    out = np.zeros(out_shape, src.dtype)
    picked = tuple(np.broadcast_to(i, shape)[ok] for i in ixs)
    out[(slice(None),) * axis + (ok,)] = src[(slice(None),) * axis + picked]
    return out
