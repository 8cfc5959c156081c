"""Which local lists no one but the function sees: those a compiled loop may keep as arrays.

A loop that appends to a list (``listbuffer.py``) keeps the items in an array and makes the
list only when the function returns it: right only when the list is the function's own
object, reached by its one name. ``out = []`` then ``out.append(v)``, ``np.array(out)``,
``len(out)``, ``out[i]``, ``for v in out``, ``return out`` is; the caller's list
(``def f(x, found)``), a list bound to a second name (``b = a``), stored in a container,
passed to a function of the user's or held by a closure is not: its appends stay Python's.

:func:`private_lists` reads the function's syntax tree once (``rewrite.Converter``).
"""
from __future__ import annotations

import ast
import builtins

# builtins that read a list without keeping it
_READERS = frozenset({"len", "sum", "min", "max", "sorted", "list", "tuple", "enumerate",
                      "zip", "reversed", "any", "all", "float", "int", "abs", "range"})


def private_lists(fdef, params, namespace) -> frozenset:
    """The local names of ``fdef`` bound only to fresh lists (``[]``, ``[...]``, ``list()``)
    and read only where the list cannot escape. ``namespace``: the function's globals (which
    names are NumPy)."""
    bound, bad = set(), set(params)
    parents = {}
    for node in _scope(fdef):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in _scope(fdef):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            bad.update(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                               ast.ClassDef)):
            bad.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))  # (closures)
        elif isinstance(node, ast.Name):
            parent = parents.get(id(node))
            if isinstance(node.ctx, ast.Store):
                value = _assigned(node, parent, parents)
                if value is not None and _fresh_list(value, namespace):
                    bound.add(node.id)
                else:
                    bad.add(node.id)
            elif isinstance(node.ctx, ast.Del) or not _safe_read(node, parent, parents,
                                                                   namespace):
                bad.add(node.id)
    return frozenset(bound - bad)


def _scope(fdef):
    """The nodes of ``fdef``'s body, nested functions' own nodes included (as one node)."""
    stack = list(fdef.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _assigned(node, parent, parents):
    """The expression a name is bound to: ``out = [...]``, or its item of ``a, b = [], []``
    (None for any other binding)."""
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is node:
        return parent.value
    top = parents.get(id(parent))
    if isinstance(parent, ast.Tuple) and isinstance(top, ast.Assign) and \
            len(top.targets) == 1 and top.targets[0] is parent and \
            isinstance(top.value, ast.Tuple) and len(top.value.elts) == len(parent.elts) and \
            not any(isinstance(e, ast.Starred) for e in parent.elts + top.value.elts):
        return top.value.elts[parent.elts.index(node)]
    return None


def _fresh_list(value, namespace) -> bool:
    if isinstance(value, ast.List):
        return True
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and
            value.func.id == "list" and not value.args and not value.keywords and
            namespace.get("list", builtins.list) is builtins.list)


def _safe_read(node, parent, parents, namespace) -> bool:
    """Is this read of a list one that keeps no reference to it?"""
    if isinstance(parent, ast.Attribute):           # only its append or pop (a call)
        return parent.attr in ("append", "pop") and \
            isinstance(parents.get(id(parent)), ast.Call) and parents[id(parent)].func is parent
    if isinstance(parent, (ast.While, ast.If, ast.IfExp)) and parent.test is node or \
            isinstance(parent, (ast.BoolOp, ast.UnaryOp)):     # (its truth: ``while stack:``)
        return True
    if isinstance(parent, ast.Subscript):           # out[i] read, or stored into (a stack's
        return parent.value is node and isinstance(parent.ctx, (ast.Load, ast.Store))  # top)
    if isinstance(parent, (ast.For, ast.comprehension)):
        return parent.iter is node
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
        return True                                 # (a + b: a new list of their items)
    while isinstance(parent, (ast.Tuple, ast.List, ast.Dict)) and \
            not isinstance(getattr(parent, "ctx", None), ast.Store):
        parent = parents.get(id(parent))            # (return out, n; return {"h": out})
    if isinstance(parent, ast.Return):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        return _reader(parent.func, namespace)
    return False


def _reader(func, namespace) -> bool:
    """A call that reads its arguments without keeping them: a builtin of ``_READERS`` or a
    NumPy function (``np.array``, ``np.mean``, ``numpy.asarray``)."""
    if isinstance(func, ast.Name):
        value = namespace.get(func.id, getattr(builtins, func.id, None))
        if func.id in _READERS and value is getattr(builtins, func.id, None):
            return True
        return _numpy(value)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = namespace.get(func.value.id)
        return getattr(module, "__name__", "") in ("numpy", "numpy.linalg", "heapq") and \
            _numpy(getattr(module, func.attr, None))
    return False


def _numpy(value) -> bool:
    """A NumPy function, or ``heapq``'s (``heaps.py``: on a list kept as arrays)."""
    module = getattr(value, "__module__", None) or ""
    return callable(value) and (module in ("numpy", "heapq", "_heapq") or
                                module.startswith("numpy."))
