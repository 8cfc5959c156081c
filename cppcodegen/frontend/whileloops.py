"""While loops that count: ``i = 0; while i < n: <body>; i += 1`` as a ``for`` over a range.

Code ported from C or MATLAB walks arrays with an index it increments by hand. As a
``while`` the compiled loop tests its condition and checks every ``x[i]`` against the bounds
at each step, and its iterations are not known to be independent (no SIMD lanes, no
threads). As ``for i in range(i, n)`` it is the loop Numba's LLVM makes of it.

In: the user's function definition (before the other control-flow passes). Out: the same
definition, each such ``while`` replaced by

    if <ops>.counted_while(i, n):       # decided while tracing: both ints
        <start> = i
        for i in range(<start>, n, step):
            <body without the increment>
        else:                            # (no break): the value the while leaves in i
            i = <ops>.while_exit(<start>, n, step)
            <the while's else clause>
    else:
        <the while loop as written>      # (a float counter: t += dt)

Taken: a test ``i < e``, ``i <= e``, ``i > e`` or ``i >= e`` on a name ``i`` whose last
statement in the body, and only assignment there, is ``i += c`` / ``i -= c`` / ``i = i + c``
with an int constant ``c`` of the test's direction; no ``continue`` of the loop (it would
skip the increment); a bound ``e`` the body cannot change (names, constants, attributes,
subscripts, arithmetic and ``len`` of names the body neither binds, calls methods of, stores
attributes or slices of, nor deletes from).
``counted_while`` takes Python ints and traced ints that are Python ints (sizes, loop
indices, ``int(x[k])``), so the body sees the same kinds as in the ``while``: an ``np.int64``
counter keeps the loop as written.
"""
from __future__ import annotations

import ast
import copy

from .astutil import assign, name_node, own_jumps, OwnScope, set_location, walk_scope

_TESTS = {ast.Lt: (1, 0), ast.LtE: (1, 1), ast.Gt: (-1, 0), ast.GtE: (-1, -1)}
# (the step's sign it needs, what the bound moves by to be range's stop)
MAX_DEPTH = 3       # (each rewritten loop is written twice: nested ones 2**depth times)


def counted_whiles(fdef, ops_name: str) -> None:
    """Rewrite ``fdef``'s counting while loops in place (the module docstring)."""
    count = [0]

    class Rewrite(OwnScope):
        depth = 0

        def visit_While(self, node):
            if self.depth >= MAX_DEPTH:
                return node
            form = _counting(node)
            if form is None:
                self.generic_visit(node)
                return node
            self.depth += 1
            self.generic_visit(node)
            self.depth -= 1
            count[0] += 1
            return set_location(_as_for(node, *form, ops_name, count[0]), node)

    Rewrite(fdef).visit(fdef)


def _counting(loop):
    """(name, bound, step, stop shift) of a counting while, or None."""
    test = loop.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and
            type(test.ops[0]) in _TESTS and isinstance(test.left, ast.Name)):
        return None
    name, bound = test.left.id, test.comparators[0]
    sign, shift = _TESTS[type(test.ops[0])]
    if not loop.body:
        return None
    step = _increment(loop.body[-1], name)
    if step is None or step == 0 or (step > 0) != (sign > 0):
        return None
    body = loop.body[:-1]
    stores = {n.id for n in walk_scope(body) if isinstance(n, ast.Name) and
              not isinstance(n.ctx, ast.Load)} | \
        {n.target.id for n in walk_scope(body) if isinstance(n, ast.NamedExpr)}
    declared = {x for n in walk_scope(body) if isinstance(n, (ast.Global, ast.Nonlocal))
                for x in n.names}
    if name in stores or name in declared or any(
            isinstance(j, ast.Continue) for j in own_jumps(body)) or \
            any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                               ast.ClassDef, ast.Yield, ast.YieldFrom)) for n in
                walk_scope(body)):
        return None
    called = {n.func.value.id for n in walk_scope(body) if isinstance(n, ast.Call) and
              isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)}
    resized = {n.value.id for n in walk_scope(body)     # (del x[k], x[a:b] = ..., x.n = ...:
               if isinstance(n, (ast.Subscript, ast.Attribute)) and    # a list's length, an
               isinstance(n.value, ast.Name) and not isinstance(n.ctx, ast.Load) and  # attribute)
               (isinstance(n, ast.Attribute) or isinstance(n.ctx, ast.Del) or
                any(isinstance(k, ast.Slice) for k in ast.walk(n.slice)))}
    if not _invariant(bound, stores | declared | called | resized | {name}):
        return None
    return name, bound, step, shift


def _increment(stmt, name):
    """The int constant ``stmt`` adds to ``name`` (``name += c``, ``-= c``, ``= name + c``)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and \
            stmt.target.id == name and isinstance(stmt.op, (ast.Add, ast.Sub)):
        c = _int(stmt.value)
        return None if c is None else c if isinstance(stmt.op, ast.Add) else -c
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name and \
            isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, (ast.Add, ast.Sub)) \
            and isinstance(stmt.value.left, ast.Name) and stmt.value.left.id == name:
        c = _int(stmt.value.right)
        return None if c is None else c if isinstance(stmt.value.op, ast.Add) else -c
    return None


def _int(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        c = _int(node.operand)
        return None if c is None else -c
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _invariant(expr, changed) -> bool:
    """Can the loop's body not change ``expr``'s value (see the module docstring)?"""
    for n in ast.walk(expr):
        if isinstance(n, ast.Name):
            if n.id in changed:
                return False
        elif isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id == "len" and
                    len(n.args) == 1 and isinstance(n.args[0], ast.Name) and not n.keywords):
                return False
        elif not isinstance(n, (ast.Constant, ast.Attribute, ast.Subscript, ast.BinOp,
                                ast.UnaryOp, ast.operator, ast.unaryop, ast.Load,
                                ast.Slice, ast.Tuple)):
            return False
    return True


def _as_for(loop, name, bound, step, shift, ops_name, k):
    start = f"{ops_name}_while{k}"
    stop = bound if shift == 0 else ast.BinOp(left=copy.deepcopy(bound), op=ast.Add(),
                                              right=ast.Constant(shift))

    def ops(attr, *args):
        return ast.Call(func=ast.Attribute(value=name_node(ops_name), attr=attr,
                                           ctx=ast.Load()), args=list(args), keywords=[])
    exit_value = assign(name, ops("while_exit", name_node(start), copy.deepcopy(stop),
                                  ast.Constant(step)))
    counted = ast.For(target=ast.Name(id=name, ctx=ast.Store()),
                      iter=ast.Call(func=name_node("range"),
                                    args=[name_node(start), stop, ast.Constant(step)],
                                    keywords=[]),
                      body=copy.deepcopy(loop.body[:-1]) or [ast.Pass()],
                      orelse=[exit_value] + copy.deepcopy(loop.orelse), type_comment=None)
    test = ops("counted_while", name_node(name), copy.deepcopy(bound))
    return ast.If(test=test, body=[assign(start, name_node(name)), counted], orelse=[loop])


# ----------------------------------------------------------------------------- while tracing

def counted_while(i, bound) -> bool:
    """Does the rewritten loop run as a ``for`` (``i`` a Python int, ``bound`` an int)?"""
    import numpy as np                  # (the capture itself runs without the tracer)
    from .iteration import symbolic_int
    from .proxy import Proxy

    def int_scalar(v, python):
        if isinstance(v, Proxy):
            return v.ndim == 0 and v.dtype.kind in "iu" and (v.weak or not python)
        return type(v) is int or symbolic_int(v) or (not python and isinstance(v, np.integer))
    return int_scalar(i, True) and int_scalar(bound, False)


def while_exit(start, stop, step, most=max):
    """The value the while loop leaves in its counter: the first one past ``stop``, or
    ``start`` when the loop made no step (``most``: the tracer's ``max``)."""
    if step > 0:
        trips = (stop - start + step - 1) // step
    else:
        trips = (start - stop - step - 1) // -step
    return start + step * most(0, trips)
