"""All options of cppcodegen, in one place.

In: defaults below, environment variables (``CPPCODEGEN_<NAME>`` upper-cased), and the
``options=`` mapping given to ``compile``. Out: a frozen ``Options`` value that the
pipeline reads. ``Options.code_key()`` lists the options that change generated code; they
are part of every cache key. This is the only module that reads ``os.environ``.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields


def _env_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Options:
    # -- options that change the generated code (part of the cache key) --
    simd: str = "native"
    """ISA for Vectorized<T>: 'native' (what this CPU has), 'avx512', 'avx2' or 'scalar'."""
    vectorize: bool = True
    """Emit Vectorized<T> inner loops; off = plain scalar loops only."""
    parallel: bool = True
    """Emit OpenMP parallel loops."""
    parallel_threshold: int = 131072
    """Minimum number of elements a loop nest must touch before it is run in parallel."""
    fuse: bool = True
    """Fuse pointwise and reduction stages into shared loop nests."""
    reduction_block: int = 4096
    """Inner reduction loops of float sums are blocked by this many elements (accuracy)."""
    generate_intermediate_hooks: bool = False
    """Report every materialized buffer to cppcodegen.hooks."""
    # -- options that do not change code --
    cxx: str = "g++"
    """C++ compiler (the CXX environment variable overrides)."""
    debug: bool = False
    """Print the graph, the loop IR, the C++ source and the compile command as they are made."""
    cache_dir: str = ""
    """Kernel cache directory; empty = CPPCODEGEN_CACHE_DIR or the per-user default."""

    CODE_KEYS = ("simd", "vectorize", "parallel", "parallel_threshold", "fuse",
                 "reduction_block", "generate_intermediate_hooks")

    def code_key(self) -> str:
        return ";".join(f"{k}={getattr(self, k)!r}" for k in self.CODE_KEYS)


_FIELDS = {f.name: f for f in fields(Options)}


def _convert(name: str, value):
    kind = type(getattr(Options(), name))
    if kind is bool:
        return value if isinstance(value, bool) else _env_bool(str(value))
    return kind(value)


def get_options(overrides: dict | None = None) -> Options:
    """Defaults, then environment variables, then ``overrides``; unknown names raise."""
    values = {}
    for name in _FIELDS:
        env = os.environ.get("CPPCODEGEN_" + name.upper())
        if env is not None:
            values[name] = _convert(name, env)
    if os.environ.get("CXX"):
        values.setdefault("cxx", os.environ["CXX"])
    for name, value in (overrides or {}).items():
        if name not in _FIELDS:
            known = ", ".join(sorted(_FIELDS))
            raise ValueError(f"unknown cppcodegen option {name!r}; known options: {known}")
        values[name] = _convert(name, value)
    return dataclasses.replace(Options(), **values)


def cache_dir_setting(opts: Options) -> str | None:
    """The cache directory the user asked for, or None for the runtime's default."""
    return opts.cache_dir or os.environ.get("CPPCODEGEN_CACHE_DIR") or None
