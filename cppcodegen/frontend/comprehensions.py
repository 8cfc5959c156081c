"""List comprehensions as loops that append: ``[np.dot(x[:n - k], x[k:]) for k in
range(lags)]``, ``[i for i in range(n) if deg[i] == 0]``.

Python runs a comprehension by itself while tracing: one copy of its body per item, so a
50-lag autocorrelation was 50 kernels (5.7 s to build), and a filter on array values
(``if deg[i] == 0``) was refused. Before the function is converted (``capture.convert``),
a comprehension of one ``for`` (and any ``if`` clauses) in a statement is written out
before it::

    __ccg_lcN = []
    for __ccg_lcN_k in range(lags):           # the target renamed: it stays the loop's
        if <conditions>:
            __ccg_lcN.append(<item>)
    <the statement, the comprehension replaced by __ccg_lcN>

(``name = [...]``, the comprehension not reading ``name``: the list is built under that
name and the statement goes, so that the list has one name, as ``escapes.py`` wants) and
the loop is then a loop like any other: compiled, its list an array
(``listbuffer.py``, appends under a branch counted), or run by Python where that is better
(a few known trips, whose item expressions then fuse) or the only way. Left as they are:
comprehensions inside a lambda, a conditional expression, ``and``/``or`` or another
comprehension (Python might not evaluate them), in a ``while`` test (evaluated again each
time), with several ``for`` clauses, or whose item or conditions hold a comprehension,
lambda or walrus of their own.
"""
from __future__ import annotations

import ast

from .astutil import name_node, set_location

_SKIP = (ast.Lambda, ast.IfExp, ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp,
         ast.GeneratorExp, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)


def unfold(fdef):
    """Write the comprehensions of ``fdef`` out as loops (module docstring), in place."""
    count = [0]

    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and \
                        not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    setattr(s, field, block(getattr(s, field)))
            for h in getattr(s, "handlers", ()):
                h.body = block(h.body)
            fields = None if isinstance(s, _SIMPLE) else ("test",) if isinstance(s, ast.If) \
                else ("iter",) if isinstance(s, ast.For) else ()
            kept = True
            for comp in _comprehensions(s, fields):
                count[0] += 1
                name = _own_name(comp, s) or f"__ccg_lc{count[0]}"
                out += _loop(comp, count[0], name)
                kept = name.startswith("__ccg_lc")
            if kept:
                out.append(s)
        return out

    fdef.body = block(fdef.body)


def _comprehensions(stmt, fields) -> list:
    """The list comprehensions of ``stmt`` (of its ``fields`` only; None: all) that Python
    evaluates whenever it runs, in the order it evaluates them: (node, parent, field)."""
    found = []

    def visit(node, parent, field):
        if isinstance(node, ast.ListComp):
            if _simple(node):
                found.append((node, parent, field))
            return
        if isinstance(node, _SKIP):
            return
        for f, value in ast.iter_fields(node):
            for item in (value if isinstance(value, list) else [value]):
                if isinstance(item, ast.AST):
                    visit(item, node, f)

    for f, value in ast.iter_fields(stmt):
        if fields is None or f in fields:
            for item in (value if isinstance(value, list) else [value]):
                if isinstance(item, ast.AST):
                    visit(item, stmt, f)
    return found


def _simple(comp) -> bool:
    if len(comp.generators) != 1 or comp.generators[0].is_async:
        return False
    gen = comp.generators[0]
    inner = [comp.elt] + list(gen.ifs)
    if any(isinstance(n, _SKIP + (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
           for e in inner for n in ast.walk(e)):
        return False
    return all(isinstance(n, (ast.Name, ast.Tuple, ast.List)) for n in ast.walk(gen.target)
               if not isinstance(n, (ast.expr_context,)))


def _own_name(found, stmt):
    """``name`` of ``name = [<comprehension>]`` where the comprehension does not read it:
    the list is built under that name (one name for it, as ``escapes.py`` wants), and the
    statement goes; else None."""
    comp, parent, field = found
    if parent is not stmt or not isinstance(stmt, ast.Assign) or field != "value" or \
            len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    name = stmt.targets[0].id
    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(comp)):
        return None
    return name


def _loop(found, n, name) -> list:
    comp, parent, field = found
    gen = comp.generators[0]
    renamed = {t.id: f"__ccg_lc{n}_{t.id}" for t in ast.walk(gen.target)
               if isinstance(t, ast.Name)}

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in renamed:
                return ast.copy_location(ast.Name(id=renamed[node.id], ctx=node.ctx), node)
            return node
    target, elt = Rename().visit(gen.target), Rename().visit(comp.elt)
    ifs = [Rename().visit(c) for c in gen.ifs]
    append = ast.Expr(ast.Call(func=ast.Attribute(value=name_node(name), attr="append",
                                                  ctx=ast.Load()), args=[elt], keywords=[]))
    body = [append]
    for cond in reversed(ifs):
        body = [ast.If(test=cond, body=body, orelse=[])]
    loop = ast.For(target=target, iter=gen.iter, body=body, orelse=[], type_comment=None)
    start = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                       value=ast.List(elts=[], ctx=ast.Load()), type_comment=None)
    value = getattr(parent, field)          # (the comprehension's place: its list's name)
    if isinstance(value, list):
        value[value.index(comp)] = name_node(name)
    else:
        setattr(parent, field, name_node(name))
    for node in (start, loop):
        ast.copy_location(node, comp)
        set_location(node, comp)
    return [start, loop]
