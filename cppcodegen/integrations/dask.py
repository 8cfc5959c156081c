"""Compiled functions on Dask arrays: Dask arrays in, Dask arrays out.

In: a ``CompiledFunction`` called with ``dask.array.Array`` arguments (NumPy arrays and
scalars may be mixed in). Out: ``dask.array.Array`` results built from compiled per-chunk
kernels. ``dask`` is imported only here, and this module only when such a call happens.

How a call is planned (``dask_call``): the function is traced once on the global shapes (no
data is read), and every axis of every graph node is tied, by a union-find over the input
axes, to the input axes it runs along (``axes._Axes``). Then:

* no reduction runs along a chunked axis: one ``blockwise`` layer runs the kernel per chunk
  (elementwise and broadcasting graphs, softmax/layer norm over an unchunked axis, ...):
  the user's own compiled function when nothing in it depends on the sizes of chunked axes,
  else a piece of the global graph replayed per chunk (``chunks.GraphPiece``);
* reductions along chunked axes whose results are not broadcast back against those axes
  (sum, mean, max, min, prod, any, all, var, std, followed by any elementwise work;
  ``reductions._reduction_plan``): a
  ``blockwise`` layer computes each chunk's partial result with a compiled kernel,
  ``dask.array.reduction`` folds the partials with compiled combine kernels (var/std with
  Chan's parallel formula on (count, mean, M2) in float64), and a last ``blockwise`` layer
  runs what follows the reductions; argmax/argmin carry global indices;
* a reduction broadcast back against its chunked axes (softmax along a chunked axis),
  a reshape that merges a chunked axis, a matrix product's contracted axis, a captured
  constant array, ``arange``: those axes are merged into one chunk first (``rechunk``);
* windows ``x[s:s + n - L]`` along a chunked axis (stencils such as ``x[2:] - x[:-2]``) need
  neighbours: each chunk is extended by the L elements after it (``dask.array.overlap``,
  asymmetric depth, no boundary) and the user's function runs on it, giving back its own
  size (the last chunk L less). Where that cannot work (a reduction along a chunked axis
  too, several outputs, strided slices) the call is refused with an error naming the axis
  and the depth, and the rechunk that makes it work.

Kernels are specialized on dtype, number of dimensions and layout (blocks are passed
C-contiguous); when ``CompiledFunction`` takes ``dynamic=True`` they are compiled for
symbolic sizes, so edge chunks reuse the same build, otherwise once per distinct chunk
shape. The client compiles every kernel the graph needs before it returns the Dask array,
so workers sharing ``CPPCODEGEN_CACHE_DIR`` only load. Inside a task a kernel runs on
``THREADS_PER_TASK`` OpenMP threads (one: the thread Dask gave the task); cffi releases the
GIL during kernel calls. The layers of one call are built by ``layers._Call``; what runs
per chunk lives in ``chunks`` (no dask there).
"""
from __future__ import annotations

import sys

import numpy as np

from .chunks import builds_counted, start_counting_builds, task_threads
from ..ir.graph import Node, flatten_tree, map_tree, SliceOut
from .layers import _Call
from .reductions import _reduction_plan

THREADS_PER_TASK = 1
"""OpenMP threads a kernel uses inside one Dask task (Dask runs one task per thread)."""

__all__ = ["dispatch", "dask_call", "THREADS_PER_TASK", "start_counting_builds",
           "builds_counted", "task_threads"]


def dispatch(cf, args):
    """``cf(*args)`` on Dask arrays, or NotImplemented when no argument is one."""
    if "dask" not in sys.modules:           # nobody imported dask: no dask arrays exist
        return NotImplemented
    import dask.array as da     # lazy: Dask is optional (and slow to import)
    if not any(isinstance(a, da.Array) for a in args):
        return NotImplemented
    return dask_call(cf, args)


def dask_call(cf, args):
    """``cf(*args)`` where some arguments are dask arrays: the output tree with dask arrays."""
    call = _Call(cf, args, THREADS_PER_TASK)
    graph, leaves = call.graph, flatten_tree(call.graph.outputs)
    if flatten_tree(graph.outputs, SliceOut):
        from ..errors import UnsupportedError
        raise UnsupportedError(f"{getattr(cf, '__name__', cf)} returns a slice whose bounds "
                               "come from array values (out[:k]): its length is known only "
                               "when it runs, which Dask's chunks cannot be; call it on "
                               "NumPy arrays")
    call.check_neighbours()
    call.rechunk(call.axes_must_be_whole())
    plan = _reduction_plan(graph, call.axes, call.chunked, leaves)
    if plan is not None and plan[0] == "rechunk":
        call.rechunk(plan[1])
        plan = None
    results = {}
    stencil = call.stencil()
    if stencil:                     # map_overlap: chunks extended by their right neighbours
        out = graph.outputs
        call.align_windows(stencil)     # a window's axis now runs along its input's axis
        ok = (plan is None and isinstance(out, Node)     # one output keeping every such axis
              and _reduction_plan(graph, call.axes, call.chunked, leaves) is None
              and set(stencil) <= set(call.axes.of(out)))
        kernel = call.user_kernel(out, stencil) if ok else None
        if kernel is None:
            call.refuse_stencil(stencil)
        results[id(out)] = call.overlap_layer(kernel, out, stencil)
    elif plan is None:
        kernel = call.user_kernel(graph.outputs)
        if kernel is not None:
            leaf = graph.outputs
            results[id(leaf)] = call.blockwise(kernel, leaf, call.ind(leaf), call.user_pairs())
        else:
            for leaf in leaves:
                if leaf.op not in ("input", "const"):
                    results[id(leaf)] = call.piece_layer(f"{call.name}_block", leaf, ())
    else:
        roots = {id(r["node"]): r for r in plan[1]}
        reduced = {k: call.reduction(r) for k, r in roots.items()}
        for leaf in leaves:
            if leaf.op not in ("input", "const"):
                results[id(leaf)] = reduced.get(id(leaf))
                if results[id(leaf)] is None:
                    results[id(leaf)] = call.piece_layer(f"{call.name}_post", leaf, roots,
                                                         reduced)

    def leaf_value(node):
        if id(node) in results:
            return results[id(node)]
        if node.op == "input":
            return call.arrays[node.attr("index")]
        return np.asarray(node.attr("value"), node.dtype)[()]
    return map_tree(graph.outputs, leaf_value, Node)
