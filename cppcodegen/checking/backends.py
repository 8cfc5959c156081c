"""Backends: what ``compile(fn, backend=...)`` turns a call signature into.

In: a backend name. Out: the registered backend function, called once per new input
signature as ``backend(fn, specs, args, opts, compilation)`` and returning a *variant*: a
callable ``variant(args) -> output tree``. ``specs`` are the guards of
``signature.classify(args)`` (the compiled function keeps one variant per distinct specs, so
every backend gets the same guards), ``opts`` the resolved ``config.Options`` and
``compilation`` the ``callback.Compilation`` in flight (set ``compilation.trigger =
CompileTrigger.CACHE_LOAD`` when nothing was compiled).

Register your own with the decorator::

    @cppcodegen.register_backend("trace_only")
    def trace_only(fn, specs, args, opts, compilation):
        from cppcodegen.frontend.trace import trace  # heavy imports inside: paid on first use
        graph = trace(fn, specs, args)
        return lambda args: print(graph)

Built in: ``cpp`` (the C++ pipeline, registered by ``api.py``, which holds the driver),
``numpy`` (runs the traced graph with the NumPy
reference interpreter, node by node, loops and branches as Python runs them) and ``check`` (runs ``cpp`` with intermediate hooks
and the reference side by side; raises ``CheckError`` on the first diverging buffer). A
backend's heavy imports happen inside its function, so ``import cppcodegen`` loads none of them.
"""
from __future__ import annotations

import threading

import numpy as np

from ..ir.graph import as_list, map_tree, Node, take_views
from ..runtime.extern import ShapeChanged
from .check import make_check_variant, trace_graph

__all__ = ["register_backend", "list_backends", "lookup_backend"]

_BACKENDS: dict = {}
_lock = threading.Lock()


def register_backend(name=None, *, replace: bool = False):
    """Decorator registering a backend under ``name`` (default: the function's name)."""
    def deco(fn):
        key = name if isinstance(name, str) else fn.__name__
        if not callable(fn):
            raise TypeError(f"backend {key!r} must be callable")
        with _lock:
            if key in _BACKENDS and not replace and _BACKENDS[key] is not fn:
                raise ValueError(f"a cppcodegen backend named {key!r} is already registered; "
                                 "pass replace=True to override it")
            _BACKENDS[key] = fn
        return fn
    if callable(name):                      # bare @register_backend
        return deco(name)
    return deco


def list_backends() -> list:
    """Names of the registered backends, sorted."""
    with _lock:
        return sorted(_BACKENDS)


def lookup_backend(name: str):
    with _lock:
        fn = _BACKENDS.get(name)
    if fn is None:
        raise ValueError(f"unknown cppcodegen backend {name!r}; known backends: "
                         f"{', '.join(list_backends())} (add one with cppcodegen.register_backend)")
    return fn


# ----------------------------------------------------------------- built in

@register_backend("numpy")
def numpy_backend(fn, specs, args, opts, compilation):
    variant = ReferenceVariant(trace_graph(fn, specs, args))
    variant.fallback = fn       # for calls whose data-dependent shapes differ from the traced
    return variant


class ReferenceVariant:
    """Runs one traced graph with the NumPy reference interpreter.

    Results look like the compiled ones: fresh arrays (an input returned as is stays that
    input), 0-d results as NumPy scalars.
    """

    def __init__(self, graph):
        self.graph = graph
        self._wanted = {id(n) for n in graph.leaves if n.op != "input"}   # results to copy
        self._wanted |= {id(n) for _, n in graph.none_flags}     # (None where they are set)

    def __call__(self, args):
        from .reference import run_graph      # lazy: kept out of `import cppcodegen` (import time)
        wanted, values = self._wanted, {}

        def keep(node, value):
            if id(node) in wanted:
                values[id(node)] = np.array(value, dtype=node.dtype)     # a fresh copy
        try:
            run_graph(self.graph, args, on_node=keep)
        except ShapeChanged:            # np.nonzero, x[mask]: traced for other values
            return self.fallback(*args)

        python, count = self.graph.python_leaves, iter(range(len(self.graph.leaves)))
        arrays = set(getattr(self.graph, "array_leaves", ()))
        lists = dict(getattr(self.graph, "list_leaves", ()))
        nones = {k: bool(values[id(n)]) for k, n in self.graph.none_flags}
        if nones.get(-1):
            return None             # (the whole result: frontend/nones.py)

        def leaf(node):             # (leaves in tree order: python_leaves are positions)
            k = next(count)
            if nones.get(k):
                return None
            if node.op == "input":
                return args[node.attr("index")]
            v = values[id(node)]
            if k in python:
                return v.item()
            if k in lists:
                return as_list(v, lists[k])
            return v[()] if v.ndim == 0 and k not in arrays else v
        return take_views(map_tree(self.graph.outputs, leaf, Node))


@register_backend("check")
def check_backend(fn, specs, args, opts, compilation):
    return make_check_variant(fn, specs, args, opts, compilation, lookup_backend("cpp"))
