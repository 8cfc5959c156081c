"""Reads of names that may have no value: Python's UnboundLocalError, kept when compiled.

A compiled loop or branch carries every name it binds from the start of the construct, so a
name first bound inside one (``for ...: if x[i] > t: idx = i; break``) has some value on
every path once compiled, where Python has none on the paths that did not bind it. Reading
it there must still raise UnboundLocalError, never return the start value.

In: the user's ``FunctionDef`` (its loops' ``else`` clauses still in place). A definite-
assignment pass (``_Flow``) finds each read of a local name at a point where some path has
not bound it. Out: the tree rewritten in place, for each such name ``x``: a flag
``__ccg_bound_x`` False at the start and set after each statement binding ``x`` (False after
``del x``), and each of those reads as ``__ccg.bound(x, flag, 'x', where)``: the value, and
a check that raises UnboundLocalError where the flag is False when the program runs
(``TraceOps.bound``). A name read only where every path has bound it gets no flag: what a
construct carries for it before it is bound is never seen. A name also bound in other ways
(``with ... as``, ``import``, a nested ``def``, a walrus) or read inside a lambda or a
comprehension is left as it is (a read of its start value raises while tracing; with the
fallback on, Python runs the function).
"""
from __future__ import annotations

import ast

from .astutil import (assign, COMPS, map_blocks, name_node, own_nodes, SCOPES, set_location,
                      stored)

FLAG = "__ccg_bound_"


def flag_name(name: str) -> str:
    return FLAG + name


class _Flow:
    """Definite assignment over one function body: ``maybe`` collects the ``Name`` loads
    (and augmented assignment targets) where the name may be unbound."""

    def __init__(self, local):
        self.local = local
        self.maybe = []
        self.hidden = set()     # names read unbound inside a lambda or comprehension
        self.deleted = set()
        self.loops = []         # per enclosing loop: the assigned sets at its breaks

    def reads(self, node, done):
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, SCOPES + COMPS):
                for sub in ast.walk(n):
                    if (isinstance(sub, ast.Name) and sub.id in self.local
                            and sub.id not in done):
                        self.hidden.add(sub.id)
                continue
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                if n.id in self.local and n.id not in done:
                    self.maybe.append(n)
            stack.extend(ast.iter_child_nodes(n))

    def block(self, stmts, done):
        for s in stmts:
            if done is None:        # after a return, raise, break or continue: never runs
                return None
            done = self.stmt(s, done)
        return done

    def loop(self, body, orelse, enter, done, forever=False):
        self.loops.append([])
        self.block(body, enter)
        breaks = self.loops.pop()
        after_else = None if forever else self.block(orelse, done)
        return _meet(after_else, *breaks)

    def stmt(self, s, done):
        if isinstance(s, ast.Assign):
            self.reads(s.value, done)
            for t in s.targets:
                self.reads(t, done)
            return done | stored(s.targets)
        if isinstance(s, ast.AugAssign):
            self.reads(s.value, done)
            if isinstance(s.target, ast.Name):
                if s.target.id in self.local and s.target.id not in done:
                    self.maybe.append(s)
            else:
                self.reads(s.target, done)
            return done | stored([s.target])
        if isinstance(s, ast.AnnAssign):
            if s.value is None:
                return done
            self.reads(s.value, done)
            self.reads(s.target, done)
            return done | stored([s.target])
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self.reads(s.iter, done)
            self.reads(s.target, done)
            return self.loop(s.body, s.orelse, done | stored([s.target]), done)
        if isinstance(s, ast.While):
            self.reads(s.test, done)
            forever = isinstance(s.test, ast.Constant) and bool(s.test.value)
            return self.loop(s.body, s.orelse, done, done, forever)
        if isinstance(s, ast.If):
            self.reads(s.test, done)
            return _meet(self.block(s.body, done), self.block(s.orelse, done))
        if isinstance(s, ast.Break):
            self.loops[-1].append(done)
            return None
        if isinstance(s, ast.Continue):
            return None
        if isinstance(s, (ast.Return, ast.Raise)):
            self.reads(s, done)
            return None
        if isinstance(s, ast.Delete):
            self.reads(s, done)
            gone = {t.id for t in s.targets if isinstance(t, ast.Name)}
            self.deleted |= gone
            return done - gone
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            body = self.block(s.body, done)
            ends = [self.block(s.orelse, body) if body is not None else None]
            for h in s.handlers:
                if h.type is not None:
                    self.reads(h.type, done)
                ends.append(self.block(h.body, done | ({h.name} if h.name else set())))
            after = _meet(*ends)
            final = self.block(s.finalbody, done)
            return None if after is None or final is None else after | final
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.reads(item.context_expr, done)
            return self.block(s.body, done | stored(
                [i.optional_vars for i in s.items if i.optional_vars is not None]))
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return done | {s.name}      # (decorators and defaults: a lambda-like scope)
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            return done | {a.asname or a.name.split(".")[0] for a in s.names}
        if isinstance(s, ast.Match):
            self.reads(s.subject, done)
            for case in s.cases:
                self.block(case.body, done | _pattern_names(case.pattern))
            return done
        self.reads(s, done)
        return done


def _meet(*sets):
    live = [x for x in sets if x is not None]
    if not live:
        return None
    out = set(live[0])
    for x in live[1:]:
        out &= x
    return out


def _pattern_names(pattern) -> set:
    return {getattr(n, "name", None) or getattr(n, "rest", None) for n in ast.walk(pattern)
            if getattr(n, "name", None) or getattr(n, "rest", None)}


def _plain_bindings(body) -> dict:
    """name -> False if some statement binds it other than by assignment, a ``for`` target
    or ``del`` (then it gets no flag)."""
    plain = {}
    for n in own_nodes(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            plain.setdefault(n.id, True)
        if isinstance(n, (ast.With, ast.AsyncWith)):
            for i in n.items:
                for v in ast.walk(i.optional_vars) if i.optional_vars is not None else ():
                    if isinstance(v, ast.Name):
                        plain[v.id] = False
        elif isinstance(n, ast.NamedExpr):
            plain[n.target.id] = False
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                plain[a.asname or a.name.split(".")[0]] = False
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            plain[n.name] = False
        elif isinstance(n, ast.ExceptHandler) and n.name:
            plain[n.name] = False
        elif isinstance(n, ast.match_case):
            for x in _pattern_names(n.pattern):
                plain[x] = False
    return plain


def guard_unbound(fdef, ops_name, filename, params, cells) -> frozenset:
    """Rewrites ``fdef`` in place (see the module's doc); returns the names given a flag."""
    plain = _plain_bindings(fdef.body)
    local = {x for x, ok in plain.items() if x not in params}
    flow = _Flow(local)
    flow.block(fdef.body, set(params))
    names = {(n.id if isinstance(n, ast.Name) else n.target.id) for n in flow.maybe}
    names |= flow.deleted & local
    names = frozenset(x for x in names if plain.get(x) and x not in flow.hidden
                      and x not in cells)
    if not names:
        return names
    sites = {id(n): n for n in flow.maybe
             if (n.id if isinstance(n, ast.Name) else n.target.id) in names}

    def check(name, at):
        return ast.Call(func=ast.Attribute(value=name_node(ops_name), attr="bound",
                                           ctx=ast.Load()),
                        args=[name_node(name), name_node(flag_name(name)),
                              ast.Constant(name),
                              ast.Constant("%s:%d" % (filename, at.lineno))], keywords=[])

    class Reads(ast.NodeTransformer):
        def visit_Name(self, node):
            if id(node) in sites:
                return ast.copy_location(check(node.id, node), node)
            return node

        def visit_scope(self, node):
            return node

        visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_scope
        visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_scope
        visit_GeneratorExp = visit_scope

    def mark(stmts):
        out = []
        for s in stmts:
            if id(s) in sites:          # ``x += 1`` where x may be unbound: checked first
                out.append(set_location(ast.Expr(value=check(s.target.id, s)), s))
            s = Reads().visit(s) if not isinstance(s, SCOPES) else s
            map_blocks(s, mark)
            out.append(s)
            if isinstance(s, (ast.For, ast.AsyncFor)):
                s.body[:0] = [set_location(assign(flag_name(x), ast.Constant(True)), s)
                              for x in sorted(stored([s.target]) & names)]
            elif isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                out += [set_location(assign(flag_name(x), ast.Constant(True)), s)
                        for x in sorted(stored(targets) & names)]
            elif isinstance(s, ast.Delete):
                out += [set_location(assign(flag_name(t.id), ast.Constant(False)), s)
                        for t in s.targets if isinstance(t, ast.Name) and t.id in names]
        return out

    body = mark(fdef.body)
    doc = body[:1] if (body and isinstance(body[0], ast.Expr)
                       and isinstance(body[0].value, ast.Constant)
                       and isinstance(body[0].value.value, str)) else []
    start = [set_location(assign(flag_name(x), ast.Constant(False)), fdef)
             for x in sorted(names)]
    fdef.body = doc + start + body[len(doc):]
    return names
