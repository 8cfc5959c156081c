"""What each value a ``prange`` loop carries is, when its iterations run at the same time.

In: the body region of a captured ``for`` over ``prange`` and its carried values (``Carried``).
Out: one role per carried value, stored on the ``for`` node as its ``parallel`` attribute:

- ``("shared",)``: the body does not change it (read by every iteration);
- ``("private",)``: the body assigns it before any read (``t = x[i] * 2``, the loop index):
  each iteration has its own; after the loop it holds the last iteration's value, as in Python;
- ``("array",)``: an array the body updates element- or region-wise (``out[i] = ...``,
  ``out[i, :] += ...``) in place: shared, and the user's promise (as with Numba's ``prange``) is
  that no iteration writes what another one reads or writes;
- ``("reduce", op)``: a scalar the body combines with one value per iteration (``s += v``,
  ``s -= v``, ``p *= v``, ``m = max(m, v)``, ``np.minimum(m, v)``): each block of iterations
  starts from the operation's identity, and the blocks' results are combined in order.

Anything else (a value an iteration computes from the previous iteration's, ``break`` or
``return`` in the loop) is an error naming the variable and the loop's line: no guess, no race.
"""
from __future__ import annotations

import numpy as np

from ..errors import TraceError

IN_PLACE = ("setitem", "scatter")
# op of the body -> (the op that combines two blocks' results, which input is the carried one)
REDUCTIONS = {"add": "add", "multiply": "multiply", "subtract": "add", "maximum": "maximum",
              "minimum": "minimum", "fmax": "fmax", "fmin": "fmin", "logical_or": "logical_or",
              "logical_and": "logical_and", "bitwise_or": "bitwise_or",
              "bitwise_and": "bitwise_and"}
COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_or",
               "logical_and", "bitwise_or", "bitwise_and"}


def parallel_roles(region, loop, test, where: str, unread=()) -> tuple:
    """``unread``: the names nothing after the loop reads (``rewrite._unread_after``)."""
    if test is not None:
        raise TraceError(f"the prange loop at {where} has a break or a return: its iterations "
                         "run at the same time, so none can stop the others (use range)")
    if _draws(region):
        raise TraceError(f"the prange loop at {where} draws random numbers: their order "
                         "would depend on the threads (use range for this loop)")
    if _stops(region):
        raise TraceError(f"the prange loop at {where} may stop the program (a raise "
                         "statement, a Python int product checked for overflow, slices with "
                         "bounds from array values whose lengths must agree): threads cannot "
                         "stop one another (use range for this loop)")
    users = _readers(region)
    slots = [s for s, t in zip(loop.slots, loop.types) if t is not None]
    roles = []
    for slot, p, r in zip(slots, region.params, region.results):
        role = _role(p, r, users.get(id(p), []), users)
        if role is None and slot.name in unread and _unread(p, users):
            role = ("private",)     # (a value from the previous iteration only where an inner
        if role is None:            # loop ran no iteration, and nothing reads it: dead)
            raise TraceError(
                f"{slot.describe()} carries a value from one iteration of the prange loop at "
                f"{where} to the next ({_describe(r)}): prange iterations run at the same "
                "time, so each must be independent of the others; only reductions (s += v, "
                "s *= v, m = max(m, v)) and element-wise updates of arrays (out[i] = ...) "
                "may cross iterations (use range for this loop)")
        roles.append(role)
    crossed = _crossed(region, roles)
    if crossed is not None:
        slot = slots[crossed]
        raise TraceError(
            f"{slot.describe()} combines, in each iteration of the prange loop at {where}, a "
            "value computed from another reduction's running value (a flag of whether "
            "max(m, v) kept m): blocks of iterations cannot compute it apart (use range)")
    return tuple(roles)


def _crossed(region, roles):
    """The position of a reduction whose per-iteration operand reads another reduction's
    running value (``flag = flag and not (v > m)`` beside ``m = max(m, v)``: in blocks,
    ``m`` starts from the identity and the flag reads it), else None."""
    running = {id(p) for p, role in zip(region.params, roles) if role and role[0] == "reduce"}
    for k, (p, r, role) in enumerate(zip(region.params, region.results, roles)):
        if not role or role[0] != "reduce":
            continue
        operands = [r.inputs[1]] if role[1] in ("max_first", "min_first") and \
            len(r.inputs) > 1 else [x for x in r.inputs if x is not p]   # (a branch's
                                                        # result: all it reads, to be sure)
        others = running - {id(p)}
        if any(_reaches(x, others) for x in operands):
            return k
    return None


def _reaches(node, targets) -> bool:
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if id(n) in targets:
            return True
        if id(n) not in seen:
            seen.add(id(n))
            stack.extend(n.inputs)
    return False


def independent_roles(region, loop, var, varying, confined=None, spec=None) -> tuple | None:
    """The roles of a plain ``range`` loop's carried values when the compiler can prove its
    iterations independent, else None (the loop stays serial). Proved means: no break or
    return, no random draws; every carried value is shared (unchanged), private (assigned
    before it is read) or an array every access of which, in the body and in the loops and
    branches inside it, touches only elements whose index on one axis is the same
    one-to-one function of the loop's variable (``out[i, j] = ...``, ``C[i, :i + 1] += ...``
    reading ``C[i, ...]`` only), so two iterations never touch the same element. A value
    the body reads from outside the loop may be the array's value before it (``un =
    u.copy()`` then ``u[i] = f(un[i - 1])``): it is a value, and the lowering carries the
    array in a buffer of its own whenever the loop reads the value it started from
    (``passes/lower_control._carry_buffer``), so no iteration's store reaches those reads.
    Reductions of integers and bools (``count += 1``, ``m = max(m, k)``) are taken: their
    partial results combine exactly in any grouping; float ones are not (a float sum in
    blocks would not add in Python's order).
    ``varying``: the symbols that change inside an iteration (loop variables, bounds read
    from arrays). ``confined`` (a dict) gets, per array's position among the carried
    values, (axis, index expression, ahead): the lowering checks its stages against it.
    ``ahead``: the array is read ahead of its store (``_ahead``), which SIMD lanes keep
    and threads would not: such a loop runs in lanes only. An element read at an index on
    that axis which no iteration stores (LU's pivot column ``A[i, k]`` beside
    ``A[i, j] -= A[i, k] * A[k, j]`` over ``j > k``) is taken too (``_outside``: the range
    of the loop, ``spec``, proves it); its index is the tuple's fourth item."""
    up = None if spec is None else spec.positive
    if _draws(region) or _stops(region) or _any_node(region, lambda n: n.op == "print"):
        return None             # (prints: in Python's order, from this thread)
    users = _readers(region)
    slots = [t for t in loop.types if t is not None]
    roles = []
    for k, (p, r) in enumerate(zip(region.params, region.results)):
        role = _role(p, r, users.get(id(p), []), users)
        if role is None or role[0] == "reduce" and np.dtype(p.dtype).kind not in "iub":
            return None
        if role == ("array",):
            axis, ahead = {"outside": []}, False
            if not _confined(p, region, users, var, varying, axis) or "d" not in axis or \
                    not _outside(axis, var, varying, spec):
                axis, ahead = {"outside": []}, True
                if up is None or not _ahead(p, r, users, var, varying, up, axis):
                    return None
            if confined is not None:
                confined[k] = (axis["d"], axis["e"], ahead, tuple(axis["outside"]))
        roles.append(role)
    if _crossed(region, roles) is not None:
        return None
    return tuple(roles) if len(roles) == len(slots) else None


def _confined(p, region, users, var, varying, axis) -> bool:
    """Does every use of array ``p`` (and of its updated versions) in ``region`` touch only
    elements whose index on axis ``axis['d']`` is ``axis['e']``, a one-to-one function of
    ``var``? (Set by the first access; every other one must agree.)"""
    for u in users.get(id(p), []):
        if u.op in IN_PLACE and u.inputs[0] is p and p not in u.inputs[1:]:
            if u.op != "setitem" or not _agrees(u.attr("spec"), True, var, varying, axis):
                return False
            if not _confined(u, region, users, var, varying, axis):
                return False
        elif u.op == "slice" and u.inputs[0] is p and p not in u.inputs[1:]:
            if not _agrees(u.attr("spec"), False, var, varying, axis):
                axis["outside"].append(u.attr("spec"))  # (proved or refused by _outside)
        elif u.op in ("for", "while", "if"):
            if not _confined_inside(p, u, users, region, var, varying, axis):
                return False
        else:
            return False
    return True


def _ahead(p, r, users, var, varying, up, axis) -> bool:
    """Is array ``p`` stored once (``r``), at an index on axis ``axis['d']`` one-to-one in
    ``var``, after every read of it, each read at an element that this iteration or a later
    one stores, or none does? ``v[j] = d * (p * v[j] + q * v[j + 1])`` over ascending ``j``
    (binomial backward induction): only anti-dependences, which SIMD lanes keep (a vector's
    loads come before its stores, and the next vector reads elements no earlier one stored),
    where threads would race. A read behind the store (``v[j] = f(v[j - 1])``) is a
    recurrence: refused."""
    import sympy                # (a loop is traced: sympy is loaded already)
    if r.op != "setitem" or r.inputs[0] is not p or p in r.inputs[1:] or users.get(id(r)) \
            or not _agrees(r.attr("spec"), True, var, varying, axis):
        return False
    d, e = axis["d"], axis["e"]
    slope = e.diff(var) * (1 if up else -1)
    for u in users.get(id(p), []):
        if u is r:
            continue
        if u.op != "slice" or u.inputs[0] is not p or p in u.inputs[1:]:
            return False
        part = u.attr("spec")[d] if len(u.attr("spec")) > d else None
        ahead = None if part is None or part[2] != 1 else sympy.expand(part[0] - e)
        if ahead is None or not ahead.is_number or ahead * slope < 0:
            return False
    return True


def _outside(axis, var, varying, spec) -> bool:
    """Is every read ``_confined`` set aside (``axis['outside']``: slice specs) one element
    on axis ``axis['d']`` at an index that no iteration stores, that is outside the range of
    the stores' index ``axis['e']`` over the loop's range (``spec``)? Each is replaced by its
    index on that axis. Proved over the enclosing loops' ranges (``shapes.less``), or not
    taken."""
    specs, axis["outside"] = axis["outside"], []
    if not specs:
        return True
    if spec is None:
        return False
    from ..ir import shapes
    d, e = axis["d"], axis["e"]
    ends = [e.subs(var, shapes.canon(spec.first)), e.subs(var, shapes.canon(spec.last))]
    if (e.diff(var) > 0) != bool(spec.positive):
        ends.reverse()                  # (the lowest store first: an empty loop stores none)
    for sp in specs:
        if len(sp) <= d or sp[d][2] != 1:
            return False
        c = sp[d][0]
        syms = getattr(c, "free_symbols", set())
        if var in syms or syms & (varying - set(shapes.current().loops)):
            return False                # (the loops around it: constant while it runs)
        try:
            if not (shapes.less(c, ends[0]) or shapes.less(ends[1], c)):
                return False
        except Exception:               # noqa: BLE001 -- undecided over the loops' ranges
            return False
        axis["outside"].append(c)
    return True


def _confined_inside(p, node, users, region, var, varying, axis) -> bool:
    """``p`` read by a loop or branch inside the body: as a carried value (its parameter in
    each of the node's regions, and the node's ``loop_out`` after it) or as a value the
    regions read from outside."""
    first = 1 if node.op == "if" else 0
    if node.op == "if" and node.inputs[0] is p:
        return False
    ncarry = node.attr("ncarry")
    names = {"if": ("then", "orelse"), "while": ("cond", "body"), "for": ("body",)}[node.op]
    for pos, i in enumerate(node.inputs):
        if i is not p or pos < first:
            continue
        k = pos - first
        for name in names:
            inner = node.attr(name)
            inner_users = _readers(inner)
            if k < ncarry:
                if k < len(inner.params) and not _confined(
                        inner.params[k], inner, inner_users, var, varying, axis):
                    return False
            elif not _confined(p, inner, inner_users, var, varying, axis):
                return False
        if k < ncarry:
            for u in users.get(id(node), []):
                if u.op == "loop_out" and u.attr("index") == k and not _confined(
                        u, region, users, var, varying, axis):
                    return False
    return True


def _agrees(spec, store, var, varying, axis) -> bool:
    """One access's index (a setitem's spec: ('i', e) or ('s', start, step, size) per axis;
    a slice's: (start, step, size)) fixes an axis to ``var``'s function, the same as every
    other access's."""
    for d, part in enumerate(spec):
        if store:
            e = part[1] if part[0] == "i" or part[3] == 1 else None
        else:
            e = part[0] if part[2] == 1 else None
        if e is None or not _one_to_one(e, var, varying):
            continue
        if "d" not in axis:
            axis["d"], axis["e"] = d, e
        if axis["d"] == d and (e - axis["e"]) == 0:
            return True
    return False


def _one_to_one(e, var, varying) -> bool:
    syms = getattr(e, "free_symbols", set())
    if var not in syms or (syms - {var}) & varying:
        return False
    slope = e.diff(var)
    return bool(slope.is_number) and slope != 0 and e.diff(var, 2) == 0


def _role(p, r, readers, users):
    """``readers``: the nodes of the body that read ``p``; ``users``: id -> readers of every
    node of the body. A reduction's new value must be read by nothing in the body but the
    next iteration (``out[i] = s`` after ``s += v`` reads a running total: a scan)."""
    role = _kind(p, r, readers)
    if role is not None and role[0] == "reduce" and users.get(id(r)):
        return None
    return role


def _kind(p, r, readers):
    if r is p:
        return ("shared",)
    if not readers:
        return ("private",)
    if r.op in IN_PLACE:
        return ("array",) if _chain(p, r, readers) else None
    if r.op == "loop_out":
        return _through(p, r, readers)
    if p.shape != ():
        return None
    op = r.op
    if op in REDUCTIONS and readers == [r] and len(r.inputs) == 2:
        if r.inputs[0] is p or (op in COMMUTATIVE and r.inputs[1] is p):
            return ("reduce", REDUCTIONS[op])
    if op == "where" and len(readers) == 2 and r in readers:
        # max(m, v) / min(m, v): where(v > m, v, m), m read by the test and by the where
        test, a, b = r.inputs
        if b is p and test in readers and test.op in ("greater", "less") \
                and _same(test.inputs[0], a) and test.inputs[1] is p:
            return ("reduce", "max_first" if test.op == "greater" else "min_first")
    return None


def _same(x, y) -> bool:
    """One value: the same node, or casts of one node to one dtype (``max(m, x[i])`` of a
    float ``m`` and an int ``x``: the test and the select cast ``x[i]`` each)."""
    return x is y or (x.op == y.op == "cast" and x.dtype == y.dtype and
                      x.inputs[0] is y.inputs[0])


def _through(p, r, readers):
    """The role of a value carried through a loop or a branch inside the body (``for j``
    filling ``out[i, j]``, ``if v > 3: hits += 1``): what each of its regions does to it."""
    node, k = r.inputs[0], r.attr("index")
    first = 1 if node.op == "if" else 0
    if not _chain(p, node.inputs[first + k], readers):
        return None
    names = {"if": ("then", "orelse"), "while": ("body",), "for": ("body",)}[node.op]
    roles = set()
    for name in names:
        region = node.attr(name)
        users = _readers(region)
        inner = region.params[k]
        roles.add(_role(inner, region.results[k], users.get(id(inner), []), users))
    if roles == {("private",)} and readers == [node] and node.inputs.count(p) == 1 and \
            _always_runs(node):
        return ("private",)     # (assigned by every run of the construct: ``a = im[i, j]`` in
    roles.discard(("shared",))  # each iteration of a row's loop, in every row)
    if not roles:
        return ("shared",)
    if len(roles) != 1 or None in roles:
        return None
    (role,) = roles
    if role == ("array",) and p.shape != ():
        return role
    if role[0] == "reduce" and readers == [node]:
        return role
    return None


REGIONS = {"if": ("then", "orelse"), "while": ("cond", "body"), "for": ("body",)}


def _unread(v, users) -> bool:
    """Is ``v`` read by nothing but loops and branches that pass it on unread (their regions
    assign it before any read, or leave it as it is) to values that nothing reads either?"""
    for n in users.get(id(v), []):
        if n.op not in ("for", "while", "if"):
            return False
        first = 1 if n.op == "if" else 0
        for k in (k for k, x in enumerate(n.inputs[first:first + n.attr("ncarry")]) if x is v):
            for name in REGIONS[n.op]:
                region = n.attr(name)
                if not _unread(region.params[k], _readers(region)):
                    return False
            if any(o.op == "loop_out" and o.attr("index") == k and not _unread(o, users)
                   for o in users.get(id(n), [])):
                return False
    return True


def _always_runs(node) -> bool:
    """Does every run of construct ``node`` run its body (an ``if``: one of its branches)? A
    ``for`` over a range of constant bounds that is not empty."""
    if node.op == "if":
        return True
    if node.op != "for":
        return False
    start, stop, step = (node.attr(a) for a in ("start", "stop", "step"))
    return all(isinstance(v, (int, np.integer)) for v in (start, stop, step)) and step != 0 \
        and len(range(int(start), int(stop), int(step))) > 0


def _chain(p, v, readers) -> bool:
    """Is ``v`` the array ``p`` updated in place, by element stores and by loops and branches
    that update it in place (``if c: out[i] = a`` then ``out[i] += b``)?"""
    while v is not p:
        if v.op in IN_PLACE:
            v = v.inputs[0]
        elif v.op == "loop_out" and p.shape != () and \
                _through(p, v, readers) in (("array",), ("shared",)):
            node = v.inputs[0]
            v = node.inputs[(1 if node.op == "if" else 0) + v.attr("index")]
        else:
            return False
    return True


def _readers(region) -> dict:
    """id(node) -> the nodes of ``region`` that read it."""
    users: dict = {}
    for n in region.nodes:
        for i in n.inputs:
            users.setdefault(id(i), []).append(n)
    return users


def _draws(region) -> bool:
    """Does ``region`` (or a loop or branch inside it) draw random numbers?"""
    return _any_node(region, lambda n: n.op == "random")


def _stops(region) -> bool:
    """Does ``region`` hold a check that stops the program (the user's raise, a Python int
    leaving int64)? Threads cannot stop one another where it fails."""
    from ..runtime.compiled import stops
    return _any_node(region, lambda n: n.op == "check" and stops(n.attr("code")))


def _any_node(region, pred) -> bool:
    for n in region.nodes:
        if pred(n):
            return True
        if n.op in ("for", "while", "if") and any(
                _any_node(n.attr(name), pred) for name in ("body", "cond", "then", "orelse")
                if n.attr(name, None) is not None):
            return True
    return False


def _describe(r) -> str:
    return f"its new value, a '{r.op}', is computed from the previous one"
