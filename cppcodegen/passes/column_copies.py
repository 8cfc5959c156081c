"""Column-major copies of matrices a loop reads down their columns.

Loop-written linear algebra reads columns: polybench's syrk ``C[i, :i + 1] += alpha * A[i, k]
* A[:i + 1, k]``, Gram-Schmidt's ``A[:, k]``, a covariance's ``data[:, j]``. Inside a
compiled loop each such read walks a row-major matrix with the stride of a row: a gather
per vector, a cache line per element. A matrix argument the program never writes, read in a
loop only along its first axis by the innermost loop, is copied once before the loop into a
column-major temporary (the same indices, the strides swapped), and the loop reads the copy
with unit stride. The copy costs one pass over the matrix; the loop reads it many times.

In: a ``LoopProgram``. Out: the same program, with for each such matrix a ``<name>_t``
buffer, a copy stage before the first loop that reads it, and that loop's loads renamed.
Matrices read any other way in the loop (a gather, a search, a NumPy step, along their rows
by the innermost loop) are left as they are.
"""
from __future__ import annotations

import dataclasses

import sympy

from ..ir.loopir import Buffer, Gather, index_vars, Load, nested, Op, Stage, walk

MAX_COPY = 1 << 24      # elements (128 MB of float64)


def column_copies(program):
    written = {s.name for s in nested(program.stages)}
    out, copied = [], {}
    for stage in program.stages:
        if stage.control is not None and stage.kind in ("for", "while"):
            names = [b for b in _column_reads(program, stage) if b not in written]
            for b in names:
                if b not in copied:     # (once: later loops read the same copy)
                    copied[b] = _copy(program, b)
                    out.append(copied[b][1])
            if names:
                stage = _renamed(stage, {b: copied[b][0].name for b in names})
        out.append(stage)
    if not copied:
        return program
    buffers = dict(program.buffers)
    buffers.update({buf.name: buf for buf, _ in copied.values()})
    return dataclasses.replace(program, buffers=buffers, stages=out)


def _column_reads(program, loop) -> list:
    """The 2-D input matrices (row-major) that stages inside ``loop`` read with the innermost
    loop index in the first (row) position, and never in the second."""
    good, bad = set(), set()
    for s in nested([x for region in loop.regions for x in region]):
        plain = s.kind in ("pointwise", "reduction") and not s.binds
        bad.update(s.args)
        inner = index_vars(len(s.domain))[-1] if s.domain and plain else None
        for m in (s.members or (s,)):
            if m.body is None:
                continue
            for e in walk(m.body):
                if isinstance(e, Gather) or not isinstance(e, Load):
                    if isinstance(e, Gather):
                        bad.add(e.buf)
                    continue
                buf = program.buffers.get(e.buf)
                if buf is None or buf.role != "input" or len(buf.shape) != 2 or \
                        buf.strides[1] != 1 or buf.strides[0] == 1 or _large(program, buf):
                    continue
                rows, cols = (getattr(ix, "free_symbols", set()) for ix in e.index)
                if inner is None or inner in cols:
                    bad.add(e.buf)              # (along a row: unit stride already)
                elif inner in rows:
                    good.add(e.buf)             # (neither: one element per inner loop)
    return sorted(good - bad)


def _large(program, buf) -> bool:
    """More than ``MAX_COPY`` elements (at the traced sizes): no second copy in memory."""
    n = sympy.sympify(buf.shape[0] * buf.shape[1]).subs(program.hints or {})
    return not n.is_number or int(n) > MAX_COPY


def _copy(program, name):
    src = program.buffers[name]
    n, m = src.shape
    copy = Buffer(f"{name}_t", src.dtype, src.shape, (1, n), "temp")
    i0, i1 = index_vars(2)
    stage = Stage(copy.name, "pointwise", (n, m), Load(name, (i0, i1), src.dtype),
                  where="a column-major copy of a matrix the loop after it reads by columns")
    return copy, stage


def _renamed(stage, names: dict):
    memo: dict = {}

    def expr(e):
        if e is None or id(e) in memo:
            return memo.get(id(e), e)
        if type(e) is Load and e.buf in names:
            new = dataclasses.replace(e, buf=names[e.buf])
        elif isinstance(e, Op):
            args = tuple(expr(a) for a in e.args)
            new = e if all(a is b for a, b in zip(args, e.args)) else \
                dataclasses.replace(e, args=args)
        else:
            new = e
        memo[id(e)] = new
        return new

    def visit(s):
        members = tuple(dataclasses.replace(m, body=expr(m.body)) for m in s.members)
        regions = tuple(tuple(visit(x) for x in region) for region in s.regions)
        return dataclasses.replace(s, body=expr(s.body), members=members, regions=regions)
    return visit(stage)
