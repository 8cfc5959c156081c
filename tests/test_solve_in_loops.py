"""np.linalg.solve, np.linalg.inv and np.linalg.det inside compiled loops (Newton's method for a system,
implicit time steps, one small system per row): compiled as elimination with partial
pivoting (frontend/solve.py), equal to LAPACK's results within the solve's rounding, with
NumPy's LinAlgError for a singular or non-square matrix (det: 0, as NumPy's); the loop around them compiles (it
ran in Python while tracing, or was refused under a branch on values)."""
import numpy as np
import pytest

import cppcodegen

rng = np.random.default_rng(11)


def newton(x0, tol=1e-12, maxit=50):
    x = x0.copy()
    it = 0
    while it < maxit:
        F = np.array([x[0] ** 2 + x[1] ** 2 - 4.0, np.exp(x[0]) + x[1] - 1.0])
        J = np.array([[2 * x[0], 2 * x[1]], [np.exp(x[0]), 1.0]])
        dx = np.linalg.solve(J, -F)
        x = x + dx
        it += 1
        if np.linalg.norm(dx) < tol:
            break
    return x, it


def implicit_heat(u, r, steps):
    n = u.shape[0]
    A = np.eye(n) * (1 + 2 * r) - r * np.eye(n, k=1) - r * np.eye(n, k=-1)
    for _ in range(steps):
        u = np.linalg.solve(A, u)
    return u


def solve_each(As, bs):
    out = np.empty_like(bs)
    for i in range(As.shape[0]):
        out[i] = np.linalg.solve(As[i], bs[i])
    return out


def inv_each(As):
    out = np.empty_like(As)
    for i in range(As.shape[0]):
        out[i] = np.linalg.inv(As[i])
    return out


def many_right_hand_sides(As, B):
    s = 0.0
    for i in range(As.shape[0]):
        s += np.linalg.solve(As[i], B).sum()
    return s


def det_each(As):
    out = np.empty(As.shape[0])
    for i in range(As.shape[0]):
        out[i] = np.linalg.det(As[i])
    return out


def det_sum(As):
    s = 0.0
    for i in range(As.shape[0]):
        if np.linalg.det(As[i]) > 0:
            s += np.linalg.det(As[i])
    return s


def _singular_and_permuted(n):
    As = rng.standard_normal((6, n, n))
    As[1] = np.array([[1.0, 2.0, 3.0, 4.0][:n]] * n)            # equal rows: a zero pivot
    As[2] = np.eye(n)[rng.permutation(n)]                       # det +-1 from the exchanges
    As[3, :, 0] = 0.0                                           # a zero column: 0 at once
    As[4] = np.triu(As[4])
    return As


def well_conditioned(batch, n, dtype=np.float64):
    return (rng.standard_normal((batch, n, n)) + n * np.eye(n)).astype(dtype)


def same(got, want, rtol):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("fn, args, rtol", [
    (newton, (np.array([1.0, -1.5]),), 1e-12),
    (implicit_heat, (np.sin(np.linspace(0, 3, 20)), 0.4, 50), 1e-10),
    (solve_each, (well_conditioned(30, 5), rng.standard_normal((30, 5))), 1e-10),
    (solve_each, (well_conditioned(10, 4, np.float32),
                  rng.standard_normal((10, 4)).astype(np.float32)), 1e-4),
    (solve_each, (rng.integers(-5, 5, (10, 3, 3)) + 10 * np.eye(3, dtype=np.int64),
                  rng.standard_normal((10, 3))), 1e-10),
    (many_right_hand_sides, (well_conditioned(4, 3, np.float32), np.ones((3, 2), bool)),
     1e-10),        # (NumPy's common type: float64 unless every operand is float32)
    (solve_each, (well_conditioned(0, 4), np.zeros((0, 4))), 0),
    (solve_each, (well_conditioned(6, 1), rng.standard_normal((6, 1))), 1e-12),
    (inv_each, (well_conditioned(20, 6),), 1e-10),
    (many_right_hand_sides, (well_conditioned(8, 5), rng.standard_normal((5, 3))), 1e-10),
    (det_each, (rng.standard_normal((12, 5, 5)),), 1e-9),
    (det_each, (_singular_and_permuted(4),), 1e-10),
    (det_each, (rng.integers(-4, 5, (9, 3, 3)),), 1e-10),
    (det_each, (well_conditioned(0, 3),), 0),
    (det_sum, (well_conditioned(7, 3, np.float32) - 3 * np.eye(3, dtype=np.float32),), 1e-5),
], ids=lambda v: getattr(v, "__name__", None))
def test_like_numpy(fn, args, rtol):
    compiled = cppcodegen.compile(fn, options={"fallback": False})
    same(compiled(*args), fn(*args), rtol)


def test_one_build_serves_other_sizes():
    compiled = cppcodegen.compile(solve_each, options={"fallback": False})
    for n in (3, 5, 8):
        As, bs = well_conditioned(7, n), rng.standard_normal((7, n))
        same(compiled(As, bs), solve_each(As, bs), 1e-10)


@pytest.mark.parametrize("fn", [solve_each, inv_each])
def test_singular_matrix(fn):
    As = well_conditioned(5, 4)
    As[3] = np.array([[1.0, 2.0, 3.0, 4.0]] * 4)
    args = (As, rng.standard_normal((5, 4))) if fn is solve_each else (As,)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        fn(*args)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        cppcodegen.compile(fn, options={"fallback": False})(*args)


def test_non_square_matrix():
    As, bs = well_conditioned(3, 4)[:, :, :3], rng.standard_normal((3, 4))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        cppcodegen.compile(solve_each, options={"fallback": False})(As, bs)


def test_det_in_a_loop_is_compiled_code_not_a_numpy_step():
    import warnings
    As = rng.standard_normal((5, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)         # "runs as a NumPy call between..."
        got = cppcodegen.compile(det_each, options={"fallback": False})(As)
    same(got, det_each(As), 1e-10)


def test_a_pivot_row_swap_stores_in_place():
    """The row exchange of the elimination (``M[[k, p]] = M[[p, k]]``, ``p`` known only when
    it runs) stores its two rows into the matrix's buffer after reading them into a buffer of
    their own: it copied the whole matrix at every column (solve at n = 300 in a loop
    2.7x slower than now)."""
    import re
    u = rng.standard_normal(40)
    f = cppcodegen.compile(implicit_heat, fallback=False)
    same(f(u, 0.3, 4), implicit_heat(u, 0.3, 4), 1e-10)
    ir = str(cppcodegen.explain(f, u, 0.3, 4).program)
    copies = [ln for ln in ir.splitlines()      # (inside the elimination's loop over columns)
              if re.search(r"^ {8,}pointwise buf\d+ over \[40, 40\]:  buf\d+\[i0, i1\]$", ln)]
    scatters = [ln for ln in ir.splitlines() if "scatter" in ln]
    assert scatters and not copies, ir
