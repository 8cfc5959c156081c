"""How the partial results of a reduction a loop carries (``s += v``, ``m = max(m, v)``) start
and combine: blocks of iterations on the threads (``prange.py``), SIMD lanes (``simd.py``).

``COMBINE``: op -> C++ combining two partial results ``a`` (earlier iterations) and ``b``;
``identity``: the value a partial result starts from; ``OMP_OPERATOR``: op -> the operator
of an OpenMP ``reduction`` clause, for the ops whose partial results combine exactly in any
order on the dtypes lanes take them for (integers and bools: ``lane_reduction``).
"""
from __future__ import annotations

import numpy as np

from .cexpr import ctype

COMBINE = {
    "add": "{a} + {b}", "multiply": "{a} * {b}",
    "maximum": "(({a}) != ({a}) || ({a}) > ({b})) ? ({a}) : ({b})",
    "minimum": "(({a}) != ({a}) || ({a}) < ({b})) ? ({a}) : ({b})",
    "fmax": "(({b}) != ({b}) || ({a}) > ({b})) ? ({a}) : ({b})",
    "fmin": "(({b}) != ({b}) || ({a}) < ({b})) ? ({a}) : ({b})",
    "max_first": "(({b}) > ({a})) ? ({b}) : ({a})",
    "min_first": "(({b}) < ({a})) ? ({b}) : ({a})",
    "logical_or": "{a} || {b}", "logical_and": "{a} && {b}",
    "bitwise_or": "{a} | {b}", "bitwise_and": "{a} & {b}",
}


def identity(op: str, dtype) -> str:
    dtype = np.dtype(dtype)
    t = ctype(dtype)
    if op in ("add", "logical_or", "bitwise_or"):
        return f"{t}{{}}"
    if op in ("multiply", "logical_and"):
        return f"{t}(1)"
    if op == "bitwise_and":
        return f"{t}(~{t}{{}})" if dtype != np.bool_ else "true"
    lowest = op in ("maximum", "fmax", "max_first")
    if dtype.kind == "f":
        return f"-std::numeric_limits<{t}>::infinity()" if lowest else \
            f"std::numeric_limits<{t}>::infinity()"
    return f"std::numeric_limits<{t}>::{'lowest' if lowest else 'max'}()"


OMP_OPERATOR = {"add": "+", "multiply": "*", "bitwise_or": "|", "bitwise_and": "&",
                "logical_or": "||", "logical_and": "&&", "maximum": "max", "minimum": "min",
                "max_first": "max", "min_first": "min"}


def lane_reduction(op: str, dtype) -> str | None:
    """The OpenMP operator that combines lanes' partial results of ``op`` on ``dtype`` in any
    order with the same result, or None: integer and bool arithmetic is exact (wrapping),
    so any grouping gives the serial loop's bits; float sums are not taken."""
    return OMP_OPERATOR.get(op) if np.dtype(dtype).kind in "iub" else None
