"""Compiled functions on Dask arrays: Dask arrays in, Dask arrays out.

In: a ``CompiledFunction`` called with ``dask.array.Array`` arguments (NumPy arrays and
scalars may be mixed in). Out: ``dask.array.Array`` results built from compiled per-chunk
kernels. ``dask`` is imported only here, and this module only when such a call happens.

How a call is planned (``plan``): the function is traced once on the global shapes (no data
is read), and every axis of every graph node is tied, by a union-find over the input axes,
to the input axes it runs along (``_Axes``). Then:

* no reduction runs along a chunked axis: one ``blockwise`` layer runs the kernel per chunk
  (elementwise and broadcasting graphs, softmax/layer norm over an unchunked axis, ...);
* reductions along chunked axes whose results are not broadcast back against those axes
  (sum, mean, max, min, prod, any, all, var, std, followed by any elementwise work): a
  ``blockwise`` layer computes each chunk's partial result with a compiled kernel,
  ``dask.array.reduction`` folds the partials with compiled combine kernels (var/std with
  Chan's parallel formula on (count, mean, M2) in float64), and a last ``blockwise`` layer
  runs what follows the reductions;
* a reduction broadcast back against its chunked axes (softmax along a chunked axis),
  a reshape that merges a chunked axis, a matrix product's contracted axis, a captured
  constant array, ``arange``: those axes are merged into one chunk first (``rechunk``);
* slicing with offsets along a chunked axis (stencils) needs neighbours: refused with an
  error naming the axis and the depth, and the rechunk that makes it work.

Kernels are specialized on dtype, number of dimensions and layout (blocks are passed
C-contiguous); when ``CompiledFunction`` takes ``dynamic=True`` they are compiled for
symbolic sizes, so edge chunks reuse the same build, otherwise once per distinct chunk
shape. The client compiles every kernel the graph needs before it returns the Dask array,
so workers sharing ``CPPCODEGEN_CACHE_DIR`` only load. Inside a task a kernel runs on
``THREADS_PER_TASK`` OpenMP threads (one: the thread Dask gave the task); cffi releases the
GIL during kernel calls.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import inspect
import itertools
import re
import sys
import threading

import numpy as np

from .errors import UnsupportedError

THREADS_PER_TASK = 1
"""OpenMP threads a kernel uses inside one Dask task (Dask runs one task per thread)."""

__all__ = ["dispatch", "dask_call", "THREADS_PER_TASK", "start_counting_builds",
           "builds_counted", "set_task_threads"]


def dispatch(cf, args):
    """``cf(*args)`` on Dask arrays, or NotImplemented when no argument is one."""
    if "dask" not in sys.modules:           # nobody imported dask: no dask arrays exist
        return NotImplemented
    import dask.array as da
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
    chunked; ``neighbours`` (element, depth, where) the slices with offsets.
    """

    def __init__(self, graph):
        self.parent, self.fixed, self.whole, self.neighbours = {}, set(), set(), []
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
                else:
                    depth = max(start, size - (start + step * (n - 1)) - 1) if n else size
                    self.neighbours.append((E[0][k], depth, node.where))
                    out.append(self.new(fixed=True))
            return out
        if op == "setitem":
            self.whole.update(E[0])
            self.whole.update(E[1])
            return list(E[0])
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


# ----------------------------------------------------------------- replaying graph pieces

class GraphPiece:
    """A Python function that replays part of a traced graph with NumPy calls, so that
    ``cppcodegen.compile`` can trace and compile it for one chunk.

    ``steps``: (node, positions of its inputs among the steps, shape recipe) in order; an
    argument step has node=None and the argument's position as its only input. A shape recipe
    gives each axis a static size or ``(argument, axis)``: the size of that argument's axis,
    so a chunked axis takes the chunk's size. ``tail`` post-processes the last value:
    ('reduce', kind, axes) -> that reduction with keepdims; ('m2', axes) -> (mean, M2) in
    float64. Plain data: it pickles with its compiled function, and hashes by content.
    """

    def __init__(self, name, steps, outs, nargs, tail=None):
        self.piece_steps, self.piece_outs, self.piece_tail = tuple(steps), tuple(outs), tail
        self.__name__ = self.__qualname__ = name
        self.__module__ = __name__
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
             for i in range(nargs)])
        self._key = None

    def __call__(self, *args):
        from .reference import evaluate_node
        from .ufuncs import OPS
        vals = []
        for node, ins, recipe in self.piece_steps:
            if node is None:
                vals.append(args[ins[0]])
                continue
            v = [vals[i] for i in ins]
            op = node.op
            if op == "scalar":
                vals.append(np.asarray(v[0], dtype=node.dtype))
            elif op in ("reshape", "broadcast_to"):
                shape = tuple(args[r[0]].shape[r[1]] if isinstance(r, tuple) else r
                              for r in recipe)
                vals.append(v[0].reshape(shape) if op == "reshape" else
                            np.broadcast_to(v[0], shape))
            elif op == "slice":
                index = tuple(slice(None) if full else
                              slice(s, s + st * n if s + st * n >= 0 else None, st) if n else
                              slice(0, 0) for (s, st, n), full in zip(node.attr("spec"), recipe))
                vals.append(v[0][index])
            elif op == "extern":
                call = node.attr("call")
                from .runtime.extern import fill
                r = call.func(*fill(call.args, v), **fill(call.kwargs, v))
                vals.append(r if call.item is None else r[call.item])
            elif op in OPS:
                r = OPS[op].numpy(*v)
                vals.append(r if r.dtype == node.dtype else r.astype(node.dtype))
            else:
                vals.append(evaluate_node(node, v, args))
        out = [vals[i] for i in self.piece_outs]
        if self.piece_tail is not None:
            return _tail(self.piece_tail, out[0])
        return out[0] if len(out) == 1 else tuple(out)

    def text(self) -> str:
        lines = []
        for n, (node, ins, recipe) in enumerate(self.piece_steps):
            if node is None:
                lines.append(f"{n} = arg{ins[0]}")
            else:
                lines.append(f"{n} = {node.op}{ins}{node.attrs!r}:{node.dtype}{list(node.shape)}"
                             f" {recipe!r}")
        return "\n".join(lines) + f"\nreturn {self.piece_outs} then {self.piece_tail!r}"

    def __dask_tokenize__(self):
        if self._key is None:
            self._key = hashlib.sha256(self.text().encode()).hexdigest()[:32]
        return self._key

    def __repr__(self):
        return f"<graph piece {self.__name__} ({len(self.piece_steps)} steps)>"


def _tail(tail, x):
    if tail[0] == "arg":
        kind, axes, flat = tail[1], tail[2], tail[3]
        extreme = np.max if kind == "argmax" else np.min
        if flat:
            idx = getattr(np, kind)(x.reshape(-1))
            ones = (1,) * x.ndim
            return idx.reshape(ones), extreme(x).reshape(ones)
        return (getattr(np, kind)(x, axis=axes[0], keepdims=True),
                extreme(x, axis=axes[0], keepdims=True))
    if tail[0] == "reduce":
        kind, axes = tail[1], tail[2]
        return getattr(np, kind)(x, axis=axes, keepdims=True)
    axes = tail[1]                                      # ('m2', axes)
    x = x.astype(np.float64)
    mean = np.mean(x, axis=axes, keepdims=True)
    d = x - mean
    return mean, np.sum(d * d, axis=axes, keepdims=True)


def _piece(name, outs, args, axes, chunked, tail=None) -> GraphPiece:
    """Replay ``outs`` from ``args`` (nodes given as arguments, in order)."""
    from .graph import postorder
    argpos = {id(a): p for p, a in enumerate(args)}
    order = postorder(outs, lambda n: () if id(n) in argpos else n.inputs)
    where = {}                  # chunked element -> (argument, axis) holding its chunk size
    for p, a in enumerate(args):
        for k, e in enumerate(axes.of(a) if a.shape else ()):
            if e in chunked and a.shape[k] != 1:
                where.setdefault(e, (p, k))
    steps, pos = [], {}
    for node in order:
        if id(node) in argpos:
            steps.append((None, (argpos[id(node)],), None))
        else:
            elems = axes.of(node)
            if node.op in ("reshape", "broadcast_to"):
                recipe = tuple(where[e] if e in chunked and s != 1 else s
                               for e, s in zip(elems, node.shape))
            elif node.op == "slice":
                recipe = tuple(start == 0 and step == 1 and n == size
                               for (start, step, n), size in zip(node.attr("spec"),
                                                                 node.inputs[0].shape))
            else:
                recipe = None
            steps.append((node, tuple(pos[id(i)] for i in node.inputs), recipe))
        pos[id(node)] = len(steps) - 1
    return GraphPiece(name, steps, [pos[id(o)] for o in outs], len(args), tail)


# ----------------------------------------------------------------- kernels, threads, tasks

_gomp = None
_tls = threading.local()


def set_task_threads(n: int) -> None:
    """Give OpenMP ``n`` threads for parallel regions started by the calling thread (the
    nthreads ICV is per thread: other threads, and the process default, are untouched)."""
    global _gomp
    if getattr(_tls, "n", None) == n:
        return
    if _gomp is None:
        try:
            _gomp = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
        except OSError:
            _gomp = False
    if _gomp:
        _gomp.omp_set_num_threads(ctypes.c_int(n))
    _tls.n = n


def _c(b):
    """``b`` C-contiguous (np.ascontiguousarray would turn a 0-d array into 1-d)."""
    return b if b.flags.c_contiguous else np.ascontiguousarray(b)


def _contiguous(blocks):
    return [_c(b) if isinstance(b, np.ndarray) else b for b in blocks]


def _run_block(kernel, nthreads, *blocks):
    set_task_threads(nthreads)
    return np.asarray(kernel(*_contiguous(blocks)))


def _run_partial(kernel, nthreads, count, *blocks):
    """A chunk's partial result; for var/std (``count`` given: how to read the number of
    reduced elements off the blocks) the stacked (count, mean, M2)."""
    set_task_threads(nthreads)
    blocks = _contiguous(blocks)
    r = kernel(*blocks)
    if count is None:
        return np.asarray(r)
    mean, m2 = np.asarray(r[0]), np.asarray(r[1])
    n = 1
    for c in count:
        n *= blocks[c[0]].shape[c[1]] if isinstance(c, tuple) else c
    return np.stack([np.full_like(mean, n), mean, m2], axis=-1)


def _identity(x, axis=None, keepdims=None, **kwargs):
    return x


def _flatten(x):
    if isinstance(x, list):
        return [y for item in x for y in _flatten(item)]
    return [x]


def _fold(kind, nthreads, x, axis=None, keepdims=True, computing_meta=False, **kwargs):
    parts = _flatten(x)
    set_task_threads(nthreads)
    acc = parts[0]
    pair = _pair_kernel(kind)
    for p in parts[1:]:
        r = pair(_c(acc), _c(p))
        acc = np.stack([np.asarray(v) for v in r], axis=-1) if kind == "m2" else np.asarray(r)
    return acc


def _aggregate(kind, out_dtype, nthreads, x, axis=None, keepdims=False, **kwargs):
    acc = _fold(kind, nthreads, x)
    if kind == "m2":
        acc = acc[..., 2]
    if not keepdims:
        acc = acc.reshape([s for k, s in enumerate(acc.shape) if k not in axis])
    return acc.astype(out_dtype, copy=False)


# the combine steps: a pairwise fold of partial results, compiled like any function
def _pair_sum(a, b):
    return a + b


def _pair_prod(a, b):
    return a * b


def _pair_max(a, b):
    return np.maximum(a, b)         # NaN propagates, as in np.max


def _pair_min(a, b):
    return np.minimum(a, b)


def _pair_any(a, b):
    return a | b


def _pair_all(a, b):
    return a & b


def _pair_m2(a, b):
    """Chan, Golub and LeVeque's parallel update of (count, mean, M2) partials."""
    na, ma, qa = a[..., 0], a[..., 1], a[..., 2]
    nb, mb, qb = b[..., 0], b[..., 1], b[..., 2]
    n = na + nb
    d = mb - ma
    f = nb / n
    return n, ma + d * f, qa + qb + d * d * na * f


_PAIRS = {"sum": _pair_sum, "prod": _pair_prod, "max": _pair_max, "min": _pair_min,
          "any": _pair_any, "all": _pair_all, "m2": _pair_m2}
_PAIR_KERNELS: dict = {}


def _pair_kernel(kind):
    k = _PAIR_KERNELS.get(kind)
    if k is None:
        from .api import CompiledFunction
        k = _PAIR_KERNELS.setdefault(kind, _make_kernel(CompiledFunction(_PAIRS[kind])))
    return k


def _make_kernel(cf):
    """The per-chunk kernel of ``cf``: itself, or its twin for symbolic sizes."""
    from .pickling import is_dynamic, supports_dynamic
    if not supports_dynamic() or is_dynamic(cf):
        return cf
    twin = cf.__dict__.get("_dask_twin")
    if twin is None:
        from .api import CompiledFunction
        twin = cf.__dict__["_dask_twin"] = CompiledFunction(cf.fn, cf.backend, cf.options,
                                                            dynamic=True)
    return twin


def _prebuild(kernel, arg_shapes, sample_args):
    """Compile ``kernel`` on the client for these argument shapes (None: not an array), so
    workers only load. Without symbolic sizes: one compile per distinct shape tuple, no run;
    with them: one run on a small sample."""
    from . import signature
    from .pickling import is_dynamic
    if is_dynamic(kernel):
        shapes = arg_shapes[0]
        args = [np.zeros(tuple(min(s, 8) for s in sh), dt) if sh is not None else a
                for sh, (a, dt) in zip(shapes, sample_args)]
        kernel(*args)
        return
    for shapes in arg_shapes:
        args, specs = [], []
        for sh, (a, dt) in zip(shapes, sample_args):
            if sh is None:
                args.append(a)
                specs.append(signature.classify([a])[0])
            else:
                dt = np.dtype(dt)
                args.append(np.broadcast_to(np.zeros((), dt), sh))
                strides, acc = [], dt.itemsize
                for s in reversed(sh):
                    strides.append(acc)
                    acc *= s
                specs.append(("array", dt, tuple(sh), tuple(reversed(strides))))
        specs = tuple(specs)
        if specs not in kernel.variants:
            kernel._compile(specs, tuple(args))


# ----------------------------------------------------------------- build counting

_BUILDS = {"n": 0, "on": False}


def _count_end(trigger, compile_id):
    from .callback import CompileTrigger
    if trigger is not CompileTrigger.CACHE_LOAD:
        _BUILDS["n"] += 1


def start_counting_builds() -> None:
    """From now on count this process's compilations that were not cache loads."""
    from .callback import callback_handler
    _BUILDS["n"] = 0
    if not _BUILDS["on"]:
        callback_handler.register_end_callback(_count_end)
        _BUILDS["on"] = True


def builds_counted() -> int:
    return _BUILDS["n"]


# ----------------------------------------------------------------- planning a call

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY"


def dask_call(cf, args):
    import dask.array as da
    from . import signature
    from .graph import Node, flatten_tree, map_tree
    from .trace import trace

    # arrays become dask arrays; specs describe the global (C-contiguous) shapes
    arrays, specs, fake = {}, [], []
    for i, a in enumerate(args):
        if isinstance(a, (da.Array, np.ndarray)):
            x = a if isinstance(a, da.Array) else da.from_array(a, chunks=a.shape or ())
            if not (x.dtype.kind in signature.SUPPORTED_KINDS and x.dtype.isnative):
                raise TypeError(f"cppcodegen supports bool, integer and float arrays; argument "
                                f"{i} is a dask array of dtype {x.dtype}")
            arrays[i] = x
            specs.append(("array", x.dtype, tuple(map(int, x.shape)),
                          _c_strides(x.shape, x.dtype)))
            fake.append(np.broadcast_to(np.zeros((), x.dtype), x.shape))
        else:
            specs.append(signature.classify([a])[0])
            fake.append(a)
    specs = tuple(specs)
    name = getattr(cf.fn, "__name__", "fn")
    graph = trace(cf.fn, specs, fake)
    axes = _Axes(graph)
    inputs = {n.attr("index"): n for n in graph.inputs}

    # which elements are chunked; the constraints decide which must become whole
    def chunked_elems():
        out = set()
        for i, x in arrays.items():
            for k, c in enumerate(x.chunks):
                if len(c) > 1:
                    out.add(axes.find(("in", i, k)))
        return out

    def axis_name(e):
        for i, x in arrays.items():
            for k in range(x.ndim):
                if axes.find(("in", i, k)) == e:
                    return f"axis {k} of argument {i}"
        return "an axis"

    def rechunk(elems):
        for i, x in list(arrays.items()):
            spec = {k: -1 for k in range(x.ndim) if axes.find(("in", i, k)) in elems}
            if spec:
                arrays[i] = x.rechunk(spec)

    chunked = chunked_elems()
    for e, depth, where in axes.neighbours:
        if axes.find(e) in chunked:
            raise UnsupportedError(
                f"{name} slices {axis_name(axes.find(e))} with an offset (at {where}): each "
                f"output element needs neighbours up to {depth} elements away, across chunk "
                "boundaries, which cppcodegen cannot compile per chunk yet; make that axis "
                "one chunk first, e.g. x.rechunk({axis: -1})")
    whole = {axes.find(e) for e in axes.whole} | {
        e for e in chunked if any(axes.find(f) == e for f in axes.fixed)}
    rechunk(whole & chunked)
    chunked = chunked_elems()
    leaves = flatten_tree(graph.outputs)

    plan = _reduction_plan(graph, axes, chunked, leaves)
    if plan is not None and plan[0] == "rechunk":
        rechunk(plan[1])
        chunked = chunked_elems()
        plan = None

    letters = {}

    def ind(node):
        out = []
        for e in axes.of(node):
            if e not in letters:
                letters[e] = _LETTERS[len(letters)] if len(letters) < len(_LETTERS) else \
                    f"x{len(letters)}"
            out.append(letters[e])
        return tuple(out)

    nthreads = THREADS_PER_TASK
    results = {}
    if plan is None:
        single = len(leaves) == 1 and isinstance(graph.outputs, Node)
        kernel = None
        if single and leaves[0].op not in ("input", "const") and leaves[0].ndim:
            kernel = _user_kernel(cf, graph, specs, args, arrays, axes, chunked)
        if kernel is not None:
            pairs = [(arrays[i], ind(inputs[i])) if i in arrays else (a, None)
                     for i, a in enumerate(args)]
            results[id(leaves[0])] = _blockwise(kernel, leaves[0], ind(leaves[0]), pairs,
                                                nthreads, name)
        else:
            for leaf in leaves:
                if leaf.op in ("input", "const"):
                    continue
                results[id(leaf)] = _blockwise_piece(
                    f"{name}_block", leaf, graph.inputs, args, arrays, axes, chunked, ind,
                    nthreads)
    else:
        roots = plan[1]
        reduced = {}
        for r in roots:
            reduced[id(r["node"])] = _reduce_root(r, name, graph, args, arrays, axes, chunked,
                                                  ind, nthreads)
        for leaf in leaves:
            if leaf.op in ("input", "const"):
                continue
            if id(leaf) in reduced:
                results[id(leaf)] = reduced[id(leaf)]
                continue
            root_nodes = [r["node"] for r in roots]
            results[id(leaf)] = _post(f"{name}_post", leaf, root_nodes, reduced, graph, args,
                                      arrays, axes, chunked, ind, nthreads)

    def leaf_value(node):
        if id(node) in results:
            return results[id(node)]
        if node.op == "input":
            return arrays[node.attr("index")]
        return np.asarray(node.attr("value"), node.dtype)[()]
    return map_tree(graph.outputs, leaf_value, Node)


def _c_strides(shape, dtype):
    strides, acc = [], np.dtype(dtype).itemsize
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


_SHAPE_SUFFIX = re.compile(r"\[[^\]]*\]$")


def _user_kernel(cf, graph, specs, args, arrays, axes, chunked):
    """``cf`` itself runs per chunk when tracing it on a chunk gives the same graph up to
    sizes (it does not depend on the sizes of chunked axes); else None."""
    from .trace import trace
    if cf.backend not in ("cpp", "numpy", "check"):
        return None
    chunk_specs, fake = [], []
    for i, (s, a) in enumerate(zip(specs, args)):
        if i in arrays:
            shape = tuple(c[0] for c in arrays[i].chunks)
            chunk_specs.append(("array", s[1], shape, _c_strides(shape, s[1])))
            fake.append(np.broadcast_to(np.zeros((), s[1]), shape))
        else:
            chunk_specs.append(s)
            fake.append(a)
    try:
        small = trace(cf.fn, tuple(chunk_specs), fake)
    except Exception:
        return None

    def norm(g):
        return [_SHAPE_SUFFIX.sub("", line) for line in g.text().splitlines()]
    if norm(small) != norm(graph):
        return None
    return _make_kernel(cf)


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


def _blockwise(kernel, out_node, out_ind, pairs, nthreads, name, adjust=None, new_axes=None,
               task=None, dtype=None, extra_ind=()):
    import dask.array as da
    from dask.array.core import unify_chunks
    flat = [v for p in pairs for v in p]
    unified, _ = unify_chunks(*flat)
    samples = [(a, a.dtype if ix is not None else None) for a, ix in pairs]
    _prebuild(kernel, _block_shapes(pairs, unified), samples)
    dtype = np.dtype(dtype or out_node.dtype)
    known = {l for _, ix in pairs if ix is not None for l in ix}
    new = dict(new_axes or {})
    for l, s in zip(out_ind, out_node.shape):
        if l not in known and l not in new:
            new[l] = s
    out_ind = tuple(out_ind) + tuple(extra_ind)
    func = task or functools.partial(_run_block, kernel, nthreads)
    from dask.base import tokenize
    token = tokenize(func, out_ind, adjust, new, *flat)
    return da.blockwise(func, out_ind, *flat, dtype=dtype,
                        meta=np.empty((0,) * len(out_ind), dtype), new_axes=new or None,
                        adjust_chunks=adjust, align_arrays=True, concatenate=True,
                        name=f"ccg-{name}-{token}")


def _blockwise_piece(pname, leaf, arg_nodes, args, arrays, axes, chunked, ind, nthreads):
    from .api import CompiledFunction
    used = _cone_inputs([leaf], ())
    piece = _piece(pname, [leaf], used, axes, chunked)
    kernel = _make_kernel(CompiledFunction(piece))
    pairs = [(arrays[n.attr("index")], ind(n)) if n.op == "input" else
             (args[n.attr("index")], None) for n in used]
    return _blockwise(kernel, leaf, ind(leaf), pairs, nthreads, pname)


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
    from .graph import postorder
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


def _reduce_root(r, name, graph, args, arrays, axes, chunked, ind, nthreads):
    import dask.array as da
    from .api import CompiledFunction
    node, kind, e, red = r["node"], r["kind"], r["input"], tuple(r["axes"])
    if kind in ("argmax", "argmin"):
        return _arg_root(r, name, args, arrays, axes, chunked, ind, nthreads)
    used = _cone_inputs([e], ())
    tail = ("m2", red) if kind == "m2" else ("reduce", kind, red)
    piece = _piece(f"{name}_{kind}_chunk", [e], used, axes, chunked, tail)
    kernel = _make_kernel(CompiledFunction(piece))
    pairs = [(arrays[n.attr("index")], ind(n)) if n.op == "input" else
             (args[n.attr("index")], None) for n in used]
    e_ind = ind(e)
    adjust = {e_ind[a]: 1 for a in red}
    pdtype = np.float64 if kind == "m2" else node.dtype
    extra = ("m2_",) if kind == "m2" else ()
    count = None
    if kind == "m2":                # where each task reads its count of reduced elements
        count = []
        for a in red:
            el = axes.of(e)[a]
            found = [(p, k) for p, (x, ix) in enumerate(pairs) if ix is not None
                     for k, l in enumerate(ix) if l == e_ind[a] and x.shape[k] != 1]
            count.append(found[0] if el in chunked and found else int(e.shape[a]))
        count = tuple(count)
    task = functools.partial(_run_partial, kernel, nthreads, count)
    partials = _blockwise(kernel, e, e_ind, pairs, nthreads, f"{name}_{kind}_chunk",
                          adjust=adjust, new_axes={"m2_": 3} if extra else None, task=task,
                          dtype=pdtype, extra_ind=extra)
    # the combine kernels see partials shaped like a chunk's keepdims result
    nd = e.ndim
    pshapes = set(itertools.product(*[sorted(set(c)) for c in partials.chunks[:nd]]))
    pair = _pair_kernel(kind)
    for sh in sorted(pshapes):
        sh = sh + ((3,) if kind == "m2" else ())
        _prebuild(pair, [(sh, sh)], [(None, pdtype), (None, pdtype)])
    dtype = np.dtype(node.dtype)
    return da.reduction(partials, _identity,
                        functools.partial(_aggregate, kind, dtype, nthreads),
                        combine=functools.partial(_fold, kind, nthreads),
                        axis=red + ((nd,) if kind == "m2" else ()),
                        keepdims=False, dtype=dtype, concatenate=False,
                        meta=np.empty((0,) * node.ndim, dtype), name=f"ccg-{name}-{kind}")


def _arg_root(r, name, args, arrays, axes, chunked, ind, nthreads):
    """argmax/argmin along chunked axes: each chunk's (index, value) with the index made
    global from the chunk's position, then the first extreme wins."""
    import dask.array as da
    from .api import CompiledFunction
    node, kind, e, red, flat = r["node"], r["kind"], r["input"], tuple(r["axes"]), r["flat"]
    used = _cone_inputs([e], ())
    piece = _piece(f"{name}_{kind}_chunk", [e], used, axes, chunked, ("arg", kind, red, flat))
    kernel = _make_kernel(CompiledFunction(piece))
    pairs = [(arrays[n.attr("index")], ind(n)) if n.op == "input" else
             (args[n.attr("index")], None) for n in used]
    e_ind = ind(e)
    pdtype = np.dtype([("idx", np.int64), ("val", e.dtype)])
    task = functools.partial(_run_arg, kernel, nthreads, pdtype)
    partials = _blockwise(kernel, e, e_ind, pairs, nthreads, f"{name}_{kind}_chunk",
                          adjust={e_ind[a]: 1 for a in red}, task=task, dtype=pdtype)
    # the chunks of e along each axis: where each block starts
    from dask.array.core import unify_chunks
    unified, _ = unify_chunks(*[v for p in pairs for v in p])
    chunks = tuple(unified[l] if e.shape[k] != 1 else (1,) for k, l in enumerate(e_ind))
    partials = partials.map_blocks(_arg_offsets, chunks, tuple(e.shape), red, flat,
                                   dtype=pdtype, meta=np.empty((0,) * e.ndim, pdtype))
    return da.reduction(partials, _identity, functools.partial(_arg_aggregate, kind),
                        combine=functools.partial(_arg_fold, kind), axis=red, keepdims=False,
                        dtype=pdtype, concatenate=False,     # the steps' dtype; the result's:
                        meta=np.empty((0,) * node.ndim, np.int64), name=f"ccg-{name}-{kind}")


def _run_arg(kernel, nthreads, pdtype, *blocks):
    set_task_threads(nthreads)
    idx, val = kernel(*_contiguous(blocks))
    idx = np.asarray(idx)
    out = np.empty(idx.shape, pdtype)
    out["idx"], out["val"] = idx, val
    return out


def _arg_offsets(p, chunks, shape, red, flat, block_info=None):
    loc = block_info[0]["chunk-location"]
    starts = [sum(c[:j]) for c, j in zip(chunks, loc)]
    p = p.copy()
    if flat:
        local = np.unravel_index(p["idx"], tuple(c[j] for c, j in zip(chunks, loc)))
        p["idx"] = np.ravel_multi_index(tuple(i + s for i, s in zip(local, starts)), shape)
    else:
        p["idx"] += starts[red[0]]
    return p


def _arg_fold(kind, x, axis=None, keepdims=True, **kwargs):
    parts = _flatten(x)
    acc = parts[0].copy()
    nan = acc.dtype["val"].kind == "f"
    for p in parts[1:]:
        a, b = acc["val"], p["val"]
        earlier = p["idx"] < acc["idx"]
        better = (b > a if kind == "argmax" else b < a) | ((b == a) & earlier)
        if nan:                         # the first NaN wins, as in NumPy
            an, bn = np.isnan(a), np.isnan(b)
            better = np.where(an, bn & earlier, bn | better)
        acc[better] = p[better]
    return acc


def _arg_aggregate(kind, x, axis=None, keepdims=False, **kwargs):
    acc = _arg_fold(kind, x)["idx"]
    if not keepdims:
        acc = acc.reshape([s for k, s in enumerate(acc.shape) if k not in axis])
    return acc


def _cone_inputs(outs, stop_ids):
    """The input and scalar nodes ``outs`` read (not looking past ``stop_ids``)."""
    from .graph import postorder
    cone = postorder(outs, lambda n: () if id(n) in stop_ids else n.inputs)
    return sorted((n for n in cone if n.op in ("input", "scalar")),
                  key=lambda n: n.attr("index"))


def _post(pname, leaf, root_nodes, reduced, graph, args, arrays, axes, chunked, ind,
          nthreads):
    from .api import CompiledFunction
    from .graph import postorder
    rid = {id(n) for n in root_nodes}
    cone = postorder([leaf], lambda n: () if id(n) in rid else n.inputs)
    used_roots = [n for n in cone if id(n) in rid]
    used_inputs = _cone_inputs([leaf], rid)
    piece = _piece(pname, [leaf], used_roots + used_inputs, axes, chunked)
    kernel = _make_kernel(CompiledFunction(piece))
    pairs = [(reduced[id(n)], ind(n)) for n in used_roots]
    pairs += [(arrays[n.attr("index")], ind(n)) if n.op == "input" else
              (args[n.attr("index")], None) for n in used_inputs]
    return _blockwise(kernel, leaf, ind(leaf), pairs, nthreads, pname)
