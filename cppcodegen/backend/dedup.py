"""Kernels that render the same C++ function: a time loop's steps, rendered once.

In: a kernel, its parameters and the program's buffers. Out: its structure
(``_structure``: what its C++ depends on, buffers named by parameter position, with their
shapes and strides) and its C++ text without comments, name and parameter names
(``_canonical``): ``program.generate`` renders one function per distinct structure and
text, and calls it with each kernel's own buffers.
"""
from __future__ import annotations

import re

from ..ir.loopir import Gather, Load, LoopProgram, Scalar, Search
from ..passes.schedule import Kernel


def _structure(program: LoopProgram, k: Kernel, params: list, aliased: bool) -> tuple:
    """What a kernel's C++ depends on, with its buffers named by parameter position: two
    kernels with equal structures render the same function (a time loop's steps), so only
    the first is rendered. Buffers enter with their strides: the offsets the C++ computes
    (a broadcast input has stride 0 where another has 1) are part of the structure."""
    position = {n: i for i, (n, _) in enumerate(params)}
    memo: dict = {}
    table: dict = {}    # each distinct subexpression, numbered: nested tuples would hash as trees

    def layout(name):
        buf = program.buffers.get(name)
        return None if buf is None else (tuple(map(str, buf.shape)), tuple(map(str, buf.strides)))

    def expr(e):
        key = memo.get(id(e))
        if key is None:
            if isinstance(e, Search):
                key = ("search", position.get(e.buf, e.buf), tuple(map(str, e.index)),
                       str(e.length), e.right, expr(e.value), layout(e.buf))
            elif isinstance(e, Gather):     # (its positions' values and checks too)
                key = ("gather", position.get(e.buf, e.buf), tuple(map(str, e.index)),
                       str(e.dtype), layout(e.buf), e.checked,
                       tuple((str(size), expr(v), axis) for _, size, v, axis in e.binds),
                       None if e.guard is None else expr(e.guard))
            elif isinstance(e, Load):
                key = ("load", position.get(e.buf, e.buf), tuple(map(str, e.index)), str(e.dtype),
                       layout(e.buf))
            elif isinstance(e, Scalar):
                key = ("scalar", position.get(e.name, e.name), str(e.dtype))
            elif hasattr(e, "args"):
                key = (e.name, str(e.dtype), tuple(expr(a) for a in e.args))
            else:
                key = (type(e).__name__, repr(getattr(e, "value", getattr(e, "expr", None))),
                       str(e.dtype))
            key = memo[id(e)] = table.setdefault(key, len(table))
        return key

    def stage(s):
        return (s.kind, tuple(map(str, s.domain)), s.reduce_axes, s.reduction,
                position.get(s.name, s.name), layout(s.name),
                None if s.store is None else tuple(map(str, s.store)),
                tuple(stage(m) for m in s.members), expr(s.body) if s.body is not None else None,
                tuple((position.get(a, a), layout(a)) for a in s.args), s.transposed,
                str(s.binds) if s.kind == "sort" else None)    # (the sorted positions kept)
    stages = tuple(stage(s) for s in k.stages)
    return ("structure", k.form, tuple(map(str, k.outer)), k.parallel, aliased,
            tuple(t for _, t in params), tuple(sorted(position.get(n, n) for n in k.locals)),
            stages, tuple(table))


def _canonical(text: str, name: str, params: list) -> str:
    """A kernel's C++ without its comments, its name and its parameters' names."""
    body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))
    body = body.replace(name, "KERNEL")
    index = {n: f"p{i}_" for i, n in enumerate(params)}
    if not index:
        return body
    return re.sub(r"\b(" + "|".join(map(re.escape, params)) + r")\b",
                  lambda m: index[m.group(1)], body)
