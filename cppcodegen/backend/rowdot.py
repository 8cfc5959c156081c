"""Matrix-vector rows in groups: ``y[i] = sum_j A[i, j] * x[j]`` a few rows at a time.

In: a 'nest' kernel whose one stage is a float sum over the last axis of a 2-D domain of
``A[i, j] * x[j]`` (both contiguous along j; ``A @ x``, a power iteration's step). Out: C++
that runs ``GROUP`` rows together: each vector of ``x`` is loaded once for all of them, so a
row costs one load per element instead of two (the row-at-a-time loop was load-bound: about
a quarter slower than BLAS's dgemv on one core).

Each row keeps exactly the operations of the generic row reduction (``reductions.py``):
four accumulator chains per block of ``reduction_block`` vectors, the blocks added with
Kahan compensation (rows longer than ``64 * reduction_block``), the scalar tail, then the
lanes; so a grouped row has the same bits as a row on its own, and the rows left over after
the last group are the same code with one row.
"""
from __future__ import annotations

import numpy as np
import sympy

from .cexpr import cindex, ctype, lanes_itemsize
from ..ir.loopir import index_vars
from ..passes.matvec import flat_offset, row_dot
from .loops import _vtype
from .sizes import _c

# rows per group by vector width in bytes. 4 with 16 AVX2 registers too, although the 4 x 4
# accumulators spill: 2000^2 float64 A @ x on the EPYC built for AVX2, 0.46 ms with 4 rows
# vs 0.54 ms with 2 (one thread: 0.97 vs 1.20 ms); fewer chains would change the sums
GROUP = {64: 4, 32: 4}


def row_dot_operands(p, k, scratch=()):
    """The row dot products of a nest kernel of the form above, or None: [(stage, matrix
    load, vector load)] in kernel order. Besides them (all over one domain and dtype, reading
    nothing the kernel writes) the kernel may hold pointwise stages over its rows: the
    epilogue of each row (``alpha * (A @ x) + beta * (B @ x)``, ``x1 + A @ y``)."""
    if k.form != "nest" or len(k.outer) != 1 or k.columns or scratch:
        return None
    written = {s.name for s in k.stages}
    dots = []
    for s in k.stages:
        ops = row_dot(p.buffers, s)
        if ops is None:
            if s.kind != "pointwise" or len(s.domain) != 1 or s.members:
                return None
            continue
        if any(ld.buf in written for ld in ops) or dots and (
                tuple(s.domain) != tuple(dots[0][0].domain) or s.body.dtype != dots[0][0].body.dtype):
            return None
        dots.append((s, *ops))
    return dots or None


class RowDotWriter:
    """``_form_row_dot`` for KernelWriter (uses its ``w``, ``k``, ``p``, ``opts``, ``omp``)."""

    def _form_row_dot(self, dots):
        w, s = self.w, dots[0][0]
        dt = s.body.dtype
        t, vt = ctype(dt), _vtype(dt)
        n0, n1 = s.domain
        block = self.opts.reduction_block if (
            not isinstance(n1, int) or n1 > 64 * self.opts.reduction_block) else 0
        wide = bool(block) and dt == np.float32     # (float32 blocks finish in double)
        w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body)}>;")
        w.line(f"constexpr int R = L * {np.dtype(dt).itemsize} >= 64 ? {GROUP[64]} : "
               f"{GROUP[32]};   // rows per group")
        w.line(f"const int64_t i1_end = {_c(n1)} / L * L;")
        w.line(f"const int64_t ngroups = {_c(n0)} / R;")
        if self.k.parallel:     # a contiguous half of A per thread: 2000^2 float64 A @ x,
            # 50 calls in a row, 0.34-0.36 ms against 0.40-0.42 ms in dynamic chunks of 8 rows
            # on the 2-core EPYC (more of A stays in each core's share of the cache)
            w.line(self.omp(1, _work(n1) * GROUP[64] * len(dots), contiguous=True))
        with w.indent("for (int64_t g = 0; g < ngroups; ++g) {"):
            self._row_group("g * R", "R", dots, block, wide, t, vt)
        with w.indent(f"for (int64_t r0 = ngroups * R; r0 < {_c(n0)}; ++r0) {{"):
            self._row_group("r0", "1", dots, block, wide, t, vt)

    def _row_group(self, first, count, dots, block, wide, t, vt):
        """The C++ of ``count`` rows from ``first`` (a compile-time row count: the loops over
        ``r`` unroll into one chain set per row): each dot product of the rows, then each
        row's epilogue."""
        w = self.w
        i0 = index_vars(2)[0]
        w.line(f"constexpr int NR = {count};")
        w.line(f"const int64_t row0 = {first};")
        for n, (s, a, x) in enumerate(dots):
            w.line(f"{'double' if wide else t} dot{n}[NR];")
            with w.indent("{"):
                self._dot_rows(f"dot{n}", s, a, x, block, wide, t, vt)
        dot_names = {s.name for s, _, _ in dots}
        with w.indent("for (int r = 0; r < NR; ++r) {"):
            w.line(f"const int64_t {i0} = row0 + r;")
            for n, (s, _, _) in enumerate(dots):
                out = self.p.buffers[s.name]
                if s.name in self.locals:
                    w.line(f"const {t} {self.locals[s.name]} = dot{n}[r];")
                else:
                    y = sympy.expand(i0 * out.strides[0]) if out.shape else sympy.Integer(0)
                    w.line(f"{s.name}[{cindex(y)}] = dot{n}[r];")
            for s in self.units:
                if s.name not in dot_names:
                    self.stage(s, [], {})

    def _dot_rows(self, dots, s, a, x, block, wide, t, vt):
        """``dots[r]`` = the dot product of row ``row0 + r`` of ``a`` with ``x``."""
        w = self.w
        i0, i1 = index_vars(2)
        a_off, x_off = flat_offset(self.p.buffers, a), flat_offset(self.p.buffers, x)
        acc_t = "double" if wide else t
        w.line(f"const {t}* __restrict__ xv = {x.buf} + {cindex(x_off.subs(i1, 0))};")
        w.line(f"const {t}* ar[NR];")
        w.line(f"for (int r = 0; r < NR; ++r) ar[r] = {a.buf} + "
               f"{cindex(a_off.subs(i1, 0).subs(i0, sympy.Symbol('row0') + sympy.Symbol('r')))};")
        w.line(f"{acc_t}* acc = {dots};")
        w.line(f"{vt} vacc[NR], vcomp[NR];")
        w.line(f"for (int r = 0; r < NR; ++r) {{ acc[r] = 0; vacc[r] = {vt}::broadcast(0); "
               f"vcomp[r] = {vt}::broadcast(0); }}")
        if block:
            head = f"for (int64_t i1_b = 0; i1_b < i1_end; i1_b += {block} * L) {{"
            end = f"std::min<int64_t>(i1_b + {block} * L, i1_end)"
        else:
            head, end = "{", "i1_end"
        with w.indent(head):
            w.line("const int64_t i1_be = " + end + ";")
            w.line(f"{vt} c0[NR], c1[NR], c2[NR], c3[NR];")
            if block:
                w.line(f"for (int r = 0; r < NR; ++r) c0[r] = c1[r] = c2[r] = c3[r] = "
                       f"{vt}::broadcast(0);")
            else:           # (no blocks: the first chain is the row's accumulator itself)
                w.line(f"for (int r = 0; r < NR; ++r) {{ c0[r] = vacc[r]; c1[r] = c2[r] = "
                       f"c3[r] = {vt}::broadcast(0); }}")
            w.line(f"int64_t i1_u = {'i1_b' if block else '0'};")
            with w.indent("for (; i1_u + 4 * L <= i1_be; i1_u += 4 * L) {"):
                for c in range(4):
                    w.line(f"const {vt} x{c} = {vt}::load(xv + i1_u + {c} * L);")
                with w.indent("for (int r = 0; r < NR; ++r) {"):
                    for c in range(4):
                        w.line(f"c{c}[r] = c{c}[r] + {vt}::load(ar[r] + i1_u + {c} * L) * x{c};")
            with w.indent("for (int64_t i1 = i1_u; i1 < i1_be; i1 += L) {"):
                w.line(f"const {vt} x0 = {vt}::load(xv + i1);")
                w.line(f"for (int r = 0; r < NR; ++r) c0[r] = c0[r] + {vt}::load(ar[r] + i1) * x0;")
            with w.indent("for (int r = 0; r < NR; ++r) {"):
                w.line(f"const {vt} blk = (c0[r] + c1[r]) + (c2[r] + c3[r]);")
                if block:   # Kahan: the block sums into the row's total
                    w.line("const auto y = blk - vcomp[r];")
                    w.line("const auto tt = vacc[r] + y;")
                    w.line(f"vcomp[r] = ccg::select(ccg::isfinite(tt), (tt - vacc[r]) - y, "
                           f"{vt}::broadcast(0));")
                    w.line("vacc[r] = tt;")
                else:
                    w.line("vacc[r] = blk;")
        with w.indent("for (int r = 0; r < NR; ++r) {"):
            w.line(f"for (int64_t i1 = i1_end; i1 < {_c(s.domain[1])}; ++i1) "
                   f"acc[r] = acc[r] + ar[r][i1] * xv[i1];")
            if block:
                cv = "ccg::convert<double>" if wide else ""
                w.line(f"acc[r] = acc[r] + ccg::reduce_add({cv}(vacc[r]) - {cv}(vcomp[r]));")
            else:
                w.line("acc[r] = acc[r] + ccg::reduce_add(vacc[r]);")


def _work(n) -> int:
    return n if isinstance(n, int) else 1024
