"""Determinism: the same call gives the same bits every time, at any thread count.

Arrays are large enough (several million elements, above the default parallel_threshold)
that every kernel really runs as an OpenMP parallel loop. Parallel reductions split their
work into a fixed number of chunks whose partial results are combined in a fixed order, so
neither the OpenMP schedule nor the number of threads may change a single bit: three runs
at the most threads, then runs at one and two threads, must all be bit-identical, and
agree with NumPy within the usual tolerances.
"""
import ctypes
import ctypes.util
import os

import numpy as np
import pytest

import cppcodegen
from helpers import assert_inputs_unchanged, assert_matches_numpy, run_compiled, run_numpy

MAX_THREADS = max(4, os.cpu_count() or 1)
pytestmark = pytest.mark.xdist_group("determinism")


def workload(x, y, m, k):
    """Full, row, column and multi-axis reductions of floats, ints and bools, and
    pointwise results, over ~4M-element inputs."""
    z = np.exp(x * 0.5) - np.sin(y)
    return (
        x.sum(), y.astype(np.float32).sum(), z.sum(), (x * y).mean(),
        x.sum(axis=0), x.sum(axis=1), z.max(axis=0), y.min(axis=1),
        m.sum(axis=(0, 2)), m.std(axis=1),
        k.sum(), (k * 3 - 7).max(), (k & 255).sum(axis=0),
        (x > y).sum(), np.argmax(z, axis=1), x.max(), np.abs(y).min(),
        z, np.where(x > 0, np.log1p(np.abs(y)), x * y),
    )


def make_args():
    r = np.random.default_rng(2718)
    x = r.standard_normal((2048, 2048))
    y = r.uniform(-3, 3, (2048, 2048))
    m = r.standard_normal((64, 256, 256)).astype(np.float32)
    k = r.integers(-10**6, 10**6, (2048, 2048), dtype=np.int64)
    return x, y, m, k


def _gomp():
    return ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")


def _bits(a):
    return np.ascontiguousarray(np.asarray(a)).tobytes()


def test_three_runs_and_any_thread_count_bit_identical():
    args = make_args()
    pristine = [a.copy() for a in args]
    fn = cppcodegen.compile(workload)
    gomp = _gomp()
    before = gomp.omp_get_max_threads()
    runs = []
    try:
        for threads in (MAX_THREADS, MAX_THREADS, MAX_THREADS, 1, 2):
            gomp.omp_set_num_threads(threads)
            runs.append((threads, run_compiled(fn, *args)))
    finally:
        gomp.omp_set_num_threads(before)
    assert_inputs_unchanged(args, pristine)
    first = runs[0][1]
    for threads, out in runs[1:]:
        for i, (a, b) in enumerate(zip(first, out)):
            assert _bits(a) == _bits(b), (
                f"output {i} differs between a run at {MAX_THREADS} threads and a run at "
                f"{threads} threads")
    # and the result is right
    expected = run_numpy(workload, *args)
    x, y, m, k = args
    n = x.size
    e64, e32 = np.finfo(np.float64).eps, np.finfo(np.float32).eps
    # two summation orders differ by at most (n-1) * eps * sum|terms| (tests/helpers.py)
    sum_tol = {0: n * e64 * np.abs(x).sum(), 1: n * e32 * np.abs(y).sum(),
               2: n * e64 * np.abs(expected[17]).sum(), 3: n * e64 * np.abs(x * y).mean()}
    for i, (g, e) in enumerate(zip(first, expected)):
        kw = {}
        if i in sum_tol:
            kw = dict(atol=sum_tol[i])
        elif i in (4, 5):
            kw = dict(atol=2048 * e64 * np.abs(x).sum(axis=i - 4))
        elif i == 8:
            kw = dict(atol=64 * 256 * e32 * np.abs(m).sum(axis=(0, 2)))
        elif i == 9:
            kw = dict(rtol=1e-4)
        elif i in (6, 17):     # exp(x/2) - sin(y): 4 ULP of each term (cancellation)
            with np.errstate(all="ignore"):
                t = 4 * (np.spacing(np.exp(x * 0.5)) + np.spacing(np.abs(np.sin(y))))
            kw = dict(ulp=4, atol=t.max(axis=0) if i == 6 else t)
        elif i == 18:
            kw = dict(ulp=4)
        assert_matches_numpy(g, e, _path=f"output {i}", **kw)
