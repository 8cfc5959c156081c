"""Names that hold None on some paths: ``best = None`` before a loop that binds a number.

A compiled loop carries each name in one dtype, and None has none. So a name bound to the
literal ``None`` is carried as a value with a flag beside it, as a name that may be unbound
is (``bindings.py``): the value is whatever the other bindings give it, the flag says whether
it holds one. Python's ``x is None`` reads the flag, and the paths that leave it None return
None.

In: the user's ``FunctionDef``. For each local name ``x`` bound to ``None`` by an assignment
and otherwise only by assignments and ``for`` targets, never read inside a nested scope or a
comprehension, and compared with ``is`` to None only: ``x = None`` becomes ``x`` unbound
(``__ccg.UNDEFINED``) and a flag ``__ccg_some_x = False``; every other binding sets the flag
to True. Reads become (``nones.py``):

- ``x is None`` / ``x is not None`` (and ``==`` / ``!=`` None, the same for a number):
  ``__ccg.is_none(x, flag, negate, eq)``, the flag's negation once it is known only when the
  program runs;
- ``return x`` (and ``x`` an item of a returned tuple or list): ``__ccg.maybe_none(x, flag)``,
  None where the flag is False when the program runs;
- an operand of an arithmetic operator (augmented assignments too), an order comparison or
  a subscript (where None raises TypeError in Python), or any read where an ``is None`` test
  has shown it holds a value (``x if x is not None else d``, ``if x is not None: out[i] =
  x``): ``__ccg.some(x, flag, 'x', where, True)``, a check that raises
  TypeError where the flag is False;
- any other read: ``__ccg.some(x, flag, 'x', where, False)``, refused while tracing when the
  flag is known only when the program runs (a copy ``y = x`` or a call ``f(x)`` would need
  None as a value).

While the flag is a Python bool (no compiled loop or branch in between), each of them is
Python's own expression on the real value. Names that may also be unbound are left to
``bindings.py`` alone.
"""
from __future__ import annotations

import ast

from .astutil import (always_exits, assign, COMPS, map_blocks, name_node, own_nodes,
                      SCOPES, set_location, stored)

FLAG = "__ccg_some_"
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def flag_name(name: str) -> str:
    return FLAG + name


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _none_test(node, eq=False):
    """(name, negate) of ``x is None`` / ``x is not None`` / ``None is x`` (with ``eq``,
    ``x == None`` / ``x != None`` too), else None."""
    ops = (ast.Is, ast.IsNot) + ((ast.Eq, ast.NotEq) if eq else ())
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or \
            not isinstance(node.ops[0], ops):
        return None
    a, b = node.left, node.comparators[0]
    if _is_none(a):
        a, b = b, a
    if isinstance(a, ast.Name) and _is_none(b):
        return a.id, isinstance(node.ops[0], (ast.IsNot, ast.NotEq))
    return None


def _none_assign(s) -> set:
    """The names ``s`` binds to None: ``x = None``, ``x = y = None``, ``a, x = v, None``."""
    if not isinstance(s, ast.Assign):
        return set()
    if _is_none(s.value) and all(isinstance(t, ast.Name) for t in s.targets):
        return {t.id for t in s.targets}
    if len(s.targets) == 1 and isinstance(s.targets[0], ast.Tuple) and \
            isinstance(s.value, ast.Tuple) and len(s.value.elts) == len(s.targets[0].elts):
        return {t.id for t, v in zip(s.targets[0].elts, s.value.elts)
                if isinstance(t, ast.Name) and _is_none(v)}
    return set()


def _candidates(body, params, skip) -> set:
    """The local names bound to the literal None that the rewrite can take."""
    nones, values, bad = set(), set(), set(params) | set(skip)
    for n in own_nodes(body):
        if isinstance(n, ast.Assign):
            nones |= _none_assign(n)
            values |= stored(n.targets) - _none_assign(n)
        if isinstance(n, (ast.For, ast.AsyncFor)):
            values |= stored([n.target])
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            bad |= {x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}
        elif isinstance(n, ast.Delete):
            bad |= {x.id for t in n.targets for x in ast.walk(t) if isinstance(x, ast.Name)}
        elif isinstance(n, (ast.With, ast.AsyncWith, ast.Import, ast.ImportFrom,
                            ast.ExceptHandler, ast.match_case, ast.Global, ast.Nonlocal)):
            bad |= {x.id for x in ast.walk(n) if isinstance(x, ast.Name)} | \
                set(getattr(n, "names", ()) if isinstance(n, (ast.Global, ast.Nonlocal))
                    else ()) | {getattr(n, "name", None)}
        elif isinstance(n, SCOPES + COMPS):
            bad |= {x.id for x in ast.walk(n) if isinstance(x, ast.Name)}
            bad.add(getattr(n, "name", None))
        elif isinstance(n, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot))
                                                for o in n.ops) and _none_test(n) is None:
            bad |= {x.id for x in [n.left, *n.comparators] if isinstance(x, ast.Name)}
    return nones & values - bad     # (None on every path: Python's None, as it is)


def _raising(body, names) -> set:
    """ids of the reads of ``names`` where None raises TypeError in Python."""
    out = set()
    for n in own_nodes(body):
        if isinstance(n, ast.BinOp):
            kids = [n.left, n.right]
        elif isinstance(n, ast.AugAssign):
            kids = [n.value]
        elif isinstance(n, ast.UnaryOp) and not isinstance(n.op, ast.Not):
            kids = [n.operand]
        elif isinstance(n, ast.Compare) and all(isinstance(o, _ORDER) for o in n.ops):
            kids = [n.left, *n.comparators]
        elif isinstance(n, ast.Subscript):
            kids = [n.value]
        else:
            continue
        out |= {id(k) for k in kids if isinstance(k, ast.Name) and k.id in names}
    return out | _guarded(body, names)


def _guarded(body, names) -> set:
    """ids of the reads of ``names`` where an ``is None`` test has shown the name holds a
    value: the side of an ``if`` or a conditional expression that its test (``x is not
    None``, ``x is None``, or one of an ``and`` / ``or`` of such tests) leaves only to a
    value, when nothing there binds the name to None again, and the operands of an ``and``
    / ``or`` after such a test. Their checks never fire."""
    out = set()
    for n in own_nodes(body):
        if isinstance(n, ast.BoolOp):       # ``x is None or f(x)``, ``x is not None and f(x)``
            shown = set()
            for v in n.values:
                out |= {id(r) for r in own_nodes([v]) if isinstance(r, ast.Name) and r.id in shown}
                t = _none_test(v)
                if t is not None and t[1] == isinstance(n.op, ast.And):
                    shown.add(t[0])
            continue
        if not isinstance(n, (ast.If, ast.IfExp)):
            continue
        for x, side in _sure(n.test):
            part = n.body if side else n.orelse
            if x in names:
                out |= _reads_until_none(part if isinstance(part, list) else [part], x)
    return out | _narrowed(body, names)


def _reads_until_none(stmts, x) -> set:
    """ids of the reads of ``x`` in ``stmts`` before the first one that may bind it to
    None."""
    out = set()
    for s in stmts:
        if _binds_none(s, x):
            break
        out |= {id(r) for r in own_nodes([s]) if isinstance(r, ast.Name) and r.id == x and
                isinstance(r.ctx, ast.Load)}
    return out


def _binds_none(s, x) -> bool:
    return any(isinstance(n, ast.Assign) and x in _none_assign(n) for n in own_nodes([s]))


def _narrowed(body, names) -> set:
    """ids of the reads of ``names`` in the statements that follow, in the same block, a
    binding of the name to a value (``x = v``) or an ``if x is None:`` whose body binds it
    to a value or leaves (``stop = len(x)``, ``return -1``), up to a statement that may bind
    it to None again."""
    out = set()
    blocks = [body] + [getattr(n, f) for n in own_nodes(body) if not isinstance(n, SCOPES + COMPS)
                       for f in ("body", "orelse", "finalbody")
                       if isinstance(getattr(n, f, None), list) and getattr(n, f)
                       and isinstance(getattr(n, f)[0], ast.stmt)]
    for block in blocks:
        for k, s in enumerate(block):
            for x in _valued_after(s) & names:
                out |= _reads_until_none(block[k + 1:], x)
    return out


def _valued_after(s) -> set:
    """The names statement ``s`` leaves holding a value on every way it falls through."""
    if isinstance(s, ast.Assign):
        return stored(s.targets) - _none_assign(s)
    t = _none_test(s.test) if isinstance(s, ast.If) else None
    if t is None or t[1] or s.orelse or _binds_none(s, t[0]):
        return set()
    last = s.body[-1]
    bound = isinstance(last, ast.Assign) and t[0] in stored(last.targets)
    return {t[0]} if bound or always_exits(s.body) else set()


def _sure(test) -> list:
    """(name, side) pairs: where ``test`` is true (side True) or false (False), ``name``
    holds a value."""
    t = _none_test(test)
    if t is not None:
        return [(t[0], t[1])]
    if isinstance(test, ast.BoolOp):
        tests = [_none_test(v) for v in test.values]
        if isinstance(test.op, ast.And):
            return [(t[0], True) for t in tests if t is not None and t[1]]
        return [(t[0], False) for t in tests if t is not None and not t[1]]
    return []


def guard_none(fdef, ops_name, filename, params, skip) -> frozenset:
    """Rewrites ``fdef`` in place (see the module's doc); returns the names given a flag."""
    names = frozenset(_candidates(fdef.body, params, skip))
    if names:
        body = _rewrite(fdef.body, names, ops_name, filename)
        doc = body[:1] if (body and isinstance(body[0], ast.Expr)
                           and isinstance(body[0].value, ast.Constant)
                           and isinstance(body[0].value.value, str)) else []
        fdef.body = doc + _start(names, fdef) + body[len(doc):]
    return names


def none_returns(body, ret, ops_name, filename) -> list:
    """``body`` after ``returns.py`` stored each ``return`` into the names starting with
    ``ret``: those that are None on some paths (``return None``, a fall off the end) get a
    flag as the user's names do."""
    tuples = {t.id for n in own_nodes(body) if isinstance(n, ast.Assign) and
              isinstance(n.value, (ast.Tuple, ast.List)) for t in n.targets
              if isinstance(t, ast.Name)}      # (a tuple is not carried by a loop)
    names = frozenset(x for x in _candidates(body, (), ()) - tuples if x.startswith(ret))
    if not names or not body:
        return body
    last = body[-1]
    items = _items(last.value) if isinstance(last, ast.Return) else None
    if items and set(items) <= names and all(
            {t.id for t in n.targets} == set(items) for n in own_nodes(body)
            if isinstance(n, ast.Assign) and _none_assign(n) & set(items)):
        whole = ast.Call(func=ast.Attribute(value=name_node(ops_name), attr="maybe_none",
                                            ctx=ast.Load()),
                         args=[last.value, name_node(flag_name(items[0])), ast.Constant(ret)],
                         keywords=[])       # (``return i, v`` or ``return None``: the tuple
        return _start(names, body[0]) + _rewrite(body[:-1], names, ops_name, filename) + [
            set_location(ast.Return(value=whole), last)]      # or None as a whole)
    return _start(names, body[0]) + _rewrite(body, names, ops_name, filename)


def _items(value):
    """The names of a tuple of names (nested), else None."""
    if isinstance(value, ast.Name):
        return [value.id]
    if not isinstance(value, ast.Tuple) or not value.elts:
        return None
    out = []
    for e in value.elts:
        sub = _items(e)
        if sub is None:
            return None
        out += sub
    return out


def _start(names, at) -> list:
    return [set_location(assign(flag_name(x), ast.Constant(False)), at) for x in sorted(names)]


def _rewrite(body, names, ops_name, filename) -> list:
    """The statements ``body`` with the bindings and reads of ``names`` rewritten."""
    raising = _raising(body, names)
    made = set()            # the reads made here (a statement's body is visited twice)

    def op(attr, name, *args):
        read = name_node(name)
        made.add(id(read))
        return ast.Call(func=ast.Attribute(value=name_node(ops_name), attr=attr,
                                           ctx=ast.Load()),
                        args=[read, name_node(flag_name(name)), *args], keywords=[])

    class Reads(ast.NodeTransformer):
        def visit_Compare(self, node):
            test = _none_test(node, eq=True)
            if test is not None and test[0] in names:
                eq = isinstance(node.ops[0], (ast.Eq, ast.NotEq))
                return ast.copy_location(op("is_none", test[0], ast.Constant(test[1]),
                                            ast.Constant(eq)), node)
            return self.generic_visit(node)

        def visit_Return(self, node):
            if node.value is not None:
                node.value = self.result(node.value)
            return node

        def result(self, value):
            if isinstance(value, ast.Name) and value.id in names and id(value) not in made:
                return ast.copy_location(op("maybe_none", value.id, ast.Constant(value.id)), value)
            if isinstance(value, (ast.Tuple, ast.List)):
                value.elts = [self.result(e) for e in value.elts]
                return value
            return self.visit(value)

        def visit_Name(self, node):
            if node.id not in names or not isinstance(node.ctx, ast.Load) or id(node) in made:
                return node
            return ast.copy_location(op("some", node.id, ast.Constant(node.id),
                                        ast.Constant("%s:%d" % (filename, node.lineno)),
                                        ast.Constant(id(node) in raising)), node)

        def visit_scope(self, node):
            return node

        visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_scope
        visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_scope
        visit_GeneratorExp = visit_scope

    def flags(targets, value, gone=frozenset()):
        """The flags of the names ``targets`` bind: those of ``gone`` (bound to None) when
        ``value`` is False, the others when it is True."""
        return [set_location(assign(flag_name(x), ast.Constant(value)), targets[0])
                for x in sorted(stored(targets) & names) if (x in gone) != value]

    def undefined(at):
        return ast.copy_location(ast.Attribute(value=name_node(ops_name), attr="UNDEFINED",
                                               ctx=ast.Load()), at)

    def mark(stmts):
        out = []
        for s in stmts:
            gone = _none_assign(s) & names
            if gone:
                s = Reads().visit(s)
                if isinstance(s.value, ast.Tuple) and not _is_none(s.value):
                    s.value.elts = [undefined(v) if isinstance(t, ast.Name) and t.id in gone
                                    else v for t, v in zip(s.targets[0].elts, s.value.elts)]
                else:
                    s.value = undefined(s.value)
                out += [s] + flags(s.targets, False, gone) + flags(s.targets, True, gone)
                continue
            s = Reads().visit(s) if not isinstance(s, SCOPES) else s
            map_blocks(s, mark)
            out.append(s)
            if isinstance(s, (ast.For, ast.AsyncFor)):
                s.body[:0] = flags([s.target], True)
            elif isinstance(s, ast.Assign):
                out += flags(s.targets, True)
        return out

    return mark(body)
