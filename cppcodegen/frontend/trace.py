"""Tracing: run the user's NumPy function on proxy arrays and record a Graph.

In: a Python function and a call's arguments (already classified by ``signature.py``).
Out: a ``graph.Graph``: its inputs, the nodes the function computed, its outputs and the
arguments it updated in place. The proxies answer every NumPy operation (``ndarray.py``
installs the interface), so this module only builds the arguments and runs the function.
"""
from __future__ import annotations

import threading

import numpy as np

from ..errors import MixedReturns, TraceError
from ..ir.graph import (EFFECTS, RAISES, RANGES, STEPS, TRYING, flatten_tree, Graph, make_node,
                        map_tree, SliceOut, walk)
from . import ndarray  # noqa: F401  (installs the ndarray interface on Proxy)
from . import pymath  # noqa: F401  (math.sqrt & co. of traced values during traces)
from . import scipy_stats  # noqa: F401  (scipy.stats.norm.cdf & co., once scipy is loaded)
from . import polynomials  # (np.polynomial's evaluators, once numpy.polynomial is loaded)
from . import containers, creation, printing, replace
from .capture import UNDEFINED
from .carried import SEEN_UPDATES
from .counted import count_order, SELECTED
from .dataslice import PendingSlice
from .listbuffer import ListBuffer
from .externs import TraceState
from .proxy import Proxy, size_operand, wrap
from .random import RandomState, TracedGenerator
from .iteration import traced_sizes
from .sizes import current_env, input_shape, shape_env, symbolic


TRACE_LOCK = threading.RLock()

def budgeted(fn, arg_specs, args, budget: int):
    """``trace`` of a function whose loops Python runs (no source to capture them from),
    stopped past ``budget`` operations: a loop of 10^6 trips would trace for hours."""
    from ..ir.graph import NODE_BUDGET, NODES_MADE
    saved = NODE_BUDGET[0]
    NODE_BUDGET[0] = (NODES_MADE[0] + budget, (
        f"the source of {getattr(fn, '__qualname__', 'the function')} is not available, so "
        f"its loops run in Python while tracing, one step per iteration, and its trace "
        f"passed {budget} operations; define it in a file to compile its loops as loops"))
    try:
        return trace(fn, arg_specs, args)
    finally:
        NODE_BUDGET[0] = saved


def trace(fn, arg_specs, args):
    """Run ``fn`` on proxies. ``arg_specs`` come from signature.classify(); returns a Graph."""
    inputs, call_args, hints = [], [], {}
    env = None
    TRYING.clear()          # (the user's try statements: trying.py)
    if any(spec[0] == "darray" for spec in arg_specs):
        env = symbolic().ShapeEnv(hints)
    for i, (spec, value) in enumerate(zip(arg_specs, args)):
        kind = spec[0]
        if kind in ("array", "darray"):
            shape = value.shape if kind == "array" else input_shape(spec, value, hints)
            node = make_node("input", (), shape, value.dtype, "", index=i)
            inputs.append(node)
            arg = wrap(node)
            arg.arg = i             # the caller's array: in-place updates are written back
            call_args.append(arg)
        elif kind == "scalar":
            dt = np.dtype(spec[1])
            node = make_node("scalar", (), (), dt, "", index=i)
            inputs.append(node)
            call_args.append(wrap(node, weak=spec[2], scalar=True))     # (not a 0-d array)
        elif kind == "generator":
            call_args.append(TracedGenerator(i))
        else:
            call_args.append(value)
    if env is not None:
        env.hints.update(hints)
        traced_sizes(symbolic())    # (a size used as a number: a traced value)
    inputs_by_arg = {n.attr("index"): n for n in inputs if n.op == "input"}
    polynomials.wanted(fn)
    with TRACE_LOCK, np.errstate(all="ignore"), shape_env(env), replace.replaced():
        RandomState.slots, RandomState.seeded = 0, None
        TraceState.args = args
        TraceState.inputs = inputs      # (their shapes: a work list's room, worklists.py)
        EFFECTS.clear()
        SEEN_UPDATES.clear()
        STEPS.clear()
        RAISES.clear()
        RANGES.clear()
        printing.reset()
        creation.SIZE_CHECKS.clear()
        SELECTED.clear()
        listed = {}             # a list a compiled loop appended to: its array, made a list

        def as_list(b):
            p = b.traced_array(listed=True)
            if isinstance(p, PendingSlice):     # (the items of a list filled under a branch)
                p.listed = b.python
            listed[id(p)] = b.python
            return p
        callers = containers.snapshot(args)     # (the caller's lists: never changed)
        try:
            try:
                result = map_tree(fn(*call_args), as_list, leaf_type=ListBuffer)
            except MixedReturns as e:
                raise MixedReturns(f"{_returns_of(fn)}: {e}") from None
            finally:
                changed = containers.undo_changes(callers)
            if changed:
                raise containers.changed_argument(fn, args, changed[0][0])
            result = map_tree(result, PendingSlice.output, leaf_type=PendingSlice)
            for p in flatten_tree(result, leaf_type=Proxy):
                p.node                  # (a lazy x[mask] returned: computed while the
                                        # call's values are at hand)
            if env is None and current_env() is not None and (current_env().values or
                                                              current_env().counts):
                env = current_env()     # integer arguments became sizes (``range(n)``), or
                                        # counts of the values did (``x[mask]``)
        finally:
            RandomState.slots = None
            TraceState.args = None
    # an argument updated in place: its final value is written into the caller's array;
    # the argument itself returned is the caller's array (as NumPy returns it)
    mutations = [(p.arg, p.node) for p in call_args
                 if isinstance(p, Proxy) and p.arg is not None and p.node is not inputs_by_arg[p.arg]]
    if env is not None:         # a symbolic size returned: computed at run time (int64)
        result = map_tree(result, lambda d: size_operand(d.expr), leaf_type=symbolic().SymInt)
    outputs = map_tree(result, lambda p: inputs_by_arg[p.arg] if p.arg is not None else p.node,
                       leaf_type=Proxy)
    _check_outputs(result, fn)
    leaves = flatten_tree(outputs)
    flat = flatten_tree(result, leaf_type=Proxy)    # (the result's leaves, in tree order)
    # a weak 0-d value is a Python number in the plain function (``c = 0; c += 1``, a loop
    # index, ``len(x[mask])``): returned as one, not as a NumPy scalar
    python_leaves = tuple(k for k, p in enumerate(flat)
                          if p.weak and not p.node.shape and p.arg is None
                          and p.dtype.kind in "bifc")
    array_leaves = tuple(k for k, p in enumerate(flat)
                         if isinstance(p, Proxy) and not p.node.shape and not p.scalar
                         and not p.weak and p.arg is None and p.node.op != "scalar")
    list_leaves = tuple((k, listed[id(p)]) for k, p in
                        enumerate(flat) if id(p) in listed)
    python_flags = tuple((k, p.pyflag.node) for k, p in  # (a Python number on some paths)
                         enumerate(flat)
                         if isinstance(p, Proxy) and p.pyflag is not None and p.arg is None
                         and k not in python_leaves and not p.node.shape)
    int_flags = tuple((k, p.intflag.node) for k, p in  # (a Python int on some paths)
                      enumerate(flat)
                      if isinstance(p, Proxy) and p.intflag is not None and p.arg is None
                      and not p.node.shape)
    none_flags = tuple((k, p.noneflag.node) for k, p in     # (None on some paths)
                       enumerate(flat)
                       if isinstance(p, Proxy) and p.noneflag is not None)
    if isinstance(result, tuple) and all(getattr(p, "none_whole", False) for p in
                                         flat):
        none_flags = none_flags[:1] and ((-1, none_flags[0][1]),)  # (the tuple as a whole)
    effects, EFFECTS[:] = list(EFFECTS), []
    roots = leaves + [n for _, n in mutations] + \
        [n for _, n in python_flags + int_flags + none_flags] + inputs + effects
    counts = env.counts if env is not None else {}
    nodes = count_order(roots, counts)
    mine = {id(n) for n in nodes}
    steps, STEPS[:] = [n for n in STEPS if id(n) in mine], []
    if len(steps) > 1:      # in the order Python runs them (``assert k > 0`` before a loop
        nodes = count_order(steps + roots, counts)      # whose step is k)
    constants = {n.attr("array").key: n.attr("array").array for n in walk(nodes)
                 if n.op == "constant"}
    graph = Graph(inputs=inputs, nodes=nodes, outputs=outputs, leaves=leaves, constants=constants,
                  mutations=mutations, python_leaves=python_leaves,
                  array_leaves=array_leaves, list_leaves=list_leaves, raises=tuple(RAISES),
                  ranges=tuple(sorted(set(RANGES))),
                  python_flags=python_flags, int_flags=int_flags, none_flags=none_flags)
    if env is not None:
        graph.hints, graph.guards = env.hints, tuple(env.guards)
        graph.values = tuple((s.name, i) for s, i in env.values.items())
    return graph


def _check_outputs(result, fn):
    ok = (Proxy, np.ndarray, np.generic, int, float, complex, bool, str, type(None))
    if isinstance(result, dict):
        for v in result.values():
            _check_outputs(v, fn)
    elif isinstance(result, (tuple, list)):
        for v in result:
            _check_outputs(v, fn)
    elif isinstance(result, SliceOut):  # out[:k]: its array and bounds (checked above)
        pass
    elif result is UNDEFINED:
        raise TraceError(f"{_returns_of(fn)}: the compiled function returns values of "
                         "different kinds on "
                         "different paths (None or a tuple on one, a number on another: "
                         "return one kind, e.g. (-1, np.nan) for 'not found'), an array whose "
                         "shape is known only at run time (its length is a slice's whose "
                         "bounds come from array values), or a name that was never bound; a "
                         "result's shape must follow from the arguments' shapes and integer "
                         "arguments")
    elif printing.formatted(result):
        printing.refuse_formatted("a returned string", _returns_of(fn))
    elif not isinstance(result, ok):
        raise TraceError(f"the compiled function returned a {type(result).__name__}; "
                         "return arrays, scalars, or tuples/lists/dicts of them")


def _returns_of(fn) -> str:
    """The user's function and the lines of its ``return`` statements, for a message."""
    import ast
    import inspect
    import textwrap
    original = getattr(fn, "__wrapped__", fn)
    name = getattr(original, "__qualname__", "the function")
    try:
        lines, start = inspect.getsourcelines(original)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return name
    at = sorted({start + n.lineno - 1 for n in ast.walk(tree) if isinstance(n, ast.Return)})
    where = f"{inspect.getsourcefile(original)}:{start}"
    return f"{name} (at {where}; its returns at lines {', '.join(map(str, at)) or 'none'})"
