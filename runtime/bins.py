"""Checks of bin edges, run as NumPy steps before the kernels that search them.

In: the bins array of ``np.digitize`` or ``np.histogram`` (a traced array: its values are
known at run time only). Out: the same values, or NumPy's ValueError for bins it rejects.
Where the compiled code was built for other bins (increasing bins traced, decreasing ones
given; NaN among histogram edges) the result is an empty array: the step's shape differs
from the traced one, so the call runs the function with NumPy (``runtime.compiled``). No
compiler imports: these are named in cached graphs.
"""
from __future__ import annotations

import numpy as np

try:
    from numpy._core.multiarray import _monotonicity
except ImportError:                         # pragma: no cover -- older NumPy layouts
    from numpy.core.multiarray import _monotonicity


def _direction(bins) -> int:
    mono = _monotonicity(np.asarray(bins))
    if mono == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    return mono


def increasing(bins):
    """np.digitize's bins, compiled for increasing ones."""
    return bins if _direction(bins) == 1 else bins[:0]


def decreasing(bins):
    """np.digitize's bins, compiled for decreasing ones."""
    return bins if _direction(bins) == -1 else bins[:0]


def histogram_edges(bins):
    """np.histogram's edges (an array): increasing (equal neighbours allowed), no NaN."""
    if np.any(bins[:-1] > bins[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return bins[:0] if np.isnan(bins).any() else bins
