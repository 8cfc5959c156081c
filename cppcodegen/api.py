"""The public entry points: ``compile``, ``explain`` and the compiled function object.

The driver reads like the pipeline: classify the arguments (guards), trace a Graph, lower it
to loop IR, schedule kernels, generate C++, build (or find) the shared object, load it, run.
``explain`` runs the same stages and hands back every intermediate.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import autotune, autotune_threshold, config
from .checking.backends import lookup_backend, register_backend
from .checking.callback import CompileTrigger, callback_handler
from .checking.check import CheckError, CheckReport
from .frontend import signature
from .errors import DataDependentError, TraceError, UnsupportedError, fall_back
from .frontend.capture import positional
from .frontend.control import trace_function
from .ir.graph import SliceOut
from .variants import (choose_specs, fits, Recompile, RecompileLimitWarning, value_sizes,
                       values_text)

log = logging.getLogger("cppcodegen")
PACKAGE_VERSION = "0.1.0"
INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"
if not (INCLUDE_DIR / "cppcodegen" / "vec.h").exists():        # installed layout
    INCLUDE_DIR = Path(__file__).resolve().parent / "include"


def build_flags(opts: config.Options) -> list:
    """The compiler flags for ``opts``; the ISA part comes from ``runtime.cpu``."""
    from .runtime import cpu
    # -fwrapv: integer overflow wraps as in NumPy; -ffp-contract=off: no FMA contraction, so
    # a*b+c rounds twice as in NumPy; no auto-vectorization: g++ 12 -O3 miscompiles two of
    # our scalar loops (the SLP pass folds (double)(float)x into x; the loop vectorizer sums a
    # reversed-stride double loop wrongly: tests/test_fuzz_regressions.py), and our vector
    # loops are explicit anyway.
    flags = ["-O3", "-std=c++17", "-fopenmp", "-fPIC", "-shared", "-fwrapv",
             "-fno-math-errno", "-ffp-contract=off", "-fno-tree-slp-vectorize",
             "-fno-tree-loop-vectorize",
             "-Wno-unused-variable", "-Wno-psabi"]
    if opts.sanitize:
        # any finding aborts; frame pointers and line tables make the reports readable
        flags += [f"-fsanitize={opts.sanitize}", "-fno-sanitize-recover=all",
                  "-fno-omit-frame-pointer", "-g1"]
    return flags + cpu.isa_flags(opts.resolved_isa())


@dataclass
class Explanation:
    """Every intermediate of one compilation, for people to read."""
    graph: object
    program: object
    kernels: list
    source: str
    signature: list
    command: list = field(default_factory=list)
    cache_paths: list = field(default_factory=list)
    cached: bool = False
    seconds: dict = field(default_factory=dict)
    cdef: str = ""
    plan: object = None
    build: object = None
    recompiles: list = field(default_factory=list)   # the function's Recompile records so far
    choices: list = field(default_factory=list)      # autotune.Choice of each matrix product

    @property
    def num_kernels(self) -> int:
        return len(self.kernels)

    def __str__(self):
        kern = "\n".join([k.describe() for k in self.kernels] +
                         [f"choice: {c}" for c in self.choices])
        return (f"== graph ==\n{self.graph}\n== loop IR ==\n{self.program}\n"
                f"== kernels ({self.num_kernels}) ==\n{kern}\n== C++ ==\n{self.source}\n"
                f"== build ==\n{' '.join(self.command)}\ncache: {self.cache_paths}")


@autotune.tuned
def compile_stages(fn, specs, args, opts: config.Options, load: bool = True):
    """Run the pipeline for one call signature. Returns (Explanation, variant or None).

    A hit in the graph-level cache skips lowering, code generation and the compiler.
    """
    from .runtime import build, cachedir, cpu, graphcache
    times = {}
    t0 = time.perf_counter()
    graph = trace_function(fn, specs, args)
    times["trace"] = time.perf_counter() - t0
    opts = autotune_threshold.resolve(opts, graph)      # a measured parallel_threshold
    cache_dir = Path(config.cache_dir_setting(opts) or cachedir.default_cache_dir())
    key = parts = None
    if load:
        cache_dir = build.cache_root(cache_dir)     # private to this user, not noexec
        key, parts = graphcache.graph_key({
            "graph": graph.text(), "signature": repr(specs), "options": opts.code_key(),
            "isa": cpu.isa_key(opts.resolved_isa()), "flags": build_flags(opts),
            "version": PACKAGE_VERSION, "matmul": autotune.key_part(graph),
            "compiler_source": graphcache.source_stamp(Path(__file__).parent),
            **graphcache.toolchain_parts(opts.cxx, cache_dir, INCLUDE_DIR)})
        entry = graphcache.lookup(cache_dir, key)   # None if it or its kernel is damaged
        if entry is not None:
            log.debug("graph cache hit %s (%s)", key[:16], parts)
            try:
                variant = _variant(entry["so_path"], entry["cdef"], entry["plan"], graph.constants,
                                   specs)
                times["load"] = time.perf_counter() - t0
                return None, variant
            except cachedir.CacheDirError:
                raise
            except Exception as e:      # loads badly though intact: rebuild it
                import warnings
                warnings.warn(f"cppcodegen: cached kernel {entry['so_path']} failed to load "
                              f"({e}); rebuilding", cachedir.CacheWarning, stacklevel=4)
        log.debug("graph cache miss %s (%s) for %s%s", key[:16], parts,
                  getattr(fn, "__qualname__", fn), specs)
    ex = build_stages(fn, graph, specs, opts, cache_dir if load else None, times)
    if not load:
        return ex, None
    try:
        variant = _variant(ex.cache_paths[0], ex.cdef, ex.plan, graph.constants, specs)
    except Exception:
        from .runtime import invalidate
        invalidate(ex.build)
        raise
    graphcache.store(cache_dir, key, {"so_path": ex.cache_paths[0], "cdef": ex.cdef,
                                      "plan": ex.plan, "parts": parts})
    return ex, variant


@autotune.tuned
def build_stages(fn, graph, specs, opts, cache_dir, times) -> Explanation:
    """Lower, schedule, generate and (when ``cache_dir`` is given) build one traced graph."""
    from .backend.program import cdef_for, generate
    from .passes.lower import lower
    from .runtime import compile_cached
    from .passes.schedule import schedule

    for i, s in enumerate(specs):
        if s[0] == "array" and any(st % np.dtype(s[1]).itemsize for st in s[3]):
            raise UnsupportedError(f"argument {i} has strides {s[3]} that are not a multiple of "
                                   "its itemsize; pass np.ascontiguousarray(x)")
    strides = {i: tuple(st // np.dtype(s[1]).itemsize for st in s[3])
               for i, s in enumerate(specs) if s[0] == "array"}
    strides.update({i: _symbolic_strides(n.shape, specs[n.attr("index")][3])
                    for i, n in ((n.attr("index"), n) for n in graph.inputs if n.op == "input")
                    if specs[i][0] == "darray"})
    t0 = time.perf_counter()
    program = lower(autotune.use(graph), strides,       # (symbolic sizes: the traced values)
                    copies=not opts.generate_intermediate_hooks)
    kernels = schedule(program, opts)
    source, sig, steps = generate(program, kernels, opts)
    times["codegen"] = time.perf_counter() - t0
    if opts.debug:
        log.warning("cppcodegen graph of %s:\n%s\nloop IR:\n%s\nC++:\n%s",
                    getattr(fn, "__qualname__", fn), graph, program, source)
    ex = Explanation(graph, program, kernels, source, sig, seconds=times,
                     choices=autotune.current_choices())
    ex.cdef = cdef_for(sig, steps)
    hooked = graph if opts.generate_intermediate_hooks else None
    ex.plan = dataclasses.replace(_plan(program, sig, hooked, graph.raises),
                                  steps=_steps(steps, sig), **_size_plan(specs, graph))
    if cache_dir is None:
        return ex
    t0 = time.perf_counter()
    build = compile_cached(source, name=_safe_name(fn), cache_dir=cache_dir, cxx=opts.cxx,
                           flags=build_flags(opts), include_dir=INCLUDE_DIR, libs=["mvec", "m"],
                           package_version=PACKAGE_VERSION, extra_key={"options": opts.code_key()})
    times["build"] = time.perf_counter() - t0
    ex.command, ex.cached, ex.build = build.command, build.cached, build
    ex.cache_paths = [str(build.so_path), str(build.source_path)]
    if opts.debug:
        log.warning("cppcodegen build (%s): %s", "cached" if build.cached else "compiled",
                    " ".join(build.command))
    return ex


def _symbolic_strides(shape, pattern) -> tuple:
    """A dynamic input's strides in elements: 'c' = contiguous over the (symbolic) inner dims,
    a name = a stride passed at run time, an int = fixed."""
    from .ir.shapes import size_symbol
    out, inner = [], 1
    for size, st in zip(reversed(shape), reversed(pattern)):
        out.append(inner if st == "c" else size_symbol(st) if isinstance(st, str) else st)
        inner = inner * size
    return tuple(reversed(out))


def _size_plan(specs, graph) -> dict:
    """Plan fields of a dynamic variant: where each size/stride name is read, and the guards."""
    if not any(s[0] == "darray" for s in specs) and not graph.values:
        return {}
    from .ir.guardtext import guard_text, pyexpr
    sizes = [(name, i, 0, 2) for name, i in graph.values]
    for i, s in enumerate(specs):
        if s[0] == "darray":
            sizes += [(n, i, d, 0) for d, n in enumerate(s[2]) if isinstance(n, str)]
            sizes += [(n, i, d, 1) for d, n in enumerate(s[3]) if isinstance(n, str) and n != "c"]
    seen = set()
    sizes = [x for x in sizes if not (x[0] in seen or seen.add(x[0]))]
    return {"sizes": tuple(sizes), "guards": tuple(pyexpr(g) for g in graph.guards),
            "traced": tuple(sorted((s.name, int(v)) for s, v in graph.hints.items())),
            "guard_texts": tuple(guard_text(g) for g in graph.guards)}


def _variant(so_path, cdef, plan, constants, specs):
    from .runtime import load_library, make_variant
    lib = load_library(so_path, cdef)
    contiguous = {i: _c_contiguous(s) for i, s in enumerate(specs) if s[0] in ("array", "darray")}
    calls = [st[1] for st in plan.steps if st[0] == "call"]
    fn = lib.lib.ccg_run0 if plan.steps == (("call", 0),) else tuple(
        getattr(lib.lib, f"ccg_run{i}") for i in range(max(calls, default=-1) + 1))
    return make_variant(lib.ffi, fn, plan, constants, contiguous)


def _steps(steps, sig):
    """Codegen's steps with buffer names replaced by positions in the entry arguments."""
    position = {name: n for n, (name, *_) in enumerate(sig)}
    return tuple(st if st[0] == "call" else
                 (st[0], st[1], tuple(position[a] for a in st[2]), position[st[3]], *st[4:])
                 for st in steps)


def _c_contiguous(spec) -> bool:
    _, dt, shape, strides = spec
    if spec[0] == "darray":
        return all(st == "c" or st == 0 for st in strides)
    expected = np.dtype(dt).itemsize
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _safe_name(fn) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in getattr(fn, "__name__", "fn"))[:60] or "fn"


def _plan(program, sig, graph=None, raises=()):
    """The runtime's call plan; with ``graph``, it also lists the buffers to report to the
    intermediate hooks, in stage order, named ``<buffer>:<node label>:<op>``."""
    from .runtime.compiled import Plan
    position = {}
    args = []
    for n, (name, ctype, kind, role) in enumerate(sig):
        position[name] = n
        if role == "size":
            args.append(("size", name))
            continue
        if kind == "scalar":
            index = next(i for s, _, i in program.scalars if s == name)
            tag = "cscalar" if ctype.startswith("ccg::c") else "scalar"     # complex: (re, im)
            args.append(index if isinstance(index, tuple) else (tag, index))  # or ('rng', ...)
            continue
        buf = program.buffers[name]
        if role == "input":
            args.append(("input", buf.arg))
        elif role == "constant":
            args.append(("constant", buf.arg))
        elif any(not isinstance(d, int) for d in buf.shape):      # symbolic sizes
            from .ir.guardtext import pyexpr
            args.append((role, tuple(d if isinstance(d, int) else pyexpr(d) for d in buf.shape),
                         buf.dtype.str))
        else:
            args.append((role, tuple(buf.shape), buf.dtype.str))

    def leaf(x):
        if isinstance(x, tuple) and x and isinstance(x[0], str) and \
                (x[0] in ("buf", "py", "arr") or x[0].startswith("list:")):
            return (x[0], position[x[1]])
        return x
    hooks = ()
    if graph is not None:
        nodes = {label: n for n, label in zip(graph.nodes, (f"%{i}" for i in range(len(graph.nodes))))}
        hooks = tuple((f"{s.name}:{s.nodes}:{_op_name(nodes[s.nodes])}", position[s.name])
                      for s in program.stages if s.name in position and s.nodes in nodes)
    return Plan(tuple(args), _map(program.outputs, leaf), hooks, mutates=program.mutated_args(),
                raises=raises, sites=program.sites)


def _op_name(node) -> str:
    if node.op in ("reduce", "scan", "sort"):   # sum, ...; cumsum, ...; sort, argsort, select
        return ("cum" if node.op == "scan" else "") + node.attr("kind")
    if node.op == "extern":                    # the NumPy function: matmul, sort, ...
        return node.attr("call").name.rsplit(".", 1)[-1]
    return node.op


def _map(tree, fn):
    if isinstance(tree, tuple) and tree and isinstance(tree[0], str):
        return fn(tree)
    if isinstance(tree, SliceOut):
        return tree.mapped(lambda v: _map(v, fn))
    if isinstance(tree, dict):
        return {k: _map(v, fn) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_map(v, fn) for v in tree]
    return tuple(_map(v, fn) for v in tree)


class CompiledFunction:
    """What ``cppcodegen.compile`` returns: one compiled variant per input signature."""

    def __init__(self, fn, backend: str = "cpp", options: dict | None = None,
                 dynamic: bool | None = None):
        if not callable(fn):
            raise TypeError(f"cppcodegen.compile expects a function, got {type(fn).__name__}")
        if dynamic not in (None, True, False):
            raise TypeError(f"cppcodegen.compile: dynamic must be None, True or False, got {dynamic!r}")
        self.fn = positional(fn)    # (keyword-only parameters: after the others, in order)
        self.dynamic, self.backend, self._limit_warned = dynamic, backend, False
        self.dynamic_variants: list = []   # (specs, ((guard text, code), ...), values, variant),
        self.recompiles: list = []         # newest first; why each compile after the first
        self._backend = lookup_backend(backend)
        self.options = dict(options or {})
        config.get_options(self.options)            # validate option names now
        self.variants: dict = {}
        self._fast: dict = {}          # (type, dtype, shape, strides) per argument -> variant
        self._lock = threading.Lock()
        self._sig = inspect.signature(fn)
        self._simple = all(p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty
                           for p in self._sig.parameters.values())
        self._nargs = len(self._sig.parameters)
        params = list(self._sig.parameters.values())
        self._kwonly = tuple(p.name for p in params if p.kind == p.KEYWORD_ONLY)
        # positional calls that leave parameters to their defaults bind without inspect
        # (its bind costs ~20 us a call): the defaults that fill them, in order
        ordered = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                   p.POSITIONAL_OR_KEYWORD)]
        fixed = len(ordered) + len(self._kwonly) == len(params)
        self._required = sum(p.default is p.empty for p in ordered)
        self._filled = tuple(p.default for p in ordered) + tuple(
            p.default for p in params if p.kind == p.KEYWORD_ONLY) if fixed and all(
            p.default is not p.empty for p in params[self._required:]) else None
        self._layout_key = None     # chosen by the first call (its Python floats: by type)
        functools.update_wrapper(self, fn)

    def _bind(self, args, kwargs):
        if not kwargs and self._simple and len(args) == self._nargs:
            return args
        if not kwargs and self._filled is not None and \
                self._required <= len(args) <= self._nargs - len(self._kwonly):
            return args + self._filled[len(args):]
        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()
        if self.fn is not self.__wrapped__:         # keyword-only parameters: positional
            return bound.args + tuple(bound.kwargs[k] for k in self._kwonly)
        if bound.kwargs:
            raise TypeError(f"cppcodegen: **kwargs parameters (and keyword-only ones of a "
                            f"method or callable object) of "
                            f"{self.fn.__name__} are not supported")
        return bound.args

    def __call__(self, *args, **kwargs):
        # fast path: arrays and NumPy scalars only; equal (type, dtype, shape, strides) give
        # equal guards, so the variant found for them last time is the right one again
        key = None
        if kwargs or not self._simple or len(args) != self._nargs:
            args, kwargs = self._bind(args, kwargs), None
        if len(args) == self._nargs:
            if self._layout_key is None:
                self._layout_key = signature.layout_key(args)
            try:
                key = self._layout_key(*args)
                fast = self._fast.get(key)
            except (AttributeError, TypeError):     # (not an array, or an array where the
                key = None                          # first call passed an int)
            else:
                if fast is not None:
                    return fast(args)
        try:
            specs = signature.classify(args)
        except TypeError as e:      # e.g. dask arrays in: a dask array out (integrations/dask.py)
            for dispatch in ARRAY_DISPATCH:
                result = dispatch(self, args)
                if result is not NotImplemented:
                    return result
            error = TypeError(f"{e} (parameter '{self._parameter_of(args)}' of "
                              f"{self.fn.__qualname__})")       # (a list of arrays: Python runs it)
            return fall_back(self.fn, error, config.get_options(self.options).fallback)(args)
        variant = self.variants.get(specs)
        if variant is None and self.dynamic_variants:
            variant = self._find_dynamic(specs, args)
        if variant is None:
            variant = self._compile(specs, args)
            if variant is None:             # past the recompile limit: plain NumPy
                return self.fn(*args)
        if key is not None and all(     # (the key holds the ints' values, no float's)
                type(args[i]) is int and i in self._layout_key.ints
                for _, i in value_sizes(variant)) and all(
                type(args[i]) in (float, complex) for i in self._layout_key.scalars) and all(
                isinstance(args[i], (np.ndarray, np.generic)) for i in self._layout_key.arrays):
            if len(self._fast) >= FAST_PATH_ENTRIES:
                self._fast.clear()
            self._fast[key] = getattr(variant, "fast", variant)
        return variant(args)

    def _parameter_of(self, args) -> str:
        """The name of the first parameter whose argument ``signature.classify`` refuses."""
        names = list(self._sig.parameters)
        for i, a in enumerate(args):
            try:
                signature.classify((a,))
            except TypeError:
                return names[min(i, len(names) - 1)]
        return "?"

    def _find_dynamic(self, specs, args):
        """The newest dynamic variant whose guards this call passes, or None."""
        return next((variant for dspecs, guards, values, variant in self.dynamic_variants
                     if fits(dspecs, guards, values, specs, args)[0]), None)

    def _compile(self, specs, args):
        with self._lock:
            variant = self.variants.get(specs) or self._find_dynamic(specs, args)
            if variant is not None:
                return variant
            opts = config.get_options(self.options)
            if len(self.variants) >= opts.recompile_limit:
                if not self._limit_warned:
                    import warnings
                    self._limit_warned = True
                    warnings.warn(
                        f"cppcodegen: {self.fn.__qualname__} reached the recompile limit "
                        f"({opts.recompile_limit} variants; option recompile_limit); calls that "
                        f"fit none of them run as plain NumPy. Last reason: "
                        f"{self._why_not(specs, args)}", RecompileLimitWarning, stacklevel=3)
                return None
            cspecs = self._choose_specs(specs, args)
            if cspecs != specs and self.dynamic is None and any(
                    d == cspecs for d, _, _, _ in self.dynamic_variants):
                cspecs = specs      # automatic: a variant of these dims failed its guards here
            if self.variants:
                reason = Recompile(self.fn.__qualname__, self._why_not(specs, args),
                                   dynamic=cspecs != specs, variants=len(self.variants) + 1)
                self.recompiles.append(reason)
                log.info("%s", reason)
            trigger = CompileTrigger.RECOMPILE if self.variants else CompileTrigger.FIRST_TRACE
            # an automatic dynamic variant (sizes or ints read at each call) that does not
            # trace: this call's static specs instead
            attempts = [cspecs, specs] if cspecs != specs and self.dynamic is None else [cspecs]
            for k, cs in enumerate(attempts):
                try:
                    with callback_handler.install_callbacks(trigger) as compilation:
                        variant = self._backend(self.fn, cs, args, opts, compilation)
                    cspecs = cs
                    break
                except Exception as e:      # noqa: BLE001 -- the static attempt's error counts
                    if k + 1 < len(attempts):
                        continue
                    if isinstance(e, RecursionError):   # (a helper calling itself)
                        e = UnsupportedError(f"recursion too deep while compiling "
                                             f"{self.fn.__qualname__}: a function that calls "
                                             "itself, or a long chain of values from a loop "
                                             "that ran in Python while tracing")
                    if not isinstance(e, (UnsupportedError, DataDependentError, TraceError,
                                          AssertionError)):
                        raise
                    self._newest = (specs, None, ())    # (the next call's reason names it)
                    return self.variants.setdefault(specs, fall_back(self.fn, e, opts.fallback))
            values = value_sizes(variant)
            if cspecs == specs and not values:
                self.variants[cspecs] = variant
                self._newest = (cspecs, None, ())
            else:       # keyed with its guards: one pattern may be traced under other guards
                from .runtime.sizes import compile_expr
                texts = tuple(getattr(variant.plan, "guards", ()))
                plan = variant.plan
                traced = values_text(dict(plan.traced))
                guards = tuple((f"{t} (traced with {traced})", compile_expr(g))
                               for g, t in zip(texts, plan.guard_texts or texts))
                self.variants[(cspecs, texts)] = variant
                self.dynamic_variants.insert(0, (cspecs, guards, values, variant))
                self._newest = (cspecs, guards, values)
            return variant

    def _choose_specs(self, specs, args):
        return choose_specs(self.variants, self.dynamic, self.backend, specs, args)

    def _why_not(self, specs, args) -> str:
        """Why the newest variant does not serve this call: the guard that failed."""
        newest, guards, values = self._newest
        if guards is not None:
            return fits(newest, guards, values, specs, args)[1]
        return signature.describe_change(newest, specs)

    @property
    def recompile_reasons(self) -> list:
        """Why each compile after the first happened (``Recompile`` records, oldest first)."""
        return list(self.recompiles)

    def explain(self, *args, **kwargs):
        args = self._bind(args, kwargs)
        specs = self._choose_specs(signature.classify(args), args)
        opts = config.get_options(self.options)
        from .runtime import cachedir
        with callback_handler.install_callbacks(CompileTrigger.EXPLAIN), autotune.tuning(opts):
            graph = trace_function(self.fn, specs, args)
            opts = autotune_threshold.resolve(opts, graph)
            cache_dir = Path(config.cache_dir_setting(opts) or cachedir.default_cache_dir())
            ex = build_stages(self.fn, graph, specs, opts, cache_dir, {})
            ex.recompiles = self.recompile_reasons
            return ex

    # __reduce__ and __dask_tokenize__ (pickling by reference) come from integrations/pickling.py

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<cppcodegen compiled {self.fn.__qualname__} ({len(self.variants)} variants)>"


def compile(fn=None, *, backend: str = "cpp", options: dict | None = None,
            dynamic: bool | None = None, **option_values):
    """Compile a NumPy function. Use bare (``@compile``) or with arguments. Options
    (``config.Options``) go in ``options`` or as keywords (``parallel_threshold=0``).
    ``backend`` names a registered backend (``cppcodegen.list_backends()``): 'cpp' (default),
    'numpy' (the NumPy reference interpreter) or 'check' (both, compared buffer by buffer).
    ``dynamic``: True compiles one variant whose array sizes (other than 0 and 1) are symbolic;
    False specializes every size; None (default) specializes first and, when a call differs
    from a variant only in sizes, recompiles once with those sizes symbolic.
    """
    lookup_backend(backend)                 # unknown names fail here, listing the known ones
    options = {**(options or {}), **option_values}      # (checked by CompiledFunction)
    make = lambda f: CompiledFunction(f, backend, options, dynamic)     # noqa: E731
    return make if fn is None else make(fn)


# --------------------------------------------------------------------------- dynamic shapes

FAST_PATH_ENTRIES = 256       # exact (dtype, shape, strides) keys remembered per function


def check(fn, *args, raise_on_mismatch: bool = True, options: dict | None = None,
          tolerances: dict | None = None, **kwargs) -> CheckReport:
    """Run ``fn(*args, **kwargs)`` compiled (with hooks) and in the reference; compare buffers.

    ``fn`` is a plain function or a ``cppcodegen.compile`` result (its options are kept).
    Returns the ``CheckReport`` (see ``checking/check.py``); raises ``CheckError`` on a
    mismatch unless ``raise_on_mismatch=False``.
    """
    base = fn.fn if isinstance(fn, CompiledFunction) else fn
    merged = dict(fn.options if isinstance(fn, CompiledFunction) else {}, **(options or {}))
    cf = CompiledFunction(base, backend="check", options=merged)
    args = cf._bind(args, kwargs)
    variant = cf._compile(signature.classify(args), args)
    variant.tolerances = tolerances
    _, report = variant.run(args)
    if raise_on_mismatch and not report.ok:
        raise CheckError(report)
    return report


# what a call does with arguments signature.classify refuses (TypeError): each entry is
# ``dispatch(compiled_function, args) -> result or NotImplemented``; the package registers
# the Dask one (cppcodegen/__init__.py), so this module never imports an integration
ARRAY_DISPATCH: list = []


@register_backend("cpp")
def cpp_backend(fn, specs, args, opts, compilation):
    """The C++ pipeline (``compile_stages``): the default backend."""
    if opts._testing_miscompile:            # testing only: the renderer breaks one op
        from .backend.cexpr import TESTING_MISCOMPILE   # lazy: sympy, only for this test hook
        token = TESTING_MISCOMPILE.set(opts._testing_miscompile)
        try:
            ex, variant = compile_stages(fn, specs, args, opts)
        finally:
            TESTING_MISCOMPILE.reset(token)
    else:
        ex, variant = compile_stages(fn, specs, args, opts)
    if ex is None:                          # served by the graph-level disk cache
        compilation.trigger = CompileTrigger.CACHE_LOAD
    variant.fallback = fn       # for calls whose arrays overlap an argument it updates in place
    return variant


def explain(fn, *args, **kwargs) -> Explanation:
    """Trace, lower, schedule, generate and build ``fn`` for these arguments; return it all."""
    if not isinstance(fn, CompiledFunction):
        fn = CompiledFunction(fn)
    return fn.explain(*args, **kwargs)
