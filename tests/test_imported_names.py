"""Functions imported under a name of their own (``from random import random``, ``from
numpy.random import rand``, ``from numpy import zeros``, ``from math import sqrt``) are the
same functions as ``random.random``, ``np.random.rand``, ... The tracer replaces those by
setting the module's attribute, which a name bound at import does not read: a draw ran once
while tracing and every call returned the same numbers (Numba's Monte Carlo example gave 4.0
at every call), and ``zeros(n)`` was NumPy's array, refused on the first traced store. Such a
call now gets the replacement too (``frontend/replace.by_name``)."""
import warnings
from math import sqrt
from random import random, shuffle, uniform

import numpy as np
from numpy import empty, zeros
from numpy.random import choice, rand

import cppcodegen


def monte_carlo_pi(n):
    hits = 0
    for _ in range(n):
        a, b = random(), uniform(-1.0, 1.0)
        if a * a + b * b < 1.0:
            hits += 1
    return 4.0 * hits / n


def noisy(x):
    return x + rand(x.shape[0])


def root_table(x):
    out = zeros(x.shape[0])
    tmp = empty(x.shape)
    for i in range(x.shape[0]):
        tmp[i] = sqrt(abs(x[i]))
        out[i] = 2.0 * x[i] + tmp[i]
    return out


def pick(x):
    return choice(x, 3)


def shuffled(x):
    idx = list(range(x.shape[0]))
    shuffle(idx)
    return x[idx].sum()


def test_draws_by_imported_names_differ_per_call():
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # compiled, not run as Python
        pi = cppcodegen.compile(monte_carlo_pi, fallback=False)
        runs = [pi(20_000) for _ in range(3)]
        x = np.zeros(1000)
        f = cppcodegen.compile(noisy, fallback=False)
        a, b = f(x), f(x)
    assert len(set(runs)) == 3 and all(abs(r - np.pi) < 0.1 for r in runs)
    assert not np.array_equal(a, b) and 0.0 <= a.min() and a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.05


def test_constructors_and_math_by_imported_names_compile():
    x = np.random.default_rng(0).standard_normal(257)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cppcodegen.compile(root_table, fallback=False)(x)
    np.testing.assert_allclose(got, root_table(x), rtol=1e-15)


def test_functions_that_would_freeze_run_as_python():
    x = np.arange(10.0)
    f = cppcodegen.compile(pick, fallback=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        picks = {tuple(f(x)) for _ in range(8)}
        sums = {cppcodegen.compile(shuffled, fallback=True)(x) for _ in range(2)}
    assert len(picks) > 1 and sums == {45.0}
