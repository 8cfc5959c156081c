"""Scheduling: LoopProgram -> kernels with their loop decisions made explicit.

In: a ``loopir.LoopProgram``. Out: a list of ``Kernel``. Stages whose domains share a
leading loop nest ``outer`` (e.g. the rows of a softmax or a layer norm) go into one kernel:
the outer loops run once (in parallel) and each stage runs its inner loops inside them.
A reduction read by later stages of its own kernel at the current outer point lives in a
local variable, never in memory. Reductions that keep the innermost axis (``x.sum(0)``)
get a kernel of their own in 'column' form: tiles of the kept axis are vectorized and the
reduced axes loop outside them.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

import numpy as np

from ..config import Options
from ..ir.loopir import (Gather, Load, LoopProgram, Op, Stage, control_reads, index_vars,
                         nested, walk)
from ..autotune_threshold import LOW as SERIAL_BELOW
from ..ir.ufuncs import EXPENSIVE
from .collapse import collapse
from .matvec import as_column, fuse_columns, row_dot

COLUMN_KINDS = frozenset({"sum", "prod", "max", "min", "any", "all"})
LOOP_WORK = 4
# the work of one element relative to the measured threshold's kernel (a * b + a: two cheap
# ops): a vector libm call ~10 cheap ops, a division or square root ~3, a complex op ~4 real
# ones. Below SERIAL_BELOW elements a kernel runs on the calling thread whatever its cost
# (graphs that small never measure the threshold)
EXPENSIVE_OPS, SLOW_OPS, COMPLEX_OPS = 10, 3, 4
SORT_OPS = 2        # per element and halving of a sorted slice
OWN_FORMS = ("scan", "sort", "scatter", "segment", "bincount")  # stage kinds: a kernel form each
SLOW = frozenset({"divide", "true_divide", "floor_divide", "remainder", "fmod", "sqrt",
                  "reciprocal", "cbrt"})


@dataclass
class Kernel:
    name: str
    form: str                      # 'nest' (shared outer loops) | 'flat' (outer empty) | 'column' | 'rows'
                                   # | 'tiled' | 'extern' (a NumPy call) | 'gemm' (ccg::gemm)
    outer: tuple                   # sizes of the shared outer loops (form 'nest')
    stages: list
    locals: set = field(default_factory=set)     # buffers kept in local variables
    parallel: bool = False
    parallel_if: str = ""          # symbolic sizes: the C++ condition for running in parallel
    regions: tuple = ()            # form 'control': the kernels of each body of its stage
    columns: tuple = ()            # form 'nest': stages summed over its rows (passes/matvec.py)

    def describe(self) -> str:
        return f"{self.name}: {self.form} outer={list(self.outer)} stages={[s.name for s in self.stages]}"

    def rewritten(self, suffix: str, stage) -> "Kernel":
        """A copy named ``name + suffix`` (a function of its own), each of its stages (and
        those of the kernels in its branches and loops) replaced by ``stage(s)``: a loop's
        middle without checks (``backend/loopsplit.py``), an iteration written out
        (``backend/unroll.py``)."""
        if self.form == "control":
            return replace(self, name=self.name + suffix, regions=tuple(
                [k.rewritten(suffix, stage) for k in r] for r in self.regions))
        return replace(self, name=self.name + suffix, stages=[stage(s) for s in self.stages])


def _loads(stage: Stage):
    if stage.kind == "extern":
        return []
    return [e for e in walk(stage.body) if isinstance(e, Load)]


def _can_join(kernel: Kernel, stage: Stage, buffers) -> bool:
    if kernel.form not in ("nest", "flat") or stage.kind == "extern" or stage.kind in OWN_FORMS:
        return False
    dot = row_dot(buffers, stage)
    if dot is not None and any(d is not None and d[0].buf != dot[0].buf
                               for d in (row_dot(buffers, s) for s in kernel.stages)):
        return False            # A @ x and B @ x: one matrix per pass (matvec.row_dot)
    if stage.kind == "pointwise" and _costly_epilogue(kernel, stage, buffers):
        return False
    outer = kernel.outer
    n = len(outer)
    if tuple(stage.domain[:n]) != tuple(outer):
        return False
    # a reduction joins only if it reduces exactly the axes inside the shared loops
    if stage.kind == "reduction" and stage.kept_axes != tuple(range(n)):
        return False
    if stage.kind == "reduction" and stage.reduction in ("argmax", "argmin") and n == 0:
        return False
    mine = {s.name for s in kernel.stages}
    # a write into part of a buffer (an argument, x[region] = v) never shares loops with
    # stages that read that buffer, nor does a stage that reads such a buffer of the kernel
    written = {s.name for s in kernel.stages if s.store is not None}
    if stage.store is not None and any(ld.buf == stage.name and not _same_point(s, ld, stage)
                                       for s in kernel.stages for ld in _loads(s)):
        return False
    if any(ld.buf in written for ld in _loads(stage)):
        return False
    if stage.store is not None and tuple(stage.store[:n]) != index_vars(n):
        return False            # x[::-1] = v: its rows are not the rows of the shared loops
    reads_mine = False
    pvars = index_vars(n)
    for ld in _loads(stage):
        if ld.buf in mine:
            reads_mine = True
            if tuple(ld.index[:n]) != pvars:
                return False
    last = kernel.stages[-1]
    sibling = (stage.kind == last.kind == "pointwise" and tuple(stage.domain) == tuple(last.domain)
               and not reads_mine)
    return reads_mine or n > 0 or sibling


def _costly_epilogue(kernel: Kernel, stage: Stage, buffers) -> bool:
    """A libm call (exp, tanh, ...) per row after row dot products: in its own kernel,
    vectorized over the rows, rather than one scalar call per row inside the rows' pass
    (logistic regression's 1 / (1 + exp(-(X @ w))) with 50 columns: a scalar exp per row
    cost more than the row's dot product; for long rows the extra pass over one value per
    row costs next to nothing)."""
    return any(row_dot(buffers, s) is not None for s in kernel.stages) and \
        any(isinstance(e, Op) and e.name in EXPENSIVE for e in walk(stage.body))


def _same_point(reader: Stage, ld, writer: Stage) -> bool:
    """Whether ``reader`` (earlier in the kernel) reads ``writer``'s buffer only at the element
    ``writer`` stores at the same domain point: each element is read before it is written,
    whether the stages share one loop or run one after another per row (a loop-carried
    ``z = where(|z| > 2, 2, z * z + c)`` beside ``escape[...] = ...`` that reads the old z)."""
    ident = index_vars(len(writer.domain))
    return (reader.kind == writer.kind == "pointwise" and not isinstance(ld, Gather)
            and tuple(reader.domain) == tuple(writer.domain)
            and tuple(ld.index) == tuple(writer.store) == ident)


def _new_kernel(stage: Stage, index: int, program: LoopProgram) -> Kernel:
    name = f"kernel{index}"
    if stage.kind == "extern":
        from ..backend.gemmgen import native_matmul
        return Kernel(name, "gemm" if native_matmul(stage, program.buffers) else "extern", (),
                      [stage])
    if stage.kind in OWN_FORMS:
        return Kernel(name, stage.kind, (), [stage])
    if stage.kind == "reduction" and as_column(stage, program.buffers):
        return Kernel(name, "column", (), [stage])      # (X.T @ r: a row of X at a time)
    if stage.kind == "reduction" and not stage.trailing_reduction:
        last_kept = (len(stage.domain) - 1) not in stage.reduce_axes
        if last_kept and stage.reduction in COLUMN_KINDS and stage.body.dtype != np.bool_:
            return Kernel(name, "column", (), [stage])
        return Kernel(name, "rows", (), [stage])
    if stage.kind == "reduction":
        outer = tuple(stage.domain[:len(stage.domain) - len(stage.reduce_axes)])
    else:       # (a column ``S[:, t] = ...``, domain (n, 1): the loop over its n rows inner,
        last = len(stage.domain) - 1        # in vectors, backend/kernels.py ``stage``)
        while last > 0 and _one(stage.domain[last]) and not all(map(_one, stage.domain[:last])):
            last -= 1
        outer = tuple(stage.domain[:last])
    return Kernel(name, "nest" if outer else "flat", outer, [stage])


def _one(d) -> bool:
    return isinstance(d, int) and d == 1


def schedule(program: LoopProgram, opts: Options) -> list:
    """Kernels in execution order; a control stage (a loop, a branch) is one kernel of form
    'control' whose ``regions`` are scheduled the same way (fusion stays inside a body)."""
    kernels = _group(program, program.stages, opts, itertools.count())
    _finish(program, kernels, opts)
    return kernels


def _group(program, stages, opts, counter) -> list:
    kernels: list[Kernel] = []
    for stage in stages:
        if stage.control is not None:
            k = Kernel(f"kernel{next(counter)}", "control", (), [stage])
            k.regions = tuple(_group(program, region, opts, counter) for region in stage.regions)
            kernels.append(k)
        elif opts.fuse and kernels and _can_join(kernels[-1], stage, program.buffers):
            kernels[-1].stages.append(stage)
        else:
            kernels.append(_new_kernel(stage, next(counter), program))
    kernels = fuse_columns(kernels) if opts.fuse else kernels
    return [collapse(k, program.buffers) for k in kernels]     # (short last axes merged)


def _finish(program, top, opts):
    kernels = nested(top)
    _choose_locals(program, kernels)
    for k in kernels:
        if _wants_tiles(program, k):
            k.form = "tiled"
    in_loops = {id(b) for k in kernels if k.form == "control" and k.stages[0].kind != "if"
                for b in nested([r for region in k.regions for r in region])}
    for k in kernels:
        if k.form == "control":
            k.name = f"{k.name}_{k.stages[0].kind}"
            continue
        sizes = [s.numel() for s in k.stages]
        cost = max(_element_cost(s) for s in k.stages)
        # a loop body's kernel wakes the threads every iteration, beside the body's other
        # kernels: threads where the work is LOOP_WORK times a lone kernel's threshold
        # (gramschmidt 500x400 on the 2-core EPYC: 45 ms with its column steps on both
        # threads, 32 ms on one; a 512x512 Jacobi sweep in a while loop, 71 vs 64 ms)
        # a kernel whose elements cost `cost` cheap ones pays for the threads `cost` times sooner
        threshold = opts.parallel_threshold * (LOOP_WORK if id(k) in in_loops else 1)
        threshold = max(min(threshold, SERIAL_BELOW), int(threshold / cost))
        if k.form == "nest" and all(isinstance(d, int) and d == 1 for d in k.outer):
            pass                # its parallel loop would run once: a row of a loop body
        elif k.form == "scan" and len(k.stages[0].domain) == 1 and \
                k.stages[0].body.dtype.kind in "fc" and k.stages[0].reduction in ("sum", "prod"):
            pass                # NumPy's float cumsum adds one element after another; chunks
            # started from the totals before them round otherwise (10^6 float32: 94% of the
            # elements differed), so one thread runs it in NumPy's order
        elif all(isinstance(n, int) for n in sizes):
            k.parallel = opts.parallel and max(sizes) >= threshold
        elif opts.parallel and k.form not in ("extern", "gemm"):   # decided per call, on the sizes
            from ..backend.cexpr import cindex
            k.parallel = True
            k.parallel_if = " || ".join(f"({cindex(n)}) >= {threshold}"
                                        for n in dict.fromkeys(sizes))
        k.name = (f"{k.name}_{_extern_name(k.stages[0])}" if k.form in ("extern", "gemm")
                  else _kernel_name(k))


def _element_cost(stage: Stage) -> float:
    """The work at one domain point, in units of the threshold probe's (``a * b + a``)."""
    units, seen = 0, set()
    for e in walk(stage.body) if stage.kind != "extern" else ():
        if not isinstance(e, Op) or e.name == "cast" or id(e) in seen:
            continue
        seen.add(id(e))
        w = EXPENSIVE_OPS if e.name in EXPENSIVE else SLOW_OPS if e.name in SLOW else 1
        if any(np.dtype(getattr(a, "dtype", np.float64)).kind == "c" for a in e.args):
            w *= COMPLEX_OPS
        units += w
    if stage.kind == "sort":        # ~log2(n) compares and moves per element
        n = stage.domain[stage.reduce_axes[0]]
        units += SORT_OPS * (n if isinstance(n, int) and n > 0 else 1024).bit_length()
    return max(1.0, units / 2)


def _choose_locals(program: LoopProgram, kernels: list):
    readers: dict[str, set] = {}
    gathered = set()            # read at positions from arrays, or by a branch: in memory
    for k in kernels:
        for s in k.stages:
            for buf in [ld.buf for ld in _loads(s)] + list(s.args):
                readers.setdefault(buf, set()).add(id(k))
            gathered |= {ld.buf for ld in _loads(s) if isinstance(ld, Gather)}
            if s.control:           # a branch's or loop's condition is read by the C++ around
                gathered |= set(control_reads(s))
    for k in kernels:
        if k.form not in ("nest", "flat"):
            continue
        for s in k.stages:
            buf = program.buffers[s.name]
            if s.kind == "reduction" and buf.role == "temp" and readers.get(s.name, set()) <= {id(k)} \
                    and s.name not in gathered and s.name not in k.columns:
                k.locals.add(s.name)


def _wants_tiles(program: LoopProgram, k: Kernel) -> bool:
    """A lone pointwise stage that reads some input across its rows (a transpose) is run in
    square tiles of its last two axes, so both the rows it reads and the rows it writes stay
    in cache."""
    if k.form != "nest" or len(k.stages) != 1 or k.stages[0].kind != "pointwise":
        return False
    s = k.stages[0]
    n = len(s.domain)
    if n < 2 or any(isinstance(d, int) and d < 16 for d in s.domain[-2:]):
        return False
    import sympy
    row, col = index_vars(n)[-2:]
    for ld in _loads(s):
        buf = program.buffers[ld.buf]
        off = sympy.expand(sum((i * st for i, st in zip(ld.index, buf.strides)), sympy.Integer(0)))
        c_col, c_row = off.coeff(col), off.coeff(row)
        wide = abs(int(c_col)) > 1 if c_col.is_Integer else bool(c_col.free_symbols)  # symbolic: a row
        if wide and c_row.is_Integer and abs(int(c_row)) == 1:
            return True
    return False


def _extern_name(s: Stage) -> str:
    return s.extern.name.rsplit(".", 1)[-1]


def _kernel_name(k: Kernel) -> str:
    parts = []
    for s in k.stages:
        ops = [e.name for e in walk(s.body) if isinstance(e, Op) and e.name != "cast"]
        if s.kind in ("reduction", "scan", "sort"):
            ops.append({"reduction": s.reduction, "scan": f"cum{s.reduction}"}.get(s.kind, s.reduction))
        if s.kind == "scatter":
            ops = [o for o in ops if o != "group"] + [f"{s.reduction or 'store'}_at"]
        if s.kind == "segment":
            ops = [o for o in ops if o != "group"] + [f"{s.reduction}_at_segments"]
        if s.kind == "bincount":
            ops = [o for o in ops if o != "group"] + ["bincount"]
        for o in ops:
            if o not in parts:
                parts.append(o)
    tail = "_".join(parts[:5]) or "copy"
    return f"{k.name}_{tail}"
