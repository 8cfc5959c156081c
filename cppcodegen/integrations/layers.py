"""The Dask layers of one call: blockwise kernels per chunk, reductions, overlaps, rechunks.

In: a ``CompiledFunction``, the call's arguments (dask arrays, NumPy arrays, scalars) and
the OpenMP threads per task. ``_Call`` traces the function on the global shapes, ties its
axes together (``axes._Axes``), and builds layers on request: ``rechunk`` (axes merged into
one chunk), ``blockwise`` (a compiled kernel per chunk, built here first so workers only
load it), ``piece_layer`` (a piece of the global graph replayed per chunk), ``reduction``
and ``arg_reduction`` (per-chunk partials folded by compiled combine kernels) and
``overlap_layer`` (stencils on chunks extended by their neighbours). Out: dask arrays.
Dask itself is imported inside the methods: this module loads without it.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from ..api import CompiledFunction
from .axes import _Axes
from .chunks import (_aggregate, _arg_aggregate, _arg_fold, _arg_offsets, _fold, _identity,
                     _make_kernel, _pair_kernel, _piece, _prebuild, _run_arg, _run_block,
                     _run_partial)
from ..errors import UnsupportedError
from ..frontend import signature
from ..frontend.trace import trace
from ..ir.graph import Node, postorder
from ..runtime.cachedir import MemoDict, clear_on_fresh_cache

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY"


class _Call:
    """One call's state: the arguments (arrays as dask arrays), the graph traced on the
    global shapes, its axes, which of them are chunked, and the layers built so far."""

    def __init__(self, cf, args, nthreads):
        import dask.array as da
        self.cf, self.args, self.name = cf, args, getattr(cf.fn, "__name__", "fn")
        self.nthreads = nthreads
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
