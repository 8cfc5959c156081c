"""Measured choice: from how many elements a loop nest runs on all cores (parallel_threshold).

In:  the options of one compilation and its traced graph (:func:`resolve`).
Out: the options with ``parallel_threshold`` a number of elements: the user's, when given
     (option / ``CPPCODEGEN_PARALLEL_THRESHOLD``); else the one measured on this machine.

A loop nest below the threshold runs on the calling thread: no OpenMP region, no thread
wake-up (waking a sleeping thread and joining it costs ~5-15 us on the 2-core EPYC VM, more
than a 1000-element chain takes). The threshold is measured once per machine (CPU, ISA, cores,
compiler, versions) and thread count, and stored with the other measured choices
(runtime/tuning.py) in the user's own cache directory, whatever cache directory a compilation
uses (:func:`decisions`). The measurement times the cheapest kernel there is, ``a * b + a`` on
float32 (built with every loop parallel: the code we generate, not a model of it), on all
threads and on the calling thread alone, at sizes 2^13 to 2^20: the threshold is the smallest
size where all threads take < MARGIN of the one thread's time, there and at twice the size,
and at most the untuned ``STATIC`` (2^19). A kernel with more work per element gains from
threads at fewer elements, so below 2^19 the threshold errs on the side of the calling thread
(a loop runs on all threads only where even this kernel gains from them); from 2^19 on loops
run as they did untuned (on a busy machine even ``a * b + a`` at 2^21 may not gain, but an
exp/log kernel of that size does): never slower than the untuned choice, as measured.

No measurement (and the same result whatever the stored decisions say, so cache keys do not
change once a measurement exists) when the choice cannot matter: option ``parallel`` off, one
thread, or a graph whose every size is known and below ``LOW`` (they run serially at any
measured threshold: measurements are clamped to [LOW, HIGH]). With the option ``tune`` off
(``CPPCODEGEN_TUNE=0``) the untuned threshold ``STATIC`` applies. A measurement taken while the
machine is busy is provisional and taken again once by a later compilation, as matmul's.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from . import autotune
from .runtime import tuning as stored
from .runtime.openmp import runtime as _openmp_runtime
from .runtime.cachedir import (CacheDirError, MemoDict, clear_on_fresh_cache, ensure_cache_dir,
                               user_cache_dir)

AUTO = -1                   # Options.parallel_threshold's default: "measured"
STATIC = 1 << 19            # the untuned threshold (tune off, one thread, measurement failed)
LOW, HIGH = 1 << 13, STATIC     # measured thresholds are clamped to [LOW, HIGH]
SIZES = tuple(1 << e for e in range(13, 21))         # measured, smallest first
MARGIN = 0.9                # parallel pays when it takes < 90% of the serial time
BUDGET_S = 0.02             # timing per size (both builds)
_USER_ROOT = clear_on_fresh_cache(MemoDict())      # "root" -> the checked user directory


def key(nthreads: int) -> str:
    return f"parallel_threshold threads={nthreads}"


def _probe(a, b):
    return a * b + a


def max_static_size(graph):
    """The largest element count of any node of ``graph`` (inputs and loop bodies included), or
    None when some size is symbolic (known only at run time)."""
    from .ir.graph import walk
    largest = 1
    for n in list(graph.inputs) + list(walk(graph.nodes)):
        count = 1
        for d in getattr(n, "shape", ()) or ():
            if not isinstance(d, (int, np.integer)):
                return None
            count *= int(d)
        largest = max(largest, count)
    return largest


def resolve(opts, graph=None):
    """``opts`` with ``parallel_threshold`` resolved (see the module docstring); the Tuner
    current for ``opts`` (autotune.tuning) adopts the result, so later stages share it."""
    if opts.parallel_threshold != AUTO:
        return opts
    value = _value(opts, graph)
    resolved = dataclasses.replace(opts, parallel_threshold=value)
    tuner = autotune.ACTIVE.get()
    if tuner is not None and tuner.opts == opts:
        tuner.opts = resolved
    return resolved


def _value(opts, graph) -> int:
    if graph is not None:       # first: a rule of the graph alone, so that every process
        largest = max_static_size(graph)    # (a Dask worker with one thread too) agrees
        if largest is not None and largest < LOW:
            return LOW                      # serial at any threshold we could measure
    nthreads = stored.threads()
    if not opts.parallel or nthreads <= 1:
        return STATIC
    if not opts.tune:
        return STATIC
    try:
        store = decisions(opts)
        k = key(nthreads)
        decision = store.measure_once(k, lambda: measure(opts))
        if decision is not None and decision.get("busy") and k not in autotune._REMEASURED \
                and not stored.busy():      # measured on a busy machine: again, now it is quiet
            autotune._REMEASURED[k] = True
            again = measure(opts)
            store.put(k, again)
            decision = again
    except Exception as e:                  # noqa: BLE001 -- a failed measurement: static
        warnings.warn(f"cppcodegen: could not measure the parallel threshold "
                      f"({type(e).__name__}: {e}); using {STATIC} elements", RuntimeWarning,
                      stacklevel=3)
        return STATIC
    if decision is None:
        return STATIC
    return min(max(int(decision["elements"]), LOW), HIGH)      # (older files: any value)


def decisions(opts):
    """Where the threshold is stored: the decisions file (runtime/tuning.py) of this machine in
    the user's own cache directory (``cachedir.user_cache_dir``), shared by every cache
    directory as the precompiled header is: it describes the machine, not the kernels, and a
    fresh cache (a benchmark's cold compile, ``fresh_cache()``) must not pay for measuring it
    again. The cache directory's own file when the user's directory is not usable."""
    tuner = autotune.Tuner(opts)
    root = _USER_ROOT.get("root", False)
    if root is False:
        try:
            root = ensure_cache_dir(user_cache_dir(), need_exec=False)
        except (CacheDirError, OSError):
            root = None
        _USER_ROOT["root"] = root
    return stored.decisions(root or tuner.cache_dir(), tuner.machine())


def _build(opts, **extra):
    from .api import CompiledFunction
    options = {name: getattr(opts, name) for name in ("isa", "vectorize", "cxx", "cache_dir",
                                                        "sanitize")}
    f = CompiledFunction(_probe, options=dict(options, tune=False, **extra), dynamic=True)
    small = np.ones(4, np.float32)
    f(small, small)                         # build (or load) before timing
    return f


def _timer(opts, parallel):
    """``time(x, y) -> (parallel s, serial s)``: the parallel build timed with all threads and
    with one (omp_set_num_threads(1) on this thread: the same code, no wake-up); without an
    OpenMP runtime we can reach, against a serial build."""
    runtime = _openmp_runtime()
    if runtime is None:
        serial = _build(opts, parallel=False)
        return lambda x, y: autotune.time_in_turn([lambda: parallel(x, y),
                                                   lambda: serial(x, y)], BUDGET_S)

    def time(x, y):
        (p,) = autotune.time_in_turn([lambda: parallel(x, y)], BUDGET_S / 2)
        threads = runtime.omp_get_max_threads()
        runtime.omp_set_num_threads(1)
        try:
            (s,) = autotune.time_in_turn([lambda: parallel(x, y)], BUDGET_S / 2)
        finally:
            runtime.omp_set_num_threads(threads)
        return p, s
    return time


def measure(opts) -> dict:
    """Time ``a * b + a`` built with every loop parallel, run on all threads and on one, at
    SIZES, smallest first, until threads pay at two sizes in a row (one fast sample is not
    enough); the decision: ``{"path": "threshold", "elements": n, "times_us": {size:
    [parallel, serial]}, ...}`` with ``n`` the first of those two sizes, clamped to [LOW, HIGH]
    (HIGH if none)."""
    parallel = _build(opts, parallel_threshold=0)
    time = _timer(opts, parallel)
    load = stored.load()
    times, elements, previous = {}, HIGH, None
    for n in SIZES:
        x = np.linspace(-1.0, 1.0, n, dtype=np.float32)
        y = x[::-1].copy()
        p, s = time(x, y)
        times[str(n)] = [round(p * 1e6, 2), round(s * 1e6, 2)]
        if p < MARGIN * s:
            if previous is not None:
                elements = previous
                break
            previous = n
        else:
            previous = None
    elements = min(max(elements, LOW), HIGH)
    return {"path": "threshold", "elements": elements, "times_us": times,
            "load": load, "busy": load > stored.BUSY_LOAD}
