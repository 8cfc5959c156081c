"""cppcodegen: compile plain NumPy functions to fused, vectorized, multithreaded C++.

    @cppcodegen.compile
    def softmax(x):
        m = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=-1, keepdims=True)

Importing this package is cheap: sympy and the code generator load on the first compile.
"""
from .api import (CompiledFunction, Explanation, Recompile, RecompileLimitWarning, compile,
                  explain, mark_dynamic)
from .errors import CppCodegenError, DataDependentError, TraceError, UnsupportedError
from .runtime import CompileError, clear_caches, clear_on_fresh_cache, fresh_cache
# extension points (light modules: no sympy, no code generator)
import sys as _sys

from .checking import callback
from .runtime import hooks
from .checking.backends import list_backends, register_backend
from .checking.check import CheckError, CheckReport, check
from .runtime.random import manual_seed

# the documented extension modules keep their short names (import cppcodegen.hooks, ...)
_sys.modules[__name__ + ".hooks"] = hooks
_sys.modules[__name__ + ".callback"] = callback


def __getattr__(name):
    if name == "dask":      # lazy: the Dask integration loads on first use (import time)
        from .integrations import dask
        return dask
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"
__all__ = ["compile", "explain", "CompiledFunction", "Explanation", "UnsupportedError",
           "DataDependentError", "TraceError", "CppCodegenError", "CompileError", "fresh_cache",
           "clear_caches", "clear_on_fresh_cache", "hooks", "callback", "check", "CheckError",
           "CheckReport", "register_backend", "list_backends", "manual_seed", "mark_dynamic",
           "Recompile", "RecompileLimitWarning"]
