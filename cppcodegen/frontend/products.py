"""Loops over index tuples as nested loops: ``for i, j in np.ndindex(h, w)``, ``for y, x in
itertools.product(range(1, h - 1), range(1, w - 1))``.

Python runs such an iterable by itself (it yields tuples of ints), so a loop over it was
unrolled while tracing, one body per pixel: minutes to refuse a 100x100 image. Before the
function is converted (``capture.convert``), each such ``for`` becomes::

    __ccg_prodN = __ccg.product_iters(<callee>, (<args>), k)
    if __ccg_prodN is None:
        <the loop as it was>              # another callee of that name: as before
    else:
        __ccg_pbrkN = False
        for __ccg_pN_0 in __ccg_prodN[0]:
            for __ccg_pN_1 in __ccg_prodN[1]:
                <target> = (__ccg_pN_0, __ccg_pN_1)
                <body, each own break after __ccg_pbrkN = True>
            if __ccg_pbrkN:
                break

and each ``for`` is then a compiled loop as any other (a ``return`` in the body is one
more break, ``returns.py``). ``product_iters`` decides when the program is traced:
``np.ndindex`` gives a loop range per axis, ``itertools.product`` (no ``repeat=``) its own
iterables, ``range(...)`` among them a compiled loop's range; anything else, None. The
target must be a tuple of ``k`` names (``k`` the axes or iterables); no ``else`` clause
(``astutil.loop_else`` has made those ordinary loops first).
"""
from __future__ import annotations

import ast
import copy
import itertools

import numpy as np

from .astutil import assign, FlagBreaks, name_node, OwnScope, set_location

NESTED = "_ccg_nested"      # (a loop kept as it was: not rewritten again)


def nest(fdef, ops_name: str):
    """Rewrite the loops over index tuples in ``fdef`` (module docstring), in place."""
    count = [0]

    class Loops(OwnScope):
        def visit_For(self, node):
            self.generic_visit(node)
            k = _axes(node)
            if k is None:
                return node
            count[0] += 1
            n = count[0]
            iters, brk = f"__ccg_prod{n}", f"__ccg_pbrk{n}"
            names = [f"__ccg_p{n}_{d}" for d in range(k)]
            kept = copy.deepcopy(node)
            setattr(kept, NESTED, True)
            call = node.iter
            args = [_range_op(a, ops_name) for a in call.args]
            op = ast.Attribute(value=name_node(ops_name), attr="product_iters", ctx=ast.Load())
            head = assign(iters, ast.Call(func=op, args=[
                call.func, ast.Tuple(args, ast.Load()), ast.Constant(k)], keywords=[]))
            body = [ast.Assign(targets=[node.target], value=ast.Tuple(
                [name_node(v) for v in names], ast.Load()))]
            body += FlagBreaks(brk, True).body(node.body)
            for d in reversed(range(k)):
                item = ast.Subscript(value=name_node(iters), slice=ast.Constant(d),
                                     ctx=ast.Load())
                loop = ast.For(target=ast.Name(id=names[d], ctx=ast.Store()), iter=item,
                               body=body, orelse=[], type_comment=None)
                body = [loop]
                if d > 0:           # (the loop around it leaves too)
                    body.append(ast.If(test=name_node(brk), body=[ast.Break()], orelse=[]))
            test = ast.Compare(left=name_node(iters), ops=[ast.Is()],
                               comparators=[ast.Constant(None)])
            choose = ast.If(test=test, body=[kept],
                            orelse=[assign(brk, ast.Constant(False))] + body[:1])
            return [set_location(head, node), set_location(choose, node)]

    Loops(fdef).visit(fdef)


def _axes(node):
    """The number of nested loops ``node`` becomes, or None to keep it."""
    call = node.iter
    if getattr(node, NESTED, False) or node.orelse or not isinstance(call, ast.Call) or \
            call.keywords:
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else None
    target = node.target
    if name not in ("ndindex", "product") or \
            not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) < 2 or \
            any(isinstance(e, ast.Starred) for e in target.elts):
        return None
    return len(target.elts)


def _range_op(a, ops_name: str):
    """An argument of the call: ``range(...)`` as the ops' range (a compiled loop's, for
    bounds known when the program runs)."""
    if isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and a.func.id == "range" \
            and not a.keywords:
        return ast.Call(func=ast.Attribute(value=name_node(ops_name), attr="range_",
                                           ctx=ast.Load()), args=a.args, keywords=[])
    return a


def product_iters(callee, args, k, range_):
    """The iterables of the nested loops standing for ``for ... in callee(*args)``: a range
    (``range_``: a compiled loop's for a size known when it runs) per axis of ``np.ndindex``'s
    shape, ``itertools.product``'s own iterables; None for any other callee or a number of
    axes other than the target's ``k`` (Python's own error comes from the loop as it was)."""
    if callee is np.ndindex:
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        return [range_(d) for d in shape] if len(shape) == k else None
    if callee is itertools.product:
        return list(args) if len(args) == k else None
    return None
