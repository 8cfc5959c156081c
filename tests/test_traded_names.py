"""Time loops that pass their arrays around by name compile as loops, at any step count:
``u, un = un, u`` after a step stored into ``un``, three time levels rotated, a temporary
name (``tmp = u; u = un; un = tmp``), a pure exchange ``a, b = b, a``. Each array is updated in
place as NumPy updates it, so an argument bound to one of the names ends as NumPy leaves it
(the name it is bound to after the last step, which depends on the step count's parity), and
the arrays trade buffers (pointer swaps, no copy per step). Compared with the plain Python
function: results and updated arguments."""
import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import UnsupportedError


def swap_copies(u0, steps):
    u = u0.copy()
    un = u0.copy()
    for _ in range(steps):
        un[1:-1] = 0.5 * (u[2:] + u[:-2])
        u, un = un, u
    return u


def swap_argument(u, steps, nu):
    un = np.empty_like(u)
    for _ in range(1, steps):
        un[1:-1] = u[1:-1] + nu * (u[2:] - 2 * u[1:-1] + u[:-2])
        un[0] = 0.0
        un[-1] = 0.0
        u, un = un, u
    return u


def swap_through_temporary(u0, steps):
    u = u0.copy()
    un = np.zeros_like(u0)
    for _ in range(steps):
        un[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        un[0] = un[1]
        un[-1] = un[-2]
        tmp = u
        u = un
        un = tmp
    return u, un


def swap_argument_through_temporary(u, steps):
    """The argument is ``un`` from the second step on: NumPy writes into it then."""
    un = np.zeros_like(u)
    for _ in range(steps):
        un[1:] = u[1:] + u[:-1]
        tmp = u
        u = un
        un = tmp
    return u


def alias_read_after(u0, steps):
    a = u0.copy()
    b = u0.copy()
    u, un = a, b
    for _ in range(steps):
        un[1:-1] = 0.5 * (u[2:] + u[:-2])
        u, un = un, u
    return u, a, b


def wave_rotation(u0, c2, steps):
    u_prev = u0.copy()
    u = u0.copy()
    u_next = np.zeros_like(u0)
    for _ in range(steps):
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u, u_next = u, u_next, u_prev
    return u, u_prev


def heat_2d(T, steps, alpha):
    Tn = T.copy()
    for _ in range(steps):
        Tn[1:-1, 1:-1] = T[1:-1, 1:-1] + alpha * (
            T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2] - 4 * T[1:-1, 1:-1])
        T, Tn = Tn, T
    return T


def exchange(a, b, steps):
    x = a.copy()
    y = b.copy()
    for _ in range(steps):
        x, y = y, x
        x += 1.0
    return x, y


def counting_down(u0, steps):
    u = u0.copy()
    un = u0.copy()
    for k in range(steps, 0, -2):
        un[1:-1] = 0.5 * (u[2:] + u[:-2]) + k
        u, un = un, u
    return u


def game_of_life_torus(board, steps):
    cur = board.copy()
    nxt = np.zeros_like(board)
    n, m = board.shape
    for _ in range(steps):
        for i in range(n):
            for j in range(m):
                s = 0
                for di in range(-1, 2):
                    for dj in range(-1, 2):
                        if di != 0 or dj != 0:
                            s += cur[(i + di) % n, (j + dj) % m]
                alive = cur[i, j] == 1
                nxt[i, j] = 1 if (alive and (s == 2 or s == 3)) or (not alive and s == 3) else 0
        cur, nxt = nxt, cur
    return cur


def swap_when(x, t):
    """A swap under a branch on values: the names trade only in some iterations."""
    y = np.zeros(len(x))
    z = y.copy()
    for i in range(1, x.shape[0], 3):
        if x[i] > t:
            z[1:] = y[:-1] * 0.5 + y[1:] + x[i]
            z, y = y, z
    return y, z


def swap_when_after_continue(x, t):
    y = np.zeros(len(x))
    z = y.copy()
    for i in range(1, x.shape[0], 3):
        if x.max() > 2 * t + 1:
            continue
        if x[i] > t:
            z[1:] = y[:-1] * 0.5 + y[1:] + x[i]
            z, y = y, z
    return y, z


def jacobi_elements(u, steps):
    """The step written element by element (an inner loop's result in ``v``'s memory)."""
    n, m = u.shape
    v = u.copy()
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
        u, v = v, u
    return u


rng = np.random.default_rng(3)
U = rng.random(300)


@pytest.mark.parametrize("fn", [swap_when, pytest.param(
    swap_when_after_continue, marks=pytest.mark.xfail(strict=True, raises=UnsupportedError,
    reason="a swap in an if nested in another construct (the continue's): the outer one "
           "cannot say which name holds the array; refused, not wrong"))])
def test_swap_under_a_branch(fn):
    f = cppcodegen.compile(fn, fallback=False)
    for n, t in ((40, 0.3), (40, 0.7), (7, 0.5), (3000, 0.5), (5, 2.0)):
        x = rng.random(n)
        for g, w in zip(f(x, t), fn(x, t)):
            np.testing.assert_array_equal(g, w)


def _sweep(A, Anew):
    error = 0.0
    for j in range(1, A.shape[0] - 1):
        for i in range(1, A.shape[1] - 1):
            Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
            error = max(error, abs(Anew[j, i] - A[j, i]))
    return error


def jacobi_until_converged(A, tol, itmax):
    """Numba's Jacobi example: a while loop on the error, the argument traded by name (which
    array ``A`` ends as depends on the trip count's parity: the loop counts its trips)."""
    Anew = A.copy()
    err = 1.0
    it = 0
    while err > tol and it < itmax:
        err = _sweep(A, Anew)
        A, Anew = Anew, A
        it += 1
    return A, it, err


def heat_until_still(u, tol, itmax):
    un = np.empty_like(u)
    un[0], un[-1] = u[0], u[-1]
    it, change = 0, tol + 1.0
    while change > tol and it < itmax:
        un[1:-1] = 0.5 * (u[2:] + u[:-2])
        change = np.abs(un - u).max()
        u, un = un, u
        it += 1
    return u, it


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 8, 301])
@pytest.mark.parametrize("fn,make", [
    (swap_copies, lambda s: (U, s)),
    (swap_argument, lambda s: (U.copy(), s, 0.3)),
    (swap_through_temporary, lambda s: (U, s)),
    (swap_argument_through_temporary, lambda s: (U.copy(), s)),
    (alias_read_after, lambda s: (U, s)),
    (wave_rotation, lambda s: (U, 0.25, s)),
    (heat_2d, lambda s: (rng.random((40, 50)), s, 0.2)),
    (exchange, lambda s: (U, U[::-1].copy(), s)),
    (counting_down, lambda s: (U, s)),
    (jacobi_elements, lambda s: (rng.random((9, 13)), s)),
    (jacobi_until_converged, lambda s: (rng.random((9, 13)), 1e-13, s)),
    (jacobi_until_converged, lambda s: (rng.random((9, 13)), 1e-3, s)),     # (converges)
    (heat_until_still, lambda s: (U.copy(), 1e-14, s)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_matches_python(fn, make, steps):
    args = make(steps)
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = cppcodegen.compile(fn, fallback=False)(*got_args)
    for g, w in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype and type(g) is type(w)
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)


def test_update_through_the_temporary_after_the_loop_is_refused():
    """After ``tmp = u; u = un; un = tmp`` the names ``un`` and ``tmp`` are one array in
    Python; an update through one is refused (it would have to reach the other)."""
    def update_tmp(u0, steps):
        u, un = u0.copy(), np.zeros_like(u0)
        for _ in range(steps):
            un[1:] = u[1:] + u[:-1]
            tmp = u
            u = un
            un = tmp
        tmp[0] = 99.0
        return u, un
    with pytest.raises(cppcodegen.TraceError, match="'tmp', bound to the same array as 'un'"):
        cppcodegen.compile(update_tmp, fallback=False)(U, 3)


def test_step_count_is_a_run_time_value():
    f = cppcodegen.compile(swap_copies, fallback=False)
    for steps in (5000, 5001, 17):          # far more steps than could be unrolled
        np.testing.assert_array_equal(f(U, steps), swap_copies(U, steps))


def test_life_on_a_torus_is_one_loop():
    board = (rng.random((12, 15)) < 0.35).astype(np.int64)
    f = cppcodegen.compile(game_of_life_torus, fallback=False)
    for steps in (0, 3, 40):
        np.testing.assert_array_equal(f(board, steps), game_of_life_torus(board, steps))


@pytest.mark.parametrize("fn,args", [(swap_copies, (U, 9)), (wave_rotation, (U, 0.25, 9)),
                                     (heat_2d, (rng.random((40, 50)), 9, 0.2)),
                                     (jacobi_elements, (rng.random((40, 50)), 9))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_arrays_trade_buffers(fn, args):
    """The body stores its step into one buffer and ends with pointer swaps: no pass over a
    whole array per step (a copy, or a select of the step and the frame)."""
    ir = str(cppcodegen.explain(fn, *args)).split("== loop IR ==")[1].split("== kernels")[0]
    body = ir.split("for lv0")[1]
    body = body[:body.index("\npointwise")] if "\npointwise" in body else body
    assert "swap buf" in body
    assert "where(" not in body
    full = tuple(args[0].shape)
    assert f"over {list(full)}" not in body


def test_update_of_an_argument_name_a_loop_may_rebind_is_refused():
    """``for i in range(k): A = A * 2.0`` then ``A[0] = -1.0``: with no iteration the name
    is the caller's array, else a new one; the update is refused (the fallback runs it)."""
    def rebind_then_update(A, k):
        for _ in range(k):
            A = A * 2.0
        A[0] = -1.0
        return A
    with pytest.raises(cppcodegen.TraceError, match="'A', the argument itself when the loop"):
        cppcodegen.compile(rebind_then_update, fallback=False)(np.ones(3), 0)
    for k in (0, 2):
        a1, a2 = np.ones(3), np.ones(3)
        np.testing.assert_array_equal(cppcodegen.compile(rebind_then_update, fallback=True)(a1, k),
                                      rebind_then_update(a2, k))
        np.testing.assert_array_equal(a1, a2)
