"""Functions with a construct cppcodegen cannot compile (tests/test_fallback.py)."""
import numpy as np


def low_bits(x):
    y = x * 2
    return (y.view(np.int64) & 0xff) + 1      # reinterpreting bits: not compiled


def bad_shapes(a, b):
    return a + b


def growing_path(x0, steps):
    """A path grown by one element per step: a carried array that grows cannot be compiled
    as a loop, and run by Python it would be ``steps`` copies of its body."""
    path = np.array([x0])
    for _ in range(steps):
        path = np.append(path, 0.5 * path[-1] + 1.0)
    return path
