"""Compiled functions called with Dask arrays (local threaded scheduler; the cluster tests are
in test_dask.py): which layers a call builds, and results equal to NumPy's on the computed
arrays -- elementwise and broadcasting, split reductions (var/std by Chan's formula, argmax
with global indices), rechunking where a reduction comes back, and a clear error for stencils.
"""
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import cppcodegen  # noqa: E402
from cppcodegen.integrations import dask as ccg_dask  # noqa: E402
from cppcodegen.errors import UnsupportedError  # noqa: E402

pytestmark = pytest.mark.xdist_group("dask_arrays")

rng = np.random.default_rng(7)
X32 = rng.standard_normal((240, 36)).astype(np.float32) + 10
X64 = rng.standard_normal((240, 36)) * 2 + 1e5          # a large mean stresses var
XI = rng.integers(-40, 40, (240, 36)).astype(np.int32)
CHUNKS = (60, 12)                                       # 4 x 3 blocks, all the same shape


def run(fn, *arrays, chunks=CHUNKS):
    cf = cppcodegen.compile(fn)
    with dask.config.set(scheduler="threads"):
        out = cf(*[da.from_array(a, chunks=chunks) if k == 0 else a      # the rest: NumPy
                   for k, a in enumerate(arrays)])
        got = dask.compute(out)[0]
    for o, g in zip(out if isinstance(out, tuple) else (out,),
                    got if isinstance(got, tuple) else (got,)):
        assert o.shape == np.shape(g) and o.dtype == np.asarray(g).dtype    # the metadata
    return out, got


def check(got, want, rtol=1e-6, atol=0.0):
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert np.shape(g) == np.shape(w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def layers(arr):
    return [name.split("-")[1] for name in arr.dask.layers if name.startswith("ccg-")]


def test_elementwise_is_one_blockwise_layer_per_graph():
    def f(x, y, s):
        return np.exp(x) * y + s
    out, got = run(lambda x, y, s: f(x, y, s), X32, X32, 2.5)
    cf = cppcodegen.compile(f)
    out = cf(da.from_array(X32, chunks=CHUNKS), da.from_array(X32, chunks=CHUNKS), 2.5)
    assert isinstance(out, da.Array) and out.chunks == ((60,) * 4, (12,) * 3)
    assert layers(out) == ["f"]                     # the user's own function, per chunk
    check(got, f(X32, X32, 2.5), rtol=1e-6)
    check(out.compute(scheduler="threads"), f(X32, X32, 2.5), rtol=1e-6)


def test_broadcasting_transposes_and_numpy_arguments():
    w = rng.standard_normal(36).astype(np.float32)
    b = rng.standard_normal((36, 240)).astype(np.float32)
    out, got = run(lambda x, w, b: x * w + b.T, X32, w, b)
    check(got, X32 * w + b.T, rtol=1e-6)
    cf = cppcodegen.compile(lambda x, b: x * 2 - b.T)
    with dask.config.set(scheduler="threads"):          # two dask arrays, chunked differently
        got = cf(da.from_array(X32, chunks=(60, 12)), da.from_array(b, chunks=(9, 80))).compute()
    check(got, X32 * 2 - b.T, rtol=1e-6)


@pytest.mark.parametrize("name, fn, x, rtol", [
    ("sum", lambda x: x.sum(), X32, 1e-5),
    ("mean0", lambda x: x.mean(axis=0), X32, 1e-6),
    ("max_scaled", lambda x: np.max(x, axis=0) * 2, X32, 0),
    ("min", lambda x: x.min(), XI, 0),
    ("prod", lambda x: (x / 10).prod(axis=1), X32, 1e-5),
    ("isum", lambda x: x.sum(axis=0), XI, 0),
    ("any", lambda x: np.any(x > 38, axis=0), XI, 0),
    ("all", lambda x: np.all(x > -39, axis=1), XI, 0),
    ("var", lambda x: np.var(x, axis=0), X64, 1e-10),
    ("std_ddof", lambda x: np.std(x, axis=1, ddof=1), X64, 1e-10),
    ("var_all_f32", lambda x: np.var(x), X32, 1e-5),
    ("var_int", lambda x: np.var(x), XI, 1e-12),
    ("manual_var", lambda x: ((x - x.mean(axis=0, keepdims=True)) ** 2).mean(axis=0), X64, 1e-10),
    ("two_outputs", lambda x: (x.mean(0), x.std(0)), X64, 1e-10),
    ("argmax", lambda x: x.argmax(), X32, 0),
    ("argmin0", lambda x: np.argmin(x, axis=0), XI, 0),
    ("argmax1", lambda x: (x * 2).argmax(axis=1), X64, 0),
])
def test_reductions_along_chunked_axes(name, fn, x, rtol):
    out, got = run(fn, x)
    check(got, fn(x), rtol=rtol)
    if name in ("var", "sum", "argmax"):
        assert "reduction" not in layers(out)       # our layers: chunk steps, combine, post
        assert any(n.startswith("ccg-") and "aggregate" in n for n in out.dask.layers)


def test_var_is_as_accurate_as_numpy():
    x = np.full(4000, 1e8) + rng.standard_normal(4000)      # naive E[x^2]-E[x]^2 fails
    out, got = run(lambda x: np.var(x), x, chunks=250)
    assert abs(got - np.var(x)) <= 1e-9 * np.var(x)


def test_argmax_ties_and_nans_pick_the_first():
    x = np.zeros((40, 40))
    x[30, 5] = x[3, 35] = 1.0                  # equal maxima in different blocks
    out, got = run(lambda x: x.argmax(), x, chunks=(10, 10))
    assert got == np.argmax(x)
    x[20, 2] = x[7, 30] = np.nan
    out, got = run(lambda x: (x.argmin(), x.argmax(axis=0)), x, chunks=(10, 10))
    check(got, (np.argmin(x), np.argmax(x, axis=0)))


def test_reduction_broadcast_back_rechunks_that_axis():
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    out, got = run(softmax, X32)                    # chunked along the reduced axis
    assert out.chunks == ((60,) * 4, (36,))
    check(got, softmax(X32), rtol=1e-5, atol=1e-7)


def test_uneven_chunks_and_edge_blocks():
    out, got = run(lambda x: x.sum(axis=0) * 0.5, X64, chunks=(70, 10))
    check(got, X64.sum(axis=0) * 0.5, rtol=1e-12)
    out, got = run(lambda x: np.tanh(x) - x, X64, chunks=(70, 10))
    check(got, np.tanh(X64) - X64, rtol=1e-12)


def test_any_first_task_of_a_fresh_worker_loads_from_the_cache():
    """A worker compiles the variant of the first block it gets; which block that is, the
    scheduler decides. The client had served a (1, 1, 3) block of the var/std fold with the
    (1, n0, n1) variant it traced first, so a worker that happened to fold std's partials
    first traced (1, 1, n0) itself: one build on a worker, now and then (seen under
    sanitizers). Every first call a fresh process can make must be a cache load."""
    from cppcodegen.integrations import chunks
    from cppcodegen.api import CompiledFunction

    @cppcodegen.compile
    def var(x):
        return np.var(x, axis=0), np.std(x)

    with cppcodegen.fresh_cache():
        var(da.from_array(X64, chunks=(60, 10)))       # builds the graph: compiles on samples
        pair = chunks._pair_kernel("m2")
        for shape in ((1, 1, 3), (1, 10, 3), (1, 6, 3)):
            fresh = CompiledFunction(pair.fn, pair.backend, pair.options, dynamic=True)
            ccg_dask.start_counting_builds()
            fresh(np.ones(shape), np.ones(shape))
            assert ccg_dask.builds_counted() == 0, f"{shape}: a fresh process compiled"
        chunk_kernels = [k for k in chunks._TWINS.values() if "m2_chunk" in k.__name__]
        assert chunk_kernels
        for k in chunk_kernels:
            for shape in ((60, 10), (60, 6)):
                fresh = CompiledFunction(k.fn, k.backend, k.options, dynamic=True)
                ccg_dask.start_counting_builds()
                fresh(np.ones(shape))
                assert ccg_dask.builds_counted() == 0, f"{k.__name__} {shape}"


def test_size_dependent_functions_use_the_global_sizes():
    out, got = run(lambda x: x / x.shape[0], X64)
    check(got, X64 / 240, rtol=1e-15)


@pytest.mark.parametrize("name, fn, chunks", [
    ("diff", lambda x: x[2:] - x[:-2], CHUNKS),
    ("smooth", lambda x: 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:], (64, 36)),
    ("laplace", lambda x: x[1:-1, 2:] + x[1:-1, :-2] + x[2:, 1:-1] + x[:-2, 1:-1]
     - 4 * x[1:-1, 1:-1], (50, 10)),
    ("short_last_chunk", lambda x: np.tanh(x[:, 3:] - 1e5) - x[:, :-3], (70, 17)),
])
def test_stencils_run_with_the_neighbours_of_each_chunk(name, fn, chunks):
    out, got = run(fn, X64, chunks=chunks)
    assert out.npartitions > 1 and any("overlap" in n for n in out.dask.layers)
    check(got, fn(X64), rtol=1e-13, atol=1e-12)


def test_windows_along_unchunked_axes_are_plain_blockwise():
    out, got = run(lambda x: x[:, 1:] - x[:, :-1], X64, chunks=(60, 36))
    assert out.chunks == ((60,) * 4, (35,))
    check(got, X64[:, 1:] - X64[:, :-1], rtol=1e-13, atol=1e-12)


def test_stencils_that_cannot_run_per_chunk_say_so():
    cf = cppcodegen.compile(lambda x: (x[1:] - x[:-1]).sum(axis=0))     # and a reduction
    with pytest.raises(UnsupportedError, match=r"axis 0 .*neighbours up to 1 .*rechunk"):
        cf(da.from_array(X64, chunks=CHUNKS))
    with dask.config.set(scheduler="threads"):       # unchunked along that axis: fine
        got = cf(da.from_array(X64, chunks=(240, 12))).compute()
    check(got, (X64[1:] - X64[:-1]).sum(axis=0), rtol=1e-12, atol=1e-9)
    strided = cppcodegen.compile(lambda x: x[::2] + 1)
    with pytest.raises(UnsupportedError, match=r"axis 0 of argument 0"):
        strided(da.from_array(X64, chunks=CHUNKS))


def test_no_kernel_runs_on_empty_arrays_while_building_the_graph():
    seen = []

    def f(x):
        seen.append(x.shape)
        return np.sqrt(np.abs(x)).sum(axis=0)
    cf = cppcodegen.compile(f)
    cf(da.from_array(X64, chunks=CHUNKS))
    assert all(0 not in s for s in seen)


def _gomp():
    import ctypes
    import ctypes.util
    return ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")


def test_task_threads_are_per_thread_and_restored():
    gomp, seen = _gomp(), {}

    def task():
        before = gomp.omp_get_max_threads()
        with ccg_dask.task_threads(1):
            seen["inside"] = gomp.omp_get_max_threads()
        seen["restored"] = gomp.omp_get_max_threads() == before
    gomp.omp_set_num_threads(2)
    t = threading.Thread(target=task)
    t.start()
    t.join()
    assert seen == {"inside": 1, "restored": True}
    assert gomp.omp_get_max_threads() == 2          # this thread: untouched


def test_tasks_on_the_calling_thread_leave_its_threads_alone():
    gomp = _gomp()
    gomp.omp_set_num_threads(2)
    cf = cppcodegen.compile(lambda x: np.sqrt(np.abs(x)) + 1)
    with dask.config.set(scheduler="sync"):                 # tasks run on this thread
        got = cf(da.from_array(X64, chunks=CHUNKS)).compute()
    check(got, np.sqrt(np.abs(X64)) + 1)
    assert gomp.omp_get_max_threads() == 2


def test_without_dask_calls_are_unchanged():
    code = textwrap.dedent("""
        import sys, numpy as np, cppcodegen
        f = cppcodegen.compile(lambda x: x + 1)
        try:
            f(object())
        except TypeError as e:
            assert "cannot take an argument of type object" in str(e), e
        else:
            raise SystemExit("no TypeError")
        assert "dask" not in sys.modules       # dask itself is never imported
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
