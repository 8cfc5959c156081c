"""Load a built shared object with cffi.

In:  the path of a ``.so`` and the C declarations (cdef) of what it exports.
Out: :class:`Library` ``(ffi, lib)``, memoized per (path, cdef) in a table
     emptied by :func:`cppcodegen.runtime.cachedir.clear_caches`; or
     :class:`LoadError` naming the path and the dlopen reason.

Note: the dynamic linker keeps a library loaded for the life of the process,
so a file replaced at the same path is not re-read by a later dlopen here.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import cffi

from .build import BuildResult, invalidate
from .cachedir import MemoDict, clear_on_fresh_cache

_LOADED = clear_on_fresh_cache(MemoDict())   # (path, cdef) -> Library
_LOCK = threading.Lock()


class LoadError(RuntimeError):
    """dlopen failed. Attributes: ``path``, ``reason``."""

    def __init__(self, path, reason):
        super().__init__(f"cannot load compiled library {path}: {reason}")
        self.path = str(path)
        self.reason = str(reason)


class Library(NamedTuple):
    ffi: cffi.FFI
    lib: object


def load_library(so_path, cdef: str) -> Library:
    """Return ``Library(ffi, lib)`` for ``so_path`` declared by ``cdef``."""
    key = (str(so_path), cdef)
    found = _LOADED.get(key)
    if found is not None:
        return found
    with _LOCK:
        found = _LOADED.get(key)
        if found is None:
            ffi = cffi.FFI()
            ffi.cdef(cdef)
            try:
                lib = ffi.dlopen(key[0])
            except OSError as e:
                raise LoadError(key[0], e) from e
            found = _LOADED[key] = Library(ffi, lib)
    return found


def load_built(result: BuildResult, cdef: str) -> Library:
    """Load ``result.so_path``; if dlopen fails, invalidate the cache entry
    (so the next compile rebuilds it) and raise :class:`LoadError`."""
    try:
        return load_library(result.so_path, cdef)
    except LoadError as e:
        invalidate(result)
        raise LoadError(e.path, f"{e.reason} (cache entry removed; compiling "
                        "again will rebuild it)") from e
