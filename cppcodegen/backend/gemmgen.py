"""Matrix products as native kernels: an np.matmul extern stage -> a call into ``ccg::gemm``
or into the BLAS NumPy links.

In: a loop-IR ``Stage`` of kind 'extern' whose call is ``np.matmul`` (the graph keeps the
product as an extern op, so the NumPy reference, the Dask code and dtype rules see it
unchanged). Out: how it runs (``stage_path``: 'gemm', 'blas' or None for a NumPy step;
lowering asks the same of the graph node, ``native_matmul_node``, to read transposed
operands in place) and, for kernels of form 'gemm', the C++ function (``GemmWriter``): loops
over the broadcast batch dimensions around ``ccg::gemm<T>(M, N, K, A, rsa, csa, B, rsb, csb,
C, rsc, csc, threads)`` from include/cppcodegen/gemm.h, or ``ccg::blas_gemm<T>`` (the same
arguments; include/cppcodegen/blas.h), with every size and stride taken from the buffers,
so symbolic sizes, strided arguments and transposed operands (``x @ w.T``) need no copy.

Native: float32 and float64 products whose two matrix dimensions are not literally 1; BLAS
computes them where a measurement on this machine found it faster for the product's shape
class (``cppcodegen/autotune.py``, option ``tune``). Matrix-vector and vector-matrix products
(a 1-D operand becomes a 1-row or 1-column matrix at trace time) and integer products stay
NumPy calls: the former are memory bound (BLAS' GEMV is as good as it gets there), the
latter are not BLAS work.
"""
from __future__ import annotations

import contextlib

import numpy as np

from .cexpr import cindex, ctype
from .writer import CodeWriter, omp_parallel_for
from ..ir.shapes import identical
from ..autotune import GEMM_DTYPES, matmul_path, node_native, unswapped  # noqa: F401
# multiply-adds up to which one product runs on one thread (ccg::gemm's own rule,
# gemm_detail::kParallelWork); a batch of such products runs its batch loop in parallel
PARALLEL_WORK = 1 << 22


def stage_path(stage, buffers):
    """How the extern ``stage`` is computed in a kernel: 'gemm' (``ccg::gemm``), 'blas' (the
    BLAS NumPy links, include/cppcodegen/blas.h), or None: a NumPy step."""
    if getattr(stage.extern, "func", None) is not np.matmul or len(stage.args) != 2 or \
            stage.views:        # (lowering chose NumPy's call for it: its operands are views)
        return None
    a = buffers[stage.args[0]].shape
    k = a[-2] if stage.transposed and stage.transposed[0] else a[-1]
    gram = stage.args[0] == stage.args[1] and len(set(stage.transposed or (0, 0))) == 2
    return matmul_path(np.matmul, buffers[stage.name].dtype,
                       [buffers[a].dtype for a in stage.args], stage.domain, k, stage.where,
                       gram)


def native_matmul(stage, buffers) -> bool:
    """Whether the extern ``stage`` is an np.matmul that a kernel computes."""
    return stage_path(stage, buffers) is not None


def native_matmul_node(node) -> bool:
    """The same question for the graph's extern node."""
    return node_native(node)


def _c(size) -> str:
    return str(size) if isinstance(size, (int, str)) else cindex(size)


def _is_one(size) -> bool:
    return isinstance(size, int) and size == 1


def _is_zero(x) -> bool:
    return isinstance(x, int) and x == 0


class GemmWriter:
    """The C++ of one 'gemm' kernel: C[batch..., M, N] = A[..., M, K] @ B[..., K, N]."""

    def __init__(self, program, kernel, opts):
        self.p, self.k, self.opts = program, kernel, opts
        self.stage = kernel.stages[0]

    def params(self) -> list:
        s, bufs = self.stage, self.p.buffers
        out = []
        for name in dict.fromkeys(s.args):
            out.append((name, f"const {ctype(bufs[name].dtype)}* __restrict__"))
        out.append((s.name, f"{ctype(bufs[s.name].dtype)}* __restrict__"))
        out += [(name, "const int64_t") for name in self.p.sizes]
        out += [(name, "const int64_t") for name in self.p.loopvars]    # (in a loop: a
        out += [(name, "const int64_t") for name in self.p.datavars]    # block's bounds)
        return out

    def _operand(self, i):
        """(row stride, column stride, K) of operand i as the product reads it."""
        s = self.stage
        buf = self.p.buffers[s.args[i]]
        swapped = bool(s.transposed and s.transposed[i])
        rs, cs = buf.strides[-2:]
        rows, cols = buf.shape[-2:]
        if swapped:
            rs, cs, rows, cols = cs, rs, cols, rows
        return _c(rs), _c(cs), (cols if i == 0 else rows)

    def _folds(self, a, b, c, nb) -> bool:
        """Is this batch of products one product: ``b`` one matrix for all, and the rows of
        ``a`` and of ``c`` each one run of memory over the batch (``x @ w`` of a 3-D ``x``: one
        call, where the frontend's reshape to rows would copy ``x`` and the product)?"""
        s = self.stage
        if len(b.shape) > 2 and not all(_is_one(d) or _is_zero(st) for d, st in
                                        zip(b.shape[:-2], b.strides[:-2])) or \
                s.transposed and s.transposed[0] or len(a.shape) != len(c.shape) or \
                any(not identical(x, y) for x, y in zip(a.shape[:nb], c.shape[:nb])):
            return False
        return all(identical(buf.strides[d], buf.shape[d + 1] * buf.strides[d + 1])
                   for buf in (a, c) for d in range(nb))

    def render(self) -> str:
        s, bufs = self.stage, self.p.buffers
        a, b, c = bufs[s.args[0]], bufs[s.args[1]], bufs[s.name]
        t = ctype(c.dtype)
        nb = len(c.shape) - 2
        M, N = c.shape[-2:]
        rsa, csa, K = self._operand(0)
        rsb, csb, _ = self._operand(1)
        w = CodeWriter()
        ops = [f"{n}{'.T' if s.transposed and s.transposed[i] else ''}" for i, n in enumerate(s.args)]
        blas = stage_path(s, bufs) == "blas"
        w.line(f"// {self.k.name}: gemm kernel{' (BLAS)' if blas else ''}: {s.name} = "
               f"{ops[0]} @ {ops[1]} over {list(s.domain)}  "
               f"(graph {s.nodes}, {s.where or 'no source line'})")
        params = ", ".join(f"{ty} {n}" for n, ty in self.params())
        with w.indent(f"static void {self.k.name}({params}) {{"):
            threads = "0" if self.opts.parallel else "1"
            # batch loops: each operand's batch axes are the output's last ones; an axis of
            # size 1 (or stride 0) in an operand is broadcast
            offsets = {}
            for key, buf in (("a", a), ("b", b), ("c", c)):
                nbo = len(buf.shape) - 2
                terms = [f"b{d + nb - nbo} * {_c(buf.strides[d])}" for d in range(nbo)
                         if not (_is_one(buf.shape[d]) or _is_zero(buf.strides[d]))]
                offsets[key] = f" + ({' + '.join(terms)})" if terms else ""
            if nb and self._folds(a, b, c, nb):     # (a stack @ one matrix, both stacks
                sizes = c.shape[:nb + 1]                                      # one run)
                M = int(np.prod(sizes)) if all(type(d) is int for d in sizes) else \
                    "(" + " * ".join(f"int64_t({_c(d)})" for d in sizes) + ")"
                w.line(f"// the batch's rows are one matrix of {M} rows")
                nb, offsets = 0, {"a": "", "b": "", "c": ""}
            work = f"int64_t({_c(M)}) * {_c(N)} * {_c(K)}"
            if nb and self.opts.parallel and not blas:
                # many small products: the batch loop runs in parallel, each product on one
                # thread (the same sums either way: ccg::gemm never depends on threads)
                batch = " * ".join(f"int64_t({_c(d)})" for d in c.shape[:nb])
                w.line(f"const int64_t work = {work};")
                w.line(f"const bool batch_parallel = work <= {PARALLEL_WORK} && "
                       f"{batch} * work >= {PARALLEL_WORK};")
                w.line(omp_parallel_for(nb, 1 << 14, condition="batch_parallel"))
                threads = "batch_parallel ? 1 : 0"
            # sizes known when compiling: the register tile that pads them less (gemm.h)
            # (BLAS: a batch runs one product after another, each on BLAS's threads)
            fn = (f"ccg::blas_gemm<{t}>" if blas else
                  f"ccg::gemm_sized<{t}, {M}, {N}>" if type(M) is int and isinstance(N, int)
                  else f"ccg::gemm<{t}>")
            call = (f"{fn}({_c(M)}, {_c(N)}, {_c(K)}, "
                    f"{s.args[0]}{offsets['a']}, {rsa}, {csa}, "
                    f"{s.args[1]}{offsets['b']}, {rsb}, {csb}, "
                    f"{s.name}{offsets['c']}, {_c(c.strides[-2])}, {_c(c.strides[-1])}, "
                    f"{threads});")
            with contextlib.ExitStack() as loops:
                for d in range(nb):
                    loops.enter_context(w.indent(
                        f"for (int64_t b{d} = 0; b{d} < {_c(c.shape[d])}; ++b{d}) {{"))
                w.line(call)
        return w.text()
