"""Which carried values of a program's loops and branches matter.

A construct's carried value matters when something reads it: a node after the construct
reads its ``loop_out``, or a node in one of its regions reads its parameter. A read by the
region's own result at the same position (the value passed on unchanged) does not count, and
neither does a read by an inner construct that carries it without anyone reading it there,
nor a read by a region's result for another carried value that does not matter: the least
fixed point over the whole program. (A loop that carries ``m = max(m, v)`` under a branch
carries whether ``m`` is still the Python float it started as, ``frontend/pyflags.py``; when
nothing divides by it, that flag is passed from the loop to the branch and back, and is
dead.) Carried values that do not matter get no buffer and no stores.
"""
from __future__ import annotations

from ..ir.graph import CONTROL_OPS, regions
from ..ir.graph import walk as walk_nodes


def live_carries(nodes, leaves) -> dict:
    """id of each construct among ``nodes`` (and inside their regions) -> the positions of
    its carried values that matter."""
    uses, constructs = {}, []
    for u in walk_nodes(nodes):
        for pos, i in enumerate(u.inputs):
            uses.setdefault(id(i), []).append(("node", u, pos))
        if u.op in CONTROL_OPS:
            constructs.append(u)
            cond = u.attr("cond") if u.op == "while" else None
            for region in regions(u):
                for j, r in enumerate(region.results):
                    uses.setdefault(id(r), []).append(("result", u, j, region is cond))
                for e in region.effects:
                    uses.setdefault(id(e), []).append(("kept",))
    for leaf in leaves:
        uses.setdefault(id(leaf), []).append(("kept",))
    live = {id(c): set() for c in constructs}

    def matters(use) -> bool:
        if use[0] == "kept":
            return True
        if use[0] == "result":
            _, c, j, is_cond = use
            return is_cond or j >= c.attr("ncarry") or j in live[id(c)]
        _, u, pos = use
        if u.op not in CONTROL_OPS:
            return True
        k = pos - (1 if u.op == "if" else 0)
        return not 0 <= k < u.attr("ncarry") or k in live[id(u)]

    outs = {}
    for c in constructs:
        for use in uses.get(id(c), ()):
            if use[0] == "node" and use[1].op == "loop_out":
                outs.setdefault((id(c), use[1].attr("index")), []).append(use[1])
    changed = True
    while changed:
        changed = False
        for c in constructs:
            for k in range(c.attr("ncarry")):
                if k in live[id(c)]:
                    continue
                readers = list(outs.get((id(c), k), ())) + \
                    [r.params[k] for r in regions(c) if k < len(r.params)]
                if any(matters(use) for n in readers for use in uses.get(id(n), ())):
                    live[id(c)].add(k)
                    changed = True
    return live
