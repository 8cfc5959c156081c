"""Random numbers drawn inside the kernels: ``np.random.*`` and ``Generator`` arguments.

In: the user's call of ``np.random.random``/``rand``/``randn``/``standard_normal``/
``uniform``/``normal`` (installed on ``np.random`` during a trace by ``replace.py``) or of a
Generator argument's methods. Out: ``random`` nodes, each with its own slot of draws, affine
transforms of them for ``uniform``/``normal`` parameters.
"""
from __future__ import annotations

import random as _pyrandom

import warnings

import numpy as np

from ..errors import TraceError, user_location
from ..ir.graph import make_node
from . import replace
from .proxy import Proxy, asproxy, unsupported, wrap
from .creation import shape_argument
from .sizes import broadcast_sizes


class RandomState:
    """Counts the random ops of the trace in progress (each gets a slot: its own draws);
    ``seeded``: (s, the slot count then) of the function's last ``np.random.seed(s)``: every
    draw after it has the source ``("seed", s, count)``, and the first of them in the graph
    (a loop's body may be traced more than once: slots of a discarded trace are not in it)
    starts the seeded block (``runtime/device.reservations``)."""
    slots = None
    seeded = None


def _size_shape(size):
    if size is None:
        return ()
    return shape_argument(size, "np.random")    # ints, sizes, integer arguments


def _random_shape(size, a, b, what):
    """The shape of a draw: ``size`` broadcast with its parameters' shapes."""
    shapes = [_size_shape(size)] + [x.node.shape if isinstance(x, Proxy) else np.shape(x)
                                    for x in (a, b)]
    try:
        return broadcast_sizes(*shapes)
    except ValueError:
        raise ValueError(f"{what}: shape mismatch: objects cannot be broadcast to a single "
                         f"shape {shapes} (at {user_location()})") from None


def _random_node(dist: str, shape, dtype=np.float64, source=None) -> Proxy:
    if RandomState.slots is None:
        raise TraceError("random numbers outside a trace")
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        unsupported(f"random numbers of dtype {dtype}")
    slot = RandomState.slots
    RandomState.slots += 1
    if source is None and RandomState.seeded is not None:
        source = ("seed", *RandomState.seeded)
    return wrap(make_node("random", (), shape, dtype, user_location(), dist=dist, slot=slot,
                          source=source))


def _number(p, size):
    """A draw without ``size`` whose result is one value: the Python number NumPy returns
    (``np.random.random()`` is a float, ``np.random.randint(5)`` an int), as ``.item()``
    makes it (``builtin_calls.python_number``)."""
    if size is not None or not isinstance(p, Proxy) or p.node.shape != ():
        return p
    from .builtin_calls import python_number      # (it imports the tracer, which imports this)
    return python_number(p)


def _affine(p: Proxy, loc, scale) -> Proxy:
    return p if (type(loc) in (int, float) and loc == 0 and type(scale) in (int, float)
                 and scale == 1) else np.add(np.multiply(p, scale), loc)


def _uniform(low=0.0, high=1.0, size=None, source=None):
    shape = _random_shape(size, low, high, "uniform")
    u = _random_node("uniform", shape, source=source)
    return _number(_affine(u, low, np.subtract(high, low) if isinstance(high, Proxy) or
                           isinstance(low, Proxy) else high - low), size)


def _normal(loc=0.0, scale=1.0, size=None, source=None):
    shape = _random_shape(size, loc, scale, "normal")
    return _number(_affine(_random_node("normal", shape, source=source), loc, scale), size)


def _exponential(scale=1.0, size=None, source=None):
    """``-scale * log(1 - u)`` of a uniform draw ``u`` in [0, 1) (the inverse of the
    distribution function: finite, >= 0)."""
    shape = _random_shape(size, scale, None, "exponential")
    u = _random_node("uniform", shape, source=source)
    e = np.negative(np.log1p(np.negative(u)))
    return _number(e if _is_one(scale) else np.multiply(e, scale), size)


def _lognormal(mean=0.0, sigma=1.0, size=None, source=None):
    return np.exp(_normal(mean, sigma, size, source))


def _is_one(x) -> bool:
    return not isinstance(x, Proxy) and np.ndim(x) == 0 and x == 1


def _integers(low, high=None, size=None, dtype=np.int64, endpoint=False, source=None,
              what="randint"):
    """Integers in [low, high) (``endpoint``: [low, high]) from a uniform float64 draw:
    ``low + min(floor(u * span), span - 1)``; 53 random bits, so the bias is below 2**-53 per
    value for spans up to 2**53. Bounds are ints or sizes (a traced value could not be
    checked against ``low >= high``, which NumPy raises)."""
    if high is None:
        low, high = 0, low
    for b in (low, high):
        if isinstance(b, Proxy) or not isinstance(b, (int, np.integer)) and not hasattr(b, "expr"):
            unsupported(f"np.random.{what} with bounds that are not ints or sizes")
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"Unsupported dtype {dtype} for {what}")
    span = high - low + (1 if endpoint else 0)
    if span <= 0:
        raise ValueError(f"{'low > high' if endpoint else 'low >= high'}")
    u = _random_node("uniform", _size_shape(size), np.float64, source)
    k = np.minimum(np.floor(np.multiply(u, span)), span - 1)
    return np.add(k, low).astype(dtype)


def _choice(a, size=None, replace=True, p=None, source=None, what="choice"):
    """``a[k]`` for ``k`` drawn uniformly from ``range(len(a))`` (``a`` an int: ``k``
    itself), or with probabilities ``p`` given as numbers (the first ``k`` whose cumulative
    probability exceeds a uniform draw, as NumPy picks). Draws without replacement would
    need a shuffle: not compiled."""
    if not replace:
        unsupported(f"np.random.{what} with replace=False")
    pop = None
    if isinstance(a, (int, np.integer)):
        n = int(a)
    else:
        pop = a if isinstance(a, Proxy) else np.asarray(a)
        if pop.ndim != 1:
            raise ValueError("a must be 1-dimensional")
        n = pop.shape[0]
    if isinstance(n, (int, np.integer)) and n <= 0:
        raise ValueError("a cannot be empty unless no samples are taken")
    if p is None:
        k = _integers(0, n, size, np.int64, source=source, what=what)
    else:
        if isinstance(p, Proxy):
            unsupported(f"np.random.{what} with traced probabilities p")
        p = np.asarray(p, dtype=np.float64)
        if p.ndim != 1 or p.shape[0] != n:
            raise ValueError("a and p must have same size")
        if np.any(p < 0) or not np.isclose(p.sum(), 1.0, rtol=0, atol=np.sqrt(np.finfo(np.float64).eps)):
            raise ValueError("probabilities do not sum to 1" if np.all(p >= 0)
                             else "probabilities are not non-negative")
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        u = _random_node("uniform", _size_shape(size), np.float64, source)
        k = np.minimum(np.searchsorted(cdf, u, side="right"), n - 1).astype(np.int64)
    return _number(k, size) if pop is None else asproxy(pop)[k]


def _seed(seed=None):
    """``np.random.seed(s)`` in the function: the draws after it are the same at every call
    (the default generator seeded with ``s`` where the call reaches it; the numbers are not
    NumPy's, as for every draw). Without a seed: the generator's own, as before."""
    from ..ir.graph import MADE
    if MADE:
        unsupported(f"np.random.seed inside a compiled loop or branch (at {user_location()})")
    if seed is None:
        return
    if isinstance(seed, Proxy):
        unsupported(f"np.random.seed of a value computed from arrays (at {user_location()})")
    seed = int(seed)            # (an integer argument: its value, guarded)
    if not 0 <= seed < 2 ** 32:
        raise ValueError(f"Seed must be between 0 and 2**32 - 1 (at {user_location()})")
    RandomState.seeded = (seed, RandomState.slots)
    if not SEED_WARNED:
        SEED_WARNED.append(True)
        warnings.warn(f"cppcodegen: np.random.seed({seed}) in a compiled function (at "
                      f"{user_location()}): the draws after it are the same at every call "
                      "with this seed, but they are not the numbers NumPy draws for it; "
                      "draw them outside the compiled function (and pass them in) where a "
                      "result must be NumPy's for a given seed", stacklevel=3)


SEED_WARNED: list = []      # (said once per process)


RANDOM_FUNCTIONS = {
    "seed": _seed,
    "choice": _choice,
    "randint": lambda low, high=None, size=None, dtype=int: (
        _number(_integers(low, high, size, dtype), size) if dtype is int
        else _integers(low, high, size, dtype)),
    "random": lambda size=None: _number(_random_node("uniform", _size_shape(size)), size),
    "random_sample": lambda size=None: _number(_random_node("uniform", _size_shape(size)), size),
    "sample": lambda size=None: _number(_random_node("uniform", _size_shape(size)), size),
    "rand": lambda *dims: _number(_random_node("uniform", _size_shape(dims)),
                                  None if not dims else dims),
    "randn": lambda *dims: _number(_random_node("normal", _size_shape(dims)),
                                   None if not dims else dims),
    "standard_normal": lambda size=None: _number(_random_node("normal", _size_shape(size)),
                                                 size),
    "uniform": _uniform,
    "normal": _normal,
    "exponential": _exponential,
    "standard_exponential": lambda size=None: _exponential(1.0, size),
    "lognormal": _lognormal,
}


class TracedGenerator:
    """Stands for a ``numpy.random.Generator`` argument: its draws happen in the kernel, seeded
    from the Generator itself at each call (so its own seed makes the results reproducible)."""

    def __init__(self, index: int):
        self.index = index

    def random(self, size=None, dtype=np.float64, out=None):
        return _number(_random_node("uniform", _size_shape(size), dtype, self.index), size)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return _number(_random_node("normal", _size_shape(size), dtype, self.index), size)

    def uniform(self, low=0.0, high=1.0, size=None):
        return _uniform(low, high, size, self.index)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return _normal(loc, scale, size, self.index)

    def exponential(self, scale=1.0, size=None):
        return _exponential(scale, size, self.index)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        return _exponential(1.0, size, self.index).astype(dtype, copy=False)

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        return _lognormal(mean, sigma, size, self.index)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return _integers(low, high, size, dtype, endpoint, self.index, "Generator.integers")

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        if axis != 0:
            unsupported("numpy.random.Generator.choice with axis")
        return _choice(a, size, replace, p, self.index, "Generator.choice")

    def __getattr__(self, name):
        unsupported(f"numpy.random.Generator.{name}")


replace.register(np.random, RANDOM_FUNCTIONS)


def _python_randint(a, b):
    """``random.randint(a, b)``: an int in [a, b], both ends included."""
    return _number(_integers(a, b, None, endpoint=True, what="randint"), None)


def _python_unsupported(name):
    def refuse(*args, **kwargs):
        unsupported(f"random.{name} of Python's random module (at {user_location()}); "
                    "random.random/uniform/gauss/normalvariate/randint/expovariate/"
                    "lognormvariate compile")
    return refuse


# Python's ``random`` module: drawn in the kernels like ``np.random`` (its own stream, not the
# Mersenne Twister's numbers); each draw a Python number, as the module returns. Its other
# functions are refused (the call runs as Python): run while tracing, their values would be
# baked into the build as constants, the same at every call.
PYTHON_RANDOM = {name: _python_unsupported(name) for name in _pyrandom.__all__
                 if callable(getattr(_pyrandom, name, None)) and name[0].islower()}
PYTHON_RANDOM.update({
    "random": lambda: _uniform(),
    "uniform": lambda a, b: _uniform(a, b),
    "gauss": lambda mu=0.0, sigma=1.0: _normal(mu, sigma),
    "normalvariate": lambda mu=0.0, sigma=1.0: _normal(mu, sigma),
    "randint": _python_randint,
    "expovariate": lambda lambd=1.0: _exponential(1.0 / lambd),
    "lognormvariate": lambda mu, sigma: _lognormal(mu, sigma),
})
replace.register(_pyrandom, PYTHON_RANDOM)
