"""Compiled functions on Dask arrays: Dask arrays in, Dask arrays out.

In: a ``CompiledFunction`` called with ``dask.array.Array`` arguments (NumPy arrays and
scalars may be mixed in). Out: ``dask.array.Array`` results built from compiled per-chunk
kernels. ``dask`` is imported only here, and this module only when such a call happens.

How a call is planned (``dask_call``): the function is traced once on the global shapes (no
data is read), and every axis of every graph node is tied, by a union-find over the input
axes, to the input axes it runs along (``_Axes``). Then:

* no reduction runs along a chunked axis: one ``blockwise`` layer runs the kernel per chunk
  (elementwise and broadcasting graphs, softmax/layer norm over an unchunked axis, ...):
  the user's own compiled function when nothing in it depends on the sizes of chunked axes,
  else a piece of the global graph replayed per chunk (``chunks.GraphPiece``);
* reductions along chunked axes whose results are not broadcast back against those axes
  (sum, mean, max, min, prod, any, all, var, std, followed by any elementwise work): a
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
GIL during kernel calls. What runs per chunk lives in ``cppcodegen.chunks`` (no dask there).
"""
from __future__ import annotations

import functools
import itertools
import sys

import numpy as np

from .chunks import (_aggregate, _arg_aggregate, _arg_fold, _arg_offsets, _fold, _identity,
                     _make_kernel, _pair_kernel, _piece, _prebuild, _run_arg, _run_block,
                     _run_partial, builds_counted, start_counting_builds, task_threads)
from ..errors import UnsupportedError
from ..runtime.cachedir import MemoDict, clear_on_fresh_cache
from ..api import CompiledFunction
from ..frontend import signature
from ..frontend.trace import trace
from ..ir.graph import Node, flatten_tree, map_tree, postorder

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


# ----------------------------------------------------------------- axes of the graph

class _Axes:
    """Which input axes each node axis runs along, and what the graph asks of them.

    ``elem[id(node)]`` lists one union-find element per axis. Elements of the inputs are
    ('in', i, k); others are fresh. ``fixed`` elements hold position-dependent values
    (constant arrays, arange, random draws, extern results, merged reshapes): a chunked
    input axis tied to one must be whole. ``whole`` collects elements that must not be
    chunked; ``neighbours`` (element, depth, where) the strided slices; ``shifts`` the
    windows ``x[s:s + size - L]`` (stencils, run with each chunk's neighbours when chunked).
    """

    def __init__(self, graph):
        self.parent, self.fixed, self.whole, self.neighbours = {}, set(), set(), []
        self.shifts = []        # (input element, output element, start, shrink L, where)
        self.elem = {}
        self._fresh = itertools.count()
        # x.argmax() traces as argmax(x.reshape(-1)): that reshape only numbers positions
        users = graph.users()
        self.flat = {}                  # id(arg reduce over a flattened array) -> the array
        for n in graph.nodes:
            if (n.op == "reduce" and n.attr("kind") in ("argmax", "argmin")
                    and n.inputs[0].op == "reshape" and n.inputs[0].ndim == 1
                    and len(users[id(n.inputs[0])]) == 1):
                self.flat[id(n)] = n.inputs[0].inputs[0]
        flat_reshapes = {id(n.inputs[0]) for n in graph.nodes if id(n) in self.flat}
        for node in graph.nodes:
            if id(node) in flat_reshapes:
                self.elem[id(node)] = [self.new()]
                continue
            self.elem[id(node)] = self._node(node)

    # union-find
    def find(self, e):
        root = e
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while e != root:
            self.parent[e], e = root, self.parent.get(e, e)
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if ra[0] == "in" and rb[0] != "in":
                ra, rb = rb, ra
            self.parent[ra] = rb        # prefer an input element as the root

    def new(self, fixed=False):
        e = ("new", next(self._fresh))
        self.parent[e] = e
        if fixed:
            self.fixed.add(e)
        return e

    def of(self, node) -> list:
        return [self.find(e) for e in self.elem[id(node)]]

    def _node(self, node):
        op, shape, ins = node.op, node.shape, node.inputs
        E = [self.elem[id(i)] for i in ins]
        if op == "input":
            out = [("in", node.attr("index"), k) for k in range(len(shape))]
            for e in out:
                self.parent.setdefault(e, e)
            return out
        if op in ("scalar", "const"):
            return [self.new() for _ in shape]
        if op in ("constant", "iota", "random"):
            return [self.new(fixed=s > 1) for s in shape]
        if op == "scan":            # a running sum needs its whole axis in one chunk
            self.whole.add(E[0][node.attr("axis")])
            return list(E[0])
        if op == "reduce":
            axes = node.attr("axes")
            return [e for k, e in enumerate(E[0]) if k not in axes]
        if op == "transpose":
            return [E[0][p] for p in node.attr("perm")]
        if op == "reshape":
            return self._reshape(ins[0].shape, E[0], shape)
        if op == "broadcast_to":
            out = [self.new() for _ in shape]
            off = len(shape) - len(ins[0].shape)
            for k, s in enumerate(ins[0].shape):
                if s == shape[off + k]:
                    self.union(E[0][k], out[off + k])
            return out
        if op == "slice":
            out = []
            for k, ((start, step, n), size) in enumerate(zip(node.attr("spec"), ins[0].shape)):
                if start == 0 and step == 1 and n == size:
                    out.append(E[0][k])
                elif step == 1 and n > 0:       # a window x[s:s + size - L]: a stencil
                    out.append(self.new())
                    self.shifts.append((E[0][k], out[-1], start, size - n, node.where))
                else:
                    depth = max(start, size - (start + step * (n - 1)) - 1) if n else size
                    self.neighbours.append((E[0][k], depth, node.where))
                    out.append(self.new(fixed=True))
            return out
        if op == "setitem":
            self.whole.update(E[0])
            self.whole.update(E[1])
            return list(E[0])
        if op in ("gather", "scatter"):     # anywhere along the indexed axes: whole arrays
            for e in E:
                self.whole.update(e)
            return [self.new(fixed=True) for _ in shape]
        if op == "extern":
            call = node.attr("call")
            if (getattr(call, "name", "").endswith("matmul") and len(ins) == 2
                    and ins[0].ndim >= 2 and ins[1].ndim >= 2):
                out = self._pointwise(shape[:-2], [(i.shape[:-2], e[:-2]) for i, e in zip(ins, E)])
                self.union(E[0][-1], E[1][-2])
                self.whole.add(E[0][-1])
                return out + [E[0][-2], E[1][-1]]
            for e in E:
                self.whole.update(e)
            return [self.new(fixed=True) for _ in shape]
        # pointwise: ufuncs, cast, where
        return self._pointwise(shape, [(i.shape, e) for i, e in zip(ins, E)])

    def _pointwise(self, shape, operands):
        out = [self.new() for _ in shape]
        for ishape, ie in operands:
            off = len(shape) - len(ishape)
            for k, s in enumerate(ishape):
                if s == shape[off + k]:
                    self.union(ie[k], out[off + k])
        return out

    def _reshape(self, ishape, ie, oshape):
        ik = [k for k, s in enumerate(ishape) if s != 1]
        ok = [k for k, s in enumerate(oshape) if s != 1]
        out = [self.new() for _ in oshape]
        if [ishape[k] for k in ik] == [oshape[k] for k in ok]:
            for a, b in zip(ik, ok):            # only size-1 axes come and go
                self.union(ie[a], out[b])
            return out
        self.whole.update(ie[k] for k in ik)    # a reshape that merges or splits axes
        self.fixed.update(out[k] for k in ok)
        return out


# ----------------------------------------------------------------- planning a call

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY"


def dask_call(cf, args):
    """``cf(*args)`` where some arguments are dask arrays: the output tree with dask arrays."""
    call = _Call(cf, args)
    graph, leaves = call.graph, flatten_tree(call.graph.outputs)
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


class _Call:
    """One call's state: the arguments (arrays as dask arrays), the graph traced on the
    global shapes, its axes, which of them are chunked, and the layers built so far."""

    def __init__(self, cf, args):
        import dask.array as da
        self.cf, self.args, self.name = cf, args, getattr(cf.fn, "__name__", "fn")
        self.nthreads = THREADS_PER_TASK
        self.arrays, specs, fake = {}, [], []
        for i, a in enumerate(args):
            if isinstance(a, (da.Array, np.ndarray)):
                x = a if isinstance(a, da.Array) else da.from_array(a, chunks=a.shape or ())
                if not (x.dtype.kind in signature.SUPPORTED_KINDS and x.dtype.isnative):
                    raise TypeError(f"cppcodegen supports bool, integer and float arrays; "
                                    f"argument {i} is a dask array of dtype {x.dtype}")
                if any(np.isnan(s) for s in x.shape):
                    raise ValueError(f"argument {i} of {self.name} is a dask array of unknown "
                                     "chunk sizes; call x.compute_chunk_sizes() first")
                self.arrays[i] = x
                specs.append(("array", x.dtype, tuple(map(int, x.shape)),
                              _c_strides(x.shape, x.dtype)))
                fake.append(np.broadcast_to(np.zeros((), x.dtype), x.shape))   # no data read
            else:
                specs.append(signature.classify([a])[0])
                fake.append(a)
        self.specs = tuple(specs)
        self.graph = trace(cf.fn, self.specs, fake)
        self.axes = _Axes(self.graph)
        self.inputs = {n.attr("index"): n for n in self.graph.inputs}
        self.letters = {}
        self._chunked()

    # -- which axes are chunked
    def _chunked(self):
        self.chunked = {self.axes.find(("in", i, k)) for i, x in self.arrays.items()
                        for k, c in enumerate(x.chunks) if len(c) > 1}

    def rechunk(self, elems):
        """Make the axes tied to ``elems`` one chunk each."""
        for i, x in list(self.arrays.items()):
            spec = {k: -1 for k in range(x.ndim) if self.axes.find(("in", i, k)) in elems}
            if spec:
                self.arrays[i] = x.rechunk(spec)
        self._chunked()

    def axes_must_be_whole(self):
        ax = self.axes
        return ({ax.find(e) for e in ax.whole} | {
            e for e in self.chunked if any(ax.find(f) == e for f in ax.fixed)}) & self.chunked

    def stencil(self) -> dict:
        """{chunked element: L} for the windows x[s:s + size - L] along chunked axes."""
        out = {}
        for e, _, start, shrink, where in self.axes.shifts:
            e = self.axes.find(e)
            if e in self.chunked:
                out[e] = max(out.get(e, 0), shrink)
                if out[e] != shrink or not 0 <= start <= shrink:
                    self.refuse_stencil({e: max(out[e], shrink)}, where)
        for e, L in out.items():     # every input along e must be the full-length array
            sizes = {x.shape[k] for i, x in self.arrays.items() for k in range(x.ndim)
                     if self.axes.find(("in", i, k)) == e}
            if len(sizes) != 1:
                self.refuse_stencil({e: L})
        return out

    def align_windows(self, stencil):
        for e, f, _, _, _ in self.axes.shifts:
            if self.axes.find(e) in stencil:
                self.axes.union(f, e)

    def refuse_stencil(self, stencil, where=None):
        e, depth = next(iter(stencil.items()))
        where = where or next(w for f, _, _, _, w in self.axes.shifts if self.axes.find(f) == e)
        raise UnsupportedError(
            f"{self.name} slices {self._axis_name(e)} with an offset (at {where}): each output "
            f"element needs neighbours up to {depth} elements away, across chunk boundaries; "
            "cppcodegen runs such stencils with map_overlap only when the function returns "
            "one array and reduces along no chunked axis, which is not the case here; make "
            "that axis one chunk first, e.g. x.rechunk({axis: -1})")

    def overlap_layer(self, kernel, leaf, stencil):
        """The stencil per chunk: every chunk extended by the L elements after it (the
        last one is not), so the function's windows shrink it back to its own size."""
        from dask.array.core import unify_chunks
        from dask.array.overlap import ensure_minimum_chunksize, overlap
        pairs = self.user_pairs()
        _, aligned = unify_chunks(*[v for p in pairs for v in p])
        arrays = {i: a for i, a in enumerate(aligned) if i in self.arrays}
        out_chunks = {}
        for i, x in arrays.items():
            depth, spec = {}, {}
            for k in range(x.ndim):
                L = stencil.get(self.axes.find(("in", i, k)))
                if L:
                    c = ensure_minimum_chunksize(L + 1, x.chunks[k])   # the last one too
                    spec[k], depth[k] = c, (0, L)
                    out_chunks[self.ind(self.inputs[i])[k]] = c[:-1] + (c[-1] - L,)
            if depth:
                x = x.rechunk(spec) if spec else x
                x = overlap(x, depth=depth, boundary={k: "none" for k in depth})
            self.arrays[i] = x
        return self.blockwise(kernel, leaf, self.ind(leaf), self.user_pairs(),
                              adjust=out_chunks)

    def check_neighbours(self):
        for e, depth, where in self.axes.neighbours:
            e = self.axes.find(e)
            if e in self.chunked:
                raise UnsupportedError(
                    f"{self.name} slices {self._axis_name(e)} with an offset (at {where}): each "
                    f"output element needs neighbours up to {depth} elements away, across "
                    "chunk boundaries, which cppcodegen cannot compile per chunk yet; make that "
                    "axis one chunk first, e.g. x.rechunk({axis: -1})")

    def _axis_name(self, e):
        for i, x in self.arrays.items():
            for k in range(x.ndim):
                if self.axes.find(("in", i, k)) == e:
                    return f"axis {k} of argument {i}"
        return "an axis"

    # -- blockwise indices and arguments
    def ind(self, node) -> tuple:
        """The blockwise index of ``node``: one letter per axis element."""
        out = []
        for e in self.axes.of(node):
            if e not in self.letters:
                n = len(self.letters)
                self.letters[e] = _LETTERS[n] if n < len(_LETTERS) else f"x{n}"
            out.append(self.letters[e])
        return tuple(out)

    def pairs(self, nodes, given=None) -> list:
        """(array or value, index) per argument node: inputs, scalars, or reduced results."""
        given = given or {}
        return [(given[id(n)], self.ind(n)) if id(n) in given else
                (self.arrays[n.attr("index")], self.ind(n)) if n.op == "input" else
                (self.args[n.attr("index")], None) for n in nodes]

    def user_pairs(self) -> list:
        return [(self.arrays[i], self.ind(self.inputs[i])) if i in self.arrays else (a, None)
                for i, a in enumerate(self.args)]

    def kernel(self, piece):
        """The compiled function of a graph piece (with the user's backend and options),
        one per piece content in this process."""
        key = (piece.__dask_tokenize__(), self.cf.backend, repr(sorted(self.cf.options.items())))
        found = _PIECE_KERNELS.get(key)
        if found is None:
            found = _PIECE_KERNELS.setdefault(key, _make_kernel(
                CompiledFunction(piece, self.cf.backend, self.cf.options)))
        return found

    def user_kernel(self, out, stencil=None):
        """``cf`` itself runs per chunk when the function returns one array and tracing it on
        a chunk gives the same graph up to sizes (nothing in it depends on the sizes of
        chunked axes); else None (graph pieces replay the global graph instead)."""
        if not isinstance(out, Node) or out.op in ("input", "const") or not out.ndim:
            return None
        chunk_specs, fake = [], []
        for i, (s, a) in enumerate(zip(self.specs, self.args)):
            if i in self.arrays:
                shape = tuple(c[0] + (stencil or {}).get(self.axes.find(("in", i, k)), 0)
                              if len(c) > 1 else c[0]
                              for k, c in enumerate(self.arrays[i].chunks))
                chunk_specs.append(("array", s[1], shape, _c_strides(shape, s[1])))
                fake.append(np.broadcast_to(np.zeros((), s[1]), shape))
            else:
                chunk_specs.append(s)
                fake.append(a)
        try:
            small = trace(self.cf.fn, tuple(chunk_specs), fake)
        except Exception:
            return None
        return _make_kernel(self.cf) if _same_up_to_sizes(small, self.graph) else None

    # -- layers
    def blockwise(self, kernel, out_node, out_ind, pairs, name=None, adjust=None,
                  new_axes=None, task=None, dtype=None, extra_ind=()):
        """One ``blockwise`` layer running ``task`` = (function, extra arguments), called as
        ``function(kernel, nthreads, *extra, *blocks)`` (default: ``kernel`` on the blocks),
        with the kernel compiled here first."""
        import dask.array as da
        from dask.array.core import unify_chunks
        from dask.base import tokenize
        flat = [v for p in pairs for v in p]
        unified, _ = unify_chunks(*flat)
        samples = [(a, a.dtype if ix is not None else None) for a, ix in pairs]
        kernel = _prebuild(kernel, _block_shapes(pairs, unified), samples)
        dtype = np.dtype(dtype or out_node.dtype)
        known = {l for _, ix in pairs if ix is not None for l in ix}
        new = dict(new_axes or {})
        for l, s in zip(out_ind, out_node.shape):
            if l not in known and l not in new:
                new[l] = s                  # an axis no argument has (a broadcast one)
        out_ind = tuple(out_ind) + tuple(extra_ind)
        task_fn, extra = task or (_run_block, ())
        func = functools.partial(task_fn, kernel, self.nthreads, *extra)
        token = tokenize(func, out_ind, adjust, new, *flat)
        return da.blockwise(func, out_ind, *flat, dtype=dtype,
                            meta=np.empty((0,) * len(out_ind), dtype), new_axes=new or None,
                            adjust_chunks=adjust, align_arrays=True, concatenate=True,
                            name=f"ccg-{name or self.name}-{token}")

    def piece_layer(self, pname, leaf, roots=(), reduced=None):
        """``leaf`` computed per chunk from the inputs (and reduced results) it reads."""
        stop = set(roots)
        cone = postorder([leaf], lambda n: () if id(n) in stop else n.inputs)
        used = [n for n in cone if id(n) in stop] + _cone_inputs([leaf], stop)
        piece = _piece(pname, [leaf], used, self.axes, self.chunked)
        return self.blockwise(self.kernel(piece), leaf, self.ind(leaf),
                              self.pairs(used, reduced), pname)

    def reduction(self, r):
        """A reduction along chunked axes: partials per chunk, compiled pairwise combines."""
        import dask.array as da
        node, kind, e, red = r["node"], r["kind"], r["input"], tuple(r["axes"])
        if kind in ("argmax", "argmin"):
            return self.arg_reduction(r)
        used = _cone_inputs([e], ())
        tail = ("m2", red) if kind == "m2" else ("reduce", kind, red)
        pname = f"{self.name}_{kind}_chunk"
        kernel = self.kernel(_piece(pname, [e], used, self.axes, self.chunked, tail))
        pairs, e_ind = self.pairs(used), self.ind(e)
        pdtype = np.dtype(np.float64 if kind == "m2" else node.dtype)
        count = None
        if kind == "m2":            # where each task reads its count of reduced elements
            count = []
            for a in red:
                found = [(p, k) for p, (x, ix) in enumerate(pairs) if ix is not None
                         for k, l in enumerate(ix) if l == e_ind[a] and x.shape[k] != 1]
                chunked = self.axes.of(e)[a] in self.chunked
                count.append(found[0] if chunked and found else int(e.shape[a]))
            count = tuple(count)
        m2 = kind == "m2"
        partials = self.blockwise(
            kernel, e, e_ind, pairs, pname, adjust={e_ind[a]: 1 for a in red},
            new_axes={"m2_": 3} if m2 else None, dtype=pdtype, extra_ind=("m2_",) if m2 else (),
            task=(_run_partial, (count,)))
        # the combine kernels see partials shaped like one chunk's keepdims result
        pair = _pair_kernel(kind, self.cf.backend, self.cf.options)
        for sh in sorted(set(itertools.product(*[sorted(set(c))
                                                  for c in partials.chunks[:e.ndim]]))):
            sh = sh + ((3,) if m2 else ())
            pair = _prebuild(pair, [(sh, sh)], [(None, pdtype), (None, pdtype)])
        dtype = np.dtype(node.dtype)
        return da.reduction(partials, _identity,
                            functools.partial(_aggregate, pair, kind, dtype, self.nthreads),
                            combine=functools.partial(_fold, pair, kind, self.nthreads),
                            axis=red + ((e.ndim,) if m2 else ()), keepdims=False, dtype=dtype,
                            concatenate=False, meta=np.empty((0,) * node.ndim, dtype),
                            name=f"ccg-{self.name}-{kind}")

    def arg_reduction(self, r):
        """argmax/argmin along chunked axes: each chunk's (index, value) with the index made
        global from the chunk's position, then the first extreme wins."""
        import dask.array as da
        from dask.array.core import unify_chunks
        node, kind, e, red, flat = r["node"], r["kind"], r["input"], tuple(r["axes"]), r["flat"]
        used = _cone_inputs([e], ())
        pname = f"{self.name}_{kind}_chunk"
        kernel = self.kernel(_piece(pname, [e], used, self.axes, self.chunked,
                                    ("arg", kind, red, flat)))
        pairs, e_ind = self.pairs(used), self.ind(e)
        pdtype = np.dtype([("idx", np.int64), ("val", e.dtype)])
        partials = self.blockwise(kernel, e, e_ind, pairs, pname,
                                  adjust={e_ind[a]: 1 for a in red}, dtype=pdtype,
                                  task=(_run_arg, (pdtype,)))
        unified, _ = unify_chunks(*[v for p in pairs for v in p])     # where blocks start
        chunks = tuple(unified[l] if e.shape[k] != 1 else (1,) for k, l in enumerate(e_ind))
        partials = partials.map_blocks(_arg_offsets, chunks, tuple(e.shape), red, flat,
                                       dtype=pdtype, meta=np.empty((0,) * e.ndim, pdtype))
        return da.reduction(partials, _identity, functools.partial(_arg_aggregate, kind),
                            combine=functools.partial(_arg_fold, kind), axis=red,
                            keepdims=False, dtype=pdtype,    # the steps' dtype; the result's:
                            meta=np.empty((0,) * node.ndim, np.int64), concatenate=False,
                            name=f"ccg-{self.name}-{kind}")


_PIECE_KERNELS = clear_on_fresh_cache(MemoDict())    # piece content -> its kernel


def _c_strides(shape, dtype):
    strides, acc = [], np.dtype(dtype).itemsize
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


def _same_up_to_sizes(g1, g2) -> bool:
    """The same graph but for sizes: ops, inputs, dtypes and attributes equal, slices
    compared by start, step and distance from the end."""
    if len(g1.nodes) != len(g2.nodes):
        return False
    n1, n2 = g1.names(), g2.names()

    def attrs(n):
        if n.op != "slice":
            return n.attrs
        return tuple((s, st, size - s - st * k) for (s, st, k), size in
                     zip(n.attr("spec"), n.inputs[0].shape))
    for a, b in zip(g1.nodes, g2.nodes):
        if (a.op != b.op or a.dtype != b.dtype or attrs(a) != attrs(b)
                or [n1[id(i)] for i in a.inputs] != [n2[id(i)] for i in b.inputs]):
            return False
    return g1.text().splitlines()[-1] == g2.text().splitlines()[-1]     # the outputs


def _block_shapes(pairs, unified):
    """Every distinct tuple of block shapes the tasks of a blockwise call see (None for
    non-array arguments)."""
    labels = sorted({l for _, ix in pairs if ix is not None for l in ix})
    options = [sorted(set(unified[l])) for l in labels]
    out = []
    for combo in itertools.product(*options):
        size = dict(zip(labels, combo))
        out.append(tuple(None if ix is None else
                         tuple(1 if a.shape[k] == 1 else size[l] for k, l in enumerate(ix))
                         for a, ix in pairs))
    return out


def _cone_inputs(outs, stop_ids):
    """The input and scalar nodes ``outs`` read (not looking past ``stop_ids``)."""
    cone = postorder(outs, lambda n: () if id(n) in stop_ids else n.inputs)
    return sorted((n for n in cone if n.op in ("input", "scalar")),
                  key=lambda n: n.attr("index"))


# ----------------------------------------------------------------- reductions

_KINDS = ("sum", "prod", "max", "min", "any", "all")


def _strip_casts(n):
    while n.op == "cast":
        n = n.inputs[0]
    return n


def _match_m2(node):
    """If ``node`` is the second sum of a traced np.var, return (E, first sum, pattern nodes):
    sum((E - sum(E)/n) ** 2) over the same axes."""
    if node.op != "reduce" or node.attr("kind") != "sum":
        return None
    sq = node.inputs[0]
    if sq.op == "multiply" and sq.inputs[0] is sq.inputs[1]:
        d = sq.inputs[0]
    elif sq.op == "square" or (sq.op in ("power", "float_power") and sq.inputs[1].op == "const"
                               and sq.inputs[1].attr("value") == 2):
        d = sq.inputs[0]
    else:
        return None
    if d.op != "subtract":
        return None
    e, m = d.inputs
    inner = [sq, d]
    while m.op in ("cast", "reshape", "broadcast_to"):
        inner.append(m)
        m = m.inputs[0]
    if m.op != "divide" or m.inputs[1].op != "const":
        return None
    inner.append(m)
    s1 = m.inputs[0]
    while s1.op in ("cast", "reshape"):
        inner.append(s1)
        s1 = s1.inputs[0]
    if (s1.op != "reduce" or s1.attr("kind") != "sum" or s1.attr("axes") != node.attr("axes")
            or _strip_casts(s1.inputs[0]) is not _strip_casts(e)
            or s1.inputs[0].dtype != e.dtype):
        return None
    return e, s1, inner


def _reduction_plan(graph, axes, chunked, leaves):
    """None (no reduction along a chunked axis), ('roots', [root, ...]) or
    ('rechunk', elements) when the reductions cannot be split."""
    def red_input(n):               # (the array reduced, its reduced axes)
        f = axes.flat.get(id(n))
        return (f, tuple(range(f.ndim))) if f is not None else (n.inputs[0], n.attr("axes"))
    creds = [n for n in graph.nodes if n.op == "reduce" and
             any(axes.of(red_input(n)[0])[a] in chunked for a in red_input(n)[1])]
    if not creds:
        return None
    reduced = {axes.of(red_input(n)[0])[a] for n in creds for a in red_input(n)[1]} & chunked
    roots, inner, seen = [], set(), set()
    for n in creds:
        m = _match_m2(n)
        if m is not None:
            e, s1, nodes = m
            roots.append({"node": n, "kind": "m2", "input": e, "axes": n.attr("axes")})
            inner.update(id(x) for x in nodes)
            inner.add(id(s1))
            seen.add(id(n))
    for n in creds:
        if id(n) in seen or id(n) in inner:
            continue
        kind = n.attr("kind")
        if kind not in _KINDS + ("argmax", "argmin"):
            return ("rechunk", reduced)
        e, red = red_input(n)
        roots.append({"node": n, "kind": kind, "input": e, "axes": red,
                      "flat": id(n) in axes.flat})
    root_ids = {id(r["node"]) for r in roots}
    by_id = {id(r["node"]): r for r in roots}
    for leaf in leaves:
        post = postorder([leaf], lambda n: () if id(n) in root_ids else n.inputs)
        # the chunked axes this output's reductions run along must not come back
        gone = {axes.of(by_id[id(n)]["input"])[a] for n in post if id(n) in root_ids
                for a in by_id[id(n)]["axes"]} & chunked
        for n in post:
            if id(n) in root_ids:
                continue
            if id(n) in inner:          # the pattern's nodes serve only the pattern
                return ("rechunk", reduced)
            if any(e in gone for e in axes.of(n)):      # broadcast back over a reduced axis
                return ("rechunk", gone)
    for r in roots:                                     # no reduction feeds another
        pre = postorder([r["input"]], lambda n: n.inputs)
        if any(id(n) in root_ids or (n.op == "reduce" and n in creds) for n in pre):
            return ("rechunk", reduced)
    return ("roots", roots)
