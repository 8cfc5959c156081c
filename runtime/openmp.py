"""The OpenMP runtime the kernels link (libgomp), from Python: how its idle threads wait, a
handle to it, and what a forked child does with it.

- :func:`prepare` runs before anything of ours loads libgomp (the first kernel's dlopen, or
  :func:`runtime` with ``load``), since libgomp reads its environment once, when it loads:
  idle threads spin ``SPIN`` times, then sleep, unless the user chose (OMP_WAIT_POLICY,
  GOMP_SPINCOUNT); and a child forked after that runs its kernels on one thread. It returns
  the wait setting, which the measured decisions are keyed by (``tuning.machine``).
- :func:`runtime`: the loaded OpenMP runtime (ctypes), for ``omp_get_max_threads`` /
  ``omp_set_num_threads`` (a Dask task's threads, the parallel threshold's 1-thread timing).

The wait setting, measured on the 2-core EPYC VM. Loaded by other work (load ~4.5), long spins
are ruinous: a parallel chain exp(a)*b+sin(c)-a*c at 2^18 elements took 199 us sleeping at
once, 222 / 278 / 2241 us with 10^3 / 10^4 / 10^5 spins, and idle calls burned up to 50x the
CPU. Idle, sleeping at once costs a wake-up per region (a*b+a on 2^14 float32: 53 us on two
threads against 3.8 us on one; 4 us with the short spin), so only half-megabyte loops were
worth threads, and a float32 256^3 product ran faster through BLAS; ~0.1 ms of spinning keeps
the workers awake between the kernels of one call and between calls in a loop, at 1.12 vs
1.08 ms of CPU per call for calls 0.1 s apart. (Without PASSIVE, libgomp's default policy with
the same spin count stalled 4-12 ms every ~20 calls here.)

After fork: libgomp's worker threads do not survive it, and a parallel region in the child
waits for them forever (a multiprocessing Pool with the fork start method hung at its first
compiled call); the child's OpenMP is set to one thread.
"""
from __future__ import annotations

import os
import threading

SPIN = 2000     # GOMP_SPINCOUNT: ~0.1 ms (~45 ns per spin on the Zen 4 EPYC VM)
NAMES = ("libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so")    # libgomp first

_LOCK = threading.Lock()
_STATE: dict = {}       # "forks": the fork hook is registered; "runtime": the handle found


def prepare() -> str:
    """The wait setting (set first unless the user set one), the fork hook registered once;
    returns ``"OMP_WAIT_POLICY=... GOMP_SPINCOUNT=..."``."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        os.environ["GOMP_SPINCOUNT"] = str(SPIN)
    if "forks" not in _STATE:
        with _LOCK:
            if "forks" not in _STATE and hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=_one_thread)
            _STATE["forks"] = True
    return " ".join(f"{k}={os.environ[k]}" for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
                    if k in os.environ)


def runtime(load: bool = False):
    """The OpenMP runtime this process has loaded (ctypes), or None; with ``load``, libgomp
    loaded (after :func:`prepare`) when none is."""
    found = _STATE.get("runtime")
    if found is not None:
        return found
    import ctypes                           # (not at import: a warm start never needs it)
    for name in NAMES:
        try:
            return _adopt(ctypes.CDLL(name, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL))
        except (OSError, AttributeError):
            continue
    if load:
        prepare()
        try:
            return _adopt(ctypes.CDLL(NAMES[0], mode=ctypes.RTLD_GLOBAL))
        except (OSError, AttributeError):
            return None
    return None


def _adopt(lib):
    import ctypes
    lib.omp_get_max_threads.restype = ctypes.c_int
    lib.omp_set_num_threads.argtypes = [ctypes.c_int]
    _STATE["runtime"] = lib
    return lib


def _one_thread() -> None:
    lib = runtime()
    if lib is not None:
        lib.omp_set_num_threads(1)
