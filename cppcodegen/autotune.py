"""Measured choices: which implementation computes each matrix product on this machine.

In:  the options of one compilation (``tuning(opts)`` makes a :class:`Tuner` current while
     it traces, lowers and schedules) and the question lowering and scheduling ask of every
     ``np.matmul`` (:func:`matmul_path`: our ``ccg::gemm``, or the BLAS NumPy links called
     from the kernel, include/cppcodegen/blas.h; or NumPy's matmul as a step when the product
     is not one a kernel computes).
Out: the answer; per compilation the :class:`Choice` of every product and why
     (``current_choices()``, shown by ``cppcodegen.explain``), and the paths as cache-key text
     (``key_part(graph)``: a changed decision never loads a kernel built for the other).
     ``tuned`` runs a pipeline function (pipeline.compile_stages, build_stages) under ``tuning``.

The static rule (``eligible``): float32/float64 products whose two matrix dimensions are not
literally 1 may run ``ccg::gemm``; matrix-vector and integer products always stay NumPy calls.
With the option ``tune`` on (the default; ``CPPCODEGEN_TUNE=0`` turns it off, and then the
static rule alone decides: every eligible product runs ``ccg::gemm``), an eligible product
runs ``ccg::gemm`` unless a measurement on this machine found BLAS (the library NumPy's
matmul calls, found by runtime/blas.py and called from the kernel) faster for its shape class (dtype, M, N, K and batch bucketed to powers of 2, thread count; see
``runtime/tuning.py``, which stores the decisions in the cache directory per machine). The
first compilation that needs a class measures it (:func:`measure_matmul`: a few runs of
``a @ b`` compiled both ways on the same arrays, ours first, in two rounds, minimum of each,
about 0.1 s plus a pause; rounds that disagree make it provisional;
products above ``MAX_WORK`` are timed at a shape scaled down to it); later
compilations, in this process or another, reuse the decision (one measured while the machine
was busy, load above ``runtime.tuning.BUSY_LOAD`` per core, is provisional: a later process
measures it again once, when the machine is quiet). Sizes that are symbolic are
decided by their values in the traced call; sizes unknown when compiling (loop-dependent)
keep the static rule. No sympy here: a warm start computes the key without it.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import config
from .runtime import blas
from .runtime import tuning as stored     # the decisions file (runtime/tuning.py)
from .runtime.cachedir import MemoDict, clear_on_fresh_cache

GEMM_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
MAX_WORK = 1 << 30          # multiply-adds of the largest product timed (1024^3)
BUDGET_S = 0.1              # timing per decision (at least MIN_SAMPLES per candidate)
MIN_SAMPLES, MAX_SAMPLES = 5, 50
SAMPLE_S = 2e-4             # calls are repeated so that one sample lasts at least this long
MARGIN = 0.95               # BLAS is chosen only when it takes < 95% of ccg::gemm's time
ROUNDS = 2                  # the candidates are timed in turn this many times (budget shared)
PAUSE_S = 0.12              # between rounds: OpenBLAS's threads spin ~0.1 s after a call
UNSTEADY = 1.5              # a candidate's best time in one round over its best in another above
                            # this: the machine was busy meanwhile (the decision is provisional)


@dataclass(frozen=True)
class Choice:
    what: str       # "matmul 256x256x256 float32 at file.py:12"
    path: str       # 'gemm' (ccg::gemm), 'blas' (BLAS called from the kernel) or 'numpy'
    why: str

    def __str__(self):
        name = "syrk" if self.path == "blas" and self.why.startswith(GRAM_WHY) else self.path
        return f"{self.what}: {PATH_NAMES[name]}: {self.why}"


PATH_NAMES = {"gemm": "ccg::gemm", "blas": "BLAS called from the kernel (cblas_?gemm)",
              "syrk": "BLAS called from the kernel (cblas_?syrk)",
              "numpy": "NumPy's matmul (a step between kernels)"}


GRAM_WHY = "a matrix times its own transpose: half the multiplies (as NumPy's matmul)"
ACTIVE: contextvars.ContextVar = contextvars.ContextVar("cppcodegen_tuner", default=None)
# set while measure_matmul builds its candidates: every eligible product takes this path
FORCED: contextvars.ContextVar = contextvars.ContextVar("cppcodegen_forced_path", default=None)


def eligible(func, dtype, in_dtypes, shape) -> bool:
    """The static rule: may ``ccg::gemm`` compute this product at all?"""
    return (func is np.matmul and len(in_dtypes) == 2 and np.dtype(dtype) in GEMM_DTYPES
            and all(np.dtype(d) == np.dtype(dtype) for d in in_dtypes)
            and not any(isinstance(s, int) and s == 1 for s in shape[-2:]))


def matmul_path(func, dtype, in_dtypes, shape, k, where: str = "", gram: bool = False):
    """How this product (output ``shape`` = batch + (M, N), inner size ``k``) is computed:
    'gemm' (``ccg::gemm``), 'blas' (the BLAS NumPy links, called from the kernel:
    include/cppcodegen/blas.h) or None (NumPy's matmul as a step). The static rule, then the
    current Tuner's decision (no Tuner: 'gemm' for every eligible product). ``gram``: a
    matrix times its own transpose, which BLAS computes with half the multiplies (syrk)."""
    ok = eligible(func, dtype, in_dtypes, shape)
    tuner = ACTIVE.get()
    if not ok:
        if tuner is not None and func is np.matmul and FORCED.get() is None:
            kind = ("a matrix-vector product (memory bound: BLAS's GEMV)"
                    if np.dtype(dtype) in GEMM_DTYPES else f"a {np.dtype(dtype)} product")
            tuner.record(dtype, shape, k, where, "numpy", f"static rule: {kind}")
        return None
    if FORCED.get() is not None:
        return FORCED.get()
    if tuner is None:
        return "gemm"
    return tuner.matmul(np.dtype(dtype), shape, k, where, gram)


def matmul_native(func, dtype, in_dtypes, shape, k, where: str = "") -> bool:
    """Whether this product runs in a kernel (``ccg::gemm`` or BLAS called from it)."""
    return matmul_path(func, dtype, in_dtypes, shape, k, where) is not None


def native_in_loop(node) -> bool:
    """An eligible product met in a compiled loop's body: it runs in the kernel (a NumPy
    step cannot run there), on the path the measurement chose for its shape. (A body that
    runs on the threads calls ccg::gemm: include/cppcodegen/blas.h nests no BLAS threads.)"""
    func = getattr(node.attr("call"), "func", None)
    tuner = ACTIVE.get()
    if tuner is None or FORCED.get() is not None or not eligible(
            func, node.dtype, [i.dtype for i in node.inputs], node.shape):
        return False
    return node_native(node)


def node_path(node):
    """:func:`matmul_path` of a graph node (op 'extern')."""
    func = getattr(node.attr("call"), "func", None)
    if func is not np.matmul or not node.inputs or not node.inputs[0].shape:
        return None                     # (np.unravel_index of an argmax: not a product)
    return matmul_path(func, node.dtype, [i.dtype for i in node.inputs], node.shape,
                       node.inputs[0].shape[-1], node.where, gram(node.inputs))


def gram(operands) -> bool:
    """Are the two operands one array and its transpose (``x.T @ x``, ``x @ x.T``)?"""
    if len(operands) != 2:
        return False
    (a, ta), (b, tb) = map(unswapped, operands)
    return a is b and ta != tb


def unswapped(node):
    """(the array under a swap of the last two axes, True), or (node, False)."""
    if node.op == "transpose" and node.ndim >= 2:
        perm, n = tuple(node.attr("perm")), node.ndim
        src = node.inputs[0]
        if perm == tuple(range(n - 2)) + (n - 1, n - 2) and src.dtype == node.dtype:
            return src, True
    return node, False


def node_native(node) -> bool:
    return node_path(node) is not None


class Tuner:
    """The choices of one compilation: asked by tracing (loops), lowering and scheduling."""

    def __init__(self, opts: config.Options):
        self.opts = opts
        self.hints = None           # symbol -> traced value, once the graph is traced
        self.choices: dict = {}     # (where, what) -> Choice
        self._decided: dict = {}    # decision key -> (path, why): one answer per compilation
        self._cache_dir = None

    def use(self, graph) -> None:
        """Resolve symbolic sizes from ``graph``'s traced values from now on."""
        self.hints = getattr(graph, "hints", None) or {}

    def report(self) -> list:
        return list(self.choices.values())

    # -- deciding -------------------------------------------------------------------------
    def _size(self, d):
        if isinstance(d, (int, np.integer)):
            return int(d)
        hints = self.hints
        if hints is None:                   # while tracing: the trace's ShapeEnv
            from .frontend.sizes import current_env
            env = current_env()
            hints = env.hints if env is not None else {}
        try:
            value = d.xreplace(hints)       # (a bare symbol gives the plain int)
            return int(value) if isinstance(value, int) or value.is_Integer else None
        except Exception:                   # noqa: BLE001 -- not a size we can evaluate
            return None

    def record(self, dtype, shape, k, where, path, why) -> str:
        sizes = [self._size(d) for d in tuple(shape) + (k,)]
        text = "x".join("?" if s is None else str(s) for s in sizes[-3:-1] + sizes[-1:])
        batch = sizes[:-3]
        if batch:
            text = "x".join("?" if s is None else str(s) for s in batch) + " batch of " + text
        what = f"matmul {text} {np.dtype(dtype).name}" + (f" at {where}" if where else "")
        n = 1               # (another product of this shape on the line, decided otherwise:
        while (where, what) in self.choices and \
                self.choices[(where, what)] != Choice(what, path, why):     # a line of its own)
            n += 1
            what = what.split(" #")[0] + f" #{n}"
        self.choices[(where, what)] = Choice(what, path, why)
        return path

    def matmul(self, dtype, shape, k, where, gram: bool = False) -> str:
        """'gemm' or 'blas' for an eligible product (runtime/tuning.py stores the choice)."""
        sizes = [self._size(d) for d in tuple(shape) + (k,)]
        if not self.opts.tune:
            return self.record(dtype, shape, k, where, "gemm",
                               "static rule (tuning off: option tune, CPPCODEGEN_TUNE=0)")
        if None in sizes:
            return self.record(dtype, shape, k, where, "gemm",
                               "static rule (sizes not known when compiling)")
        if not blas.available():
            return self.record(dtype, shape, k, where, "gemm",
                               "static rule (no BLAS library found in NumPy to call)")
        if gram:
            return self.record(dtype, shape, k, where, "blas", GRAM_WHY)
        *batch, m, n, kk = sizes
        count = math.prod(batch) if batch else 0
        nthreads = stored.threads() if self.opts.parallel else 1
        key = stored.matmul_key(dtype.name, m, n, kk, count, nthreads)
        if not self.opts.parallel:
            key += " serial"
        if key not in self._decided:
            self._decided[key] = self._decide(key, dtype, m, n, kk, count, nthreads)
        return self.record(dtype, shape, k, where, *self._decided[key])

    def _decide(self, key, dtype, m, n, kk, count, nthreads) -> tuple:
        try:
            store = stored.decisions(self.cache_dir(), self.machine())
            decision = store.measure_once(key, lambda: measure_matmul(
                dtype, m, n, kk, count, self.opts))
        except Exception as e:              # noqa: BLE001 -- a failed measurement: static
            warnings.warn(f"cppcodegen: could not measure {key} ({type(e).__name__}: {e}); "
                          "using ccg::gemm", RuntimeWarning, stacklevel=2)
            decision = None
        if decision is not None and decision.get("busy") and key not in _REMEASURED \
                and not stored.busy():      # measured on a busy machine: again, now it is quiet
            _REMEASURED[key] = True
            decision = _measure_again(store, key, dtype, m, n, kk, count, self.opts) or decision
        if decision is None:
            return "gemm", "static rule (no measurement: decisions file locked or failed)"
        return decision["path"], why(decision, nthreads)

    def cache_dir(self) -> Path:
        if self._cache_dir is None:
            from .runtime import build, cachedir
            self._cache_dir = build.cache_root(
                Path(config.cache_dir_setting(self.opts) or cachedir.default_cache_dir()))
        return self._cache_dir

    def machine(self) -> dict:
        return machine(self.opts, self.cache_dir())


_MACHINES: dict = {}
_REMEASURED = clear_on_fresh_cache(MemoDict())      # keys measured again in this process


def _measure_again(store, key, dtype, m, n, k, count, opts):
    try:
        decision = dict(measure_matmul(dtype, m, n, k, count, opts))
        store.put(key, decision)
        return decision
    except Exception as e:                  # noqa: BLE001 -- keep the provisional decision
        warnings.warn(f"cppcodegen: could not measure {key} again ({type(e).__name__}: {e})",
                      RuntimeWarning, stacklevel=3)
        return None


def machine(opts, cache_dir) -> dict:
    """This machine as a decisions file is keyed (``runtime.stored.machine``), memoized."""
    isa = opts.resolved_isa()
    memo = (isa, opts.cxx, str(cache_dir))
    if memo not in _MACHINES:
        import hashlib
        from .pipeline import INCLUDE_DIR, PACKAGE_VERSION
        from .runtime.build import compiler_version
        code = hashlib.sha256(b"".join((INCLUDE_DIR / "cppcodegen" / name).read_bytes()
                                       for name in ("gemm.h", "blas.h"))).hexdigest()[:12]
        _MACHINES[memo] = stored.machine(isa, compiler_version(opts.cxx, cache_dir),
                                         f"{PACKAGE_VERSION}+{code}")   # (the candidates'
        # code: a decision measured with an earlier ccg::gemm is measured again)
    return _MACHINES[memo]


def why(decision: dict, nthreads: int) -> str:
    """'measured: BLAS 0.31 ms vs ccg::gemm 0.52 ms at 256x256x256 float32, 2 threads'."""
    if "blas_ms" not in decision:
        return decision.get("why", "decided")
    scaled = f" (scaled down from {decision['class']})" if decision.get("scaled") else ""
    if decision.get("busy"):
        scaled += (f" (provisional: load {decision.get('load')} per core)"
                   if decision.get("steady", True) else " (provisional: unsteady timings)")
    return (f"measured: BLAS {decision['blas_ms']:.3g} ms vs ccg::gemm {decision['gemm_ms']:.3g} "
            f"ms at {decision['shape']} {decision['dtype']}{scaled}, "
            f"{nthreads} thread{'s' if nthreads != 1 else ''}")


def tuned(fn):
    """Decorate a pipeline function taking an ``Options`` argument: it runs under
    ``tuning(options)``."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        opts = next(a for a in (*args, *kwargs.values()) if isinstance(a, config.Options))
        with tuning(opts):
            return fn(*args, **kwargs)
    return wrapper


def use(graph):
    """The current Tuner resolves symbolic sizes by ``graph``'s traced values; returns it."""
    tuner = ACTIVE.get()
    if tuner is not None:
        tuner.use(graph)
    return graph


def key_part(graph) -> str:
    """Cache-key text: the path of every matrix product of ``graph`` (and of its regions), in
    order, as the current Tuner decides them (deciding them now if need be)."""
    from .ir.graph import walk
    use(graph)
    return ",".join(node_path(n) or "numpy" for n in walk(graph.nodes)
                    if n.op == "extern" and getattr(n.attr("call"), "func", None) is np.matmul)


@contextlib.contextmanager
def tuning(opts: config.Options):
    """Make a Tuner for ``opts`` current (the one already current if it has the same options)."""
    current = ACTIVE.get()
    if current is not None and current.opts == opts:
        yield current
        return
    token = ACTIVE.set(Tuner(opts))
    try:
        yield ACTIVE.get()
    finally:
        ACTIVE.reset(token)


def current_choices() -> list:
    tuner = ACTIVE.get()
    return tuner.report() if tuner is not None else []


# -- measuring ------------------------------------------------------------------------------

def _product(a, b):
    return a @ b


def representative(m, n, k, batch) -> tuple:
    """The shape a class is timed at: its bucket sizes, halved (batch first, then the largest
    of M, N, K) until the product has at most MAX_WORK multiply-adds."""
    b, m, n, k = (stored.bucket(batch) if batch > 1 else 0), *map(stored.bucket, (m, n, k))
    dims = [m, n, k]
    while max(b, 1) * dims[0] * dims[1] * dims[2] > MAX_WORK:
        if b > 1:
            b //= 2
        else:
            i = dims.index(max(dims))
            dims[i] //= 2
    return b, dims[0], dims[1], dims[2]


def candidate(path: str, opts, ndim: int, dtype):
    """``a @ b`` compiled (with symbolic sizes: one build per dtype and batch rank serves every
    class) so that the product takes ``path``: 'gemm' or 'blas' (BLAS called from the kernel). Built
    on 2x2 operands: a BLAS call that small runs on the calling thread and wakes no others."""
    from .api import CompiledFunction
    options = {name: getattr(opts, name) for name in
               ("isa", "vectorize", "parallel", "cxx", "cache_dir", "sanitize")}
    f = CompiledFunction(_product, options=dict(options, tune=False), dynamic=True)
    token = FORCED.set(path)
    try:
        small = np.ones((2,) * ndim, dtype)
        f(small, small)                     # build (or load) before timing
    finally:
        FORCED.reset(token)
    return f


def measure_matmul(dtype, m, n, k, batch, opts) -> dict:
    """Time the two paths of a product in a compiled program, on the same arrays: ``a @ b``
    compiled to ``ccg::gemm`` and compiled to a call of NumPy's BLAS (so each pays what
    it pays inside a compiled function: the call, the output, the step); the decision.

    ccg::gemm is timed first, BLAS after it, not interleaved: OpenBLAS's threads
    keep spinning for ~0.1 s after a call, and OpenMP code that runs meanwhile gets half the
    cores (measured here, 2 threads: a 1024^3 float32 ccg::gemm took 14 ms alone, 20-26 ms
    within 50 ms of a BLAS call), while our idle OpenMP threads sleep and slow nothing."""
    dtype = np.dtype(dtype)
    b, mm, nn, kk = representative(m, n, k, batch)
    lead = (b,) if b else ()
    native, called = (candidate(p, opts, len(lead) + 2, dtype) for p in ("gemm", "blas"))
    rng = np.random.default_rng(0)
    x = (rng.random(lead + (mm, kk)) - 0.5).astype(dtype)
    y = (rng.random(lead + (kk, nn)) - 0.5).astype(dtype)
    load = stored.load()
    (gemm_s, blas_s), steady = time_rounds([lambda: native(x, y), lambda: called(x, y)])
    shape = f"{mm}x{nn}x{kk}" if not b else f"{b} x {mm}x{nn}x{kk}"
    b0 = stored.bucket(batch) if batch > 1 else 0
    cls = (f"{stored.bucket(m)}x{stored.bucket(n)}x{stored.bucket(k)}" if not b0 else
           f"{b0} x {stored.bucket(m)}x{stored.bucket(n)}x{stored.bucket(k)}")
    return {"path": "blas" if blas_s < MARGIN * gemm_s else "gemm",
            "gemm_ms": round(gemm_s * 1e3, 5), "blas_ms": round(blas_s * 1e3, 5),
            "shape": shape, "dtype": dtype.name, "class": cls, "scaled": shape != cls,
            "load": load, "steady": steady, "busy": load > stored.BUSY_LOAD or not steady}


def time_rounds(fns, rounds: int = ROUNDS, budget: float = BUDGET_S) -> tuple:
    """(minimum seconds per call of each of ``fns`` over ``rounds`` rounds of
    :func:`time_in_turn`, PAUSE_S apart; whether the rounds agreed). A time that another
    process's burst inflated in one round (OpenBLAS's threads waiting for a core measured
    30 ms for a 0.3 ms product here, 2 cores shared with compilers) is caught by the other
    round: the minimum keeps the quiet one, and rounds that disagree by more than UNSTEADY
    make the decision provisional (measured again by a later process)."""
    per_round = []
    for r in range(rounds):
        if r:
            time.sleep(PAUSE_S)
        per_round.append(time_in_turn(fns, budget / rounds))
    times = list(zip(*per_round))
    return [min(t) for t in times], all(max(t) <= UNSTEADY * min(t) for t in times)


def time_in_turn(fns, budget: float = BUDGET_S) -> list:
    """Minimum seconds per call of each of ``fns``, one after the other: a warm-up call, then
    samples (each of enough calls to last SAMPLE_S) for its share of ``budget``, at least
    MIN_SAMPLES and at most MAX_SAMPLES of them."""
    best = []
    for fn in fns:
        fn()
        t0 = time.perf_counter()
        fn()
        first = time.perf_counter() - t0
        reps = max(1, min(1000, int(SAMPLE_S / max(first, 1e-7))))
        low, start, samples = first, time.perf_counter(), 0
        while samples < MIN_SAMPLES or (time.perf_counter() - start < budget / len(fns)
                                        and samples < MAX_SAMPLES):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            low = min(low, (time.perf_counter() - t0) / reps)
            samples += 1
        best.append(low)
    return best


# -- python -m cppcodegen tune ---------------------------------------------------------------

SWEEP_SIZES = (32, 64, 128, 256, 512, 1024, 2048)
SWEEP_SHAPES = ((4096, 1024, 1024, 0), (64, 1024, 1024, 0), (1024, 1024, 64, 0),
                (64, 64, 64, 64), (32, 32, 32, 256), (256, 256, 256, 8))


def sweep(opts, dtypes=("float32", "float64"), sizes=SWEEP_SIZES, shapes=SWEEP_SHAPES,
          force: bool = False, progress=None) -> list:
    """Decide every common shape class now (square products of ``sizes``, plus ``shapes``:
    (M, N, K, batch)); returns ``[(key, decision), ...]``. ``force`` measures again."""
    opts = dataclasses.replace(opts, tune=True)
    tuner = Tuner(opts)
    store = stored.decisions(tuner.cache_dir(), tuner.machine())
    nthreads = stored.threads() if opts.parallel else 1
    rows = []
    for dt in dtypes:
        for m, n, k, batch in [(s, s, s, 0) for s in sizes] + list(shapes):
            key = stored.matmul_key(np.dtype(dt).name, m, n, k, batch, nthreads)
            if not opts.parallel:
                key += " serial"
            if force:
                store.put(key, measure_matmul(dt, m, n, k, batch, opts))
            d = store.measure_once(key, lambda: measure_matmul(dt, m, n, k, batch, opts))
            rows.append((key, d))
            if progress:
                progress(key, d)
    return rows
