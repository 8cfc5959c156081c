"""Loop workloads (issue 15): NumPy code written with Python loops, branches and while-loops.

In:  nothing (module-level table, like ``benchmarks.workloads``).
Out: ``LOOP_WORKLOADS`` (name -> ``Workload``: the function as written, which cppcodegen
     compiles; run by CPython it is also the reference every system is checked against),
     ``QUICK_LOOPS`` (the ones ``make bench-quick`` runs), ``NUMPY_VECTORIZED`` (name -> the
     vectorized rewrite a NumPy user would write, timed in the NumPy column where the function
     loops over elements; elsewhere the NumPy column times the function as written),
     ``numba_impls()`` (name -> ``numba.njit`` of the *same source function*, except
     lut_gather: see ``_numba_lut_gather``) and ``jax_impls()`` (name -> the ``lax.fori_loop`` /
     ``lax.while_loop`` / ``lax.scan`` / ``lax.cond`` rewrite a JAX user has to write; enables
     jax_enable_x64, since most of these workloads are float64).

Every function leaves its inputs unchanged (in-place updates work on a copy made on entry or
on buffers it allocates), so repeated timed calls see the same inputs. Inputs have fixed seeds:
float64, except lut_gather (uint8 codes, a float32 table, a Python float gain); the Poisson
workload also takes Python scalars (h, tol, maxit).

Registered as ``SUITE`` (``benchmarks.spec.Suite``, tag "loop"; "python_loop" where the
function loops in Python, which torch.compile would unroll, so that peer skips them):
``benchmarks.workloads`` appends its workloads to ``WORKLOADS``, the peers take the Numba, JAX
and NumPy versions from it, and the report puts them in a section of their own (``make
bench-loops`` runs only them).

``python -m benchmarks.run --tag loop --quick --repeat 1 --no-dask`` runs every system on them and
checks each result against the function as written before timing it (as ``make bench`` does).

Notes: reference outputs come from ``wl.fn`` (plain CPython loops: about 1.5 s for loop_dot at
10**7), so a full run spends a while computing references. Numba returns Python floats, which
``peers._numba_to_numpy`` would cast to float32; ``numba_impls`` therefore wraps scalar results
in 0-d float64 arrays.
"""
from __future__ import annotations

import numpy as np

from benchmarks.spec import Suite, Workload

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


def thomas(lower, diag, upper, rhs):
    """(6) Thomas algorithm for many tridiagonal systems at once, one per column (the
    implicit step of an ADI / Crank-Nicolson scheme): the forward sweep fills two buffers row
    by row, the back substitution a third one. All four arguments are (n, m)."""
    n = rhs.shape[0]
    cp = np.empty(rhs.shape, dtype=rhs.dtype)
    dp = np.empty(rhs.shape, dtype=rhs.dtype)
    cp[0] = upper[0] / diag[0]
    dp[0] = rhs[0] / diag[0]
    for j in range(1, n):
        denom = diag[j] - lower[j] * cp[j - 1]
        cp[j] = upper[j] / denom
        dp[j] = (rhs[j] - lower[j] * dp[j - 1]) / denom
    x = np.empty(rhs.shape, dtype=rhs.dtype)
    x[n - 1] = dp[n - 1]
    for j in range(n - 2, -1, -1):
        x[j] = dp[j] - cp[j] * x[j + 1]
    return x


def lut_gather(codes, table, gain):
    """(7) an 8-bit image through a 256-entry tone curve (``table[codes]``, uint8 codes),
    exposure gain and clipping, then the mean of every row. float32 out, as imaging code has it."""
    img = np.minimum(table[codes] * gain, 1.0)
    return img, img.mean(axis=1)


def poisson_while(f, h, tol, maxit):
    """(8) Jacobi iteration for the Poisson equation on a small grid (zero boundary), stopped
    when the relative change of the iterate drops below ``tol`` or after ``maxit`` sweeps."""
    u = np.zeros(f.shape, dtype=f.dtype)
    err = 1.0
    it = 0
    while err > tol and it < maxit:
        un = u.copy()
        u[1:-1, 1:-1] = 0.25 * (un[1:-1, :-2] + un[1:-1, 2:] + un[:-2, 1:-1] + un[2:, 1:-1]
                                - h * h * f[1:-1, 1:-1])
        err = np.sqrt(np.sum((u - un) ** 2) / np.sum(u ** 2))
        it += 1
    return u, it


HEAT_STEPS, HEAT_ALPHA = 200, 0.2


def heat_swap(T0, alpha):
    """(9) explicit 2-D heat equation with fixed edges, the two time levels passed by name
    (``T, Tn = Tn, T``: the idiom of CFD tutorials, each step stored into the other array)."""
    T = T0.copy()
    Tn = T0.copy()
    for _ in range(HEAT_STEPS):
        Tn[1:-1, 1:-1] = T[1:-1, 1:-1] + alpha * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:]
                                                  + T[1:-1, :-2] - 4.0 * T[1:-1, 1:-1])
        T, Tn = Tn, T
    return T


def lu_elim(A0):
    """(10) LU factorization without pivoting, element by element (polybench's ``lu``): the
    multiplier stored into the matrix, then the rest of its row updated by an inner loop."""
    A = A0.copy()
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] = A[i, k] / A[k, k]
            for j in range(k + 1, n):
                A[i, j] -= A[i, k] * A[k, j]
    return A


def loop_matmul(A, B):
    """(11) A matrix product as element loops in i-k-j order (the cache-friendly order a
    C programmer writes): the innermost loop is independent across j."""
    n, m = A.shape
    p = B.shape[1]
    C = np.zeros((n, p))
    for i in range(n):
        for k in range(m):
            a = A[i, k]
            for j in range(p):
                C[i, j] += a * B[k, j]
    return C


def loop_life(g):
    """(12) One Game of Life step as element loops with branches (int64 cells)."""
    n, m = g.shape
    new = np.zeros_like(g)
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            s = (g[i - 1, j - 1] + g[i - 1, j] + g[i - 1, j + 1] + g[i, j - 1]
                 + g[i, j + 1] + g[i + 1, j - 1] + g[i + 1, j] + g[i + 1, j + 1])
            if g[i, j] == 1 and (s == 2 or s == 3):
                new[i, j] = 1
            elif g[i, j] == 0 and s == 3:
                new[i, j] = 1
    return new


def loop_median3(im):
    """(13) A 1x3 median filter along rows: three pixels sorted by swaps under ``if``."""
    h, w = im.shape
    out = im.copy()
    for i in range(h):
        for j in range(1, w - 1):
            a = im[i, j - 1]
            b = im[i, j]
            c = im[i, j + 1]
            if a > b:
                a, b = b, a
            if b > c:
                b, c = c, b
            if a > b:
                a, b = b, a
            out[i, j] = b
    return out


CONV_C, CONV_DT, CONV_DX, CONV_STEPS = 1.0, 0.002, 0.01, 50


def loop_convection(u0, nt):
    """(14) "12 steps to Navier-Stokes", step 5: 2-D linear convection as element loops,
    the Courant numbers written inline (``c * dt / dx`` in the innermost loop)."""
    c, dt, dx, dy = CONV_C, CONV_DT, CONV_DX, CONV_DX
    u = u0.copy()
    ny, nx = u.shape
    for n in range(nt):
        un = u.copy()
        for j in range(1, ny):
            for i in range(1, nx):
                u[j, i] = (un[j, i] - c * dt / dx * (un[j, i] - un[j, i - 1])
                           - c * dt / dy * (un[j, i] - un[j - 1, i]))
    return u


def loop_primes(n):
    """(15) The primes below n: a sieve, then ``primes.append(i)`` under ``if sieve[i]``."""
    sieve = np.ones(n, dtype=np.bool_)
    sieve[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = False
    primes = []
    for i in range(n):
        if sieve[i]:
            primes.append(i)
    return np.array(primes)


def loop_positive_mean(x):
    """(16) The mean of the positive values: a sum and a count under ``if x[i] > 0`` (the
    branch goes either way on random signs)."""
    s = 0.0
    n = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s += x[i]
            n += 1
    return s / n if n > 0 else 0.0


BURGERS_DT, BURGERS_DX, BURGERS_NU, BURGERS_STEPS = 2e-5, 0.00314, 0.07, 100


def loop_burgers(u0, nt):
    """(17) 1-D viscous Burgers with periodic ends, as element loops: ``un[i - 1]`` wraps at
    i = 0 and ``un[(i + 1) % nx]`` at the last i ("12 steps", step 4)."""
    dt, dx, nu = BURGERS_DT, BURGERS_DX, BURGERS_NU
    nx = u0.shape[0]
    u = u0.copy()
    for n in range(nt):
        un = u.copy()
        for i in range(nx):
            ip = (i + 1) % nx
            u[i] = (un[i] - un[i] * dt / dx * (un[i] - un[i - 1])
                    + nu * dt / dx**2 * (un[ip] - 2 * un[i] + un[i - 1]))
    return u


BOX_W, BOX_H, BOUNCE_STEPS = 100.0, 50.0, 100


def loop_bounce(px, py, vx, vy):
    """(18) Particles bouncing in a box: per particle and step, a move and two ``if``s that
    reflect the velocity and clamp the position with ``min``/``max`` (the branch is taken by
    a few particles in each step; the particle loop is independent across particles)."""
    px, py, vx, vy = px.copy(), py.copy(), vx.copy(), vy.copy()
    n = px.shape[0]
    for s in range(BOUNCE_STEPS):
        for i in range(n):
            px[i] += vx[i]
            py[i] += vy[i]
            if px[i] < 0 or px[i] > BOX_W:
                vx[i] = -vx[i]
                px[i] = min(max(px[i], 0.0), BOX_W)
            if py[i] < 0 or py[i] > BOX_H:
                vy[i] = -vy[i]
                py[i] = min(max(py[i], 0.0), BOX_H)
    return px, py, vx, vy


# ----------------------------------------------------------------------------- vectorized twins
def vec_positive_mean(x):
    pos = x[x > 0]
    return pos.mean() if pos.size else 0.0


def vec_burgers(u0, nt):
    dt, dx, nu = BURGERS_DT, BURGERS_DX, BURGERS_NU
    u = u0.copy()
    for n in range(nt):
        um, up = np.roll(u, 1), np.roll(u, -1)
        u = u - u * dt / dx * (u - um) + nu * dt / dx**2 * (up - 2 * u + um)
    return u


def vec_dot(a, b):
    return np.dot(a, b)


def vec_drawdown(prices):
    peak = np.maximum.accumulate(prices)
    dd = (peak - prices) / peak
    return dd, max(0.0, dd.max())


def vec_syrk(C, A):
    lower = np.tri(C.shape[0], dtype=bool)
    return np.where(lower, SYRK_BETA * C + SYRK_ALPHA * (A @ A.T), C)


def vec_lu(A0):
    A = A0.copy()
    for k in range(A.shape[0]):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def vec_matmul(A, B):
    return A @ B


def vec_median3(im):
    out = im.copy()
    a, b, c = im[:, :-2], im[:, 1:-1], im[:, 2:]
    out[:, 1:-1] = np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
    return out


def vec_life(g):
    s = np.zeros_like(g)
    s[1:-1, 1:-1] = (g[:-2, :-2] + g[:-2, 1:-1] + g[:-2, 2:] + g[1:-1, :-2] + g[1:-1, 2:]
                     + g[2:, :-2] + g[2:, 1:-1] + g[2:, 2:])
    inner = np.zeros(g.shape, dtype=bool)
    inner[1:-1, 1:-1] = True
    alive = ((g == 1) & ((s == 2) | (s == 3))) | ((g == 0) & (s == 3))
    return np.where(inner & alive, 1, 0).astype(g.dtype)


# loop_jacobi, loop_power and the workloads after them are array statements already (their
# loops are inherent): NumPy times the function as written.
def vec_convection(u0, nt):
    c, dt, dx, dy = CONV_C, CONV_DT, CONV_DX, CONV_DX
    u = u0.copy()
    for n in range(nt):     # (Gauss-Seidel-free: each step reads the previous one, as above)
        un = u.copy()
        u[1:, 1:] = (un[1:, 1:] - c * dt / dx * (un[1:, 1:] - un[1:, :-1])
                     - c * dt / dy * (un[1:, 1:] - un[:-1, 1:]))
    return u


def vec_bounce(px, py, vx, vy):
    px, py, vx, vy = px.copy(), py.copy(), vx.copy(), vy.copy()
    for s in range(BOUNCE_STEPS):
        px += vx
        py += vy
        out = (px < 0) | (px > BOX_W)
        vx[out] = -vx[out]
        np.clip(px, 0.0, BOX_W, out=px)
        out = (py < 0) | (py > BOX_H)
        vy[out] = -vy[out]
        np.clip(py, 0.0, BOX_H, out=py)
    return px, py, vx, vy


def vec_primes(n):
    sieve = np.ones(n, dtype=np.bool_)
    sieve[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = False
    return np.nonzero(sieve)[0]


NUMPY_VECTORIZED = {"loop_dot": vec_dot, "loop_drawdown": vec_drawdown, "loop_syrk": vec_syrk,
                    "lu_elim": vec_lu, "loop_matmul": vec_matmul, "loop_life": vec_life,
                    "loop_median3": vec_median3, "loop_convection": vec_convection,
                    "loop_primes": vec_primes, "loop_positive_mean": vec_positive_mean,
                    "loop_burgers": vec_burgers, "loop_bounce": vec_bounce}


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


def make_thomas(shape):
    r = _rng()
    lower = -r.random(shape)
    upper = -r.random(shape)
    diag = 2.5 + r.random(shape)                # diagonally dominant: no pivoting needed
    return lower, diag, upper, r.standard_normal(shape)


def make_lut(shape):
    codes = _rng().integers(0, 256, size=shape, dtype=np.uint8)
    table = (np.linspace(0.0, 1.0, 256) ** (1 / 2.2)).astype(np.float32)   # a gamma curve
    return codes, table, 1.3


POISSON_TOL, POISSON_MAXIT = 1e-4, 5000


def make_poisson(n):
    x = np.linspace(0.0, 1.0, n)
    s = np.sin(np.pi * x)
    f = -2.0 * np.pi ** 2 * s[:, None] * s[None, :]
    return f, 1.0 / (n - 1), POISSON_TOL, POISSON_MAXIT   # ~600 sweeps at 32, ~2100 at 64


def make_heat(shape):
    T = _rng().random(shape)
    T[0, :] = 2.0                     # a hot edge
    return T, HEAT_ALPHA


def make_lu(n):
    """A diagonally dominant matrix: elimination without pivoting is stable on it."""
    return (_rng().random((n, n)) + n * np.eye(n),)


def make_matmul(n):
    r = _rng()
    return r.standard_normal((n, n)), r.standard_normal((n, n))


def make_life(shape):
    return ((_rng().random(shape) < 0.3).astype(np.int64),)


def make_image(shape):
    return (_rng().random(shape),)


def make_convection(n):
    u = np.ones((n, n))
    u[n // 4:n // 2 + 1, n // 4:n // 2 + 1] = 2.0       # the square wave of the tutorial
    return u, CONV_STEPS


def make_primes(n):
    return (n,)


def make_signs(n):
    return (_rng().standard_normal(n),)


def make_particles(n):
    r = _rng()
    return r.random(n) * BOX_W, r.random(n) * BOX_H, r.standard_normal(n), r.standard_normal(n)


def make_burgers(n):
    return np.sin(np.linspace(0.0, 2 * np.pi, n)) + 2.0, BURGERS_STEPS


# ----------------------------------------------------------------------------- error scales
def _dot_magnitude(inputs, ref):
    a, b = inputs
    return (np.asarray(np.abs(a) @ np.abs(b)),)


def _syrk_magnitude(inputs, ref):
    C, A = inputs
    return (np.abs(SYRK_BETA * C) + SYRK_ALPHA * (np.abs(A) @ np.abs(A).T),)


def _matmul_magnitude(inputs, ref):
    A, B = inputs
    return (np.abs(A) @ np.abs(B),)


def _power_magnitude(inputs, ref):
    lam, v = ref
    return (np.abs(lam), np.full(v.shape, np.abs(v).max()))


def _thomas_magnitude(inputs, ref):
    # the solution of a diagonally dominant system: errors scale with its largest entries
    return (np.full(ref[0].shape, np.abs(ref[0]).max()),)


def _w(*args, **kw):
    w = Workload(*args, **kw)
    return w.name, w


LOOP_WORKLOADS: dict[str, Workload] = dict([
    _w("loop_dot", loop_dot, make_dot, 10**7, 10**5,
       "for i: s += a[i]*b[i] (float64 scalar loop)", magnitude=_dot_magnitude,
       tags=("loop", "python_loop")),
    _w("loop_drawdown", loop_drawdown, make_prices, 10**6, 10**4,
       "running peak / drawdown, if p > peak (recurrence + branch)", tags=("loop", "python_loop")),
    # (200, 200), not (1000, 1000): compiled, a call costs ~1.3 s at 200 and ~21 s at 400
    # (about n**4); at 1000 one call would take minutes.
    _w("loop_syrk", loop_syrk, make_syrk, (200, 200), (100, 100),
       "syrk: C[i,:i+1] *= beta; C[i,:i+1] += alpha*A[i,k]*A[:i+1,k]",
       magnitude=_syrk_magnitude, tags=("loop", "python_loop")),
    _w("loop_jacobi", loop_jacobi, make_jacobi, (512, 512), (64, 64),
       f"while err > tol: Jacobi 5-point step (<= {JACOBI_MAX_ITERS} iterations)",
       tags=("loop", "python_loop")),
    _w("loop_power", loop_power, make_power, 2000, 200,
       f"power iteration, {POWER_ITERS} x (v = A@v; v /= norm(v))",
       magnitude=_power_magnitude, tags=("loop", "python_loop")),
    _w("thomas", thomas, make_thomas, (1000, 1000), (100, 100),
       "Thomas algorithm, one system per column: for j in range(1, n): cp[j] = ...; "
       "back substitution", magnitude=_thomas_magnitude, tags=("loop", "python_loop")),
    _w("lut_gather", lut_gather, make_lut, (4096, 4096), (256, 256),
       "np.minimum(table[codes] * gain, 1.0) with uint8 codes, then row means (float32)",
       tags=("loop",)),
    _w("poisson_while", poisson_while, make_poisson, 64, 32,
       f"while err > tol and it < maxit: Jacobi sweep for Poisson (tol {POISSON_TOL:g})",
       tags=("loop", "python_loop")),
    _w("heat_swap", heat_swap, make_heat, (1000, 1000), (64, 64),
       f"{HEAT_STEPS} explicit 2-D heat steps, Tn[1:-1, 1:-1] = f(T); T, Tn = Tn, T",
       tags=("loop", "python_loop")),
    # 160: CPython takes about 2 s per call of the reference (n**3 / 3 element updates)
    _w("lu_elim", lu_elim, make_lu, 160, 24,
       "LU without pivoting, element loops: A[i,k] /= A[k,k]; for j: A[i,j] -= A[i,k]*A[k,j]",
       tags=("loop", "python_loop")),
    # 128: CPython takes about 1.5 s per call of the reference (n**3 element updates)
    _w("loop_matmul", loop_matmul, make_matmul, 128, 16,
       "C = A @ B as i-k-j element loops: C[i, j] += A[i, k] * B[k, j]",
       magnitude=_matmul_magnitude, tags=("loop", "python_loop")),
    _w("loop_life", loop_life, make_life, (500, 500), (20, 20),
       "Game of Life step as element loops: neighbour sum, if/elif on the cell (int64)",
       tags=("loop", "python_loop")),
    _w("loop_median3", loop_median3, make_image, (1000, 1000), (20, 20),
       "1x3 median filter along rows: three pixels sorted by swaps under if",
       tags=("loop", "python_loop")),
    _w("loop_convection", loop_convection, make_convection, 401, 21,
       f"2-D linear convection ('12 steps', step 5), {CONV_STEPS} steps of element loops, "
       "c * dt / dx inline", tags=("loop", "python_loop")),
    _w("loop_primes", loop_primes, make_primes, 2 * 10**6, 100,
       "sieve of Eratosthenes, then primes.append(i) under if sieve[i]; np.array(primes)",
       tags=("loop", "python_loop")),
    _w("loop_positive_mean", loop_positive_mean, make_signs, 10**7, 10**4,
       "mean of the positive values: if x[i] > 0: s += x[i]; n += 1 (random signs)",
       tags=("loop", "python_loop")),
    _w("loop_burgers", loop_burgers, make_burgers, 20001, 101,
       f"1-D Burgers with periodic ends, {BURGERS_STEPS} steps of element loops: un[i - 1], "
       "un[(i + 1) % nx]", tags=("loop", "python_loop")),
    _w("loop_bounce", loop_bounce, make_particles, 10**5, 100,
       f"particles in a box, {BOUNCE_STEPS} steps: px[i] += vx[i]; if px[i] < 0 or px[i] > w: "
       "reflect and clamp with min/max (element loops with branches)",
       tags=("loop", "python_loop")),
])

# make bench-quick runs only these of the loop workloads (with their peers)
QUICK_LOOPS = ("loop_dot",)

NOTE = ("Python `for`/`while`/`if` around NumPy code, compiled as C++ loops (see "
        "*Control flow* above). *as written, CPython*: one call of the function itself, "
        "its loops run by the interpreter (the reference every system is checked "
        "against); shown where the NumPy column times a vectorized rewrite instead "
        "(`np.dot`, `np.maximum.accumulate`, `A @ A.T`); elsewhere the function is "
        "already array code around an inherent loop and NumPy times it as written. "
        "numba: `numba.njit` of the same source (sequential), except lut_gather (Numba "
        "rejects its source: a `prange` loop nest instead). jax.jit: the `lax.fori_loop` "
        "/ `while_loop` / `scan` / `cond` rewrite a JAX user writes, float64 enabled. "
        "Times are medians (warm-up excluded); `vs X` = X's time / cppcodegen's time "
        "(> 1: cppcodegen is faster); every result was checked against the function as "
        "written before it was timed. 1 thread: cppcodegen in a new process with "
        "OMP_NUM_THREADS=1.")



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
        "thomas": njit(thomas),
        "lut_gather": tuple_out(_numba_lut_gather()),
        "poisson_while": tuple_out(njit(poisson_while)),
        "heat_swap": njit(heat_swap),
        "lu_elim": njit(lu_elim),
        "loop_matmul": njit(loop_matmul),
        "loop_life": njit(loop_life),
        "loop_median3": njit(loop_median3),
        "loop_convection": njit(loop_convection),
        "loop_primes": njit(loop_primes),
        "loop_positive_mean": scalar_out(njit(loop_positive_mean)),
        "loop_burgers": njit(loop_burgers),
        "loop_bounce": tuple_out(njit(loop_bounce)),
    }


def _numba_lut_gather():
    """Numba does not take lut_gather's source (``mean(axis=1)`` is not supported, and
    ``float32 array * float`` is float64 there), so this is the loop nest a Numba user
    writes instead: prange over rows, float32 values as NumPy computes them."""
    from numba import njit, prange

    @njit(parallel=True)
    def lut_gather_loops(codes, table, gain):
        rows, cols = codes.shape
        img = np.empty((rows, cols), dtype=np.float32)
        means = np.empty(rows, dtype=np.float32)
        g = np.float32(gain)
        one = np.float32(1.0)
        for i in prange(rows):
            s = 0.0
            for j in range(cols):
                v = min(table[codes[i, j]] * g, one)
                img[i, j] = v
                s += v
            means[i] = s / cols
        return img, means

    return lut_gather_loops


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

    def thomas_(lower, diag, upper, rhs):
        c0, d0 = upper[0] / diag[0], rhs[0] / diag[0]

        def forward(carry, row):
            c_prev, d_prev = carry
            lo, dg, up, r = row
            denom = dg - lo * c_prev
            c, d = up / denom, (r - lo * d_prev) / denom
            return (c, d), (c, d)

        _, (cs, ds) = lax.scan(forward, (c0, d0), (lower[1:], diag[1:], upper[1:], rhs[1:]))
        cp = jnp.concatenate([c0[None], cs])
        dp = jnp.concatenate([d0[None], ds])

        def backward(x_next, row):
            c, d = row
            x = d - c * x_next
            return x, x

        _, xs = lax.scan(backward, dp[-1], (cp[:-1], dp[:-1]), reverse=True)
        return jnp.concatenate([xs, dp[-1:]])

    def lut(codes, table, gain):
        img = jnp.minimum(table[codes] * gain, 1.0)
        return img, img.mean(axis=1)

    def poisson(f, h, tol, maxit):
        def cond(carry):
            _, err, it = carry
            return (err > tol) & (it < maxit)

        def body(carry):
            un, _, it = carry
            u = un.at[1:-1, 1:-1].set(0.25 * (un[1:-1, :-2] + un[1:-1, 2:] + un[:-2, 1:-1]
                                              + un[2:, 1:-1] - h * h * f[1:-1, 1:-1]))
            return u, jnp.sqrt(jnp.sum((u - un) ** 2) / jnp.sum(u ** 2)), it + 1

        u, _, it = lax.while_loop(cond, body, (jnp.zeros_like(f), jnp.ones((), f.dtype),
                                               jnp.zeros((), jnp.int64)))
        return u, it

    def heat(T0, alpha):
        def body(_, T):
            return T.at[1:-1, 1:-1].set(T[1:-1, 1:-1] + alpha * (
                T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2] - 4.0 * T[1:-1, 1:-1]))
        return lax.fori_loop(0, HEAT_STEPS, body, T0)

    def lu(A):
        idx = jnp.arange(A.shape[0])

        def body(k, A):            # column k's multipliers, then the trailing update
            below = idx > k
            col = jnp.where(below, A[:, k] / A[k, k], 0.0)
            A = A.at[:, k].set(jnp.where(below, col, A[:, k]))
            return A - jnp.outer(col, jnp.where(below, A[k, :], 0.0))
        return lax.fori_loop(0, A.shape[0], body, A)

    def matmul(A, B):               # the i-k-j loops, a row of C per k step
        n, m = A.shape

        def row(i, C):
            ci = lax.fori_loop(0, m, lambda k, ci: ci + A[i, k] * B[k], C[i])
            return C.at[i].set(ci)
        return lax.fori_loop(0, n, row, jnp.zeros((n, B.shape[1]), A.dtype))

    def life(g):                    # (no per-cell branch in JAX: the rule as masks)
        s = (g[:-2, :-2] + g[:-2, 1:-1] + g[:-2, 2:] + g[1:-1, :-2] + g[1:-1, 2:]
             + g[2:, :-2] + g[2:, 1:-1] + g[2:, 2:])
        c = g[1:-1, 1:-1]
        born = ((c == 1) & ((s == 2) | (s == 3))) | ((c == 0) & (s == 3))
        return jnp.zeros_like(g).at[1:-1, 1:-1].set(born.astype(g.dtype))

    def median3(im):                # (a JAX user's rewrite: min/max of the shifted rows)
        a, b, c = im[:, :-2], im[:, 1:-1], im[:, 2:]
        mid = jnp.maximum(jnp.minimum(a, b), jnp.minimum(jnp.maximum(a, b), c))
        return im.at[:, 1:-1].set(mid)

    def convection(u, nt):          # (the rows and columns as slices of the previous step)
        cx = cy = CONV_C * CONV_DT / CONV_DX

        def step(_, u):
            return u.at[1:, 1:].set(u[1:, 1:] - cx * (u[1:, 1:] - u[1:, :-1])
                                    - cy * (u[1:, 1:] - u[:-1, 1:]))
        return lax.fori_loop(0, nt, step, u)

    def positive_mean(x):           # (no per-element branch in JAX: a masked sum and count)
        pos = x > 0
        n = pos.sum()
        return jnp.where(n > 0, jnp.where(pos, x, 0.0).sum() / jnp.maximum(n, 1), 0.0)

    def burgers(u, nt):             # (the periodic neighbours as rolls of the previous step)
        dt, dx, nu = BURGERS_DT, BURGERS_DX, BURGERS_NU

        def step(_, u):
            um, up = jnp.roll(u, 1), jnp.roll(u, -1)
            return u - u * dt / dx * (u - um) + nu * dt / dx**2 * (up - 2 * u + um)
        return lax.fori_loop(0, nt, step, u)

    def bounce(px, py, vx, vy):     # (a branch per element: where over whole arrays)
        def step(_, c):
            px, py, vx, vy = c
            px, py = px + vx, py + vy
            outx, outy = (px < 0) | (px > BOX_W), (py < 0) | (py > BOX_H)
            return (jnp.clip(px, 0.0, BOX_W), jnp.clip(py, 0.0, BOX_H),
                    jnp.where(outx, -vx, vx), jnp.where(outy, -vy, vy))
        return lax.fori_loop(0, BOUNCE_STEPS, step, (px, py, vx, vy))

    return {"loop_dot": dot, "loop_drawdown": drawdown, "loop_syrk": syrk,
            "loop_jacobi": jacobi, "loop_power": power, "thomas": thomas_,
            "lut_gather": lut, "poisson_while": poisson, "heat_swap": heat, "lu_elim": lu,
            "loop_matmul": matmul, "loop_life": life, "loop_median3": median3,
            "loop_convection": convection,
            "loop_primes": "the result's length comes from the values (jax.jit: static shapes)",
            "loop_positive_mean": positive_mean, "loop_burgers": burgers,
            "loop_bounce": bounce}


SUITE = Suite(tag="loop", title="Loop workloads", note=NOTE, workloads=LOOP_WORKLOADS,
              quick=QUICK_LOOPS, numpy_vectorized=NUMPY_VECTORIZED, numba=numba_impls,
              jax=jax_impls, marker="bench-loops")
