"""Which SIMD instruction set this CPU runs, and the compiler flags that target one.

In:  ``/proc/cpuinfo`` (read once per process, ~0.1 ms) and an ISA name.
Out: :func:`detect_isa` -> ``'avx512' | 'avx2' | 'scalar'``, the best ISA that
     ``include/cppcodegen/vec.h`` implements and this CPU (and kernel) supports;
     :func:`resolve_isa` -> a requested ISA (``'native'`` = detected) checked to run here;
     :func:`isa_flags` -> the compiler flags that make the generated code use exactly
     that ISA; :func:`isa_key` -> the text that goes into every cache key.

``vec.h`` uses its AVX-512 path only with AVX512F+BW+DQ+VL, so ``'avx512'`` requires all
four (plus AVX2 and FMA); ``'avx2'`` requires AVX2 and FMA. Anything else (including a
non-x86 machine) is ``'scalar'``: ``-DCCG_NO_SIMD`` selects the portable fallback.
"""
from __future__ import annotations

import functools
import hashlib
import platform

ISAS = ("avx512", "avx2", "scalar")            # best first
REQUESTS = ("native",) + ISAS
_NEEDS = {"avx512": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"},
          "avx2": {"avx2", "fma"}, "scalar": set()}
_EXPLICIT = {"avx512": ["-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mfma", "-mavx2"],
             "avx2": ["-mavx2", "-mfma", "-mno-avx512f"],
             "scalar": ["-DCCG_NO_SIMD"]}


@functools.lru_cache(maxsize=None)
def cpu_info() -> tuple[frozenset, str]:
    """(flags, model name) of the first CPU in /proc/cpuinfo; empty on other systems."""
    flags, model = frozenset(), ""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return flags, model
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                name, _, value = line.partition(":")
                name = name.strip()
                if name == "flags" and not flags:
                    flags = frozenset(value.split())
                elif name == "model name" and not model:
                    model = value.strip()
                if flags and model:
                    break
    except OSError:
        pass
    return flags, model


def supports(isa: str, flags=None) -> bool:
    """True if a CPU with these flags (default: this one) can run code built for ``isa``."""
    return _NEEDS[isa] <= (cpu_info()[0] if flags is None else flags)


def detect_isa() -> str:
    """The best ISA this CPU runs: 'avx512', 'avx2' or 'scalar'."""
    return next(isa for isa in ISAS if supports(isa))


def resolve_isa(requested: str) -> str:
    """'native' -> :func:`detect_isa`; an explicit ISA is checked to run on this CPU."""
    if requested == "native":
        return detect_isa()
    if requested not in ISAS:
        raise ValueError(f"cppcodegen option isa={requested!r} (CPPCODEGEN_ISA): expected one of "
                         f"{', '.join(REQUESTS)}")
    if not supports(requested):
        raise ValueError(f"cppcodegen option isa={requested!r} (CPPCODEGEN_ISA): this CPU cannot "
                         f"run {requested} code (it supports {detect_isa()}); use isa='native' or "
                         f"one of {', '.join(ISAS[ISAS.index(detect_isa()):])}")
    return requested


def isa_flags(isa: str) -> list[str]:
    """Compiler flags that target exactly ``isa`` (one of :data:`ISAS`).

    avx512 on a CPU that has it: ``-march=native`` (its other extensions and its tuning come
    along); else the explicit AVX-512 subsets vec.h needs. avx2: explicit flags on the
    baseline x86-64 target, with AVX-512 switched off. scalar: vec.h's portable fallback.
    """
    if isa not in _EXPLICIT:
        raise ValueError(f"unknown ISA {isa!r}: expected one of {', '.join(ISAS)}")
    if isa == "avx512" and supports("avx512"):
        return ["-march=native"]
    return list(_EXPLICIT[isa])


def isa_key(isa: str) -> str:
    """Cache-key text for ``isa``: its flags and, when they say -march=native, which CPU."""
    flags = isa_flags(isa)
    key = f"{isa}:{' '.join(flags)}"
    if "-march=native" in flags:
        cpu_flags, model = cpu_info()
        key += ":" + hashlib.sha256(f"{model}\0{' '.join(sorted(cpu_flags))}".encode()).hexdigest()[:16]
    return key
