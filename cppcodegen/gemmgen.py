"""Matrix products as native kernels: an np.matmul extern stage -> a call into ``ccg::gemm``.

In: a loop-IR ``Stage`` of kind 'extern' whose call is ``np.matmul`` (the graph keeps the
product as an extern op, so the NumPy reference, the Dask code and dtype rules see it
unchanged). Out: whether it runs natively (``native_matmul``) and, for kernels of form
'gemm', the C++ function (``GemmWriter``): a loop over the broadcast batch dimensions
around ``ccg::gemm<T>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc, threads)`` from
include/cppcodegen/gemm.h, with every size and stride taken from the buffers (so symbolic
sizes and strided inputs need no copy).

Native: float32 and float64 products whose two matrix dimensions are not literally 1.
Matrix-vector and vector-matrix products (a 1-D operand becomes a 1-row or 1-column
matrix at trace time) and integer products stay NumPy calls: they are memory bound and
BLAS' GEMV is as good as it gets there.
"""
from __future__ import annotations

import contextlib

import numpy as np

from .cexpr import cindex, ctype
from .writer import CodeWriter

GEMM_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def native_matmul(stage, buffers) -> bool:
    """Whether the extern ``stage`` is an np.matmul that ``ccg::gemm`` computes."""
    call = stage.extern
    if getattr(call, "func", None) is not np.matmul or len(stage.args) != 2:
        return False
    out = buffers[stage.name]
    if out.dtype not in GEMM_DTYPES or any(buffers[a].dtype != out.dtype for a in stage.args):
        return False
    m, n = stage.domain[-2:]
    return not (_is_one(m) or _is_one(n))


def _is_one(size) -> bool:
    try:
        return int(size) == 1
    except TypeError:           # a symbolic size
        return False


def _c(size) -> str:
    return str(size) if isinstance(size, int) else cindex(size)


def _is_zero(x) -> bool:
    try:
        return int(x) == 0
    except TypeError:
        return False


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
        return out

    def render(self) -> str:
        s, bufs = self.stage, self.p.buffers
        a, b = (bufs[n] for n in s.args)
        c = bufs[s.name]
        t = ctype(c.dtype)
        nb = len(c.shape) - 2
        w = CodeWriter()
        w.line(f"// {self.k.name}: gemm kernel: {s.name} = {s.args[0]} @ {s.args[1]} over "
               f"{list(s.domain)}  (graph {s.nodes}, {s.where or 'no source line'})")
        params = ", ".join(f"{ty} {n}" for n, ty in self.params())
        with w.indent(f"static void {self.k.name}({params}) {{"):
            M, N = c.shape[-2:]
            K = a.shape[-1]
            threads = "0" if self.opts.parallel else "1"
            # batch loops: each operand's batch axes are the output's last ones; an axis of
            # size 1 in an operand is broadcast (offset 0)
            offsets = {}
            for name, buf in (("a", a), ("b", b), ("c", c)):
                terms = []
                nbo = len(buf.shape) - 2
                for d in range(nbo):
                    od = d + nb - nbo
                    if _is_one(buf.shape[d]) or _is_zero(buf.strides[d]):
                        continue
                    terms.append(f"b{od} * {_c(buf.strides[d])}")
                offsets[name] = " + ".join(terms) if terms else "0"
            call = (f"ccg::gemm<{t}>({_c(M)}, {_c(N)}, {_c(K)}, "
                    f"{s.args[0]} + ({offsets['a']}), {_c(a.strides[-2])}, {_c(a.strides[-1])}, "
                    f"{s.args[1]} + ({offsets['b']}), {_c(b.strides[-2])}, {_c(b.strides[-1])}, "
                    f"{s.name} + ({offsets['c']}), {_c(c.strides[-2])}, {_c(c.strides[-1])}, "
                    f"{threads});")
            with contextlib.ExitStack() as loops:
                for d in range(nb):
                    loops.enter_context(w.indent(
                        f"for (int64_t b{d} = 0; b{d} < {_c(c.shape[d])}; ++b{d}) {{"))
                w.line(call)
        return w.text()
