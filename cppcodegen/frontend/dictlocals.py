"""A dict of the function's own read and written at constant keys, as one name per key:
``p = {"w": w0, "b": 0.0}`` (or ``p = dict(params)``) then ``p["w"] = p["w"] - lr * g`` in
a training loop.

A loop body that stores into a dict changes a Python container, which compiled code does
not do (``containers.py``), so such a loop was refused. Before the function is converted
(``capture.convert``), a local name bound once, at the top of the function, to a dict
display with constant string keys or to a copy of a dict (``dict(x)``, ``{**x}``; not
``x.copy()``, which may copy an array), and otherwise used only as ``p["key"]`` (read, assigned, updated in place) or
returned (alone or in a tuple or list), becomes a name per key, ``__ccg_d_p_key``; a
return builds the dict again, its keys in Python's order (the display's or the copied
dict's first, then keys first stored later). A copy's keys are read from the copied dict
where it is made (``x.get(key, <missing>)``), and reading a key it did not have raises
Python's KeyError where Python would (``__ccg.dict_item``). Any other use of the name
(passing it on, iterating it, ``in``, a key that is not a constant, ``del``) leaves the
function as it is.
"""
from __future__ import annotations

import ast
import copy

from .astutil import name_node, set_location, walk_scope

def scalarize(fdef, ops_name: str, params):
    """Rewrite the dicts of ``fdef`` that qualify (module docstring), in place."""
    for stmt in list(fdef.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id not in params:
            name = stmt.targets[0].id
            made = _made(stmt.value)
            if made is not None and _uses_ok(fdef, name, stmt):
                _rewrite(fdef, stmt, name, made, ops_name)


def _made(value):
    """(display keys, display values, copied expression) of a dict made fresh, or None."""
    if isinstance(value, ast.Dict):
        if all(k is None for k in value.keys) and len(value.keys) == 1:
            return [], [], value.values[0]                              # {**x}
        if all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            return [k.value for k in value.keys], list(value.values), None
        return None
    if isinstance(value, ast.Call) and not value.keywords and len(value.args) == 1 and \
            isinstance(value.func, ast.Name) and value.func.id == "dict":
        return [], [], value.args[0]                                    # dict(x)
    return None         # (not ``x.copy()``: x may be an array)


def _key(node):
    s = node.slice
    return s.value if isinstance(s, ast.Constant) and isinstance(s.value, str) else None


def _uses_ok(fdef, name, made_at) -> bool:
    if not any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and
               n.value.id == name and _key(n) is not None for n in walk_scope(fdef.body)):
        return False                    # (no item read or written: nothing to gain)
    parents = {}
    for node in walk_scope(fdef.body):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(fdef):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                             ast.ClassDef)) and node is not fdef and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
            return False                # (a closure reads it)
    for node in walk_scope(fdef.body):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(id(node))
        if parent is made_at:
            continue
        if isinstance(parent, ast.Subscript) and parent.value is node and \
                _key(parent) is not None and not isinstance(parent.ctx, ast.Del):
            continue
        while isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            parent = parents.get(id(parent))
        if isinstance(parent, ast.Return) and isinstance(node.ctx, ast.Load):
            continue
        return False
    return True


def _rewrite(fdef, made_at, name, made, ops_name):
    keys, values, source = made
    local = {}

    def var(key):
        if key not in local:
            local[key] = f"__ccg_d_{name}_{len(local)}"
        return local[key]
    stored = []                             # keys in the order Python's dict would hold them

    class Items(ast.NodeTransformer):
        def visit_Subscript(self, node):
            self.generic_visit(node)
            if isinstance(node.value, ast.Name) and node.value.id == name:
                key = _key(node)
                if isinstance(node.ctx, ast.Store) and key not in stored:
                    stored.append(key)
                if isinstance(node.ctx, ast.Load) and (source is not None or key not in keys):
                    return ast.copy_location(ast.Call(
                        func=ast.Attribute(value=name_node(ops_name), attr="dict_item",
                                           ctx=ast.Load()),
                        args=[name_node(var(key)), ast.Constant(key)], keywords=[]), node)
                return ast.copy_location(ast.Name(id=var(key), ctx=node.ctx), node)
            return node

        def visit_Return(self, node):
            self.generic_visit(node)
            if node.value is not None:
                node.value = _rebuilt(node.value)
            return node

        def visit_FunctionDef(self, node):
            return node if node is not fdef else self.generic_visit(node)

    def _rebuilt(value):
        if isinstance(value, ast.Name) and value.id == name:
            order = keys + [k for k in stored if k not in keys]
            if source is None:
                return ast.Dict(keys=[ast.Constant(k) for k in order],
                                values=[name_node(var(k)) for k in order])
            present = ast.Call(func=ast.Attribute(value=name_node(ops_name), attr="dict_of",
                                                  ctx=ast.Load()),
                               args=[name_node(f"__ccg_d_{name}_src"),
                                     ast.Tuple([ast.Constant(k) for k in order], ast.Load()),
                                     ast.Tuple([name_node(var(k)) for k in order], ast.Load())],
                               keywords=[])
            return present
        if isinstance(value, (ast.Tuple, ast.List)):
            value.elts = [_rebuilt(e) for e in value.elts]
        return value

    index = fdef.body.index(made_at)
    Items().visit(fdef)
    for k in keys:
        var(k)
    start = []
    if source is None:
        start = [ast.Assign(targets=[ast.Name(id=var(k), ctx=ast.Store())], value=v)
                 for k, v in zip(keys, values)]
        start += [ast.Assign(targets=[ast.Name(id=var(k), ctx=ast.Store())], value=ast.Attribute(
            value=name_node(ops_name), attr="MISSING", ctx=ast.Load())) for k in local
            if k not in keys]           # (stored later, or read where Python's KeyError is)
    else:
        src = f"__ccg_d_{name}_src"
        start = [ast.Assign(targets=[ast.Name(id=src, ctx=ast.Store())], value=copy.deepcopy(
            source))]
        start += [ast.Assign(targets=[ast.Name(id=var(k), ctx=ast.Store())], value=ast.Call(
            func=ast.Attribute(value=name_node(src), attr="get", ctx=ast.Load()),
            args=[ast.Constant(k), ast.Attribute(value=name_node(ops_name), attr="MISSING",
                                                  ctx=ast.Load())], keywords=[]))
            for k in local if k not in keys]
    for s in start:
        ast.copy_location(s, made_at)
        set_location(s, made_at)
    fdef.body[index:index + 1] = start
    ast.fix_missing_locations(fdef)     # (the rebuilt returns: their statement's line)


class _Missing:
    """A key a copied dict did not have (its name's value until one is stored)."""

    def __repr__(self):
        return "<missing key>"


MISSING = _Missing()


def dict_item(value, key):
    """``p[key]``: the key's value, or Python's KeyError where the dict has no such key."""
    if value is MISSING:
        raise KeyError(key)
    return value


def dict_of(source, keys, values) -> dict:
    """The dict again: ``source``'s items (a copy's), then each key's value in order."""
    out = dict(source)
    for k, v in zip(keys, values):
        if v is not MISSING:
            out[k] = v
    return out
