"""Load a built shared object with cffi.

In:  the path of a ``.so`` and the C declarations (cdef) of what it exports.
Out: :class:`Library` ``(ffi, lib)``, memoized per (path, cdef) in a table
     emptied by :func:`cppcodegen.runtime.cachedir.clear_caches`; or
     :class:`LoadError` naming the path and the dlopen reason. A cache
     directory on a ``noexec`` mount raises :class:`CacheDirError` instead,
     saying so and naming ``CPPCODEGEN_CACHE_DIR``.

:func:`load_built` checks the entry (build.json, the .so's size and sha256)
before the dynamic linker ever sees the file.

Note: the dynamic linker keeps a library loaded for the life of the process,
so a file replaced at the same path is not re-read by a later dlopen here.
"""

from __future__ import annotations

import os
import threading
from typing import NamedTuple

import cffi

from .build import BuildResult, check_entry, invalidate
from .cachedir import ENV_VAR, CacheDirError, MemoDict, clear_on_fresh_cache, is_noexec, noexec_message

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
                directory = os.path.dirname(key[0])
                if is_noexec(directory):
                    raise CacheDirError(f"{noexec_message(directory)} (dlopen: {e})") from e
                if "failed to map segment" in str(e):   # noexec-like policy statvfs missed
                    raise LoadError(key[0], f"{e}; the cache directory may not allow executable "
                                    f"mappings: set {ENV_VAR} to another directory") from e
                raise LoadError(key[0], e) from e
            found = _LOADED[key] = Library(ffi, lib)
    return found


def load_built(result: BuildResult, cdef: str) -> Library:
    """Check and load ``result.so_path``; if the entry is damaged or dlopen
    fails, invalidate the cache entry (so the next compile rebuilds it) and
    raise :class:`LoadError`."""
    try:
        if (str(result.so_path), cdef) not in _LOADED:
            info, why = check_entry(result.so_path)
            if info is None:
                raise LoadError(result.so_path, why or "the cache entry is gone")
        return load_library(result.so_path, cdef)
    except LoadError as e:
        invalidate(result)
        raise LoadError(e.path, f"{e.reason} (cache entry removed; compiling "
                        "again will rebuild it)") from e
