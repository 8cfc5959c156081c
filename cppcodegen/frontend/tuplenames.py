"""A name only ever bound to tuples of one length becomes one name per element.

``best = (0, 0.0, 1)`` before a search loop and ``best = (j, thr, pol)`` under a branch on
values inside it: a loop or a branch carries numbers and arrays, not tuples, so the name was
refused. Where every binding of a name in the function is ``name = (a, b, c)`` (a tuple
display of the same length, the only target of its assignment), each binding becomes
``name__0, name__1, name__2 = a, b, c`` and each read of the name the tuple
``(name__0, name__1, name__2)``: the same values to Python, and three carried scalars to the
capture. A name bound any other way (a parameter, an unpacking, ``+=``, a loop target, in a
nested function) is left as it is.
"""
from __future__ import annotations

import ast

from .astutil import name_node, set_location, walk_scope


def split(fdef) -> None:
    """Rewrite ``fdef`` in place (see the module docstring). The element names are
    ``name__0``, ...: an error about one names the tuple's name."""
    a = fdef.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}
    lengths: dict = {}
    refused = set(params)
    nodes = list(walk_scope(fdef.body))
    for n in nodes:
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            refused.update(n.names)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            refused.update(x.id for x in ast.walk(n) if isinstance(x, ast.Name))
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Tuple) and \
                not any(isinstance(e, ast.Starred) for e in n.value.elts) and n.value.elts:
            name, k = n.targets[0].id, len(n.value.elts)
            if lengths.setdefault(name, k) != k:
                refused.add(name)
    for n in nodes:                 # every other binding of a name refuses it
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and \
                not _tuple_binding(n, nodes):
            refused.add(n.id)
    taken = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)} | params
    names = {name: k for name, k in lengths.items() if name not in refused and
             not any(f"{name}__{j}" in taken for j in range(k))}
    if names:
        _Rewrite(names).visit(fdef)


def _tuple_binding(target, nodes) -> bool:
    return any(isinstance(n, ast.Assign) and n.targets == [target] and
               isinstance(n.value, ast.Tuple) for n in nodes)


class _Rewrite(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def parts(self, name, store):
        return [name_node(f"{name}__{j}", store) for j in range(self.names[name])]

    def visit_Assign(self, node):
        self.generic_visit(node)
        t = node.targets[0]
        if len(node.targets) == 1 and isinstance(t, ast.Name) and t.id in self.names:
            node.targets = [set_location(ast.Tuple(elts=self.parts(t.id, True),
                                                   ctx=ast.Store()), t)]
        return node

    def visit_Name(self, node):
        if node.id in self.names and isinstance(node.ctx, ast.Load):
            return set_location(ast.Tuple(elts=self.parts(node.id, False), ctx=ast.Load()),
                                node)
        return node

    def visit_FunctionDef(self, node):
        if node is getattr(self, "_root", None):
            return self.generic_visit(node)
        if not hasattr(self, "_root"):
            self._root = node
            return self.generic_visit(node)
        return node                 # (nested scopes: left alone)

    visit_AsyncFunctionDef = visit_FunctionDef
