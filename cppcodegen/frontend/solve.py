"""``np.linalg.solve``, ``np.linalg.inv`` and ``np.linalg.det`` inside compiled loops and
branches.

Outside every loop they are NumPy (LAPACK) calls between kernels. Inside a loop the
compiled loop cannot stop for a NumPy call, so the loop ran in Python while tracing or was
refused (Newton's method for a system: ``dx = np.linalg.solve(J, -F)`` in a ``while err >
tol`` loop). There they are the plain NumPy code below, Gaussian elimination with partial
pivoting as LAPACK's getrf/getrs do it (the row of the largest magnitude in the column, the
first of equal ones; an exactly zero pivot raises LinAlgError('Singular matrix')), traced
through the capture (``control.Ops.call``) like a helper of the user's: its loops become
compiled loops of the program. The result differs from LAPACK's only by rounding (LAPACK
blocks the elimination), within the solve's own error bound.

``det`` is the same elimination, the product of the pivots with the sign of the row
exchanges (LAPACK's getrf, which NumPy's det calls): a zero pivot gives 0, as NumPy's, and
the elimination goes on past it (no LinAlgError).

Taken: float32/float64 (anything else with them, integers, bools: float64, as NumPy's), one
square matrix and a vector or a matrix of right-hand sides; anything else stays NumPy's.
"""
from __future__ import annotations

import numpy as np

from .proxy import asproxy, Proxy


def native_operands(A, b=None):
    """The dtype to solve in, or None where NumPy's solve should be called instead."""
    arrays = [A] if b is None else [A, b]
    if not any(isinstance(x, Proxy) for x in arrays) or \
            not all(isinstance(x, (Proxy, np.ndarray)) for x in arrays):
        return None
    if A.ndim != 2 or b is not None and b.ndim not in (1, 2):
        return None
    dtypes = {np.dtype(x.dtype) for x in arrays}
    if not all(d.kind in "biuf" for d in dtypes) or np.dtype(np.float16) in dtypes:
        return None                     # (complex; float16, which NumPy's linalg refuses)
    single = dtypes == {np.dtype(np.float32)}   # NumPy's common type: float32 only when
    return np.dtype(np.float32 if single else np.float64)    # every operand is float32


def prepare(f, args, kwargs):
    """(M, x): copies of the matrix and the right-hand sides in the solve's dtype, for
    ``solve(M, x)`` to work on, with NumPy's shape errors raised; None where NumPy's own
    function should run (another form, or no traced operand)."""
    if kwargs or len(args) != (2 if f is np.linalg.solve else 1):
        return None
    dt = native_operands(*args)
    if dt is None:
        return None
    A = args[0]
    if A.shape[0] != A.shape[1]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if f is np.linalg.inv:
        return A.astype(dt), asproxy(np.eye(A.shape[0], dtype=dt))
    if f is np.linalg.det:
        return (A.astype(dt),)
    b = args[1]
    if b.shape[0] != A.shape[0]:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (m,m),(m)->(m) (size {b.shape[0]} is "
                         f"different from {A.shape[0]})")
    return A.astype(dt), b.astype(dt)


def solve(M, x):
    """M x' = x by elimination with partial pivoting, in place on the copies M and x."""
    n = M.shape[0]
    for k in range(n):
        p = k + np.argmax(np.abs(M[k:, k]))
        if M[p, k] == 0:
            raise np.linalg.LinAlgError("Singular matrix")
        M[[k, p]] = M[[p, k]]           # (the two rows read, then stored in place)
        x[[k, p]] = x[[p, k]]
        f = M[k + 1:, k] / M[k, k]
        M[k + 1:, k:] -= np.multiply.outer(f, M[k, k:])
        x[k + 1:] -= np.multiply.outer(f, x[k])
    for k in range(n - 1, -1, -1):
        x[k] = (x[k] - M[k, k + 1:] @ x[k + 1:]) / M[k, k]
    return x


def det(M):
    """The determinant of M by elimination with partial pivoting, in place on the copy M."""
    n = M.shape[0]
    d = np.ones((), dtype=M.dtype)
    for k in range(n):
        p = k + np.argmax(np.abs(M[k:, k]))
        if p != k:
            M[[k, p]] = M[[p, k]]           # (the two rows read, then stored in place)
            d = -d
        d = d * M[k, k]
        if M[k, k] != 0:
            f = M[k + 1:, k] / M[k, k]
            M[k + 1:, k:] -= np.multiply.outer(f, M[k, k:])
    return d


ROUTINES = {np.linalg.solve: solve, np.linalg.inv: solve, np.linalg.det: det}
"""NumPy function -> the code above that computes it on ``prepare``'s operands."""
