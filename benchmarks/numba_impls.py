"""Numba versions of the workloads, written as a Numba user would: @njit(parallel=True) + prange.

In:  ``build()`` is called only when numba is importable.
Out: a dict workload name -> jitted function taking the same inputs as the NumPy function.
Workloads where an explicit loop is unnatural (mlp: a user would call np.dot) are absent. The
suites' workloads (``benchmarks.workloads.SUITES``) bring their own (``Suite.numba``: mostly
plain ``njit`` of the function as written).
"""
from __future__ import annotations

import math

import numpy as np


def build() -> dict:
    from numba import njit, prange

    jit = njit(parallel=True, fastmath=False, cache=False)

    @jit
    def chain(a, b, c):
        out = np.empty_like(a)
        for i in prange(a.shape[0]):
            out[i] = math.exp(a[i]) * b[i] + math.sin(c[i]) - a[i] * c[i]
        return out

    @jit
    def softmax(x):
        rows, cols = x.shape
        out = np.empty_like(x)
        for i in prange(rows):
            m = x[i, 0]
            for j in range(1, cols):
                m = max(m, x[i, j])
            s = 0.0
            for j in range(cols):
                e = math.exp(x[i, j] - m)
                out[i, j] = e
                s += e
            inv = 1.0 / s
            for j in range(cols):
                out[i, j] = out[i, j] * inv
        return out

    @jit
    def layer_norm(x, w, b):
        rows, cols = x.shape
        out = np.empty_like(x)
        for i in prange(rows):
            mu = 0.0
            for j in range(cols):
                mu += x[i, j]
            mu /= cols
            var = 0.0
            for j in range(cols):
                d = x[i, j] - mu
                var += d * d
            var /= cols
            inv = 1.0 / math.sqrt(var + 1e-5)
            for j in range(cols):
                out[i, j] = (x[i, j] - mu) * inv * w[j] + b[j]
        return out

    @jit
    def gelu(x):
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            v = x[i]
            out[i] = 0.5 * v * (1.0 + math.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
        return out

    @njit(inline="always")
    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * abs(d))
        poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937
                    + k * (-1.821255978 + k * 1.330274429))))
        w = 1.0 - 0.3989422804014327 * math.exp(-0.5 * d * d) * poly
        return 1.0 - w if d < 0 else w

    @jit
    def black_scholes(s, k, t):
        r, v = 0.02, 0.30
        call = np.empty_like(s)
        put = np.empty_like(s)
        for i in prange(s.shape[0]):
            sqrt_t = math.sqrt(t[i])
            d1 = (math.log(s[i] / k[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
            d2 = d1 - v * sqrt_t
            disc = k[i] * math.exp(-r * t[i])
            call[i] = s[i] * cnd(d1) - disc * cnd(d2)
            put[i] = disc * cnd(-d2) - s[i] * cnd(-d1)
        return call, put

    @jit
    def sum_axis0(x):
        rows, cols = x.shape
        out = np.zeros(cols, dtype=np.float64)
        block = 256
        for jb in prange((cols + block - 1) // block):
            j0 = jb * block
            j1 = min(cols, j0 + block)
            for i in range(rows):
                for j in range(j0, j1):
                    out[j] += x[i, j]
        return out.astype(np.float32)

    @jit
    def sum_axis1(x):
        rows, cols = x.shape
        out = np.empty(rows, dtype=np.float32)
        for i in prange(rows):
            s = 0.0
            for j in range(cols):
                s += x[i, j]
            out[i] = s
        return out

    @jit
    def sum_all(x):
        s = 0.0
        flat = x.reshape(-1)
        for i in prange(flat.shape[0]):
            s += flat[i]
        return np.float32(s)

    @jit
    def pairwise_sqdist(a, b):
        m, d = a.shape
        n = b.shape[0]
        out = np.empty((m, n), dtype=a.dtype)
        for i in prange(m):
            for j in range(n):
                s = 0.0
                for k in range(d):
                    diff = a[i, k] - b[j, k]
                    s += diff * diff
                out[i, j] = s
        return out

    @jit
    def transpose_add(x):
        n, m = x.shape
        out = np.empty((n, m), dtype=x.dtype)
        block = 64
        for ib in prange((n + block - 1) // block):
            for jb in range(0, m, block):
                for i in range(ib * block, min(n, ib * block + block)):
                    for j in range(jb, min(m, jb + block)):
                        out[i, j] = x[i, j] + x[j, i]
        return out

    @jit
    def cumsum_rows(x):
        rows, cols = x.shape
        out = np.empty_like(x)
        for i in prange(rows):
            s = x[i, 0] if cols else x.dtype.type(0)
            for j in range(cols):
                s = s + x[i, j] if j else s
                out[i, j] = s
        return out

    from .workloads import STENCIL_C as c, STENCIL_STEPS as steps

    @jit
    def stencil(u):
        a, b = u.copy(), u.copy()
        n, m = a.shape
        for _ in range(steps):
            for i in prange(1, n - 1):
                for j in range(1, m - 1):
                    b[i, j] = a[i, j] + c * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1]
                                             + a[i, j + 1] - 4 * a[i, j])
            a, b = b, a
        return a

    impls = {
        "chain": chain, "chain_small": chain, "softmax": softmax, "layer_norm": layer_norm,
        "gelu": gelu, "black_scholes": black_scholes, "sum_axis0": sum_axis0,
        "sum_axis1": sum_axis1, "sum_all": sum_all, "pairwise_sqdist": pairwise_sqdist,
        "transpose_add": transpose_add, "stencil": stencil, "cumsum_rows": cumsum_rows,
    }
    # the suites' own versions (the loops: numba.njit of the function as written)
    from .workloads import SUITES
    for suite in SUITES:
        if suite.numba:
            impls.update(suite.numba())
    return impls
