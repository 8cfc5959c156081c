"""The rewriting behind ``capture.convert``: one function's AST, control flow routed
through the runtime object.

In: a parsed ``FunctionDef`` (line numbers of the user's file). Out: the same tree rewritten
in place: ``for``/``while``/``if`` become nested functions (body, getter and setter of the
names they assign) passed to ``__ccg.for_stmt``/``while_stmt``/``if_stmt``; conditional
expressions, ``and``/``or``/``not`` and calls of a few builtins become ``__ccg`` calls;
``break``/``continue`` become flags. Statements that cannot be rewritten (``return`` inside
a loop, ``try``, ``with``, ``yield``, ...) stay plain Python.
"""
from __future__ import annotations

import ast
import builtins

# builtins rewritten to ops.<name>_ wherever they are called
_BUILTIN_OPS = {"max", "min", "abs", "float", "int", "bool", "len"}
# builtins rewritten to ops.<name>_ when they are the top-level call of a for iterable
_ITER_OPS = {"range", "enumerate", "zip", "reversed"}

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)
# statements that make an enclosing loop/if unconvertible
_BAD_STMTS = (ast.Return, ast.Delete, ast.Global, ast.Nonlocal, ast.Try, ast.With,
              ast.AsyncWith, ast.AsyncFor, ast.Match) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())
_BAD_EXPRS = (ast.Yield, ast.YieldFrom, ast.Await)



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
        if isinstance(n, _SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))


def _bound_names(nodes):
    """Names bound in the current scope by ``nodes`` (not nested scopes)."""
    names = set()

    def visit(n):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            return
        if isinstance(n, ast.Lambda):
            return
        if isinstance(n, _COMPS):
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


def _own_jumps(stmts):
    """Break/Continue nodes in ``stmts`` that belong to the enclosing loop."""
    out = []

    def visit(n):
        if isinstance(n, (ast.Break, ast.Continue)):
            out.append(n)
            return
        if isinstance(n, _SCOPES + _LOOPS):
            # a nested loop owns its jumps, but its else clause does not
            if isinstance(n, _LOOPS):
                for c in n.orelse:
                    visit(c)
            return
        for c in ast.iter_child_nodes(n):
            visit(c)

    for s in stmts:
        visit(s)
    return out


def _jumps_lowerable(stmts):
    """Own break/continue appear only directly in the list or inside nested ifs."""
    for s in stmts:
        if isinstance(s, ast.If):
            if not (_jumps_lowerable(s.body) and _jumps_lowerable(s.orelse)):
                return False
        elif not isinstance(s, (ast.Break, ast.Continue)) and _own_jumps([s]):
            return False
    return True


def _has(nodes, types_):
    return any(isinstance(n, types_) for n in walk_scope(nodes))


def _has_return(nodes):
    return _has(nodes, ast.Return)


def name_node(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _args(*names):
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names],
                         vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def _lambda(body):
    return ast.Lambda(args=_args(), body=body)


def function_def(name, params, body):
    return ast.FunctionDef(name=name, args=_args(*params), body=body,
                           decorator_list=[], returns=None, type_comment=None,
                           **({"type_params": []} if "type_params" in ast.FunctionDef._fields else {}))


def _assign(name, value):
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


def _always_exits(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_exits(last.body) and _always_exits(last.orelse)
    if isinstance(last, ast.While):     # ``while True:`` left only by return
        return (isinstance(last.test, ast.Constant) and bool(last.test.value)
                and not _own_jumps(last.body) and not last.orelse)
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


# ----------------------------------------------------------------------------
# the transformer
# ----------------------------------------------------------------------------

class Converter:
    def __init__(self, fdef, fn, ops_name, filename):
        self.fdef = fdef
        self.ops = ops_name
        self.pre = ops_name + "_"
        self.filename = filename
        self.counter = 0
        self.changed = False
        self.modified = set()  # union of nonlocal'ed names (need UNDEFINED init)
        code = fn.__code__
        self.globals = fn.__globals__
        self.local_names = (set(code.co_varnames) | set(code.co_cellvars)
                            | set(code.co_freevars) | _bound_names(fdef.body))
        a = fdef.args
        self.params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        if a.vararg:
            self.params.add(a.vararg.arg)
        if a.kwarg:
            self.params.add(a.kwarg.arg)
        self.local_names |= self.params
        self.declared = set()  # user's global/nonlocal names
        for n in walk_scope(fdef.body):
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                self.declared.update(n.names)
        bi = fn.__globals__.get("__builtins__", builtins)
        self.builtins = bi if isinstance(bi, dict) else vars(bi)

    # -- helpers --------------------------------------------------------------
    def where(self, node):
        return ast.Constant("%s:%d" % (self.filename, node.lineno))

    def op(self, attr):
        return ast.Attribute(value=name_node(self.ops), attr=attr, ctx=ast.Load())

    def call_op(self, attr, args, keywords=()):
        return ast.Call(func=self.op(attr), args=list(args), keywords=list(keywords))

    def is_builtin(self, name):
        return (name not in self.local_names and name not in self.globals
                and name in self.builtins)

    def new_id(self):
        self.counter += 1
        return self.counter

    # -- expressions ------------------------------------------------------------
    def expr(self, node):
        if node is None:
            return None
        return _ExprConv(self).visit(node)

    # -- statements -------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [s]  # nested scopes are left alone
        if isinstance(s, ast.For) and self.loop_ok(s):
            return self.gen_for(s)
        if isinstance(s, ast.While) and self.loop_ok(s):
            return self.gen_while(s)
        if isinstance(s, ast.If) and self.if_ok(s):
            return self.gen_if(s)
        return [self.generic(s)]

    def generic(self, node):
        """Convert sub-blocks and expressions of a statement kept as Python."""
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    setattr(node, field, self.block(value))
                else:
                    new = []
                    for item in value:
                        if isinstance(item, ast.expr):
                            item = self.expr(item)
                        elif isinstance(item, (ast.excepthandler, ast.match_case, ast.withitem,
                                               ast.keyword, ast.comprehension)):
                            item = self.generic(item)
                        new.append(item)
                    setattr(node, field, new)
            elif isinstance(value, ast.expr):
                setattr(node, field, self.expr(value))
        return node

    # -- convertibility ---------------------------------------------------------
    def body_ok(self, stmts):
        for n in walk_scope(stmts):
            if isinstance(n, _BAD_STMTS + _BAD_EXPRS):
                return False
        return not (_bound_names(stmts) & self.declared)

    def loop_ok(self, s):
        if s.orelse:
            return False
        if isinstance(s, ast.For):
            if _has([s.target], (ast.Starred,) + _BAD_EXPRS):
                return False
            if _has([s.iter], _BAD_EXPRS):
                return False
            if _bound_names([s.target]) & self.declared:
                return False
        else:
            if _has([s.test], _BAD_EXPRS + (ast.NamedExpr,)):
                return False
        return _jumps_lowerable(s.body) and self.body_ok(s.body)

    def if_ok(self, s):
        if _has([s.test], _BAD_EXPRS):
            return False
        stmts = s.body + s.orelse
        if _own_jumps(stmts):  # break/continue of a loop kept as Python
            return False
        return self.body_ok(stmts)

    # -- break / continue lowering ----------------------------------------------
    def lower(self, stmts, brk, cont, guard):
        """Replace own break/continue by flag assignments and guard the rest."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Break):
                out.append(ast.copy_location(_assign(brk, ast.Constant(True)), s))
                return out, True
            if isinstance(s, ast.Continue):
                out.append(ast.copy_location(_assign(cont, ast.Constant(True)), s))
                return out, True
            may = False
            if isinstance(s, ast.If) and _own_jumps([s]):
                s.body, m1 = self.lower(s.body, brk, cont, guard)
                s.orelse, m2 = self.lower(s.orelse, brk, cont, guard)
                if not s.body:
                    s.body = [ast.copy_location(ast.Pass(), s)]
                may = m1 or m2
            out.append(s)
            if may:
                rest, _ = self.lower(stmts[i + 1:], brk, cont, guard)
                if rest:
                    g = ast.If(test=guard(), body=rest, orelse=[])
                    out.append(set_location(g, rest[0]))
                return out, True
        return out, False

    def prep_jumps(self, s, n):
        jumps = _own_jumps(s.body)
        brk = "%sbrk_%d" % (self.pre, n) if any(isinstance(j, ast.Break) for j in jumps) else None
        cont = "%scont_%d" % (self.pre, n) if any(isinstance(j, ast.Continue) for j in jumps) else None
        if jumps:
            flags = [f for f in (brk, cont) if f]

            def guard():
                t = name_node(flags[0]) if len(flags) == 1 else ast.BoolOp(
                    op=ast.Or(), values=[name_node(f) for f in flags])
                return ast.UnaryOp(op=ast.Not(), operand=t)

            s.body, _ = self.lower(s.body, brk, cont, guard)
        return brk, cont

    # -- generators -------------------------------------------------------------
    def state_fns(self, n, names):
        get_n, set_n = "%sget_%d" % (self.pre, n), "%sset_%d" % (self.pre, n)
        get = function_def(get_n, [], [ast.Return(value=ast.Tuple(
            elts=[name_node(x) for x in names], ctx=ast.Load()))])
        if names:
            v = self.pre + "v"
            set_ = function_def(set_n, [v], [ast.Nonlocal(names=list(names)), ast.Assign(
                targets=[ast.Tuple(elts=[name_node(x, True) for x in names], ctx=ast.Store())],
                value=name_node(v), type_comment=None)])
        else:
            set_ = function_def(set_n, [self.pre + "v"], [ast.Pass()])
        return get_n, set_n, [get, set_]

    def fn_body(self, names, body):
        head = [ast.Nonlocal(names=list(names))] if names else []
        return head + (body or [ast.Pass()])

    def names_tuple(self, names):
        return ast.Tuple(elts=[ast.Constant(x) for x in names], ctx=ast.Load())

    def finish(self, s, stmts):
        self.changed = True
        for x in stmts:
            ast.copy_location(x, s)
            set_location(x, s)
        return stmts

    def gen_for(self, s):
        n = self.new_id()
        brk, cont = self.prep_jumps(s, n)
        names = sorted(_bound_names(s.body) | _bound_names([s.target]))
        self.modified.update(names)
        item = self.pre + "item"
        inner = [ast.Assign(targets=[s.target], value=name_node(item), type_comment=None)]
        if cont:
            inner.append(_assign(cont, ast.Constant(False)))
        inner += self.block(s.body)
        body_n = "%sbody_%d" % (self.pre, n)
        body = function_def(body_n, [item], self.fn_body(names, inner))
        get_n, set_n, state = self.state_fns(n, names)
        it = s.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id in _ITER_OPS and self.is_builtin(it.func.id)):
            it = ast.Call(func=self.op(it.func.id + "_"),
                          args=[self.expr(a) for a in it.args],
                          keywords=[ast.keyword(arg=k.arg, value=self.expr(k.value))
                                    for k in it.keywords])
        else:
            it = self.expr(it)
        extra = (_lambda(self.call_op("not_", [name_node(brk)])) if brk
                 else ast.Constant(None))
        pre = [_assign(f, ast.Constant(False)) for f in (brk, cont) if f]
        call = ast.Expr(self.call_op("for_stmt", [
            it, name_node(body_n), name_node(get_n), name_node(set_n), self.names_tuple(names),
            extra, self.where(s)]))
        return self.finish(s, pre + [body] + state + [call])

    def gen_while(self, s):
        n = self.new_id()
        brk, cont = self.prep_jumps(s, n)
        names = sorted(_bound_names(s.body))
        self.modified.update(names)
        test = s.test
        if brk:
            test = ast.BoolOp(op=ast.And(), values=[
                ast.UnaryOp(op=ast.Not(), operand=name_node(brk)), test])
            set_location(test, s)
        cond_n = "%scond_%d" % (self.pre, n)
        cond = function_def(cond_n, [], [ast.Return(value=self.expr(test))])
        inner = [_assign(cont, ast.Constant(False))] if cont else []
        inner += self.block(s.body)
        body_n = "%sbody_%d" % (self.pre, n)
        body = function_def(body_n, [], self.fn_body(names, inner))
        get_n, set_n, state = self.state_fns(n, names)
        pre = [_assign(f, ast.Constant(False)) for f in (brk, cont) if f]
        call = ast.Expr(self.call_op("while_stmt", [
            name_node(cond_n), name_node(body_n), name_node(get_n), name_node(set_n),
            self.names_tuple(names), self.where(s)]))
        return self.finish(s, pre + [cond, body] + state + [call])

    def gen_if(self, s):
        n = self.new_id()
        names = sorted(_bound_names(s.body + s.orelse))
        self.modified.update(names)
        test = self.expr(s.test)
        then_n, else_n = "%sthen_%d" % (self.pre, n), "%selse_%d" % (self.pre, n)
        then = function_def(then_n, [], self.fn_body(names, self.block(s.body)))
        els = function_def(else_n, [], self.fn_body(names, self.block(s.orelse)))
        get_n, set_n, state = self.state_fns(n, names)
        call = ast.Expr(self.call_op("if_stmt", [
            test, name_node(then_n), name_node(else_n), name_node(get_n), name_node(set_n),
            self.names_tuple(names), self.where(s)]))
        return self.finish(s, [then, els] + state + [call])

    # -- early returns at the top level of the function ---------------------------
    def rewrite_returns(self, body):
        ret = self.pre + "ret"
        changed = [False]

        def tail(stmts):
            out = []
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Return):
                    out.append(ast.copy_location(
                        _assign(ret, s.value or ast.Constant(None)), s))
                    return out
                if isinstance(s, ast.If) and _has_return([s]):
                    eb, eo = _always_exits(s.body), _always_exits(s.orelse)
                    if eb or eo:
                        rest = stmts[i + 1:]
                        b = tail(s.body + ([] if eb else rest))
                        o = tail(s.orelse + ([] if eo else rest))
                        changed[0] = True
                        out.append(ast.copy_location(ast.If(test=s.test, body=b, orelse=o), s))
                        return out
                out.append(s)
            last = stmts[-1] if stmts else self.fdef
            out.append(set_location(_assign(ret, ast.Constant(None)), last))
            return out

        if self.declared:
            return body
        if any(isinstance(s, _LOOPS) and _has_return([s]) for s in walk_scope(body)):
            return self.returns_in_loops(body)
        if not any(isinstance(s, ast.If) and _has_return([s]) for s in body):
            return body
        new = tail(body)
        if not changed[0]:
            return body
        r = ast.Return(value=name_node(ret))
        return new + [set_location(r, body[-1])]

    def returns_in_loops(self, body):
        """``return`` inside loops (``for ...: if hit: return i``): the value goes to a
        variable, a flag says it was set, and the loop breaks; every enclosing loop breaks
        on the flag and the statements after it run only while the flag is down (what
        Python's return skips). The function then returns the variable."""
        ret, flag = self.pre + "ret", self.pre + "rf"
        returns = [n for n in walk_scope(body) if isinstance(n, ast.Return)]
        arity = {len(r.value.elts) if isinstance(r.value, ast.Tuple) and not any(
            isinstance(e, ast.Starred) for e in r.value.elts) else None for r in returns}
        parts = arity.pop() if len(arity) == 1 and None not in arity and _always_exits(body) \
            else None                   # ``return x, k`` everywhere: one variable per item

        def store(value, s):
            if parts is None:
                return [set_location(_assign(ret, value or ast.Constant(None)), s)]
            return [set_location(_assign(f"{ret}_{k}", v), s) for k, v in enumerate(value.elts)]

        def flag_down():
            return ast.UnaryOp(op=ast.Not(), operand=name_node(flag))

        def lower(stmts, in_loop):
            out = []
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Return):
                    out += store(s.value, s) + [set_location(_assign(flag, ast.Constant(True)), s)]
                    if in_loop:
                        out.append(set_location(ast.Break(), s))
                    return out
                if not _has_return([s]) or isinstance(s, _SCOPES):
                    out.append(s)
                    continue
                if isinstance(s, ast.If):
                    s.body = lower(s.body, in_loop) or [set_location(ast.Pass(), s)]
                    s.orelse = lower(s.orelse, in_loop)
                    out.append(s)
                else:                   # a loop: its returns break out of it
                    s.body = lower(s.body, True)
                    out.append(s)
                    if in_loop:         # ... and out of the loops around it
                        out.append(set_location(ast.If(test=name_node(flag), body=[
                            set_location(ast.Break(), s)], orelse=[]), s))
                rest = lower(stmts[i + 1:], in_loop)
                if rest:
                    out.append(set_location(ast.If(test=flag_down(), body=rest, orelse=[]),
                                            rest[0]))
                return out
            return out

        if any(isinstance(s, _LOOPS) and s.orelse and _has_return([s]) for s in walk_scope(body)):
            return body
        self.changed = True
        first = body[0]
        head = [set_location(_assign(flag, ast.Constant(False)), first)]
        if not _always_exits(body):     # falling off the end returns None
            body = body + [set_location(ast.Return(value=None), body[-1])]
        new = head + lower(body, False)
        value = name_node(ret) if parts is None else ast.Tuple(
            elts=[name_node(f"{ret}_{k}") for k in range(parts)], ctx=ast.Load())
        return new + [set_location(ast.Return(value=value), body[-1])]

    # -- entry --------------------------------------------------------------------
    def run(self):
        f = self.fdef
        body = f.body
        doc = []
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            doc, body = body[:1], body[1:]
        if not body:
            body = [ast.copy_location(ast.Pass(), f)]
        body = self.rewrite_returns(body)
        body = self.block(body)
        init = []
        for x in sorted(self.modified - self.params):
            init.append(set_location(_assign(x, self.op("UNDEFINED")), body[0]))
        f.body = doc + init + body
        return self.changed


class _ExprConv(ast.NodeTransformer):
    def __init__(self, conv):
        self.c = conv

    def visit_Lambda(self, node):
        return node

    def _lambda_safe(self, nodes):
        for n in walk_scope(nodes):
            if isinstance(n, (ast.NamedExpr,) + _BAD_EXPRS):
                return False
            if isinstance(n, ast.Name) and n.id == "super":
                return False
        return True

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if not self._lambda_safe(node.values):
            return node
        self.c.changed = True
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        return ast.copy_location(self.c.call_op(name, [_lambda(v) for v in node.values]), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.c.changed = True
        return ast.copy_location(self.c.call_op("not_", [node.operand]), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not self._lambda_safe([node.body, node.orelse]):
            return node
        self.c.changed = True
        return ast.copy_location(self.c.call_op("if_exp", [
            node.test, _lambda(node.body), _lambda(node.orelse), self.c.where(node)]), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if not isinstance(f, ast.Name) or f.id.startswith(self.c.pre):
            return node
        if self.c.is_builtin(f.id):
            if f.id in _BUILTIN_OPS:
                self.c.changed = True
                node.func = ast.copy_location(self.c.op(f.id + "_"), f)
            return node
        self.c.changed = True
        return ast.copy_location(ast.Call(func=self.c.op("call"), args=[f] + node.args,
                                          keywords=node.keywords), node)
