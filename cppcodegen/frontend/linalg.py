"""Matrix products and triangles: matmul, dot, outer, trace, tril, triu.

In: traced arrays. Out: ``np.matmul`` as an ``extern`` node (the GEMM generator or NumPy's
BLAS computes it; elementwise work around it is fused); ``np.outer`` as the broadcast
multiply NumPy itself computes (fused); ``tril``/``triu`` as a ``where`` over
an index comparison; ``trace`` as a sum of the diagonal view.
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from ..ir.graph import MADE, make_node
from .elementwise import where
from .externs import extern_call
from .indexing import diagonal
from .proxy import as_node, asproxy, cast, descriptor, Proxy, store_result, unsupported, wrap
from .reductions import check_plain, sum_
from .sizes import broadcast_sizes, same_size
from .views import expand_dims, ravel, reshape


def matmul(a, b, out=None, **kw):
    """np.matmul: an extern op (the BLAS NumPy links); elementwise work around it is fused."""
    if kw:
        unsupported("np.matmul with keywords other than out=")
    if out is not None:
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not isinstance(out, Proxy):
            unsupported("np.matmul(..., out=) into other than a traced array")
        store_result(out, matmul(a, b), "matmul")
        return out
    a, b = asproxy(_listed(a)), asproxy(_listed(b))
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: Input operand does not have enough dimensions "
                         f"(at {user_location()})")
    try:
        dt = np.matmul.resolve_dtypes((descriptor(a), descriptor(b), None))[-1]
    except TypeError as e:
        raise TypeError(f"np.matmul: {e} (at {user_location()})") from None
    if dt.kind not in "fiuc":     # (complex: NumPy's BLAS call; our GEMM is float32/64 only)
        unsupported(f"np.matmul on {dt}")
    a2 = reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    if not _core_equal(a2.node.shape[-1], b2.node.shape[-2], a.ndim == 1 and b.ndim == 1):
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2.shape[-2]} is different from {a2.shape[-1]}) "
                         f"(at {user_location()})")
    try:
        batch = tuple(broadcast_sizes(a2.node.shape[:-2], b2.node.shape[:-2]))
    except ValueError:
        raise ValueError(f"np.matmul: operands could not be broadcast together with shapes "
                         f"{a2.shape} {b2.shape} (at {user_location()})") from None
    shape = batch + (a2.node.shape[-2], b2.node.shape[-1])
    small = _fused(shape, a2.node.shape[-1], dt)
    if (a.ndim == 1 or b.ndim == 1) and (dt.kind in "fiu" or small):
        return _with_vector(a, b, dt)
    if small:                       # products and their sum fused: a loop around compiles
        a3, b3 = cast(a2, dt), cast(b2, dt)
        if isinstance(b3.shape[-1], int) and b3.shape[-1] == 1:     # a stack of A @ x:
            x = np.swapaxes(b3, -1, -2)                             # each row's dot product
            return expand_dims(sum_(np.multiply(a3, x), axis=-1, dtype=dt), -1)
        return sum_(np.multiply(expand_dims(a3, -1), expand_dims(b3, -3)), axis=-2, dtype=dt)
    if a.ndim > 2 and b.ndim == 2 and all(isinstance(d, int) for d in batch) \
            and int(np.prod(batch)) >= FLATTEN_BATCH and a.node.op in ("slice", "transpose"):
        # a stack of matrices times one matrix is one product of all their rows: one GEMM
        # instead of a small one per matrix (a convolution's x[:, i:i+H, j:j+W, :] @ w[i, j]:
        # 496 products of 62x32 @ 32x64 float32, 1.33 ms in NumPy's batched loop, 0.58 ms as
        # one 30752x32 @ 32x64 on the EPYC); a few matrices keep their batched call (the
        # flattened result is a copy when it is the function's value). A stack in one run of
        # memory (an argument, a computed value) stays a batch: the kernel multiplies all its
        # rows in one call, reading and writing them in place (backend/gemmgen.py)
        below, perm = _moved_rows(a)
        if below is not None:       # x.transpose(1, 0, 2) @ w: (x @ w).transpose(1, 0, 2),
            return np.transpose(matmul(below, b), perm)     # whose rows need no gather
        rows = matmul(reshape(a, (-1, a.shape[-1])), b)
        return reshape(rows, tuple(a.shape[:-1]) + (b.shape[-1],))
    from ..runtime.extern import ExternCall, Slot
    call = ExternCall(np.matmul, (Slot(0), Slot(1)), {}, writes_out=True)
    node = make_node("extern", (as_node(a2, dt), as_node(b2, dt)), shape, dt, user_location(),
                     call=call)
    r = wrap(node)
    if a.ndim == 1 or b.ndim == 1:
        drop = ([len(shape) - 2] if a.ndim == 1 else []) + ([len(shape) - 1] if b.ndim == 1 else [])
        r = reshape(r, tuple(s for i, s in enumerate(shape) if i not in drop))
        r.scalar = not r.shape                  # vector @ vector: a NumPy scalar
    return r


FLATTEN_BATCH = 8           # a stack of at least this many matrices @ one matrix: one GEMM
FUSED_COMPLEX = 1 << 15     # multiply-adds of a complex product fused rather than NumPy's call


TINY_MATRIX = 64     # multiply-adds per product of a batch fused rather than NumPy's call


def _moved_rows(a):
    """(x, perm) where ``a`` is ``x.transpose(perm)`` with the last axis kept last and the
    others moved (a stack whose rows are not one run of memory), else (None, None)."""
    n = a.node
    if n.op != "transpose" or n.inputs[0].dtype != n.dtype:
        return None, None
    perm = tuple(n.attr("perm"))
    if perm[-1] != len(perm) - 1 or perm == tuple(range(len(perm))):
        return None, None
    return wrap(n.inputs[0]), perm


def _fused(shape, k, dt) -> bool:
    """A product computed as fused multiplies and a sum rather than a GEMM or NumPy's call:
    a complex one where ``_fused_complex`` says; a batch of tiny ones (a rotation matrix per
    point, ``R @ pts[:, :, None]`` with R of shape (n, 3, 3): vectorized across the batch,
    not NumPy's loop of one 3x3 product per matrix); a 1-wide one inside a compiled loop
    (ccg::gemm takes none, and a NumPy call there would unroll the loop)."""
    if dt.kind == "c":
        return _fused_complex(shape, k)
    if dt.kind not in "fiu":
        return False
    sizes = tuple(shape[-2:]) + (k,)
    tiny = len(shape) > 2 and all(isinstance(d, int) for d in sizes) and \
        int(np.prod(sizes)) <= TINY_MATRIX
    return tiny or bool(MADE) and any(isinstance(d, int) and d == 1 for d in shape[-2:])


def _fused_complex(shape, k) -> bool:
    """A complex product computed as fused products and a sum (our kernels have no complex
    GEMM): inside a compiled loop or branch (a NumPy call there would unroll the loop: the
    2x2 matrices of a Green's-function loop nest), or when it is small (static sizes)."""
    sizes = tuple(shape) + (k,)
    return bool(MADE) or (all(isinstance(d, int) for d in sizes) and
                          int(np.prod(sizes, dtype=np.int64)) <= FUSED_COMPLEX)


def _with_vector(a, b, dt) -> Proxy:
    """A product with a vector operand (``A @ v``, ``v @ A``, ``u @ v``): the products and
    their sum fused, a reduction along each row (or down the columns). Memory bound like
    BLAS' gemv, and native: the work around it fuses and a loop around it compiles as a
    loop (power iteration). Sums in the kernels' order, not BLAS'."""
    a, b = cast(a, dt), cast(b, dt)
    if a.ndim == 1 and b.ndim == 1:
        r = sum_(np.multiply(a, b), dtype=dt)
        r.scalar = True                         # vector @ vector: a NumPy scalar
        return r
    # a transposed matrix is read in its own row order: A.T @ v is v @ A (down the columns
    # of A, each row read once) and v @ A.T is A @ v, not a column walk with a row's stride
    # (X.T @ err of a 20000x50 X: 50 strided passes over X)
    if b.ndim == 1 and _transposed(a) is not None:
        a, b = b, _transposed(a)
    elif a.ndim == 1 and _transposed(b) is not None:
        a, b = _transposed(b), a
    if b.ndim == 1:
        return sum_(np.multiply(a, b), axis=-1, dtype=dt)
    return sum_(np.multiply(reshape(a, (a.shape[0], 1)), b), axis=-2, dtype=dt)


def _transposed(x):
    """The matrix ``x`` is the transpose of (a proxy of it), or None."""
    n = x.node
    while n.op == "cast" and n.inputs[0].op == "transpose":
        n = n.inputs[0]                 # (a cast of the transpose: the cast of its source)
    if x.ndim != 2 or n.op != "transpose" or tuple(n.attr("perm")) != (1, 0):
        return None
    src = n.inputs[0]
    if src.op == "transpose" and tuple(src.attr("perm")) == (1, 0):
        return None                     # A.T of A = B.T: B itself, read in its row order
    return cast(wrap(src), x.dtype)


def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm as NumPy's own code computes it: vector norms of every order (``inf``:
    ``abs(x).max()``, ``1``: the sum of ``abs(x)``, ``0``: the count of nonzeros, ``p``:
    ``sum(abs(x) ** p) ** (1 / p)``, ``None``/``2``: ``sqrt(sum((x.conj() * x).real))``) over
    all elements of a vector or one axis, and the matrix norms of a 2-D array that need no
    SVD (``fro``, ``1``, ``-1``, ``inf``, ``-inf``). NumPy sums the 2-norm as ``x.dot(x)``:
    the sum order differs. The spectral and nuclear norms and several axes run NumPy's."""
    x = asproxy(x)
    keep = bool(keepdims)
    numpy_norm = lambda: extern_call(np.linalg.norm, (x,), {"ord": ord, "axis": axis,
                                                              "keepdims": keepdims})
    if x.dtype.kind not in "biufc" or isinstance(ord, Proxy):
        return numpy_norm()
    if x.dtype.kind not in "fc":        # as NumPy: integers and bools as float64
        x = cast(x, np.float64)
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        axis = axis[0]
    if axis is None and x.ndim == 1 or isinstance(axis, (int, np.integer)):
        return _vector_norm(x, ord, None if axis is None else int(axis), keep, numpy_norm)
    if axis is None and x.ndim == 2 and ord in (None, "fro", "f", 1, -1, np.inf, -np.inf):
        if ord in (None, "fro", "f"):
            return np.sqrt(sum_(_squares(x), axis=None, keepdims=keep))
        lines = sum_(np.abs(x), axis=0 if ord in (1, -1) else 1, keepdims=keep)
        pick = np.max if ord in (1, np.inf) else np.min
        return pick(lines, axis=None, keepdims=keep)
    return numpy_norm()


def _squares(x):
    return (np.conj(x) * x).real if x.dtype.kind == "c" else np.multiply(x, x)


def _vector_norm(x, ord, axis, keep, numpy_norm):
    if ord is None or ord == 2:
        return np.sqrt(sum_(_squares(x), axis=axis, keepdims=keep))
    if isinstance(ord, str) or not np.isscalar(ord):
        return numpy_norm()             # NumPy's ValueError for a matrix order
    if ord == np.inf:
        return np.max(np.abs(x), axis=axis, keepdims=keep)
    if ord == -np.inf:
        return np.min(np.abs(x), axis=axis, keepdims=keep)
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    if ord == 0:
        return sum_(cast(x != 0, real), axis=axis, keepdims=keep)
    if ord == 1:
        return sum_(np.abs(x), axis=axis, keepdims=keep)
    total = sum_(np.abs(x) ** ord, axis=axis, keepdims=keep)
    return total ** np.reciprocal(np.asarray(ord, dtype=total.dtype))


def as_array(x) -> Proxy:
    """An operand as ``np.asarray`` has it: a Python number is an array of its own dtype
    (np.dot and np.inner convert their operands, no weak-scalar rule: ``np.dot(3.0, x)`` of
    float32 ``x`` is float64, ``np.dot(300, x)`` of int8 ``x`` is int64)."""
    p = asproxy(_listed(x))
    return wrap(p.node, scalar=p.scalar) if p.weak else p


def _listed(x):
    """A list or tuple operand (``np.dot(img, [0.299, 0.587, 0.114])``) as NumPy's array."""
    if isinstance(x, (list, tuple)):
        from .creation import array
        return array(x, original=np.asarray)
    return x


def _core_equal(n, m, vectors: bool) -> bool:
    """Are the lengths a product contracts equal? Two vectors' lengths from array values
    (``np.dot(x[:N - lag], x[lag:])`` in a loop from ``int(fs)``): as broadcasting takes
    them (equal, checked when the program runs: the product is their elementwise one)."""
    if vectors and not (type(n) is int and type(m) is int):
        from ..ir.broadcasting import equal_or_assumed     # (sympy: lazily)
        return equal_or_assumed(n, m)
    return same_size(n, m)


def dot(a, b, out=None):
    a, b = as_array(a), as_array(b)
    if a.ndim and 1 <= b.ndim <= 2:     # (a sum over a's last axis and b's first: @'s)
        return matmul(a, b, out=out)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    unsupported("np.dot on arrays with more than 2 dimensions")



def outer(a, b, out=None):
    """np.outer: ``a.ravel()[:, None] * b.ravel()[None, :]``, which is how NumPy computes it
    (one np.multiply of the two): the same values, as a pointwise op that fuses with the
    work around it (``A + np.outer(u, v)`` is one kernel, no n x n temporary)."""
    check_plain("np.outer", out)
    a, b = ravel(asproxy(a)), ravel(asproxy(b))
    return np.multiply(reshape(a, (a.shape[0], 1)), reshape(b, (1, b.shape[0])))


def trace_(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    check_plain("np.trace", out)
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _tri_mask(a, k, lower: bool):
    """j - i <= k (lower) or j - i >= k over the last two axes."""
    n, m = a.shape[-2], a.shape[-1]
    i64 = np.dtype(np.int64)
    rows = wrap(make_node("iota", (), (n,), i64, user_location(), start=0, step=1))
    cols = wrap(make_node("iota", (), (m,), i64, user_location(), start=0, step=1))
    diff = np.subtract(cols, reshape(rows, (n, 1)))
    return np.less_equal(diff, int(k)) if lower else np.greater_equal(diff, int(k))


def tril(m, k=0):
    m = asproxy(m)
    if m.ndim < 2:
        return extern_call(np.tril, (m,), {"k": k})
    return where(_tri_mask(m, k, True), m, m.dtype.type(0))


def triu(m, k=0):
    m = asproxy(m)
    if m.ndim < 2:
        return extern_call(np.triu, (m,), {"k": k})
    return where(_tri_mask(m, k, False), m, m.dtype.type(0))
