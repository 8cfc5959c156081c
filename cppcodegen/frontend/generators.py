"""``any()``, ``all()``, ``sum()``, ``min()`` and ``max()`` of a generator expression, as loops
the capture compiles.

``if any(x[i] > t for i in range(n)):`` hands a generator to a builtin, which calls bool()
of each traced item while Python iterates (a traced array, or a range of a traced size,
cannot be iterated there). Where such a call is a statement's value (an assignment's, an
augmented assignment's, a return's, an expression statement's) or an ``if``'s test, maybe
under ``not``, compared with / combined with plain names and constants, or in a tuple of
them (``return sum(...), sum(...)``: each in turn), it becomes a loop
just before the statement, its target renamed so that it does not leak:

    __ccg_g1 = False
    for __ccg_g1_i in range(n):
        if x[__ccg_g1_i] > t:          # (the generator's if-clauses around it)
            __ccg_g1 = True
            break

and the call becomes the result's name: the capture compiles the loop (with its break) as
any other. ``all``: True, and False at the first false item; ``sum``: the start (0) plus each
item in order, as Python adds them; ``min``/``max``: the first item, replaced by each later
one less (greater) than it, ValueError when there is none. One ``for`` clause; anywhere else
(a while's test, inside ``and``/``or`` or a conditional expression, a lambda) the call is
left as Python runs it.
The builtins only: a module's own ``any`` (``from numpy import any``) is not touched.
"""
from __future__ import annotations

import ast
import copy

from .astutil import map_blocks, name_node, set_location

REDUCERS = ("any", "all", "sum", "min", "max")


def hoist(fdef, prefix: str, is_builtin) -> None:
    """Rewrite ``fdef``'s body in place (see the module docstring); ``is_builtin(name)``:
    does the name mean the builtin in the function?"""
    counter = [0]

    def block(stmts):
        out = []
        for s in stmts:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append(s)
                continue
            map_blocks(s, block)
            field = "test" if isinstance(s, ast.If) else "value" if isinstance(
                s, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)) else None
            items = getattr(s, "value", None) if field == "value" else None
            if isinstance(items, ast.Tuple) and _mixed(items, is_builtin):
                for k, e in enumerate(items.elts):  # (``return sum(g), max(x)``: each item
                    if _simple(e):                  # into a name first, in their order)
                        continue
                    counter[0] += 1
                    name = f"{prefix}t{counter[0]}"
                    out += block([set_location(ast.Assign(targets=[name_node(name, True)],
                                                          value=e), s)])
                    items.elts[k] = set_location(name_node(name), s)
            while field is not None:        # (a tuple of them: each, left to right)
                expr = getattr(s, field, None)
                call, parent = _reducer_call(expr, is_builtin) if expr is not None else \
                    (None, None)
                if call is None:
                    break
                counter[0] += 1
                result = f"{prefix}g{counter[0]}"
                for n in _loop(call, result):
                    set_location(n, s)
                    out.append(n)
                replacement = set_location(name_node(result), s)
                if parent is None:
                    setattr(s, field, replacement)
                elif parent[2] is None:
                    setattr(parent[0], parent[1], replacement)
                else:
                    setattr(parent[0], parent[1], [replacement if v is call else v
                                                   for v in getattr(parent[0], parent[1])])
            out.append(s)
        return out

    fdef.body = block(fdef.body)


def _reducer_call(expr, is_builtin):
    """(the any/all/sum call in ``expr`` that can be evaluated first, its place) or
    (None, None). The place: None for ``expr`` itself, else (parent node, field, list?)."""
    if _is_reducer(expr, is_builtin):
        return expr, None
    if isinstance(expr, ast.UnaryOp) and _is_reducer(expr.operand, is_builtin):
        return expr.operand, (expr, "operand", None)
    if isinstance(expr, ast.BinOp):
        for field, other in (("left", expr.right), ("right", expr.left)):
            if _is_reducer(getattr(expr, field), is_builtin) and _simple(other):
                return getattr(expr, field), (expr, field, None)
    if isinstance(expr, ast.Tuple):     # the first one, the others simple or theirs
        calls = [e for e in expr.elts if _is_reducer(e, is_builtin)]
        if calls and all(_simple(e) or _is_reducer(e, is_builtin) for e in expr.elts):
            return calls[0], (expr, "elts", True)
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        if _is_reducer(expr.left, is_builtin) and _simple(expr.comparators[0]):
            return expr.left, (expr, "left", None)
        if _is_reducer(expr.comparators[0], is_builtin) and _simple(expr.left):
            return expr.comparators[0], (expr, "comparators", True)
    return None, None


def _mixed(items, is_builtin) -> bool:
    """A tuple with a reducer call and other items that are not ``_simple``?"""
    return any(_is_reducer(e, is_builtin) for e in items.elts) and not any(
        isinstance(e, ast.Starred) for e in items.elts) and not all(
        _simple(e) or _is_reducer(e, is_builtin) for e in items.elts)


def _simple(node) -> bool:
    """An operand evaluated before or after the call alike: a name, a constant, ``x.shape``,
    ``x.shape[0]``, ``len(x)``, ``-n``."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _simple(node.value)
    if isinstance(node, ast.Subscript):
        return _simple(node.value) and _simple(node.slice)
    if isinstance(node, ast.UnaryOp):
        return _simple(node.operand)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "len" and len(node.args) == 1 and _simple(node.args[0])


def _is_reducer(node, is_builtin) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id in REDUCERS and is_builtin(node.func.id) and not node.keywords):
        return False
    count = 2 if node.func.id == "sum" else 1
    if not 1 <= len(node.args) <= count:
        return False
    gen = node.args[0]
    return isinstance(gen, (ast.GeneratorExp, ast.ListComp)) and len(gen.generators) == 1 \
        and not gen.generators[0].is_async and _names_only(gen.generators[0].target)


def _names_only(target) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(map(_names_only, target.elts))


def _loop(call, result):
    """The statements computing ``call`` into the name ``result``."""
    kind, gen = call.func.id, call.args[0]
    comp = gen.generators[0]
    names = {n.id for n in ast.walk(comp.target) if isinstance(n, ast.Name)}
    renamed = {n: f"{result}_{n}" for n in names}
    target = _renamed(comp.target, renamed, ast.Store)
    item = _renamed(gen.elt, renamed)
    ifs = [_renamed(c, renamed) for c in comp.ifs]
    if kind in ("min", "max"):
        return _extreme(kind, result, target, item, ifs, comp.iter)
    if kind == "sum":
        start = call.args[1] if len(call.args) == 2 else ast.Constant(0)
        init = start
        body = [ast.Assign(targets=[name_node(result, True)],
                           value=ast.BinOp(left=name_node(result), op=ast.Add(), right=item))]
    else:
        found = kind == "any"       # any: True at the first true item; all: False at the
        init = ast.Constant(not found)                          # first false one
        test = item if found else ast.UnaryOp(op=ast.Not(), operand=item)
        body = [ast.If(test=test, body=[
            ast.Assign(targets=[name_node(result, True)], value=ast.Constant(found)),
            ast.Break()], orelse=[])]
    for cond in reversed(ifs):
        body = [ast.If(test=cond, body=body, orelse=[])]
    return [ast.Assign(targets=[name_node(result, True)], value=init),
            ast.For(target=target, iter=comp.iter, body=body, orelse=[])]


def _extreme(kind, result, target, item, ifs, iterable):
    """``min``/``max`` as Python computes them: the first item, then each later one that is
    less (greater) than the best so far, so the first of equal items and, after a NaN, the
    NaN stay; no item raises Python's ValueError."""
    first, value = f"{result}_first", f"{result}_v"
    better = ast.Compare(left=name_node(value), ops=[ast.Lt() if kind == "min" else ast.Gt()],
                         comparators=[name_node(result)])
    body = [ast.If(test=name_node(first), body=[
        ast.Assign(targets=[name_node(result, True)], value=item),
        ast.Assign(targets=[name_node(first, True)], value=ast.Constant(False))], orelse=[
        ast.Assign(targets=[name_node(value, True)], value=copy.deepcopy(item)),
        ast.If(test=better, body=[ast.Assign(targets=[name_node(result, True)],
                                             value=name_node(value))], orelse=[])])]
    for cond in reversed(ifs):
        body = [ast.If(test=cond, body=body, orelse=[])]
    error = ast.Call(func=name_node("ValueError"), keywords=[],
                     args=[ast.Constant(f"{kind}() arg is an empty sequence")])
    return [ast.Assign(targets=[name_node(first, True)], value=ast.Constant(True)),
            ast.For(target=target, iter=iterable, body=body, orelse=[]),
            ast.If(test=name_node(first), body=[ast.Raise(exc=error, cause=None)], orelse=[])]


def _renamed(node, renamed, ctx=None):
    """A copy of ``node`` with the generator's names renamed (``ctx``: the target's)."""
    node = copy.deepcopy(node)
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in renamed:
            n.id = renamed[n.id]
            if ctx is not None:
                n.ctx = ctx()
    return node
