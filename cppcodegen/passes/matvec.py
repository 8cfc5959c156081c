"""Row and column reductions of one matrix in one pass (matrix-vector programs).

In: the kernels of one region, in order (from ``schedule._group``). Out: the same list where
a 'column' kernel (a sum over axis 0 of a 2-D domain: ``r @ A``, ``A.T @ r``) next to a
'nest' kernel over the rows of the same matrix (``A @ p``, a row's dot product) is merged
into that nest kernel as one of its ``columns``: each row of the matrix, read once, feeds
the row's stages and then the column accumulators, so the matrix crosses memory once
instead of twice (mvt, bicg, atax: ``(A @ x) @ A`` reads the row's dot product, which the
nest has just computed, as the row's weight).

The merged kernel runs its rows in fixed chunks (their number depends on the sizes only);
each chunk sums its rows' contributions into its own partial row in row order, and the
partial rows are added in chunk order: the result does not depend on the thread count.
"""
from __future__ import annotations

import numpy as np

import sympy

from ..ir.loopir import Gather, Index, Load, Op, index_vars, reindex_loads, walk

FUSABLE_DTYPES = "fiu"


def fuse_columns(kernels: list) -> list:
    """Merge each fusable column kernel into the nest kernel beside it (see module doc), or
    into an earlier nest when the kernels between neither write what the column reads nor
    touch what it writes (logistic regression's ``err.mean()`` between ``err = f(X @ w)``
    and ``X.T @ err``: the column moves before it, so X is read once)."""
    out: list = []
    for k in kernels:
        if not _merge_back(out, k):
            out.append(k)
    return out


def _merge_back(out: list, k) -> bool:
    """Merge ``k`` into the last kernel of ``out``, or (a column kernel) into one at most
    MAX_HOPS back over kernels it may run before; whether it was."""
    for back in range(len(out) - 1, max(-1, len(out) - 1 - MAX_HOPS), -1):
        if back < len(out) - 1 and (_column_stage(k) is None or
                                    not _independent(out[back + 1], k)):
            return False
        merged = _merge(out[back], k)
        if merged is not None:
            out[back] = merged
            return True
    return False


MAX_HOPS = 4        # kernels a column sum may move back over to join a nest


def _writes(k) -> set:
    return {m.name for st in k.stages for m in (st.members or (st,))}


def _reads(k) -> set:
    return {ld.buf for st in k.stages for ld in _loads(st)} | \
        {a for st in k.stages for a in st.args}


def _independent(between, col) -> bool:
    """May ``col`` run before ``between`` (a plain kernel that neither writes what ``col``
    reads nor reads or writes what ``col`` writes)?"""
    if between.form not in ("nest", "flat", "column", "rows"):
        return False
    return not (_writes(between) & _reads(col)) and \
        not ((_reads(between) | _writes(between)) & _writes(col))


def _loads(stage):
    return [e for e in walk(stage.body) if isinstance(e, Load)] if stage.body is not None else []


def _column_stage(k):
    if k.form != "column" or len(k.stages) != 1:
        return None
    s = k.stages[0]
    if (len(s.domain) != 2 or tuple(s.reduce_axes) != (0,) or s.reduction != "sum"
            or s.store is not None or s.body.dtype.kind not in FUSABLE_DTYPES
            or s.body.dtype == np.bool_ or any(isinstance(e, Gather) for e in walk(s.body))):
        return None
    return s


def _merge(first, second):
    """Merge the column kernel among (first, second) into the nest kernel (the other one);
    ``first`` runs before ``second``. Returns the merged nest kernel, or None."""
    if first.form == "nest" and _column_stage(second) is not None:
        nest, col, col_after = first, second, True
    elif second.form == "nest" and _column_stage(first) is not None:
        nest, col, col_after = second, first, False
    else:
        return None
    s = col.stages[0]
    if len(nest.outer) != 1 or nest.outer[0] != s.domain[0]:
        return None
    if any(st.store is not None or st.kind not in ("pointwise", "reduction") for st in nest.stages):
        return None
    if any(ld.buf in nest.columns for ld in _loads(s)):
        return None         # another column sum of the nest: complete only after the rows
    mine = {m.name for st in nest.stages for m in (st.members or (st,))} - set(nest.columns)
    i0, i1 = index_vars(2)
    # the point of it: both read one matrix along its rows, the same way
    nest_reads = {(ld.buf, tuple(ld.index)) for st in nest.stages for ld in _loads(st)
                  if not isinstance(ld, Gather) and len(st.domain) == 2}
    if not any((ld.buf, tuple(ld.index)) in nest_reads for ld in _loads(s)
               if ld.buf not in mine and len(ld.index) == 2 and ld.index[0] == i0):
        return None
    if col_after:
        # the column may read what the nest computed for the current row only
        for ld in _loads(s):
            if ld.buf in mine and (not ld.index or ld.index[0] != i0):
                return None
    elif any(ld.buf == s.name for st in nest.stages for ld in _loads(st)):
        return None         # the nest needs the whole column sum first
    nest.columns = tuple(nest.columns) + (s.name,)
    nest.stages.append(s)   # rendered after the row's stages either way
    return nest


def row_dot(buffers, s):
    """(matrix load, vector load) of a stage that is a float sum over j of ``A[i, j] * x[j]``
    (both contiguous along j: ``A @ x``), else None. backend/rowdot.py runs such stages a
    few rows at a time; two of them over different matrices stay in separate kernels
    (``schedule``): the rows of A and of B interleaved in one pass read memory slower than
    A then B (2000^2 float64 gesummv, 1.15 ms fused against 0.89 ms apart on the EPYC)."""
    if s.kind != "reduction" or s.reduction != "sum" or tuple(s.reduce_axes) != (1,) \
            or len(s.domain) != 2 or s.body.dtype not in (np.float32, np.float64) \
            or s.members or s.store is not None:
        return None
    e = s.body
    if not isinstance(e, Op) or e.name != "multiply" or len(e.args) != 2 or not all(
            type(a) is Load and a.dtype == e.dtype for a in e.args):
        return None
    i0, i1 = index_vars(2)
    offsets = [flat_offset(buffers, a) for a in e.args]
    rows = [k for k, off in enumerate(offsets) if off.coeff(i1) == 1 and off.has(i0)]
    cols = [k for k, off in enumerate(offsets) if off.coeff(i1) == 1 and not off.has(i0)]
    if len(rows) != 1 or len(cols) != 1:
        return None
    return e.args[rows[0]], e.args[cols[0]]


def flat_offset(buffers, load):
    buf = buffers[load.buf]
    return sympy.expand(sum((i * st for i, st in zip(load.index, buf.strides)), sympy.Integer(0)))


def as_column(stage, buffers) -> bool:
    """Turn a 2-D sum over its last axis whose matrix is read transposed (``X.T @ r`` with a
    factor on the matrix, ``(lr * X.T) @ r``: every load that walks both axes is contiguous
    along the kept one and strided along the summed one) into a sum over its first axis (a
    'column' kernel: each row of X read once, added to a row of accumulators), in place.
    Whether it did. (Summed along the stride, a (20000, 16) X was read 16 times with strided
    loads: 3x NumPy's gradient step.)"""
    from ..backend.cexpr import linear_coefficient
    if stage.kind != "reduction" or len(stage.domain) != 2 or stage.reduce_axes != (1,) or \
            stage.reduction != "sum" or stage.body.dtype.kind not in FUSABLE_DTYPES or \
            stage.store is not None:
        return False
    i0, i1 = index_vars(2)
    both = 0
    for e in walk(stage.body):
        if isinstance(e, (Gather, Index)):
            return False            # (positions from values; an index used as a value)
        if not isinstance(e, Load):
            continue
        strides = buffers[e.buf].strides
        address = sum((ix * st for ix, st in zip(e.index, strides)), sympy.Integer(0))
        c0, c1 = linear_coefficient(address, i0), linear_coefficient(address, i1)
        if c0 is None or c1 is None:
            return False
        if c0 and c1:
            if c0 != 1 or not isinstance(c1, int) or abs(c1) <= 1:
                return False
            both += 1
    if not both:
        return False
    swap = {i0: i1, i1: i0}
    stage.body = reindex_loads(stage.body, lambda ix: tuple(
        sympy.sympify(e).xreplace(swap) for e in ix))
    stage.domain = (stage.domain[1], stage.domain[0])
    stage.reduce_axes = (0,)
    return True
