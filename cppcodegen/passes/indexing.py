"""Index arithmetic of views: the index a view's element has in the array under it.

In: an output index (sympy expressions, one per dimension) and a view node (reshape,
transpose, broadcast_to, slice) or the shapes of a reshape/broadcast. Out: the index into the
viewed array. Reshapes of symbolic sizes use ``FloorDiv``/``IMod``; division and modulo are
simplified where the index's range allows.
"""
from __future__ import annotations

import numpy as np
import sympy

from ..ir.graph import Node
from ..ir.loopir import FloorDiv, IMod


def contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1) if isinstance(s, (int, sympy.Integer)) else s
    return tuple(reversed(strides))


def same_index(a, b, ones=None) -> bool:
    """Are index expressions ``a`` and ``b`` equal (``ones``: index variables of extent 1,
    taken as 0)?"""
    return sympy.expand(sympy.sympify(a - b).subs(ones or {})) == 0


# ----------------------------------------------------------------- index arithmetic

def _terms(expr):
    """expr as a list of (atom, coefficient) with integer coefficients."""
    expr = sympy.expand(expr)
    out = []
    for t in sympy.Add.make_args(expr):
        coeff, rest = t.as_coeff_Mul()
        out.append((rest, int(coeff)))
    return out


def floordiv(expr, d: int, bound: int):
    """floor(expr / d) for 0 <= expr < bound, simplified where the terms allow."""
    if d == 1:
        return expr
    if bound <= d:
        return sympy.Integer(0)
    exact, rest = 0, []
    for atom, c in _terms(expr):
        if c % d == 0:
            exact += atom * (c // d)
        else:
            rest.append((atom, c))
    if not rest:
        return exact
    return exact + sympy.floor(sum(a * c for a, c in rest) / sympy.Integer(d))


def modulo(expr, m: int, bound: int):
    """expr mod m for 0 <= expr < bound."""
    if m == 1:
        return sympy.Integer(0)
    if bound <= m:
        return expr
    rest = [(a, c) for a, c in _terms(expr) if c % m != 0]
    if not rest:
        return sympy.Integer(0)
    return IMod(sum(a * c for a, c in rest), m)


def reshape_index(idx, out_shape, in_shape) -> tuple:
    """Index into the input of a C-order reshape, given the output index."""
    by_digits = _reshape_index_symbolic(idx, out_shape, in_shape)
    if not all(isinstance(d, int) for d in tuple(out_shape) + tuple(in_shape)) or not any(
            e.has(sympy.floor, sympy.Mod, FloorDiv) for e in map(sympy.sympify, by_digits)):
        return by_digits            # (each output digit in its range: exact, no division)
    flat = sum((e * s for e, s in zip(idx, contiguous_strides(out_shape))), sympy.Integer(0))
    total = int(np.prod(out_shape, dtype=np.int64))
    result = []
    for stride, size in zip(contiguous_strides(in_shape), in_shape):
        if size == 1:
            result.append(sympy.Integer(0))
            continue
        q = floordiv(flat, stride, total)
        result.append(modulo(q, size, -(-total // stride)))
    cost = lambda r: sum(sympy.count_ops(e) for e in map(sympy.sympify, r))   # noqa: E731
    return tuple(by_digits) if cost(by_digits) <= cost(result) else tuple(result)


def _divides(a, b) -> bool:
    """b divides a as polynomials in the size symbols (a / b has no denominator)."""
    q = sympy.cancel(sympy.sympify(a) / sympy.sympify(b))
    return sympy.fraction(q)[1] == 1 and all(c.is_Integer for c in sympy.Poly(q).coeffs()) \
        if q.free_symbols else q.is_Integer


def _reshape_index_symbolic(idx, out_shape, in_shape) -> tuple:
    """The reshape index with symbolic sizes. The flat position is a mixed-radix number in the
    output's digits; dividing it by an input stride that the high digits' strides are
    multiples of, and that bounds the low digits' sum, splits it exactly (merging or splitting
    dims is then a sum of digits, no division); otherwise FloorDiv/Mod are kept."""
    if any(isinstance(d, int) and d == 0 for d in tuple(out_shape) + tuple(in_shape)):
        return (sympy.Integer(0),) * len(in_shape)      # empty: nothing is read
    out_strides = contiguous_strides(out_shape)
    digits = [(e, st, n) for e, st, n in zip(idx, out_strides, out_shape) if n != 1]
    result = []
    for stride, size in zip(contiguous_strides(in_shape), in_shape):
        if size == 1:
            result.append(sympy.Integer(0))
            continue
        result.append(_digit(digits, stride, size))
    return tuple(result)


def _digit(digits, stride, size):
    """floor(flat / stride) mod size for flat = sum(e * st) over ``digits`` (0 <= e < n)."""
    stride, size = sympy.sympify(stride), sympy.sympify(size)
    high, low = [], []
    for e, st, n in digits:
        (high if _divides(st, stride) else low).append((e, sympy.sympify(st), n))
    # high digits divide exactly; low digits sum to less than low[0].st * low[0].n
    terms = [(e, sympy.cancel(st / stride), n) for e, st, n in high]
    rest = sympy.Integer(0)
    bound = None        # rest < bound
    if low and not _divides(stride, low[0][1] * low[0][2]):
        e0, st0, n0 = low[0]
        if _divides(stride, st0):
            # the lower digits sum to less than st0: floor((e0 * st0 + lower) / stride) is
            # e0 // (stride / st0) (flattening (8, 62, 62, 32) to (30752, 32): row // 3844)
            q0 = sympy.cancel(stride / st0)
            rest = sympy.floor(e0 / q0) if q0.is_Integer else FloorDiv(e0, q0)
            n0 = sympy.sympify(n0)
            bound = -(-n0 // q0) if n0.is_Integer and q0.is_Integer else None
            if bound is None and sympy.expand(sympy.cancel(n0 / q0) - size) == 0:
                bound = size        # symbolic: a flattened (n0, n1)'s row is i // n1 < n0
        else:
            low_sum = sum((e * st for e, st, _ in low), sympy.Integer(0))
            rest = sympy.floor(low_sum / stride) if stride.is_Integer else FloorDiv(low_sum, stride)
    keep = [(e, c, n) for e, c, n in terms if not _divides(c, size)]
    q = sum((e * c for e, c, _ in keep), sympy.Integer(0)) + rest
    if not keep and bound is not None and (bound == size or size.is_Integer and bound <= size):
        return rest
    if rest != 0 or (keep and not _divides(size, keep[0][1] * keep[0][2])):
        return IMod(q, size) if size.is_Integer or rest != 0 or keep else q
    return sympy.expand(q)


def broadcast_index(idx, in_shape, out_shape) -> tuple:
    lead = len(out_shape) - len(in_shape)
    return tuple(sympy.Integer(0) if s == 1 and out_shape[lead + k] != 1 else idx[lead + k]
                 for k, s in enumerate(in_shape))


def view_index(node: Node, idx) -> tuple:
    src = node.inputs[0]         # (a slice with bounds from array values: then its binds)
    if node.op == "reshape":
        return reshape_index(idx, node.shape, src.shape)
    if node.op == "transpose":
        out = [None] * len(idx)
        for k, p in enumerate(node.attr("perm")):
            out[p] = idx[k]
        return tuple(out)
    if node.op == "broadcast_to":
        return broadcast_index(idx, src.shape, node.shape)
    if node.op == "slice":
        return tuple(start + step * i for (start, step, _), i in zip(node.attr("spec"), idx))
    raise AssertionError(node.op)
