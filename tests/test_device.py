"""Device hooks (CPU implementation, a user's own hooks) and the counter-based generators."""
import gc

import numpy as np
import pytest

import cppcodegen
from cppcodegen.runtime import device, random as crandom
from cppcodegen.runtime.device import CPUHooks, get_device_hooks, use_device_hooks


def addr(a):
    return a.__array_interface__["data"][0]


def test_cpu_hooks_high_priority():
    h = get_device_hooks()
    assert isinstance(h, CPUHooks) and h.has_primary_context(0)
    g = h.default_generator(0)
    assert h.default_generator(0) is g and h.new_generator(0) is not g
    assert str(h.device_from_ptr(addr(np.ones(3)))) == "cpu:0"
    with pytest.raises(ValueError):
        h.device_from_ptr(0)
    with pytest.raises(IndexError):
        h.default_generator(1)


@pytest.mark.parametrize("shape,dtype", [((3,), np.float32), ((5, 7), np.float64),
                                         ((0,), np.int8), ((1, 1, 33), np.bool_)])
def test_host_allocator_is_aligned_and_pinned(shape, dtype):
    h = get_device_hooks()
    a = h.host_allocator().empty(shape, dtype)
    assert a.shape == shape and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable
    assert addr(a) % 64 == 0
    assert h.is_pinned_ptr(addr(a))
    if a.nbytes > 1:
        assert not h.is_pinned_ptr(addr(a) + 1)            # not aligned


def test_is_pinned_ptr_false_for_foreign_and_freed_memory():
    h = get_device_hooks()
    alloc = h.host_allocator()
    foreign = np.empty(1024, np.uint8)
    start = addr(foreign) + (-addr(foreign) % 64)            # aligned, but not ours
    assert not h.is_pinned_ptr(start)
    a = alloc.empty((256,), np.float64)
    p, before = addr(a), alloc.live_blocks()
    del a
    gc.collect()
    assert alloc.live_blocks() == before - 1 and not h.is_pinned_ptr(p)


def test_cpu_hooks_low_priority():
    h = CPUHooks()
    assert h.is_built() and h.is_available() and h.device_count() == 1
    assert h.current_device() == 0
    assert h.exchange_device(0) == 0 and h.maybe_exchange_device(-1) == 0
    with pytest.raises(IndexError):
        h.set_device(1)
    with pytest.raises(IndexError):
        h.exchange_device(2)


class CountingHooks(CPUHooks):
    """A user's device: counts output allocations and hands out its own generator."""

    def __init__(self):
        super().__init__()
        self.allocated = []
        self.inits = 0

    def init(self):
        self.inits += 1
        super().init()

    def output_allocator(self):
        def empty(shape, dtype):
            arr = self.host_allocator().empty(shape, dtype)
            self.allocated.append(addr(arr))
            return arr
        return empty


def test_runtime_uses_registered_device_hooks():
    f = cppcodegen.compile(lambda x: (np.exp(x), x.sum()))
    x = np.linspace(0, 1, 100)
    f(x)                                            # compile with the CPU hooks
    mine = CountingHooks()
    with use_device_hooks(mine):
        assert get_device_hooks() is mine and mine.inits == 1
        e, s = f(x)
        assert addr(e) in mine.allocated and len(mine.allocated) == 2
        assert mine.is_pinned_ptr(addr(e))
        cppcodegen.manual_seed(123)                 # reaches the registered hooks' generator
        assert mine.default_generator(0).get_state() == (123, 0)
    np.testing.assert_allclose(e, np.exp(x))
    assert get_device_hooks() is not mine
    n = len(mine.allocated)
    f(x)
    assert len(mine.allocated) == n                 # restored: no longer used
    with pytest.raises(TypeError, match="lacks"):
        device.register_device_hooks(object())


# ----------------------------------------------------------------- generators

def test_philox_known_answers():      # Random123's kat_vectors for philox4x32-10
    cases = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
             ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
             ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
              (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for ctr, key, want in cases:
        got = crandom.philox4x32([[c] for c in ctr], [[k] for k in key])[:, 0]
        assert tuple(int(v) for v in got) == want


def test_manual_seed_and_reserve():
    gen = get_device_hooks().default_generator(0)
    cppcodegen.manual_seed(42)
    assert gen.get_state() == (42, 0) and gen.initial_seed() == 42
    assert gen.reserve(1) == (42, 0) and gen.reserve(2) == (42, 1) and gen.offset == 3
    cppcodegen.manual_seed(42)
    assert gen.reserve(1) == (42, 0)
    gen.set_state((7, 9))
    assert gen.reserve() == (7, 9)
    with pytest.raises(ValueError):
        gen.manual_seed(2 ** 64)
    assert crandom.Generator(-1).initial_seed() == 2 ** 64 - 1


def test_streams_do_not_depend_on_chunking():
    whole = crandom.uniform(5, 3, 1000, np.float32)
    # four "threads", uneven chunks, any order
    parts = {s: crandom.uniform(5, 3, n, np.float32, start=s) for s, n in ((600, 400), (0, 7), (7, 593))}
    assert np.array_equal(np.concatenate([parts[0], parts[7], parts[600]]), whole)
    assert not np.array_equal(crandom.uniform(5, 4, 1000, np.float32), whole)   # next offset
    assert not np.array_equal(crandom.uniform(6, 3, 1000, np.float32), whole)   # other seed


def _ks(sample, cdf):
    x = np.sort(sample)
    n = len(x)
    c = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reference_distributions(dtype):
    from math import erf, sqrt
    n = 20000
    crit = 1.95 / np.sqrt(n)                        # KS at alpha = 0.001
    u = crandom.uniform(1234, 0, n, dtype)
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    assert _ks(u.astype(np.float64), lambda x: x) < crit
    z = crandom.normal(1234, 1, n, dtype)
    assert z.dtype == dtype and np.all(np.isfinite(z))
    phi = np.vectorize(lambda v: 0.5 * (1 + erf(v / sqrt(2))))
    assert _ks(z.astype(np.float64), phi) < crit
