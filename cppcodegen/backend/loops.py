"""Loop rendering: loop nests whose innermost loop is a vector loop with a scalar tail.

In: a kernel (from schedule.py) of a LoopProgram, and per stage the axes to loop over and
what to emit for each element. Out: C++ lines in the kernel's ``CodeWriter``: ``for``
loops (OpenMP pragmas where the kernel is parallel, ``if(...)`` on symbolic sizes), the
innermost one vectorized when the stage's body allows (``ccg::Vec`` of ``L`` lanes, then a
scalar tail), the body rendered by ``cexpr.ExprRenderer`` in vector or scalar mode.
``LoopWriter`` is the base of the reduction and kernel-form writers.
"""
from __future__ import annotations

import numpy as np
import sympy

from .cexpr import BOOL, ExprRenderer, cindex, ctype, lanes_itemsize, literal, vectorizable
from ..config import Options
from ..ir.loopir import LoopProgram, Stage, index_vars
from ..passes.schedule import Kernel
from .rowlocal import row_local, rows_program    # (uses: rowlocal.buffer_uses)
from .reuse import group_siblings, reuse_plan
from .sizes import _c, _prod
from .writer import CodeWriter, omp_parallel_for

CHAINS = 4           # independent accumulators of an unrolled vector reduction (a power of 2)


class LoopWriter:
    """A kernel's C++ under construction (``self.w``): its loops, vector and scalar."""

    def __init__(self, program: LoopProgram, kernel: Kernel, opts: Options, uses=None):
        self.p, self.k, self.opts = program, kernel, opts
        self.w = CodeWriter()
        self.locals = {name: f"acc_{name}" for name in kernel.locals}
        self.units = group_siblings(kernel.stages)
        self.scratch, self.reuse = reuse_plan(kernel, self.units)
        self.rows = rows = row_local(program, kernel, uses, opts.generate_intermediate_hooks) \
            if uses else {}
        if rows:                    # temporaries used one row at a time: row arrays
            self.p = rows_program(program, rows, len(kernel.outer))
            self.scratch.update(rows)
        self.wide = False           # a float32 vector sum's accumulators: ccg::WideSum

    def omp(self, collapse: int, work, contiguous: bool = False, sizes=None) -> str:
        """A parallel-for pragma (a kernel over symbolic sizes renders its loops twice, with
        and without threads, and picks at run time: ``KernelWriter.render``); ``sizes``: of
        the loops it shares out, for chunks sized at run time."""
        trip = None if sizes is None else " * ".join(f"({_c(n)})" for n in sizes) or "1"
        return omp_parallel_for(collapse, work, contiguous, trip=trip)

    def chunks_omp(self, s: Stage, chunks) -> str:
        """The pragma of a loop over ``chunks`` fixed chunks of ``s``'s domain (a parallel
        reduction to one value, a scan's passes; ``chunks``: an int or a C++ count): each
        chunk is about the domain over ``chunks`` elements, so the small chunks of a small
        array are handed out several at a time (one grab of the OpenMP loop costs about as
        much as a few thousand elements of a reduction)."""
        n = chunks if isinstance(chunks, int) else 64
        trip = str(chunks) if isinstance(chunks, int) else "nchunks"
        return omp_parallel_for(1, max(1, _prod(s.domain) // max(1, n)), trip=trip)

    def out_offset(self, s: Stage) -> str:
        return cindex(self._out_expr(s))

    def _out_expr(self, s: Stage):
        buf = self.p.buffers[s.name]
        vars_ = index_vars(len(s.domain))
        idx = [vars_[a] for a in s.kept_axes] if s.kind == "reduction" else list(vars_)
        if s.store is not None:
            idx = list(s.store)
        return sympy.expand(sum((v * st for v, st in zip(idx, buf.strides)), sympy.Integer(0)))

    def can_vectorize(self, s: Stage, var) -> bool:
        """May the loop over ``var`` run in vectors? A pointwise stage's stores are whole
        vectors, or of a fixed step lane by lane (``Vec::store_strided``, ``KernelWriter.
        stage``: ints and float32/float64; bools are bits in a mask, complex and float16
        values vectors of another kind)."""
        if s.kind == "pointwise" and var is not None and any(
                not _stores_vectors(self._out_expr(m).coeff(var), m.body.dtype,
                                    self.p.buffers[m.name].dtype)
                for m in (s.members or (s,))):
            return False
        return self.opts.vectorize and var is not None and vectorizable(
            s.body, var, self.p.buffers, self.locals)

    def loops(self, s: Stage, axes, ranges, emit, parallel=False, allow_vector=True,
              declared_lanes=False, block=0, chains=None):
        """Nested loops over ``axes``; the innermost is a vector loop when possible."""
        w = self.w
        if not axes:
            r = ExprRenderer(w, self.p.buffers, self.locals, exact=True)
            emit(r, r(s.body), False)
            return
        *outer, inner = axes
        for n, a in enumerate(outer):
            lo, hi = ranges.get(a, ("0", _c(s.domain[a])))
            if parallel and n == 0:
                w.line(self.omp(1, _prod([s.domain[b] for b in axes[1:]])))
            w.line(f"for (int64_t i{a} = {lo}; i{a} < {hi}; ++i{a})")
        lo, hi = ranges.get(inner, ("0", _c(s.domain[inner])))
        var = index_vars(len(s.domain))[inner]
        with w.indent("{"):
            vector = allow_vector and self.can_vectorize(s, var)
            if vector and not declared_lanes:
                w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body, var)}>;")
            self.vector_loop(s, inner, lo, hi, emit, var, vector=vector,
                             parallel=parallel and not outer, block=block, chains=chains)

    def vector_loop(self, s, axis, lo, hi, emit, var, vector=None, parallel=False, block=0,
                    chains=None):
        """for i = lo..hi: vector iterations of L lanes, then a scalar tail. With ``block``,
        the vector iterations run in blocks of that many elements, each accumulating into a
        fresh ``vblk`` that is added to ``vacc`` after the block. ``chains``: (the vector
        accumulator ``emit`` updates, its initial value, how two combine): the vector
        iterations then feed CHAINS independent copies of it in turn (``unrolled``)."""
        w = self.w
        if vector is None:
            vector = self.can_vectorize(s, var)
            if vector:
                w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body, var)}>;")
        i = f"i{axis}"
        if vector:
            span = hi if lo == "0" else f"({hi} - {lo})"
            w.line(f"const int64_t {i}_end = {'' if lo == '0' else lo + ' + '}{span} / L * L;")
            if parallel:
                w.line(self.omp(1, 16))
            if block:
                with w.indent(f"for (int64_t {i}_b = {lo}; {i}_b < {i}_end; {i}_b += {block} * L) {{"):
                    vt, zero = self.acc_vtype(s)
                    w.line(f"auto vblk = {vt}::broadcast({zero});")
                    w.line(f"const int64_t {i}_be = std::min<int64_t>({i}_b + {block} * L, {i}_end);")
                    if chains:
                        self.unrolled(s, i, f"{i}_b", f"{i}_be", emit, var,
                                      ("vblk", zero, chains[2]))
                    else:
                        with w.indent(f"for (int64_t {i} = {i}_b; {i} < {i}_be; {i} += L) {{"):
                            r = ExprRenderer(w, self.p.buffers, self.locals, "vector", var,
                                             self.reuse.get(s.name))
                            emit(r, r(s.body), True)
                    if self.wide:       # (in double: the block sums need no compensation)
                        w.line("vacc = vacc + vblk;")
                    else:   # compensated (Kahan) sum of the block sums; not across infinities
                        w.line("auto y = vblk - vcomp;")
                        w.line("auto t = vacc + y;")
                        w.line(f"vcomp = ccg::select(ccg::isfinite(t), (t - vacc) - y, "
                               f"{vt}::broadcast({zero}));")
                        w.line("vacc = t;")
            elif chains:
                self.unrolled(s, i, lo, f"{i}_end", emit, var, chains)
            else:
                with w.indent(f"for (int64_t {i} = {lo}; {i} < {i}_end; {i} += L) {{"):
                    r = ExprRenderer(w, self.p.buffers, self.locals, "vector", var,
                                     self.reuse.get(s.name))
                    emit(r, r(s.body), True)
            lo = f"{i}_end"
            parallel = False
        if parallel:
            w.line(self.omp(1, 1))
        one = all(d == 1 for d in s.domain)     # (one element: no lanes to agree with)
        with w.indent(f"for (int64_t {i} = {lo}; {i} < {hi}; ++{i}) {{"):
            r = ExprRenderer(w, self.p.buffers, self.locals, reuse=self.reuse.get(s.name),
                             exact=one)
            emit(r, r(s.body), False)


    def acc_vtype(self, s) -> tuple:
        """(C++ type, zero) of a vector sum's accumulators: its values' vector, or a float32
        sum's ccg::WideSum (double lanes)."""
        if self.wide:
            return "ccg::WideSum<L>", "0.0"
        return _vtype(s.body.dtype), _zero(s.body.dtype)

    def unrolled(self, s, i, lo, end, emit, var, chains):
        """Vector iterations [lo, end) (a multiple of L) CHAINS at a time, iteration u of each
        group into copy u of the accumulator (``emit`` updates ``acc``: inside iteration u
        that name is a reference to copy u), so the adds of one iteration do not wait for
        those of the previous one; the leftover iterations go into ``acc``, then the copies
        are combined pairwise into it."""
        w = self.w
        acc, init, comb, *vt = chains       # (vt: the accumulator's type, when not a vector
        vt = vt[0] if vt else self.acc_vtype(s)[0]      # of the values: an argmax's lanes)
        copies = [acc] + [f"{acc}{u}" for u in range(1, CHAINS)]
        w.line(f"auto {', '.join(f'{c} = {vt}::broadcast({init})' for c in copies[1:])};")
        w.line(f"int64_t {i}_u = {lo};")
        with w.indent(f"for (; {i}_u + {CHAINS} * L <= {end}; {i}_u += {CHAINS} * L) {{"):
            for u, c in enumerate(copies):
                with w.indent("{"):
                    w.line(f"const int64_t {i} = {i}_u{f' + {u} * L' if u else ''};")
                    if u:
                        w.line(f"auto& {acc} = {c};")
                    r = ExprRenderer(w, self.p.buffers, self.locals, "vector", var,
                                     self.reuse.get(s.name))
                    emit(r, r(s.body), True)
        with w.indent(f"for (int64_t {i} = {i}_u; {i} < {end}; {i} += L) {{"):
            r = ExprRenderer(w, self.p.buffers, self.locals, "vector", var, self.reuse.get(s.name))
            emit(r, r(s.body), True)
        while len(copies) > 1:
            copies = [comb.format(a, b) for a, b in zip(copies[::2], copies[1::2])]
        w.line(f"{acc} = {copies[0]};")


def _zero(dtype) -> str:
    """0 as a vector's broadcast argument (complex lanes need a ccg::c128(0, 0))."""
    return literal(0, dtype) if np.dtype(dtype).kind == "c" else "0"


def _vtype(dtype):
    return "ccg::Mask<L>" if np.dtype(dtype) == BOOL else f"ccg::Vec<{ctype(dtype)}, L>"


_LANE_STORES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.uint8,
                                                  np.int16, np.uint16, np.int32, np.uint32,
                                                  np.int64, np.uint64))


def _stores_vectors(step, value_dtype, buffer_dtype) -> bool:
    """Does a store whose offset grows by ``step`` per lane go out from a vector: whole
    vectors (1), or lane by lane (another nonzero integer) of a type Vec stores so?"""
    return step == 1 or getattr(step, "is_Integer", False) and step != 0 and \
        value_dtype == buffer_dtype and value_dtype in _LANE_STORES
