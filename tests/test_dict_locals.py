"""A dict of the function's own read and written at constant keys (frontend/dictlocals.py):
a name per key, so a training loop that rebinds ``p["w"] = p["w"] - lr * g`` compiles (it
changed a Python dict: refused). The dict returned is Python's, keys in Python's order; a
missing key raises Python's KeyError. Compared with the plain function."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from helpers import check_against_numpy


def train(X, y, params, lr, steps):
    p = dict(params)
    for s in range(steps):
        g = X.T @ (X @ p["w"] + p["b"] - y) / X.shape[0]
        p["w"] = p["w"] - lr * g
        p["b"] = p["b"] - lr * (X @ p["w"] + p["b"] - y).mean()
    p["steps"] = steps
    return p


def momentum(x, lr, beta, steps):
    state = {"v": np.zeros_like(x), "x": x.copy(), "loss": 0.0}
    for _ in range(steps):
        grad = 2 * state["x"]
        state["v"] *= beta
        state["v"] += grad
        state["x"] -= lr * state["v"]
        state["loss"] = float((state["x"] ** 2).sum())
    return state["x"], state


def missing(cfg, x):
    c = dict(cfg)
    return x * c["scale"]


def passed_on(x):
    d = {"a": x}
    return len(d), d["a"] * 2


R = np.random.default_rng(3)
X = R.normal(size=(80, 4))
Y = X @ np.arange(4.0)


@pytest.mark.parametrize("fn, args", [
    (train, (X, Y, {"w": np.zeros(4), "b": 0.0, "decay": 0.5}, 0.05, 50)),
    (momentum, (R.standard_normal(10), 0.01, 0.9, 30)),
    (passed_on, (R.standard_normal(5),)),
])
def test_dicts_of_the_function(fn, args):
    got, want = check_against_numpy(fn, *args, rtol=1e-12)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        if isinstance(w, dict):
            assert list(g) == list(w)


def test_a_missing_key_raises_pythons_key_error():
    f = cppcodegen.compile(missing)
    np.testing.assert_array_equal(f({"scale": 2.0}, np.ones(3)), np.full(3, 2.0))
    with pytest.raises(KeyError, match="scale"):
        f({"offset": 2.0}, np.ones(3))
