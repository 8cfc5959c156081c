"""The BLAS NumPy links: the addresses of its ``cblas_?gemm`` and ``cblas_?syrk``.

In:  the running NumPy. Out: :func:`functions` -> ``Functions(sgemm, dgemm, ssyrk, dsyrk,
int64)`` (addresses as ints, and whether the library takes 64-bit integers), or None when no
such library is found; kernels that compute a product with BLAS (include/cppcodegen/blas.h) are handed them
once after loading (``ccg_use_blas``), and compute with ``ccg::gemm`` without them.

How: NumPy's extension module is opened again (the dynamic linker returns the library already
loaded) and its symbols are looked up the way the linker resolved them, through the libraries
it depends on. NumPy's wheels link an OpenBLAS built for SciPy and NumPy whose symbols carry a
prefix and, for the 64-bit-integer build, a suffix (``scipy_cblas_sgemm64_``); builds linked
against a system BLAS export the plain CBLAS names (32-bit integers).
"""
from __future__ import annotations

import ctypes
import functools
from typing import NamedTuple

# (name pattern, integers are 64-bit): the first pattern whose functions all exist wins
NAMES = (("scipy_cblas_{}64_", True), ("cblas_{}64_", True),
         ("scipy_cblas_{}", False), ("cblas_{}", False))
WANTED = ("sgemm", "dgemm", "ssyrk", "dsyrk")     # (syrk: a product of a matrix with its
                                                 # own transpose, as NumPy's matmul does)


class Functions(NamedTuple):
    sgemm: int
    dgemm: int
    ssyrk: int
    dsyrk: int
    int64: bool


@functools.lru_cache(maxsize=None)
def functions() -> Functions | None:
    """The addresses of NumPy's cblas_sgemm and cblas_dgemm (memoized), or None."""
    try:
        from numpy._core import _multiarray_umath as module
    except ImportError:                     # (NumPy 1.x)
        try:
            from numpy.core import _multiarray_umath as module
        except ImportError:
            return None
    try:
        lib = ctypes.CDLL(module.__file__)
    except OSError:
        return None
    for pattern, int64 in NAMES:
        try:
            found = [getattr(lib, pattern.format(name)) for name in WANTED]
        except AttributeError:
            continue
        return Functions(*(ctypes.cast(f, ctypes.c_void_p).value for f in found), int64)
    return None


def available() -> bool:
    return functions() is not None
