"""Arrays that a loop's carried names pass around: ``u, un = un, u`` after ``un[1:-1] = f(u)``.

The names are carried by value (``carried.py``), but the arrays they are bound to are updated
in place, as NumPy does: the array ``u`` starts bound to is updated through ``un`` in the next
iteration. ``moves`` says where each carried array goes at the end of the body, ``reaching``
which arrays some iteration updates in place. An array that comes back to its name after a
fixed number of iterations (an ``orbit``: two for a swap, three for a rotation of three time
levels) is, after a loop of ``n`` trips, the value of the name it is bound to then: ``settle``
makes it so (an argument's is written back into the caller's array, as NumPy would have
updated it). ``mark_aliases`` and ``mark_shared`` (a branch's sides) refuse later updates
through a name that is one array with another name on some paths only.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import make_node
from .carried_types import internal_name, Snapshot
from .iteration import size_proxy
from .proxy import Proxy
from .sizes import symbolic


def moves(slots, values, snapshot) -> dict:
    """Slot index -> the slot index whose name is bound to its array at the end of the body
    (``values``: the carried values then, as ``snapshot``s of their proxies)."""
    dests = {}
    for i, v in enumerate(values):
        for j, s in enumerate(slots):
            if isinstance(v, snapshot) and s.placeholder is not None and v.proxy is s.placeholder:
                dests.setdefault(j, []).append(i)
    # an array bound to two names at the end (``tmp = u; u = un; un = tmp``: ``un`` and
    # ``tmp``): it goes on with the name whose own array moves on too (``un``), not with a
    # temporary of the body whose array at the start nothing passes on
    return {j: next((i for i in ds if i in dests), ds[-1]) for j, ds in dests.items()}


def shared(slots, values, snapshot) -> list:
    """Groups of two or more slot indices that end the body bound to one array
    (``tmp = u; u = un; un = tmp``: ``un`` and ``tmp``)."""
    groups = {}
    for i, v in enumerate(values):
        if isinstance(v, snapshot) and any(s.placeholder is not None and v.proxy is
                                           s.placeholder for s in slots):
            groups.setdefault(id(v.proxy), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def reaching(slots, hit, moved) -> list:
    """The slots whose array is updated in place in some iteration: those of ``hit`` and
    those whose array ``moved`` passes on to one of them."""
    out = []
    for j, s in enumerate(slots):
        k, seen = j, set()
        while k is not None and k not in seen:
            if slots[k] in hit:
                out.append(s)
                break
            seen.add(k)
            k = moved.get(k)
    return out


def orbit(moved, j):
    """The slots slot ``j``'s array is bound to in iterations 0, 1, ... when it comes back
    to ``j``; None when it leaves the carried values."""
    path, k = [], j
    while k is not None and k not in path:
        path.append(k)
        k = moved.get(k)
    return path if k == j else None


def settle(proxy, path, outs, trips, where) -> None:
    """``proxy`` (the array that started in slot ``path[0]``) after the loop: the final
    value of slot ``path[trips % len(path)]`` (``outs``: slot -> (loop_out node, type);
    ``trips``: the loop's trip count, a traced int64)."""
    if len(path) == 1:
        value = outs[path[0]][0]
    else:
        value = outs[path[0]][0]
        for m in range(1, len(path)):
            pick = np.equal(trips % len(path), m).node
            other = outs[path[m]][0]
            value = make_node("where", (pick, other, value), value.shape, value.dtype, where)
    proxy._node = value
    proxy.version += 1


def settle_sides(proxy, dests, outs, cond, where) -> bool:
    """``proxy`` after an ``if`` whose sides updated it in place and bound it to the names of
    slots ``dests`` (then, else; ``if c: b[1:] = f(a); a, b = b, a``): the value of the
    name it went to on the side taken. False if a side let go of it."""
    if len(dests) != 2 or any(d not in outs or tuple(outs[d][0].shape) != tuple(proxy.shape)
                              or outs[d][0].dtype != proxy.dtype for d in dests):
        return False
    then, other = outs[dests[0]][0], outs[dests[1]][0]
    proxy._node = then if then is other else make_node(
        "where", (cond, then, other), then.shape, then.dtype, where)
    proxy.version += 1
    return True


def for_trips(spec):
    """The trip count of ``for`` over ``spec`` (a traced int64)."""
    sh = symbolic()
    step = spec.step
    span = sh.canon((sh.canon(spec.stop) - sh.canon(spec.start)) * (1 if step > 0 else -1))
    n = size_proxy(span)
    k = abs(step)
    return np.maximum((n + (k - 1)) // k if k != 1 else n, 0)


# --------------------------------------------------------------------------- names after a loop

def mark_aliases(loop, state) -> None:
    """Names a loop's body leaves bound to one array (``tmp = u; u = un; un = tmp``) are one
    array in Python after the loop, two values here: an update in place through either is
    refused (``Proxy._sides``). ``loop``: the construct's ``carried.Carried``."""
    for group in getattr(loop, "shared", ()):
        names = [loop.slots[i].name for i in group if i < len(loop.slots)]
        for i in group:
            p = state[loop._index(loop.slots[i])] if i < len(loop.slots) else None
            if isinstance(p, Proxy) and p.node.shape:
                others = ", ".join(f"'{n}'" for n in names if n != loop.slots[i].name)
                p._sides = (f"'{loop.slots[i].name}', bound to the same array as {others} "
                            f"by the loop at {loop.where},")


def mark_rebound(slot, proxy, loop) -> None:
    """An argument's name that the loop rebinds to a new array: with no iteration it is the
    caller's array, else another one, so an update in place through it after the loop is
    refused (``Proxy._sides``)."""
    if isinstance(slot.init, Proxy) and slot.init.arg is not None and proxy.node.shape and \
            _may_skip(loop.induction):
        proxy._sides = (f"'{slot.name}', the argument itself when the loop at {loop.where} "
                        "runs no iteration and another array when it runs,")


def _may_skip(induction) -> bool:
    """Can the loop run no iteration? (a ``for`` whose range is known not empty cannot;
    ``induction``: a for loop's (spec, symbol), None for a while or a loop with a break)"""
    if induction is None:
        return True
    spec = induction[0]
    sh = symbolic()
    try:
        span = sh.canon((sh.canon(spec.stop) - sh.canon(spec.start)) *
                        (1 if spec.step > 0 else -1))
        return not sh.less(0, span)
    except Exception:               # noqa: BLE001 -- undecidable here: it may
        return True


def mark_shared(branch, state) -> None:
    """An array one side of a branch binds to a second name (``best = x``; ``big = x`` on
    one side and ``big = y`` on the other) while its first name keeps it: Python's names are
    one array on that side and not on the other, so an update through either name after the
    branch (``x[0] = ...``, ``big *= 2``) is refused."""
    moved = {id(s.init) for s in branch.slots}     # (names swapped: swaps.settle_sides)
    sides = getattr(branch, "side_values", ())
    mine = [not slot.name or not internal_name(slot.name) for slot in branch.slots]
    for k, slot in enumerate(branch.slots):     # (a return's value: the function ends there)
        if not mine[k]:
            continue
        # the array the name was bound to on one side, another on the other: an update
        # through the name would reach the first on that side only
        others = [getattr(v[k], "proxy", None) for v in sides if isinstance(v[k], Snapshot)]
        merged = state[branch._index(slot)] if slot.name else None
        rebound = [p for p in others if p is not None and p is not slot.init]
        if slot.kept and isinstance(merged, Proxy) and rebound and not any(
                id(p) in moved or p._node is None or p._node.op == "loop_out"
                for p in rebound):      # (a swap, or an inner construct's: settled there)
            merged._sides = _one_side(f"'{slot.name}'", branch.where)
    for values in sides:
        for slot, v, own in zip(branch.slots, values, mine):
            p = v.proxy if isinstance(v, Snapshot) else None
            if p is None or id(p) in moved or not own or not slot.name:
                continue
            merged = state[branch._index(slot)]
            earlier = p is not slot.init and p.serial < branch.first_serial and \
                p._node is not None and p._node.shape and not (p.scalar or p.weak) and \
                merged is not p             # (every side binds it: the name is it after)
            if earlier:         # an array made before the branch, bound to the name here
                p._sides = _one_side(f"the array '{slot.name}' is bound to", branch.where)
            if (earlier or p._base is not None) and isinstance(merged, Proxy) and \
                    merged is not p:        # (or a view on one side: an update through the
                                            # name writes where it views)
                merged._sides = _one_side(f"'{slot.name}'", branch.where)


def _one_side(name, where) -> str:
    return f"{name}, which the branch at {where} makes another array's on one side only,"


def passed(node, index: dict) -> set:
    """The carried values (``index``: id of a region parameter -> slot) that ``node`` may be
    as it was, through the branches that pass values on."""
    if id(node) in index:
        return {index[id(node)]}
    if node.op != "loop_out" or node.inputs[0].op != "if":
        return set()
    branch, k = node.inputs[0], node.attr("index")
    out = set()
    for name in ("then", "orelse"):
        region = branch.attr(name)
        r = region.results[k]
        m = next((m for m, p in enumerate(region.params) if p is r), None)
        out |= passed(branch.inputs[1 + m], index) if m is not None else passed(r, index)
    return out
