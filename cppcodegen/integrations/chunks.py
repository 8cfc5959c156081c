"""What runs per chunk when a compiled function is called with Dask arrays.

In: pieces of a traced graph and the layers ``cppcodegen.dask`` plans. Out: plain Python
callables Dask ships to its workers -- ``GraphPiece`` (a graph piece replayed with NumPy calls,
so ``cppcodegen.compile`` traces and compiles it per chunk), the task functions (run a kernel on
a chunk with the task's thread count; fold partial results with compiled pairwise combines;
arg-reduction partials with global indices) -- and the client-side helpers that compile every
kernel before the graph is submitted and count compilations. No dask import here: a worker
runs these with NumPy and the compiled kernels alone.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import weakref

import numpy as np

from ..runtime import openmp
from ..runtime.cachedir import MemoDict, clear_on_fresh_cache
from .pickling import is_dynamic
from ..api import CompiledFunction
from ..checking.callback import CompileTrigger, callback_handler
from ..checking.reference import evaluate_node
from ..frontend import signature
from ..ir.graph import postorder
from ..ir.ufuncs import OPS
from ..runtime.extern import fill

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

@contextlib.contextmanager
def task_threads(n: int):
    """Inside: OpenMP parallel regions started by the calling thread use ``n`` threads;
    after: what that thread had before. The nthreads ICV is per thread, so other threads
    (Dask's other tasks) and later calls on this thread are untouched."""
    gomp = openmp.runtime(load=True)
    prev = gomp.omp_get_max_threads() if gomp else n
    if prev != n:
        gomp.omp_set_num_threads(n)
    try:
        yield
    finally:
        if prev != n:
            gomp.omp_set_num_threads(prev)


def _c(b):
    """``b`` C-contiguous (np.ascontiguousarray would turn a 0-d array into 1-d)."""
    return b if b.flags.c_contiguous else np.ascontiguousarray(b)


def _contiguous(blocks):
    return [_c(b) if isinstance(b, np.ndarray) else b for b in blocks]


def _run_block(kernel, nthreads, *blocks):
    with task_threads(nthreads):
        return np.asarray(kernel(*_contiguous(blocks)))


def _run_partial(kernel, nthreads, count, *blocks):
    """A chunk's partial result; for var/std (``count`` given: how to read the number of
    reduced elements off the blocks) the stacked (count, mean, M2)."""
    blocks = _contiguous(blocks)
    with task_threads(nthreads):
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


def _fold(pair, kind, nthreads, x, axis=None, keepdims=True, **kwargs):
    """Combine step: fold the partial results with the compiled pairwise kernel."""
    parts = _flatten(x)
    acc = parts[0]
    with task_threads(nthreads):
        for p in parts[1:]:
            r = pair(_c(acc), _c(p))
            acc = np.stack([np.asarray(v) for v in r], axis=-1) if kind == "m2" else \
                np.asarray(r)
    return acc


def _aggregate(pair, kind, out_dtype, nthreads, x, axis=None, keepdims=False, **kwargs):
    """Aggregate step: the fold, then M2 alone for var/std, the reduced axes dropped."""
    acc = _fold(pair, kind, nthreads, x)
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
_PAIR_KERNELS = clear_on_fresh_cache(MemoDict())     # kernels made here: none outlive
                                                     # a fresh_cache() (their cache dir)


class _TwinMemo(weakref.WeakKeyDictionary):
    def cache_clear(self):
        self.clear()


_TWINS = clear_on_fresh_cache(_TwinMemo())          # compiled function -> its twin


def _pair_kernel(kind, backend="cpp", options=None):
    """The compiled pairwise combine of ``kind``, one per (kind, backend, options)."""
    key = (kind, backend, repr(sorted((options or {}).items())))
    k = _PAIR_KERNELS.get(key)
    if k is None:
        k = _PAIR_KERNELS.setdefault(key, _make_kernel(
            CompiledFunction(_PAIRS[kind], backend, options)))
    return k


def _make_kernel(cf):
    """The per-chunk kernel of ``cf``: itself, or its twin for symbolic sizes."""
    if is_dynamic(cf):
        return cf
    twin = _TWINS.get(cf)
    if twin is None:
        twin = _TWINS[cf] = CompiledFunction(cf.fn, cf.backend, cf.options, dynamic=True)
        twin.__dict__["_ccg_static"] = cf
    return twin


def _prebuild(kernel, arg_shapes, sample_args):
    """Compile ``kernel`` on the client for these argument shapes (None: not an array), so
    workers only load; returns the kernel the tasks must use. Without symbolic sizes: one
    compile per distinct shape tuple, no run; with them: one run on a small sample (per
    pattern of size-1 axes: edge chunks of one element may be specialized). A function that
    cannot be compiled for symbolic sizes falls back to its per-shape twin."""
    if is_dynamic(kernel):
        samples = {tuple(None if sh is None else tuple(1 if s == 1 else min(s, 8) for s in sh)
                         for sh in shapes) for shapes in arg_shapes}
        try:
            for shapes in sorted(samples, key=repr):
                args = [np.zeros(sh, dt) if sh is not None else a
                        for sh, (a, dt) in zip(shapes, sample_args)]
                kernel(*args)
                _cache_first_call(kernel, args)
            return kernel
        except Exception as e:
            static = kernel.__dict__.get("_ccg_static")
            if static is None:
                raise
            import logging
            logging.getLogger("cppcodegen").info(
                "cppcodegen.dask: %s does not compile for symbolic sizes (%s); compiling it "
                "per chunk shape", getattr(kernel, "__name__", kernel), e)
            kernel = static
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
    return kernel


def _cache_first_call(kernel, args):
    """Put in the kernel cache what a fresh process compiles when ``args`` is its first call.
    Here the call may have been served by a variant traced for other sizes (its guards
    admit these: a (1, n0, n1) variant takes a (1, 1, 3) block), but a worker whose first
    task gets such a block traces this size pattern itself; which block a worker gets first
    is up to the scheduler, so every pattern's own variant must be a cache load."""
    pattern = signature.classify_dynamic(args)
    if not any(d == pattern for d, _, _, _ in kernel.dynamic_variants) and not \
            any(d == pattern for d in kernel.variants):
        CompiledFunction(kernel.fn, kernel.backend, kernel.options, dynamic=True)(*args)


# ----------------------------------------------------------------- build counting

_BUILDS = {"n": 0, "on": False}


def _count_end(trigger, compile_id):
    if trigger is not CompileTrigger.CACHE_LOAD:
        _BUILDS["n"] += 1


def start_counting_builds() -> None:
    """From now on count this process's compilations that were not cache loads."""
    _BUILDS["n"] = 0
    if not _BUILDS["on"]:
        callback_handler.register_end_callback(_count_end)
        _BUILDS["on"] = True


def builds_counted() -> int:
    return _BUILDS["n"]



def _run_arg(kernel, nthreads, pdtype, *blocks):
    with task_threads(nthreads):
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
