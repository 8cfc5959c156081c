"""NumPy's broadcasting of shapes whose sizes may be symbolic (``shapes.py``): equal sizes,
a size 1 against another, sizes decided from this call's values and guarded, and lengths
from array values taken as equal and checked when the program runs."""
from __future__ import annotations

import numpy as np
import sympy

from .shapes import _env, canon_shape, equal, has_symbols, LoopDependent


def broadcast_shapes(*shapes):
    """NumPy's broadcasting of shapes whose sizes may be symbolic. A derived size (``s0 - 2``)
    that meets another size is decided from its value and guarded."""
    shapes = [canon_shape(s) for s in shapes]
    if not any(has_symbols(s) for s in shapes):
        return np.broadcast_shapes(*shapes)
    ndim = max(len(s) for s in shapes)
    out = []
    for k in range(ndim):
        dims = [s[len(s) - ndim + k] for s in shapes if len(s) - ndim + k >= 0]
        distinct = []
        for d in dims:
            if not any(isinstance(d, int) and isinstance(e, int) and d == e or
                       not isinstance(d, int) and not isinstance(e, int) and sympy.expand(d - e) == 0
                       for e in distinct):
                distinct.append(d)
        others = [d for d in distinct if not (isinstance(d, int) and d == 1)]
        if len(distinct) == 1 or len(others) == 1:   # 1 and d give d, whether d is 1 or not
            out.append(others[0] if others else 1)   # (``v[:, None] * A[:, i + 1:]``)
            continue
        same = _all_equal(others)
        if same is not None:        # equal sizes give that size, whether it is 1 or not
            out.append(same)
            continue
        result = None
        for d in distinct:
            if isinstance(d, int) and d == 1:
                continue
            if not isinstance(d, int) and not d.is_Symbol and equal(d, 1):
                continue                        # a derived size that is 1 in this call
            if result is None:
                result = d
            elif not equal_or_assumed(result, d):
                raise ValueError(f"shape mismatch: sizes {result} and {d}")
            elif isinstance(d, int):
                result = d                      # equal to a fixed size: keep the int
        out.append(1 if result is None else result)
    return tuple(out)


def _all_equal(dims):
    """The size ``dims`` all equal in this call (an int where one is), or None. Asked before
    whether a derived size is 1: ``U[i, i + 1:] * x[i + 1:]`` has lengths ``n1 - 1 - i`` and
    ``n0 - 1 - i``, equal where n0 == n1 (a guard), while whether one is 1 depends on the
    loop's iteration (LoopDependent: the loop was unrolled for the second size)."""
    try:
        if all(equal(dims[0], d) for d in dims[1:]):
            return next((d for d in dims if isinstance(d, int)), dims[0])
    except LoopDependent:
        pass
    return None


def equal_or_assumed(a, b) -> bool:
    """Broadcasting's test of two sizes: ``equal``; two lengths of slices with bounds from
    array values (``dp[w:]`` and ``dp[:n - w]``) that no fact decides are taken as equal
    (``ShapeEnv.assumed``), as NumPy needs them to be: the frontend checks them when the
    program runs (``frontend/dataslice.checked_equal``)."""
    try:
        return equal(a, b)
    except LoopDependent:
        env = _env()
        syms = sympy.sympify(a - b).free_symbols
        if not syms or not syms & set(env.data) or syms & (set(env.loops) | set(env.retired)):
            raise
        env.assumed |= {sympy.expand(a - b), sympy.expand(b - a)}
        return True
