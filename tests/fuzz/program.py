"""A fuzz program: plain data that renders to Python source.

In: inputs (``InputSpec``), runtime float scalars, statements ``target = template(args)``
and the names of the outputs. Out: the source of ``def f(x0, ..., s0): ...; return (...)``,
the function itself (exec'd from that source, so what runs is what prints), its arguments,
and the source of a batch function that runs many programs at once.

Templates use ``{0}``, ``{1}``, ... for argument names, so programs can be renamed
(prefixed in a batch) and rewired (by the shrinker) without parsing Python.
"""
from __future__ import annotations

import copy
import linecache
from dataclasses import dataclass, field

import numpy as np

from .inputs import InputSpec, make_input


@dataclass
class Stmt:
    target: str
    template: str
    args: tuple

    @property
    def writes_argument(self) -> bool:
        """``t = x0; t[...] = ...``: an in-place update of an argument."""
        return self.template.startswith("{0}; ") and self.args[0].startswith("x")

    def render(self, rename=lambda n: n) -> str:
        """``target = template``; ``{t}`` in the template names the target (in-place updates
        render as ``t = x.copy(); t[1:] += y`` on one line)."""
        t = rename(self.target)
        return f"{t} = " + self.template.format(*[rename(a) for a in self.args], t=t)


@dataclass
class Program:
    inputs: list                      # [(name, InputSpec)]
    scalars: list                     # [(name, float)]
    stmts: list                       # [Stmt]
    outputs: list                     # [name]
    label: str = ""                   # e.g. "seed 3 #17"
    meta: dict = field(default_factory=dict)

    def copy(self) -> "Program":
        return copy.deepcopy(self)

    @property
    def params(self):
        return [n for n, _ in self.inputs] + [n for n, _ in self.scalars]

    def n_ops(self) -> int:
        return len(self.stmts)

    def body_lines(self, rename=lambda n: n):
        return [s.render(rename) for s in self.stmts]

    def source(self, name="f") -> str:
        lines = [f"def {name}({', '.join(self.params)}):"]
        lines += ["    " + ln for ln in self.body_lines()]
        lines.append(f"    return ({''.join(o + ', ' for o in self.outputs).rstrip()})")
        return "\n".join(lines) + "\n"

    def args(self):
        return [spec.make() for _, spec in self.inputs] + [float(v) for _, v in self.scalars]

    def args_source(self) -> str:
        items = [spec.source() for _, spec in self.inputs] + [repr(float(v)) for _, v in self.scalars]
        return "[" + ",\n            ".join(items) + "]"

    def function(self, name="f"):
        return exec_function(self.source(name), name, f"<fuzz {self.label or name}>")

    def dead_code_eliminated(self) -> "Program":
        live = set(self.outputs)
        keep = []
        for s in reversed(self.stmts):
            if s.target in live or s.writes_argument:      # the caller sees that write
                keep.append(s)
                live.update(a for a in s.args)
        p = self.copy()
        p.stmts = [copy.deepcopy(s) for s in reversed(keep)]
        p.inputs = [(n, s) for n, s in self.inputs if n in live]
        p.scalars = [(n, v) for n, v in self.scalars if n in live]
        return p


    def renumbered(self) -> "Program":
        """Statements' targets renamed v0, v1, ... in order."""
        m = {s.target: f"v{i}" for i, s in enumerate(self.stmts)}
        p = self.copy()
        for s in p.stmts:
            s.target = m[s.target]
            s.args = tuple(m.get(a, a) for a in s.args)
        p.outputs = [m.get(o, o) for o in p.outputs]
        return p


def exec_function(src: str, name: str, filename: str):
    """exec ``src`` (registering it with linecache so tracebacks and trace locations show
    it) and return the function called ``name``."""
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"np": np, "make_input": make_input, "__name__": "fuzz_programs"}
    exec(compile(src, filename, "exec"), ns)
    return ns[name]


def batch_source(programs, name="fuzz_batch") -> str:
    """One function running every program (variables prefixed ``p<k>_``), returning a
    tuple of per-program output tuples."""
    params, body, rets = [], [], []
    for k, p in enumerate(programs):
        ren = (lambda pre: (lambda n: pre + n))(f"p{k}_")
        params += [ren(n) for n in p.params]
        body += ["    " + ln for ln in p.body_lines(ren)]
        rets.append("(" + "".join(ren(o) + ", " for o in p.outputs).rstrip() + ")")
    return (f"def {name}({', '.join(params)}):\n" + "\n".join(body) +
            ("\n" if body else "") + f"    return ({''.join(r + ', ' for r in rets).rstrip()})\n")


def batch_args(programs, arg_lists):
    out = []
    for args in arg_lists:
        out += list(args)
    return out


def merge(programs, label="merged") -> Program:
    """Several independent programs as ONE program (names prefixed ``p<k>_``); used when
    programs fail only together (an interaction inside one compiled function)."""
    inputs, scalars, stmts, outputs = [], [], [], []
    for k, p in enumerate(programs):
        pre = f"p{k}_"
        inputs += [(pre + n, copy.deepcopy(s)) for n, s in p.inputs]
        scalars += [(pre + n, v) for n, v in p.scalars]
        stmts += [Stmt(pre + s.target, s.template, tuple(pre + a for a in s.args)) for s in p.stmts]
        outputs += [pre + o for o in p.outputs]
    return Program(inputs, scalars, stmts, outputs, label=label,
                   meta={"merged": [p.label for p in programs]})
