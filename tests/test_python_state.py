"""Python state changed by the code a compiled function runs (``frontend/pystate.py``).

A compiled loop's body is traced once: a draw of a generator made in the function, next() of
an iterator, a helper counting its calls with ``nonlocal``, would happen once and repeat in
every iteration (the same draw each time, a count of one). Such a loop runs in Python while
tracing (each iteration's calls made, as Python makes them). A global or an attribute the
code sets outlives the call: the compiled function would set it only while traced, so it is
refused (with the fallback on, Python runs the call). Compared with the plain function."""
import itertools
import random
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import TraceError


def numpy_walk(n, seed):
    rng = np.random.default_rng(seed)
    out = np.empty(n)
    for i in range(n):
        out[i] = rng.random()
    return out


def python_draws(n, seed):
    rnd = random.Random(seed)
    out = np.empty(n)
    for i in range(n):
        out[i] = rnd.random() + rnd.gauss(0.0, 1.0)
    return out


def halve(x, n):
    nfev = 0

    def f(v):
        nonlocal nfev
        nfev += 1
        return v * 0.5
    for _ in range(n):
        x = f(x)
    return x, nfev


def counted(n):
    c = itertools.count()
    out = np.empty(n)
    for i in range(n):
        out[i] = next(c)
    return out


def squares(x, n):
    g = (k * k for k in range(100))
    s = 0.0
    for i in range(n):
        s += next(g) * x[i]
    return s


@pytest.mark.parametrize("fn,args", [
    (python_draws, (5, 11)), (halve, (3.0, 5)),
    (halve, (np.array([1.0, 2.0]), 4)), (counted, (7,)), (squares, (np.arange(6.0), 6)),
])
def test_state_changed_in_a_loop_changes_at_every_iteration(fn, args):
    want = fn(*args)
    got = cppcodegen.compile(fn, fallback=False)(*args)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        np.testing.assert_array_equal(g, w)


def test_a_generator_seeded_in_the_function_draws_in_the_kernels_of_a_loop():
    """``rng = np.random.default_rng(seed)`` drawn in a compiled loop: the kernels' draws
    from a stream of the seed's own (not NumPy's numbers): a new draw at every iteration,
    the same numbers at every call with that seed, uniform; a loop of 10^5 trips compiles
    as a loop (it is not run by Python while tracing). (A build per seed: the seed is a
    constant of the build.)"""
    f = cppcodegen.compile(numpy_walk, fallback=False)
    a, b, c = f(100_000, 3), f(100_000, 3), f(100_000, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a)) == a.size and 0 <= a.min() and a.max() < 1
    counts = np.histogram(a, bins=10, range=(0, 1))[0]
    assert abs(counts - 10_000).max() < 600     # (binomial sd ~95: 6 sd)


NFEV = 0


def rhs(y):
    global NFEV
    NFEV += 1
    return -y


def euler(y, h, n):
    for _ in range(n):
        y = y + h * rhs(y)
    return y


class Counted:
    def __init__(self):
        self.nfev = 0

    def rhs(self, y):
        self.nfev += 1
        return -y


def euler_obj(f, y, h, n):
    for _ in range(n):
        y = y + h * f(y)
    return y


def test_a_global_set_by_a_helper_is_refused_and_python_runs_the_call():
    global NFEV
    line = rhs.__code__.co_firstlineno + 2
    with pytest.raises(TraceError, match=rf"rhs changes the global 'NFEV' \(at .*:{line}\)"):
        cppcodegen.compile(euler, fallback=False)(1.0, 0.1, 5)
    f = cppcodegen.compile(euler, fallback=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
        for k in range(3):              # every call counts, as Python counts
            before = NFEV
            assert f(1.0, 0.1, 5) == euler(1.0, 0.1, 5)
            assert NFEV - before == 10


def test_an_attribute_set_by_a_method_is_refused():
    obj = Counted()
    with pytest.raises(TraceError, match="Counted.rhs changes the attribute 'nfev'"):
        cppcodegen.compile(euler_obj, fallback=False)(obj.rhs, 1.0, 0.1, 4)
    assert obj.nfev == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
        cppcodegen.compile(euler_obj, fallback=True)(obj.rhs, 1.0, 0.1, 4)
    assert obj.nfev == 4


def test_the_compiled_function_setting_a_global_is_refused():
    def bump(x):
        global NFEV
        NFEV = NFEV + 1
        return x * 2
    with pytest.raises(TraceError, match="bump changes the global 'NFEV'"):
        cppcodegen.compile(bump, fallback=False)(np.ones(2))


class Decay:
    def __init__(self, k, w):
        self.k, self.w = k, w

    def rhs(self, t, y):
        return -self.k * y + self.w

    def apply(self, x):
        return self.k * x + self.w


def euler_t(f, y, dt, n):
    for i in range(n):
        y = y + dt * f(i * dt, y)
    return y


def test_a_bound_method_sees_its_objects_attributes_as_they_are_now():
    """A bound method's object's attributes are read as constants of a build: a number
    or string changed, or an array rebound, makes another build (the old one returned the
    old parameter's results); a method compiled itself checks them at each call."""
    o = Decay(0.5, np.zeros(2))
    f = cppcodegen.compile(euler_t, fallback=False)
    y0 = np.ones(2)
    for k, w in ((0.5, None), (2.0, None), (2.0, np.full(2, 0.25))):
        o.k = k
        if w is not None:
            o.w = w
        np.testing.assert_array_equal(f(o.rhs, y0, 0.1, 10), euler_t(o.rhs, y0, 0.1, 10))
    g = cppcodegen.compile(o.apply, fallback=False)
    x = np.ones(2)
    for k in (1.0, 3.0, 3.0, -2.0):
        o.k = k
        np.testing.assert_array_equal(g(x), o.apply(x))
    o.w = np.arange(2.0)
    np.testing.assert_array_equal(g(x), o.apply(x))


def test_numba_compiled_helpers_and_functions_are_traced_as_their_python():
    """Code ported from Numba: a ``@numba.njit`` helper called in a loop, and a function
    that is itself ``@numba.njit``, are traced as the Python functions they wrap."""
    numba = pytest.importorskip("numba")

    @numba.njit
    def flux(u):
        return 0.5 * u * u

    def step(u, dt, dx):
        un = u.copy()
        for i in range(1, u.shape[0]):
            u[i] = un[i] - dt / dx * (flux(un[i]) - flux(un[i - 1]))
        return u

    u = np.linspace(1.0, 2.0, 20)
    np.testing.assert_array_equal(cppcodegen.compile(step, fallback=False)(u.copy(), 0.01, 0.1),
                                  step(u.copy(), 0.01, 0.1))
    jitted = numba.njit(step)
    f = cppcodegen.compile(jitted, fallback=False)
    assert f.fn is step
    np.testing.assert_array_equal(f(u.copy(), 0.01, 0.1), step(u.copy(), 0.01, 0.1))


def test_explain_of_a_function_seeding_a_generator_from_an_argument():
    """A second seed makes the function's integer arguments run-time values; the seed of
    ``np.random.default_rng(seed)`` is still this call's (a build per seed), in explain too."""
    f = cppcodegen.compile(numpy_walk, fallback=False)
    a, b = f(50, 3), f(50, 4)
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(f(50, 3), a)
    assert "for" in str(cppcodegen.explain(f, 50, 5))


def _seeded_lattice(L, beta, sweeps, seed):
    rng = np.random.default_rng(seed)
    spins = rng.choice([-1, 1], size=(L, L))
    for s in range(sweeps):
        i = rng.integers(0, L)
        j = rng.integers(0, L)
        dE = 2 * spins[i, j] * (spins[(i + 1) % L, j] + spins[i, (j + 1) % L])
        if dE <= 0 or rng.random() < np.exp(-dE * beta):
            spins[i, j] *= -1
    return spins


def test_a_constant_array_updated_in_a_branch_names_the_branch():
    """The refusal of an update of an array the trace holds as constants (a lattice drawn
    from a seeded Generator, flipped under a branch on its values) names the branch."""
    with pytest.raises(cppcodegen.TraceError, match=r"\(the branch at .*test_python_state"):
        cppcodegen.compile(_seeded_lattice, fallback=False)(3, 0.4, 50, 1)
