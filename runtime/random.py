"""Counter-based random number generators: the state behind random numbers in kernels.

In: a seed. Out: ``Generator`` objects holding ``(seed, offset)``, handed out by the device
hooks (``default_generator(index)``, ``new_generator(index)``), (``manual_seed(seed)`` is in ``device.py``)
which reseeds every device's default generator. No NumPy bit generator is involved: values
depend only on ``(seed, offset, element index)``, never on threads, ISA or chunking.

The scheme (Philox4x32-10, Salmon et al. 2011, as in Random123, cuRAND and PyTorch):

* key     = the 64-bit seed, as two 32-bit words ``(seed & 0xffffffff, seed >> 32)``.
* counter = four 32-bit words ``(i & 0xffffffff, i >> 32, off & 0xffffffff, off >> 32)``
  where ``i`` is the flat (C-order) index of the output element and ``off`` the generator
  offset reserved for this random op in this call.
* Every call of a compiled function reserves one offset per random op with
  ``Generator.reserve(1)`` (atomically), before the kernel runs; the kernel receives
  ``(seed, off)`` as two scalar arguments. Element ``i`` then computes ``philox(counter,
  key)`` on its own, so whichever thread or vector lane handles ``i`` gets the same bits.
* Bits to values: float32 uniform = ``(w0 >> 8) * 2**-24`` in [0, 1); float64 uniform =
  ``(((w0 << 32) | w1) >> 11) * 2**-53``; normals by Box-Muller from ``(w0, w1)`` (float32)
  or ``(w0w1, w2w3)`` (float64), taking the cosine branch.

``philox4x32`` and ``uniform``/``normal`` here are the NumPy reference of that scheme: the
oracle for kernel code and its tests. Streams differ from NumPy's (``np.random``) by design;
only the distributions match.
"""
from __future__ import annotations

import os
import threading

import numpy as np

DEFAULT_SEED = 67280421310721
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK32 = 0xFFFFFFFF


class Generator:
    """A Philox generator state: ``seed`` (64-bit key) and ``offset`` (counter words 2-3)."""

    def __init__(self, seed: int = DEFAULT_SEED, device=None):
        self.device = device
        self._lock = threading.Lock()
        self._seed, self._offset = _check_seed(seed), 0

    def manual_seed(self, seed: int) -> "Generator":
        """Set the seed and rewind the offset to 0."""
        seed = _check_seed(seed)
        with self._lock:
            self._seed, self._offset = seed, 0
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    @property
    def offset(self) -> int:
        return self._offset

    def get_state(self) -> tuple:
        with self._lock:
            return (self._seed, self._offset)

    def set_state(self, state) -> None:
        seed, offset = state
        if not 0 <= int(offset) < 2 ** 64:
            raise ValueError(f"generator offset {offset} is outside [0, 2**64)")
        with self._lock:
            self._seed, self._offset = _check_seed(seed), int(offset)

    def reserve(self, n: int = 1) -> tuple:
        """Atomically take ``n`` offsets: returns ``(seed, first offset)`` for a kernel call."""
        with self._lock:
            seed, off = self._seed, self._offset
            self._offset = (off + int(n)) % 2 ** 64
        return seed, off

    def __repr__(self):
        return f"Generator(device={self.device}, seed={self._seed}, offset={self._offset})"


def _check_seed(seed) -> int:
    seed = int(seed)
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError(f"seed {seed} does not fit in 64 bits")
    return seed % 2 ** 64



# ----------------------------------------------------------------- NumPy reference

def philox4x32(counter, key, rounds: int = 10) -> np.ndarray:
    """Philox4x32: ``counter`` (4, ...) and ``key`` (2, ...) uint32 words -> (4, ...) uint32."""
    c = [np.asarray(w, dtype=np.uint64) for w in counter]
    k0, k1 = (np.asarray(w, dtype=np.uint64) for w in key)
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + _W0) & _MASK32, (k1 + _W1) & _MASK32
        p0, p1 = _M0 * c[0], _M1 * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & _MASK32, p1 & _MASK32,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & _MASK32, p0 & _MASK32]
    return np.stack([w.astype(np.uint32) for w in c])


def random_bits(seed: int, offset: int, n: int, start: int = 0) -> np.ndarray:
    """The (4, n) uint32 words of elements start..start+n-1 of one ``(seed, offset)``
    reservation (a thread handling a chunk passes its ``start``)."""
    i = np.arange(start, start + n, dtype=np.uint64)
    counter = (i & _MASK32, i >> np.uint64(32), np.full(n, offset & _MASK32, np.uint64),
               np.full(n, offset >> 32, np.uint64))
    return philox4x32(counter, (seed & _MASK32, seed >> 32))


def uniform(seed: int, offset: int, n: int, dtype=np.float64, start: int = 0) -> np.ndarray:
    """Reference uniform [0, 1) values of the kernel scheme."""
    w = random_bits(seed, offset, n, start).astype(np.uint64)
    if np.dtype(dtype) == np.float32:
        return ((w[0] >> np.uint64(8)).astype(np.float32) * np.float32(2.0 ** -24))
    bits = ((w[0] << np.uint64(32)) | w[1]) >> np.uint64(11)
    return bits.astype(np.float64) * 2.0 ** -53


def normal(seed: int, offset: int, n: int, dtype=np.float64, start: int = 0) -> np.ndarray:
    """Reference standard normal values of the kernel scheme (Box-Muller, cosine branch)."""
    w = random_bits(seed, offset, n, start).astype(np.uint64)
    if np.dtype(dtype) == np.float32:
        u1 = ((w[0] >> np.uint64(8)).astype(np.float64) + 1.0) * 2.0 ** -24     # (0, 1]
        u2 = (w[1] >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
        return (np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)).astype(np.float32)
    u1 = ((((w[0] << np.uint64(32)) | w[1]) >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0 ** -53
    u2 = (((w[2] << np.uint64(32)) | w[3]) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)
