"""Loop IR: buffers, stages and their bodies, as printable plain data.

A ``Stage`` computes one buffer: a Pointwise stage stores ``body`` at every point of its
domain; a Reduction stage combines ``body`` over ``reduce_axes`` of its domain and stores
the result at the kept coordinates. Bodies are small expression DAGs (hash-consed: equal
sub-expressions are the same object) over sympy index variables ``i0, i1, ...`` (one per
domain dimension, shared by position across the stages of a kernel).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy

from .graph import postorder


@dataclass(frozen=True, eq=False)
class Load:
    buf: str
    index: tuple           # one sympy expression per buffer dimension
    dtype: np.dtype


STATUS = "ccg_err"         # the program's error report (int64[4], role 'status'): a gather's
                           # out-of-range index sets [1, index, axis size, axis]


@dataclass(frozen=True, eq=False)
class Gather(Load):
    """A load at positions read from arrays (``x[idx]``): ``binds`` are (name, axis size,
    value, axis) per indexed axis; ``index`` uses each name as an integer symbol for the value
    after NumPy's wrapping of negative indices and its bounds check (out of range: the
    program reports IndexError, the load reads element 0)."""
    binds: tuple = ()
    guard: object = None    # a bool Expr: an error counts only where it holds (or None)
    checked: bool = True    # False: positions an earlier iteration of the loop checked (the
                            # same values: backend/loopsplit.py), wrapped but not checked

    @property
    def args(self) -> tuple:
        return tuple(b[2] for b in self.binds) + ((self.guard,) if self.guard is not None else ())


@dataclass(frozen=True, eq=False)
class Search(Gather):
    """``np.searchsorted(a, value, side)`` of a sorted 1-D ``a``: ``buf`` at ``index`` is
    a's element ``k`` (the symbol ``SEARCH_VAR``), ``length`` its size; int64."""
    value: object = None
    length: object = 0
    right: bool = False

    @property
    def args(self) -> tuple:
        return (self.value,)


SEARCH_VAR = sympy.Symbol("sk", integer=True, nonnegative=True)


@dataclass(frozen=True, eq=False)
class Const:
    value: object
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Scalar:
    name: str              # runtime scalar argument
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Index:
    expr: sympy.Expr       # an integer index value (int64)
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Op:
    name: str              # an op of ufuncs.OPS, or 'cast'
    args: tuple
    dtype: np.dtype


Expr = Load | Gather | Const | Scalar | Index | Op


class ExprBuilder:
    """Hash-consing constructor: building the same expression twice gives the same object."""

    def __init__(self):
        self._memo = {}

    def _make(self, cls, key, *fields, **named):
        k = (cls, key)
        e = self._memo.get(k)
        if e is None:
            e = self._memo[k] = cls(*fields, **named)
        return e

    def load(self, buf, index, dtype):
        return self._make(Load, (buf, tuple(index), dtype), buf, tuple(index), dtype)

    def gather(self, buf, index, dtype, binds, guard=None):
        return self._make(Gather, (buf, tuple(index), dtype, tuple((n, str(sz), id(v), ax)
                                                                  for n, sz, v, ax in binds),
                                   id(guard)),
                          buf, tuple(index), dtype, tuple(binds), guard)

    def search(self, buf, index, value, length, right):
        return self._make(Search, (buf, tuple(index), id(value), str(length), right), buf,
                          tuple(index), np.dtype(np.int64), value=value, length=length,
                          right=right)

    def const(self, value, dtype):
        return self._make(Const, (repr(value), dtype), value, dtype)

    def scalar(self, name, dtype):
        return self._make(Scalar, (name, dtype), name, dtype)

    def index(self, expr, dtype):
        return self._make(Index, (expr, dtype), expr, dtype)

    def op(self, name, args, dtype):
        args = tuple(args)
        if name == "cast" and np.dtype(dtype).kind in "iu" and isinstance(args[0], Op) \
                and args[0].name == "trunc":    # int(x): the cast truncates already
            args = args[0].args
        return self._make(Op, (name, tuple(id(a) for a in args), dtype), name, args, dtype)


@dataclass(frozen=True)
class Buffer:
    name: str
    dtype: np.dtype
    shape: tuple           # sizes (ints, or sympy expressions later)
    strides: tuple         # in elements
    role: str              # 'input' | 'constant' | 'output' | 'temp'
    arg: object = None     # input: argument index; constant: key; output: leaf positions


@dataclass
class Stage:
    name: str                      # the buffer it writes
    kind: str                      # 'pointwise' | 'reduction' | 'scan' | 'sort' | 'extern' | 'scatter' ...
    domain: tuple                  # loop sizes, one per index variable
    body: object                   # Expr at a domain point
    reduce_axes: tuple = ()        # reduction: domain positions combined; scan: its axis
    reduction: str | None = None   # 'sum' | 'prod' | 'max' | 'min' | 'any' | 'all' | 'argmax' | 'argmin'
    nodes: str = ""                # graph nodes it computes (for comments)
    where: str = ""                # the user's source line
    extern: object = None          # kind 'extern': the NumPy call (runtime.extern.ExternCall) ...
    args: tuple = ()               # ... and the buffers it reads
    members: tuple = ()            # a multi-output pointwise loop: the stages it runs
    store: tuple | None = None     # pointwise into part of a buffer (x[region] = v): the
                                   # element written at each domain point (None: the point)
    views: tuple = ()              # kind 'extern', NumPy's call: per arg, the axes order it
                                   # sees the buffer in (a transposed view, not a copy), or None
    transposed: tuple = ()         # kind 'extern', a native matrix product: per arg, whether
                                   # it is read with its last two axes swapped (x @ w.T)
    control: dict | None = None    # kind 'for' | 'while' | 'if': bounds (for), the buffer of
                                   # the condition (while, if) or of the go-on test (for);
                                   # kind 'bind': ``bounds``, the data symbol it sets;
                                   # kind 'check': ``count`` (a buffer) > 0, else ``code``
    regions: tuple = ()            # ... and the stages of each body (if: then, else;
                                   # while: condition, body)
    binds: tuple = ()              # kind 'scatter' (x[idx] = v, np.add.at): (name, axis size,
                                   # value, axis) of the indices ``store`` uses, as in Gather;
                                   # ``body`` is group(value, index values), run in order;
                                   # kind 'sort' 'select': the sorted positions kept

    @property
    def kept_axes(self) -> tuple:
        return tuple(i for i in range(len(self.domain)) if i not in self.reduce_axes)

    @property
    def trailing_reduction(self) -> bool:
        n = len(self.domain)
        return self.kind == "reduction" and self.reduce_axes == tuple(range(n - len(self.reduce_axes), n))

    def numel(self):
        """The number of domain points: an int, or a sympy product of symbolic sizes."""
        if all(isinstance(d, int) for d in self.domain):
            return int(np.prod(self.domain, dtype=np.int64))
        out = sympy.Integer(1)
        for d in self.domain:
            out *= d
        return out


@dataclass
class LoopProgram:
    buffers: dict                  # name -> Buffer
    stages: list                   # in execution order
    scalars: list                  # (name, dtype, argument index)
    outputs: object                # output tree: leaves are ('buf', name) / ('py', name) (a
                                   # 0-d buffer returned as a Python number) / ('arg', i) / values
    hints: dict = field(default_factory=dict)   # size symbol -> value when traced (heuristics only)
    sizes: tuple = ()              # names of the size/stride symbols: int64 kernel arguments
    loopvars: tuple = ()           # names of the loops' induction variables (int64, local)
    datavars: tuple = ()           # names of the data symbols bind stages set (int64, local)
    counters: tuple = ()           # (name, draws per run) of random ops in loops (int64, local)
    sites: tuple = ()              # the user's file:line of each indexing that reports an
                                   # index out of range (``runtime.compiled.SITE``)

    def mutated_args(self) -> tuple:
        """Indices of the arguments the program writes (updated in place), also inside its
        loops and branches (a loop updating an argument in its own memory)."""
        return tuple(sorted({self.buffers[s.name].arg for s in nested(self.stages)
                             if s.name in self.buffers and (s.store is not None or
                                                            s.kind == "scatter")
                             and self.buffers[s.name].role == "input"}))

    def __str__(self):
        lines = [f"buffer {b.name}: {b.role} {b.dtype}{list(b.shape)} strides={list(b.strides)}"
                 for b in self.buffers.values()]
        lines += _stage_lines(self.stages, "")
        return "\n".join(lines)


def _stage_lines(stages, indent) -> list:
    lines = []
    for s in stages:
        if s.control is not None:
            lines += _control_lines(s, indent)
        elif s.kind == "extern":
            args = [a + (".mT" if t else "") + (f".transpose{v}" if v else "") for a, t, v in
                    zip(s.args, s.transposed or [0] * len(s.args), s.views or [None] * len(s.args))]
            lines.append(f"{indent}extern {s.name} = {s.extern}({', '.join(args)}) -> {list(s.domain)}")
        else:
            head = f"{s.kind} {s.name} over {list(s.domain)}"
            if s.store is not None:
                head = f"{s.kind} {s.name}[{', '.join(map(str, s.store))}] over {list(s.domain)}"
            if s.kind in ("reduction", "scan", "sort"):
                head += f" {s.reduction} axes={list(s.reduce_axes)}"
            lines.append(f"{indent}{head}:  {format_expr(s.body)}")
    return lines


def _control_lines(s, indent) -> list:
    c = s.control
    if s.kind == "bind":
        return [f"{indent}bind {sym} = {buf}[]" for sym, buf in c["bounds"]]
    if s.kind == "check":
        return [f"{indent}check {c['count']}[] > 0 (else error {c['code']})"]
    if s.kind == "swap":
        return [f"{indent}swap {c['swap'][0]} <-> {c['swap'][1]}"]
    if s.kind == "print":
        return [f"{indent}print {', '.join(b + '[]' for b in c['values'])}   # {s.where}"]
    if s.kind == "for":
        head = f"for {c['var']} in range({c['start']}, {c['stop']}, {c['step']})"
        if c.get("test"):
            head += f" while {c['test']}"
    else:
        head = f"{s.kind} {c['cond']}"
    lines = [f"{indent}{head}:   # {s.where}"]
    for k, region in enumerate(s.regions):
        if k:
            lines.append(f"{indent}{'else' if s.kind == 'if' else 'do'}:")
        lines += _stage_lines(region, indent + "    ")
    return lines


class IMod(sympy.Mod):
    """Mod of index expressions: sympy's Mod, except that a dividend which holds a Mod, floor
    or FloorDiv of its own stays as written. sympy 1.14 rewrites Mod(3*Mod(i, 43), 127) into
    Mod(3*Mod(i, 43)**2, 127), a wrong index (a reshape, slice and reshape again hit it)."""

    @classmethod
    def eval(cls, p, q):
        if p.has(sympy.Mod, sympy.floor, FloorDiv):
            return None
        return super().eval(p, q)


class FloorDiv(sympy.Function):
    """floor(a / b) of index values with a symbolic divisor b > 0 (C++: ccg_idx_div)."""
    is_integer = True


def index_vars(n: int) -> tuple:
    return tuple(sympy.Symbol(f"i{k}", integer=True, nonnegative=True) for k in range(n))


def format_expr(e, depth=0) -> str:
    if depth > 12:
        return "..."
    if isinstance(e, Search):
        return (f"searchsorted_{'right' if e.right else 'left'}({e.buf}[{', '.join(map(str, e.index))}] for sk < "
                f"{e.length}, {format_expr(e.value, depth + 1)})")
    if isinstance(e, Gather):
        binds = ", ".join(f"{n}={format_expr(v, depth + 1)} (of {sz})" for n, sz, v, _ in e.binds)
        guard = "" if e.guard is None else f" if {format_expr(e.guard, depth + 1)}"
        return f"{e.buf}[{', '.join(map(str, e.index))} | {binds}{guard}]"
    if isinstance(e, Load):
        return f"{e.buf}[{', '.join(map(str, e.index))}]"
    if isinstance(e, Const):
        return repr(e.value)
    if isinstance(e, Scalar):
        return e.name
    if isinstance(e, Index):
        return f"idx({e.expr})"
    if e.name == "cast":
        return f"{e.dtype}({format_expr(e.args[0], depth + 1)})"
    return f"{e.name}({', '.join(format_expr(a, depth + 1) for a in e.args)})"


def control_reads(s) -> list:
    """The buffers the C++ around a control stage reads: a branch's or a while's condition,
    a loop's go-on test, the bounds of a loop computed from array values, the two buffers a
    swap trades, the values a print prints."""
    c = s.control or {}
    return [c[k] for k in ("cond", "test", "count") if c.get(k)] + \
        [b for _, b in c.get("bounds", ())] + list(c.get("swap", ())) + \
        list(c.get("values", ()))


def nested(items) -> list:
    """Every item and those in its regions, in program order (a control stage before the
    stages of its loop's or branches' bodies; a control kernel before their kernels)."""
    out = []
    for item in items:
        out.append(item)
        for region in item.regions:
            out += nested(region)
    return out


def walk(expr, stop=frozenset()):
    """Every distinct sub-expression once, operands before users (not below ``stop`` ids)."""
    return postorder([expr], lambda e: e.args if isinstance(e, (Op, Gather)) and id(e) not in stop
                     else ())


def reindex_loads(expr, index):
    """``expr`` with each Load's index tuple mapped by ``index`` (ops rebuilt above them,
    shared sub-expressions kept shared; other leaves as they are)."""
    memo = {}

    def rewrite(e):
        got = memo.get(id(e))
        if got is None:
            if type(e) is Load:
                got = Load(e.buf, index(e.index), e.dtype)
            elif type(e) is Op:
                got = Op(e.name, tuple(rewrite(a) for a in e.args), e.dtype)
            else:
                got = e
            memo[id(e)] = got
        return got
    return rewrite(expr)
