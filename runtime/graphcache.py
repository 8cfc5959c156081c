"""The graph-level cache: from a traced graph's key straight to a loadable variant.

In: a key made of named parts (the canonical graph, the input signature, the options that
change code, the resolved ISA, the package version, the compiler and the headers) and, on a
miss, what the compiler produced (the .so path, the cffi cdef, the call Plan). Out: on a hit,
those same things, so a new process skips lowering, code generation and the compiler: it
traces, hashes, loads. Entries live in ``<cache_dir>/graphs/<key[:2]>/<key>.pkl`` (mode 0600,
written to a temporary name and renamed into place) and name their .so relative to the cache
directory. A hit is returned only if the kernel entry it names is intact (build.json complete,
the .so's size and sha256 as recorded); a corrupt entry is a miss with a :class:`CacheWarning`,
an entry owned by another user or writable by others is refused (:class:`CacheDirError`).
"""
from __future__ import annotations

import hashlib
import logging
import os
import pickle
import secrets
import warnings
from pathlib import Path

from .build import _include_digest, check_entry, compiler_version, resolve_compiler
from .cachedir import CacheDirError, CacheWarning, check_private_file

log = logging.getLogger("cppcodegen.cache")
FORMAT = 2
SUBDIR = "graphs"


def graph_key(parts: dict) -> tuple[str, dict]:
    """sha256 over named parts; returns (key, {part: short hash}) for explaining misses."""
    short = {name: hashlib.sha256(str(v).encode()).hexdigest() for name, v in parts.items()}
    key = hashlib.sha256("".join(f"{n}={d}\n" for n, d in sorted(short.items())).encode()).hexdigest()
    return key, {n: d[:12] for n, d in short.items()}


def toolchain_parts(cxx: str, cache_dir, include_dir) -> dict:
    return {"compiler": compiler_version(cxx, cache_dir), "cxx": resolve_compiler(cxx),
            "headers": _include_digest(Path(include_dir))}


_STAMPS: dict = {}


def source_stamp(package_dir) -> str:
    """Name, size and mtime of every module of the compiler under ``package_dir`` (a scandir per
    subpackage, memoized per process): editing the compiler makes graph entries miss, so a graph entry
    never pairs a traced graph with code or a call plan made by another compiler version."""
    package_dir = str(package_dir)
    stamp = _STAMPS.get(package_dir)
    if stamp is None:
        rows = sorted(_stamp_rows(package_dir, ""))
        stamp = _STAMPS[package_dir] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    return stamp


def _stamp_rows(directory, prefix):
    """Rows of every ``.py`` file under ``directory`` (its subpackages too)."""
    for e in os.scandir(directory):
        if e.name.endswith(".py"):
            yield f"{prefix}{e.name}:{e.stat().st_size}:{e.stat().st_mtime_ns}"
        elif e.is_dir() and not e.name.startswith((".", "__")):
            yield from _stamp_rows(e.path, f"{prefix}{e.name}/")


def _path(cache_dir, key: str) -> Path:
    return Path(cache_dir) / SUBDIR / key[:2] / f"{key}.pkl"


def lookup(cache_dir, key: str):
    """The stored entry (a dict with an absolute ``so_path``) or None."""
    path = _path(cache_dir, key)
    try:
        with open(path, "rb") as fh:
            check_private_file(path, os.fstat(fh.fileno()))
            entry = pickle.load(fh)
    except FileNotFoundError:
        return None
    except CacheDirError:
        raise
    except Exception as e:          # a corrupt entry is a miss, never a crash
        warnings.warn(f"cppcodegen: graph cache entry {path} is corrupt ({type(e).__name__}: "
                      f"{e}); rebuilding it", CacheWarning, stacklevel=2)
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or "so" not in entry:
        return None
    so_path = Path(cache_dir) / entry["so"]
    info, why = check_entry(so_path)
    if info is None:                 # the kernel build warns (under its lock) and rebuilds
        log.debug("graph cache entry %s: kernel %s not usable (%s)", key[:16], so_path, why)
        return None
    return dict(entry, so_path=str(so_path))


def store(cache_dir, key: str, entry: dict) -> None:
    """Publish ``entry`` (with ``so_path`` inside ``cache_dir``) atomically."""
    path = _path(cache_dir, key)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = dict(entry, format=FORMAT)
    data["so"] = os.path.relpath(data.pop("so_path"), cache_dir)
    try:        # (a plan that names a class defined inside a function is not stored:
        blob = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)  # its kernel still is)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        log.debug("graph cache entry %s not stored: %s", key[:16], e)
        return
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with open(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def entries(cache_dir) -> list[Path]:
    """Paths of every graph entry under ``cache_dir``."""
    root = Path(cache_dir) / SUBDIR
    return sorted(root.glob("??/*.pkl")) if root.is_dir() else []
