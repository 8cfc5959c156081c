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


SPIN = 2000     # GOMP_SPINCOUNT: ~0.1 ms (~45 ns per spin on the Zen 4 EPYC VM)


def openmp_wait() -> str:
    """Before libgomp is loaded: how idle OpenMP threads wait, unless the user chose
    (OMP_WAIT_POLICY, GOMP_SPINCOUNT): a thread that finishes a parallel region spins ``SPIN``
    times, then sleeps (PASSIVE sets only what happens after the spins). Returns the setting;
    the decisions measured under it (runtime/tuning.py) are keyed by it. libgomp reads it once,
    when the first kernel loads it.

    Measured on the 2-core EPYC VM. Loaded by other work (load ~4.5), long spins are ruinous: a
    parallel chain exp(a)*b+sin(c)-a*c at 2^18 elements took 199 us sleeping at once, 222 /
    278 / 2241 us with 10^3 / 10^4 / 10^5 spins, and idle calls burned up to 50x the CPU.
    Idle, sleeping at once costs a wake-up per region (a*b+a on 2^14 float32: 53 us on two
    threads against 3.8 us on one; 4 us with the short spin), so only half-megabyte loops were
    worth threads, and a float32 256^3 product ran faster through BLAS; ~0.1 ms of spinning
    keeps the workers awake between the kernels of one call and between calls in a loop, at
    1.12 vs 1.08 ms of CPU per call for calls 0.1 s apart. (Without PASSIVE, libgomp's default
    policy with the same spin count stalled 4-12 ms every ~20 calls here.)"""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        os.environ["GOMP_SPINCOUNT"] = str(SPIN)
    return " ".join(f"{k}={os.environ[k]}" for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
                    if k in os.environ)


def _serial_after_fork() -> None:
    """In a child forked after kernels ran: OpenMP on the calling thread only. libgomp's
    worker threads do not survive a fork, and a parallel region in the child waits for them
    forever (a multiprocessing Pool, fork start method, hung at its first compiled call)."""
    import ctypes
    try:
        gomp = ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD)
        gomp.omp_set_num_threads(ctypes.c_int(1))
    except (OSError, AttributeError):
        pass


_FORK_HOOK: list = []


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
            openmp_wait()
            if not _FORK_HOOK and hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=_serial_after_fork)
                _FORK_HOOK.append(True)
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
