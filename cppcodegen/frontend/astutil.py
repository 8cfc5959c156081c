"""AST helpers of the control-flow rewriting (``rewrite.py``, ``returns.py``).

In: parts of a function's ``ast`` (statement lists, expressions). Out: facts about them
(the names a block binds, its own ``break``/``continue``, whether it always returns) and
small node builders (names, assignments, nested functions) with the user's line numbers.
"""
from __future__ import annotations

import ast

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
LOOPS = (ast.For, ast.While, ast.AsyncFor)
# statements that make an enclosing loop/if unconvertible
BAD_STMTS = (ast.Return, ast.Delete, ast.Global, ast.Nonlocal, ast.Try, ast.With,
              ast.AsyncWith, ast.AsyncFor, ast.Match) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())
BAD_EXPRS = (ast.Yield, ast.YieldFrom, ast.Await)
TRY_STMTS = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())



# ----------------------------------------------------------------------------
# AST helpers
# ----------------------------------------------------------------------------

def walk_scope(nodes):
    """Yield all nodes below ``nodes`` not inside nested def/class/lambda bodies
    (the nested def/class/lambda nodes themselves are yielded)."""
    stack = list(reversed(nodes if isinstance(nodes, list) else [nodes]))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))


def bound_names(nodes):
    """Names bound in the current scope by ``nodes`` (not nested scopes)."""
    names = set()

    def visit(n):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            return
        if isinstance(n, ast.Lambda):
            return
        if isinstance(n, COMPS):
            for sub in ast.walk(n):  # walrus in a comprehension binds outside
                if isinstance(sub, ast.NamedExpr):
                    names.add(sub.target.id)
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, ast.NamedExpr):
            names.add(n.target.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if a.name != "*":
                    names.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            names.add(n.rest)
        for c in ast.iter_child_nodes(n):
            visit(c)

    for n in (nodes if isinstance(nodes, list) else [nodes]):
        visit(n)
    return names


def own_jumps(stmts):
    """Break/Continue nodes in ``stmts`` that belong to the enclosing loop."""
    out = []

    def visit(n):
        if isinstance(n, (ast.Break, ast.Continue)):
            out.append(n)
            return
        if isinstance(n, SCOPES + LOOPS):
            # a nested loop owns its jumps, but its else clause does not
            if isinstance(n, LOOPS):
                for c in n.orelse:
                    visit(c)
            return
        for c in ast.iter_child_nodes(n):
            visit(c)

    for s in stmts:
        visit(s)
    return out


class OwnScope(ast.NodeTransformer):
    """A rewrite of one function's own body: the functions, lambdas and classes defined in
    it are left as they are."""

    def __init__(self, fdef):
        self.fdef = fdef

    def visit_FunctionDef(self, node):
        return node if node is not self.fdef else self.generic_visit(node)

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


class FlagBreaks(ast.NodeTransformer):
    """A loop body's own ``break``s, each after ``flag = value`` (a nested loop owns its
    breaks, not its else clause's); ``body`` gives the rewritten statements."""

    def __init__(self, flag: str, value: bool):
        self.flag, self.value = flag, value

    def body(self, stmts) -> list:
        return [r for s in stmts for r in (lambda v: v if isinstance(v, list) else [v])(
            self.visit(s))]

    def visit_Break(self, node):
        return [ast.copy_location(assign(self.flag, ast.Constant(self.value)), node), node]

    def visit_loop(self, node):
        node.orelse = [self.visit(s) for s in node.orelse]
        return node

    visit_For = visit_While = visit_AsyncFor = visit_loop

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def loop_else(fdef, pre: str):
    """Each ``for``/``while`` with an ``else`` clause in ``fdef`` as ``flag = True; <the loop,
    with flag = False before each of its own breaks>; if flag: <the else clause>``: the clause
    runs when no break ended the loop, and the loop is an ordinary one."""
    count = [0]

    class Loops(OwnScope):
        def visit_loop(self, node):
            self.generic_visit(node)
            if not node.orelse:
                return node
            count[0] += 1
            flag = f"{pre}nobreak_{count[0]}"
            node.body = FlagBreaks(flag, False).body(node.body)
            tail = ast.If(test=name_node(flag), body=node.orelse, orelse=[])
            node.orelse = []
            return [set_location(assign(flag, ast.Constant(True)), node), node,
                    set_location(tail, node)]

        visit_For = visit_While = visit_loop

    Loops(fdef).visit(fdef)


def jumps_lowerable(stmts):
    """Own break/continue appear only directly in the list or inside nested ifs."""
    for s in stmts:
        if isinstance(s, ast.If):
            if not (jumps_lowerable(s.body) and jumps_lowerable(s.orelse)):
                return False
        elif not isinstance(s, (ast.Break, ast.Continue)) and own_jumps([s]):
            return False
    return True


def own_nodes(body):
    """The nodes of a function's own scope below the statements ``body`` (nested scopes
    and comprehensions themselves included, not their insides)."""
    stack = list(body)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, SCOPES + COMPS):
            stack.extend(ast.iter_child_nodes(n))


def stored(targets) -> set:
    """The names assignment targets bind."""
    return {n.id for t in targets for n in ast.walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def map_blocks(s, fn):
    """Replaces each statement list inside statement ``s`` (its body, else and finally
    clauses, its handlers' bodies; not a nested scope's) by ``fn`` of it."""
    if isinstance(s, SCOPES):
        return
    for field in ("body", "orelse", "finalbody"):
        sub = getattr(s, field, None)
        if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
            setattr(s, field, fn(sub))
    for h in getattr(s, "handlers", ()):
        h.body = fn(h.body)


def has(nodes, types_):
    return any(isinstance(n, types_) for n in walk_scope(nodes))


def has_return(nodes):
    return has(nodes, ast.Return)


def name_node(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def arguments(*names):
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names],
                         vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def lambda_of(body):
    return ast.Lambda(args=arguments(), body=body)


def function_def(name, params, body):
    return ast.FunctionDef(name=name, args=arguments(*params), body=body,
                           decorator_list=[], returns=None, type_comment=None,
                           **({"type_params": []} if "type_params" in ast.FunctionDef._fields else {}))


def assign(name, value):
    return ast.Assign(targets=[name_node(name, True)], value=value, type_comment=None)


def set_location(node, src):
    """Give every node below ``node`` lacking a location the location of ``src``."""
    for n in ast.walk(node):
        if "lineno" in n._attributes:
            if getattr(n, "lineno", None) is None:
                n.lineno = src.lineno
                n.col_offset = src.col_offset
            if getattr(n, "end_lineno", None) is None:
                n.end_lineno = src.lineno
                n.end_col_offset = src.col_offset
    return node


def located(new, src):
    """``new`` (and every node below it that has no location yet) at ``src``'s location: a
    call written in place of the user's expression reports the user's line."""
    return set_location(ast.copy_location(new, src), src)


def always_exits(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return always_exits(last.body) and always_exits(last.orelse)
    if isinstance(last, ast.While):     # ``while True:`` left only by return
        return (isinstance(last.test, ast.Constant) and bool(last.test.value)
                and not own_jumps(last.body) and not last.orelse)
    return False


def mangle(tree, clsname):
    """Apply class-private name mangling (we do not compile inside the class)."""
    cls = clsname.lstrip("_")
    if not cls:
        return

    def m(name):
        if name and name.startswith("__") and not name.endswith("__") and "." not in name:
            return "_" + cls + name
        return name

    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            n.id = m(n.id)
        elif isinstance(n, ast.Attribute):
            n.attr = m(n.attr)
        elif isinstance(n, ast.arg):
            n.arg = m(n.arg)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            n.names = [m(x) for x in n.names]
        elif isinstance(n, ast.FunctionDef) and n is not tree:
            n.name = m(n.name)
