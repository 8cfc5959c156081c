"""Random numbers drawn inside compiled loops: every run of a draw in a loop gets its own
numbers (element i of its k-th run is element i + k * size of its stream), reproducible under
cppcodegen.manual_seed, and the distributions hold."""
import random

import numpy as np
import pytest

import cppcodegen


def random_walk(n):
    x = 0.0
    path = np.zeros(n)
    for i in range(n):
        x += np.random.standard_normal()
        path[i] = x
    return path


def darts(n):
    hits = 0
    k = 0
    while k < n:                                # a while loop: its trip count is a value
        p = np.random.random(2)
        if (p * p).sum() < 1.0:
            hits += 1
        k += 1
    return 4.0 * hits / n


def rows_of_noise(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] + np.random.uniform(-1.0, 1.0, x.shape[1])
    return out


def test_each_iteration_draws_new_numbers_with_the_right_distribution():
    n = 20000
    steps = np.diff(cppcodegen.compile(random_walk)(np.int64(n)))
    assert len(np.unique(steps)) == n - 1
    assert abs(steps.mean()) < 0.05 and abs(steps.std() - 1.0) < 0.05    # ~7 sigma


def test_a_while_loop_of_draws():
    f = cppcodegen.compile(darts)
    est = [f(np.int64(200000)) for _ in range(2)]
    assert est[0] != est[1]                     # the next call draws new numbers
    assert all(abs(e - np.pi) < 0.03 for e in est)        # sigma ~0.0037


def test_rows_in_a_loop_and_manual_seed():
    x = np.zeros((300, 40))
    f = cppcodegen.compile(rows_of_noise)
    cppcodegen.manual_seed(7)
    a = f(x)
    b = f(x)
    cppcodegen.manual_seed(7)
    c = f(x)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)
    assert len(np.unique(a)) == a.size          # no row repeats another's draws
    assert a.min() >= -1.0 and a.max() < 1.0 and abs(a.mean()) < 0.02


def ising_sweeps(spins, beta, nsweeps):
    n = spins.shape[0]
    total = nsweeps * n * n
    step = 0
    while step < total:
        i = np.random.randint(0, n)
        j = np.random.randint(n)
        s = spins[i, j]
        nb = (spins[(i + 1) % n, j] + spins[(i - 1) % n, j]
              + spins[i, (j + 1) % n] + spins[i, (j - 1) % n])
        dE = 2 * s * nb
        if dE <= 0 or np.random.random() < np.exp(-beta * dE):
            spins[i, j] = -s
        step += 1
    return spins


def test_integers_in_a_metropolis_loop():
    f = cppcodegen.compile(ising_sweeps)
    cold = f(np.ones((16, 16), np.int64), 0.0, np.int64(1))    # beta 0: every visit flips
    assert set(np.unique(cold)) <= {-1, 1}
    hot = f(np.ones((16, 16), np.int64), 5.0, np.int64(2))     # from all +1: nothing flips
    assert (hot == 1).all()


def draw_ints(n, lo, hi):
    return np.random.randint(lo, hi, size=n), np.random.randint(hi)


@pytest.mark.parametrize("lo,hi", [(0, 1), (-3, 4), (10, 1000)])
def test_randint_values_cover_the_range_uniformly(lo, hi):
    a, b = cppcodegen.compile(draw_ints)(200000, lo, hi)
    assert a.dtype == np.int64 and a.shape == (200000,)
    assert a.min() == lo and a.max() == hi - 1 and 0 <= int(b) < hi
    counts = np.bincount(a - lo, minlength=hi - lo)
    expect = 200000 / (hi - lo)
    assert np.abs(counts - expect).max() < 6 * np.sqrt(expect) + 1


def test_randint_bounds_are_checked_as_numpy_does():
    with pytest.raises(ValueError, match="low >= high"):
        cppcodegen.compile(draw_ints)(10, 5, 5)
    g = cppcodegen.compile(lambda x, rng: x + rng.integers(1, 7, size=x.shape, endpoint=True))
    out = g(np.zeros(5000, np.int64), np.random.default_rng(1))
    assert out.min() == 1 and out.max() == 7


def seeded_draws(n):
    np.random.seed(42)
    a = np.zeros(n)
    for i in range(n):
        a[i] = np.random.random()
    b = np.random.standard_normal(n)
    return a, b


def test_seed_in_the_function_repeats_draws_made_in_a_loop():
    """``np.random.seed(s)`` before a loop: the loop's draws (and those after it) are the same
    at every call, as NumPy's are. The loop's body is traced more than once; the seed went
    to a draw of the discarded trace, and the loop drew from the unseeded generator."""
    f = cppcodegen.compile(seeded_draws)
    (a1, b1), (a2, b2) = f(200), f(200)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)
    assert len(np.unique(a1)) == 200 and not np.array_equal(a1[:100], a1[100:])
    assert 0.4 < a1.mean() < 0.6 and abs(b1.mean()) < 0.3


def scalar_draws(g):
    s = 0.0
    for _ in range(3):
        s += np.random.uniform(0.0, 1.0)
    return (np.random.random(), np.random.rand(), np.random.randn(), np.random.normal(0, 2),
            np.random.randint(0, 10), np.random.randint(3, dtype=np.int64), np.random.choice(5),
            s, g.random(), g.standard_normal(), g.uniform(), g.integers(4), g.choice(4))


def test_draws_without_size_are_the_python_numbers_numpy_returns():
    """``np.random.random()`` is a float, ``randint(10)`` an int, ``randint(3, dtype=np.int64)``
    an np.int64, ``Generator.integers(4)`` an np.int64: as in NumPy, type for type."""
    got = cppcodegen.compile(scalar_draws)(np.random.default_rng(1))
    want = scalar_draws(np.random.default_rng(1))
    assert [type(v) for v in got] == [type(v) for v in want]


def _pi_python_random(n):
    acc = 0
    for i in range(n):
        x = random.random()
        y = random.random()
        if (x ** 2 + y ** 2) < 1.0:
            acc += 1
    return 4.0 * acc / n


def _python_draws():
    return random.random(), random.uniform(2.0, 3.0), random.gauss(0.0, 1.0), \
        random.randint(3, 4)


def _python_shuffle(x):
    y = list(x)
    random.shuffle(y)
    return np.array(y) * 2


def test_pythons_random_module_draws_when_the_program_runs():
    """random.random() & co. draw in the kernels, anew at every call (they were run while
    tracing and kept as constants); each draw is a Python number, as the module returns."""
    f = cppcodegen.compile(_pi_python_random)
    a, b = f(200_000), f(200_000)
    assert a != b and abs(a - np.pi) < 0.03 and abs(b - np.pi) < 0.03
    g = cppcodegen.compile(_python_draws)
    draws = [g() for _ in range(200)]
    assert [type(v) for v in draws[0]] == [float, float, float, int]
    u, w, z, k = (np.array(c) for c in zip(*draws))
    assert len(set(u)) == 200 and 0 <= u.min() and u.max() < 1 and 2 <= w.min() and w.max() <= 3
    assert abs(z.mean()) < 0.3 and set(k) == {3, 4}


def test_other_functions_of_pythons_random_run_as_python():
    f = cppcodegen.compile(_python_shuffle, fallback=True)
    with pytest.warns(cppcodegen.FallbackWarning, match="random.shuffle"):
        got = f(np.arange(10))
    assert sorted(got) == list(range(0, 20, 2))
