"""cppcodegen: compile plain NumPy functions to fused, vectorized, multithreaded C++.

    @cppcodegen.compile
    def softmax(x):
        m = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=-1, keepdims=True)

Importing this package is cheap: sympy and the code generator load on the first compile.

The pipeline, one folder per stage (imports point down this list, never up; tests/test_layout.py
checks that there are no import circles and no module over its line budget)::

    api.py            compile / explain / check: the driver runs the stages below in order
    variants.py       which compiled variant serves a call (automatic dynamic sizes, ints)
    frontend/         Python function + call arguments -> Graph
      signature.py      arguments -> guards (specs); mark_dynamic
      capture.py        the source rewritten: loops, branches, returns -> calls on control.py
        rewrite, returns, astutil, control, carried, carried_types, iteration
      trace.py          proxies record what the function does -> Graph
        proxy, ndarray, sizes, elementwise, views, indexing, selection, reductions,
        linalg, creation, externs, random, pymath, complexes, replace, effects, puts
    passes/           Graph -> loop IR (lower, lower_assign, lower_control) -> kernels
                      (schedule: fusion, loop order)
    ir/               plain data between stages: graph (Graph, Node), loopir (loop IR),
                      shapes (symbolic sizes, guards), ufuncs (the op table)
    backend/          kernels -> C++ text: program (translation unit, entry points), kernels
                      (one function per form) over reductions over loops; reuse, dedup,
                      memory, sizes, cexpr (C expressions), gemmgen, writer
    runtime/          C++ -> .so in the cache -> cffi -> a callable (never imports the compiler)
    checking/         beside the pipeline: reference interpreter, check mode, backend
                      registry, compile callbacks
    integrations/     around it: dask (axes, reductions, layers), chunks (per-chunk
                      execution), pickling by reference
"""
from . import api
from .api import (CompiledFunction, Explanation, Recompile, RecompileLimitWarning, check, compile,
                  explain)
from .frontend.signature import mark_dynamic
from .frontend.iteration import prange
from .errors import CppCodegenError, DataDependentError, FallbackWarning, TraceError, UnsupportedError
from .runtime import CompileError, clear_caches, clear_on_fresh_cache, fresh_cache
import sys as _sys

# extension points (light modules: no sympy, no code generator)
from .checking import callback
from .runtime import hooks
from .checking.backends import list_backends, register_backend
from .checking.check import CheckError, CheckReport
from .runtime.device import manual_seed
from .integrations import pickling as _pickling  # noqa: F401 -- installs pickling by reference

# the documented extension modules keep their short names (import cppcodegen.hooks, ...)
_sys.modules[__name__ + ".hooks"] = hooks
_sys.modules[__name__ + ".callback"] = callback


def _dask_dispatch(compiled, args):
    from .integrations.dask import dispatch     # lazy: Dask loads on first use (import time)
    return dispatch(compiled, args)


api.ARRAY_DISPATCH.append(_dask_dispatch)


def __getattr__(name):
    if name == "dask":      # lazy: the Dask integration loads on first use (import time)
        from .integrations import dask
        return dask
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"
__all__ = ["compile", "explain", "CompiledFunction", "Explanation", "UnsupportedError", "FallbackWarning",
           "DataDependentError", "TraceError", "CppCodegenError", "CompileError", "fresh_cache",
           "clear_caches", "clear_on_fresh_cache", "hooks", "callback", "check", "CheckError",
           "CheckReport", "register_backend", "list_backends", "manual_seed", "mark_dynamic",
           "Recompile", "RecompileLimitWarning", "prange"]
