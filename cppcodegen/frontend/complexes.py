"""The parts of complex arrays: ``x.real``, ``x.imag``, ``np.real``, ``np.imag``,
``np.angle``, ``np.iscomplex``/``np.isreal``, ``x.conj()``, and writing a part in place.

In: a traced array. Out: for a complex64/complex128 array, a view of its real or imaginary
part (graph ops ``real`` / ``imag``, float32/float64): it sees later in-place updates of the
array, and writing into it (``x.real[...] = v``, ``x.imag[1:] *= 2``, ``x.real = v``) writes
the array, whose new value is ``complex(new part, other part)`` (op ``complex``). For a real
array, ``x.real`` is the array itself and ``x.imag`` read-only zeros, as in NumPy.
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from ..ir.graph import make_node
from .proxy import Proxy, asproxy, broadcast_node, view_of, wrap
from .selection import lift

PART = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def part_dtype(dtype) -> np.dtype:
    return PART[np.dtype(dtype)]


def real(x):
    lifted = lift(lambda xs: real(xs[0]), [x])      # z[mask].real: kept lazy
    if lifted is not None:
        return lifted
    x = asproxy(x)
    if x.dtype.kind != "c":
        return x
    return _scalar_like(x, view_of(x, make_node("real", (x.node,), x.node.shape,
                                                part_dtype(x.dtype), user_location())))


def imag(x):
    lifted = lift(lambda xs: imag(xs[0]), [x])
    if lifted is not None:
        return lifted
    x = asproxy(x)
    if x.dtype.kind != "c":
        zero = make_node("const", (), (), x.dtype, user_location(), value=x.dtype.type(0).item())
        z = wrap(broadcast_node(zero, x.node.shape), x.weak, x.scalar)
        z.readonly = True               # NumPy: the imaginary part of a real array is read-only
        return z
    return _scalar_like(x, view_of(x, make_node("imag", (x.node,), x.node.shape,
                                                part_dtype(x.dtype), user_location())))


def _scalar_like(x, part):
    """A part of a NumPy complex scalar (``z.sum().real``) is a NumPy float scalar, as in
    NumPy; of an array (a 0-d one too) a view."""
    part.scalar = x.scalar and not x.node.shape
    if x.pyflag is not None and not x.node.shape:   # (a Python complex on some paths: a
        part.pyflag = x.pyflag                      # Python float there)
    return part


def angle(z, deg=False):
    """np.angle as NumPy computes it: arctan2(z.imag, z.real) (arctan2(0, z) for real z),
    times 180/pi for degrees."""
    z = asproxy(z)
    a = np.arctan2(imag(z), real(z)) if z.dtype.kind == "c" else np.arctan2(0, z)
    return a * (180 / np.pi) if deg else a


def iscomplex(x):
    x = asproxy(x)
    return imag(x) != 0 if x.dtype.kind == "c" else np.zeros_like(x, dtype=bool)


def isreal(x):
    x = asproxy(x)
    return imag(x) == 0 if x.dtype.kind == "c" else np.ones_like(x, dtype=bool)


def _set_part(part):
    def setter(self, value):
        view = part(self)
        view[...] = value
    return setter


Proxy.real = property(real, _set_part(real))
Proxy.imag = property(imag, _set_part(imag))
# ndarray.conj(): of a real array the array itself (np.conjugate of bools gives int8)
def _conjugate(self):
    """x.conjugate(): of a Python number (weak) a Python number, as Python's method gives."""
    if self.dtype.kind != "c":
        return self
    r = np.conjugate(self)
    r.weak, r.pyflag = self.weak, self.pyflag
    return r


Proxy.conj = Proxy.conjugate = _conjugate

FUNCTIONS = {np.real: real, np.imag: imag, np.angle: angle, np.iscomplex: iscomplex,
             np.isreal: isreal}
