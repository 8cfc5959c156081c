"""Kernel forms: one C++ function per scheduled kernel.

In: a kernel of a LoopProgram (from schedule.py), whose ``form`` says how its loops are
laid out: 'nest' (outer loops shared by several stages, row scratch arrays), 'tiled'
(square tiles of a transposing pointwise stage), 'flat', 'rows' (a reduction per row),
'column' (reductions that keep the innermost axis: vector accumulators along it),
'scatter' (stores where indices say), 'scan' (cumsum / cumprod) and 'sort' (sorts.py). Out: the kernel's
parameters (``params``: buffers, scalars, sizes, induction variables, with C types) and
its C++ text (``render``): a comment naming the stages and graph nodes, then the function.
"""
from __future__ import annotations

import sympy

from .cexpr import BOOL, ExprRenderer, cindex, ctype, lanes_itemsize
from ..ir.loopir import STATUS, Gather, Load, Scalar, Stage, index_vars, walk
from ..ir.ufuncs import OPS
from ..passes.index_split import split
from .matvec import MatvecWriter
from .rowdot import row_dot_operands, RowDotWriter
from .sorts import SortWriter
from .reductions import CHUNKS, ReductionWriter, combine, init_value
from .sizes import _c, _chunk_bounds, _hint, _prod, _tile_bounds, _tiles

TILE = 64            # square tiles of transposing pointwise kernels
COLUMN_TILE = 16384  # elements of the kept axis per tile in column reductions (acc stays in L2)
SCAN_CHUNK = 1 << 15  # a parallel 1-D scan has one chunk per this many elements (at most CHUNKS)
COLUMN_CHUNKS = 8    # at most this many parallel chunks of the reduced axis in column reductions
CHUNK_ROWS = 16      # ... each of at least this many rows
COMBINE_PARALLEL = 1 << 15    # partial sums added on the threads from this many on
ROW_UNROLL = 4       # rows of the reduced axis per pass over a column reduction's accumulators


class KernelWriter(ReductionWriter, MatvecWriter, RowDotWriter, SortWriter):
    """Renders one kernel (``render``) in the layout of its form (``_form_<form>``)."""

    # ------------------------------------------------------------ entry
    def params(self) -> list:
        used = set()
        for s in self.k.stages:
            used.add(s.name)
            loads = [e for e in walk(s.body) if isinstance(e, Load)]
            used |= {e.buf for e in loads}
            if s.kind == "scatter" or any(isinstance(e, Gather) for e in loads):
                used.add(STATUS)
        written = {m.name for s in self.k.stages for m in (s.members or (s,))}
        out = []
        for name, buf in self.p.buffers.items():
            if name in used and name not in self.locals:
                const = "const " if buf.role in ("input", "constant") and name not in written else ""
                out.append((name, f"{const}{ctype(buf.dtype)}* __restrict__"))
        scalars = {e.name for s in self.k.stages for e in walk(s.body) if isinstance(e, Scalar)}
        for name, dtype, _ in self.p.scalars:
            if name in scalars:
                out.append((name, f"const {ctype(dtype)}"))
        out += [(name, "const int64_t") for name, _ in self.p.counters if name in scalars]
        out += [(name, "const int64_t") for name in self.p.sizes]   # symbolic sizes/strides
        out += [(name, "const int64_t") for name in self.p.loopvars]    # induction variables
        out += [(name, "const int64_t") for name in self.p.datavars]    # data slices' bounds
        return out

    def render(self) -> str:
        w, k = self.w, self.k
        w.line(f"// {k.name}: {k.form} kernel, stages:")
        for s in k.stages:
            w.line(f"//   {s.name} = {s.kind}{' ' + s.reduction if s.reduction else ''} over "
                   f"{list(s.domain)}  (graph {s.nodes}, {s.where or 'no source line'})")
        params = ", ".join(f"{t} {n}" for n, t in self.params())
        with w.indent(f"static void {k.name}({params}) {{"):
            form = getattr(self, f"_form_{k.form}")
            if k.parallel and k.parallel_if:
                # sizes known at run time: the threads only when the work pays for them,
                # decided here (an OpenMP if() clause still starts a team: ~1 us a call)
                with w.indent(f"if ({k.parallel_if}) {{", close="} else {"):
                    form()
                with w.indent():
                    k.parallel = False
                    try:
                        form()
                    finally:
                        k.parallel = True
                w.line("}")
            else:
                form()
        return w.text()

    # ------------------------------------------------------------ forms
    def _form_nest(self):
        w, k = self.w, self.k
        if k.columns:
            self._form_nest_columns()
            return
        dots = row_dot_operands(self.p, k, self.scratch)
        if dots is not None:
            self._form_row_dot(dots)        # A @ x: rows in groups (rowdot.py)
            return
        n = len(k.outer)
        if k.parallel:
            w.line(self.omp(n, max(_prod(s.domain[n:]) for s in k.stages), sizes=k.outer))
        for axis, size in enumerate(k.outer):
            w.line(f"for (int64_t i{axis} = 0; i{axis} < {_c(size)}; ++i{axis})")
        with w.indent("{"):
            self._nest_row(n)

    def _nest_row(self, n: int):
        """The body of a nest kernel's outer loops: its scratch rows, then each stage's inner
        loops (column stages, summed over the rows, are not among them: ``_column_update``)."""
        w = self.w
        for arr, (dtype, size) in self.scratch.items():
            if isinstance(size, int):
                w.line(f"{ctype(dtype)} {arr}[{size}];   // computed once, read by later stages")
                continue
            t = "uint8_t" if dtype == BOOL else ctype(dtype)    # (std::vector<bool> has no data())
            w.line(f"static thread_local std::vector<{t}> {arr}_v;   // computed once, read by later stages")
            w.line(f"if ((int64_t){arr}_v.size() < {_c(size)}) {arr}_v.resize({_c(size)});")
            w.line(f"{ctype(dtype)}* {arr} = reinterpret_cast<{ctype(dtype)}*>({arr}_v.data());")
        for s in self.units:
            if s.name in self.k.columns:
                continue
            if s.kind == "reduction" and s.name in self.locals:
                w.line(f"{ctype(self.p.buffers[s.name].dtype)} {self.locals[s.name]};")
            self.stage(s, list(range(n, len(s.domain))), {})

    def _form_tiled(self):
        (s,) = self.k.stages
        w = self.w
        n = len(s.domain)
        if self.k.parallel:
            w.line(self.omp(n, TILE * TILE))
        for a in range(n - 2):
            w.line(f"for (int64_t i{a} = 0; i{a} < {_c(s.domain[a])}; ++i{a})")
        ranges = {}
        for a in (n - 2, n - 1):
            w.line(f"for (int64_t b{a} = 0; b{a} < {_c(s.domain[a])}; b{a} += {TILE})")
            ranges[a] = (f"b{a}", f"std::min<int64_t>(b{a} + {TILE}, {_c(s.domain[a])})")
        with w.indent("{"):
            self.stage(s, [n - 2, n - 1], ranges)

    def _form_flat(self):
        for s in self.units:
            if s.kind == "reduction" and s.name in self.locals:
                self.w.line(f"{ctype(self.p.buffers[s.name].dtype)} {self.locals[s.name]};")
            axes = list(range(len(s.domain)))
            if s.kind == "reduction" and self.k.parallel and s.domain and s.reduction != "prod":
                if s.reduction in ("argmax", "argmin"):
                    self.chunked_arg_reduction(s)
                else:
                    self.chunked_reduction(s)
            else:
                self.stage(s, axes, {}, parallel=self.k.parallel and bool(axes))

    def _form_rows(self):
        (s,) = self.k.stages
        w = self.w
        kept = s.kept_axes
        if self.k.parallel and kept:
            w.line(self.omp(len(kept), _prod([s.domain[a] for a in s.reduce_axes]),
                            sizes=[s.domain[a] for a in kept]))
        for a in kept:
            w.line(f"for (int64_t i{a} = 0; i{a} < {_c(s.domain[a])}; ++i{a})")
        with w.indent("{"):
            self.stage(s, list(s.reduce_axes), {})

    def _form_column(self):
        """Reductions that keep the innermost axis: vector accumulators along that axis, in
        tiles; with nothing else kept, the first reduced axis is also split into chunks whose
        partial results are combined in a fixed order (parallel and deterministic)."""
        (s,) = self.k.stages
        w = self.w
        last = len(s.domain) - 1
        kept_outer = [a for a in s.kept_axes if a != last]
        size = s.domain[last]
        symbolic = not all(isinstance(d, int) for d in s.domain)
        tile, ntiles = _tiles(size, COLUMN_TILE, symbolic)
        t = ctype(s.body.dtype)
        first, rest = s.reduce_axes[0], list(s.reduce_axes[1:])
        # (a chunk of at least CHUNK_ROWS rows: y - A @ c of a 3 x 10^6 A is 62 tiles on the
        # threads, not a partial sum per row, 24 MB of them, and their combination)
        chunks = 1 if kept_outer or not self.k.parallel or s.reduction == "prod" else max(1, min(
            COLUMN_CHUNKS, _hint(s.domain[first]) // CHUNK_ROWS, _hint(s.numel()) // (1 << 16)))
        if symbolic and chunks > 1:     # the same rule, at run time
            chunks = (f"std::max<int64_t>(1, std::min<int64_t>(std::min<int64_t>({COLUMN_CHUNKS}, "
                      f"{_c(s.domain[first])} / {CHUNK_ROWS}), {_c(s.numel())} / {1 << 16}))")
        init = init_value(s.reduction, s.body.dtype)
        with w.indent("{"):
            if symbolic and chunks != 1:
                w.line(f"const int64_t nchunks = {chunks};")
                chunks = "nchunks"
            if chunks != 1:
                w.line(f"std::vector<{t}> part({chunks} * {_c(size)});")
            if self.k.parallel:
                nch = COLUMN_CHUNKS if isinstance(chunks, str) else chunks
                work = tile * _prod([s.domain[a] for a in s.reduce_axes]) // nch
                w.line(self.omp(len(kept_outer) + 2, work))
            for a in kept_outer:
                w.line(f"for (int64_t i{a} = 0; i{a} < {_c(s.domain[a])}; ++i{a})")
            w.line(f"for (int64_t chunk = 0; chunk < {chunks}; ++chunk)")
            with w.indent(f"for (int64_t tile = 0; tile < {ntiles}; ++tile) {{"):
                _tile_bounds(w, tile, size)
                if chunks != 1:
                    w.line(f"{t}* acc = part.data() + chunk * {_c(size)} + lo;")
                else:
                    w.line(f"{t} acc[{tile}];")
                w.line(f"for (int64_t j = 0; j < hi - lo; ++j) acc[j] = {init};")
                d = _c(s.domain[first])
                var = index_vars(len(s.domain))[last]
                row_lo, row_hi = f"{d} * chunk / {chunks}", f"{d} * (chunk + 1) / {chunks}"
                if not rest and self._unroll_rows(s, var):
                    self._rows_unrolled(s, first, last, row_lo, row_hi, var)
                    row_lo = f"i{first}_u"
                w.line(f"for (int64_t i{first} = {row_lo}; i{first} < {row_hi}; ++i{first})")
                for a in rest:
                    w.line(f"for (int64_t i{a} = 0; i{a} < {_c(s.domain[a])}; ++i{a})")
                with w.indent("{"):
                    def update(r: ExprRenderer, value: str, vector: bool):
                        comb = combine(s.reduction, s.body.dtype, vector)
                        if vector:
                            cur = r._bind(f"ccg::Vec<{t}, L>::load(acc + (i{last} - lo))")
                            w.line(f"{comb.format(cur, value)}.store(acc + (i{last} - lo));")
                        else:
                            w.line(f"acc[i{last} - lo] = {comb.format(f'acc[i{last} - lo]', value)};")
                    self.vector_loop(s, last, "lo", "hi", update, var)
                if chunks == 1:
                    with w.indent(f"for (int64_t i{last} = lo; i{last} < hi; ++i{last}) {{"):
                        w.line(f"{s.name}[{self.out_offset(s)}] = acc[i{last} - lo];")
            if chunks != 1:
                nch = COLUMN_CHUNKS if isinstance(chunks, str) else chunks
                if not isinstance(size, int) or size * nch >= COMBINE_PARALLEL:
                    w.line(self.omp(1, nch))     # (50 columns of 8 partial rows: no wake-up)
                with w.indent(f"for (int64_t i{last} = 0; i{last} < {_c(size)}; ++i{last}) {{"):
                    w.line(f"{t} v = part[i{last}];")
                    comb = combine(s.reduction, s.body.dtype).format("v", f"part[c * {_c(size)} + i{last}]")
                    w.line(f"for (int64_t c = 1; c < {chunks}; ++c) v = {comb};")
                    w.line(f"{s.name}[{self.out_offset(s)}] = v;")

    def _unroll_rows(self, s: Stage, var) -> bool:
        """May a column reduction take ROW_UNROLL rows per pass over its accumulators? (a
        vector body of plain numbers, without gathers or a scratch row of a sibling)"""
        return (s.body.dtype.kind in "fiu" and self.can_vectorize(s, var)
                and not self.reuse.get(s.name)
                and not any(isinstance(e, Gather) for e in walk(s.body)))

    def _rows_unrolled(self, s: Stage, first: int, last: int, row_lo: str, row_hi: str, var):
        """The rows [row_lo, row_hi) of a column reduction ROW_UNROLL at a time: each vector
        of accumulators is loaded once, combined with the rows' values in row order (the same
        order, so the same result, as one row at a time) and stored once; without it a
        matrix-vector product ``y @ A`` loads and stores its accumulators once per element of
        A. Leaves ``i<first>_u``, the first row not done (the caller loops over the rest)."""
        w, t, u_n = self.w, ctype(s.body.dtype), ROW_UNROLL
        vcomb = combine(s.reduction, s.body.dtype, True)
        scomb = combine(s.reduction, s.body.dtype, False)
        i, j = f"i{first}", f"i{last}"
        w.line(f"int64_t {i}_u = {row_lo};")
        with w.indent(f"for (; {i}_u + {u_n} <= {row_hi}; {i}_u += {u_n}) {{"):
            w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body)}>;")
            w.line(f"const int64_t {j}_end = lo + (hi - lo) / L * L;")
            with w.indent(f"for (int64_t {j} = lo; {j} < {j}_end; {j} += L) {{"):
                w.line(f"auto vcur = ccg::Vec<{t}, L>::load(acc + ({j} - lo));")
                for u in range(u_n):
                    with w.indent("{"):
                        w.line(f"const int64_t {i} = {i}_u + {u};")
                        r = ExprRenderer(w, self.p.buffers, self.locals, "vector", var)
                        w.line(f"vcur = {vcomb.format('vcur', r(s.body))};")
                w.line(f"vcur.store(acc + ({j} - lo));")
            with w.indent(f"for (int64_t {j} = {j}_end; {j} < hi; ++{j}) {{"):
                for u in range(u_n):
                    with w.indent("{"):
                        w.line(f"const int64_t {i} = {i}_u + {u};")
                        r = ExprRenderer(w, self.p.buffers, self.locals)
                        value = r(s.body)
                        w.line(f"acc[{j} - lo] = {scomb.format(f'acc[{j} - lo]', value)};")

    def _form_scatter(self):
        """``x[idx] = v`` / ``np.add.at``: one thread, the value's elements in C order, each
        stored where its indices say (checked as a gather's are), so a repeated index keeps
        NumPy's last write or accumulates every one."""
        (s,) = self.k.stages
        w, n = self.w, len(s.domain)
        buf = self.p.buffers[s.name]
        for axis in range(n):
            w.line(f"for (int64_t i{axis} = 0; i{axis} < {_c(s.domain[axis])}; ++i{axis})")
        with w.indent("{"):
            r = ExprRenderer(w, self.p.buffers, self.locals)
            r(s.body)
            one = bool(s.binds) and not s.domain
            value, rename = r.names[id(s.body.args[0])], r.checked(s.binds, store=one)
            off = sum((i * st for i, st in zip(s.store, buf.strides)), sympy.Integer(0))
            off = cindex(sympy.expand(off).xreplace(rename))
            # one element (a store in a loop's body): out of bounds, it stores nothing, as
            # Python stops there; a scatter of more had its indices checked first (indexing.py)
            guard = "if (" + " && ".join(f"{v} >= 0" for v in rename.values()) + ") " \
                if one else ""
            update = {None: "=", "add": "+=", "subtract": "-=", "multiply": "*="}.get(s.reduction)
            mixed = buf.dtype != s.body.args[0].dtype and "c" in (buf.dtype.kind,
                                                                  s.body.args[0].dtype.kind)
            if update is not None and not (mixed and s.reduction):  # (complex64 += complex128:
                                                                    # no such C++ operator)
                w.line(f"{guard}{s.name}[{off}] {update} {value};")
                return
            t = ctype(s.body.args[0].dtype)         # np.maximum.at, ...: the ufunc's scalar
            old = f"static_cast<{t}>({s.name}[{off}])"      # loop, in its loop dtype
            new = OPS[s.reduction].scalar.format(old, value, T=t)
            w.line(f"{guard}{s.name}[{off}] = static_cast<{ctype(buf.dtype)}>({new});")

    def _form_scan(self):
        """cumsum / cumprod along axis a. Along the innermost axis each row is a running
        value in a register (a long 1-D scan runs in fixed chunks: their totals first, then
        each chunk again from the total before it, in parallel); along an outer axis, each
        slice along a is the previous one combined with the input, vectorized along the
        innermost axis, in tiles of it run in parallel. The first element is copied (as
        NumPy's: -0.0 stays -0.0)."""
        (s,) = self.k.stages
        w, n, (a,) = self.w, len(s.domain), s.reduce_axes
        t = ctype(s.body.dtype)
        comb = combine(s.reduction, s.body.dtype)
        last = n - 1
        var = index_vars(n)[a]
        first = f"i{a} == 0"
        if a == last:
            if n == 1 and self.k.parallel:
                self._chunked_scan(s)
                return
            if self.k.parallel and n > 1:
                w.line(self.omp(n - 1, _hint(s.domain[a])))
            for b in range(n - 1):
                w.line(f"for (int64_t i{b} = 0; i{b} < {_c(s.domain[b])}; ++i{b})")
            with w.indent("{"):
                w.line(f"{t} acc = {init_value(s.reduction, s.body.dtype)};")

                def running(r: ExprRenderer, value: str, vector: bool):
                    w.line(f"acc = {first} ? {value} : {comb.format('acc', value)};")
                    w.line(f"{s.name}[{self.out_offset(s)}] = acc;")
                self.loops(s, [a], {}, running, allow_vector=False)
            return
        prev = cindex(self._out_expr(s).subs(var, var - 1))
        size = s.domain[last]
        symbolic = not isinstance(size, int)
        tile, ntiles = _tiles(size, COLUMN_TILE // 16, symbolic)
        if self.k.parallel:
            w.line(self.omp(a + 1, tile * _hint(s.domain[a])))
        for b in range(a):
            w.line(f"for (int64_t i{b} = 0; i{b} < {_c(s.domain[b])}; ++i{b})")
        with w.indent(f"for (int64_t tile = 0; tile < {ntiles}; ++tile) {{"):
            _tile_bounds(w, tile, size)
            for b in range(a, last):
                w.line(f"for (int64_t i{b} = 0; i{b} < {_c(s.domain[b])}; ++i{b})")
            with w.indent("{"):
                def step(r: ExprRenderer, value: str, vector: bool):
                    out = f"{s.name} + {self.out_offset(s)}"
                    if vector:
                        before = f"ccg::Vec<{t}, L>::load({s.name} + {prev})"
                        w.line(f"({first} ? {value} : {comb.format(before, value)}).store({out});")
                    else:
                        before = f"{s.name}[{prev}]"
                        w.line(f"{s.name}[{self.out_offset(s)}] = {first} ? {value} : "
                               f"{comb.format(before, value)};")
                self.vector_loop(s, last, "lo", "hi", step, index_vars(n)[last])

    def _chunked_scan(self, s: Stage):
        """A long 1-D scan in fixed chunks (their number depends on the length only, so the
        result does not depend on the threads): pass 1 reduces each chunk, a serial pass turns
        the totals into each chunk's starting value, pass 2 rescans each chunk from it."""
        w = self.w
        t = ctype(s.body.dtype)
        comb = combine(s.reduction, s.body.dtype)
        n0 = _c(s.domain[0])
        chunks = (f"std::max<int64_t>(1, std::min<int64_t>({CHUNKS}, {n0} / {SCAN_CHUNK}))"
                  if not isinstance(s.domain[0], int)
                  else max(1, min(CHUNKS, s.domain[0] // SCAN_CHUNK)))
        with w.indent("{"):
            w.line(f"const int64_t nchunks = {chunks};")
            w.line(f"{t} start[{CHUNKS}];")
            w.line(self.chunks_omp(s, chunks))
            with w.indent("for (int64_t chunk = 0; chunk < nchunks; ++chunk) {"):
                w.line(_chunk_bounds(n0, "nchunks"))
                self.reduction(s, [0], {0: ("lo", "hi")}, target="start[chunk]")
            w.line(f"{t} total = start[0];")
            w.line(f"start[0] = {init_value(s.reduction, s.body.dtype)};")
            with w.indent("for (int64_t c = 1; c < nchunks; ++c) {"):
                w.line(f"const {t} next = {comb.format('total', 'start[c]')};")
                w.line("start[c] = total;")
                w.line("total = next;")
            w.line(self.chunks_omp(s, chunks))
            with w.indent("for (int64_t chunk = 0; chunk < nchunks; ++chunk) {"):
                w.line(_chunk_bounds(n0, "nchunks"))
                w.line(f"{t} acc = start[chunk];")

                def running(r: ExprRenderer, value: str, vector: bool):
                    w.line(f"acc = i0 == 0 ? {value} : {comb.format('acc', value)};")
                    w.line(f"{s.name}[{self.out_offset(s)}] = acc;")
                self.loops(s, [0], {0: ("lo", "hi")}, running, allow_vector=False)

    # ------------------------------------------------------------ stages
    def stage(self, s: Stage, axes: list, ranges: dict, parallel: bool = False):
        """Loops over ``axes`` (outer ones bound already); pointwise store or reduction."""
        w = self.w
        if s.kind == "pointwise":
            units = []      # (a column ``S[:, t] = ...``: the loop over its rows in vectors)
            while len(axes) > 1 and s.domain[axes[-1]] == 1 and not ranges and \
                    any(s.domain[a] != 1 for a in axes[:-1]):
                units.append(axes[-1])
                axes = axes[:-1]
            stores = any(v[1] == "store" for v in self.reuse.get(s.name, {}).values())
            pieces = None if ranges or stores else split(s, axes)   # a join: a loop per part
                                                    # (not one whose values a later stage loads)
            for piece, box in ([(p, {a: (_c(lo), _c(hi)) for a, (lo, hi) in b.items()})
                                for p, b in pieces] if pieces else [(s, ranges)]):
                members = piece.members or (piece,)

                def store(r: ExprRenderer, value: str, vector: bool, members=members):
                    for m in members:
                        off, value = self.out_offset(m), r.names[id(m.body)]
                        ptr = f"{m.name} + {off}"
                        if m.body.dtype != self.p.buffers[m.name].dtype:   # bytes into bools
                            ptr = f"reinterpret_cast<{ctype(m.body.dtype)}*>({ptr})"
                        step = self._out_expr(m).coeff(index_vars(len(m.domain))[axes[-1]]) \
                            if vector else 1
                        if vector and step != 1:    # (out[1::2] = v: lane by lane)
                            w.line(f"{value}.store_strided({ptr}, {_c(step)});")
                        elif vector:
                            w.line(f"{value}.store({ptr});")
                        else:
                            w.line(f"{m.name}[{off}] = {value};")
                bounds = box.get(axes[-1]) if axes else None
                short = bool(pieces) and bounds is not None and all(b.isdigit() for b in bounds) and \
                    int(bounds[1]) - int(bounds[0]) < 16
                with w.indent("{"):     # (a short piece of the inner loop: scalar)
                    for a in units:
                        w.line(f"const int64_t i{a} = 0;   // an axis of one element")
                    self.loops(piece, axes, box, store, parallel, allow_vector=not short)
            return
        if s.reduction in ("argmax", "argmin"):
            self.arg_reduction(s, axes, ranges)
            return
        self.reduction(s, axes, ranges, parallel)
