"""Which computed values get a buffer of their own instead of being inlined into every
reader (``materialized``): the rules that keep inlined expressions from recomputing a value
many times over, in ``lower``'s first look at a graph.

In: a Graph (the program's or a region's). Out: the ids of its nodes to compute once.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import CONTROL_OPS, LEAF_OPS, VIEW_OPS, Graph, Node
from ..ir.ufuncs import EXPENSIVE

OWN_STAGE_OPS = ("reduce", "extern", "scan", "sort", "segment", "bincount")
"""Graph ops computed by a stage of their own (into a buffer), never inlined."""


INLINE_LIMIT = 256      # ops in one inlined expression before a producer gets a buffer
SHARED_MIN = 4          # ops a producer read through several views must have to get one
SPREAD_MIN = 4          # times a broadcast repeats an expensive producer's elements before it
                        # gets a buffer (``np.exp(-1j * np.pi * k / n)[:, None] * X``)
SPREAD_DIVIDE = 16      # ... a producer that divides or takes a square root (``A @ (w / nrm)``
DIVIDING = frozenset({"divide", "sqrt", "cbrt", "floor_divide", "remainder", "reciprocal"})


def materialized(graph: Graph, kept=None) -> set:
    """ids of pointwise nodes computed into a buffer of their own instead of being inlined
    into every consumer. Inlining recomputes a producer once per distinct way it is read:

    - a node read through two different views (``u[:-2]`` and ``u[2:]``, ``h[:, None]`` and
      ``h[None, :]``) is materialized once it has ``SHARED_MIN`` ops: inlined, a time loop of
      stencils (each step reading the last at five offsets) would grow as 5**T;
    - a node whose inlined expression passes ``INLINE_LIMIT`` ops is materialized: the C++ and
      the compile time stay bounded. The expression is counted as the renderer writes it: one
      term per distinct (node, chain of views from the root) pair, since lowering shares a
      subexpression read at the same index (Black-Scholes' d1 feeds both outputs four times),
      while one read through another view is new code (a time step read at five offsets);
    - a node with an expensive op (``EXPENSIVE``: exp, log, sin, ...) inlined, read through a
      broadcast that repeats each of its elements ``SPREAD_MIN`` times or more (a twiddle
      factor ``f[:, None] * X``), is computed once per element of its own;
    - an element read at a checked position (``a[lo:hi][-1]``, a 0-d gather) and broadcast
      (``Z[i, lo:hi] = a[lo:hi][-1]``) is read once into its own value: NumPy raises its
      IndexError even where the region is empty, so the check must not sit inside a loop of
      no iterations;
    - an element read at a checked position (a 0-d gather, ``a[idx[i]]``) before a check or
      a control node of the same region (``if idx[i] > 3: raise ...``) is read there, in its
      own value: inlined into a reader after it (``s += a[idx[i]]``, a carried value updated
      at the end of the body), its IndexError came after the user's raise;
    - a single value (``s = a[i-1] + a[i] + a[i+1]``) of ``SHARED_MIN`` ops or with an
      expensive op, read by more than one node: by a construct's body (an ``if``'s branch,
      an inner loop) and by anything else (the condition, a carried value, another
      statement), or by the stores of several elements (an N-body step's ``inv = m[j] / (r2
      * sqrt(r2))`` feeding ``acc[i, 0] += dx * inv`` and its y and z twins): each of those
      is a kernel of its own, and inlined, each would compute it again (three square roots
      and divisions per pair: 9.0 -> 3.9 ms for 300 bodies, numba 3.5);
    - an array kept (a result: ``kept``, a region's results whose carried value is used)
      that another node also reads, of ``SHARED_MIN`` ops or with an expensive op: a time
      step's new array summed in the same step is computed once, not again for the sum.
    """
    compute = [n for n in graph.nodes
               if n.op not in LEAF_OPS and n.op not in VIEW_OPS and n.op not in CONTROL_OPS
               and n.op not in OWN_STAGE_OPS + ("iota", "random", "carry", "loop_out")]
    paths: dict = {}
    placed: dict = {}               # a value stored by setitems: the regions it is stored at
    for node in graph.nodes:
        if node.op in VIEW_OPS:
            continue
        for inp in node.inputs:
            src, chain = _through_views(node, inp)
            paths.setdefault(id(src), set()).add(chain)
            if node.op == "setitem" and inp is node.inputs[1]:
                placed.setdefault(id(src), set()).add(node.attr("spec"))
    for i, specs in placed.items():     # stored at two offsets (np.concatenate((row, [0])) +
        if len(specs) > 1:              # np.concatenate(([0], row))): read two ways
            paths[i] |= {("at", spec) for spec in specs}
    is_compute = {id(n) for n in compute}
    read_once = set()     # element reads at checked positions given a value of their own
    for n in graph.nodes:
        if n.op in ("broadcast_to", "setitem"):        # (a setitem broadcasts its value)
            src = n.inputs[0 if n.op == "broadcast_to" else 1]
            while src.op in VIEW_OPS:
                src = src.inputs[0]
            if src.op == "gather" and src.size == 1:
                read_once.add(id(src))
    last = max((k for k, n in enumerate(graph.nodes) if n.op == "check" or n.op in CONTROL_OPS),
               default=0)      # (a read before the region's last check or construct)
    read_once |= {id(n) for n in list(graph.nodes)[:last] if n.op == "gather" and not n.shape}
    terms, out = {}, set()        # compute node id -> its inlined terms {(node id, chain)}
    for node in compute:
        mine = set()
        for inp in node.inputs:
            src, chain = _through_views(node, inp)
            mine.add((id(src), chain))
            if id(src) in is_compute and id(src) not in out:
                mine.update((i, chain + c) for i, c in terms[id(src)])
        if len(mine) >= INLINE_LIMIT or (len(paths.get(id(node), ())) > 1
                                         and len(mine) + 1 >= SHARED_MIN) or \
                id(node) in read_once:
            out.add(id(node))
            mine = set()
        terms[id(node)] = mine
    costly = {id(n) for n in compute if n.op in EXPENSIVE}
    readers: dict = {}              # compute node id -> how many nodes (and yields) read it,
    for node in graph.nodes:        # through views, and a value stored by a setitem also
        if node.op in VIEW_OPS:     # where the array it made is read (``out[i, j] =
            continue                # np.exp(v)`` then ``s += out[i, j]``: the read is the
        for i in node.inputs:       # value, lowered; inlined, it was computed twice)
            src = _through_views(node, i)[0]
            stored = _through_views(src, src.inputs[1])[0] if src.op == "setitem" and \
                node.op != "setitem" else None
            for inp in {id(src), id(stored)} - {id(None)}:
                readers[inp] = readers.get(inp, 0) + 1
    for leaf in {id(_through_views(n, n)[0]) for n in graph.leaves}:
        readers[leaf] = readers.get(leaf, 0) + 1
    leaves = {id(n) for n in graph.leaves} if kept is None else kept
    for node in compute:
        i = id(node)
        if readers.get(i, 0) > 1 and i not in out and i in leaves and node.size != 1 and (
                len(terms[i]) + 1 >= SHARED_MIN or i in costly):
            out.add(i)      # (a loop's new array also read in the body: ``u = u + c * lap``
            continue        # then ``energy[n] = np.sum(u * u)``, computed once, not again
                            # for the sum: 33.9 -> 5.9 ms for 100 steps of 256x256)
        if readers.get(i, 0) > 1 and i not in out and node.size == 1 and (
                len(terms[i]) + 1 >= SHARED_MIN or i in costly or
                any(j in costly and j not in out for j, _ in terms[i])):
            out.add(i)
    divides = {id(n) for n in compute if n.op in DIVIDING}

    def has(src, ops):
        return id(src) in ops or any(i in ops and i not in out for i, _ in terms[id(src)])
    for node in graph.nodes:        # expensive values spread by a broadcast, or read by a
        if node.op in VIEW_OPS:     # scan (in two passes, its second one element at a time:
            continue                # np.cumsum(np.exp(x)) 1.5-1.7x NumPy): computed once;
        for inp in node.inputs:     # quotients and roots spread wide (a matrix-vector
            src, chain = _through_views(node, inp)  # product's ``A @ (w / nrm)``: each
            if id(src) not in is_compute or id(src) in out:     # divided once, not per row)
                continue
            spread = any(c[0] in ("broadcast_to", "broadcast") for c in chain)
            if (node.op == "scan" or spread and _spread(src, node)) and has(src, costly) or \
                    spread and _spread(src, node, SPREAD_DIVIDE) and has(src, divides):
                out.add(id(src))
    return out


def _spread(src: Node, node: Node, times: int = SPREAD_MIN) -> bool:
    """Does ``node`` have ``times`` as many elements as ``src`` (static sizes)?"""
    if not all(isinstance(d, int) for d in tuple(src.shape) + tuple(node.shape)):
        return False
    return int(np.prod(node.shape, dtype=np.int64)) >= \
        times * max(int(np.prod(src.shape, dtype=np.int64)), 1)


def _through_views(node: Node, inp: Node) -> tuple:
    """(the node ``inp`` is a view of, the chain of views from ``node`` down to it)."""
    chain, src = [], inp
    while src.op in VIEW_OPS:
        chain.append((src.op, src.attrs, src.shape))
        src = src.inputs[0]
    if inp.shape != node.shape and node.op not in ("reduce", "extern", "setitem"):
        chain.append(("broadcast", node.shape))
    return src, tuple(chain)
