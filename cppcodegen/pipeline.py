"""The pipeline driver: from a function and its argument specs to a loaded variant.

``compile_stages`` classifies nothing itself: given the specs (guards) it traces a Graph,
lowers it to loop IR, schedules kernels, generates C++, builds (or finds) the shared object
and loads it (``build_stages`` stops after the build, for ``explain``). ``_plan`` is the
plain-data description of a call a loaded variant runs by (``runtime/compiled.py``).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import autotune, autotune_threshold, config
from .errors import UnsupportedError
from .frontend.control import trace_function
from .ir.graph import COUNTED, SliceOut, walk
from .runtime import fastcall

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
    # loops are explicit anyway. -fno-trapping-math: no program looks at the floating-point
    # exception flags, and with them GCC would not compute a compare of an `if` in a lane
    # loop for every lane ("could trap"), so the flattened body stayed scalar (particles
    # bouncing in a box: 2.4 -> 0.9 ms for 10^6 steps); values are unchanged (IEEE rounding,
    # NaNs and signed zeros are still honoured).
    flags = ["-O3", "-std=c++17", "-fopenmp", "-fPIC", "-shared", "-fwrapv",
             "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
             "-fno-tree-slp-vectorize", "-fno-tree-loop-vectorize",
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
                variant = _variant(entry["so_path"], entry["cdef"],
                                   _located(entry["plan"], graph, entry.get("site_nodes")),
                                   graph.constants, specs)
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
                                      "plan": ex.plan, "parts": parts,
                                      "site_nodes": _site_nodes(graph, ex.plan.sites)})
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
    ex.cdef = cdef_for(sig, steps, source)
    hooked = graph if opts.generate_intermediate_hooks else None
    ex.plan = dataclasses.replace(_plan(program, sig, hooked, graph.raises),
                                  steps=_steps(steps, sig), ranges=graph.ranges,
                                  **_size_plan(specs, graph))
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
    """Plan fields of a dynamic variant: where each size/stride name is read, and the guards
    (those on counts of the values, ``m0``, checked where the count is known: ``late_guards``)."""
    if not graph.guards and not graph.values and not any(s[0] == "darray" for s in specs):
        return {}
    from .ir.guardtext import guard_text, pyexpr
    counted = [g for g in graph.guards if any(x.name.startswith(COUNTED) for x in g.free_symbols)]
    late = {"late_guards": tuple((pyexpr(g), guard_text(g)) for g in counted)}
    if not any(s[0] == "darray" for s in specs) and not graph.values:
        return late
    guards = [g for g in graph.guards if g not in counted]
    sizes = [(name, i, 0, 2) for name, i in graph.values]
    for i, s in enumerate(specs):
        if s[0] == "darray":
            sizes += [(n, i, d, 0) for d, n in enumerate(s[2]) if isinstance(n, str)]
            sizes += [(n, i, d, 1) for d, n in enumerate(s[3]) if isinstance(n, str) and n != "c"]
    seen = set()
    sizes = [x for x in sizes if not (x[0] in seen or seen.add(x[0]))]
    return {"sizes": tuple(sizes), "guards": tuple(pyexpr(g) for g in guards),
            "traced": tuple(sorted((s.name, int(v)) for s, v in graph.hints.items())),
            "guard_texts": tuple(guard_text(g) for g in guards), **late}


def _variant(so_path, cdef, plan, constants, specs):
    from .runtime import load_library, make_variant
    lib = load_library(so_path, cdef)
    if "ccg_use_blas" in cdef:             # (NumPy's BLAS: include/cppcodegen/blas.h)
        from .runtime import blas
        found = blas.functions()
        if found is not None:
            lib.lib.ccg_use_blas(*(lib.ffi.cast("void*", f) for f in found[:4]),
                                 int(found.int64))
    if "ccg_use_print" in cdef:            # (the user's prints: runtime/printing.py)
        from .runtime import printing
        lib.lib.ccg_use_print(printing.callback_for(lib.ffi))
    contiguous = {i: _c_contiguous(s) for i, s in enumerate(specs) if s[0] in ("array", "darray")}
    calls = [st[1] for st in plan.steps if st[0] == "call"]
    fn = lib.lib.ccg_run0 if plan.steps == (("call", 0),) else tuple(
        getattr(lib.lib, f"ccg_run{i}") for i in range(max(calls, default=-1) + 1))
    variant = make_variant(lib.ffi, fn, plan, constants, contiguous)
    if variant.c_ready and "ccg_slots0" in cdef:
        variant.slots_fn = lib.lib.ccg_slots0
    fastcall.start()        # (built once, in the background: functions compiled later use it)
    return variant


def _steps(steps, sig):
    """Codegen's steps with buffer names replaced by positions in the entry arguments."""
    position = {name: n for n, (name, *_) in enumerate(sig)}
    return tuple((st if len(st) == 2 else   # (a call's writes: those the runtime holds)
                  (st[0], st[1], tuple(position[a] for a in st[2] if a in position)))
                 if st[0] == "call" else
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
                (x[0] in ("buf", "py", "arr", "copy") or x[0].startswith("list:")):
            return (x[0], position[x[1]])
        if isinstance(x, tuple) and x and x[0] == "py?":    # (its flag's buffer, its own)
            return (x[0], tuple(position[b] for b in x[1]))
        if isinstance(x, tuple) and x and x[0] == "none?":  # (its None flag's buffer, the
            return (x[0], (position[x[1][0]], _map(x[1][1], leaf)))     # value otherwise)
        if isinstance(x, tuple) and x and x[0] == "int?":   # (its int flag's buffer, the
            return (x[0], (position[x[1][0]], leaf(x[1][1])))   # value as it is otherwise)
        return x
    hooks = ()
    if graph is not None:
        nodes = {label: n for n, label in zip(graph.nodes, (f"%{i}" for i in range(len(graph.nodes))))}
        last = {s.name: s.nodes for s in program.stages}    # (a buffer a chain of stores
        later = _written_later(program.stages)              # fills in place: its last value;
        hooks = tuple((f"{s.name}:{s.nodes}:{_op_name(nodes[s.nodes])}", position[s.name])
                      for k, s in enumerate(program.stages) if s.name in position and   # one
                      s.nodes in nodes and last[s.name] == s.nodes and  # a loop updates later:
                      s.name not in later[k] and not _partly_empty(nodes[s.nodes]))  # none)
    return Plan(tuple(args), _map(program.outputs, leaf), hooks, mutates=program.mutated_args(),
                raises=raises, sites=program.sites)


def _site_nodes(graph, sites) -> tuple:
    """Per error site (the user's file:line of an indexing or a reduction that may fail),
    the position of the first graph node at that line: the key of the graph cache leaves
    the lines out, so a hit after the user's file changed around the function (a line
    added above it) names the lines where they are now (``_located``)."""
    first = {}
    for k, n in enumerate(walk(graph.nodes)):
        first.setdefault(n.where, k)
    return tuple(first.get(w, -1) for w in sites)


def _located(plan, graph, site_nodes):
    """``plan`` (from the graph cache) with its error sites at this trace's lines."""
    if not site_nodes or len(site_nodes) != len(plan.sites):
        return plan
    wheres = [n.where for n in walk(graph.nodes)]
    sites = tuple(wheres[k] if 0 <= k < len(wheres) else old
                  for k, old in zip(site_nodes, plan.sites))
    return plan if sites == plan.sites else dataclasses.replace(plan, sites=sites)


def _written_later(stages) -> list:
    """Per top-level stage: the buffers the loops and branches after it store into."""
    from .ir.loopir import nested
    out, seen = [], set()
    for s in reversed(stages):
        out.append(frozenset(seen))
        if s.regions:
            seen |= {t.name for region in s.regions for t in nested(region) if t.name}
    return out[::-1]


def _partly_empty(node) -> bool:
    """Is ``node`` an ``np.empty`` array some of whose elements were assigned (a stack's
    arrays, ``frontend/worklists.py``)? The others hold whatever the memory held: no hook
    compares them."""
    while node.op in ("setitem", "scatter"):
        node = node.inputs[0]
    return node.op == "broadcast_to" and node.attr("uninit", False)


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
