"""Pickling compiled functions by reference.

Importing this module installs ``CompiledFunction.__reduce__`` and ``__dask_tokenize__``
(``cppcodegen/__init__.py`` imports it; ``api.py`` does not know this module).

In: a ``CompiledFunction``. Out: what ``pickle`` needs to make it again elsewhere. A
compiled function that its module holds under its function's name (``@cppcodegen.compile``
on a module-level function) pickles as that name, like a function. Any other pickles as the
original Python function, the backend name, the options, whether it compiles for symbolic
sizes, and a content key -- never machine code, never the compiled variants. Unpickling
neither traces nor compiles: it returns the compiled function this process already holds
under that content key, or makes a new (empty) one and keeps it, so a Dask worker that
receives the same function in every task builds one object and compiles (or loads from
the shared kernel cache) once per signature.

Functions defined in ``__main__`` and closures pickle by value through cloudpickle (which
Dask uses); plain ``pickle`` stores module-level functions by name. The content key is a
hash of the function's module, name, byte code, constants, defaults and closure values plus
the backend and options: cheap, deterministic across processes, and it is what
``__dask_tokenize__`` returns.
"""
from __future__ import annotations

import hashlib
import importlib
import pickle
import threading
import types

import numpy as np

from ..runtime.cachedir import clear_on_fresh_cache
from ..api import CompiledFunction


class _Memo(dict):
    def cache_clear(self):
        self.clear()

__all__ = ["content_key", "reduce_compiled", "rebuild", "is_dynamic"]

_MEMO = clear_on_fresh_cache(_Memo())   # content key -> CompiledFunction (until fresh_cache())
_LOCK = threading.Lock()


def is_dynamic(cf) -> bool:
    """Compiled with every size symbolic (``dynamic=True``)."""
    return cf.dynamic is True


def content_key(cf) -> str:
    """The compiled function's content key (computed once, then kept on the object)."""
    key = cf.__dict__.get("_content_key")
    if key is None:
        h = hashlib.sha256()
        h.update(_token(cf.fn, 0).encode())
        h.update(repr((cf.backend, sorted(cf.options.items()), cf.dynamic)).encode())
        key = cf.__dict__["_content_key"] = h.hexdigest()[:32]
    return key


def reduce_compiled(cf):
    """``CompiledFunction.__reduce__``: by name when ``cf`` is what its module holds under
    the function's name (``@cppcodegen.compile`` on a module-level function), else rebuilt
    from (fn, backend, options, dynamic, key)."""
    fn, found = cf.fn, _by_name(cf.fn)
    if found is not None:
        module, qualname, obj = found
        if obj is cf:
            return (resolve, (module, qualname))
        if getattr(obj, "fn", None) is fn:      # the decorated function: name -> its .fn
            fn = _FunctionOf(module, qualname)
    key = content_key(cf)
    with _LOCK:
        _MEMO.setdefault(key, cf)       # unpickling in this process gives this object back
    return (rebuild, (fn, cf.backend, cf.options, cf.dynamic, key))


def resolve(module, qualname):
    """The object ``module`` holds under ``qualname`` (importing the module)."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def function_of(module, qualname):
    return resolve(module, qualname).fn


class _FunctionOf:
    """Pickles as 'the Python function of the compiled function ``module.qualname``'."""

    def __init__(self, module, qualname):
        self.module, self.qualname = module, qualname

    def __reduce__(self):
        return (function_of, (self.module, self.qualname))


def _by_name(fn):
    """(module, qualname, what the module holds there) for a function importable by name."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        return None
    try:
        return module, qualname, resolve(module, qualname)
    except Exception:
        return None


def rebuild(fn, backend, options, dynamic, key):
    """Unpickle: the compiled function held under ``key``, or a new one (nothing compiled)."""
    found = _MEMO.get(key)
    if found is not None:
        return found
    with _LOCK:
        found = _MEMO.get(key)
        if found is None:
            found = CompiledFunction(fn, backend, options, dynamic)
            found.__dict__["_content_key"] = key
            _MEMO[key] = found
    return found


def _token(obj, depth: int) -> str:
    """A deterministic text standing for ``obj``'s content (bounded depth)."""
    if depth > 6:
        return f"<deep {type(obj).__qualname__}>"
    tokenize = getattr(type(obj), "__dask_tokenize__", None)
    if tokenize is not None and not isinstance(obj, type):
        return f"{type(obj).__qualname__}:{tokenize(obj)!r}"
    if isinstance(obj, (types.FunctionType, types.MethodType)):
        if isinstance(obj, types.MethodType):
            return f"method({_token(obj.__func__, depth + 1)}, {_token(obj.__self__, depth + 1)})"
        parts = [obj.__module__ or "", obj.__qualname__, _code_token(obj.__code__, depth),
                 _token(obj.__defaults__, depth + 1), _token(obj.__kwdefaults__, depth + 1)]
        for cell in obj.__closure__ or ():
            try:
                parts.append(_token(cell.cell_contents, depth + 1))
            except ValueError:                      # an empty cell
                parts.append("<empty>")
        return "fn(" + "|".join(parts) + ")"
    if isinstance(obj, np.ndarray):
        h = hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()[:16]
        return f"ndarray({obj.dtype},{obj.shape},{h})"
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes, np.generic,
                                       np.dtype, type)):
        return repr(obj)
    if isinstance(obj, (tuple, list, frozenset, set)):
        items = sorted(map(repr, obj)) if isinstance(obj, (set, frozenset)) else \
            [_token(v, depth + 1) for v in obj]
        return f"{type(obj).__name__}({', '.join(items)})"
    if isinstance(obj, dict):
        return "dict(" + ", ".join(f"{k!r}: {_token(v, depth + 1)}"
                                   for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0]))) + ")"
    if isinstance(obj, types.ModuleType):
        return f"module({obj.__name__})"
    if hasattr(obj, "fn") and hasattr(obj, "variants"):        # a CompiledFunction
        return f"compiled({content_key(obj)})"
    try:
        return f"{type(obj).__qualname__}:" + hashlib.sha256(pickle.dumps(obj, 4)).hexdigest()[:16]
    except Exception:
        return f"{type(obj).__qualname__}@{id(obj):x}"       # unpicklable: this process only


CompiledFunction.__reduce__ = reduce_compiled       # by reference: fn, options, a content key
CompiledFunction.__dask_tokenize__ = lambda self: ("cppcodegen.CompiledFunction", content_key(self))


def _code_token(code, depth) -> str:
    consts = [(_code_token(c, depth) if isinstance(c, types.CodeType) else _token(c, depth + 1))
              for c in code.co_consts]
    h = hashlib.sha256(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars, consts)).encode())
    return h.hexdigest()[:16]
