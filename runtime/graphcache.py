"""The graph-level cache: from a traced graph's key straight to a loadable variant.

In: a key made of named parts (the canonical graph, the input signature, the options that
change code, the package version, the compiler and the headers) and, on a miss, what the
compiler produced (the .so path, the cffi cdef, the call Plan). Out: on a hit, those same
things, so a new process skips lowering, code generation and the compiler: it traces,
hashes, loads. Entries live in ``<cache_dir>/graphs/<key[:2]>/<key>.pkl``, written to a
temporary name and renamed into place; an entry whose .so is gone counts as a miss.
"""
from __future__ import annotations

import hashlib
import logging
import os
import pickle
import secrets
from pathlib import Path

from .build import _include_digest, compiler_version

log = logging.getLogger("cppcodegen.cache")
FORMAT = 1


def graph_key(parts: dict) -> tuple[str, dict]:
    """sha256 over named parts; returns (key, {part: short hash}) for explaining misses."""
    short = {name: hashlib.sha256(str(v).encode()).hexdigest() for name, v in parts.items()}
    key = hashlib.sha256("".join(f"{n}={d}\n" for n, d in sorted(short.items())).encode()).hexdigest()
    return key, {n: d[:12] for n, d in short.items()}


def toolchain_parts(cxx: str, cache_dir, include_dir) -> dict:
    return {"compiler": compiler_version(cxx, cache_dir), "cxx": cxx,
            "headers": _include_digest(Path(include_dir))}


def _path(cache_dir, key: str) -> Path:
    return Path(cache_dir) / "graphs" / key[:2] / f"{key}.pkl"


def lookup(cache_dir, key: str):
    """The stored entry (a dict) or None."""
    path = _path(cache_dir, key)
    try:
        with open(path, "rb") as fh:
            entry = pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception as e:          # a corrupt entry is a miss, never a crash
        log.warning("ignoring corrupt graph cache entry %s: %s", path, e)
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    if not os.path.exists(entry.get("so_path", "")):
        return None
    return entry


def store(cache_dir, key: str, entry: dict) -> None:
    path = _path(cache_dir, key)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(dict(entry, format=FORMAT), fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
