"""Arguments that are lists, tuples, dicts or namedtuples holding arrays (a model's weights,
a dict of parameters): compiled as a function of their leaves (``frontend/argtree.py``),
compared with the plain function."""
import copy
from collections import namedtuple

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import TraceError

RNG = np.random.default_rng(11)


def mlp(x, weights, biases):
    h = x
    for W, b in zip(weights, biases):
        h = np.maximum(h @ W + b, 0.0)
    return h


def scaled(x, p):
    return x * p["a"] + p["b"] if p["mode"] == "affine" else x * p["a"]


def sums(xs):
    out = []
    for x in xs:
        out.append(x.sum())
    return np.array(out)


Params = namedtuple("Params", "dt nu")


def diffuse(u, prm, n):
    for _ in range(n):
        u[1:-1] = u[1:-1] + prm.nu * prm.dt * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def dot_loop(pair):
    s = 0.0
    for i in range(pair[0].shape[0]):
        s += pair[0][i] * pair[1][i]
    return s


def nested(layers):
    total = 0.0
    for W, (b, scale) in layers:
        total += float((W.sum(axis=0) + b).max()) * scale
    return total


def bump_first(xs):             # an array in the list updated in place: the caller's array
    xs[0][1:] += xs[1][:-1]
    return xs[0].sum()


def count_above(xs, t):
    counts = np.zeros(len(xs), dtype=np.int64)
    for k in range(len(xs)):
        x = xs[k]
        for i in range(x.shape[0]):
            if x[i] > t:
                counts[k] += 1
    return counts


CASES = [
    (mlp, lambda: (RNG.random((5, 8)), [RNG.random((8, 16)), RNG.random((16, 4))],
                   [RNG.random(16) - 0.5, RNG.random(4) - 0.5])),
    (scaled, lambda: (RNG.random(6), {"a": 2.0, "b": -1.0, "mode": "affine"})),
    (scaled, lambda: (RNG.random(6), {"a": 3.0, "b": -1.0, "mode": "scale"})),
    (sums, lambda: ([RNG.random(5), RNG.random(7), RNG.random((2, 3))],)),
    (diffuse, lambda: (RNG.random(20), Params(0.1, 0.5), 12)),
    (dot_loop, lambda: ((RNG.random(50), RNG.random(50)),)),
    (nested, lambda: ([(RNG.random((3, 4)), (RNG.random(4), 2.0)),
                       (RNG.random((2, 4)), (RNG.random(4), -1.0))],)),
    (bump_first, lambda: ([RNG.random(9), RNG.random(9)],)),
    (count_above, lambda: ([RNG.random(6), RNG.random(4) + 0.2], 0.7)),
]


def _same(want, got):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for w, g in zip(want, got):
            _same(w, g)
    elif isinstance(want, list):
        assert len(got) == len(want)
        for w, g in zip(want, got):
            _same(w, g)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same(want[k], got[k])
    elif isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("fn,make", CASES, ids=[f"{f.__name__}{i}" for i, (f, _) in
                                                enumerate(CASES)])
def test_container_arguments_match_python(fn, make):
    args = make()
    mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
    f = cppcodegen.compile(fn, fallback=False)
    _same(fn(*theirs), f(*mine))
    _same(theirs, mine)         # (arrays updated in place: in the caller's containers too)


def test_one_compile_serves_new_values_of_the_same_structure():
    f = cppcodegen.compile(mlp, fallback=False)
    for _ in range(3):
        args = CASES[0][1]()
        _same(mlp(*args), f(*args))
    (inner,) = f._trees.values()
    assert len(inner.variants) == 1
    p = {"a": 2.0, "b": -1.0, "mode": "affine"}
    g = cppcodegen.compile(scaled, fallback=False)
    x = RNG.random(4)
    for a in (2.0, 5.0, -1.5):
        _same(scaled(x, dict(p, a=a)), g(x, dict(p, a=a)))
    (inner,) = g._trees.values()
    assert len(inner.variants) == 1         # (a float in a dict: a run-time value)


def test_other_structures_compile_their_own():
    f = cppcodegen.compile(sums, fallback=False)
    for n in (1, 2, 4):
        xs = [RNG.random(3 + k) for k in range(n)]
        _same(sums(xs), f(xs))
    assert len(f._trees) == 3
    x = RNG.random(5)
    _same(sums((x, x)), f((x, x)))          # a tuple, not a list: another structure


def changes_list(xs):
    xs.append(xs[0] * 2)
    return len(xs)


def replaces_item(xs):
    xs[0] = xs[0] + 1.0
    return xs[0].sum()


@pytest.mark.parametrize("fn", [changes_list, replaces_item])
def test_a_function_that_changes_its_list_argument(fn):
    xs = [RNG.random(3), RNG.random(3)]
    with pytest.raises(TraceError, match=f"{fn.__name__} changes the list passed as argument "
                                         "'xs'"):
        cppcodegen.compile(fn, fallback=False)(list(xs))
    mine, theirs = list(xs), list(xs)
    with pytest.warns(cppcodegen.FallbackWarning):
        got = cppcodegen.compile(fn, fallback=True)(mine)
    want = fn(theirs)           # Python runs it on the caller's own list
    np.testing.assert_array_equal(got, want)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a, b)


def test_keyword_container_argument_and_explain():
    f = cppcodegen.compile(scaled, fallback=False)
    x = RNG.random(4)
    p = {"a": 0.5, "b": 2.0, "mode": "affine"}
    _same(scaled(x, p=p), f(x, p=p))
    text = str(f.explain(x, p))
    assert "scalar(, index=2)" in text          # (x, then p's leaves: a, b, mode)


def test_errors_name_the_users_line():
    def pick(xs, i):
        return xs[1][i]
    f = cppcodegen.compile(pick, fallback=False)
    xs = [np.arange(3.0), np.arange(4.0)]
    assert f(xs, 3) == 3.0
    with pytest.raises(IndexError):
        f(xs, 4)


def test_check_and_sizes_known_at_run_time_take_container_arguments():
    report = cppcodegen.check(mlp, *CASES[0][1]())
    assert report.ok, report
    f = cppcodegen.compile(mlp, dynamic=True, fallback=False)
    ws = [RNG.random((8, 16)), RNG.random((16, 4))]
    bs = [RNG.random(16), RNG.random(4)]
    for n in (3, 7, 12):
        x = RNG.random((n, 8))
        _same(mlp(x, ws, bs), f(x, ws, bs))
    (inner,) = f._trees.values()
    builds = {id(v) for v in inner.variants.values()} | {id(d[-1]) for d in inner.dynamic_variants}
    assert len(builds) == 1             # (one build serves every batch size)


def test_a_namedtuple_of_floats_is_read_at_run_time():
    """A namedtuple of numbers is taken apart (its floats run-time values: one build for
    every value); a plain tuple of numbers stays a constant guarded by value."""
    f = cppcodegen.compile(diffuse, fallback=False)
    u = RNG.random(12)
    for dt in (0.1, 0.2, 0.05):
        _same(diffuse(u.copy(), Params(dt, 0.5), 3), f(u.copy(), Params(dt, 0.5), 3))
    assert sum(len(t.variants) for t in f._trees.values()) == 1 and not f.variants
