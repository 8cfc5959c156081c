"""Random numbers inside compiled functions: NumPy's distributions from a counter-based
generator (Philox4x32-10), reproducible with cppcodegen.manual_seed whatever the thread
count or ISA. The streams differ from NumPy's own on purpose."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import cppcodegen
from cppcodegen.runtime import random as rnd


def ks_statistic(sample, cdf) -> float:
    x = np.sort(np.asarray(sample, dtype=np.float64))
    n = len(x)
    f = cdf(x)
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n)))


def normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


KS_CRIT = lambda n: 1.95 / math.sqrt(n)     # alpha = 0.001  # noqa: E731


def draws(x):
    return (np.random.random(x.shape) + x, np.random.randn(20000),
            np.random.uniform(-3.0, 5.0, size=20000), np.random.normal(2.0, 0.5, 20000),
            np.random.standard_normal((100, 200)))


def test_distributions_pass_kolmogorov_smirnov():
    cppcodegen.manual_seed(1234)
    u, n, un, nn, sn = cppcodegen.compile(draws)(np.zeros(20000))
    assert u.dtype == n.dtype == np.float64 and sn.shape == (100, 200)
    assert ks_statistic(u, lambda t: np.clip(t, 0, 1)) < KS_CRIT(u.size)
    assert ks_statistic(n, normal_cdf) < KS_CRIT(n.size)
    assert ks_statistic(un, lambda t: np.clip((t + 3) / 8, 0, 1)) < KS_CRIT(un.size)
    assert ks_statistic(nn, lambda t: normal_cdf((t - 2.0) / 0.5)) < KS_CRIT(nn.size)
    assert ks_statistic(sn.ravel(), normal_cdf) < KS_CRIT(sn.size)
    assert 0 <= u.min() and u.max() < 1


def exponential_draws(rng, scale):
    import random
    return (np.random.exponential(2.0, 20000), rng.exponential(scale, size=(100, 200)),
            rng.standard_exponential(20000, dtype=np.float32), rng.lognormal(0.5, 0.25, 20000),
            np.random.standard_exponential(), random.expovariate(4.0))


def test_exponential_and_lognormal_pass_kolmogorov_smirnov():
    cppcodegen.manual_seed(99)
    e2, es, e32, ln, one, py = cppcodegen.compile(exponential_draws, fallback=False)(
        np.random.default_rng(5), 0.5)
    assert e2.dtype == es.dtype == np.float64 and e32.dtype == np.float32
    assert es.shape == (100, 200) and type(one) is float and type(py) is float
    assert one >= 0 and py >= 0 and min(e2.min(), es.min(), e32.min()) >= 0
    assert ks_statistic(e2, lambda t: 1 - np.exp(-t / 2.0)) < KS_CRIT(e2.size)
    assert ks_statistic(es.ravel(), lambda t: 1 - np.exp(-t / 0.5)) < KS_CRIT(es.size)
    assert ks_statistic(e32, lambda t: 1 - np.exp(-t)) < KS_CRIT(e32.size)
    assert ks_statistic(ln, lambda t: normal_cdf((np.log(t) - 0.5) / 0.25)) < KS_CRIT(ln.size)


def test_a_wrong_distribution_fails_the_test():     # the KS check can fail
    u = np.random.default_rng(0).random(20000) ** 1.1
    assert ks_statistic(u, lambda t: np.clip(t, 0, 1)) > KS_CRIT(u.size)


def test_manual_seed_reproduces_and_calls_advance():
    f = cppcodegen.compile(draws)
    x = np.zeros(1000)
    cppcodegen.manual_seed(7)
    a, b = f(x), f(x)
    cppcodegen.manual_seed(7)
    c = f(x)
    for u, v, w in zip(a, b, c):
        np.testing.assert_array_equal(u, w)          # same seed, same values
        assert not np.array_equal(u, v)              # the next call draws new numbers


def seeded_walk(n, seed):
    before = np.random.rand(3)                  # drawn before the seed: new at each call
    np.random.seed(seed)
    steps = np.where(np.random.rand(n) < 0.5, -1.0, 1.0)
    pos = 0.0
    for i in range(n):                          # a draw in a compiled loop, after the seed
        pos += steps[i] * np.random.uniform(0.5, 1.5)
    return before, steps, pos


def test_the_functions_own_seed_makes_every_call_draw_the_same_numbers():
    """np.random.seed(s) in the function: every call with the same s draws the same numbers
    after it (as in NumPy; the numbers are this generator's), another s others."""
    from cppcodegen.frontend import random as traced_random
    traced_random.SEED_WARNED.clear()
    f = cppcodegen.compile(seeded_walk)
    with pytest.warns(UserWarning, match="not the numbers NumPy draws"):
        a = f(200, 42)          # (said once: a seeded simulation's numbers are not NumPy's)
    b, c = f(200, 42), f(200, 7)
    assert not np.array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2] == b[2] and a[2] != c[2] and not np.array_equal(a[1], c[1])
    assert set(np.unique(a[1])) <= {-1.0, 1.0}
    checked = cppcodegen.compile(seeded_walk, backend="check")(200, 42)   # the reference
    np.testing.assert_array_equal(checked[1], a[1])                       # interpreter's too
    assert checked[2] == pytest.approx(a[2], rel=1e-12)
    with pytest.raises(ValueError, match="Seed must be between"):
        cppcodegen.compile(seeded_walk)(5, -1)


def test_values_are_the_reference_scheme():
    cppcodegen.manual_seed(99)
    got = cppcodegen.compile(lambda x: np.random.random(x.shape) * 1 + x)(np.zeros((7, 11)))
    np.testing.assert_array_equal(got, rnd.uniform(99, 0, 77).reshape(7, 11))
    g32 = cppcodegen.compile(lambda x, g: x + g.standard_normal(x.shape, dtype=np.float32))
    out = g32(np.zeros(50, np.float32), np.random.default_rng(3))
    seed = int(np.random.default_rng(3).integers(0, 2 ** 63))
    np.testing.assert_allclose(out, rnd.normal(seed, 0, 50, np.float32), rtol=1e-6, atol=1e-6)


SCRIPT = """
import numpy as np, cppcodegen, sys
cppcodegen.manual_seed(2024)
f = cppcodegen.compile(lambda x: np.exp(np.random.randn(*x.shape)) + x, options={"isa": sys.argv[1]})
np.save(sys.argv[2], f(np.zeros((700, 900))))
"""


@pytest.mark.parametrize("threads,isa", [("1", "native"), ("2", "native"), ("2", "scalar")])
def test_same_values_for_any_thread_count_and_isa(tmp_path, threads, isa):
    outs = []
    for t, i in [(threads, isa), ("2", "native")]:
        path = tmp_path / f"{t}-{i}.npy"
        env = dict(os.environ, OMP_NUM_THREADS=t)
        r = subprocess.run([sys.executable, "-c", SCRIPT, i, str(path)], env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs.append(np.load(path))
    # (the portable build's normal draws take libm's log and cos where SIMD builds take
    # libmvec's, in vector and scalar code alike: they may differ by an ULP or two, which
    # exp and the sum carry on; any thread count gives the same values)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-13 if isa == "scalar" else 1e-15,
                               atol=0)


# ---------------------------------------------------------------- np.random.choice
def _choices(x, n):
    return (np.random.choice(x, n), np.random.choice(4, size=(n,)),
            np.random.choice(5, size=n, p=[0.1, 0.2, 0.3, 0.2, 0.2]))


def test_choice_draws_the_population_with_numpys_frequencies():
    """Index draws and a gather in the kernel: every value from the population, with the
    expected frequencies (within 5 standard errors), NumPy's dtypes and shapes."""
    n = 200_000
    x = np.array([1.5, -2.0, 7.25])
    got = cppcodegen.compile(_choices)(x, n)
    want = _choices(x, 10)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == (n,)
    a, b, c = got
    assert set(np.unique(a)) == set(x) and set(np.unique(b)) == {0, 1, 2, 3}
    for values, probs in ((np.searchsorted(np.sort(x), a), [1 / 3] * 3), (b, [0.25] * 4),
                          (c, [0.1, 0.2, 0.3, 0.2, 0.2])):
        freq = np.bincount(values, minlength=len(probs)) / n
        se = np.sqrt(np.asarray(probs) * (1 - np.asarray(probs)) / n)
        assert np.all(np.abs(freq - probs) < 5 * se), (freq, probs)


def test_choice_of_a_generator_argument_and_its_errors():
    f = cppcodegen.compile(lambda rng, n: rng.choice([10, 20, 30], size=n))
    r1 = f(np.random.default_rng(4), 1000)
    assert set(np.unique(r1)) == {10, 20, 30}
    np.testing.assert_array_equal(r1, f(np.random.default_rng(4), 1000))   # its seed
    with pytest.raises(cppcodegen.UnsupportedError, match="replace=False"):
        cppcodegen.compile(lambda n: np.random.choice(10, n, replace=False))(3)
    with pytest.raises(ValueError, match="same size"):
        cppcodegen.compile(lambda n: np.random.choice(3, n, p=[0.5, 0.5]))(3)
