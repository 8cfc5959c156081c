"""Smoke tests for benchmarks/: workloads run under NumPy, the checker and report writers work.

Nothing here compiles C++ (CI time): the workloads run in plain NumPy, the report writers get a
fake result set, and one test runs ``python -m benchmarks.run --quick --only chain`` with the
compiler step allowed to fail (a failure is recorded, never fatal).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import measure, report
from benchmarks.peers import rebind_numpy
from benchmarks.workloads import CORE, WORKLOADS, as_tuple, nbytes_moved

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXPECTED_SHAPES = {
    "chain": [(2**16,)], "softmax": [(256, 256)], "layer_norm": [(512, 256)],
    "gelu": [(2**16,)], "black_scholes": [(2**14,), (2**14,)], "sum_axis0": [(512,)],
    "sum_axis1": [(512,)], "sum_all": [()], "pairwise_sqdist": [(128, 128)],
    "transpose_add": [(256, 256)], "chain_small": [(1000,)], "mlp": [(256, 128)],
}


def test_core_set_is_chain_softmax_layernorm():
    assert CORE == ("chain", "softmax", "layer_norm")


def test_every_workload_has_expected_shapes():
    assert set(WORKLOADS) == set(EXPECTED_SHAPES)


@pytest.mark.parametrize("name", sorted(EXPECTED_SHAPES))
def test_workload_numpy_outputs(name):
    w = WORKLOADS[name]
    inputs = w.inputs(quick=True)
    assert all(a.dtype == np.float32 for a in inputs)
    again = w.inputs(quick=True)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, again)), "inputs not seeded"
    out = as_tuple(w.fn(*inputs))
    assert [o.shape for o in out] == EXPECTED_SHAPES[name]
    assert all(o.dtype == np.float32 for o in out)
    assert all(np.isfinite(o).all() for o in out)
    assert nbytes_moved(inputs, out) > 0
    ok, msg = measure.check(out, out, w.magnitude(inputs, out) if w.magnitude else None)
    assert ok, msg


def test_full_sizes_match_the_spec():
    assert WORKLOADS["chain"].full_size == 2**24
    assert WORKLOADS["softmax"].full_size == (4096, 4096)
    assert WORKLOADS["layer_norm"].full_size == (8192, 1024)
    assert WORKLOADS["black_scholes"].full_size == 2**22
    assert WORKLOADS["sum_all"].full_size == (8192, 8192)
    assert WORKLOADS["chain_small"].unit == "us"


def test_check_flags_wrong_results():
    ref = (np.linspace(1, 2, 100, dtype=np.float32),)
    assert measure.check(ref, ref)[0]
    assert measure.check((ref[0] * np.float32(1 + 1e-6),), ref)[0]
    bad = ref[0].copy()
    bad[7] += 0.01
    ok, msg = measure.check((bad,), ref)
    assert not ok and "(7,)" in msg
    assert not measure.check((ref[0].astype(np.float64),), ref)[0]
    assert not measure.check((ref[0][:50],), ref)[0]
    assert not measure.check(ref + ref, ref)[0]


def test_sum_tolerance_scales_with_magnitude():
    w = WORKLOADS["sum_all"]
    (x,) = w.inputs(quick=True)
    ref = as_tuple(w.fn(x))
    sloppy = (np.float32(x.astype(np.float64).sum() + 1e-3),)   # a different summation order
    assert measure.check(as_tuple(sloppy[0]), ref, w.magnitude((x,), ref))[0]


def test_time_call_batches_fast_calls():
    t = measure.time_call(lambda: None, 3)
    assert t["repeats"] == 3 and t["calls_per_sample"] > 1 and t["time_s"] >= 0


def test_rebind_numpy_reuses_the_numpy_source():
    calls = []

    class FakeNp:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(np, name)

    w = WORKLOADS["black_scholes"]
    f = rebind_numpy(w.fn, FakeNp())
    out = as_tuple(f(*w.inputs(quick=True)))
    ref = as_tuple(w.fn(*w.inputs(quick=True)))
    assert all(np.array_equal(a, b) for a, b in zip(out, ref))
    assert {"sqrt", "log", "exp", "where"} <= set(calls)


def fake_doc():
    ok = lambda t, **kw: {"status": "ok", "time_s": t, **kw}
    return {
        "machine": {"cpu": "Fake CPU", "cores": 2, "threads": 2, "python": "3.x",
                    "numpy": np.__version__, "cxx": "g++ 0", "platform": "x",
                    "versions": {"numpy": np.__version__, "cppcodegen": "0.1"}},
        "settings": {"quick": True, "repeats": 3},
        "bandwidth": {"gbps": 20.0, "kernel": "fake triad"},
        "workloads": [
            {"name": "chain", "core": True, "unit": "ms", "bytes": 2 * 10**9, "systems": {
                "numpy": ok(0.4), "cppcodegen": ok(0.1, compile_cold_s=2.5, compile_warm_s=0.02),
                "numexpr": ok(0.2), "numba": {"status": "WRONG", "error": "output 0 differs"}}},
            {"name": "softmax", "core": True, "unit": "ms", "bytes": 10**6, "systems": {
                "numpy": ok(0.3), "cppcodegen": {"status": "failed", "error": "boom"}}},
            {"name": "chain_small", "core": False, "unit": "us", "bytes": 16000, "systems": {
                "numpy": ok(5e-6), "cppcodegen": ok(2e-6),
                "numexpr": {"status": "skipped", "error": "n/a"}}},
        ],
    }


def test_summary_speedups_and_bandwidth():
    s = report.summarize(fake_doc()["workloads"][0], 20.0)
    assert s["speedup_vs_numpy"] == pytest.approx(4.0)
    assert s["best_peer"] == "numexpr"               # numba is WRONG: never ranked
    assert s["speedup_vs_best_peer"] == pytest.approx(2.0)
    assert s["gbps"] == pytest.approx(20.0) and s["pct_bw"] == pytest.approx(100.0)


def test_report_writers(tmp_path):
    doc = fake_doc()
    table = report.format_table(doc)
    assert "chain *" in table and "4.00x" in table and "failed" in table and "us" in table
    core = report.format_core(doc)
    assert "chain" in core and "softmax" in core and "chain_small" not in core
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    report.write_json(doc, str(js))
    data = json.loads(js.read_text())
    assert data["workloads"][0]["summary"]["best_peer"] == "numexpr"
    assert data["workloads"][1]["systems"]["cppcodegen"]["error"] == "boom"
    report.write_markdown(doc, str(md))
    text = md.read_text()
    assert "| workload |" in text and "| chain * |" in text and "2.50/0.020" in text
    assert "softmax / cppcodegen: failed: boom" in text
    assert "chain / numba: WRONG" in text
    png = tmp_path / "s.png"
    if report.write_png(doc, str(png)):
        assert png.stat().st_size > 0


def test_run_quick_only_chain(tmp_path):
    out = tmp_path / "res" / "results.json"
    p = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "chain",
                        "--peers", "none", "--no-warm", "--json", str(out)],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    data = json.loads(out.read_text())
    assert [w["name"] for w in data["workloads"]] == ["chain"]
    systems = data["workloads"][0]["systems"]
    assert systems["numpy"]["status"] == "ok"
    assert systems["cppcodegen"]["status"] in ("ok", "failed", "WRONG")
    assert (out.parent / "results.md").exists()
    assert "core set" in p.stdout and "chain" in p.stdout


def test_a_crashing_system_costs_one_entry(tmp_path):
    out = tmp_path / "results.json"
    env = dict(os.environ, CPPCODEGEN_BENCH_CRASH="cppcodegen")
    p = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "chain_small",
                        "--peers", "none", "--no-warm", "--json", str(out)],
                       cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    systems = json.loads(out.read_text())["workloads"][0]["systems"]
    assert systems["numpy"]["status"] == "ok"
    assert systems["cppcodegen"]["status"] == "failed"
    assert "SIGSEGV" in systems["cppcodegen"]["error"]
