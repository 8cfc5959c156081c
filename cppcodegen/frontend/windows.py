"""``np.lib.stride_tricks.sliding_window_view``: the windows of an array, read as a gather.

In: a traced array, ``window_shape`` (ints known while tracing) and ``axis``. Out: NumPy's
read-only view's values: each windowed axis of length n becomes n - w + 1 and an axis of
length w is appended (in the order ``axis`` gives), element ``[..., i, ..., k]`` being
``x[..., i + k, ...]``. Each axis is a gather along it with the index ``i + k``, so what
reads the windows (``v.std(axis=-1)``, a moving average, a max filter) is one loop over the
array, never the (n - w + 1) * w copy NumPy's users pay for a reduction of the view.

The result is read-only, as NumPy's: an update of it raises NumPy's ValueError.
``writeable=True`` (windows that write into the array, one element shared by several
windows) is refused by name; window shapes from array values and repeated axes run NumPy's
function between kernels. A window given by an int argument (``rolling_std(x, w)``) is that
call's int, guarded: a call with another width gets a build of its own.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import user_location
from .creation import _iota as arange, decided_ints
from .externs import extern_call
from .proxy import asproxy, unsupported
from .sizes import is_int, symbolic
from .views import moveaxis


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    if writeable:
        unsupported("sliding_window_view(..., writeable=True) (windows writing into the array)")
    window = decided_ints(window_shape)         # (an int argument read at each call: guarded)
    window = tuple(window) if np.iterable(window) else (window,)
    if not all(is_int(w) for w in window):
        return extern_call(np.lib.stride_tricks.sliding_window_view, (x, window_shape),
                           dict(axis=axis))
    window = tuple(int(w) for w in window)
    x = asproxy(x)
    if any(w < 0 for w in window):
        raise ValueError(f"`window_shape` cannot contain negative values (at {user_location()})")
    if axis is None:
        if len(window) != x.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window)} window_shape elements and "
                             f"`x.ndim` is {x.ndim} (at {user_location()})")
        axes = tuple(range(x.ndim))
    else:
        axes = normalize_axis_tuple(axis, x.ndim, allow_duplicate=True)
        if len(window) != len(axes):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(window)} window_shape elements and {len(axes)} axes "
                             f"elements (at {user_location()})")
    if len(set(axes)) != len(axes):
        return extern_call(np.lib.stride_tricks.sliding_window_view, (x, window_shape),
                           dict(axis=axis))
    out = x
    for ax, w in zip(axes, window):
        n = out.shape[ax]
        short = n < w if type(n) is int else symbolic().less(n, w)      # (guarded)
        if short:
            raise ValueError(f"window shape cannot be larger than input array shape "
                             f"(at {user_location()})")
        index = arange(n - w + 1)[:, None] + arange(w)[None, :]
        out = moveaxis(out[(slice(None),) * ax + (index,)], ax + 1, -1)
    if out is x:                                # (no axis: NumPy's view of the whole array)
        out = x[...]
    out.readonly = True
    return out


FUNCTIONS = {np.lib.stride_tricks.sliding_window_view: sliding_window_view}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""
