"""Measured choices (cppcodegen/autotune.py, runtime/tuning.py): the mechanism, never timing.

The suite runs with tuning off (conftest.py sets CPPCODEGEN_TUNE=0); these tests turn it on
per function (``options={"tune": True}``) and replace the measurement with a fake, or inject
decisions into the decisions file, then check which path each product takes, that the
decision is stored, reused (by other functions and other processes), part of the cache key,
visible, and that both candidates give NumPy's results.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen import autotune, config
from cppcodegen.cli import main as cli_main
from cppcodegen.runtime import tuning
from cppcodegen.runtime.cachedir import CacheWarning

ON = {"tune": True}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def product(a, b):
    return a @ b


def affine(a, b, c):
    return np.maximum(2.0 * (a @ b) + c, 0)


def _arrays(m, n, k, dtype=np.float32, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal((m, k)).astype(dtype), r.standard_normal((k, n)).astype(dtype)


def _store(opts=None):
    tuner = autotune.Tuner(opts or config.get_options(ON))
    return tuning.decisions(tuner.cache_dir(), tuner.machine())


def _key(dtype, m, n, k, batch=0):
    return tuning.matmul_key(np.dtype(dtype).name, m, n, k, batch, tuning.threads())


def _decision(path, gemm_ms=1.0, blas_ms=2.0, shape="64x64x64"):
    return {"path": path, "gemm_ms": gemm_ms, "blas_ms": blas_ms, "shape": shape,
            "dtype": "float32", "class": shape, "scaled": False}


@pytest.fixture
def fake_measure(monkeypatch):
    """measure_matmul replaced: BLAS 'wins' every class; the calls are counted."""
    calls = []

    def fake(dtype, m, n, k, batch, opts):
        calls.append((np.dtype(dtype).name, m, n, k, batch))
        return _decision("blas", shape=f"{m}x{n}x{k}")
    monkeypatch.setattr(autotune, "measure_matmul", fake)
    return calls


def _forms(fn, *args, options=ON):
    ex = cppcodegen.explain(cppcodegen.compile(fn, options=options), *args)
    return [k.form for k in ex.kernels], ex


def _calls_blas(f, *args) -> bool:
    """Whether ``f``'s kernel for ``args`` computes its product with BLAS (blas.h)."""
    return "ccg::blas_gemm" in cppcodegen.explain(f, *args).source


# -- the store ---------------------------------------------------------------------------

def test_buckets_and_keys():
    assert [tuning.bucket(n) for n in (0, 1, 2, 3, 5, 300, 362, 363, 1000, 2000)] == \
        [0, 1, 2, 4, 4, 256, 256, 512, 1024, 2048]
    assert _key(np.float32, 250, 260, 2000) == \
        f"matmul float32 256x256x2048 batch=0 threads={tuning.threads()}"
    assert tuning.matmul_key("float64", 64, 64, 64, 1, 2).endswith("batch=0 threads=2")
    assert tuning.matmul_key("float64", 64, 64, 64, 100, 2).endswith("batch=128 threads=2")
    # classes too big to time in the budget are timed at a scaled-down shape
    assert autotune.representative(2000, 2000, 2000, 0) == (0, 1024, 1024, 1024)
    assert autotune.representative(256, 256, 256, 100) == (64, 256, 256, 256)
    assert autotune.representative(30, 40, 50, 0) == (0, 32, 32, 64)


def test_tuning_is_off_in_the_suite_and_the_option_reads_the_environment(monkeypatch):
    assert config.get_options().tune is False
    monkeypatch.setenv("CPPCODEGEN_TUNE", "1")
    assert config.get_options().tune is True
    assert config.get_options({"tune": False}).tune is False
    monkeypatch.delenv("CPPCODEGEN_TUNE")
    assert config.get_options().tune is True          # the default outside the suite


def test_machine_description_names_what_decisions_depend_on():
    opts = config.get_options(ON)
    with cppcodegen.fresh_cache():
        desc = autotune.Tuner(opts).machine()
    assert set(desc) == {"cpu", "isa", "isa_key", "cores", "compiler", "package", "numpy",
                         "openmp_wait"}
    assert "OMP_WAIT_POLICY" in desc["openmp_wait"] or "GOMP_SPINCOUNT" in desc["openmp_wait"]
    assert desc["isa"] == opts.resolved_isa() and desc["cores"] == len(os.sched_getaffinity(0))
    assert tuning.machine_hash(desc) == tuning.machine_hash(dict(desc))
    assert tuning.machine_hash(desc) != tuning.machine_hash(dict(desc, isa="scalar"))


# -- the mechanism -----------------------------------------------------------------------

def test_off_means_the_static_rule_and_no_decisions_file(fake_measure):
    a, b = _arrays(64, 64, 64)
    created = {}
    with cppcodegen.fresh_cache(cache_entries=created):
        _store().put(_key(np.float32, 64, 64, 64), _decision("blas"))
        forms, ex = _forms(product, a, b, options={"tune": False})
        assert forms == ["gemm"]
        assert "tuning off" in str(ex) and "ccg::gemm" in str(ex.choices[0])
    assert not fake_measure


def test_first_compile_measures_writes_and_later_compiles_reuse(fake_measure):
    a, b = _arrays(60, 70, 64)
    c = np.ones(70, np.float32)
    with cppcodegen.fresh_cache() as root:
        f = cppcodegen.compile(affine, options=ON)
        np.testing.assert_allclose(f(a, b, c), affine(a, b, c), rtol=1e-5, atol=1e-5)
        assert fake_measure == [("float32", 60, 70, 64, 0)]
        assert _calls_blas(f, a, b, c)                 # the 'measured' BLAS path
        (path,) = tuning.files(root)
        data = json.loads(path.read_text())
        assert data["decisions"][_key(np.float32, 64, 64, 64)]["path"] == "blas"
        assert data["machine"]["cpu"] == autotune.Tuner(config.get_options(ON)).machine()["cpu"]
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        # another function of the same shape class, in this process and after the in-memory
        # caches are dropped (as in a new process): read back, not measured again
        g = cppcodegen.compile(product, options=ON)
        g(*_arrays(64, 64, 60))
        cppcodegen.clear_caches()
        h = cppcodegen.compile(product, options=ON)
        h(*_arrays(62, 66, 64))
        assert len(fake_measure) == 1
        assert _calls_blas(g, *_arrays(64, 64, 60)) and _calls_blas(h, *_arrays(62, 66, 64))
        other = cppcodegen.compile(product, options=ON)
        other(*_arrays(128, 128, 128))                 # another class: measured once more
        assert len(fake_measure) == 2


def test_injected_decisions_choose_the_path_and_the_epilogue_stays_fused():
    a, b = _arrays(64, 64, 64)
    c = np.linspace(-1, 1, 64).astype(np.float32)
    want = affine(a, b, c)
    with cppcodegen.fresh_cache():
        store = _store()
        store.put(_key(np.float32, 64, 64, 64), _decision("gemm", 0.5, 0.9))
        forms, ex = _forms(affine, a, b, c)
        assert forms == ["gemm", "flat"] or forms.count("gemm") == 1 and "extern" not in forms
        assert "measured: BLAS 0.9 ms vs ccg::gemm 0.5 ms at 64x64x64 float32" in str(ex)
        store.put(_key(np.float32, 64, 64, 64), _decision("blas", 0.9, 0.5))
        cppcodegen.clear_caches()
        forms, ex = _forms(affine, a, b, c)
        # the product calls BLAS from its kernel; scaling, bias and ReLU are one fused
        # kernel after it, and no NumPy step runs between them
        assert forms[0] == "gemm" and len(forms) == 2 and "extern" not in forms
        assert "ccg::blas_gemm" in ex.source
        assert "BLAS called from the kernel (cblas_?gemm): measured: BLAS 0.5 ms vs " \
            "ccg::gemm 0.9 ms" in str(ex)
        f = cppcodegen.compile(affine, options=ON)
        np.testing.assert_allclose(f(a, b, c), want, rtol=1e-5, atol=1e-5)


def test_a_changed_decision_never_loads_the_kernel_of_the_other_path():
    a, b = _arrays(64, 64, 64)
    with cppcodegen.fresh_cache():
        store = _store()
        key = _key(np.float32, 64, 64, 64)
        store.put(key, _decision("gemm"))
        f = cppcodegen.compile(product, options=ON)
        f(a, b)
        assert not _calls_blas(f, a, b)
        store.put(key, _decision("blas"))
        cppcodegen.clear_caches()          # as a new process would: the graph cache on disk
        g = cppcodegen.compile(product, options=ON)
        np.testing.assert_allclose(g(a, b), a @ b, rtol=1e-5, atol=1e-5)
        assert _calls_blas(g, a, b)


def test_decisions_are_reused_by_another_process(fake_measure):
    a, b = _arrays(64, 64, 64)
    with cppcodegen.fresh_cache() as root:
        cppcodegen.compile(product, options=ON)(a, b)
        assert len(fake_measure) == 1
        code = (
            "import numpy as np, cppcodegen\n"
            "from cppcodegen import autotune\n"
            "def boom(*a): raise AssertionError('measured again')\n"
            "autotune.measure_matmul = boom\n"
            "def product(a, b):\n    return a @ b\n"
            "f = cppcodegen.compile(product, options={'tune': True})\n"
            "x = np.ones((64, 64), np.float32)\n"
            "assert (f(x, x) == 64).all()\n"
            "print('ccg::blas_gemm' in cppcodegen.explain(f, x, x).source)\n")
        env = dict(os.environ, CPPCODEGEN_CACHE_DIR=str(root), PYTHONPATH=REPO)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "True"


def test_both_candidates_give_numpys_results_and_a_real_measurement_is_stored():
    with cppcodegen.fresh_cache() as root:
        opts = config.get_options(ON)
        for dtype in (np.float32, np.float64):
            a, b = _arrays(40, 24, 33, dtype)
            for path in ("gemm", "blas"):
                f = autotune.candidate(path, opts, 2, dtype)
                np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-5 if dtype == np.float32
                                           else 1e-12, atol=1e-5)
                token = autotune.FORCED.set(path)     # (explain compiles it again)
                try:
                    assert _calls_blas(f, a, b) == (path == "blas")
                finally:
                    autotune.FORCED.reset(token)
        d = autotune.measure_matmul(np.float32, 32, 32, 32, 0, opts)
        assert d["path"] in ("gemm", "blas") and d["gemm_ms"] > 0 and d["blas_ms"] > 0
        assert d["shape"] == "32x32x32" and not d["scaled"]
        # compiled with the real measurement: whichever path it picked, NumPy's result
        a, b = _arrays(32, 32, 32)
        g = cppcodegen.compile(product, options=ON)
        np.testing.assert_allclose(g(a, b), a @ b, rtol=1e-5, atol=1e-5)
        assert _key(np.float32, 32, 32, 32) in json.loads(tuning.files(root)[0].read_text())[
            "decisions"]


def test_symbolic_sizes_are_decided_by_the_traced_call():
    with cppcodegen.fresh_cache():
        _store().put(_key(np.float32, 64, 64, 64), _decision("blas"))
        _store().put(_key(np.float32, 128, 128, 128), _decision("gemm"))
        f = cppcodegen.compile(product, options=ON, dynamic=True)
        a, b = _arrays(64, 60, 66)
        np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-5, atol=1e-5)
        assert _calls_blas(f, a, b)
        a, b = _arrays(100, 90, 80)                    # the same variant serves other sizes
        np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-5, atol=1e-5)
        g = cppcodegen.compile(product, options=ON, dynamic=True)
        g(*_arrays(128, 128, 128))
        assert not _calls_blas(g, *_arrays(128, 128, 128))


def test_batched_products_are_a_class_of_their_own(fake_measure):
    r = np.random.default_rng(3)
    a = r.standard_normal((8, 32, 16)).astype(np.float64)
    b = r.standard_normal((8, 16, 24)).astype(np.float64)    # (one b for all: one product)
    with cppcodegen.fresh_cache():
        f = cppcodegen.compile(product, options=ON)
        np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-12)
    assert fake_measure == [("float64", 32, 24, 16, 8)]


def test_explain_names_every_product_and_why(fake_measure):
    def two(x, w, v):
        return (x @ w) @ v
    x, w = _arrays(64, 64, 64)
    v = np.ones((64, 1), np.float32)                   # a column: one matrix dimension is 1
    with cppcodegen.fresh_cache():
        ex = cppcodegen.explain(cppcodegen.compile(two, options=ON), x, w, v)
    text = [str(c) for c in ex.choices]
    assert len(text) == 2, text
    assert any("64x64x64 float32" in t and "measured: BLAS 2 ms vs ccg::gemm 1 ms" in t
               for t in text)
    assert any("64x1x64 float32" in t and "matrix-vector product" in t and "static rule" in t
               for t in text)
    assert all("test_tuning.py:" in t for t in text)
    assert "choice: matmul 64x64x64 float32" in str(ex)


def test_a_decision_measured_on_a_busy_machine_is_measured_again_once_when_quiet(monkeypatch):
    calls = []

    def fake(dtype, m, n, k, batch, opts):
        calls.append(m)
        return dict(_decision("gemm" if calls[1:] else "blas"), busy=len(calls) == 1, load=3.0)
    monkeypatch.setattr(autotune, "measure_matmul", fake)
    a, b = _arrays(64, 64, 64)
    with cppcodegen.fresh_cache():
        monkeypatch.setattr(tuning, "busy", lambda: True)
        forms, ex = _forms(product, a, b)
        assert "ccg::blas_gemm" in ex.source and "provisional: load 3.0 per core" in str(ex)
        forms, ex = _forms(product, a, b)              # still busy: kept, not measured again
        assert "ccg::blas_gemm" in ex.source and len(calls) == 1
        monkeypatch.setattr(tuning, "busy", lambda: False)
        forms, ex = _forms(product, a, b)              # quiet now: measured again, once
        assert forms == ["gemm"] and len(calls) == 2 and "provisional" not in str(ex)
        cppcodegen.clear_caches()
        forms, _ = _forms(product, a, b)
        assert forms == ["gemm"] and len(calls) == 2
        assert _store().get(_key(np.float32, 64, 64, 64))["busy"] is False


def test_a_failed_measurement_keeps_the_static_rule(monkeypatch):
    def broken(*args):
        raise RuntimeError("no compiler today")
    monkeypatch.setattr(autotune, "measure_matmul", broken)
    a, b = _arrays(64, 64, 64)
    with cppcodegen.fresh_cache() as root:
        with pytest.warns(RuntimeWarning, match="no compiler today"):
            forms, ex = _forms(product, a, b)
        assert forms == ["gemm"] and "static rule" in str(ex)
        assert not any(json.loads(p.read_text())["decisions"] for p in tuning.files(root))


# -- the file: corruption, concurrency -----------------------------------------------------

def test_a_damaged_decisions_file_is_rebuilt_with_a_warning(fake_measure):
    a, b = _arrays(64, 64, 64)
    with cppcodegen.fresh_cache():
        store = _store()
        store.put(_key(np.float32, 32, 32, 32), _decision("gemm"))
        for damage in ('{"format": 1, "decisions": {"x": {"path": "maybe"}}}', "{not json",
                       b"\xff\xfe\x00"):
            mode = "wb" if isinstance(damage, bytes) else "w"
            with open(store.path, mode) as fh:
                fh.write(damage)
            cppcodegen.clear_caches()
            with pytest.warns(CacheWarning, match="damaged"):
                f = cppcodegen.compile(product, options=ON)
                np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-5, atol=1e-5)
            data = json.loads(store.path.read_text())
            assert data["decisions"][_key(np.float32, 64, 64, 64)]["path"] == "blas"
    assert len(fake_measure) == 3


def _writer(cache_dir, desc, worker, count):
    store = tuning.Decisions(cache_dir, desc)
    for i in range(count):
        store.put(f"test {worker} {i}", {"path": "gemm" if i % 2 else "blas", "why": "test"})
        store.measure_once(f"shared {i}", lambda: {"path": "gemm", "why": f"by {worker}"})


def test_concurrent_writers_keep_every_decision(tmp_path):
    desc = {"cpu": "test", "isa": "scalar"}
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(tmp_path, desc, w, 15)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    data = json.loads(tuning.Decisions(tmp_path, desc).path.read_text())
    keys = set(data["decisions"])
    assert {f"test {w} {i}" for w in range(4) for i in range(15)} <= keys
    assert {f"shared {i}" for i in range(15)} <= keys and len(keys) == 75
    assert not [p for p in (tmp_path / "tuning").iterdir() if p.name.endswith(".tmp")]


# -- visible: python -m cppcodegen cache info / tune -----------------------------------------

def test_cache_info_lists_decisions_and_tune_sweeps(fake_measure, capsys):
    with cppcodegen.fresh_cache() as root:
        assert cli_main(["cache", "info", "--dir", str(root)]) == 0
        assert "no measured decisions" in capsys.readouterr().out
        assert cli_main(["tune", "--sizes", "32,64", "--dtypes", "float32",
                         "--dir", str(root)]) == 0
        out = capsys.readouterr().out
        assert f"matmul float32 64x64x64 batch=0 threads={tuning.threads()}" in out and "blas" in out
        assert len(fake_measure) == 2
        assert cli_main(["tune", "--sizes", "32", "--dtypes", "float32", "--dir", str(root)]) == 0
        assert len(fake_measure) == 2                  # decided already: shown, not measured
        assert cli_main(["cache", "info", "--dir", str(root)]) == 0
        out = capsys.readouterr().out
        assert "2 decisions for" in out and "matmul float32 32x32x32" in out
        assert "BLAS 2 ms, ccg::gemm 1 ms" in out
        assert cli_main(["cache", "clear", "--dir", str(root)]) == 0
        assert not tuning.files(root)


def test_rounds_keep_the_quiet_time_and_flag_rounds_that_disagree(monkeypatch):
    """Two rounds of timing: each candidate's minimum over both; a candidate whose rounds
    differ by more than UNSTEADY (another process took the cores in one of them) makes the
    measurement unsteady, and such a decision is provisional (measured again later)."""
    script = iter([[1.0e-3, 2.0e-3], [1.1e-3, 30.0e-3]])
    monkeypatch.setattr(autotune, "time_in_turn", lambda fns, budget: next(script))
    monkeypatch.setattr(autotune, "PAUSE_S", 0.0)
    best, steady = autotune.time_rounds([None, None])
    assert best == [1.0e-3, 2.0e-3] and steady is False
    script = iter([[1.0e-3, 2.0e-3], [1.2e-3, 1.9e-3]])
    assert autotune.time_rounds([None, None]) == ([1.0e-3, 1.9e-3], True)

    monkeypatch.setattr(autotune, "time_rounds", lambda fns: ([2.0e-3, 1.0e-3], False))
    monkeypatch.setattr(tuning, "load", lambda: 0.1)
    with cppcodegen.fresh_cache():
        d = autotune.measure_matmul(np.float32, 16, 16, 16, 0, config.get_options(ON))
    assert d["path"] == "blas" and d["busy"] is True and d["steady"] is False
    assert "provisional: unsteady timings" in autotune.why(d, 2)


def matrix_power_by_squaring(A, p):
    result = np.eye(A.shape[0])
    base = A.copy()
    while p > 0:
        if p % 2 == 1:
            result = result @ base
        base = base @ base
        p = p // 2
    return result


def test_a_product_inside_a_compiled_loop_takes_the_measured_path(fake_measure):
    """BLAS 'wins' the timing: the product inside the compiled while loop calls it from the
    kernel too (it was ccg::gemm whatever the measurement: a NumPy step cannot run there, but
    BLAS is called from the kernel), the loop stays compiled, and explain says why."""
    with cppcodegen.fresh_cache():
        A = np.random.default_rng(1).standard_normal((48, 48)) / 48
        f = cppcodegen.compile(matrix_power_by_squaring, options=ON)
        np.testing.assert_allclose(f(A, np.int64(13)), matrix_power_by_squaring(A, 13),
                                   rtol=1e-12, atol=1e-15)
        ex = cppcodegen.explain(f, A, np.int64(13))
        assert ex.choices and all(c.path == "blas" for c in ex.choices)
        assert _calls_blas(f, A, np.int64(13))
        assert [k.form for k in ex.kernels].count("control") >= 1


def blocks_times_matrix(x, w):
    out = np.empty((x.shape[0], x.shape[1], w.shape[1]))
    for b in cppcodegen.prange(x.shape[0]):
        out[b] = np.tanh(x[b] @ w)
    return out


def test_a_product_in_a_prange_body_is_right_on_the_threads(fake_measure):
    """A product whose measured path is BLAS, in a loop body the threads share: each call
    inside the parallel region computes with ccg::gemm (no BLAS threads nested in OpenMP's);
    the results are NumPy's."""
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((8, 40, 48)), rng.standard_normal((48, 40))
    with cppcodegen.fresh_cache():
        f = cppcodegen.compile(blocks_times_matrix, options=ON)
        np.testing.assert_allclose(f(x, w), blocks_times_matrix(x, w), rtol=1e-12, atol=1e-14)


def gram_of(x):
    return x.T @ x


def test_a_matrix_times_its_transpose_calls_blas_syrk_without_measuring(fake_measure):
    """x.T @ x: BLAS's syrk does half the multiplies (NumPy's matmul calls it), so the
    product calls BLAS whatever a measurement of a general product would find."""
    x = np.random.default_rng(4).standard_normal((300, 64))
    with cppcodegen.fresh_cache():
        f = cppcodegen.compile(gram_of, options=ON)
        np.testing.assert_allclose(f(x), x.T @ x, rtol=1e-12, atol=1e-12)
        ex = cppcodegen.explain(f, x)
    assert not fake_measure
    assert "ccg::blas_gemm" in ex.source and "its own transpose" in str(ex.choices[0])
    assert "cblas_?syrk" in str(ex.choices[0])


def product_and_gram(a, b):
    return a @ b, a.T @ a


def test_two_products_of_one_shape_on_one_line_are_both_explained(fake_measure):
    """``a @ b, a.T @ a``: one line, one shape, two decisions (measured; syrk): a choice line
    each (explain showed the last one only)."""
    a, b = np.random.default_rng(6).standard_normal((2, 40, 40))
    with cppcodegen.fresh_cache():
        f = cppcodegen.compile(product_and_gram, options=ON)
        for got, want in zip(f(a, b), product_and_gram(a, b)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        lines = [str(c) for c in cppcodegen.explain(f, a, b).choices]
    assert len(lines) == 2 and sum("cblas_?syrk" in t for t in lines) == 1, lines
