"""Functions with a construct cppcodegen cannot compile (tests/test_fallback.py)."""
import numpy as np


def low_bits(x):
    y = x * 2
    return (y.view(np.int64) & 0xff) + 1      # reinterpreting bits: not compiled


def bad_shapes(a, b):
    return a + b
