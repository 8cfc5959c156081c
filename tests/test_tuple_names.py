"""A name only ever bound to tuples of one length (``best = (j, thr)`` in a search loop under
a branch on values) is carried as one value per element (frontend/tuplenames.py): it was
refused ('best (tuple) is rebound'). Results equal the plain function's."""
import numpy as np
import pytest

import cppcodegen

rng = np.random.default_rng(8)


def stump(X, y):
    best_err = np.inf
    best = (0, 0.0)
    for j in range(X.shape[1]):
        for t in range(X.shape[0]):
            thr = X[t, j]
            err = float(np.sum((X[:, j] < thr) != y))
            if err < best_err:
                best_err = err
                best = (j, thr)
    return best, best_err


def first_and_last(x, t):
    span = (-1, -1)
    for i in range(len(x)):
        if x[i] > t:
            span = (span[0] if span[0] >= 0 else i, i)
    lo, hi = span
    return lo, hi


def mixed_binding(x):
    pair = (x[0], x[1])
    pair = pair[::-1] if x[0] > x[1] else pair      # (a tuple slice: not a tuple display)
    return pair


@pytest.mark.parametrize("fn, args", [
    (stump, (rng.standard_normal((12, 3)), rng.random(12) < 0.5)),
    (first_and_last, (np.array([0.1, 0.9, 0.2, 0.8, 0.3]), 0.5)),
    (first_and_last, (np.array([0.1, 0.2]), 0.5)),
    (mixed_binding, (np.array([2.0, 1.0]),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_like_python(fn, args):
    got = cppcodegen.compile(fn, options={"fallback": fn is mixed_binding})(*args)
    want = fn(*args)
    assert type(got) is type(want)
    for g, w in zip(np.asarray(got, dtype=object).ravel(), np.asarray(want, dtype=object).ravel()):
        assert g == w
