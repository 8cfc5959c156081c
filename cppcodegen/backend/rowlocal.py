"""Temporaries a nest kernel uses one row at a time, kept in a row array instead of memory.

A chain of steps over the rows of an array (a sorting network's compare-exchanges of columns,
``y[:, i] = np.minimum(y[:, i], y[:, j])`` for 19 pairs) is one nest kernel whose stages each
write a whole temporary that only the next stage reads, at the same row: 19 arrays the size of
the input written and read again. When nothing outside the kernel reads a temporary and every
read of it inside is at the row being computed, the row is all that is ever needed: the
kernel declares it as a local array (one per thread, in the body of its outer loops) under the
buffer's own name, and the buffer's outer strides become 0, so each stage stores into and
loads from that row. The memory traffic of the chain is then its input and its output.

In: the program and one of its nest kernels. Out: ``row_local`` (the buffers, with their row
dtype and size) and ``rows_program`` (the program as the kernel's renderer sees it).
"""
from __future__ import annotations

import dataclasses

from ..ir.loopir import Load, index_vars, nested, walk
from .reuse import SCRATCH_BYTES
from ..ir.shapes import prod
from .sizes import _hint


def buffer_uses(program) -> dict:
    """{buffer: [(id of a stage, the index it is loaded at, or None: written or named outside
    a body)]} over every stage of ``program``: made once per program, read per kernel."""
    uses: dict = {}
    for s in nested(program.stages):
        for e in walk(s.body) if s.body is not None else ():
            if isinstance(e, Load):
                uses.setdefault(e.buf, []).append((id(s), tuple(e.index)))
        for name in _mentions(s) | {s.name}:
            uses.setdefault(name, []).append((id(s), None))
    return uses


def row_local(program, kernel, uses: dict, hooked: bool = False) -> dict:
    """{buffer: (dtype, elements of a row)} of ``kernel``'s row-local temporaries
    (``uses``: ``buffer_uses(program)``)."""
    if kernel.form != "nest" or hooked or kernel.columns:
        return {}
    n = len(kernel.outer)
    outer = tuple(index_vars(n))
    mine = {id(s) for s in kernel.stages}
    written = {}
    for s in kernel.stages:
        b = program.buffers.get(s.name)
        if b is None or b.role != "temp" or s.kind != "pointwise" or s.store is not None or \
                s.members or s.name in kernel.locals or s.name in written or \
                tuple(s.domain[:n]) != tuple(kernel.outer) or len(s.domain) == n:
            written[s.name] = None
            continue
        written[s.name] = s
    rows = {name for name, s in written.items() if s is not None and all(
        k in mine and (index is None and k == id(s) or index is not None and index[:n] == outer)
        for k, index in uses.get(name, ()))}
    out = {}
    for name in (n for n in written if n in rows):     # (in stage order: the same C++)
        s, b = written[name], program.buffers[name]
        size = prod(s.domain[n:])
        if tuple(b.shape) == tuple(s.domain) and _hint(size) * b.dtype.itemsize <= SCRATCH_BYTES:
            out[name] = (b.dtype, size)
    return out


def _mentions(stage) -> set:
    """Buffers ``stage`` names outside its body: a NumPy call's or a product's operands, a
    construct's condition, a scatter's indices, a swap's buffers."""
    out, stack = set(), [stage.args, stage.control, stage.binds]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        elif v is not None and hasattr(v, "args"):      # an expression (a scatter's index)
            out |= {e.buf for e in walk(v) if isinstance(e, Load)}
    return out


def rows_program(program, rows: dict, n: int):
    """``program`` with the buffers of ``rows`` strided 0 along the ``n`` outer axes."""
    buffers = {name: dataclasses.replace(b, strides=(0,) * n + tuple(b.strides[n:]))
               if name in rows else b for name, b in program.buffers.items()}
    return dataclasses.replace(program, buffers=buffers)
