"""A nest kernel with column sums: each row of a matrix read once for both reductions.

In: a 'nest' kernel with one outer loop whose ``columns`` (from passes/matvec.py) name
stages that sum a 2-D domain over its rows. Out: C++ that splits the rows into fixed chunks
(``ROWS_PER_CHUNK`` rows each, at most ``reductions.CHUNKS`` chunks: the count depends on
the sizes only), runs them in parallel, and per row runs the nest's stages and then adds
the row's terms of each column stage to the chunk's own partial row (vectorized along the
row, which the stages before have just brought into cache). The partial rows are then
added in chunk order, in parallel over the columns: the same bits for any thread count.
"""
from __future__ import annotations

from .cexpr import ExprRenderer, ctype, lanes_itemsize, vectorizable
from ..ir.loopir import Load, index_vars, walk
from .reductions import CHUNKS, combine, init_value
from .sizes import _c
from .writer import omp_for, omp_parallel

ROWS_PER_CHUNK = 64
GROUP = 4            # rows whose column terms are added per load/store of the partial row


class MatvecWriter:
    """``_form_nest_columns`` for KernelWriter (uses its ``stage``/``vector_loop``)."""

    def _form_nest_columns(self):
        w, k = self.w, self.k
        cols = [s for s in k.stages if s.name in k.columns]
        n0 = _c(k.outer[0])
        with w.indent("{"):
            w.line(f"const int64_t nchunks = std::max<int64_t>(1, std::min<int64_t>({CHUNKS}, "
                   f"({n0} + {ROWS_PER_CHUNK - 1}) / {ROWS_PER_CHUNK}));")
            for s in cols:   # kept between calls (no page faults per call); each chunk fills its row
                t, need = ctype(s.body.dtype), f"nchunks * {_c(s.domain[1])}"
                w.line(f"static thread_local std::vector<{t}> part_{s.name}_v;")
                w.line(f"if ((int64_t)part_{s.name}_v.size() < {need}) part_{s.name}_v.resize({need});")
                w.line(f"{t}* part_{s.name} = part_{s.name}_v.data();")
            if k.parallel:
                w.line(omp_parallel())
            with w.indent("{"):
                if k.parallel:
                    w.line(omp_for(1))
                with w.indent("for (int64_t chunk = 0; chunk < nchunks; ++chunk) {"):
                    for s in cols:
                        n1 = _c(s.domain[1])
                        w.line(f"{ctype(s.body.dtype)}* col_{s.name} = part_{s.name} + chunk * {n1};")
                        w.line(f"for (int64_t j = 0; j < {n1}; ++j) col_{s.name}[j] = "
                               f"{init_value(s.reduction, s.body.dtype)};")
                    w.line(f"const int64_t lo = {n0} * chunk / nchunks, hi = {n0} * (chunk + 1) / nchunks;")
                    self._row_groups(cols)
                for s in cols:
                    self._column_combine(s)

    def _row_groups(self, cols):
        """The chunk's rows [lo, hi) in groups of GROUP: each row's stages, keeping the row
        values the column stages read (the nest's locals) in arrays of GROUP, then the
        group's terms of each column added to the partial row in row order, every vector
        of it loaded and stored once per group (the same sums as one row at a time)."""
        w = self.w
        read = sorted({ld.buf for s in cols for ld in walk(s.body)
                       if isinstance(ld, Load) and ld.buf in self.locals})
        with w.indent(f"for (int64_t i0_g = lo; i0_g < hi; i0_g += {GROUP}) {{"):
            w.line(f"const int64_t g_n = std::min<int64_t>({GROUP}, hi - i0_g);")
            for b in read:
                w.line(f"{ctype(self.p.buffers[b].dtype)} grp_{b}[{GROUP}];")
            with w.indent("for (int64_t i0 = i0_g; i0 < i0_g + g_n; ++i0) {"):
                self._nest_row(1)
                for b in read:
                    w.line(f"grp_{b}[i0 - i0_g] = {self.locals[b]};")
            with w.indent(f"if (g_n == {GROUP}) {{", close="} else {"):
                for s in cols:
                    self._column_update(s, read, GROUP)
            with w.indent():
                with w.indent("for (int64_t i0 = i0_g; i0 < i0_g + g_n; ++i0) {"):
                    for s in cols:
                        self._column_update(s, read, 1)
            w.line("}")

    def _column_update(self, s, read, rows: int):
        """col[i1] += the terms of ``rows`` rows (from i0_g on, or row i0 alone), in row
        order, for every i1 of the row."""
        w, t = self.w, ctype(s.body.dtype)
        var = index_vars(2)[1]
        acc = f"col_{s.name}"

        def term(r_mode: str, u: int):
            """Row u's term in its own scope: its index and its locals bound."""
            if rows > 1:
                w.line(f"const int64_t i0 = i0_g + {u};")
                for b in read:
                    w.line(f"const {ctype(self.p.buffers[b].dtype)} {self.locals[b]} = grp_{b}[{u}];")
            else:
                for b in read:
                    w.line(f"const {ctype(self.p.buffers[b].dtype)} {self.locals[b]} = grp_{b}[i0 - i0_g];")
            r = (ExprRenderer(w, self.p.buffers, self.locals, "vector", var) if r_mode == "vector"
                 else ExprRenderer(w, self.p.buffers, self.locals))
            return r(s.body)

        vcomb = combine(s.reduction, s.body.dtype, True)
        scomb = combine(s.reduction, s.body.dtype, False)
        n1 = _c(s.domain[1])
        with w.indent("{"):
            if vectorizable(s.body, var, self.p.buffers, self.locals) and self.opts.vectorize:
                w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body)}>;")
                w.line(f"const int64_t i1_end = {n1} / L * L;")
                with w.indent("for (int64_t i1 = 0; i1 < i1_end; i1 += L) {"):
                    w.line(f"auto vcur = ccg::Vec<{t}, L>::load({acc} + i1);")
                    for u in range(rows):
                        with w.indent("{"):
                            w.line(f"vcur = {vcomb.format('vcur', term('vector', u))};")
                    w.line(f"vcur.store({acc} + i1);")
                start = "i1_end"
            else:
                start = "0"
            with w.indent(f"for (int64_t i1 = {start}; i1 < {n1}; ++i1) {{"):
                for u in range(rows):
                    with w.indent("{"):
                        w.line(f"{acc}[i1] = {scomb.format(f'{acc}[i1]', term('scalar', u))};")

    def _column_combine(self, s):
        """The chunks' partial rows added in chunk order (after the barrier of the rows)."""
        w, t = self.w, ctype(s.body.dtype)
        n1 = _c(s.domain[1])
        if self.k.parallel:
            w.line(omp_for())
        with w.indent(f"for (int64_t i1 = 0; i1 < {n1}; ++i1) {{"):
            w.line(f"{t} v = part_{s.name}[i1];")
            comb = combine(s.reduction, s.body.dtype).format("v", f"part_{s.name}[c * {n1} + i1]")
            w.line(f"for (int64_t c = 1; c < nchunks; ++c) v = {comb};")
            w.line(f"{s.name}[{self.out_offset(s)}] = v;")
