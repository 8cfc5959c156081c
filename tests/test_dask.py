"""Compiled functions on a real Dask cluster: a LocalCluster of two worker processes.

The client compiles every per-chunk kernel before it submits; the workers share the kernel
cache directory (inherited through the environment) and must only load: their build count
is 0. Results are compared with NumPy on the computed arrays. One cluster for the module.
"""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import cppcodegen  # noqa: E402
from cppcodegen.integrations import dask as ccg_dask  # noqa: E402

pytestmark = pytest.mark.xdist_group("dask_cluster")


@pytest.fixture(scope="module")
def client():
    with cppcodegen.fresh_cache():
        saved = dict(os.environ)
        cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                           dashboard_address=":0", silence_logs=40)
        _restore(saved)             # the Nanny sets OMP_NUM_THREADS & co. in this process
        try:
            with distributed.Client(cluster) as c:
                c.run(ccg_dask.start_counting_builds)
                c.run(_record_graph_cache_misses)
                yield c
        finally:
            cluster.close()
            _restore(saved)


def _restore(saved):
    for k in set(os.environ) - set(saved):
        del os.environ[k]
    os.environ.update(saved)


def _worker_builds(client):
    return sorted(client.run(ccg_dask.builds_counted).values())


_MISSES: list = []


def _record_graph_cache_misses():
    """On a worker: keep the compiler's "graph cache miss" records (they name the key's
    parts), so a worker build can be explained by the part that differs."""
    import logging

    class Keep(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("graph cache miss"):
                _MISSES.append(record.getMessage())
    logger = logging.getLogger("cppcodegen")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Keep(logging.DEBUG))


def _graph_cache_misses():
    return list(_MISSES)


def _stored_parts():
    """The key parts of every graph entry in the cache directory."""
    from cppcodegen.runtime import build, cachedir, graphcache
    root = build.cache_root(cachedir.default_cache_dir())
    out = []
    for path in graphcache.entries(root):
        with open(path, "rb") as fh:
            out.append((path.stem[:16], pickle.load(fh).get("parts")))
    return out


def _assert_workers_built_nothing(client):
    from cppcodegen.runtime import graphcache
    package = os.path.dirname(cppcodegen.__file__)
    if set(client.run(graphcache.source_stamp, package).values()) != {
            graphcache.source_stamp(package)}:
        pytest.skip("the compiler's sources were edited while this test ran: the workers "
                    "rebuild, rightly (the results were checked)")
    assert _worker_builds(client) == [0, 0], (
        f"the workers built: {client.run(_graph_cache_misses)}; the client stored "
        f"{_stored_parts()}")


def _expected_builds(distinct_shapes):
    """Builds of one per-chunk kernel on the client: one for all chunk sizes (symbolic
    sizes), whatever the number of distinct chunk shapes."""
    return 1


def _client_builds(fn, *args):
    ccg_dask.start_counting_builds()
    out = fn(*args)
    return out, ccg_dask.builds_counted()


def test_chain_softmax_layer_norm_on_the_cluster(client):
    # defined here, so they travel by value (cloudpickle), as functions in __main__ do
    @cppcodegen.compile
    def chain(a, b, c):
        return np.exp(a) * b + np.sin(c) - a * c

    @cppcodegen.compile
    def softmax(x):
        m = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=-1, keepdims=True)

    eps = 1e-5

    @cppcodegen.compile
    def layer_norm(x, w, b):                        # a closure over eps
        mu = x.mean(axis=-1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w + b

    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((1000, 96)).astype(np.float32) for _ in range(3))
    w, bias = (rng.standard_normal(96).astype(np.float32) for _ in range(2))
    A, B, C = (da.from_array(v, chunks=(300, 96)) for v in (a, b, c))    # 300,300,300,100

    r, n = _client_builds(chain, A, B, C)
    assert isinstance(r, da.Array) and r.chunks == A.chunks and r.dtype == np.float32
    assert n == _expected_builds(2)
    np.testing.assert_allclose(r.compute(), chain.fn(a, b, c), rtol=1e-5, atol=1e-5)

    r, n = _client_builds(softmax, A)
    assert n == _expected_builds(2)
    np.testing.assert_allclose(r.compute(), softmax.fn(a), rtol=1e-5, atol=1e-7)

    r, n = _client_builds(layer_norm, A, w, bias)
    assert n == _expected_builds(2)
    np.testing.assert_allclose(r.compute(), layer_norm.fn(a, w, bias), rtol=1e-4, atol=1e-4)
    _assert_workers_built_nothing(client)


def test_variance_over_chunked_axes_on_the_cluster(client):
    @cppcodegen.compile
    def var(x):
        return np.var(x, axis=0), np.std(x)

    rng = np.random.default_rng(1)
    x = rng.standard_normal((4000, 24)) * 3 + 1e6      # a large mean: naive formulas fail
    X = da.from_array(x, chunks=(500, 10))
    v, s = var(X)
    assert v.chunks == ((10, 10, 4),) and s.shape == ()
    v, s = client.compute([v, s], sync=True)
    np.testing.assert_allclose(v, np.var(x, axis=0), rtol=1e-9)
    np.testing.assert_allclose(s, np.std(x), rtol=1e-9)
    _assert_workers_built_nothing(client)


def test_reductions_and_rows_on_the_cluster(client):
    @cppcodegen.compile
    def stats(x, y):
        return (x * y).sum(axis=0) / 7.0

    rng = np.random.default_rng(2)
    x = rng.standard_normal((900, 50)).astype(np.float32)
    y = rng.standard_normal((900, 50)).astype(np.float32)
    X, Y = da.from_array(x, chunks=(200, 25)), da.from_array(y, chunks=(300, 50))
    got = client.compute(stats(X, Y), sync=True)
    np.testing.assert_allclose(got, stats.fn(x, y), rtol=1e-4, atol=1e-5)
    assert got.dtype == np.float32
    _assert_workers_built_nothing(client)


def test_a_worker_unpickles_one_object_and_compiles_nothing(client):
    @cppcodegen.compile
    def scale(x):
        return x * 3.0 + 1.0

    X = da.from_array(np.arange(12.0).reshape(6, 2), chunks=(2, 2))
    np.testing.assert_array_equal(scale(X).compute(), np.arange(12.0).reshape(6, 2) * 3 + 1)
    payload = distributed.protocol.pickle.dumps(scale)
    assert len(payload) < 4000           # the function's code and a key, no machine code

    def objects_and_builds(data):
        from distributed.protocol.pickle import loads
        from cppcodegen.integrations import dask as d
        before = d.builds_counted()
        first, second = loads(data), loads(data)
        # the tasks of scale(X) ran this very object: its variant is loaded once
        return first is second, len(first.variants), d.builds_counted() - before
    for same, variants, builds in client.run(objects_and_builds, payload).values():
        assert same and variants <= 1 and builds == 0


def test_tokenize_is_deterministic_across_processes():
    code = textwrap.dedent("""
        import numpy as np, cppcodegen
        from dask.base import tokenize
        def f(x):
            return np.exp(x) + 1
        print(tokenize(cppcodegen.compile(f)))
        print(tokenize(cppcodegen.compile(f, options={"fuse": False})))
    """)
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert outs[0] == outs[1] and outs[0][0] != outs[0][1]


def _negate(x):
    return -x


@cppcodegen.compile
def _triple(x):
    return x * 3


def test_a_decorated_module_function_pickles_by_name():
    data = pickle.dumps(_triple)
    assert len(data) < 200 and b"_triple" in data
    assert pickle.loads(data) is _triple


def test_a_function_defined_in_main_travels_by_value():
    code = textwrap.dedent("""
        import sys, cloudpickle, numpy as np, cppcodegen
        offset = 0.5
        @cppcodegen.compile
        def shifted_exp(x):
            return np.exp(x) + offset
        sys.stdout.buffer.write(cloudpickle.dumps(shifted_exp))
    """)
    data = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    import cloudpickle
    f = cloudpickle.loads(data)                 # this process has no such __main__ function
    assert isinstance(f, cppcodegen.CompiledFunction) and not f.variants
    assert cloudpickle.loads(data) is f
    x = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(f(x), np.exp(x) + 0.5, rtol=1e-15)


def test_pickle_round_trip_in_one_process_gives_the_same_object():
    cf = cppcodegen.compile(_negate)
    assert pickle.loads(pickle.dumps(cf)) is cf
    import cloudpickle

    k = 3.0

    @cppcodegen.compile
    def closure(x):
        return x * k

    back = cloudpickle.loads(cloudpickle.dumps(closure))
    assert back is closure
    np.testing.assert_array_equal(back(np.ones(4)), np.full(4, 3.0))
