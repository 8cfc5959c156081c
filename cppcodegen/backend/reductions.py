"""Reductions in C++: accumulators, their combine and horizontal-reduce spellings.

In: a reduction stage (sum, prod, max, min, any, all, argmax, argmin) and the axes it
reduces. Out: C++ lines that accumulate it: in a register, vectorized where the body allows
(lanes combined at the end; float sums in blocks with a compensated sum of the blocks), or
split into fixed chunks of the first axis run in parallel and combined in a fixed order
(``chunked_reduction``: the result does not depend on the thread count). The tables say
how each kind combines two values, scalar or vector, and reduces a vector's lanes.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import sympy

from .cexpr import BOOL, ExprRenderer, ctype, lanes_itemsize, linear_coefficient, literal
from ..ir.loopir import Load, Op, Stage, index_vars, walk
from .loops import _vtype, _zero
from .counts import CountWriter
from .reuse import EXPENSIVE
from .segments import SegmentWriter
from .sizes import _c, _chunk_bounds

INIT = {"sum": 0, "prod": 1, "any": False, "all": True}
COMBINE = {"sum": "({0} + {1})", "prod": "({0} * {1})", "max": "ccg::maximum({0}, {1})",
           "min": "ccg::minimum({0}, {1})", "any": "({0} || {1})", "all": "({0} && {1})"}
VCOMBINE = dict(COMBINE, any="({0} | {1})", all="({0} & {1})")
HREDUCE = {"sum": "ccg::reduce_add({0})", "prod": "ccg::reduce_mul({0})",
           "max": "ccg::reduce_max({0})", "min": "ccg::reduce_min({0})",
           "any": "{0}.any()", "all": "{0}.all()"}
BOOL_COMBINE = {"max": "({0} || {1})", "min": "({0} && {1})"}
BOOL_VCOMBINE = {"max": "({0} | {1})", "min": "({0} & {1})"}
BOOL_HREDUCE = {"max": "{0}.any()", "min": "{0}.all()"}
CHUNKS = 64          # parallel reductions to a scalar use this many fixed chunks (deterministic)


def combine(kind: str, dtype, vector: bool = False, row: bool = False) -> str:
    """How ``kind`` combines two values. ``row``: a product along the reduced row itself
    (np.prod along the innermost axis, or of everything), which NumPy runs with its scalar
    multiply loop: for complex values the naive product (ccg::mul_naive), not the fused one
    its SIMD loop (along an outer axis, ``operator*``) rounds once per part."""
    if np.dtype(dtype) == BOOL and kind in BOOL_COMBINE:
        return (BOOL_VCOMBINE if vector else BOOL_COMBINE)[kind]
    if row and kind == "prod" and np.dtype(dtype).kind == "c":
        return "ccg::mul_naive({0}, {1})"
    return (VCOMBINE if vector else COMBINE)[kind]


def hreduce(kind: str, dtype) -> str:
    if np.dtype(dtype) == BOOL and kind in BOOL_HREDUCE:
        return BOOL_HREDUCE[kind]
    return HREDUCE[kind]


def _sum_type(kind: str, dtype) -> str | None:
    """The type a sum of ``dtype`` accumulates in when it is wider: float16 in float, as
    NumPy adds float16 (its pairwise sum in float32, rounded to float16 once); float32 partial
    sums in double (``chunked_reduction``)."""
    if kind != "sum":
        return None
    return {np.dtype(np.float16): "float", np.dtype(np.float32): "double"}.get(np.dtype(dtype))


def init_value(kind: str, dtype) -> str:
    dtype = np.dtype(dtype)
    t = ctype(dtype)
    if kind in INIT:
        return literal(INIT[kind], dtype)
    if dtype == BOOL:
        return "false" if kind in ("max", "argmax") else "true"
    if dtype.kind == "f":
        inf = f"std::numeric_limits<{t}>::infinity()"
        return f"-{inf}" if kind in ("max", "argmax") else inf
    if dtype.kind == "c":   # (-inf, -inf) is below every value in NumPy's complex order
        inf = -np.inf if kind in ("max", "argmax") else np.inf
        return literal(complex(inf, inf), dtype)
    return f"std::numeric_limits<{t}>::{'lowest' if kind in ('max', 'argmax') else 'max'}()"


def _lane_positions(s: Stage, axes, sizes):
    """The C++ integer type of a vectorized arg-reduction's lane positions (as wide as its
    values, so one register each), or None where it is not vectorized: complex or bool
    values, narrow types, or float32 positions that might not fit in int32."""
    dt = s.body.dtype
    if not axes or dt.kind not in "fiu" or dt.itemsize not in (4, 8):
        return None
    if dt.itemsize == 8:
        return "int64_t"
    total = 1
    for n in sizes:
        if not isinstance(n, int):
            return None
        total *= n
    return "int32_t" if total < 2 ** 31 else None


def _position(axes, sizes) -> str:
    """The C++ flat position, over the reduced ``axes`` (of ``sizes``), of the point being
    visited: NumPy's argmax/argmin index."""
    strides = [_c(sympy.Mul(*sizes[i + 1:])) for i in range(len(sizes))]
    return " + ".join(f"i{a} * {st}" for a, st in zip(axes, strides)) or "0"


def _is_max(s: Stage) -> str:
    return "true" if s.reduction == "argmax" else "false"


class ReductionWriter(SegmentWriter, CountWriter):
    """The reductions of a kernel's stages (whole, chunked in parallel, arg-reductions;
    segment reductions, np.<op>.reduceat, in ``segments.SegmentWriter``)."""

    def reduction(self, s: Stage, axes, ranges, parallel=False, target=None):
        w = self.w
        t = ctype(s.body.dtype)
        acc = target or self.locals.get(s.name) or f"acc_{s.name}"
        declare = target is None and s.name not in self.locals
        kind = s.reduction
        with w.indent("{"):
            if declare:
                w.line(f"{t} {acc};")
            var = index_vars(len(s.domain))[axes[-1]] if axes else None
            # products run in index order, as NumPy's do: with lanes, 0 * inf could make NaN
            # where NumPy's running product is already 0
            # (complex max/min: lanes would need NumPy's lexicographic horizontal reduce)
            # (fewer than 8 elements: NumPy adds them one after the other; lanes of 4 and
            # a tail made a 5-tap filter's weights sum 1 ulp off on AVX2)
            vec = bool(axes) and kind != "prod" and self.can_vectorize(s, var) and not (
                kind in ("max", "min") and s.body.dtype.kind == "c") and not (
                isinstance(s.domain[axes[-1]], int) and s.domain[axes[-1]] < 8)
            # float sums are accumulated in blocks, then the blocks summed: error grows with
            # log-ish depth instead of with the row length (NumPy sums pairwise)
            # (a row of a multi-axis reduction is its own block, however short)
            # blocks are reduction_block elements per lane (block * L), so the error does not
            # depend on the ISA's lane count. float32 values are added into double lanes
            # (each vector widened as it is read): float32 blocks left x.sum() over 8192^2
            # normal floats 4.3 float32 ulps from the exact sum (NumPy's pairwise 2.3); in
            # double the sum is as good as its final rounding, and the widening costs nothing
            # where the sum waits on memory
            block = self.opts.reduction_block if (
                vec and kind == "sum" and s.body.dtype.kind in "fc"
                and (not isinstance(s.domain[axes[-1]], int)
                     or s.domain[axes[-1]] > 64 * self.opts.reduction_block or len(axes) > 1)) else 0
            wide = bool(block) and s.body.dtype == np.float32
            # float max/min: lanes that keep the best values and, beside them, whether a NaN
            # was seen (ccg::ExtremeLanes: one compare per vector, not two)
            lanes = (f"ccg::ExtremeLanes<{'true' if kind == 'max' else 'false'}, {t}, L>"
                     if vec and kind in ("max", "min") and s.body.dtype.kind == "f" else None)
            # (float16 adds in float: _sum_type; float32 does so only in blocks, ``wide``)
            acc_t = "double" if wide else _sum_type(kind, s.body.dtype) \
                if s.body.dtype == np.float16 else t
            w.line(f"{acc_t} acc = {init_value(kind, s.body.dtype)};")
            # a count (np.count_nonzero, (x > t).sum()): the true lanes of the bool vectors,
            # at their width, added up by popcount (an int64 vector sum took 8 lanes at a time
            # and a widening per mask: a Game of Life step's count cost more than its step)
            count = vec and kind == "sum" and isinstance(s.body, Op) and \
                s.body.name == "cast" and s.body.args[0].dtype == BOOL and \
                s.body.dtype.kind in "iu"
            if count:
                s = dataclasses.replace(s, body=s.body.args[0])
                w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body)}>;")
            elif vec:
                w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body)}>;")
                vacc = "ccg::WideSum<L>::broadcast(0.0)" if wide else \
                    f"{lanes or _vtype(s.body.dtype)}::broadcast({init_value(kind, s.body.dtype)})"
                w.line(f"auto vacc = {vacc};")
            if block and not wide:
                w.line(f"auto vcomp = {_vtype(s.body.dtype)}::broadcast({_zero(s.body.dtype)});   // Kahan compensation")
            target_v = "vblk" if block else "vacc"
            row = kind == "prod" and var is not None and self._along_memory(s, var)

            def update(r: ExprRenderer, value: str, vector: bool):
                if count:
                    w.line(f"acc += {value}.count();" if vector else f"acc += {value};")
                elif vector and lanes:
                    w.line(f"{target_v}.update({value});")
                elif vector:
                    w.line(f"{target_v} = {combine(kind, s.body.dtype, True).format(target_v, value)};")
                else:
                    w.line(f"acc = {combine(kind, s.body.dtype, row=row).format('acc', value)};")
            # cheap float sums (a dot product) and maxima/minima: several accumulators in
            # turn, so an add (a compare and blend) does not wait for the one before it (an
            # expensive body is not bound by them); the max of the copies is the max of all
            cheap = not any(isinstance(e, Op) and e.name in EXPENSIVE for e in walk(s.body))
            chains = (target_v, init_value(kind, s.body.dtype), combine(kind, s.body.dtype, True)
                      ) if vec and cheap and (kind == "sum" and s.body.dtype.kind == "f" or
                                              kind in ("max", "min") and s.body.dtype.kind in "fiu"
                                              ) else None
            if chains and lanes:
                chains = (target_v, chains[1], "ccg::extreme_merge({0}, {1})", lanes)
            self.wide = wide
            try:
                self.loops(s, axes, ranges, update, parallel=False, allow_vector=vec,
                           declared_lanes=vec, block=block, chains=chains)
            finally:
                self.wide = False
            if block:     # the block sums' compensation too
                total = "ccg::reduce_add(vacc)" if wide else "ccg::reduce_add(vacc - vcomp)"
                w.line(f"acc = {combine(kind, s.body.dtype).format('acc', total)};")
            elif vec and not count:
                total = "vacc.fold()" if lanes else hreduce(kind, s.body.dtype).format("vacc")
                w.line(f"acc = {combine(kind, s.body.dtype).format('acc', total)};")
            if target is not None or s.name in self.locals:
                w.line(f"{acc} = acc;")
            else:
                w.line(f"{s.name}[{self.out_offset(s)}] = acc;")

    def _along_memory(self, s: Stage, var) -> bool:
        """Does ``s`` read memory contiguously along ``var``? (NumPy's reduction then runs
        its reduce loop along the row; over an outer memory axis its elementwise loop.)"""
        for e in walk(s.body):
            if isinstance(e, Load) and e.buf not in self.locals:
                buf = self.p.buffers[e.buf]
                off = sum((i * st for i, st in zip(e.index, buf.strides)), sympy.Integer(0))
                if linear_coefficient(off, var) in (1, -1):
                    return True
        return False

    def chunked_reduction(self, s: Stage):
        """A reduction to one value, split into fixed chunks of axis 0 run in parallel."""
        w = self.w
        t = ctype(s.body.dtype)
        n0 = _c(s.domain[0])
        symbolic = not isinstance(s.domain[0], int)
        chunks = "nchunks" if symbolic else max(1, min(CHUNKS, s.domain[0]))
        result = self.locals.get(s.name, f"result_{s.name}")
        if s.name not in self.locals:
            w.line(f"{t} {result};")
        with w.indent("{"):
            pt = _sum_type(s.reduction, s.body.dtype) or t
            w.line(f"{pt} partial[{CHUNKS if symbolic else chunks}];")
            if symbolic:        # the chunks depend on the size only, never on the threads
                w.line(f"const int64_t nchunks = std::min<int64_t>({CHUNKS}, {n0});")
            w.line(self.chunks_omp(s, chunks))
            with w.indent(f"for (int64_t chunk = 0; chunk < {chunks}; ++chunk) {{"):
                w.line(_chunk_bounds(n0, chunks))
                self.reduction(s, list(range(len(s.domain))), {0: ("lo", "hi")}, target="partial[chunk]")
            if pt != t:
                # the chunks' float sums are added in double: the running total is the
                # largest value of the whole sum, where float32 rounding would cost most
                w.line(f"{pt} total = 0;")
                w.line(f"for (int64_t c = 0; c < {chunks}; ++c) total += partial[c];")
                w.line(f"{result} = static_cast<{t}>(total);")
            else:
                w.line(f"{result} = {init_value(s.reduction, s.body.dtype)};")
                w.line(f"for (int64_t c = 0; c < {chunks}; ++c) {result} = "
                       f"{combine(s.reduction, s.body.dtype).format(result, 'partial[c]')};")
            if s.name not in self.locals:
                w.line(f"{s.name}[0] = {result};")

    def chunked_arg_reduction(self, s: Stage):
        """An argmax/argmin of everything, split into fixed chunks of axis 0 run in parallel:
        each chunk's best and its position, then the chunks in order (a tie keeps the
        earlier chunk's, a NaN the first NaN's), so the answer is NumPy's for any threads."""
        w = self.w
        t = ctype(s.body.dtype)
        n0 = _c(s.domain[0])
        symbolic = not isinstance(s.domain[0], int)
        chunks = "nchunks" if symbolic else max(1, min(CHUNKS, s.domain[0]))
        with w.indent("{"):
            w.line(f"{t} pbest[{CHUNKS if symbolic else chunks}];")
            w.line(f"int64_t pidx[{CHUNKS if symbolic else chunks}];")
            if symbolic:
                w.line(f"const int64_t nchunks = std::min<int64_t>({CHUNKS}, {n0});")
            w.line(self.chunks_omp(s, chunks))
            with w.indent(f"for (int64_t chunk = 0; chunk < {chunks}; ++chunk) {{"):
                w.line(_chunk_bounds(n0, chunks))
                self.arg_reduction(s, list(range(len(s.domain))), {0: ("lo", "hi")},
                                   target=("pbest[chunk]", "pidx[chunk]"))
            w.line(f"{t} best = pbest[0];")
            w.line("int64_t best_i = pidx[0];")
            w.line(f"for (int64_t c = 1; c < {chunks}; ++c) "
                   f"ccg::arg_take<{_is_max(s)}>(pbest[c], pidx[c], best, best_i);")
            if s.name in self.locals:
                w.line(f"{self.locals[s.name]} = best_i;")
            else:
                w.line(f"{s.name}[0] = best_i;")

    def arg_reduction(self, s: Stage, axes, ranges, target=None):
        if s.body.dtype == BOOL:
            self.first_bool(s, axes, ranges, target)
            return
        w = self.w
        t = ctype(s.body.dtype)
        better = ">" if s.reduction == "argmax" else "<"
        sizes = [s.domain[a] for a in axes]
        pos = _position(axes, sizes)
        ptype = _lane_positions(s, axes, sizes)
        var = index_vars(len(s.domain))[axes[-1]] if axes else None
        vec = ptype is not None and self.can_vectorize(s, var)
        init = init_value(s.reduction, s.body.dtype)
        state = f"ccg::ArgLanes<{_is_max(s)}, {t}, {ptype}, L>" if vec else None
        with w.indent("{"):
            w.line(f"{t} best = {init};")
            w.line("int64_t best_i = 0;")
            if vec:     # per lane its first best and where (folded into best, best_i)
                w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body)}>;")
                w.line(f"auto vacc = {state}::broadcast({init});")

            def update(r: ExprRenderer, value: str, vector: bool):
                if vector:
                    w.line(f"vacc.update({value}, {pos});")
                    return
                w.line(f"if ({value} {better} best || ({value} != {value} && best == best)) "
                       f"{{ best = {value}; best_i = {pos}; }}")
            # several copies of the lanes' state side by side (loops.unrolled)
            self.loops(s, axes, ranges, update, allow_vector=vec, declared_lanes=vec,
                       chains=("vacc", init, "ccg::arg_merge({0}, {1})", state) if vec else None)
            if vec:
                w.line("vacc.fold(best, best_i);")
                if s.body.dtype.kind == "f":    # a NaN in the lanes: the first NaN, found again
                    with w.indent("if (vacc.saw_nan()) {"):
                        w.line("bool found = false;")

                        def first_nan(r: ExprRenderer, value: str, vector: bool):
                            w.line(f"if (!found && {value} != {value}) "
                                   f"{{ found = true; best = {value}; best_i = {pos}; }}")
                        self.loops(s, axes, ranges, first_nan, allow_vector=False)
            self._arg_result(s, target)

    def _arg_result(self, s: Stage, target):
        w = self.w
        if target is not None:     # a chunk's (chunked_arg_reduction)
            w.line(f"{target[0]} = best; {target[1]} = best_i;")
        elif s.name in self.locals:
            w.line(f"{self.locals[s.name]} = best_i;")
        else:
            w.line(f"{s.name}[{self.out_offset(s)}] = best_i;")

    def first_bool(self, s: Stage, axes, ranges, target=None):
        """argmax (argmin) of bools: the position of the first True (False), or 0 where
        there is none, as NumPy's. The loop stops at it (``np.argmax(x > t)``, a search: it
        compared every element one by one, branching at each, 5x NumPy's time for 10^6);
        in vector iterations a lane's mask bits, the first set one found by counting
        trailing zeros. (In parallel chunks each chunk stops at its own first.)"""
        w = self.w
        want = "true" if s.reduction == "argmax" else "false"
        pos = _position(axes, [s.domain[a] for a in axes])
        var = index_vars(len(s.domain))[axes[-1]] if axes else None
        vec = bool(axes) and self.can_vectorize(s, var)
        self.searches = getattr(self, "searches", 0) + 1    # (a stage may be written
        found = f"ccg_found{self.searches}_{s.name}"        # more than once: a label each)
        with w.indent("{"):
            w.line(f"bool best = {'false' if want == 'true' else 'true'};")
            w.line("int64_t best_i = 0;")
            if vec:
                w.line(f"constexpr int L = ccg_lanes<{lanes_itemsize(s.body)}>;")

            def update(r: ExprRenderer, value: str, vector: bool):
                if vector:
                    bits = f"({value}).to_bits()" if want == "true" else \
                        f"(~({value}).to_bits() & decltype({value})::full)"
                    w.line(f"if (const uint32_t ccg_m = {bits}) {{ best = {want}; "
                           f"best_i = {pos} + __builtin_ctz(ccg_m); goto {found}; }}")
                else:
                    w.line(f"if (bool({value}) == {want}) {{ best = {want}; best_i = {pos}; "
                           f"goto {found}; }}")
            with w.indent("{"):
                self.loops(s, axes, ranges, update, allow_vector=vec, declared_lanes=vec)
            w.line(f"{found}:;")
            self._arg_result(s, target)
