"""Load a built shared object with cffi.

In:  the path of a ``.so`` and the C declarations (cdef) of what it exports.
Out: :class:`Library` ``(ffi, lib)``, memoized per (path, cdef) in a table
     emptied by :func:`cppcodegen.runtime.cachedir.clear_caches`; or
     :class:`LoadError` naming the path and the dlopen reason. A cache
     directory on a ``noexec`` mount raises :class:`CacheDirError` instead,
     saying so and naming ``CPPCODEGEN_CACHE_DIR``.

:func:`load_built` checks the entry (build.json, the .so's size and sha256)
before the dynamic linker ever sees the file.

Parsing a cdef needs pycparser (~20 ms in a fresh process), so the parsed
declarations are kept beside the .so as ``ffi-<sha256(cdef)[:16]>.py``, the
module cffi's out-of-line ABI mode would emit; a warm process reads its
literal arguments (``ast.literal_eval``, nothing is executed) and builds the
FFI with ``_cffi_backend`` alone (~0.5 ms).

Note: the dynamic linker keeps a library loaded for the life of the process,
so a file replaced at the same path is not re-read by a later dlopen here.
"""

from __future__ import annotations

import ast
import hashlib
import os
import secrets
import threading
from pathlib import Path
from typing import NamedTuple

from . import openmp
from .build import BuildResult, check_entry, invalidate
from .cachedir import ENV_VAR, CacheDirError, MemoDict, check_private_file, clear_on_fresh_cache, is_noexec, noexec_message

_LOADED = clear_on_fresh_cache(MemoDict())   # (path, cdef) -> Library
_LOCK = threading.Lock()


class LoadError(RuntimeError):
    """dlopen failed. Attributes: ``path``, ``reason``."""

    def __init__(self, path, reason):
        super().__init__(f"cannot load compiled library {path}: {reason}")
        self.path = str(path)
        self.reason = str(reason)


class Library(NamedTuple):
    ffi: object      # a cffi FFI (or the equivalent _cffi_backend.FFI)
    lib: object


def _ffi_path(so_path: str, cdef: str) -> Path:
    digest = hashlib.sha256(cdef.encode()).hexdigest()[:16]
    return Path(so_path).parent / f"ffi-{digest}.py"


def _read_ffi(path: Path):
    """The FFI stored at ``path``, or None if it is missing or not what we write."""
    import _cffi_backend
    try:
        with open(path, "rb") as fh:
            check_private_file(path, os.fstat(fh.fileno()))
            text = fh.read().decode()
        tree = ast.parse(text)
        call = tree.body[-1].value
        if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "_cffi_backend.FFI"):
            return None
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        return _cffi_backend.FFI(*args, **kwargs)
    except CacheDirError:
        raise
    except Exception:        # missing, corrupt, or from another cffi version: parse again
        return None


def _make_ffi(so_path: str, cdef: str):
    path = _ffi_path(so_path, cdef)
    ffi = _read_ffi(path)
    if ffi is not None:
        return ffi
    import cffi
    from cffi import recompiler
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.part")
    try:
        recompiler.make_py_source(ffi, "ccg_ffi", str(tmp))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except Exception:         # read-only entry, or a cffi without make_py_source: no memo
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return ffi


def load_library(so_path, cdef: str) -> Library:
    """Return ``Library(ffi, lib)`` for ``so_path`` declared by ``cdef``."""
    key = (str(so_path), cdef)
    found = _LOADED.get(key)
    if found is not None:
        return found
    with _LOCK:
        found = _LOADED.get(key)
        if found is None:
            ffi = _make_ffi(key[0], cdef)
            openmp.prepare()            # before the first kernel loads libgomp
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
