"""Random numbers drawn inside the kernels: ``np.random.*`` and ``Generator`` arguments.

In: the user's call of ``np.random.random``/``rand``/``randn``/``standard_normal``/
``uniform``/``normal`` (installed on ``np.random`` during a trace by ``replace.py``) or of a
Generator argument's methods. Out: ``random`` nodes, each with its own slot of draws, affine
transforms of them for ``uniform``/``normal`` parameters.
"""
from __future__ import annotations

import numpy as np

from ..errors import TraceError, user_location
from ..ir.graph import make_node
from . import replace
from .proxy import Proxy, unsupported, wrap
from .creation import shape_argument
from .sizes import broadcast_sizes


class RandomState:
    """Counts the random ops of the trace in progress (each gets a slot: its own draws)."""
    slots = None


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
    return wrap(make_node("random", (), shape, dtype, user_location(), dist=dist, slot=slot,
                          source=source))


def _affine(p: Proxy, loc, scale) -> Proxy:
    return p if (type(loc) in (int, float) and loc == 0 and type(scale) in (int, float)
                 and scale == 1) else np.add(np.multiply(p, scale), loc)


def _uniform(low=0.0, high=1.0, size=None, source=None):
    shape = _random_shape(size, low, high, "uniform")
    u = _random_node("uniform", shape, source=source)
    return _affine(u, low, np.subtract(high, low) if isinstance(high, Proxy) or
                   isinstance(low, Proxy) else high - low)


def _normal(loc=0.0, scale=1.0, size=None, source=None):
    shape = _random_shape(size, loc, scale, "normal")
    return _affine(_random_node("normal", shape, source=source), loc, scale)


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


RANDOM_FUNCTIONS = {
    "randint": lambda low, high=None, size=None, dtype=int: _integers(low, high, size, dtype),
    "random": lambda size=None: _random_node("uniform", _size_shape(size)),
    "random_sample": lambda size=None: _random_node("uniform", _size_shape(size)),
    "sample": lambda size=None: _random_node("uniform", _size_shape(size)),
    "rand": lambda *dims: _random_node("uniform", _size_shape(dims)),
    "randn": lambda *dims: _random_node("normal", _size_shape(dims)),
    "standard_normal": lambda size=None: _random_node("normal", _size_shape(size)),
    "uniform": _uniform,
    "normal": _normal,
}


class TracedGenerator:
    """Stands for a ``numpy.random.Generator`` argument: its draws happen in the kernel, seeded
    from the Generator itself at each call (so its own seed makes the results reproducible)."""

    def __init__(self, index: int):
        self.index = index

    def random(self, size=None, dtype=np.float64, out=None):
        return _random_node("uniform", _size_shape(size), dtype, self.index)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return _random_node("normal", _size_shape(size), dtype, self.index)

    def uniform(self, low=0.0, high=1.0, size=None):
        return _uniform(low, high, size, self.index)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return _normal(loc, scale, size, self.index)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return _integers(low, high, size, dtype, endpoint, self.index, "Generator.integers")

    def __getattr__(self, name):
        unsupported(f"numpy.random.Generator.{name}")


replace.register(np.random, RANDOM_FUNCTIONS)
