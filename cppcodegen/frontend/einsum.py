"""``np.einsum`` of traced arrays: a product or a reduction, routed to ``@``, ``*`` and ``sum``.

In: the subscripts and the operands. Out: a traced array. A matrix product (``ij,jk->ik`` and
its transposes, with a leading batch letter shared by all three: ``bij,bjk->bik``) becomes
``np.matmul`` of (transposed) operands, so it runs as the same GEMM as ``@``; every other
contraction becomes each operand transposed and expanded to the letters of the result followed
by the summed letters, multiplied, and summed over the latter (one fused loop nest: the
product is not stored). The sum keeps the operands' result dtype, as einsum does (int32 stays
int32, where ``np.sum`` would widen it). Ellipses, a letter repeated within one operand
(``ii->i``), ``out=``, ``dtype=``/``casting=``/``order=`` and a non-string first argument run
NumPy's einsum between kernels.
"""
from __future__ import annotations

import numpy as np

from .externs import extern_call
from .linalg import matmul
from .proxy import asproxy


def einsum(*operands, **kwargs):
    kwargs.pop("optimize", None)                # (a path choice only)
    parsed = _parse(operands) if not kwargs else None
    if parsed is None:
        return extern_call(np.einsum, operands, kwargs)
    terms, out, arrays = parsed
    arrays = [asproxy(a) for a in arrays]
    for t, a in zip(terms, arrays):
        if len(t) != a.ndim:
            raise ValueError(f"einstein sum subscripts string contains too many subscripts for "
                             f"operand {terms.index(t)}" if len(t) > a.ndim else
                             f"operand has more dimensions than subscripts given in einstein "
                             f"sum, but no '...' ellipsis provided to broadcast the extra "
                             f"dimensions.")
    product = _as_matmul(terms, out, arrays)
    if product is not None:
        return product
    summed = [c for t in terms for c in t if c not in out]
    order = list(out) + list(dict.fromkeys(summed))
    factors = []
    for t, a in zip(terms, arrays):
        mine = [c for c in order if c in t]
        a = np.transpose(a, [t.index(c) for c in mine]) if list(t) != mine else a
        shape = tuple(a.shape[mine.index(c)] if c in mine else 1 for c in order)
        factors.append(np.reshape(a, shape) if shape != tuple(a.shape) else a)
    total = factors[0]
    for f in factors[1:]:
        total = np.multiply(total, f)
    dtype = np.result_type(*arrays)
    if len(order) > len(out):
        total = np.sum(total, axis=tuple(range(len(out), len(order))), dtype=dtype)
    return total


def _parse(operands):
    """(terms, output letters, arrays), or None for what runs as NumPy's call."""
    if not operands or not isinstance(operands[0], str):
        return None
    subs, arrays = operands[0].replace(" ", ""), operands[1:]
    if "." in subs:
        return None
    ins, arrow, out = subs.partition("->")
    terms = ins.split(",")
    if len(terms) != len(arrays):
        raise ValueError("more operands provided to einstein sum function than specified in "
                         "the subscripts string" if len(arrays) > len(terms) else
                         "fewer operands provided to einstein sum function than specified in "
                         "the subscripts string")
    letters = [c for t in terms for c in t]
    if not all(c.isalpha() for c in letters + list(out)):
        raise ValueError(f"invalid subscript in einstein sum subscripts string: {subs!r}")
    if not arrow:                               # implicit: the letters seen once, sorted
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if any(len(set(t)) != len(t) for t in terms) or len(set(out)) != len(out):
        return None                             # a diagonal: NumPy's call
    if any(c not in letters for c in out):
        raise ValueError(f"einstein sum subscripts string included output subscript "
                         f"'{next(c for c in out if c not in letters)}' which never appeared "
                         f"in an input")
    return terms, out, arrays


def _as_matmul(terms, out, arrays):
    """``np.matmul`` for a (batched) matrix product, else None."""
    if len(terms) != 2 or not all(a.dtype.kind in "fc" for a in arrays):
        return None
    (ta, tb), (a, b) = terms, arrays
    batch = ""
    if len(ta) == len(tb) == len(out) == 3 and ta[0] == tb[0] == out[0]:
        batch, ta, tb, out = ta[0], ta[1:], tb[1:], out[1:]
    if not (len(ta) == len(tb) == len(out) == 2):
        return None
    shared = set(ta) & set(tb)
    if len(shared) != 1 or set(out) != (set(ta) | set(tb)) - shared:
        return None
    (k,) = shared
    i, j = ta.replace(k, ""), tb.replace(k, "")
    swap = (-1, -2)
    a = a if ta == i + k else np.swapaxes(a, *swap)
    b = b if tb == k + j else np.swapaxes(b, *swap)
    r = matmul(a, b)
    return r if out == i + j else np.swapaxes(r, *swap)


FUNCTIONS = {np.einsum: einsum}
