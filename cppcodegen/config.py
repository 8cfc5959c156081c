"""All options of cppcodegen, in one place.

In: defaults below, environment variables (``CPPCODEGEN_<NAME>`` upper-cased), and the
``options=`` mapping given to ``compile``. Out: a frozen ``Options`` value that the
pipeline reads. ``Options.code_key()`` lists the options that change generated code; they
are part of every cache key. This is the only module that reads ``os.environ``.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields


def _env_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Options:
    # -- options that change the generated code (part of the cache key) --
    isa: str = "native"
    """Instruction set of the generated code: 'native' (the best this CPU runs, detected by
    cppcodegen.runtime.cpu), 'avx512', 'avx2' or 'scalar' (no SIMD). The resolved ISA is part
    of every cache key."""
    vectorize: bool = True
    """Emit Vectorized<T> inner loops; off = plain scalar loops only."""
    parallel: bool = True
    """Emit OpenMP parallel loops."""
    parallel_threshold: int = -1
    """Minimum number of elements a loop nest must touch before it is run in parallel (below
    it: on the calling thread, no thread wake-up). -1 (default): measured on this machine once
    and stored with the other measured choices (cppcodegen/autotune_threshold.py; 2^19 with
    tuning off); 0: every loop nest that can is parallel."""
    fuse: bool = True
    """Fuse pointwise and reduction stages into shared loop nests."""
    reduction_block: int = 16
    """Float sums: each vector lane adds this many elements into a block sum, and the block
    sums are added to the running sums with Kahan compensation (float32 lanes finished in
    double). Counted per lane, so the rounding error is the same whatever the ISA's lane
    count (it was 1024 elements per block: 64 per lane on AVX-512 but 128 on AVX2, and the
    AVX2 error 13x NumPy's on an 8192x8192 sum)."""
    generate_intermediate_hooks: bool = False
    """Report every materialized buffer to cppcodegen.hooks."""
    _testing_miscompile: str = ""
    """Testing only: the C++ renderer writes this op (e.g. 'exp') wrong on purpose (its result
    times 1.001), so tests can prove that ``cppcodegen.check`` finds the broken buffer."""
    # -- options that do not change code --
    sanitize: str = ""
    """Sanitizers to build kernels with, e.g. 'address,undefined' (CPPCODEGEN_SANITIZE):
    ``-fsanitize=<value> -fno-sanitize-recover=all``, so any finding aborts the process. The
    compiler flags change (they are part of every cache key), the C++ does not. A Python
    process can load AddressSanitizer kernels only with gcc's libasan preloaded
    (``make sanitize`` sets that up)."""
    cxx: str = ""
    """C++ compiler; empty = the CXX environment variable, else g++, else clang++."""
    debug: bool = False
    """Print the graph, the loop IR, the C++ source and the compile command as they are made."""
    recompile_limit: int = 8
    """Compiled variants per function; beyond it a call that fits none of them runs the plain
    NumPy function instead of compiling again (with a warning, once)."""
    fallback: bool = True
    """A function using a construct cppcodegen cannot compile (UnsupportedError,
    DataDependentError) runs as the plain Python function for those arguments, with a
    FallbackWarning naming the construct and its line; off (CPPCODEGEN_FALLBACK=0): the
    error is raised. The test suite runs with it off."""
    cache_dir: str = ""
    """Kernel cache directory; empty = CPPCODEGEN_CACHE_DIR or the per-user default."""
    tune: bool = True
    """Measured choices (cppcodegen/autotune.py): a float32/float64 matrix product runs our
    ccg::gemm unless a short measurement on this machine (made once per shape class, kept in
    the cache directory's tuning/) found the BLAS NumPy links, called from the kernel,
    faster. Off (CPPCODEGEN_TUNE=0): the
    static rule alone, every such product runs ccg::gemm (reproducible builds). The paths
    chosen are part of the graph-cache key, so this option itself is not."""

    CODE_KEYS = ("isa", "vectorize", "parallel", "parallel_threshold", "fuse",
                 "reduction_block", "generate_intermediate_hooks", "_testing_miscompile")

    def resolved_isa(self) -> str:
        """'avx512', 'avx2' or 'scalar': ``isa`` with 'native' replaced by what this CPU runs."""
        from .runtime import cpu
        return cpu.resolve_isa(self.isa)

    def code_key(self) -> str:
        """The code-changing options as text, with the ISA resolved (and, for -march=native,
        the CPU named), so the same settings on another CPU give another key."""
        from .runtime import cpu
        values = {k: getattr(self, k) for k in self.CODE_KEYS}
        values["isa"] = cpu.isa_key(self.resolved_isa())
        return ";".join(f"{k}={v!r}" for k, v in values.items())


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
    opts = dataclasses.replace(Options(), **values)
    if opts.isa not in ("native", "avx512", "avx2", "scalar"):
        raise ValueError(f"cppcodegen option isa={opts.isa!r} (CPPCODEGEN_ISA): expected one of "
                         "native, avx512, avx2, scalar")
    return opts


def cache_dir_setting(opts: Options) -> str | None:
    """The cache directory the user asked for, or None for the runtime's default."""
    return opts.cache_dir or os.environ.get("CPPCODEGEN_CACHE_DIR") or None
