"""The measured parallel threshold (cppcodegen/autotune_threshold.py): when it is measured,
stored, reused, ignored, and that it decides which loops run on the calling thread. The
measurement is replaced by a fake except in one test, which checks its shape, never a time."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from cppcodegen import autotune, autotune_threshold as at, config
from cppcodegen.runtime import tuning

ON = {"tune": True}


def chain(a, b, c):
    """As cheap per element as the threshold's probe (two cheap ops): its threshold as measured."""
    return a * b + c


def costly(a, b, c):
    return np.exp(a) * b + np.sin(c) - a * c


@pytest.fixture(autouse=True)
def own_user_dir(tmp_path, monkeypatch):
    """The threshold is stored in the user's own cache directory: a private one per test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(at, "_USER_ROOT", {})
    return tmp_path / "xdg" / "cppcodegen"


def _store():
    return at.decisions(config.get_options(ON))


def _source(n, options=ON, fn=chain):
    x = np.linspace(-1, 1, n).astype(np.float32)
    return cppcodegen.explain(cppcodegen.compile(fn, options=options), x, x, x).source


@pytest.fixture
def fake(monkeypatch):
    """measure() replaced: threads pay from ``fake.elements`` on; the calls are counted."""
    class Fake:
        elements = 1 << 14
        calls = 0

        def __call__(self, opts):
            self.calls += 1
            return {"path": "threshold", "elements": self.elements, "times_us": {},
                    "load": 0.0, "busy": False}
    f = Fake()
    monkeypatch.setattr(at, "measure", f)
    monkeypatch.setattr(tuning, "threads", lambda: 2)
    return f


def test_default_is_measured_and_the_environment_can_fix_it(monkeypatch):
    assert config.Options().parallel_threshold == at.AUTO
    monkeypatch.setenv("CPPCODEGEN_PARALLEL_THRESHOLD", "4096")
    assert config.get_options().parallel_threshold == 4096


def test_small_graphs_never_measure_and_run_on_the_calling_thread(fake, own_user_dir):
    with cppcodegen.fresh_cache():
        assert "#pragma omp" not in _source(1000)
        assert fake.calls == 0 and not tuning.files(own_user_dir)


def test_first_big_compile_measures_later_ones_reuse(fake):
    with cppcodegen.fresh_cache():
        fake.elements = 1 << 14
        assert "omp parallel" in _source(1 << 15)              # 2^15 >= measured 2^14
        assert fake.calls == 1
        assert _store().get(at.key(2))["elements"] == 1 << 14
        fake.elements = 1 << 20                                 # not asked again: stored
        assert "omp parallel" in _source(1 << 16)
        assert fake.calls == 1


def test_the_stored_decision_decides_the_parallel_loops(fake):
    with cppcodegen.fresh_cache():
        _store().put(at.key(2), {"path": "threshold", "elements": 1 << 20})
        assert "#pragma omp" not in _source(1 << 15)            # below: calling thread
        assert "omp parallel" in _source(1 << 20)
        assert fake.calls == 0


def test_tuning_off_or_an_explicit_threshold_measures_nothing(fake, own_user_dir):
    with cppcodegen.fresh_cache():
        assert "omp parallel" not in _source(1 << 15, {"tune": False})   # static 2^19
        assert "omp parallel" in _source(1 << 19, {"tune": False})
        assert "omp parallel" in _source(1 << 14, {"tune": True, "parallel_threshold": 1 << 13})
        assert fake.calls == 0
        assert tuning.describe(own_user_dir) == []


def test_costly_elements_go_parallel_sooner_but_not_below_the_floor(fake):
    """exp and sin cost ~10 cheap ops: a kernel of them pays for the threads at a tenth of the
    measured threshold's elements, and never below schedule.SERIAL_BELOW (2^13)."""
    from cppcodegen.passes.schedule import SERIAL_BELOW
    with cppcodegen.fresh_cache():
        fake.elements = 1 << 17
        assert "omp parallel" not in _source(1 << 15)               # cheap: 2^15 < 2^17
        assert "omp parallel" in _source(1 << 15, fn=costly)        # ~11x the work per element
        assert "omp parallel" not in _source(SERIAL_BELOW // 2, fn=costly)
        assert fake.calls == 1


def test_symbolic_sizes_need_the_measurement(fake):
    with cppcodegen.fresh_cache():
        f = cppcodegen.compile(chain, options=ON, dynamic=True)
        x = np.ones(100, np.float32)
        src = cppcodegen.explain(f, x, x, x).source
        assert fake.calls == 1 and f"{1 << 14}" in src            # the per-call condition
        np.testing.assert_allclose(f(x, x, x), chain(x, x, x), rtol=1e-6)


def test_the_decision_is_shared_by_every_cache_dir(fake, own_user_dir):
    """It describes the machine: a fresh cache (a cold compile) does not measure again."""
    with cppcodegen.fresh_cache() as first:
        assert "omp parallel" in _source(1 << 15)
        assert not (first / "tuning").exists()
    with cppcodegen.fresh_cache():
        assert "omp parallel" in _source(1 << 15)
    assert fake.calls == 1
    assert _store().path.parent == own_user_dir / "tuning"


def test_provisional_decision_is_measured_again_once_when_quiet(fake, monkeypatch):
    monkeypatch.setattr(autotune, "_REMEASURED", {})
    with cppcodegen.fresh_cache():
        _store().put(at.key(2), {"path": "threshold", "elements": at.HIGH, "busy": True})
        monkeypatch.setattr(tuning, "busy", lambda: False)
        fake.elements = 1 << 15
        assert "omp parallel" in _source(1 << 16)
        assert _store().get(at.key(2))["elements"] == 1 << 15 and fake.calls == 1
        _source(1 << 17)
        assert fake.calls == 1


def test_a_failed_measurement_keeps_the_static_threshold(monkeypatch):
    def broken(opts):
        raise RuntimeError("no compiler today")
    monkeypatch.setattr(at, "measure", broken)
    monkeypatch.setattr(tuning, "threads", lambda: 2)
    with cppcodegen.fresh_cache():
        with pytest.warns(RuntimeWarning, match="parallel threshold"):
            src = _source(1 << 15)
        assert "omp parallel" not in src                          # 2^15 < static 2^19


def test_threshold_decisions_are_validated():
    with cppcodegen.fresh_cache():
        store = _store()
        for bad in ({"path": "threshold"}, {"path": "threshold", "elements": "8192"},
                    {"path": "threshold", "elements": 0}, {"path": "threshold", "elements": True}):
            with pytest.raises(ValueError):
                store.put(at.key(2), bad)
        store.put(at.key(2), {"path": "threshold", "elements": 8192, "times_us": {"8192": [1, 2]}})
        text = "\n".join(tuning.describe(store.path.parents[1]))
        assert "loops of >= 8192 elements run on all threads" in text


def test_real_measurement_has_its_shape_and_the_probes_numpys_results(monkeypatch):
    monkeypatch.setattr(at, "SIZES", (1 << 13, 1 << 14, 1 << 15))
    with cppcodegen.fresh_cache():
        opts = config.get_options(ON)
        d = at.measure(opts)
        assert tuning.valid(d) and at.LOW <= d["elements"] <= at.HIGH
        assert at._openmp_runtime() is not None       # one build, timed on 1 and all threads
        assert set(d["times_us"]) <= {str(n) for n in at.SIZES} and d["times_us"]
        x = np.linspace(-1, 1, 1 << 13, dtype=np.float32)
        for extra in ({"parallel_threshold": 0}, {"parallel": False}):
            np.testing.assert_array_equal(at._build(opts, **extra)(x, x[::-1].copy()),
                                          at._probe(x, x[::-1]))


def test_without_a_reachable_openmp_runtime_a_serial_build_is_timed(monkeypatch):
    monkeypatch.setattr(at, "SIZES", (1 << 13,))
    monkeypatch.setattr(at, "_openmp_runtime", lambda: None)
    built = []
    real = at._build
    monkeypatch.setattr(at, "_build", lambda opts, **extra: (built.append(extra),
                                                             real(opts, **extra))[1])
    with cppcodegen.fresh_cache():
        d = at.measure(config.get_options(ON))
    assert built == [{"parallel_threshold": 0}, {"parallel": False}]
    assert d["elements"] == at.HIGH and list(d["times_us"]) == [str(1 << 13)]


def test_options_as_keywords_of_compile():
    def double(x):
        return x * 2
    f = cppcodegen.compile(double, parallel_threshold=0)
    np.testing.assert_array_equal(f(np.arange(5.0)), np.arange(5.0) * 2)
    g = cppcodegen.compile(parallel=False)(double)
    np.testing.assert_array_equal(g(np.arange(3.0)), np.arange(3.0) * 2)
    with pytest.raises(ValueError, match="unknown cppcodegen option 'paralel'"):
        cppcodegen.compile(double, paralel=False)
