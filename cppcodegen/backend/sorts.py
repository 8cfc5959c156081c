"""Kernel form 'sort': each slice along one axis sorted, its sorting permutation, or the values
at some of its sorted positions (a stage of kind 'sort', ``passes/lower.py``: ``np.sort`` /
``np.argsort`` in compiled loops, ``np.median`` / ``np.percentile`` / ``np.quantile``,
``frontend/sorting.py``).

In: the stage; ``reduce_axes`` = (the sorted axis,), ``reduction`` = 'sort', 'argsort' or
'select' (``binds``: the sorted positions kept, ascending; the output's axis has one
element per position).
Out: C++ lines. Per slice (the other axes' loops, in parallel when the work pays): the body's
values along the axis into a row scratch (a vector loop where the body allows), sorted in
NumPy's order (``include/cppcodegen/sort.h``: NaN last; argsort stable), then stored along
the axis of the output (select: ``std::nth_element`` at each kept position, as NumPy's
``np.partition``, and those values stored).
"""
from __future__ import annotations

import sympy

from .cexpr import ExprRenderer, cindex, ctype
from ..ir.loopir import index_vars
from .loops import LoopWriter
from .sizes import _c, _hint


class SortWriter(LoopWriter):
    def _form_sort(self):
        (s,) = self.k.stages
        w, n, (a,) = self.w, len(s.domain), s.reduce_axes
        t = ctype(s.body.dtype)
        others = [b for b in range(n) if b != a]
        size = _c(s.domain[a])
        if self.k.parallel and others:
            w.line(self.omp(len(others), 4 * _hint(s.domain[a])))
        for b in others:
            w.line(f"for (int64_t i{b} = 0; i{b} < {_c(s.domain[b])}; ++i{b})")
        with w.indent("{"):
            w.line(f"ccg::RowScratch<{t}> keys({size});")

            def fill(r: ExprRenderer, value: str, vector: bool):
                w.line(f"{value}.store(keys.data() + i{a});" if vector
                       else f"keys[i{a}] = {value};")
            self.loops(s, [a], {}, fill)
            if s.reduction == "select":     # the values at the sorted positions kth
                kth = ", ".join(str(k) if isinstance(k, int) else     # (n // 2 - 1 of n = 1)
                                f"std::max<int64_t>(0, {_c(k)})" for k in s.binds)
                w.line(f"const int64_t kth[{len(s.binds)}] = {{{kth}}};")
                w.line(f"ccg::select_values(keys.data(), {size}, kth, {len(s.binds)});")
                out = self._out_expr(s).subs(index_vars(n)[a], sympy.Symbol("j", integer=True))
                w.line(f"for (int64_t j = 0; j < {len(s.binds)}; ++j) "     # (an empty slice:
                       f"{s.name}[{cindex(out)}] = {size} > 0 ? keys[kth[j]] : {t}(0);")  # 0)
                return
            if s.reduction == "sort":
                w.line(f"ccg::sort_values(keys.data(), {size});")
                row = "keys"
            else:
                w.line(f"ccg::RowScratch<int64_t> pos({size});")
                w.line(f"ccg::sort_positions(keys.data(), pos.data(), {size});")
                row = "pos"
            w.line(f"for (int64_t i{a} = 0; i{a} < {size}; ++i{a}) "
                   f"{s.name}[{self.out_offset(s)}] = {row}[i{a}];")
