"""Loop workloads (issue 15): NumPy code written with Python loops, branches and while-loops.

In:  nothing (module-level table, like ``benchmarks.workloads``).
Out: ``LOOP_WORKLOADS`` (name -> ``Workload``: the plain loop function cppcodegen compiles; it is
     also the NumPy reference, i.e. the same loops run by CPython), ``NUMPY_VECTORIZED`` (name ->
     the NumPy-vectorized equivalent a NumPy user would write, for the NumPy timing column),
     ``numba_impls()`` (name -> ``numba.njit`` of the *same source function*) and ``jax_impls()``
     (name -> the ``lax.fori_loop`` / ``lax.while_loop`` / ``lax.cond`` rewrite a JAX user has to
     write; enables jax_enable_x64, since these workloads are float64).

Every function leaves its inputs unchanged (in-place updates work on a copy made on entry), so
repeated timed calls see the same inputs. Inputs are float64 with fixed seeds.

``python -m benchmarks.loop_workloads [--full]`` checks, for every workload, that the plain loop
function, its vectorized twin, the Numba version and the JAX version agree (benchmarks.measure.check).

Registration into the benchmark table (a few lines in existing files):

    # benchmarks/workloads.py, at the very end (after WORKLOADS / CORE / QUICK_PEERS):
    from benchmarks.loop_workloads import LOOP_WORKLOADS  # noqa: E402
    WORKLOADS.update(LOOP_WORKLOADS)

    # benchmarks/numba_impls.py, end of build(): instead of `return {...}`
    impls = {...}
    from benchmarks.loop_workloads import numba_impls
    impls.update(numba_impls())
    return impls

    # benchmarks/peers.py, JaxJit.prepare: instead of `f = jax.jit(rebind_numpy(wl.fn, self.jnp))`
    from benchmarks.loop_workloads import jax_impls
    impl = jax_impls().get(wl.name)
    f = jax.jit(impl if impl is not None else rebind_numpy(wl.fn, self.jnp))

    # (optional) benchmarks/peers.py, NumPy.prepare: time the vectorized twin where one exists
    from benchmarks.loop_workloads import NUMPY_VECTORIZED
    fn = NUMPY_VECTORIZED.get(wl.name, wl.fn)
    return Prepared(lambda: fn(*inputs), info=info)

Notes for the runner: the reference outputs come from ``wl.fn`` (plain CPython loops: about
3-5 s for loop_dot at 10**7 and loop_syrk at n=m=1000), so a full run spends a while computing
references. Numba returns Python floats, which ``peers._numba_to_numpy`` would cast to float32;
``numba_impls`` therefore wraps scalar results in 0-d float64 arrays.
"""
from __future__ import annotations

import numpy as np

from benchmarks.workloads import Workload

SEED = 4321


# ----------------------------------------------------------------------------- loop functions
def loop_dot(a, b):
    """(1) scalar reduction loop."""
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


def loop_drawdown(prices):
    """(2) prefix/recurrence with a data-dependent branch: running peak, drawdown series and
    maximum drawdown of a price path."""
    n = prices.shape[0]
    dd = np.empty(n)
    peak = prices[0]
    mdd = 0.0
    for i in range(n):
        p = prices[i]
        if p > peak:
            peak = p
        d = (peak - p) / peak
        dd[i] = d
        if d > mdd:
            mdd = d
    return dd, mdd


SYRK_ALPHA, SYRK_BETA = 1.5, 1.2


def loop_syrk(C, A):
    """(3) triangular update (polybench syrk, lower triangle); C is updated on a copy."""
    C = C.copy()
    n, m = A.shape
    for i in range(n):
        C[i, :i + 1] *= SYRK_BETA
        for k in range(m):
            C[i, :i + 1] += SYRK_ALPHA * A[i, k] * A[:i + 1, k]
    return C


JACOBI_MAX_ITERS = 1000


def loop_jacobi(u, tol):
    """(4) convergence while-loop around Jacobi five-point steps (2-D Laplace, fixed boundary)."""
    u = u.copy()
    err = tol + 1.0
    it = 0
    while err > tol and it < JACOBI_MAX_ITERS:
        un = u.copy()
        u[1:-1, 1:-1] = 0.25 * (un[1:-1, 2:] + un[1:-1, :-2] + un[2:, 1:-1] + un[:-2, 1:-1])
        err = np.abs(u - un).max()
        it += 1
    return u, it


POWER_ITERS = 100


def loop_power(A, v):
    """(5) power iteration: dominant eigenvalue and eigenvector."""
    for _ in range(POWER_ITERS):
        v = A @ v
        v = v / np.linalg.norm(v)
    lam = v @ (A @ v)
    return lam, v


# ----------------------------------------------------------------------------- vectorized twins
def vec_dot(a, b):
    return np.dot(a, b)


def vec_drawdown(prices):
    peak = np.maximum.accumulate(prices)
    dd = (peak - prices) / peak
    return dd, max(0.0, dd.max())


def vec_syrk(C, A):
    lower = np.tri(C.shape[0], dtype=bool)
    return np.where(lower, SYRK_BETA * C + SYRK_ALPHA * (A @ A.T), C)


def vec_jacobi(u, tol):
    return loop_jacobi(u, tol)        # already array statements; the while loop is inherent


def vec_power(A, v):
    return loop_power(A, v)           # already array statements; the iteration is inherent


NUMPY_VECTORIZED = {"loop_dot": vec_dot, "loop_drawdown": vec_drawdown, "loop_syrk": vec_syrk,
                    "loop_jacobi": vec_jacobi, "loop_power": vec_power}


# ----------------------------------------------------------------------------- inputs
def _rng():
    return np.random.default_rng(SEED)


def make_dot(n):
    r = _rng()
    return r.standard_normal(n), r.standard_normal(n)


def make_prices(n):
    r = _rng()
    return (100.0 * np.exp(np.cumsum(0.01 * r.standard_normal(n))),)


def make_syrk(shape):
    n, m = shape
    r = _rng()
    return r.standard_normal((n, n)), r.standard_normal((n, m))


def make_jacobi(shape):
    r = _rng()
    u = 0.1 * r.random(shape)
    u[0, :] = 1.0                     # hot top edge, other edges cold
    u[-1, :] = 0.0
    u[:, 0] = 0.0
    u[:, -1] = 0.0
    return u, 4e-3                    # stops on tol: ~140 iterations quick, ~350 full


def make_power(n):
    r = _rng()
    b = r.standard_normal((n, n))
    A = (b + b.T) / (2.0 * np.sqrt(n)) + 3.0 * np.diag(np.linspace(0.0, 1.0, n))
    return A, np.ones(n)


# ----------------------------------------------------------------------------- error scales
def _dot_magnitude(inputs, ref):
    a, b = inputs
    return (np.asarray(np.abs(a) @ np.abs(b)),)


def _syrk_magnitude(inputs, ref):
    C, A = inputs
    return (np.abs(SYRK_BETA * C) + SYRK_ALPHA * (np.abs(A) @ np.abs(A).T),)


def _power_magnitude(inputs, ref):
    lam, v = ref
    return (np.abs(lam), np.full(v.shape, np.abs(v).max()))


def _w(*args, **kw):
    w = Workload(*args, **kw)
    return w.name, w


LOOP_WORKLOADS: dict[str, Workload] = dict([
    _w("loop_dot", loop_dot, make_dot, 10**7, 10**5,
       "for i: s += a[i]*b[i] (float64 scalar loop)", magnitude=_dot_magnitude,
       tags=("loop",)),
    _w("loop_drawdown", loop_drawdown, make_prices, 10**6, 10**4,
       "running peak / drawdown, if p > peak (recurrence + branch)", tags=("loop",)),
    _w("loop_syrk", loop_syrk, make_syrk, (1000, 1000), (100, 100),
       "syrk: C[i,:i+1] *= beta; C[i,:i+1] += alpha*A[i,k]*A[:i+1,k]",
       magnitude=_syrk_magnitude, tags=("loop",)),
    _w("loop_jacobi", loop_jacobi, make_jacobi, (512, 512), (64, 64),
       f"while err > tol: Jacobi 5-point step (<= {JACOBI_MAX_ITERS} iterations)",
       tags=("loop",)),
    _w("loop_power", loop_power, make_power, 2000, 200,
       f"power iteration, {POWER_ITERS} x (v = A@v; v /= norm(v))",
       magnitude=_power_magnitude, tags=("loop",)),
])


# ----------------------------------------------------------------------------- Numba
def numba_impls() -> dict:
    """numba.njit of the very same source functions (no prange: these loops are sequential)."""
    from numba import njit

    def scalar_out(jitted):
        def run(*args):
            return np.asarray(jitted(*args), dtype=np.float64)
        run.jitted = jitted
        return run

    def tuple_out(jitted):
        def run(*args):
            return tuple(np.asarray(o) for o in jitted(*args))
        run.jitted = jitted
        return run

    return {
        "loop_dot": scalar_out(njit(loop_dot)),
        "loop_drawdown": tuple_out(njit(loop_drawdown)),
        "loop_syrk": njit(loop_syrk),
        "loop_jacobi": tuple_out(njit(loop_jacobi)),
        "loop_power": tuple_out(njit(loop_power)),
    }


# ----------------------------------------------------------------------------- JAX
def jax_impls() -> dict:
    """The lax rewrite of each loop (what a JAX user must write); jit them as usual."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax import lax

    def dot(a, b):
        def body(i, s):
            return s + a[i] * b[i]
        return lax.fori_loop(0, a.shape[0], body, jnp.zeros((), a.dtype))

    def drawdown(prices):
        n = prices.shape[0]

        def body(i, carry):
            peak, mdd, dd = carry
            p = prices[i]
            peak = lax.cond(p > peak, lambda: p, lambda: peak)
            d = (peak - p) / peak
            mdd = lax.cond(d > mdd, lambda: d, lambda: mdd)
            return peak, mdd, dd.at[i].set(d)

        _, mdd, dd = lax.fori_loop(0, n, body, (prices[0], jnp.zeros((), prices.dtype),
                                                jnp.empty(n, prices.dtype)))
        return dd, mdd

    def syrk(C, A):
        n, m = A.shape
        rows = jnp.arange(n)

        def row(i, C):
            mask = rows <= i                    # C[i, :i+1] as a masked full row

            def col(k, ci):
                return ci + jnp.where(mask, SYRK_ALPHA * A[i, k] * A[:, k], 0.0)
            ci = jnp.where(mask, C[i] * SYRK_BETA, C[i])
            ci = lax.fori_loop(0, m, col, ci)
            return C.at[i].set(ci)

        return lax.fori_loop(0, n, row, C)

    def jacobi(u, tol):
        def cond(carry):
            _, err, it = carry
            return (err > tol) & (it < JACOBI_MAX_ITERS)

        def body(carry):
            un, _, it = carry
            u = un.at[1:-1, 1:-1].set(
                0.25 * (un[1:-1, 2:] + un[1:-1, :-2] + un[2:, 1:-1] + un[:-2, 1:-1]))
            return u, jnp.abs(u - un).max(), it + 1

        u, _, it = lax.while_loop(cond, body, (u, jnp.asarray(tol + 1.0, u.dtype),
                                               jnp.zeros((), jnp.int64)))
        return u, it

    def power(A, v):
        def body(_, v):
            v = A @ v
            return v / jnp.linalg.norm(v)
        v = lax.fori_loop(0, POWER_ITERS, body, v)
        return v @ (A @ v), v

    return {"loop_dot": dot, "loop_drawdown": drawdown, "loop_syrk": syrk,
            "loop_jacobi": jacobi, "loop_power": power}


# ----------------------------------------------------------------------------- self-check
def _self_check(quick=True, names=None) -> int:
    import time

    from benchmarks.measure import check
    from benchmarks.workloads import as_tuple

    nb = numba_impls()
    jx = jax_impls()
    import jax
    failures = 0
    for name, wl in LOOP_WORKLOADS.items():
        if names and name not in names:
            continue
        inputs = wl.inputs(quick)
        pristine = [np.copy(a) for a in inputs]
        t0 = time.perf_counter()
        ref = as_tuple(wl.fn(*inputs))
        t_ref = time.perf_counter() - t0
        assert all(np.array_equal(a, p) for a, p in zip(inputs, pristine)), f"{name} mutated inputs"
        mag = wl.magnitude(inputs, ref) if wl.magnitude else None
        peers = {
            "numpy-vectorized": lambda: as_tuple(NUMPY_VECTORIZED[name](*inputs)),
            "numba": lambda: as_tuple(nb[name](*inputs)),
            "jax": lambda: as_tuple(jax.tree_util.tree_map(
                np.asarray, jax.jit(jx[name])(*[jax.device_put(a) for a in inputs]))),
        }
        line = [f"{name} ({'quick' if quick else 'full'} {wl.size(quick)}): plain {t_ref:.2f}s"]
        for peer, run in peers.items():
            try:
                t0 = time.perf_counter()
                got = run()
                ok, msg = check(got, ref, mag)
                exact = all(np.array_equal(g, r) for g, r in zip(got, ref))
                line.append(f"{peer} {'ok' if ok else 'WRONG'}{' (bit-equal)' if exact else ''}"
                            f" {time.perf_counter() - t0:.2f}s" + ("" if ok else f": {msg}"))
                failures += not ok
            except Exception as e:      # report, keep going
                failures += 1
                line.append(f"{peer} FAILED {type(e).__name__}: {str(e)[:200]}")
        print("; ".join(line), flush=True)
    return failures


if __name__ == "__main__":
    import sys
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(1 if _self_check(quick="--full" not in sys.argv, names=args or None) else 0)
