"""Boolean stages computed as bytes.

In: a lowered ``LoopProgram``. Out: the same program where a pointwise stage that stores
bools computed by logic alone (loads of bool buffers, bool constants, and/or/xor/not,
``==``/``!=`` of bools: an erosion's ``m[1:-1, 1:-1] & m[:-2, 1:-1] & ...``, a mask's copy)
computes them as 0/1 bytes: its loads read the bools' bytes, ``&``/``|``/``^`` work on
whole bytes and ``not`` is ``^ 1``, and the bytes are stored as they are. A ``ccg::Mask``
would pack every load into bits and unpack every store (a few lanes at a time), which made
such a stage slower than NumPy's byte loops.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.loopir import Const, Load, LoopProgram, Op, Stage

BOOL, BYTE = np.dtype(bool), np.dtype(np.uint8)
BYTEWISE = {"logical_and": "bitwise_and", "bitwise_and": "bitwise_and",
            "logical_or": "bitwise_or", "bitwise_or": "bitwise_or",
            "logical_xor": "bitwise_xor", "bitwise_xor": "bitwise_xor",
            "not_equal": "bitwise_xor"}
ONE = Const(1, BYTE)


def bool_bytes(program: LoopProgram) -> LoopProgram:
    program.stages = _stages(program.stages, program)
    return program


def _stages(stages, program) -> list:
    out = []
    for s in stages:
        if s.regions:
            s = dataclasses.replace(s, regions=tuple(_stages(r, program) for r in s.regions))
        elif s.kind == "pointwise":
            s = _stage(s, program)
        out.append(s)
    return out


def _stage(s: Stage, program) -> Stage:
    if s.members:
        members = tuple(_stage(m, program) for m in s.members)
        changed = any(a is not b for a, b in zip(members, s.members))
        return dataclasses.replace(s, members=members) if changed else s
    if program.buffers[s.name].dtype != BOOL or s.body is None or s.body.dtype != BOOL:
        return s
    body = _bytes(s.body, {})
    return s if body is None else dataclasses.replace(s, body=body)


def _bytes(e, memo: dict):
    """``e`` (a bool expression) as a 0/1 byte expression, or None when it is not logic of
    bool loads and constants. ``memo`` (id -> rewritten): a subexpression shared in ``e``
    stays shared (the renderer writes it once)."""
    if id(e) not in memo:
        memo[id(e)] = _rewrite(e, memo)
    return memo[id(e)]


def _rewrite(e, memo):
    if type(e) is Load and e.dtype == BOOL:     # the bools' bytes (backend/cexpr.py; not a Gather)
        return Load(e.buf, e.index, BYTE)
    if isinstance(e, Const) and e.dtype == BOOL:
        return Const(int(bool(e.value)), BYTE)
    if type(e) is not Op or e.dtype != BOOL or any(a.dtype != BOOL for a in e.args):
        return None
    args = [_bytes(a, memo) for a in e.args]
    if any(a is None for a in args):
        return None
    if e.name in BYTEWISE and len(args) == 2:
        return Op(BYTEWISE[e.name], tuple(args), BYTE)
    if e.name in ("logical_not", "invert") and len(args) == 1:
        return Op("bitwise_xor", (args[0], ONE), BYTE)
    if e.name == "equal" and len(args) == 2:
        return Op("bitwise_xor", (Op("bitwise_xor", tuple(args), BYTE), ONE), BYTE)
    return None
