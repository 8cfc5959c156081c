"""Reductions along chunked axes of a Dask call: which split into per-chunk partials.

In: a traced graph, its ``axes._Axes``, the chunked axis elements and the output leaves.
Out: ``_reduction_plan``: None (no reduction runs along a chunked axis), ('roots', [root,
...]) with one root per reduction to split (its node, kind, the array reduced and its axes;
a traced np.var's two sums become one 'm2' root: Chan's parallel formula on (count, mean,
M2)), or ('rechunk', elements) when the reductions cannot be split (a result broadcast back
over a reduced axis, a reduction feeding another, an unsupported kind).
"""
from __future__ import annotations

from ..ir.graph import postorder

_KINDS = ("sum", "prod", "max", "min", "any", "all")


def _strip_casts(n):
    while n.op == "cast":
        n = n.inputs[0]
    return n


def _match_m2(node):
    """If ``node`` is the second sum of a traced np.var, return (E, first sum, pattern nodes):
    sum((E - sum(E)/n) ** 2) over the same axes."""
    if node.op != "reduce" or node.attr("kind") != "sum":
        return None
    sq = node.inputs[0]
    if sq.op == "multiply" and sq.inputs[0] is sq.inputs[1]:
        d = sq.inputs[0]
    elif sq.op == "square" or (sq.op in ("power", "float_power") and sq.inputs[1].op == "const"
                               and sq.inputs[1].attr("value") == 2):
        d = sq.inputs[0]
    else:
        return None
    if d.op != "subtract":
        return None
    e, m = d.inputs
    inner = [sq, d]
    while m.op in ("cast", "reshape", "broadcast_to"):
        inner.append(m)
        m = m.inputs[0]
    if m.op != "divide" or m.inputs[1].op != "const":
        return None
    inner.append(m)
    s1 = m.inputs[0]
    while s1.op in ("cast", "reshape"):
        inner.append(s1)
        s1 = s1.inputs[0]
    if (s1.op != "reduce" or s1.attr("kind") != "sum" or s1.attr("axes") != node.attr("axes")
            or _strip_casts(s1.inputs[0]) is not _strip_casts(e)
            or s1.inputs[0].dtype != e.dtype):
        return None
    return e, s1, inner


def _reduction_plan(graph, axes, chunked, leaves):
    """None (no reduction along a chunked axis), ('roots', [root, ...]) or
    ('rechunk', elements) when the reductions cannot be split."""
    def red_input(n):               # (the array reduced, its reduced axes)
        f = axes.flat.get(id(n))
        return (f, tuple(range(f.ndim))) if f is not None else (n.inputs[0], n.attr("axes"))
    creds = [n for n in graph.nodes if n.op == "reduce" and
             any(axes.of(red_input(n)[0])[a] in chunked for a in red_input(n)[1])]
    if not creds:
        return None
    reduced = {axes.of(red_input(n)[0])[a] for n in creds for a in red_input(n)[1]} & chunked
    roots, inner, seen = [], set(), set()
    for n in creds:
        m = _match_m2(n)
        if m is not None:
            e, s1, nodes = m
            roots.append({"node": n, "kind": "m2", "input": e, "axes": n.attr("axes")})
            inner.update(id(x) for x in nodes)
            inner.add(id(s1))
            seen.add(id(n))
    for n in creds:
        if id(n) in seen or id(n) in inner:
            continue
        kind = n.attr("kind")
        if kind not in _KINDS + ("argmax", "argmin"):
            return ("rechunk", reduced)
        e, red = red_input(n)
        roots.append({"node": n, "kind": kind, "input": e, "axes": red,
                      "flat": id(n) in axes.flat})
    root_ids = {id(r["node"]) for r in roots}
    by_id = {id(r["node"]): r for r in roots}
    for leaf in leaves:
        post = postorder([leaf], lambda n: () if id(n) in root_ids else n.inputs)
        # the chunked axes this output's reductions run along must not come back
        gone = {axes.of(by_id[id(n)]["input"])[a] for n in post if id(n) in root_ids
                for a in by_id[id(n)]["axes"]} & chunked
        for n in post:
            if id(n) in root_ids:
                continue
            if id(n) in inner:          # the pattern's nodes serve only the pattern
                return ("rechunk", reduced)
            if any(e in gone for e in axes.of(n)):      # broadcast back over a reduced axis
                return ("rechunk", gone)
    for r in roots:                                     # no reduction feeds another
        pre = postorder([r["input"]], lambda n: n.inputs)
        if any(id(n) in root_ids or (n.op == "reduce" and n in creds) for n in pre):
            return ("rechunk", reduced)
    return ("roots", roots)
