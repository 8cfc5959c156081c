"""The systems a workload runs on: NumPy, cppcodegen, and optional peers.

In:  a ``Workload`` and its NumPy inputs.
Out: ``System.prepare(workload, inputs)`` -> ``Prepared`` (a zero-argument ``call`` whose result
     ``to_numpy`` turns into a tuple of ndarrays, plus an ``info`` dict such as compile times),
     or raises ``Skip`` when the system has no version of that workload.
Peers (numexpr, numba, torch.compile, jax.jit) are used only when importable; the import
happens in ``setup`` after the runner has fixed the thread count in the environment.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import tempfile
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from benchmarks.workloads import BS_RATE, BS_VOL, as_tuple


class Skip(Exception):
    """This system has no natural version of this workload."""


@dataclass
class Prepared:
    call: Callable[[], Any]
    to_numpy: Callable[[Any], tuple] = as_tuple
    info: dict = field(default_factory=dict)
    cleanup: Callable[[], None] = lambda: None


class System:
    name = "?"
    module = ""          # import name; empty = always available

    def available(self) -> bool:
        return not self.module or importlib.util.find_spec(self.module) is not None

    def setup(self, threads: int) -> None:
        self.mod = importlib.import_module(self.module) if self.module else None

    def version(self) -> str:
        if not self.module:
            return np.__version__
        v = getattr(self.mod, "__version__", None)
        if v is None:
            try:
                from importlib.metadata import version
                v = version(self.module)
            except Exception:
                v = "?"
        return str(v)

    def prepare(self, wl, inputs) -> Prepared:
        raise NotImplementedError


class NumPy(System):
    name = "numpy"

    def __init__(self, repeats=3):
        self.repeats = repeats

    def prepare(self, wl, inputs):
        info = {}
        if wl.tiny_size is not None:            # per-call overhead at a tiny size
            from benchmarks.measure import time_call
            tiny = wl.tiny_inputs()
            info.update(tiny_call_s=time_call(lambda: wl.fn(*tiny), self.repeats)["time_s"],
                        tiny_size=list(np.atleast_1d(wl.tiny_size).tolist()))
        # A loop workload that loops over elements is timed as the vectorized code a NumPy
        # user would write (np.dot for a dot-product loop); CPython running the loops as
        # written is timed once, as the reference (``reference_s``).
        from benchmarks.workloads import SUITE_OF
        suite = SUITE_OF.get(wl.name)
        fn = suite.numpy_vectorized.get(wl.name, wl.fn) if suite else wl.fn
        if fn is not wl.fn:
            info["vectorized"] = fn.__name__
        return Prepared(lambda: fn(*inputs), info=info)


# ----------------------------------------------------------------------------- cppcodegen
def _decisions(cache) -> list[str]:
    """The choices cppcodegen measured while compiling into ``cache`` (its GEMM path per shape
    class, its parallel threshold: ``python -m cppcodegen cache info``), one line each."""
    try:
        from cppcodegen.runtime import tuning
        return [line.strip() for line in tuning.describe(cache) if line.startswith(" ")]
    except Exception:                     # an older cppcodegen: nothing to report
        return []


@contextlib.contextmanager
def cold_cache():
    """An empty kernel cache for this block: cppcodegen.fresh_cache() if it exists, else a
    temporary CPPCODEGEN_CACHE_DIR. Yields the directory path (the warm-start probe reuses it)."""
    old = os.environ.get("CPPCODEGEN_CACHE_DIR")
    ctx = None
    for modname in ("cppcodegen", "cppcodegen.runtime", "cppcodegen.runtime.cachedir"):
        try:
            fresh = getattr(importlib.import_module(modname), "fresh_cache", None)
        except Exception:
            continue
        if fresh is not None:
            ctx = fresh()
            break
    if ctx is not None and hasattr(ctx, "__enter__"):
        with ctx as got:
            path = got if isinstance(got, (str, os.PathLike)) else None
            yield str(path or os.environ.get("CPPCODEGEN_CACHE_DIR", ""))
        return
    with tempfile.TemporaryDirectory(prefix="cppcodegen-bench-") as tmp:
        os.environ["CPPCODEGEN_CACHE_DIR"] = tmp
        try:
            yield tmp
        finally:
            if old is None:
                os.environ.pop("CPPCODEGEN_CACHE_DIR", None)
            else:
                os.environ["CPPCODEGEN_CACHE_DIR"] = old


class CppCodegen(System):
    """Compiles in a fresh cache (cold compile = compile() + first call), then, in new
    processes that reuse that cache, measures a warm start (``measure.warm_start``) and the
    1-thread time (``measure.single_thread``); a workload with a ``tiny_size`` also gets its
    per-call time at that size (``tiny_call_s``, compiled in the same cache)."""
    name = "cppcodegen"
    module = "cppcodegen"

    def __init__(self, options=None, warm_probe=None, single_probe=None, repeats=3):
        self.options = options or {}
        self.warm_probe = warm_probe      # (workload name, cache dir) -> dict, or None
        self.single_probe = single_probe  # (workload, cache dir) -> dict, or None
        self.repeats = repeats

    def available(self):
        return True                       # a missing module is reported per workload as failed

    def setup(self, threads):
        try:
            self.mod = importlib.import_module("cppcodegen")
        except Exception as e:            # recorded per workload, never fatal
            self.mod, self.import_error = None, f"{type(e).__name__}: {e}"

    def version(self):
        return super().version() if self.mod else "unavailable"

    def prepare(self, wl, inputs):
        if self.mod is None:
            raise RuntimeError(f"import cppcodegen failed: {self.import_error}")
        compile_fn = getattr(self.mod, "compile", None)
        if compile_fn is None:
            raise RuntimeError("cppcodegen.compile does not exist yet")
        stack = contextlib.ExitStack()
        try:
            cache = stack.enter_context(cold_cache())
            t0 = time.perf_counter()
            f = compile_fn(wl.fn, options=self.options) if self.options else compile_fn(wl.fn)
            first = f(*inputs)
            cold = time.perf_counter() - t0
            info = {"compile_cold_s": cold, "cache_dir_files": _count_files(cache),
                    "tuning": _decisions(cache)}
            if self.warm_probe is not None:
                info.update(self.warm_probe(wl.name, cache))
            if self.single_probe is not None:
                info.update(self.single_probe(wl, cache))
            if wl.tiny_size is not None:
                info.update(self._tiny(compile_fn, wl))
        except BaseException:
            stack.close()
            raise
        del first
        return Prepared(lambda: f(*inputs), info=info, cleanup=stack.close)


    def _tiny(self, compile_fn, wl) -> dict:
        """Per-call time at ``wl.tiny_size`` (a new shape: compiled, checked, then timed)."""
        from benchmarks.measure import check, time_call
        tiny = wl.tiny_inputs()
        try:
            f = compile_fn(wl.fn, options=self.options) if self.options else compile_fn(wl.fn)
            ref = as_tuple(wl.fn(*tiny))
            ok, msg = check(as_tuple(f(*tiny)), ref)
            if not ok:
                return {"tiny_error": f"wrong at size {wl.tiny_size}: {msg}"}
            return {"tiny_call_s": time_call(lambda: f(*tiny), self.repeats)["time_s"],
                    "tiny_size": list(np.atleast_1d(wl.tiny_size).tolist())}
        except Exception as e:
            return {"tiny_error": f"{type(e).__name__}: {e}"[:300]}


def _count_files(path):
    return sum(len(files) for _, _, files in os.walk(path)) if path and os.path.isdir(path) else 0


# ----------------------------------------------------------------------------- numexpr
def _f32(**consts):
    return {k: np.float32(v) for k, v in consts.items()}


def _numexpr_builders(ne):
    ev = ne.evaluate
    A = _f32(a1=0.319381530, a2=-0.356563782, a3=1.781477937, a4=-1.821255978,
             a5=1.330274429, p=0.2316419, rs=0.3989422804014327, one=1.0, half=0.5,
             r=BS_RATE, v=BS_VOL, eps=1e-5, g1=0.7978845608028654, g2=0.044715)

    def chain(a, b, c):
        return lambda: ev("exp(a)*b + sin(c) - a*c", local_dict=dict(a=a, b=b, c=c))

    def softmax(x):
        def run():
            m = x.max(axis=-1, keepdims=True)
            e = ev("exp(x - m)", local_dict=dict(x=x, m=m))
            s = e.sum(axis=-1, keepdims=True)
            return ev("e / s", local_dict=dict(e=e, s=s))
        return run

    def layer_norm(x, w, b):
        def run():
            mu = x.mean(axis=-1, keepdims=True)
            d = ev("x - mu", local_dict=dict(x=x, mu=mu))
            var = ev("d*d", local_dict=dict(d=d)).mean(axis=-1, keepdims=True)
            return ev("d / sqrt(var + eps) * w + b",
                      local_dict=dict(d=d, var=var, w=w, b=b, **A))
        return run

    def gelu(x):
        return lambda: ev("half*x*(one + tanh(g1*(x + g2*x*x*x)))", local_dict=dict(x=x, **A))

    def black_scholes(s, k, t):
        def cnd(d):
            kk = ev("one/(one + p*abs(d))", local_dict=dict(d=d, **A))
            w = ev("one - rs*exp(-half*d*d)*kk*(a1+kk*(a2+kk*(a3+kk*(a4+kk*a5))))",
                   local_dict=dict(d=d, kk=kk, **A))
            return ev("where(d < 0, one - w, w)", local_dict=dict(d=d, w=w, **A))

        def run():
            d1 = ev("(log(s/k) + (r + half*v*v)*t) / (v*sqrt(t))",
                    local_dict=dict(s=s, k=k, t=t, **A))
            d2 = ev("d1 - v*sqrt(t)", local_dict=dict(d1=d1, t=t, **A))
            disc = ev("k*exp(-r*t)", local_dict=dict(k=k, t=t, **A))
            n1, n2 = cnd(d1), cnd(d2)
            env = dict(s=s, disc=disc, n1=n1, n2=n2, **A)
            return (ev("s*n1 - disc*n2", local_dict=env),
                    ev("disc*(one - n2) - s*(one - n1)", local_dict=env))
        return run

    def reduction(axis):
        expr = "sum(x)" if axis is None else f"sum(x, axis={axis})"
        return lambda x: (lambda: ev(expr, local_dict=dict(x=x)))

    def transpose_add(x):
        return lambda: ev("x + xt", local_dict=dict(x=x, xt=x.T))

    return {"chain": chain, "chain_small": chain, "softmax": softmax, "layer_norm": layer_norm,
            "gelu": gelu, "black_scholes": black_scholes, "sum_axis0": reduction(0),
            "sum_axis1": reduction(1), "sum_all": reduction(None),
            "transpose_add": transpose_add}


class NumExpr(System):
    name = "numexpr"
    module = "numexpr"

    def setup(self, threads):
        super().setup(threads)
        self.mod.set_num_threads(threads)
        self.builders = _numexpr_builders(self.mod)

    def prepare(self, wl, inputs):
        if wl.name not in self.builders:
            raise Skip("not expressible as numexpr strings")
        return Prepared(self.builders[wl.name](*inputs))


# ----------------------------------------------------------------------------- numba
class Numba(System):
    name = "numba"
    module = "numba"

    def setup(self, threads):
        super().setup(threads)
        self.mod.set_num_threads(min(threads, self.mod.config.NUMBA_NUM_THREADS))
        from benchmarks import numba_impls
        self.impls = numba_impls.build()

    def prepare(self, wl, inputs):
        if wl.name not in self.impls:
            raise Skip("no natural prange version")
        fn = self.impls[wl.name]
        t0 = time.perf_counter()
        fn(*inputs)                       # JIT compile happens on the first call
        return Prepared(lambda: fn(*inputs), to_numpy=_numba_to_numpy,
                        info={"compile_cold_s": time.perf_counter() - t0})


def _numba_to_numpy(out):
    # Numba boxes a float32 scalar result as a Python float; give it back its dtype.
    # (every workload is float32, so that is the dtype a scalar result had inside Numba).
    if isinstance(out, float):
        return (np.asarray(out, dtype=np.float32),)
    return as_tuple(out)


# ----------------------------------------------------------------------------- torch.compile
class TorchCompile(System):
    """torch.compile applied to the very same NumPy function, called with NumPy arrays."""
    name = "torch.compile"
    module = "torch"

    def setup(self, threads):
        super().setup(threads)
        self.mod.set_num_threads(threads)

    def prepare(self, wl, inputs):
        if "python_loop" in wl.tags:
            raise Skip("Python loops: dynamo unrolls them (a graph per trip count)")
        self.mod._dynamo.reset()
        f = self.mod.compile(wl.fn)
        t0 = time.perf_counter()
        f(*inputs)
        return Prepared(lambda: f(*inputs), info={"compile_cold_s": time.perf_counter() - t0})


# ----------------------------------------------------------------------------- jax.jit
def rebind_numpy(fn, np_like):
    """A copy of ``fn`` whose global ``np`` is ``np_like``; same-module helper functions it
    calls are rebound too, so the NumPy source is reused unchanged."""
    g = dict(fn.__globals__)
    g["np"] = np_like
    for name, obj in list(g.items()):
        if isinstance(obj, types.FunctionType) and obj.__module__ == fn.__module__:
            g[name] = types.FunctionType(obj.__code__, g, obj.__name__, obj.__defaults__,
                                         obj.__closure__)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


class JaxJit(System):
    name = "jax.jit"
    module = "jax"

    def setup(self, threads):
        super().setup(threads)
        import jax.numpy as jnp
        self.jnp = jnp

    def prepare(self, wl, inputs):
        jax = self.mod
        impl = None
        from benchmarks.workloads import SUITE_OF
        suite = SUITE_OF.get(wl.name)
        if suite and suite.jax:           # e.g. the loops' lax rewrite (enables jax_enable_x64)
            impl = suite.jax().get(wl.name)
        if isinstance(impl, str):         # (no rewrite: why)
            raise Skip(impl)
        f = jax.jit(impl if impl is not None else rebind_numpy(wl.fn, self.jnp))
        dev = [jax.device_put(a) for a in inputs]
        t0 = time.perf_counter()
        jax.block_until_ready(f(*dev))
        return Prepared(lambda: jax.block_until_ready(f(*dev)),
                        to_numpy=lambda out: as_tuple(jax.tree_util.tree_map(np.asarray, out)),
                        info={"compile_cold_s": time.perf_counter() - t0})


PEERS = (NumExpr, Numba, TorchCompile, JaxJit)


def installed_peers(names=None) -> list[System]:
    """Instances of the importable peers, optionally restricted to ``names``."""
    out = [cls() for cls in PEERS if names is None or cls.name in names]
    return [p for p in out if p.available()]
