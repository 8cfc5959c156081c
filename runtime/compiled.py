"""The compiled callable: everything a call needs, without the compiler.

In: a loaded library's entry point and a plain-data ``Plan`` (the entry's arguments in order,
how to produce each one from the call's arguments, and the output tree). Out: a callable
that allocates outputs and temporaries, passes pointers and scalars, runs the kernels and
returns NumPy arrays. Built from JSON-able data so a warm start needs no lowering.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Plan:
    args: tuple        # per entry argument: ('input', arg index) | ('constant', key)
                       # | ('output'|'temp', shape, dtype str) | ('scalar', arg index)
    outputs: object    # tree with leaves ('buf', position in args) | ('arg', i) | ('value', v)


class CompiledVariant:
    """Runs one compiled specialization (fixed dtypes, shapes and layouts)."""

    def __init__(self, ffi, fn, plan: Plan, constants: dict, hook=None):
        self.ffi, self.fn, self.plan = ffi, fn, plan
        self.constants = constants
        self.hook = hook
        steps = []
        for spec in plan.args:
            if spec[0] == "input":
                steps.append((0, spec[1], None))
            elif spec[0] == "constant":
                steps.append((1, constants[spec[1]], None))
            elif spec[0] in ("output", "temp"):
                steps.append((2, tuple(spec[1]), np.dtype(spec[2])))
            else:
                steps.append((3, spec[1], None))
        self.steps = steps

    def _pointer(self, a: np.ndarray):
        if a.flags.c_contiguous:
            return self.ffi.from_buffer(a)
        return self.ffi.cast("void*", a.__array_interface__["data"][0])

    def __call__(self, args):
        values, cargs = [], []
        ptr = self._pointer
        for kind, a, b in self.steps:
            if kind == 0:
                arr = args[a]
                values.append(arr)
                cargs.append(ptr(arr))
            elif kind == 1:
                values.append(a)
                cargs.append(ptr(a))
            elif kind == 2:
                arr = np.empty(a, b)
                values.append(arr)
                cargs.append(self.ffi.from_buffer(arr))
            else:
                values.append(None)
                cargs.append(args[a])
        self.fn(*cargs)
        return _build(self.plan.outputs, values, args)


def _result(arr):
    return arr[()] if arr.ndim == 0 else arr


def _build(tree, values, args):
    if type(tree) is tuple and tree and isinstance(tree[0], str):
        tag, v = tree
        if tag == "buf":
            out = values[v]
            if out is not None and not out.flags.writeable:     # a constant: hand out a copy
                out = out.copy()
            return _result(out)
        if tag == "arg":
            return args[v]
        return v
    if isinstance(tree, dict):
        return {k: _build(v, values, args) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_build(v, values, args) for v in tree]
    return tuple(_build(v, values, args) for v in tree)
