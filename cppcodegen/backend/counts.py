"""Kernel form 'bincount': counts of values per bin (a stage of kind 'bincount',
``passes/lower_counts.py``: ``np.bincount``, ``np.histogram``).

In: the stage; its body is group(bin index, weight, keep, the status buffer) at i0, ``binds``
= (number of bins, whether a negative index is an error). Out: C++ lines. For each value in
order, where ``keep`` holds: an index in [0, bins) adds its weight (1 for counts) to its bin;
a negative one reports NumPy's ValueError (np.bincount) or is dropped (np.histogram), as is
one past the last bin. The value expression (searches, gathers) is computed inside the loop.

Counts run on all threads when there are many values for the bins: each thread counts its
chunks into a row of its own, the rows are added up after (no atomics; integer sums, so the
result is the same for any thread count). Weighted sums (floats) run in one thread in the
values' order: NumPy's sums, bit for bit.
"""
from __future__ import annotations

import numpy as np

from .cexpr import ExprRenderer, ctype
from ..ir.loopir import STATUS
from .loops import LoopWriter
from .sizes import _c

NEGATIVE_CODE = 4            # runtime/compiled.py: -1 - code = -5 -> bincount's ValueError
PARALLEL_VALUES = 1 << 16    # values before the threads count in rows of their own
VALUES_PER_BIN = 8           # ... and at least this many values per bin (the rows' cost)


class CountWriter(LoopWriter):
    def _form_bincount(self):
        (s,) = self.k.stages
        w = self.w
        nb, negative = s.binds
        n, nbc = _c(s.domain[0]), _c(nb)
        t = ctype(s.body.dtype)
        integer = np.dtype(s.body.dtype).kind in "iu"
        with w.indent("{"):
            if self.opts.parallel and self.k.parallel and integer:
                w.line("const int nt = ccg::max_threads();")
                cond = (f"nt > 1 && {n} >= {PARALLEL_VALUES} && "
                        f"{nbc} * {VALUES_PER_BIN} <= {n}")
                with w.indent(f"if ({cond}) {{", close="} else {"):
                    self._rows(s, n, nbc, t)
                with w.indent():
                    self._serial(s, n, nbc, t)
                w.line("}")
            else:
                self._serial(s, n, nbc, t)

    def _serial(self, s, n, nb, t):
        w = self.w
        w.line(f"for (int64_t b = 0; b < {nb}; ++b) {s.name}[b] = {t}(0);")
        with w.indent(f"for (int64_t i0 = 0; i0 < {n}; ++i0) {{"):
            self._count(s, nb, s.name)

    def _rows(self, s, n, nb, t):
        w = self.w
        w.line(f"std::vector<{t}> rows((size_t)nt * {nb}, {t}(0));")
        w.line(f"const int64_t chunks = std::min<int64_t>(int64_t(nt) * 8, ({n} + 16383) / 16384);")
        w.line(self.omp(1, 1 << 20))
        with w.indent("for (int64_t chunk = 0; chunk < chunks; ++chunk) {"):
            w.line(f"{t}* mine = rows.data() + (size_t)ccg::thread_index() * {nb};")
            w.line(f"const int64_t lo = {n} * chunk / chunks, hi = {n} * (chunk + 1) / chunks;")
            with w.indent("for (int64_t i0 = lo; i0 < hi; ++i0) {"):
                self._count(s, nb, "mine")
        with w.indent(f"for (int64_t b = 0; b < {nb}; ++b) {{"):
            w.line(f"{t} v = rows[b];")
            w.line(f"for (int c = 1; c < nt; ++c) v += rows[(size_t)c * {nb} + b];")
            w.line(f"{s.name}[b] = v;")

    def _count(self, s, nb, dst):
        """One value: its bin's count (or weight sum) in ``dst`` updated."""
        w = self.w
        index, weight, keep = s.body.args[:3]
        r = ExprRenderer(w, self.p.buffers, self.locals)
        k = r(keep)
        with w.indent(f"if ({k}) {{"):
            r = ExprRenderer(w, self.p.buffers, self.locals)
            r.count = 100           # (names apart from the keep's)
            i, v = r(index), r(weight)
            w.line(f"const int64_t k = {i};")
            w.line(f"if (static_cast<uint64_t>(k) < static_cast<uint64_t>({nb})) "
                   f"{dst}[k] += {v};")
            if s.binds[1]:
                w.line(f"else if (k < 0) ccg::count_error(k, {STATUS}, {NEGATIVE_CODE});")
