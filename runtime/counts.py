"""Sizes that are counts of the values, settled when the NumPy step that gives them has run.

In: a plan whose extern steps have *counted* outputs (``ExternCall.counted``: ``x[mask]``,
``np.nonzero``: an axis whose length is a count of the values, a symbol ``m0`` in the
compiled code). Out: ``Counts``, which the call runner (``compiled._run_steps``) hands each
such step: the step's array made by NumPy (``ExternCall.fresh``), the count read from its
shape, the guards on counts checked (``m0 >= 1`` where the trace took ``y[0]``: a call that
breaks one raises ``ShapeChanged`` and is traced again for its count), then the buffers whose
shapes use the count allocated and the count passed to the kernels after the step (their
arguments are placeholders until then). No compiler imports.
"""
from __future__ import annotations

import numpy as np

from .extern import ShapeChanged
from .sizes import compile_expr, evaluate


def _names(text: str) -> set:
    return set(compile_expr(text).co_names)


class Counts:
    """What each counted step of ``plan`` settles."""

    @classmethod
    def of(cls, plan):
        """``plan``'s counts, or None when no step of it gives one."""
        counted = [st for st in plan.steps if st[0] == "extern" and st[1].counted]
        return cls(plan, counted) if counted else None

    def __init__(self, plan, counted: list):
        names = {n for st in counted for n, _ in st[1].counted}
        outs = {st[3] for st in counted}
        need = {}                   # plan argument -> the counts its size uses
        for j, spec in enumerate(plan.args):
            if spec[0] == "size" and spec[1] in names:
                need[j] = {spec[1]}
            elif spec[0] in ("output", "temp"):
                used = set().union(*[_names(d) for d in spec[1] if isinstance(d, str)]) & names
                if used:
                    need[j] = used
        self.later = set(need)      # arguments passed as placeholders until their step
        self.position = {}          # plan argument -> its index in the entries' arguments
        self.kinds = {st[3]: (np.dtype(plan.args[st[3]][2]), len(plan.args[st[3]][1]))
                      for st in counted}
        guards = [(_names(g) & names, compile_expr(g), text) for g, text in plan.late_guards]
        self.ready = {}             # id(step) -> (sizes, buffers, guards) it completes
        known, done = set(), set()
        for st in counted:
            known |= {n for n, _ in st[1].counted}
            sizes = [(j, plan.args[j][1]) for j, n in need.items()
                     if j not in done and n <= known and plan.args[j][0] == "size"]
            buffers = [(j, tuple(compile_expr(d) if isinstance(d, str) else d
                                 for d in plan.args[j][1]), np.dtype(plan.args[j][2]))
                       for j, n in need.items() if j not in done and j not in outs
                       and n <= known and plan.args[j][0] != "size"]
            checks = [(code, text) for used, code, text in guards
                      if used <= known and used & {n for n, _ in st[1].counted}]
            done |= {j for j, n in need.items() if n <= known}
            self.ready[id(st)] = (sizes, buffers, checks)
        self.fb = self.empty = None

    def bind(self, fb, empty):
        """The runner's pointer maker and output allocator."""
        self.fb, self.empty = fb, empty

    def settle(self, step, arrays, memo, cargs, values, env):
        """Run the counted ``step`` on ``arrays``; set what its count decides."""
        call, out = step[1], step[3]
        dtype, ndim = self.kinds[out]
        result = call.fresh(*arrays, dtype=dtype, ndim=ndim, memo=memo)
        values[out] = result
        cargs[self.position[out]] = self.fb(result)
        for name, axis in call.counted:
            env[name] = result.shape[axis]
        sizes, buffers, checks = self.ready[id(step)]
        for code, text in checks:       # (one broken: traced again for this call's count)
            if not evaluate(code, env):
                raise ShapeChanged(f"{call.name}: the count breaks {text}", respecialize=True)
        for j, name in sizes:
            cargs[self.position[j]] = env[name]
        for j, shape, dt in buffers:
            values[j] = buf = self.empty(tuple(int(evaluate(d, env)) if not isinstance(d, int)
                                               else d for d in shape), dt)
            cargs[self.position[j]] = self.fb(buf)
