"""Linear-algebra workloads (issue 17): matrix products of every size, the epilogues around
them, a 3-layer MLP, NPBench-style small programs written the NumPy way, and GELU with
``x ** 3``.

In:  nothing (module-level table, like ``benchmarks.loop_workloads``).
Out: ``SUITE`` (tag "linalg"): ``LINALG_WORKLOADS`` (name -> ``Workload``), the quick set,
     ``numba_impls()`` (name -> ``numba.njit`` of the same source function where Numba
     compiles it) and ``jax_impls()`` (enables float64 in JAX; every workload then runs the
     default rebinding, ``np`` -> ``jax.numpy``).

Products: ``gemm_<dtype>_<n>`` is ``a @ b`` with two n x n operands (its quick size is a small
n); ``gemm_scaled`` is ``alpha * a @ b + beta * c`` (float32); ``mlp3_b64`` / ``mlp3_b4096``
run three float32 layers ``relu(x @ W + b)`` (the last without ReLU) at hidden 1024.
NPBench-style (float64, as NPBench's NumPy versions are): mvt, gemver, gesummv, atax, bicg,
k2mm, k3mm at sizes where one NumPy call takes 0.1-10 ms on a 2-core machine. Functions return
new arrays (NPBench's in-place updates are written as results) so repeated calls see the same
inputs. Workloads whose NumPy version spends its time in BLAS (level 3, and level 2 for the
matrix-vector programs: OpenBLAS threads GEMV too) carry the tag "blas": NumPy also gets a
1-thread time.

Error scales (``magnitude``): a product's rounding error grows with the sum of |terms|, not
with |result| (cancellation), so the check scales each element by the same expression
evaluated on |inputs|.

``python -m benchmarks.run --tag linalg --quick --repeat 1 --no-dask`` runs every system on them and
checks each result against the function as written before timing it (as ``make bench`` does).
"""
from __future__ import annotations

import math

import numpy as np

from benchmarks.spec import Suite, Workload

SEED = 2024
GELU_C = 0.7978845608028654


# ----------------------------------------------------------------------------- functions
def gemm(a, b):
    return a @ b


def gemm_scaled(alpha, a, b, beta, c):
    return alpha * a @ b + beta * c


def mlp3(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1 + b1, 0.0)
    h = np.maximum(h @ w2 + b2, 0.0)
    return h @ w3 + b3


def gelu_cube(x):
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x ** 3)))


def mvt(x1, x2, y1, y2, A):
    return x1 + A @ y1, x2 + y2 @ A


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A = A + np.outer(u1, v1) + np.outer(u2, v2)
    x = x + beta * (y @ A) + z
    w = w + alpha * (A @ x)
    return A, x, w


def gesummv(alpha, beta, A, B, x):
    return alpha * (A @ x) + beta * (B @ x)


def atax(A, x):
    return (A @ x) @ A


def bicg(A, p, r):
    return r @ A, A @ p


def k2mm(alpha, beta, A, B, C, D):
    return alpha * A @ B @ C + beta * D


def k3mm(A, B, C, D):
    return (A @ B) @ (C @ D)


# ----------------------------------------------------------------------------- inputs
def _rng():
    return np.random.default_rng(SEED)


def _mat(r, shape, dtype=np.float64, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(dtype)


def make_gemm(dtype):
    def make(n):
        r = _rng()
        return _mat(r, (n, n), dtype), _mat(r, (n, n), dtype)
    return make


def make_gemm_scaled(n):
    r = _rng()
    f = np.float32
    return 1.5, _mat(r, (n, n), f), _mat(r, (n, n), f), 1.2, _mat(r, (n, n), f)


def make_mlp3(shape):
    rows, hidden = shape
    r = _rng()
    s = 1.0 / math.sqrt(hidden)
    f = np.float32
    out = [_mat(r, (rows, hidden), f)]
    for _ in range(3):
        out += [_mat(r, (hidden, hidden), f, s), _mat(r, (hidden,), f, 0.1)]
    return tuple(out)


def make_gelu(n):
    return (_mat(_rng(), (n,), np.float32, 2.0),)


def make_mvt(n):
    r = _rng()
    return tuple(_mat(r, (n,)) for _ in range(4)) + (_mat(r, (n, n)),)


def make_gemver(n):
    r = _rng()
    A = _mat(r, (n, n))
    vecs = tuple(_mat(r, (n,)) for _ in range(8))
    return (1.5, 1.2, A) + vecs


def make_gesummv(n):
    r = _rng()
    return 1.5, 1.2, _mat(r, (n, n)), _mat(r, (n, n)), _mat(r, (n,))


def make_atax(shape):
    m, n = shape
    r = _rng()
    return _mat(r, (m, n)), _mat(r, (n,))


def make_bicg(shape):
    m, n = shape
    r = _rng()
    return _mat(r, (m, n)), _mat(r, (n,)), _mat(r, (m,))


def make_k2mm(shape):
    ni, nj, nk, nl = shape
    r = _rng()
    return (1.5, 1.2, _mat(r, (ni, nk)), _mat(r, (nk, nj)), _mat(r, (nj, nl)),
            _mat(r, (ni, nl)))


def make_k3mm(shape):
    ni, nj, nk, nl, nm = shape
    r = _rng()
    return _mat(r, (ni, nk)), _mat(r, (nk, nj)), _mat(r, (nj, nm)), _mat(r, (nm, nl))


# ----------------------------------------------------------------------------- error scales
def _abs_magnitude(fn):
    """The same function of |inputs| (scalars included): the sum of |terms| of every output
    element, which bounds the rounding error of a product up to a factor of K * eps."""
    def magnitude(inputs, ref):
        outs = fn(*[abs(a) if np.isscalar(a) else np.abs(a) for a in inputs])
        outs = outs if isinstance(outs, tuple) else (outs,)
        return tuple(np.asarray(o, dtype=np.float64) for o in outs)
    return magnitude


def _mlp3_magnitude(inputs, ref):
    # ReLU of |.| is the identity: the magnitude is the product chain of |inputs|
    x, w1, b1, w2, b2, w3, b3 = (np.abs(a).astype(np.float64) for a in inputs)
    return ((((x @ w1 + b1) @ w2 + b2) @ w3 + b3),)


def _gemver_magnitude(inputs, ref):
    alpha, beta, A, u1, v1, u2, v2, w, x, y, z = (abs(a) if np.isscalar(a) else np.abs(a)
                                                   for a in inputs)
    return gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z)


# ----------------------------------------------------------------------------- table
def _w(*args, **kw):
    w = Workload(*args, **kw)
    return w.name, w


def _gemm_workloads():
    for tag, dtype in (("f32", np.float32), ("f64", np.float64)):
        for n in (64, 256, 1024, 2000):
            yield _w(f"gemm_{tag}_{n}", gemm, make_gemm(dtype), n, min(n, 96),
                     f"a @ b, {np.dtype(dtype).name} {n}x{n}x{n}",
                     magnitude=_abs_magnitude(gemm), tags=("linalg", "blas"))


LINALG_WORKLOADS: dict[str, Workload] = dict([
    *_gemm_workloads(),
    _w("gemm_scaled", gemm_scaled, make_gemm_scaled, 1024, 96,
       "alpha * a @ b + beta * c, float32 1024^3", magnitude=_abs_magnitude(gemm_scaled),
       tags=("linalg", "blas")),
    _w("mlp3_b64", mlp3, make_mlp3, (64, 1024), (16, 64),
       "3 layers relu(x@W+b), float32, batch 64, hidden 1024", magnitude=_mlp3_magnitude,
       tags=("linalg", "blas")),
    _w("mlp3_b4096", mlp3, make_mlp3, (4096, 1024), (128, 64),
       "3 layers relu(x@W+b), float32, batch 4096, hidden 1024", magnitude=_mlp3_magnitude,
       tags=("linalg", "blas")),
    _w("gelu_cube", gelu_cube, make_gelu, 2**24, 2**16,
       "GELU, tanh form with x ** 3 (gelu writes x * x * x)", tags=("linalg",)),
    _w("mvt", mvt, make_mvt, 2000, 120, "x1 + A @ y1, x2 + y2 @ A (float64)",
       magnitude=_abs_magnitude(mvt), tags=("linalg", "blas")),
    _w("gemver", gemver, make_gemver, 2000, 120,
       "A + outer(u1,v1) + outer(u2,v2); x + beta*(y@A) + z; w + alpha*(A@x) (float64)",
       magnitude=_gemver_magnitude, tags=("linalg", "blas")),
    _w("gesummv", gesummv, make_gesummv, 2000, 120, "alpha*(A@x) + beta*(B@x) (float64)",
       magnitude=_abs_magnitude(gesummv), tags=("linalg", "blas")),
    _w("atax", atax, make_atax, (1800, 2200), (100, 130), "(A @ x) @ A (float64)",
       magnitude=_abs_magnitude(atax), tags=("linalg", "blas")),
    _w("bicg", bicg, make_bicg, (2200, 1800), (130, 100), "r @ A, A @ p (float64)",
       magnitude=_abs_magnitude(bicg), tags=("linalg", "blas")),
    _w("k2mm", k2mm, make_k2mm, (200, 225, 250, 275), (40, 45, 50, 55),
       "alpha * A @ B @ C + beta * D (float64)", magnitude=_abs_magnitude(k2mm),
       tags=("linalg", "blas")),
    _w("k3mm", k3mm, make_k3mm, (200, 220, 240, 260, 280), (40, 44, 48, 52, 56),
       "(A @ B) @ (C @ D) (float64)", magnitude=_abs_magnitude(k3mm),
       tags=("linalg", "blas")),
])

QUICK = ("gemm_f32_256", "mvt")


# ----------------------------------------------------------------------------- Numba
def numba_impls() -> dict:
    """numba.njit of the same source functions, where Numba gives NumPy's result (its ``@``
    calls BLAS for float arrays)."""
    from numba import njit

    def tuple_out(jitted):
        def run(*args):
            return tuple(np.asarray(o) for o in jitted(*args))
        run.jitted = jitted
        return run

    out = {}
    for name, wl in LINALG_WORKLOADS.items():
        if wl.fn in NUMBA_REFUSES:
            continue
        jitted = njit(wl.fn)
        out[name] = tuple_out(jitted) if wl.fn in (mvt, gemver, bicg) else jitted
    return out


# Numba types a Python float times a float32 array as float64 (NumPy keeps float32), so
# gemm_scaled's and mlp3's products mix float64 and float32 operands, which its @ refuses,
# and gelu_cube would return float64: no Numba column for them.
NUMBA_REFUSES = (gemm_scaled, mlp3, gelu_cube)


# ----------------------------------------------------------------------------- JAX
def jax_impls() -> dict:
    """Every workload runs jax.jit of its own function with ``np`` rebound to ``jax.numpy``
    (the default); this only enables float64 (jax_enable_x64), without which JAX computes the
    float64 NPBench programs in float32. Float32 workloads stay float32 (Python scalars are
    weakly typed in JAX as in NumPy)."""
    import jax
    jax.config.update("jax_enable_x64", True)
    return {}


NOTE = ("Matrix products and the programs around them. NumPy runs the function as written "
        "(its products are OpenBLAS calls, threaded: the \"1 thread\" column gives NumPy on one "
        "thread too); cppcodegen compiles the same function (each product runs its own GEMM "
        "kernel or calls the BLAS NumPy links from the kernel, whichever a measurement on this "
        "machine found faster for the product's shape class, with the epilogue fused either "
        "way); Numba runs njit of the "
        "same source (its @ is a BLAS call); jax.jit the same function on jax.numpy. "
        "NPBench-style programs are float64 as NumPy writes them; gelu_cube is the gelu "
        "workload with x ** 3 for x * x * x.")

SUITE = Suite(tag="linalg", title="Linear algebra workloads", note=NOTE,
              workloads=LINALG_WORKLOADS, quick=QUICK, numba=numba_impls, jax=jax_impls)
