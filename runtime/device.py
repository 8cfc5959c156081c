"""Device hooks: the only way the runtime reaches device services.

In: a hooks object (``DeviceHooks`` or anything with the same methods) registered with
``register_device_hooks``. Out: ``get_device_hooks()`` for the runtime and the user, and
``output_empty``, the allocator compiled calls use for outputs and temporaries (bound from
the registered hooks at registration, so a call pays one attribute lookup, as for
``numpy.empty``).

High priority (the runtime relies on them): ``init``, ``has_primary_context(index)``,
``default_generator(index)``, ``new_generator(index)``, ``device_from_ptr(address)``,
``host_allocator()`` (64-byte aligned host arrays), ``is_pinned_ptr(address)`` (here: the
address is 64-byte aligned and inside a live block of our host allocator) and
``output_allocator()``. Low priority: ``is_built``, ``is_available``, ``device_count``,
``current_device``, ``set_device``, ``exchange_device``, ``maybe_exchange_device``.

``CPUHooks`` implements them for the one CPU device; it is registered by default. Compiled
outputs use plain ``numpy.empty`` on the CPU (16-byte aligned; an aligned allocation costs
~2 us more per array, too much for small calls); ``host_allocator().empty`` is the aligned
one, for callers who want it.
"""
from __future__ import annotations

import bisect
import contextlib
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from .random import Generator

ALIGNMENT = 64


@dataclass(frozen=True)
class Device:
    type: str
    index: int = 0

    def __str__(self):
        return f"{self.type}:{self.index}"


class HostAllocator:
    """64-byte aligned host arrays; remembers the blocks it handed out while they live."""

    def __init__(self, alignment: int = ALIGNMENT):
        self.alignment = alignment
        self._blocks: dict[int, int] = {}          # start address -> size in bytes
        self._lock = threading.Lock()

    def empty(self, shape, dtype=np.float64) -> np.ndarray:
        dtype = np.dtype(dtype)
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        raw = np.empty(nbytes + self.alignment, np.uint8)
        base = raw.__array_interface__["data"][0]
        skip = -base % self.alignment
        start = base + skip
        with self._lock:
            self._blocks[start] = max(nbytes, 1)
        weakref.finalize(raw, self._forget, start)
        return np.ndarray(shape, dtype, buffer=raw, offset=skip)

    def _forget(self, start: int) -> None:
        with self._lock:
            self._blocks.pop(start, None)

    def owns(self, address: int) -> bool:
        """Is ``address`` inside a live block of this allocator?"""
        with self._lock:
            return any(s <= address < s + n for s, n in self._blocks.items())

    def live_blocks(self) -> int:
        with self._lock:
            return len(self._blocks)


class DeviceHooks:
    """The interface. Methods a device does not support raise NotImplementedError."""

    device_type = "unknown"

    # -- high priority
    def init(self) -> None:
        raise NotImplementedError

    def has_primary_context(self, index: int) -> bool:
        raise NotImplementedError

    def default_generator(self, index: int = 0) -> Generator:
        raise NotImplementedError

    def new_generator(self, index: int = 0) -> Generator:
        raise NotImplementedError

    def device_from_ptr(self, address: int) -> Device:
        raise NotImplementedError

    def host_allocator(self) -> HostAllocator:
        raise NotImplementedError

    def is_pinned_ptr(self, address: int) -> bool:
        raise NotImplementedError

    def output_allocator(self):
        """``empty(shape, dtype)`` used by compiled calls for outputs and temporaries."""
        raise NotImplementedError

    # -- low priority
    def is_built(self) -> bool:
        return False

    def is_available(self) -> bool:
        return False

    def device_count(self) -> int:
        return 0

    def current_device(self) -> int:
        raise NotImplementedError

    def set_device(self, index: int) -> None:
        raise NotImplementedError

    def exchange_device(self, index: int) -> int:
        """Make ``index`` current; return the previous current device."""
        previous = self.current_device()
        if index != previous:
            self.set_device(index)
        return previous

    def maybe_exchange_device(self, index: int) -> int:
        """Like ``exchange_device``, but a negative index means 'leave it as it is'."""
        return self.current_device() if index < 0 else self.exchange_device(index)


class CPUHooks(DeviceHooks):
    """The host: one device, ``cpu:0``."""

    device_type = "cpu"

    def __init__(self):
        self._lock = threading.Lock()
        self._initialized = False
        self._generators: dict[int, Generator] = {}
        self._allocator = HostAllocator()
        self._current = 0

    def _check(self, index: int) -> int:
        if index is None or index == -1:
            return self._current
        if index != 0:
            raise IndexError(f"device index {index} is out of range: the CPU has 1 device (0)")
        return index

    def init(self) -> None:
        with self._lock:
            self._initialized = True

    def has_primary_context(self, index: int = 0) -> bool:
        self._check(index)
        return self._initialized

    def default_generator(self, index: int = 0) -> Generator:
        index = self._check(index)
        with self._lock:
            gen = self._generators.get(index)
            if gen is None:
                gen = self._generators[index] = Generator(device=Device("cpu", index))
            return gen

    def new_generator(self, index: int = 0) -> Generator:
        return Generator(device=Device("cpu", self._check(index)))

    def device_from_ptr(self, address: int) -> Device:
        if not address:
            raise ValueError("device_from_ptr: null pointer")
        return Device("cpu", 0)

    def host_allocator(self) -> HostAllocator:
        return self._allocator

    def is_pinned_ptr(self, address: int) -> bool:
        return address % ALIGNMENT == 0 and self._allocator.owns(address)

    def output_allocator(self):
        return np.empty

    def is_built(self) -> bool:
        return True

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def current_device(self) -> int:
        return self._current

    def set_device(self, index: int) -> None:
        self._current = self._check(index)


_registered: DeviceHooks = CPUHooks()
_registry_lock = threading.Lock()
output_empty = np.empty
"""The output allocator of the registered hooks (read by ``compiled.CompiledVariant``)."""


def register_device_hooks(hooks) -> object:
    """Make ``hooks`` the device hooks of the runtime; returns the previous object."""
    global _registered, output_empty
    missing = [m for m in ("init", "default_generator", "new_generator", "device_from_ptr",
                           "host_allocator", "is_pinned_ptr", "output_allocator", "device_count")
               if not callable(getattr(hooks, m, None))]
    if missing:
        raise TypeError(f"device hooks object {hooks!r} lacks {', '.join(missing)}")
    allocate = hooks.output_allocator()
    if not callable(allocate):
        raise TypeError(f"{type(hooks).__name__}.output_allocator() must return empty(shape, dtype)")
    with _registry_lock:
        previous, _registered = _registered, hooks
        output_empty = allocate
    from . import fastcall          # (the C call path allocates with NumPy: off while these
    fastcall.allocator_changed()    # hooks allocate)
    hooks.init()
    return previous


def get_device_hooks():
    """The registered device hooks object (``CPUHooks`` unless a user registered another)."""
    return _registered


@contextlib.contextmanager
def use_device_hooks(hooks):
    """Register ``hooks`` for the ``with`` block, then restore the previous object."""
    previous = register_device_hooks(hooks)
    try:
        yield hooks
    finally:
        register_device_hooks(previous)


_registered.init()

def manual_seed(seed: int) -> None:
    """Seed the default generator of every device of the registered device hooks."""
    hooks = get_device_hooks()
    for index in range(max(hooks.device_count(), 1)):
        hooks.default_generator(index).manual_seed(seed)


def reservations(sources, args) -> dict:
    """slot -> (seed, offset) of a call's random ops, ``sources`` their (slot, source) pairs
    (``frontend/random.py``). Slot ``k`` takes offset ``k`` of one block reserved from the
    default generator for the call, so the values do not depend on the order the ops run
    in; ``("seed", s, k)``, the ops after the function's own ``np.random.seed(s)`` (its
    ``k``-th op then): the generator is seeded with ``s`` at the first of them and the slots
    from it on take a block of the seeded generator (the same numbers at every call, as in
    NumPy); an int source: seeded from that ``numpy.random.Generator`` argument; ``("rng",
    s)``: a Generator the function made with a constant seed, drawing in a compiled loop or
    branch (slot ``k`` of the stream of ``s``, the same numbers at every call)."""
    if not sources:
        return {}
    generator = get_device_hooks().default_generator(0)
    firsts: dict = {}               # a seed's source -> its first slot in this program
    for slot, src in sources:
        if isinstance(src, tuple) and src[0] == "seed":
            firsts[src] = min(slot, firsts.get(src, slot))
    seeds = {slot: src[1] for src, slot in firsts.items()}
    cuts = [0, *sorted(seeds), max(slot for slot, _ in sources) + 1]    # block k: [cuts[k],
    blocks = {}                                                          # cuts[k + 1])
    for lo, hi in zip(cuts, cuts[1:]):
        if lo in seeds:
            generator.manual_seed(seeds[lo])
        blocks[lo] = generator.reserve(hi - lo)
    out = {}
    for slot, src in sorted(sources, key=lambda p: p[0]):   # (a Generator: in slot order)
        if isinstance(src, tuple) and src[0] == "rng":  # a Generator the function seeds
            out[slot] = (src[1], slot)                  # with a constant: its own stream
        elif src is None or isinstance(src, tuple):
            lo = cuts[bisect.bisect_right(cuts, slot) - 1]
            seed, off = blocks[lo]
            out[slot] = (seed, (off + slot - lo) % 2 ** 64)
        else:
            out[slot] = (int(args[src].integers(0, 2 ** 63)), 0)
    return out
