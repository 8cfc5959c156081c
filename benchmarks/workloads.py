"""Benchmark workloads: each one defined once as a plain NumPy function.

In:  nothing (module-level table).
Out: ``WORKLOADS``, an ordered dict name -> ``Workload``; ``CORE`` the names of the core set.

A ``Workload`` holds the NumPy function every system runs (or mirrors), an input maker
(float32, fixed seed), the full and quick sizes, the display unit, and an optional
``magnitude`` hook giving the per-element error scale used by the correctness check when
plain ``|reference|`` would be too strict (sums and matmuls with cancellation).
Optional extras: ``exact`` (inputs -> float64 reference outputs; the report gives every system's
relative error against it), ``tiny_size`` (a size small enough that a call measures per-call
overhead, reported in microseconds) and ``tags``: "overhead" (in the compile-time / per-call
overhead table), "blas" (NumPy uses threads here, so NumPy gets a 1-thread time too), a suite's
tag (the loop, linear-algebra and program suites: ``SUITES``, appended at the end, each with a
report section of its own) and "python_loop" (the function loops in Python: torch.compile skips it).
``Workload`` itself lives in ``benchmarks.spec``.
"""
from __future__ import annotations

import math

import numpy as np

from benchmarks.spec import Workload  # noqa: F401  (defined apart: loop_workloads needs it too)

SEED = 1234


# ----------------------------------------------------------------------------- functions
def chain(a, b, c):
    return np.exp(a) * b + np.sin(c) - a * c


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


BS_RATE, BS_VOL = 0.02, 0.30


def _cnd(d):
    # Abramowitz & Stegun 26.2.17 polynomial approximation of the normal CDF (no erf).
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937
                + k * (-1.821255978 + k * 1.330274429))))
    w = 1.0 - 0.3989422804014327 * np.exp(-0.5 * d * d) * poly
    return np.where(d < 0, 1.0 - w, w)


def black_scholes(s, k, t):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / k) + (BS_RATE + 0.5 * BS_VOL * BS_VOL) * t) / (BS_VOL * sqrt_t)
    d2 = d1 - BS_VOL * sqrt_t
    disc = k * np.exp(-BS_RATE * t)
    call = s * _cnd(d1) - disc * _cnd(d2)
    put = disc * _cnd(-d2) - s * _cnd(-d1)
    return call, put


def cumsum_rows(x):
    return np.cumsum(x, axis=1)


def sum_axis0(x):
    return x.sum(axis=0)


def sum_axis1(x):
    return x.sum(axis=1)


def sum_all(x):
    return x.sum()


def pairwise_sqdist(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)


def transpose_add(x):
    return x + x.T


def mlp(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


STENCIL_STEPS, STENCIL_C = 20, 0.1


def stencil(u):
    # explicit heat equation: STENCIL_STEPS five-point steps, the boundary held fixed
    u = u.copy()
    for _ in range(STENCIL_STEPS):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + STENCIL_C * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    return u


# ----------------------------------------------------------------------------- inputs
def _rng():
    return np.random.default_rng(SEED)


def _normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale))


def _uniform(rng, shape, lo, hi):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def make_chain(n):
    r = _rng()
    return tuple(_uniform(r, (n,), -1.0, 1.0) for _ in range(3))


def make_matrix(shape):
    return (_normal(_rng(), shape),)


def make_layer_norm(shape):
    r = _rng()
    return (_normal(r, shape), _normal(r, shape[-1:]), _normal(r, shape[-1:]))


def make_gelu(n):
    return (_normal(_rng(), (n,), 2.0),)


def make_black_scholes(n):
    r = _rng()
    return (_uniform(r, (n,), 5.0, 30.0), _uniform(r, (n,), 1.0, 100.0),
            _uniform(r, (n,), 0.25, 10.0))


def make_pairwise(shape):
    r = _rng()
    (m, d), n = shape, shape[0]
    return (_normal(r, (m, d)), _normal(r, (n, d)))


def make_grid(shape):
    return (_uniform(_rng(), shape, 0.0, 1.0),)


def make_mlp(shape):
    (rows, hidden) = shape
    r = _rng()
    s = 1.0 / math.sqrt(hidden)
    return (_normal(r, (rows, hidden)), _normal(r, (hidden, hidden), s), _normal(r, (hidden,)),
            _normal(r, (hidden, hidden), s), _normal(r, (hidden,)))


# ----------------------------------------------------------------------------- error scales
def _sum_magnitude(fn):
    """For reductions: the same reduction of |x|, so cancellation does not fail a sum."""
    def magnitude(inputs, ref):
        return (np.asarray(fn(*[np.abs(a) for a in inputs]), dtype=np.float64),)
    return magnitude


def _bs_magnitude(inputs, ref):
    s, k, _ = inputs
    scale = (s.astype(np.float64) + k)
    return (scale, scale)


def _f64_sum(x):
    return (np.asarray(x.astype(np.float64).sum()),)


# ----------------------------------------------------------------------------- table
def _w(*args, **kw):
    w = Workload(*args, **kw)
    return w.name, w


WORKLOADS: dict[str, Workload] = dict([
    _w("chain", chain, make_chain, 2**24, 2**16, "exp(a)*b + sin(c) - a*c", core=True),
    _w("softmax", softmax, make_matrix, (4096, 4096), (256, 256), "row softmax", core=True,
       tags=("overhead",), tiny_size=(8, 16)),
    _w("layer_norm", layer_norm, make_layer_norm, (8192, 1024), (512, 256),
       "layer norm, last axis", core=True, tags=("overhead",), tiny_size=(8, 16)),
    _w("gelu", gelu, make_gelu, 2**24, 2**16, "GELU, tanh form"),
    _w("black_scholes", black_scholes, make_black_scholes, 2**22, 2**14,
       "Black-Scholes call+put", magnitude=_bs_magnitude),
    _w("sum_axis0", sum_axis0, make_matrix, (8192, 8192), (512, 512), "x.sum(axis=0)",
       magnitude=_sum_magnitude(sum_axis0)),
    _w("sum_axis1", sum_axis1, make_matrix, (8192, 8192), (512, 512), "x.sum(axis=1)",
       magnitude=_sum_magnitude(sum_axis1)),
    _w("sum_all", sum_all, make_matrix, (8192, 8192), (512, 512), "x.sum()",
       magnitude=_sum_magnitude(sum_all), exact=_f64_sum),
    _w("cumsum_rows", cumsum_rows, make_matrix, (4096, 4096), (256, 256), "np.cumsum(x, axis=1)",
       magnitude=_sum_magnitude(cumsum_rows)),
    _w("pairwise_sqdist", pairwise_sqdist, make_pairwise, (1024, 64), (128, 64),
       "((a[:,None]-b[None])**2).sum(-1)"),
    _w("transpose_add", transpose_add, make_matrix, (4096, 4096), (256, 256), "x + x.T"),
    _w("chain_small", chain, make_chain, 1000, 1000, "chain at N=1000 (per-call overhead)",
       unit="us", tags=("overhead",)),
    _w("mlp", mlp, make_mlp, (4096, 1024), (256, 128), "relu(x@W1+b1)@W2+b2",
       magnitude=lambda inputs, ref: (np.asarray(mlp(*[np.abs(a) for a in inputs]),
                                                 dtype=np.float64),),
       tags=("blas",)),
    _w("stencil", stencil, make_grid, (1000, 1000), (200, 200),
       f"2-D five-point stencil, {STENCIL_STEPS} time steps"),
])

# The suites (benchmarks.spec.Suite): workloads with a report section of their own, appended
# after the table above; --quick runs only each suite's ``quick`` ones.
from benchmarks import linalg_workloads, loop_workloads, program_workloads  # noqa: E402

SUITES = (loop_workloads.SUITE, linalg_workloads.SUITE, program_workloads.SUITE)
SUITE_OF = {name: s for s in SUITES for name in s.workloads}
for _s in SUITES:
    WORKLOADS.update(_s.workloads)
LOOP = tuple(loop_workloads.SUITE.workloads)

CORE = tuple(n for n, w in WORKLOADS.items() if w.core)
# --quick runs the peers only on these (their compile times would dominate it otherwise)
QUICK_PEERS = CORE + ("sum_all",) + tuple(n for s in SUITES for n in s.quick)
# what --quick runs when no workload is named
QUICK = tuple(n for n in WORKLOADS if n not in SUITE_OF or n in SUITE_OF[n].quick)


def as_tuple(out) -> tuple:
    """Normalize a function result (array, scalar or tuple/list of them) to a tuple of arrays."""
    if isinstance(out, (tuple, list)):
        return tuple(np.asarray(o) for o in out)
    return (np.asarray(out),)


def rel_error(got: tuple, exact: tuple) -> float:
    """Largest |got - exact| over the largest |exact|, in float64 (0.0 when both are zero)."""
    err = max(float(np.max(np.abs(g.astype(np.float64) - e), initial=0.0))
              for g, e in zip(got, exact))
    scale = max(float(np.max(np.abs(e), initial=0.0)) for e in exact)
    return err / scale if scale else err


def nbytes_moved(inputs, outputs) -> int:
    """Bytes that must cross memory at least once: every input read + every output written."""
    return int(sum(np.asarray(a).nbytes for a in inputs) + sum(o.nbytes for o in outputs))
