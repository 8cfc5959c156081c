"""``np.roll`` and ``np.pad``: arrays joined from slices of one array.

In: a traced array and NumPy's arguments. Out: ``concat.join`` of slices of it, axis by axis
(a rolled axis is its tail then its head; a padded axis is the border parts, then the array,
then the border parts), so the result is a fresh buffer filled by slice assignments that fuse
into its consumers: ``u - np.roll(u, 1)`` is one loop reading ``u`` twice, no copy.

NumPy's rules: ``roll``'s shifts and axes broadcast together (shifts of one axis add up), a
shift wraps modulo the axis length, ``axis=None`` rolls the flattened array; ``pad`` takes a
width per axis side (an int, a pair, or a pair per axis) and pads the axes in order, each
over the whole extent of the axes padded before it (so corners come from the later axis, as
in NumPy). Modes compiled: ``constant`` (``constant_values`` cast to the array's dtype),
``edge``, ``wrap``, ``reflect`` and ``symmetric`` (even reflections) while each width fits in
the axis; a traced shift (one int, known when the program runs) is a gather along its axis;
wider borders, other modes, statistics modes and traced widths run NumPy's own function
between kernels.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .concat import join
from .creation import _iota as arange, decided_ints, full
from .externs import extern_call
from .indexing import flip
from .proxy import cast, copy_of, Proxy, size_operand
from .sizes import is_int, symbolic
from .views import axis_slice, broadcast_to, ravel, reshape


def _ints(x) -> bool:
    return all(is_int(v) for v in np.ravel(np.asarray(x, dtype=object)))


def roll(a, shift, axis=None):
    if isinstance(a, Proxy) and isinstance(shift, Proxy) and shift.ndim == 0 and \
            shift.dtype.kind in "iu" and (axis is None or is_int(axis)):
        return _roll_by_value(a, shift, axis)
    if not isinstance(a, Proxy) or not _ints(shift) or (axis is not None and not _ints(axis)):
        return extern_call(np.roll, (a, shift), dict(axis=axis))
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts, axes = np.broadcast_arrays(np.asarray(shift, dtype=np.int64),
                                       np.asarray(axis, dtype=np.int64))
    total: dict = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = normalize_axis_index(int(ax), a.ndim)
        total[ax] = total.get(ax, 0) + int(s)
    out = a
    for ax, s in total.items():
        n = out.shape[ax]
        if type(n) is not int:          # a symbolic length: the shift within it, guarded
            if s == 0:
                continue
            if not symbolic().less(abs(s), n):
                return extern_call(np.roll, (a, shift), dict(axis=axis))
            k = n - s if s > 0 else -s
        elif n == 0 or s % n == 0:
            continue
        else:
            k = n - s % n               # the tail a[k:] comes first
        out = join([axis_slice(out, ax, k, n), axis_slice(out, ax, 0, k)], ax)
    return copy_of(out, scalar=False) if out is a else out


def _roll_by_value(a, shift, axis):
    """A shift known when the program runs (``np.roll(F[:, i], cx)`` in a loop over the
    lattice velocities ``cx``): out[i] = a[(i - shift) mod n], a gather along the axis."""
    if axis is None:
        return reshape(_roll_by_value(ravel(a), shift, 0), a.shape)
    ax = normalize_axis_index(int(axis), a.ndim)
    n = a.shape[ax]
    if type(n) is int and n == 0:
        return copy_of(a, scalar=False)
    index = np.mod(arange(n) - cast(shift, np.int64), size_operand(n))
    return a[(slice(None),) * ax + (index,)]


_NEEDS = {"edge": lambda w: 1, "wrap": lambda w: w, "reflect": lambda w: w + 1,
          "symmetric": lambda w: w}     # the least axis length a border of width w fits


def _fits(mode, w, n) -> bool:
    need = _NEEDS[mode](w)
    return n >= need if type(n) is int else not symbolic().less(n, need)   # (guarded)


def pad(array, pad_width, mode="constant", **kwargs):
    pad_width = decided_ints(pad_width)

    def numpy_pad():
        return extern_call(np.pad, (array, pad_width), dict(mode=mode, **kwargs))
    a = array
    if not isinstance(a, Proxy) or not isinstance(mode, str) or not _ints(pad_width):
        return numpy_pad()
    rest = dict(kwargs)             # (kwargs itself stays whole for NumPy's call)
    values = rest.pop("constant_values", 0) if mode == "constant" else 0
    if rest.pop("reflect_type", "even") != "even" or rest or a.ndim == 0 or \
            (mode != "constant" and mode not in _NEEDS) or isinstance(values, Proxy):
        return numpy_pad()
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2))
        consts = np.broadcast_to(np.asarray(values), (a.ndim, 2))
    except ValueError:
        return numpy_pad()              # NumPy's error for shapes that do not fit
    if (widths < 0).any():
        return numpy_pad()              # NumPy's ValueError
    for ax in range(a.ndim):
        if mode != "constant" and not all(_fits(mode, int(w), a.shape[ax])
                                          for w in widths[ax] if w):
            return numpy_pad()
    out = a
    for ax in range(a.ndim):
        before, after = (int(w) for w in widths[ax])
        if not before and not after:
            continue
        n = out.shape[ax]
        side = lambda w: tuple(w if d == ax else s for d, s in enumerate(out.shape))
        if mode == "constant":
            head = full(side(before), consts[ax][0], dtype=a.dtype) if before else None
            tail = full(side(after), consts[ax][1], dtype=a.dtype) if after else None
        elif mode == "edge":
            head = broadcast_to(axis_slice(out, ax, 0, 1), side(before)) if before else None
            tail = broadcast_to(axis_slice(out, ax, n - 1, n), side(after)) if after else None
        elif mode == "wrap":
            head = axis_slice(out, ax, n - before, n) if before else None
            tail = axis_slice(out, ax, 0, after) if after else None
        elif mode == "reflect":
            head = flip(axis_slice(out, ax, 1, before + 1), ax) if before else None
            tail = flip(axis_slice(out, ax, n - 1 - after, n - 1), ax) if after else None
        else:                           # symmetric
            head = flip(axis_slice(out, ax, 0, before), ax) if before else None
            tail = flip(axis_slice(out, ax, n - after, n), ax) if after else None
        out = join([p for p in (head, out, tail) if p is not None], ax, dtype=a.dtype)
    return copy_of(out, scalar=False) if out is a else out


FUNCTIONS = {np.roll: roll, np.pad: pad}
"""NumPy function -> its tracing function (``ndarray.FUNCTIONS``)."""
