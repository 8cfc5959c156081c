"""``return`` statements the control-flow rewriting must move (``rewrite.Converter``).

In: the body of the function being rewritten. Out: the same body where a ``return`` inside
an ``if`` (at the top level, or in ifs inside it) becomes an assignment on each path (the
tail after the ``if`` copied into the paths that fall through), and a ``return`` inside loops
becomes an assignment, a flag and a ``break`` out of every enclosing loop, the statements
after a loop guarded by the flag; the function then returns the variable. Loops and branches
with no ``return`` left can be captured as control flow.
"""
from __future__ import annotations

import ast
import copy

from .astutil import (always_exits, assign, has_return, LOOPS, name_node, SCOPES,
                      set_location, walk_scope)


class ReturnRewriter:
    """Methods of ``rewrite.Converter`` for ``return`` statements (mixed in)."""

    # -- early returns at the top level of the function ---------------------------
    def rewrite_returns(self, body):
        ret = self.pre + "ret"
        changed = [False]
        parts = _parts(body)        # ``return mean, var`` on every path: a variable per item

        def tail(stmts):
            out = []
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Return):
                    out += _store(ret, parts, s.value, s)
                    return out
                if isinstance(s, ast.If) and has_return([s]):
                    eb, eo = always_exits(s.body), always_exits(s.orelse)
                    rest = stmts[i + 1:]
                    if eb or eo or _small(rest):    # (neither side always returns: the
                                                    # statements after it copied into both)
                        b = tail(s.body + ([] if eb else rest))
                        o = tail(s.orelse + ([] if eo else rest if eb else copy.deepcopy(rest)))
                        changed[0] = True
                        out.append(ast.copy_location(ast.If(
                            test=s.test, body=b or [set_location(ast.Pass(), s)], orelse=o), s))
                        return out
                out.append(s)
            last = stmts[-1] if stmts else self.fdef
            return out + _store(ret, parts, None, last)

        if self.declared:
            return body
        if any(isinstance(s, LOOPS) and has_return([s]) for s in walk_scope(body)):
            return self.returns_in_loops(body)
        if not any(isinstance(s, ast.If) and has_return([s]) for s in body):
            return body
        new = tail(body)
        if not changed[0]:
            return body
        return new + [set_location(ast.Return(value=_result(ret, parts)), body[-1])]

    def returns_in_loops(self, body):
        """``return`` inside loops (``for ...: if hit: return i``): the value goes to a
        variable, a flag says it was set, and the loop breaks; every enclosing loop breaks
        on the flag and the statements after it run only while the flag is down (what
        Python's return skips). The function then returns the variable."""
        ret, flag = self.pre + "ret", self.pre + "rf"
        parts = _parts(body)            # ``return x, k`` everywhere: one variable per item

        def store(value, s):
            return _store(ret, parts, value, s)

        def flag_down():
            return ast.UnaryOp(op=ast.Not(), operand=name_node(flag))

        def lower(stmts, in_loop):
            out = []
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Return):
                    out += store(s.value, s) + [set_location(assign(flag, ast.Constant(True)), s)]
                    if in_loop:
                        out.append(set_location(ast.Break(), s))
                    return out
                if not has_return([s]) or isinstance(s, SCOPES):
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

        if any(isinstance(s, LOOPS) and s.orelse and has_return([s]) for s in walk_scope(body)):
            return body
        self.changed = True
        first = body[0]
        head = [set_location(assign(flag, ast.Constant(False)), first)]
        if not always_exits(body):     # falling off the end returns None
            body = body + [set_location(ast.Return(value=None), body[-1])]
        new = head + lower(body, False)
        return new + [set_location(ast.Return(value=_result(ret, parts)), body[-1])]


def _small(stmts, most: int = 300) -> bool:
    """Are ``stmts`` small enough to be written out twice (at most ``most`` AST nodes)?"""
    return sum(1 for s in stmts for _ in ast.walk(s)) <= most


def _none(value) -> bool:
    return value is None or isinstance(value, ast.Constant) and value.value is None


def _parts(body):
    """The structure every ``return`` of a value returns when each is a tuple written out
    (no ``*``; the others return None, or the path falls off the end: then every item is
    None, ``optionals.none_returns``): per item None (a value) or, for a tuple written out
    in every return, its own structure (``return (i, j), v``: ``((None, None), None)``); 0
    when every one returns None (``return`` to leave an update in place early: nothing to
    carry); the name when every one returns one name (``return x``), or, in a tuple, for an
    item that is one name in every return (``return False, side``: the array ``side`` is
    not copied at the return, nor carried by the loops around it); else None. (Nothing runs
    after a return, so the name holds at the end what it held there.)"""
    returns = [n for n in walk_scope(body) if isinstance(n, ast.Return)]
    if all(_none(r.value) for r in returns):
        return 0
    named = always_exits(body) and not any(_none(r.value) for r in returns)
    shapes = [_shape(r.value, named) for r in returns if not _none(r.value)]
    common = shapes[0]
    for other in shapes[1:]:
        common = _meet(common, other)
    return common if isinstance(common, (tuple, str)) else None


def _shape(value, named):
    """None for a value, a name's id for a name (when ``named``), or per item of a tuple
    written out its own shape."""
    if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return tuple(_shape(e, named) for e in value.elts)
    return value.id if named and isinstance(value, ast.Name) else None


def _meet(a, b):
    """The structure two returns share: a value where they differ."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(_meet(x, y) for x, y in zip(a, b))
    return a if isinstance(a, str) and a == b else None


def _leaves(value, shape) -> list:
    """The items of ``value`` down to ``shape``'s values, in order (of ``value`` None:
    as many Nones)."""
    if shape is None:
        return [value]
    if isinstance(shape, str):      # (the name itself returned: nothing stored)
        return []
    return [leaf for k, sub in enumerate(shape)
            for leaf in _leaves(None if value is None else value.elts[k], sub)]


def _store(ret, parts, value, s) -> list:
    """``return value`` as assignments: to ``ret``, or item by item (a tuple, which a
    compiled branch cannot carry, is carried as its items; a tuple in it too)."""
    if parts is None:
        return [set_location(assign(ret, value or ast.Constant(None)), s)]
    if parts == 0 or isinstance(parts, str):
        return []
    if _none(value):        # every item None at once (``x_0 = x_1 = None``)
        n = len(_leaves(None, parts))
        return [set_location(ast.Assign(targets=[name_node(f"{ret}_{k}", store=True)
                                                 for k in range(n)],
                                        value=ast.Constant(None)), s)]
    return [set_location(assign(f"{ret}_{k}", v), s)
            for k, v in enumerate(_leaves(value, parts))]


def _result(ret, parts):
    if parts == 0:
        return ast.Constant(None)
    if isinstance(parts, str):
        return name_node(parts)
    if parts is None:
        return name_node(ret)
    count = [0]

    def build(shape):
        if shape is None:
            count[0] += 1
            return name_node(f"{ret}_{count[0] - 1}")
        if isinstance(shape, str):
            return name_node(shape)
        return ast.Tuple(elts=[build(sub) for sub in shape], ctx=ast.Load())
    return build(parts)
