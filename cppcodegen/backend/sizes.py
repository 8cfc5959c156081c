"""Sizes in generated loops: loop bounds as C++, and as ints for heuristics.

In: a size of the loop IR (an int, or a sympy expression of the int64 size arguments and
induction variables). Out: C++ text for it as a loop bound (``_c``), the bounds of a tile
(``_tiles``, ``_tile_bounds``) and of a parallel chunk (``_chunk_bounds``), and an int for
work estimates (``_hint``, ``_prod``) in which symbols take the values traced for them
(``HINTS``, set by ``program.generate`` while it renders one program).
"""
from __future__ import annotations

import contextvars

import numpy as np
import sympy

from .cexpr import cindex
from .writer import CodeWriter

HINTS = contextvars.ContextVar("cppcodegen_size_hints", default={})   # heuristics only


def _hint(size) -> int:
    """A size as an int for heuristics (work estimates): symbols take their traced value (a
    loop's induction variable, which has none, counts as 1)."""
    if isinstance(size, int):
        return size
    e = sympy.sympify(sympy.sympify(size).xreplace(HINTS.get()))
    return max(1, int(e.xreplace({v: 1 for v in e.free_symbols}))) if e.free_symbols else int(e)


def _prod(sizes) -> int:
    return int(np.prod([_hint(d) for d in sizes], dtype=np.int64))


def _tiles(size, limit: int, symbolic: bool) -> tuple:
    """(tile, number of tiles) for splitting an axis of ``size`` into tiles of at most
    ``limit`` elements; the count is C++ when the sizes are symbolic."""
    tile = limit if symbolic else max(1, min(size, limit))
    return tile, (f"ccg_idx_div({_c(size)} + {tile - 1}, {tile})" if symbolic
                  else -(-size // tile))


def _tile_bounds(w: CodeWriter, tile, size):
    w.line(f"const int64_t lo = tile * {tile};")
    w.line(f"const int64_t hi = std::min<int64_t>(lo + {tile}, {_c(size)});")


def _chunk_bounds(n, chunks) -> str:
    """C++ declaring chunk ``chunk``'s range [lo, hi) of ``n`` elements in ``chunks`` parts."""
    return f"const int64_t lo = {n} * chunk / {chunks}, hi = {n} * (chunk + 1) / {chunks};"


def _c(size) -> str:
    """C++ for a loop bound: an int, or an expression of the int64 size arguments."""
    return str(size) if isinstance(size, int) else cindex(size)
