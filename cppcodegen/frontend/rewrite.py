"""The rewriting behind ``capture.convert``: one function's AST, control flow routed
through the runtime object.

In: a parsed ``FunctionDef`` (line numbers of the user's file). Out: the same tree rewritten
in place: ``for``/``while``/``if`` become nested functions (body, getter and setter of the
names they assign) passed to ``__ccg.for_stmt``/``while_stmt``/``if_stmt``; conditional
expressions, ``and``/``or``/``not`` and calls of a few builtins become ``__ccg`` calls;
``break``/``continue`` become flags; ``return`` inside branches and loops is moved first
(``returns.py``). Statements that cannot be rewritten (``try``, ``with``, ``yield``, ...)
stay plain Python. AST helpers: ``astutil.py``.
"""
from __future__ import annotations

import ast
import builtins

from .astutil import (assign, BAD_EXPRS, BAD_STMTS, TRY_STMTS, bound_names, function_def, has,
                      jumps_lowerable, lambda_of, located, name_node, own_jumps, set_location,
                      walk_scope)
from .bindings import flag_name
from .containers import MUTATORS
from .escapes import private_lists
from .optionals import flag_name as some_flag, none_returns
from .returns import ReturnRewriter

# builtins rewritten to ops.<name>_ wherever they are called
_SCALAR_TYPES = {"float64", "float32", "float16", "double", "single", "int64", "int32", "int16",
                 "int8", "uint64", "uint32", "uint16", "uint8", "intp", "uintp",
                 "complex128", "complex64", "cdouble", "csingle"}
_BUILTIN_OPS = {"max", "min", "abs", "float", "int", "bool", "complex", "len", "print", "any",
                "all", "pow"}
_CHAINED = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
            ast.NotEq: "ne"}       # comparisons a chain of which is rewritten
# builtins rewritten to ops.<name>_ when they are a for's iterable (or nested in one's arguments)
_ITER_OPS = {"range", "enumerate", "zip", "reversed"}
# the index of the loop of one trip around the whole body (capture.convert(once=True)): the
# function traced again so, when a statement outside every loop needs one (a slice whose
# bounds come from array values has a length its buffers only know inside a compiled loop)
ONCE = "__ccg_once"


# ----------------------------------------------------------------------------
# the transformer
# ----------------------------------------------------------------------------

class Converter(ReturnRewriter):
    def __init__(self, fdef, fn, ops_name, filename, once=False):
        self.fdef = fdef
        self.once = once        # the body inside a loop of one trip (``ONCE``)
        self.ops = ops_name
        self.pre = ops_name + "_"
        self.filename = filename
        self.counter = 0
        self.changed = False
        self.modified = set()  # union of nonlocal'ed names (need UNDEFINED init)
        code = fn.__code__
        self.globals = fn.__globals__
        self.local_names = (set(code.co_varnames) | set(code.co_cellvars)
                            | set(code.co_freevars) | bound_names(fdef.body))
        a = fdef.args
        self.params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        if a.vararg:
            self.params.add(a.vararg.arg)
        if a.kwarg:
            self.params.add(a.kwarg.arg)
        self.local_names |= self.params
        self.private = private_lists(fdef, self.params, fn.__globals__)   # (escapes.py)
        self.declared = set()  # user's global/nonlocal names
        self.loads = {}        # name -> ids of the nodes reading it (bound on one side of an
        for n in walk_scope(fdef.body):     # if, a name read elsewhere is carried out of it)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                self.loads.setdefault(n.id, set()).add(id(n))
        self.kept = []         # the names the ifs converted so far carry out (keep)
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
        if isinstance(s, ast.Assert):       # ``if not c: raise AssertionError(msg)``
            if not __debug__:               # (python -O: no asserts)
                return []
            error = ast.Call(func=name_node("AssertionError"),
                             args=[s.msg] if s.msg is not None else [], keywords=[])
            s = set_location(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=s.test),
                                    body=[ast.Raise(exc=error, cause=None)], orelse=[]), s)
            return self.stmt(s)
        if isinstance(s, TRY_STMTS) and s.handlers:     # try/except: Python runs it while
            return self.guarded_try(s)                  # tracing, with no array work in it
        if isinstance(s, ast.Raise) and s.exc is not None:     # marked as the user's: in a
            s = self.generic(s)                 # branch on array values, a run-time check
            s.exc = ast.copy_location(self.call_op("user_error", [s.exc, self.where(s)]), s)
            self.changed = True
            return [s]
        return [self.generic(s)]

    def guarded_try(self, s):
        """``enter_try(where, the names its body reads, locals()); try: <s> finally:
        leave_try()``, each handler starting with
        ``try_handler()``: an array operation in ``s`` is refused (control.TraceOps), and the
        refusal stands even if a handler catches it (``except Exception``, a bare except)."""
        s = self.generic(s)
        for h in s.handlers:
            h.body.insert(0, located(ast.Expr(self.call_op("try_handler", [])), h.body[0]))
        self.changed = True
        leave = located(ast.Expr(self.call_op("leave_try", [])), s)
        read = sorted({n.id for n in walk_scope(s.body) if isinstance(n, ast.Name) and
                       isinstance(n.ctx, ast.Load)})
        names = ast.Tuple([ast.Constant(n) for n in read], ast.Load())
        scope = ast.Call(func=name_node("locals"), args=[], keywords=[])
        return [located(ast.Expr(self.call_op("enter_try", [self.where(s), names, scope])), s),
                located(ast.Try(body=[s], handlers=[], orelse=[], finalbody=[leave]), s)]

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
            if isinstance(n, BAD_STMTS + BAD_EXPRS):
                return False
        return not (bound_names(stmts) & self.declared)

    def loop_ok(self, s):
        if s.orelse:
            return False
        if isinstance(s, ast.For):
            if has([s.target], (ast.Starred,) + BAD_EXPRS):
                return False
            if has([s.iter], BAD_EXPRS):
                return False
            if bound_names([s.target]) & self.declared:
                return False
        else:
            if has([s.test], BAD_EXPRS + (ast.NamedExpr,)):
                return False
        return jumps_lowerable(s.body) and self.body_ok(s.body)

    def if_ok(self, s):
        if has([s.test], BAD_EXPRS):
            return False
        stmts = s.body + s.orelse
        if own_jumps(stmts):  # break/continue of a loop kept as Python
            return False
        return self.body_ok(stmts)

    # -- break / continue lowering ----------------------------------------------
    def lower(self, stmts, brk, cont, guard):
        """Replace own break/continue by flag assignments and guard the rest."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Break):
                out.append(ast.copy_location(assign(brk, ast.Constant(True)), s))
                return out, True
            if isinstance(s, ast.Continue):
                out.append(ast.copy_location(assign(cont, ast.Constant(True)), s))
                return out, True
            may = False
            if isinstance(s, ast.If) and own_jumps([s]):
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
        jumps = own_jumps(s.body)
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
        heaps = _heaps(s.body) & self.private
        names = sorted(bound_names(s.body) | bound_names([s.target]) | self.boxes(s.body) | heaps)
        stacks = sorted((self.boxes(s.body, ("pop",)) | heaps) & self.private)
        self.modified.update(names)
        item = self.pre + "item"
        inner = [ast.Assign(targets=[s.target], value=name_node(item), type_comment=None)]
        if cont:
            inner.append(assign(cont, ast.Constant(False)))
        start = len(self.kept)
        inner += self.block(s.body)
        entry = self.entry(s, names, start)
        body_n = "%sbody_%d" % (self.pre, n)
        body = function_def(body_n, [item], self.fn_body(names, inner))
        get_n, set_n, state = self.state_fns(n, names)
        it = self.iterable(s.iter)
        extra = (lambda_of(self.call_op("not_", [name_node(brk)])) if brk
                 else ast.Constant(None))
        pre = [assign(f, ast.Constant(False)) for f in (brk, cont) if f]
        call = ast.Expr(self.call_op("for_stmt", [
            it, name_node(body_n), name_node(get_n), name_node(set_n), self.names_tuple(names),
            extra, self.where(s), ast.Constant(_slices_with(s.target, s.body)),
            ast.Tuple([ast.Constant(x) for x in names if _written_first(x, s.body)],
                      ast.Load()), self.names_tuple(entry),
            self.names_tuple([x for x in names if x in self.private]),
            self.names_tuple(self._unread_after(s, names)), self.names_tuple(stacks)]))
        return self.finish(s, pre + [body] + state + [call])

    def _unread_after(self, s, names) -> list:
        """The ``names`` a loop assigns that nothing outside it reads (``b`` that is first a
        row's temporary, then the variable of a second inner loop): a prange loop need not
        give them a value after it, so each iteration may have its own."""
        inside = {id(n) for n in ast.walk(s)}
        return [x for x in names if x not in self.params and not self.loads.get(x, set()) - inside]

    def iterable(self, it):
        """A ``for``'s iterable: ``range``/``enumerate``/``zip``/``reversed`` calls, and
        those nested in their arguments (``enumerate(zip(x, y))``), become ops calls."""
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id in _ITER_OPS and self.is_builtin(it.func.id)):
            return ast.Call(func=self.op(it.func.id + "_"),
                            args=[self.iterable(a) for a in it.args],
                            keywords=[ast.keyword(arg=k.arg, value=self.expr(k.value))
                                      for k in it.keywords])
        return self.expr(it)

    def gen_while(self, s):
        n = self.new_id()
        brk, cont = self.prep_jumps(s, n)
        heaps = _heaps(s.body) & self.private
        names = sorted(bound_names(s.body) | self.boxes(s.body) | heaps)
        stacks = sorted((self.boxes(s.body) | heaps) & self.private)    # (before the rewrite)
        self.modified.update(names)
        test = s.test
        if brk:
            test = ast.BoolOp(op=ast.And(), values=[
                ast.UnaryOp(op=ast.Not(), operand=name_node(brk)), test])
            set_location(test, s)
        cond_n = "%scond_%d" % (self.pre, n)
        cond = function_def(cond_n, [], [ast.Return(value=self.expr(test))])
        inner = [assign(cont, ast.Constant(False))] if cont else []
        start = len(self.kept)
        inner += self.block(s.body)
        entry = self.entry(s, names, start)
        body_n = "%sbody_%d" % (self.pre, n)
        body = function_def(body_n, [], self.fn_body(names, inner))
        get_n, set_n, state = self.state_fns(n, names)
        pre = [assign(f, ast.Constant(False)) for f in (brk, cont) if f]
        call = ast.Expr(self.call_op("while_stmt", [
            name_node(cond_n), name_node(body_n), name_node(get_n), name_node(set_n),
            self.names_tuple(names), self.where(s), self.names_tuple(entry),
            self.names_tuple(stacks)]))
        return self.finish(s, pre + [cond, body] + state + [call])

    def boxes(self, stmts, methods=MUTATORS) -> set:
        """Local names whose list/dict/set methods that change them (of ``methods``) are
        called in ``stmts`` (``out.append(i)``): passed to the construct, which refuses to
        change them (``containers.py``)."""
        return {n.func.value.id for n in walk_scope(stmts) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr in methods
                and isinstance(n.func.value, ast.Name) and n.func.value.id in self.local_names
                and n.func.value.id not in self.declared}

    def entry(self, s, names, start):
        """The names of a loop whose value on entry to an iteration may be read or passed
        on though no binding came before (an if inside binds them on one side; a read
        checked by a flag, ``bindings.py``): carried into every iteration, the first with
        any value; likewise a name that may hold None, ``optionals.py``)."""
        checked = {n.args[0].id for n in ast.walk(s) if isinstance(n, ast.Call)
                   and isinstance(n.func, ast.Attribute) and n.func.attr in CHECKED_READS
                   and isinstance(n.func.value, ast.Name) and n.func.value.id == self.ops}
        return [x for x in names if x in self.kept[start:] or x in checked]

    def gen_if(self, s):
        n = self.new_id()
        names = sorted(bound_names(s.body + s.orelse) | self.boxes(s.body + s.orelse))
        self.modified.update(names)
        inside = {id(n) for n in ast.walk(s)}
        keep = [x for x in names if flag_name(x) in names or some_flag(x) in names or
                not self.loads.get(x, set()) <= inside]     # (read where its flag says)
        self.kept += keep
        test = self.expr(s.test)
        then_n, else_n = "%sthen_%d" % (self.pre, n), "%selse_%d" % (self.pre, n)
        then = function_def(then_n, [], self.fn_body(names, self.block(s.body)))
        els = function_def(else_n, [], self.fn_body(names, self.block(s.orelse)))
        get_n, set_n, state = self.state_fns(n, names)
        call = ast.Expr(self.call_op("if_stmt", [
            test, name_node(then_n), name_node(else_n), name_node(get_n), name_node(set_n),
            self.names_tuple(names), self.where(s), self.names_tuple(keep)]))
        return self.finish(s, [then, els] + state + [call])

    def in_one_trip(self, body):
        """``for __ccg_once in range(1): <body>`` (a compiled loop), the value of the final
        ``return`` (the only one left after ``rewrite_returns``) carried out of it (a tuple
        item by item); None where that cannot be."""
        f = self.fdef
        last = body[-1] if body and isinstance(body[-1], ast.Return) else None
        body = body[:-1] if last is not None else body
        if self.declared or any(isinstance(n, ast.Return) for n in walk_scope(body)):
            return None
        value = last.value if last is not None else None
        out = []
        if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred)
                                                   for e in value.elts):
            names = [f"{ONCE}_{k}" for k in range(len(value.elts))]
            body = body + [set_location(assign(n, e), last) for n, e in zip(names, value.elts)]
            out = [ast.Tuple(elts=[name_node(n) for n in names], ctx=ast.Load())]
        elif value is not None:
            body = body + [set_location(assign(ONCE + "_r", value), last)]
            out = [name_node(ONCE + "_r")]
        loop = ast.For(target=ast.Name(id=ONCE, ctx=ast.Store()),
                       iter=ast.Call(func=self.op("range_"), args=[ast.Constant(1)],
                                     keywords=[]), body=body or [ast.Pass()], orelse=[])
        ret = [set_location(ast.Return(value=v), last) for v in out]
        return [set_location(loop, f)] + ret

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
        body = none_returns(self.rewrite_returns(body), self.pre + "ret", self.ops,
                            self.filename)
        if self.once:
            body = self.in_one_trip(body)
            if body is None:
                return False
        body = self.block(body)
        init = []
        for x in sorted(self.modified - self.params):
            init.append(set_location(assign(x, self.op("UNDEFINED")), body[0]))
        f.body = doc + init + body
        return self.changed


CHECKED_READS = ("bound", "some", "is_none", "maybe_none")    # (bindings.py, optionals.py)


class _ExprConv(ast.NodeTransformer):
    def __init__(self, conv):
        self.c = conv

    def visit_Lambda(self, node):
        return node

    def _lambda_safe(self, nodes):
        for n in walk_scope(nodes):
            if isinstance(n, (ast.NamedExpr,) + BAD_EXPRS):
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
        return located(self.c.call_op(name, [lambda_of(v) for v in node.values]), node)

    def visit_Compare(self, node):
        """``lo <= v < hi``: ``and`` of the comparisons, each operand evaluated once, in
        order, where Python evaluates it (TraceOps.compare)."""
        self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq) and any(
                isinstance(x, (ast.Tuple, ast.List)) for x in (node.left, *node.comparators)) \
                and self._lambda_safe([node.left, *node.comparators]):
            self.c.changed = True       # ``(r, c) == goal``: item by item (TraceOps.seq_eq)
            return located(self.c.call_op("seq_eq", [
                ast.Constant(isinstance(node.ops[0], ast.NotEq)), lambda_of(node.left),
                lambda_of(node.comparators[0])]), node)
        if len(node.ops) < 2 or not all(type(o) in _CHAINED for o in node.ops) or \
                not self._lambda_safe([node.left, *node.comparators]):
            return node
        self.c.changed = True
        ops = ast.Tuple([ast.Constant(_CHAINED[type(o)]) for o in node.ops], ast.Load())
        return located(self.c.call_op("compare", [ops, lambda_of(node.left)] + [
            lambda_of(c) for c in node.comparators]), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.c.changed = True
        return located(self.c.call_op("not_", [node.operand]), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not self._lambda_safe([node.body, node.orelse]):
            return node
        self.c.changed = True
        return located(self.c.call_op("if_exp", [
            node.test, lambda_of(node.body), lambda_of(node.orelse), self.c.where(node)]), node)

    def visit_Subscript(self, node):
        """``table[idx]`` read: a NumPy array indexed by traced values is read as a traced
        array (NumPy's own indexing cannot take them). Keys with slices stay as written."""
        self.generic_visit(node)
        key = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not isinstance(node.ctx, ast.Load) or any(isinstance(k, ast.Slice) for k in key) or \
                not self._lambda_safe([node.value, node.slice]):
            return node
        self.c.changed = True
        return located(self.c.call_op("getitem", [node.value, node.slice]), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and (f.attr in _SCALAR_TYPES and len(node.args) == 1
                                             or f.attr in _OURS_IN_LOOPS or any(
                                                 isinstance(a, (ast.List, ast.Tuple))
                                                 for a in node.args)):
            self.c.changed = True       # np.float64(a) of a traced value: a cast; np.ndarray(
                                        # shape): np.empty; np.linalg.solve/inv/det in a loop: ours;
                                        # np.mean([a, b, c], axis=0): of one array (listargs.py)
                                        # (TraceOps.call)
            return located(ast.Call(func=self.c.op("call"), args=[f] + node.args,
                                              keywords=node.keywords), node)
        if not isinstance(f, ast.Name) or f.id.startswith(self.c.pre):
            return node
        if self.c.is_builtin(f.id) and f.id != "next":     # (next(it): TraceOps.call notes
            if f.id in _BUILTIN_OPS:                          # the iterator it advances)
                self.c.changed = True
                node.func = located(self.c.op(f.id + "_"), f)
            return node
        self.c.changed = True
        return located(ast.Call(func=self.c.op("call"), args=[f] + node.args,
                                          keywords=node.keywords), node)


_OURS_IN_LOOPS = ("ndarray", "solve", "inv", "det")


def _written_first(name, body) -> bool:
    """Does the loop body assign ``name`` (``name = ...`` at its top level) before anything in
    it reads the name? Then each iteration starts it afresh: a temporary of the body."""
    for stmt in body:
        refs = [n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name]
        if not refs:
            continue
        return (isinstance(stmt, ast.Assign) and not any(
            isinstance(n.ctx, ast.Load) for n in refs) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets))
    return False


def _slices_with(target, body) -> bool:
    """Does the loop's variable bound a slice in its body (``x[k:k + n]``)? Such a loop over a
    few iterations is run by Python while tracing, so its array statements fuse into one pass
    (a filter's taps); a time loop, or one reading elements (``a[i]``), stays a loop."""
    names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in names
               for sub in ast.walk(ast.Module(body=list(body), type_ignores=[]))
               if isinstance(sub, ast.Slice) for n in ast.walk(sub))


def _heaps(stmts) -> set:
    """Names ``stmts`` pass to ``heapq.heappush``/``heappop`` & co. as the heap."""
    return {n.args[0].id for n in walk_scope(stmts) if isinstance(n, ast.Call) and n.args and
            isinstance(n.args[0], ast.Name) and
            getattr(n.func, "attr", getattr(n.func, "id", None)) in HEAP_CALLS}


HEAP_CALLS = ("heappush", "heappop", "heappushpop", "heapreplace", "heapify")
