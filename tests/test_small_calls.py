"""Small calls run on the calling thread: no OpenMP region (no thread wake-up) below
the parallel threshold (measured per machine: cppcodegen/autotune_threshold.py), so a 1000-element chain is not slower with 2 threads
than with 1. Measured on the 2-core AMD EPYC (shared, loaded): chain_small 1000 float32
8.1 us (1 thread) vs 8.3 us (2 threads), the same kernel; forcing the OpenMP region on
(parallel_threshold=1) costs 14-40 us at 2^12-2^16 elements there, so the threshold stays
conservative (2^19). On the AVX-512 EPYC (less loaded): 1000 elements 3.5-3.7 us with 1 or 2
threads (NumPy 3.6 us); forcing the region costs 6-25 us at 2^12-2^14, but pays from 2^16-2^17
on (2^18: 116-138 us vs 175-220 us on the calling thread) for this transcendental chain."""
import numpy as np

import cppcodegen
from cppcodegen.config import Options


def chain(a, b, c):
    return np.exp(a) * b + np.sin(c) - a * c


def test_small_elementwise_chain_runs_on_calling_thread():
    a = np.linspace(-1, 1, 1000).astype(np.float32)
    src = cppcodegen.explain(chain, a, a, a).source
    assert "#pragma omp" not in src
    np.testing.assert_allclose(cppcodegen.compile(chain)(a, a, a), chain(a, a, a),
                               rtol=1e-5, atol=1e-6)


def test_small_reductions_run_on_calling_thread():
    x = np.ones((30, 40), np.float32)
    for f in (lambda x: x.sum(), lambda x: x.sum(axis=1), lambda x: np.cumsum(x, axis=1)):
        assert "#pragma omp" not in cppcodegen.explain(f, x).source


def test_untuned_threshold_is_conservative():
    """Tuning off (as in this suite): the static threshold. Measured thresholds never go
    below autotune_threshold.LOW (tests/test_parallel_threshold.py)."""
    from cppcodegen import autotune_threshold
    assert Options().parallel_threshold == autotune_threshold.AUTO
    assert autotune_threshold.STATIC >= 1 << 16 and autotune_threshold.LOW >= 1 << 12
    big = np.ones(1 << 20, np.float32)
    assert "omp parallel" in cppcodegen.explain(chain, big, big, big).source


def bisect(a, v):                   # Python ints, a float argument, many loop scalars
    lo, hi = 0, a.shape[0] - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if a[mid] == v:
            return mid
        elif a[mid] < v:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def test_float_arguments_and_loop_scalars_take_the_fast_path():
    """A Python float argument is keyed by its type (its value is a run-time scalar), so the
    call takes the one-frame fast path; a loop's 0-d temporaries are locals of the entry, not
    arrays the caller allocates (a binary search: 11 us -> 3 us per call on the Xeon)."""
    a = np.sort(np.random.default_rng(0).random(999))
    f = cppcodegen.compile(bisect, fallback=False)
    for v in (a[500], 0.5, a[3], -1.0):
        assert f(a, v) == bisect(a, v)
    assert len(f._fast) == 1
    assert "_v{};" in cppcodegen.explain(bisect, a, 0.5).source
    assert len(f.variants[next(iter(f.variants))].plan.args) <= 4   # a, v, the error report


def scale(x, s):
    return x * s


def test_a_float_keyed_by_type_never_serves_an_array():
    x = np.arange(5.0)
    f = cppcodegen.compile(scale, fallback=False)
    np.testing.assert_array_equal(f(x, 2.0), x * 2.0)
    np.testing.assert_array_equal(f(x, 3.0), x * 3.0)
    np.testing.assert_array_equal(f(x, x), x * x)       # an array where the float was
    np.testing.assert_array_equal(f(x, x + 1), x * (x + 1))
    np.testing.assert_array_equal(f(x, 0.5), x * 0.5)
