"""Program workloads (issue 16): sparse matrix-vector products, histograms, complex arithmetic,
written the ways published NumPy code writes them.

In:  nothing (module-level table, like ``benchmarks.loop_workloads``).
Out: ``SUITE`` (``benchmarks.spec.Suite``, tag "program"): ``PROGRAM_WORKLOADS`` (name ->
     ``Workload``: the function as written, which cppcodegen compiles; run by CPython it is
     also the reference every system is checked against), the quick set, ``NUMPY_VECTORIZED``
     (name -> the NumPy rewrite timed in the NumPy column where the function loops over rows,
     values or points in Python), ``numba_impls()`` (name -> ``numba.njit`` of the same source
     where Numba takes it) and ``jax_impls()`` (name -> what ``jax.jit`` wraps: the lax /
     ``.at[]`` rewrite a JAX user writes; enables jax_enable_x64).

The workloads:

- ``spmv_rows`` / ``spmv_reduceat``: y = A @ x for a CSR matrix (``indptr``, ``cols``,
  ``vals``), ~10 nonzeros per row and some empty rows (a run of them at the end too). One loops
  over rows with ``vals[lo:hi] @ x[cols[lo:hi]]``; the other is the vectorized
  ``np.add.reduceat(vals * x[cols], indptr[:-1])``, made correct for empty rows (``reduceat``
  gives ``a[indptr[i]]`` for an empty row i, and its indices must stay below ``len(a)``: a zero
  is appended and empty rows are masked).
- ``hist_edges``: ``np.histogram`` with given (non-uniform) bin edges; ``hist_digitize``: the
  same counts as ``np.bincount(np.digitize(x, edges, right=...))``; ``hist_loop``: uniform bins
  counted in a Python loop over the values (``counts[int((v - lo) * scale)] += 1``), values out
  of range (and NaN) skipped, ``v == hi`` in the last bin, as np.histogram does. The bin width
  is a power of two so the loop's bin index is exact (it then agrees with np.histogram).
- ``mandelbrot_masked``: escape counts on a complex grid, array style (``z = z * z + c`` on
  the whole grid each iteration, a mask of the points that escaped); ``mandelbrot_points``: the
  same counts with a while loop per point (Numba-example style); ``complex_chain``:
  ``np.abs(np.exp(1j * a) * z + np.conj(z) ** 2)``.
- ``life_u8``, ``sobel_u8``, ``equalize_u8``: image code on uint8 data as it is kept (a Game
  of Life step, a Sobel magnitude clipped back to uint8, a histogram equalization through a
  lookup table).
- ``flood_stack``: a 4-connected flood fill with a Python list as stack (tuples pushed and
  popped); ``bfs_levels``: breadth-first distances with a list as queue read by a head index
  (issue 15's lists in while loops).

Every function leaves its inputs unchanged. Inputs have fixed seeds.
``python -m benchmarks.run --tag program --quick --repeat 1 --no-dask`` runs every system on them and
checks each result against the function as written before timing it (as ``make bench`` does).
"""
from __future__ import annotations

import numpy as np

from benchmarks.spec import Suite, Workload

SEED = 1616


# ----------------------------------------------------------------------------- sparse
def spmv_rows(indptr, cols, vals, x):
    """CSR y = A @ x, one row at a time."""
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        lo = indptr[i]
        hi = indptr[i + 1]
        y[i] = vals[lo:hi] @ x[cols[lo:hi]]
    return y


def spmv_reduceat(indptr, cols, vals, x):
    """CSR y = A @ x with segment sums. reduceat reads a[indptr[i]] for an empty row and needs
    every index below len(a): a zero past the end serves trailing empty rows, and the rows
    without entries are set to 0."""
    prods = np.concatenate((vals * x[cols], np.zeros(1)))
    sums = np.add.reduceat(prods, indptr[:-1])
    return np.where(indptr[1:] > indptr[:-1], sums, 0.0)


# ----------------------------------------------------------------------------- histograms
def hist_edges(x, edges):
    counts, _ = np.histogram(x, bins=edges)
    return counts


def hist_digitize(x, edges):
    """np.histogram's counts through digitize + bincount: bins are [e_k, e_k+1) except the
    last one, closed on the right; values outside [e_0, e_last] and NaN are not counted."""
    nb = edges.shape[0] - 1
    idx = np.digitize(x, edges, right=False)           # 0: below, nb + 1: at or above e_last
    idx = np.where(x == edges[-1], nb, idx)            # the last bin is closed
    return np.bincount(idx, minlength=nb + 2)[1:nb + 1]


HIST_LO, HIST_HI, HIST_BINS = -4.0, 4.0, 256


def hist_loop(x, lo, hi, nbins):
    counts = np.zeros(nbins, dtype=np.int64)
    scale = nbins / (hi - lo)
    for v in x:
        if v >= lo and v < hi:
            counts[int((v - lo) * scale)] += 1
        elif v == hi:
            counts[nbins - 1] += 1
    return counts


def vec_hist_loop(x, lo, hi, nbins):
    counts, _ = np.histogram(x, bins=nbins, range=(lo, hi))
    return counts


# ----------------------------------------------------------------------------- complex
MANDEL_ITERS = 64


def mandelbrot_masked(c, maxiter):
    """Escape counts, whole-grid style: after ``k`` updates ``|z| > 2`` first -> k; never ->
    maxiter. Escaped points are pinned at 2 so they stay finite."""
    z = np.zeros_like(c)
    escape = np.full(c.shape, maxiter)
    for it in range(maxiter):
        z = z * z + c
        out = np.abs(z) > 2.0
        escape[out & (escape == maxiter)] = it + 1
        z[out] = 2.0
    return escape


def mandelbrot_points(c, maxiter):
    """The same counts, a while loop per point."""
    h, w = c.shape
    escape = np.empty((h, w), dtype=np.int64)
    for i in range(h):
        for j in range(w):
            cc = c[i, j]
            z = 0j
            n = 0
            while n < maxiter and abs(z) <= 2.0:
                z = z * z + cc
                n += 1
            escape[i, j] = n
    return escape


def complex_chain(a, z):
    return np.abs(np.exp(1j * a) * z + np.conj(z) ** 2)


# ----------------------------------------------------------------------------- uint8 images
def life_u8(Z):
    """One Game of Life step on a uint8 grid (0/1), the edge cells staying dead."""
    N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:]
         + Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
    birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
    survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
    Z2 = np.zeros_like(Z)
    Z2[1:-1, 1:-1][birth | survive] = 1
    return Z2


def sobel_u8(img):
    """Sobel gradient magnitude of a uint8 image, clipped back to uint8."""
    f = img.astype(np.float32)
    gx = (f[:-2, 2:] + 2 * f[1:-1, 2:] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[1:-1, :-2] + f[2:, :-2])
    gy = (f[2:, :-2] + 2 * f[2:, 1:-1] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[:-2, 1:-1] + f[:-2, 2:])
    return np.clip(np.sqrt(gx * gx + gy * gy), 0, 255).astype(np.uint8)


def equalize_u8(img):
    """Histogram equalization: the cumulative histogram as a lookup table."""
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf_min = cdf[cdf > 0].min()
    lut = np.round((cdf - cdf_min) * 255.0 / (cdf[-1] - cdf_min)).astype(np.uint8)
    return lut[img]


NUMPY_VECTORIZED = {"spmv_rows": spmv_reduceat, "hist_loop": vec_hist_loop,
                    "mandelbrot_points": mandelbrot_masked}


# ----------------------------------------------------------------------------- inputs
def _rng():
    return np.random.default_rng(SEED)


def make_csr(nrows, per_row=10, empty_every=17, empty_tail=5):
    """A square CSR matrix with ``per_row`` nonzeros on average (Poisson counts, so some rows
    are empty), every ``empty_every``-th row and the last ``empty_tail`` rows empty too."""
    r = _rng()
    counts = r.poisson(per_row, nrows)
    counts[::empty_every] = 0
    counts[nrows - empty_tail:] = 0
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    nnz = int(indptr[-1])
    cols = r.integers(0, nrows, nnz, dtype=np.int64)
    vals = r.standard_normal(nnz)
    return indptr, cols, vals, r.standard_normal(nrows)


def _hist_values(n):
    x = _rng().standard_normal(n) * 1.3
    x[:: 1009] = HIST_LO                      # on the first edge
    x[1:: 1013] = HIST_HI                     # on the last edge (counted in the last bin)
    x[2:: 1019] = 0.5                         # on an inner edge
    x[3:: 1021] = np.nan                      # not counted
    return x


def make_hist_edges(n):
    # non-uniform edges: denser near 0
    edges = np.sinh(np.linspace(-2.0, 2.0, 101)) * (HIST_HI / np.sinh(2.0))
    x = _hist_values(n)
    x[4:: 1031] = edges[50]                   # 0.0: an inner edge
    x[5:: 1033] = edges[7]
    return x, edges


def make_hist_loop(n):
    return _hist_values(n), HIST_LO, HIST_HI, HIST_BINS


def make_mandel(shape):
    h, w = shape
    re = np.linspace(-2.2, 0.8, w)
    im = np.linspace(-1.2, 1.2, h)
    return re[None, :] + 1j * im[:, None], MANDEL_ITERS


def make_complex_chain(n):
    r = _rng()
    return r.uniform(-np.pi, np.pi, n), r.standard_normal(n) + 1j * r.standard_normal(n)


# ----------------------------------------------------------------------------- error scales
def make_cells(shape):
    return ((_rng().random(shape) < 0.3).astype(np.uint8),)


def make_image(shape):
    """A uint8 image with structure (smooth gradients, a disc, noise), not uniform noise."""
    h, w = shape
    y, x = np.mgrid[0:h, 0:w]
    img = 96 + 64 * np.sin(x / 37.0) * np.cos(y / 53.0) + 60 * ((x - w / 2) ** 2 + (y - h / 2) ** 2
                                                                < (min(h, w) / 3) ** 2)
    img = img + _rng().normal(0, 8, shape)
    return (np.clip(img, 0, 255).astype(np.uint8),)


def _spmv_magnitude(inputs, ref):
    indptr, cols, vals, x = inputs
    mags = np.add.reduceat(np.concatenate((np.abs(vals * x[cols]), [0.0])), indptr[:-1])
    return (np.where(indptr[1:] > indptr[:-1], mags, 0.0),)


def flood_stack(open_mask):
    """The open pixels reachable from (0, 0), 4-connected: a flood fill with a list as stack,
    each pixel marked when pushed."""
    h, w = open_mask.shape
    filled = np.zeros((h, w), np.uint8)
    filled[0, 0] = 1
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        if i > 0 and open_mask[i - 1, j] and not filled[i - 1, j]:
            filled[i - 1, j] = 1
            stack.append((i - 1, j))
        if i < h - 1 and open_mask[i + 1, j] and not filled[i + 1, j]:
            filled[i + 1, j] = 1
            stack.append((i + 1, j))
        if j > 0 and open_mask[i, j - 1] and not filled[i, j - 1]:
            filled[i, j - 1] = 1
            stack.append((i, j - 1))
        if j < w - 1 and open_mask[i, j + 1] and not filled[i, j + 1]:
            filled[i, j + 1] = 1
            stack.append((i, j + 1))
    return filled


def bfs_levels(nbr):
    """Breadth-first distances from node 0 over a neighbour table, a list as queue read
    by a head index."""
    dist = np.full(nbr.shape[0], -1)
    dist[0] = 0
    queue = [0]
    head = 0
    while head < len(queue):
        u = queue[head]
        head += 1
        for k in range(nbr.shape[1]):
            v = nbr[u, k]
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def make_flood(shape):
    mask = (_rng().random(shape) < 0.7).astype(np.uint8)    # (above percolation: one big
    mask[0, 0] = 1                                          # region)
    return (mask,)


def make_graph(n):
    return (_rng().integers(0, n, (n, 4)),)


def _w(*args, **kw):
    w = Workload(*args, **kw)
    return w.name, w


PROGRAM_WORKLOADS: dict[str, Workload] = dict([
    _w("spmv_rows", spmv_rows, make_csr, 10**5, 10**3,
       "CSR y = A @ x, for each row: vals[lo:hi] @ x[cols[lo:hi]] (~10 nonzeros/row, empty rows)",
       magnitude=_spmv_magnitude, tags=("program", "python_loop")),
    _w("spmv_reduceat", spmv_reduceat, make_csr, 10**5, 10**3,
       "CSR y = A @ x: np.add.reduceat(vals * x[cols], indptr[:-1]), empty rows masked",
       magnitude=_spmv_magnitude, tags=("program",)),
    _w("hist_edges", hist_edges, make_hist_edges, 10**7, 10**4,
       "np.histogram(x, bins=edges), 100 non-uniform bins (values on edges, NaN)",
       tags=("program",)),
    _w("hist_digitize", hist_digitize, make_hist_edges, 10**7, 10**4,
       "np.bincount(np.digitize(x, edges)), the same 100 bins", tags=("program",)),
    _w("hist_loop", hist_loop, make_hist_loop, 10**7, 10**4,
       f"for v in x: counts[int((v - lo) * scale)] += 1 ({HIST_BINS} uniform bins)",
       tags=("program", "python_loop")),
    _w("mandelbrot_masked", mandelbrot_masked, make_mandel, (400, 600), (40, 60),
       f"Mandelbrot escape counts, {MANDEL_ITERS} x (z = z*z + c; mask |z| > 2) on the grid",
       tags=("program", "python_loop")),
    _w("mandelbrot_points", mandelbrot_points, make_mandel, (400, 600), (40, 60),
       "Mandelbrot escape counts, a while loop per point (complex128 scalars)",
       tags=("program", "python_loop")),
    _w("complex_chain", complex_chain, make_complex_chain, 10**7, 10**4,
       "np.abs(np.exp(1j * a) * z + np.conj(z) ** 2), complex128", tags=("program",)),
    _w("life_u8", life_u8, make_cells, (2000, 2000), (100, 100),
       "Game of Life step, uint8 cells, neighbour sums of 8 slices", tags=("program", "image")),
    _w("sobel_u8", sobel_u8, make_image, (2000, 2000), (100, 100),
       "Sobel magnitude of a uint8 image, clipped back to uint8", tags=("program", "image")),
    _w("equalize_u8", equalize_u8, make_image, (2000, 2000), (100, 100),
       "histogram equalization of a uint8 image: bincount, cumsum, lookup table",
       tags=("program", "image")),
    _w("flood_stack", flood_stack, make_flood, (600, 600), (40, 40),
       "flood fill, stack = [(0, 0)]; while stack: i, j = stack.pop(); ...; "
       "stack.append((i + 1, j)) (70% open pixels)", tags=("program", "python_loop")),
    _w("bfs_levels", bfs_levels, make_graph, 300_000, 1000,
       "BFS distances over a 4-neighbour table, queue = [0]; u = queue[head]; "
       "queue.append(v)", tags=("program", "python_loop")),
])

QUICK = ("spmv_reduceat",)


# ----------------------------------------------------------------------------- Numba
def numba_impls() -> dict:
    """numba.njit of the same source where Numba takes it."""
    from numba import njit
    out = {}
    for name in ("spmv_rows", "hist_loop", "mandelbrot_points", "complex_chain",
                 "hist_edges", "sobel_u8", "flood_stack", "bfs_levels"):
        out[name] = njit(PROGRAM_WORKLOADS[name].fn)
    return out


# ----------------------------------------------------------------------------- JAX
def jax_impls() -> dict:
    """What jax.jit wraps: the same code on jax.numpy where it has no Python loop over values
    (reduceat and digitize-with-bincount need a static length: segment_sum / minlength), the
    lax rewrite where it loops."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax import lax

    def spmv(indptr, cols, vals, x):
        n = indptr.shape[0] - 1
        row = jnp.searchsorted(indptr, jnp.arange(vals.shape[0]), side="right") - 1
        return jax.ops.segment_sum(vals * x[cols], row, num_segments=n)

    def hist_e(x, edges):
        return jnp.histogram(x, bins=edges)[0].astype(jnp.int64)    # (counts as floats)

    def hist_d(x, edges):
        nb = edges.shape[0] - 1
        idx = jnp.digitize(x, edges)
        idx = jnp.where(x == edges[-1], nb, idx)
        return jnp.bincount(idx, length=nb + 2)[1:nb + 1]

    def hist_l(x, lo, hi, nbins):
        scale = nbins / (hi - lo)
        inside = (x >= lo) & (x <= hi)
        idx = jnp.where(x == hi, nbins - 1, ((x - lo) * scale).astype(jnp.int64))
        idx = jnp.where(inside, idx, 0)
        # jax.jit traces nbins: the bin count of the inputs (make_hist_loop) as the length
        return jnp.zeros(HIST_BINS, jnp.int64).at[idx].add(inside.astype(jnp.int64))

    def mandel(c, maxiter):
        def body(it, carry):
            z, escape = carry
            z = z * z + c
            out = jnp.abs(z) > 2.0
            escape = jnp.where(out & (escape == maxiter), it + 1, escape)
            return jnp.where(out, 2.0 + 0j, z), escape
        _, escape = lax.fori_loop(0, maxiter, body,
                                  (jnp.zeros_like(c), jnp.full(c.shape, maxiter, jnp.int64)))
        return escape

    def chain(a, z):
        return jnp.abs(jnp.exp(1j * a) * z + jnp.conj(z) ** 2)

    def life(Z):
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:]
             + Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
        inner = Z[1:-1, 1:-1]
        alive = ((N == 3) & (inner == 0)) | (((N == 2) | (N == 3)) & (inner == 1))
        return jnp.zeros_like(Z).at[1:-1, 1:-1].set(alive.astype(Z.dtype))

    def sobel(img):
        f = img.astype(jnp.float32)
        gx = (f[:-2, 2:] + 2 * f[1:-1, 2:] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[1:-1, :-2] + f[2:, :-2])
        gy = (f[2:, :-2] + 2 * f[2:, 1:-1] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[:-2, 1:-1] + f[:-2, 2:])
        return jnp.clip(jnp.sqrt(gx * gx + gy * gy), 0, 255).astype(jnp.uint8)

    def equalize(img):
        cdf = jnp.cumsum(jnp.bincount(img.ravel(), length=256))
        cdf_min = jnp.min(jnp.where(cdf > 0, cdf, cdf[-1]))     # (no dynamic shapes)
        lut = jnp.round((cdf - cdf_min) * 255.0 / (cdf[-1] - cdf_min)).astype(jnp.uint8)
        return lut[img]

    return {"life_u8": life, "sobel_u8": sobel, "equalize_u8": equalize,
            "spmv_rows": spmv, "spmv_reduceat": spmv, "hist_edges": hist_e,
            "hist_digitize": hist_d, "hist_loop": hist_l, "mandelbrot_masked": mandel,
            "mandelbrot_points": mandel, "complex_chain": chain,
            "flood_stack": "a stack that grows with the values: no fixed-shape lax rewrite",
            "bfs_levels": "a queue that grows with the values: no fixed-shape lax rewrite"}


NOTE = ("NumPy programs from sparse algebra, statistics and complex arithmetic, written as "
        "public NumPy code writes them. Where the function loops in Python (spmv_rows over "
        "rows, hist_loop over values, the Mandelbrot grids), the NumPy column times the "
        "vectorized twin (np.add.reduceat, np.histogram, the masked grid iteration) and "
        "*as written, CPython* the function itself; elsewhere NumPy runs the function as "
        "written. cppcodegen compiles the function as written. numba: njit of the same source "
        "(spmv_rows, hist_loop, mandelbrot_points, complex_chain, hist_edges, and the flood "
        "fill and BFS, whose lists Numba types as reflected lists). jax.jit: the "
        "same code on jax.numpy, with jax.ops.segment_sum for the CSR products (no reduceat), "
        "a scatter-add for hist_loop and lax.fori_loop for Mandelbrot; float64 enabled. "
        "The CSR matrix has empty rows (every 17th and the last 5); histogram inputs have "
        "values on edges, out of range and NaN. The uint8 image workloads (life_u8, "
        "sobel_u8, equalize_u8) run on 8-bit data as image code keeps it; numba: njit of "
        "sobel_u8's source; jax: the same code (a scatter for life's masked store, a "
        "where-min for equalize's masked min).")

SUITE = Suite(tag="program", title="Program workloads", note=NOTE, workloads=PROGRAM_WORKLOADS,
              quick=QUICK, numpy_vectorized=NUMPY_VECTORIZED, numba=numba_impls, jax=jax_impls)
