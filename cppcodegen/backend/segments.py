"""Kernel form 'segment': ``np.<op>.reduceat`` (a stage of kind 'segment', passes/lower.py).

In: the stage; its body is group(value at i1, start at i0, next start at i0 + 1, the status
buffer) and ``binds`` = (length of the reduced array, the ufunc's code). Out: C++ lines:

1. a serial check of every start in order (0 <= start < n, NumPy's IndexError for the first
   bad one, reported through the status buffer; nothing else runs then);
2. a loop over the segments (parallel when there are many): ``lo`` = this start, ``hi`` = the
   next one (n for the last); ``hi <= lo`` reduces ``a[lo]`` alone, as NumPy does. The value
   expression (gathers included) is computed per element inside the loop; sums of floats go
   through a per-thread scratch array into NumPy's pairwise sum (bit-equal), the rest combine
   in order (NumPy's order too).
"""
from __future__ import annotations

import numpy as np

from .cexpr import ExprRenderer, ctype
from ..ir.loopir import STATUS
from .loops import LoopWriter
from .sizes import _c, _hint

PARALLEL_SEGMENTS = 4096     # segments and elements before the loop over the segments
PARALLEL_WORK = 1 << 17      # runs on all threads
COMBINE = {"sum": "({0} + {1})", "prod": "({0} * {1})", "max": "ccg::maximum({0}, {1})",
           "min": "ccg::minimum({0}, {1})"}


class SegmentWriter(LoopWriter):
    def _form_segment(self):
        (s,) = self.k.stages
        w = self.w
        value, start, nxt = s.body.args[:3]
        n, code = s.binds
        m, nn = _c(s.domain[0]), _c(n)
        t = ctype(value.dtype)
        pairwise = s.reduction == "sum" and np.dtype(value.dtype).kind == "f"
        comb = COMBINE[s.reduction]
        with w.indent("{"):
            w.line("bool ok = true;")
            with w.indent(f"for (int64_t i0 = 0; i0 < {m} && ok; ++i0) {{"):
                r = ExprRenderer(w, self.p.buffers, self.locals)
                w.line(f"ok = ccg::segment_index_ok({r(start)}, {nn}, {STATUS}, {code});")
            w.line("if (!ok) return;")
            # the work is the reduced array's length, not the segments' count (which the
            # scheduler's k.parallel goes by); symbolic sizes: decided on their traced values
            if self.opts.parallel and _hint(n) >= PARALLEL_WORK and \
                    _hint(s.domain[0]) >= PARALLEL_SEGMENTS:
                w.line(self.omp(1, max(1, _hint(n) // max(1, _hint(s.domain[0])))))
            with w.indent(f"for (int64_t i0 = 0; i0 < {m}; ++i0) {{"):
                r = ExprRenderer(w, self.p.buffers, self.locals)
                w.line(f"const int64_t lo = {r(start)};")
                w.line(f"int64_t hi = {nn};")
                with w.indent(f"if (i0 + 1 < {m}) {{"):
                    r = ExprRenderer(w, self.p.buffers, self.locals)
                    w.line(f"hi = {r(nxt)};")
                w.line("if (hi <= lo) hi = lo + 1;")
                if pairwise:
                    w.line(f"static thread_local std::vector<{t}> seg_v;")
                    w.line("if ((int64_t)seg_v.size() < hi - lo) seg_v.resize(hi - lo);")
                    w.line(f"{t}* seg = seg_v.data();")
                    with w.indent("for (int64_t i1 = lo; i1 < hi; ++i1) {"):
                        r = ExprRenderer(w, self.p.buffers, self.locals)
                        w.line(f"seg[i1 - lo] = {r(value)};")
                    w.line(f"{s.name}[{self.out_offset(s)}] = "
                           "seg[0] + ccg::pairwise_sum(seg + 1, hi - lo - 1);")
                    return
                w.line(f"{t} acc{{}};")
                with w.indent("for (int64_t i1 = lo; i1 < hi; ++i1) {"):
                    r = ExprRenderer(w, self.p.buffers, self.locals)
                    v = r(value)
                    w.line(f"acc = i1 == lo ? {v} : {comb.format('acc', v)};")
                w.line(f"{s.name}[{self.out_offset(s)}] = acc;")

