"""Work a kernel does once: sibling stages share a loop, repeated expensive values a row array.

In: a kernel's stages (from schedule.py). Out: ``group_siblings``, the units its loops run
(consecutive pointwise stages over one domain merged into one multi-output stage), and
``reuse_plan``, the per-row scratch arrays of a nest kernel and, per stage, which expensive
sub-expressions it stores there or loads from there (read by ``cexpr.ExprRenderer``).
"""
from __future__ import annotations

import sympy

from ..ir.loopir import Index, Load, Op, Stage, index_vars, walk
from ..ir.ufuncs import EXPENSIVE
from ..passes.schedule import Kernel
from .sizes import _hint

SCRATCH_BYTES = 1 << 16


def group_siblings(stages: list) -> list:
    """Consecutive pointwise stages over the same domain, none reading another's buffer, run
    in one loop (a multi-output loop body: shared sub-expressions are computed once)."""
    units, group = [], []

    def flush():
        if len(group) == 1:
            units.append(group[0])
        elif group:
            widest = max((g.body.dtype for g in group), key=lambda d: d.itemsize)
            body = Op("group", tuple(g.body for g in group), widest)
            units.append(Stage("+".join(g.name for g in group), "pointwise", group[0].domain,
                               body, nodes=", ".join(g.nodes for g in group),
                               where=group[0].where, members=tuple(group)))
        group.clear()

    for s in stages:
        written = {g.name for g in group}
        if (s.kind == "pointwise" and group and tuple(s.domain) == tuple(group[0].domain)
                and s.name not in written
                and not any(isinstance(e, Load) and e.buf in written for e in walk(s.body))):
            group.append(s)
            continue
        flush()
        if s.kind == "pointwise":
            group.append(s)
        else:
            units.append(s)
    flush()
    return units


def reuse_plan(k: Kernel, units: list):
    """Expensive sub-expressions that several stages of a nest kernel compute over the same
    inner row (softmax's exp(x - max)): the first stage stores them in a per-row scratch
    array, later stages load them instead of computing them again.
    Returns ({array: (dtype, size)}, {stage name: {id(expr): (array, 'store'|'load', index)}})."""
    if k.form != "nest":
        return {}, {}
    n = len(k.outer)
    var = index_vars(n + 1)[n]
    seen: dict = {}
    for s in units:
        if len(s.domain) != n + 1:
            continue
        for e in walk(s.body):
            if isinstance(e, Op) and e.name in EXPENSIVE and _depends_on(e, var):
                seen.setdefault(id(e), (e, []))[1].append(s)
    shared = {key: (e, stages) for key, (e, stages) in seen.items()
              if len({st.domain[n] for st in stages}) == 1 and len(stages) > 1
              and _hint(stages[0].domain[n]) * e.dtype.itemsize <= SCRATCH_BYTES}
    inner = set()
    for e, _ in shared.values():          # keep only the outermost shared expressions
        inner |= {id(x) for x in walk(e) if x is not e}
    arrays, plan = {}, {}
    for key, (e, stages) in shared.items():
        if key in inner:
            continue
        arr = f"row{len(arrays)}"
        arrays[arr] = (e.dtype, stages[0].domain[n])
        for j, st in enumerate(stages):
            plan.setdefault(st.name, {})[key] = (arr, "store" if j == 0 else "load", f"i{n}")
    return arrays, plan


def _depends_on(e, var) -> bool:
    for x in walk(e):
        if isinstance(x, Load) and any(var in sympy.sympify(i).free_symbols for i in x.index):
            return True
        if isinstance(x, Index) and var in x.expr.free_symbols:
            return True
    return False
