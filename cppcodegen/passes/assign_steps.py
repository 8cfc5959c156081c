"""Assignments in a row that read the array they store into, stored one after another.

``A[i, 1:-1] += A[i, 2:]; A[i, 1:-1] *= 0.5`` (a Gauss-Seidel row sweep) is a chain of two
``setitem`` nodes on the array's value; lowered as one pass it is a select over all of ``A``
written through a copy of ``A``: a pass over the whole array per row. Stored in order instead,
each value is computed from the buffer as the stores before it left it (which is the array
value its graph node reads), and only the assigned region is written: through a temporary of
the region's shape when the value reads elements its own store overwrites elsewhere.

In: a write-back's chain (``lower_assign.write_back``). Out: its stages, or None when the
chain cannot be stored so (an intermediate array value is read by anything but the next value,
or a value reads another array being written back).
"""
from __future__ import annotations

import sympy

from ..ir.graph import CONTROL_OPS
from ..ir.shapes import prod
from ..ir.loopir import Stage, index_vars


def sequenced(low, node, start, name, targets):
    """The stages storing the chain of assignments ending in ``node`` on ``start`` (held in
    buffer ``name``) in their order, or None. ``low``: the ``lower.Lowering``."""
    chain = []
    while node.op in STEPS and id(node) not in low.buffer_of:
        chain.append(node)
        node = node.inputs[0]
    if len(chain) < 2:
        return None
    chain.reverse()
    early = []
    if node is not start:       # the chain goes on from a value stored in the buffer already
        if low.buffer_of.get(id(node)) != name:     # (``a[2] += 1`` in place, then a swap
            return None                             # ``a[0], a[1] = a[1], a[0]``): what else
        early = low._read_later(node, chain[0])     # reads that value are scalars, read
        if early is None:                           # before the first store
            return None
    if not all(_feeds_only(low.users, state, nxt) for state, nxt in zip(chain, chain[1:])):
        return None
    states = [node] + chain
    for j, step in enumerate(chain):    # each value reads the array as the store before it
        others = {id(s) for k, s in enumerate(states) if k != j}    # left it, no older one
        for v in step.inputs[1:]:
            if _reaches(v, others, states[j], low.buffer_of):   # (``t = a[0]`` read before
                if v.shape != ():           # ``a[0] = 5`` and stored after it: a scalar
                    return None             # computed before the first store, as Python's
                early.append(v)             # ``a[j], a[q] = a[q], a[j]`` reads both first)
    for v in early:
        low.realize(v)
    stages, known = [], set(low.buffer_of)
    try:
        stages = _steps(low, chain, name, targets)
    finally:
        for step in chain[:-1]:
            low.buffer_of.pop(id(step), None)
        if stages is None:          # (values realized on the way read the array between
            for k in set(low.buffer_of) - known:    # the steps: not as it is elsewhere)
                del low.buffer_of[k]
        low.memo.clear()
    return stages


def _steps(low, chain, name, targets):
    """``sequenced``'s stages, or None."""
    stages = []
    for j, step in enumerate(chain):
        if j:                           # the value before this store: the buffer as it is
            low.buffer_of[id(chain[j - 1])] = name
        low.memo.clear()
        made = len(low.stages)
        if step.op == "scatter":
            stage = _scatter_step(low, step, name)
            stages += _taken(low, made)
            if stage is None or any(low._reads(t, stage.body) for t in targets - {name}):
                return None
            stages.append(stage)
            continue
        domain, store, body = low._region(step)
        stages += _taken(low, made)
        if any(low._reads(t, body) for t in targets - {name}):
            return None
        if 0 in domain:
            continue
        label, where = low.names[id(step.inputs[1])], step.where
        if low._overlaps(name, store, body, domain):
            tmp = low.new_buffer(f"buf{len(low.buffers)}", body.dtype, tuple(domain))
            stages.append(Stage(tmp, "pointwise", domain, body, (), None, label, where))
            body = low.eb.load(tmp, index_vars(len(domain)), body.dtype)
        stages.append(Stage(name, "pointwise", domain, body, (), None, label, where,
                            store=tuple(store)))
    return stages


STEPS = ("setitem", "scatter")


def _taken(low, made: int) -> list:
    """The stages lowering made since ``made`` for one step's value (``A[p] = A[0]`` after
    ``A[0] = ...``: the row read into a buffer of its own): they read the array as the
    stores before the step left it, so they run among the steps, not before them all."""
    out = low.stages[made:]
    del low.stages[made:]
    return out


def _scatter_step(low, step, name):
    """The stage of ``x[idx] = v`` into ``name`` where it is (its value in a buffer of its
    own first when it reads ``name`` at more than the one element it stores)."""
    label = low.names[id(step)]
    stage = low._scatter(step, name, label, step.where)
    if low._reads(name, stage.body) and str(stage.numel()) != "1":
        low.realize(step.inputs[1])
        stage = low._scatter(step, name, label, step.where)
    return stage


LONG_CHAIN = 8      # assignments to a fresh array from which each is stored in turn


def fill_in_order(low, node):
    """A fresh array (``np.zeros``) filled by many assignments before ``node`` (``np.stack``
    of a long list, ``np.array([row(k) for k in range(m)])``): each stored in place in turn,
    as far as they can be, rather than one select per element that tests every part.
    True when it did."""
    steps, root = [], node.inputs[0]
    while root.op == "setitem" and id(root) not in low.buffer_of:
        steps.append(root)
        root = root.inputs[0]
    if len(steps) < LONG_CHAIN or root.op != "broadcast_to":
        return False
    low.realize(root)
    for step in reversed(steps):
        if not low._in_place(step, "temp"):
            break
        low.add_stage(step, "temp")
    return True


def steps_in_place(graph, users) -> set:
    """ids of ``graph``'s assignments of less than half their array whose array value only
    the next assignment on it reads (``sequenced`` may store them in order): not given
    buffers of their own up front. (A step over most of the array, a stencil's interior
    before its edges, is better in a buffer of its own that trades places with the array.)"""
    out = set()
    for node in graph.nodes:
        if node.op == "setitem" and sympy.sympify(
                prod(node.shape) - 2 * prod(node.attr("region"))).is_positive:
            nxt = [u for u in users.get(id(node), ()) if u is not None and u.op in STEPS
                   and u.inputs[0] is node]
            if len(nxt) == 1 and _feeds_only(users, node, nxt[0]) and \
                    _ends_in_result(users, nxt[0]):
                out.add(id(node))
    return out


def _ends_in_result(users, node) -> bool:
    """Does the chain of assignments through ``node`` end in a value read only as a result
    (a loop's carried array, an argument's final value: the write-back that may store the
    chain in order)? Read by anything else, its steps keep their buffers (lowered as one
    expression, a chain of eighteen rolls read by a sum would nest eighteen selects)."""
    while True:
        after = users.get(id(node), ())
        nxt = [u for u in after if u is not None and u.op in STEPS and u.inputs[0] is node]
        if len(nxt) != 1:
            return bool(after) and all(u is None for u in after)
        node = nxt[0]


def _reaches(value, others, allowed, buffer_of) -> bool:
    """Does ``value`` read (not through a value in a buffer already, nor through ``allowed``)
    one of the array values ``others`` (ids)?"""
    seen, stack = set(), [value]
    while stack:
        n = stack.pop()
        if id(n) in others:
            return True
        if n is allowed or id(n) in seen or id(n) in buffer_of:
            continue
        seen.add(id(n))
        stack.extend(n.inputs)
    return False


def _feeds_only(users, state, nxt) -> bool:
    """Is the array value ``state`` read only by the next assignment ``nxt`` (as its base)
    and by nodes that lead only into ``nxt``'s value?"""
    value = nxt.inputs[1]
    seen, stack = set(), [state]
    while stack:
        n = stack.pop()
        for u in users.get(id(n), ()):
            if u is nxt:
                if n is not state and n is not value:
                    return False            # (an index of nxt's region made from the array)
                continue
            if u is None or u.op in CONTROL_OPS or u.op == "loop_out":
                return False
            if id(u) not in seen:
                seen.add(id(u))
                stack.append(u)
    return True
