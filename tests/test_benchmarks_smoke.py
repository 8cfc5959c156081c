"""Smoke tests for benchmarks/: workloads run under NumPy, the checker and report writers work.

Nothing here compiles C++ (CI time): the workloads run in plain NumPy, the report writers get a
fake result set (thread scaling, sum accuracy, overhead, loop workloads and README sections
included), and tests run ``python -m benchmarks.run --quick --only chain`` (and loop_dot) with
the compiler step allowed to fail (a failure is recorded, never fatal).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import measure, report
from benchmarks.peers import rebind_numpy
from benchmarks.workloads import CORE, LOOP, QUICK, SUITE_OF, WORKLOADS, as_tuple, nbytes_moved

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXPECTED_SHAPES = {
    "chain": [(2**16,)], "softmax": [(256, 256)], "layer_norm": [(512, 256)],
    "gelu": [(2**16,)], "black_scholes": [(2**14,), (2**14,)], "sum_axis0": [(512,)],
    "sum_axis1": [(512,)], "sum_all": [()], "pairwise_sqdist": [(128, 128)],
    "transpose_add": [(256, 256)], "chain_small": [(1000,)], "mlp": [(256, 128)],
    "stencil": [(200, 200)], "cumsum_rows": [(256, 256)],
}
F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
# the loop workloads (benchmarks/loop_workloads.py), quick sizes: (shape, dtype) per output
LOOP_EXPECTED = {
    "loop_dot": [((), F64)], "loop_drawdown": [((10000,), F64), ((), F64)],
    "loop_syrk": [((100, 100), F64)], "loop_jacobi": [((64, 64), F64), ((), I64)],
    "loop_power": [((), F64), ((200,), F64)], "thomas": [((100, 100), F64)],
    "lut_gather": [((256, 256), F32), ((256,), F32)], "poisson_while": [((32, 32), F64), ((), I64)],
    "heat_swap": [((64, 64), F64)], "lu_elim": [((24, 24), F64)],
    "loop_matmul": [((16, 16), F64)], "loop_life": [((20, 20), I64)],
    "loop_median3": [((20, 20), F64)], "loop_convection": [((21, 21), F64)],
    "loop_primes": [((25,), I64)], "loop_positive_mean": [((), F64)],
    "loop_burgers": [((101,), F64)], "loop_bounce": [((100,), F64)] * 4,
}


def test_core_set_is_chain_softmax_layernorm():
    assert CORE == ("chain", "softmax", "layer_norm")


def test_every_workload_has_expected_shapes():
    assert set(WORKLOADS) - set(SUITE_OF) == set(EXPECTED_SHAPES)
    assert set(LOOP) == set(LOOP_EXPECTED)
    for name, suite in SUITE_OF.items():          # a suite's workloads carry its tag
        assert suite.tag in WORKLOADS[name].tags, name
    assert all("loop" in WORKLOADS[n].tags for n in LOOP)
    assert not any("loop" in WORKLOADS[n].tags for n in EXPECTED_SHAPES)


def test_quick_runs_each_suites_quick_ones():
    assert SUITE_OF["loop_dot"].quick == ("loop_dot",)
    assert set(QUICK) == set(EXPECTED_SHAPES) | {n for n, s in SUITE_OF.items() if n in s.quick}


@pytest.mark.parametrize("name", sorted(LOOP_EXPECTED))
def test_loop_workload_outputs(name):
    from benchmarks.loop_workloads import NUMPY_VECTORIZED
    w = WORKLOADS[name]
    inputs = w.inputs(quick=True)
    again = w.inputs(quick=True)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, again)), "inputs not seeded"
    out = as_tuple(w.fn(*inputs))
    assert all(np.array_equal(a, b) for a, b in zip(inputs, again)), "inputs changed"
    assert [(o.shape, o.dtype) for o in out] == LOOP_EXPECTED[name]
    assert all(np.isfinite(o).all() for o in out)
    mag = w.magnitude(inputs, out) if w.magnitude else None
    twin = NUMPY_VECTORIZED.get(name)
    if twin is not None:                      # what the NumPy column times
        ok, msg = measure.check(as_tuple(twin(*inputs)), out, mag)
        assert ok, msg


def test_numba_lut_gather_is_the_same_computation():
    pytest.importorskip("numba")
    from benchmarks.loop_workloads import numba_impls
    w = WORKLOADS["lut_gather"]
    inputs = w.inputs(quick=True)
    ok, msg = measure.check(as_tuple(numba_impls()["lut_gather"](*inputs)), as_tuple(w.fn(*inputs)))
    assert ok, msg


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


def fake_doc_extras():
    """fake_doc plus the extra report parts: 1-thread times, sum accuracy, overhead, import."""
    doc = fake_doc()
    chain, _softmax, small = doc["workloads"]
    chain["systems"]["cppcodegen"]["time_1t_s"] = 0.15          # threads help: 1.5x
    small["size"] = [1000]
    small["systems"]["cppcodegen"].update(time_1t_s=1e-6, compile_cold_s=0.4,
                                          compile_warm_s=0.012)   # threads hurt: flagged
    doc["workloads"].append({"name": "sum_all", "core": False, "unit": "ms", "bytes": 4 * 10**6,
                             "systems": {
        "numpy": {"status": "ok", "time_s": 0.01, "rel_error_vs_f64": 5.6e-9},
        "cppcodegen": {"status": "ok", "time_s": 0.008, "rel_error_vs_f64": 3.4e-5,
                       "time_1t_s": 0.0081},
        "numba": {"status": "ok", "time_s": 0.009, "rel_error_vs_f64": 2.0e-8}}})
    doc["workloads"].append({"name": "layer_norm", "core": True, "unit": "ms", "bytes": 10**6,
                             "systems": {
        "numpy": {"status": "ok", "time_s": 0.02, "tiny_call_s": 9e-6, "tiny_size": [8, 16]},
        "cppcodegen": {"status": "ok", "time_s": 0.01, "compile_cold_s": 1.7,
                       "compile_warm_s": 0.045, "tiny_call_s": 3e-6, "tiny_size": [8, 16]}}})
    doc["workloads"].append({"name": "mlp", "core": False, "unit": "ms", "bytes": 10**6,
                             "systems": {
        "numpy": {"status": "ok", "time_s": 0.05, "time_1t_s": 0.09},
        "cppcodegen": {"status": "ok", "time_s": 0.04, "time_1t_s": 0.07}}})
    doc["import"] = {"import_s": 0.09, "numpy_import_s": 0.15, "runs": 3, "heavy_modules": []}
    doc["date"], doc["command"] = "2030-01-02 03:04 UTC", "make bench"
    return doc


def test_thread_scaling_report():
    doc = fake_doc_extras()
    sc = report.scaling(doc["workloads"][0])
    assert sc["thread_speedup"] == pytest.approx(1.5) and not sc["slower_with_threads"]
    assert report.scaling(doc["workloads"][2])["slower_with_threads"]
    assert not report.scaling(doc["workloads"][3])["slower_with_threads"]   # within noise
    flags = report.scaling_flags(doc)
    assert len(flags) == 1 and flags[0].startswith("chain_small:")
    rows = {r[0]: r for r in report.scaling_rows(doc)}
    assert set(rows) == {"chain", "chain_small", "sum_all", "mlp"}
    assert rows["chain_small"][-1] == "SLOWER WITH THREADS"
    assert rows["mlp"][4] == "90.0 ms" and rows["mlp"][5] == "50.0 ms"       # NumPy (BLAS)
    text = report.format_all(doc)
    assert "thread scaling (1 thread vs 2 threads)" in text and "SLOWER WITH THREADS" in text


def test_sum_accuracy_report():
    doc = fake_doc_extras()
    rows = report.accuracy_rows(doc)
    assert [(r[1], r[2]) for r in rows] == [("numpy", "5.60e-09"), ("cppcodegen", "3.40e-05"),
                                            ("numba", "2.00e-08")]
    assert report.accuracy_flags(doc) and "larger than NumPy's" in report.accuracy_flags(doc)[0]
    summary = report.summarize(doc["workloads"][3], None)
    assert summary["rel_error_vs_f64"]["numba"] == pytest.approx(2e-8)


def test_rel_error_against_float64_sum():
    from benchmarks.workloads import rel_error
    w = WORKLOADS["sum_all"]
    (x,) = w.inputs(quick=True)
    exact = w.exact(x)
    assert exact[0].dtype == np.float64
    assert rel_error(as_tuple(w.fn(x)), exact) < 1e-5
    assert rel_error((np.asarray(exact[0] * 1.01),), exact) == pytest.approx(0.01)


def test_overhead_report():
    doc = fake_doc_extras()
    rows = {r[0]: r for r in report.overhead_rows(doc)}
    assert set(rows) == {"chain_small", "layer_norm"}
    assert rows["chain_small"][1:] == ("0.40", "12.0", "2.0", "5.0", "1000")
    assert rows["layer_norm"][1:] == ("1.70", "45.0", "3.0", "9.0", "8x16")
    flags = report.overhead_flags(doc)
    assert any("layer_norm: cold compile" in f for f in flags)
    assert any("layer_norm: warm start" in f for f in flags)
    assert not any("chain_small" in f for f in flags)
    assert "import cppcodegen: 90 ms" in report.import_line(doc)
    doc["import"]["import_s"] = 0.2
    assert any(f.startswith("import cppcodegen 200 ms") for f in report.overhead_flags(doc))


def test_overhead_workloads_are_tagged():
    tagged = {n for n, w in WORKLOADS.items() if "overhead" in w.tags}
    assert tagged == {"softmax", "layer_norm", "chain_small"}
    for n in ("softmax", "layer_norm"):
        w = WORKLOADS[n]
        assert w.tiny_size is not None
        assert as_tuple(w.fn(*w.tiny_inputs()))[0].size <= 1024


def test_markdown_has_every_section(tmp_path):
    doc = fake_doc_extras()
    md = tmp_path / "r.md"
    report.write_markdown(doc, str(md))
    text = md.read_text()
    for part in ("## Thread scaling: 1 thread vs 2 threads", "## Float32 sum accuracy",
                 "## Compile time and per-call overhead", "| sum_all | cppcodegen | 3.40e-05 |",
                 "| layer_norm | 1.70 | 45.0 | 3.0 | 9.0 | 8x16 |", "import cppcodegen: 90 ms",
                 "## Flags", "- date: 2030-01-02 03:04 UTC", "- command: `make bench`"):
        assert part in text, part
    js = tmp_path / "r.json"
    report.write_json(doc, str(js))
    data = json.loads(js.read_text())
    assert data["workloads"][3]["summary"]["rel_error_vs_f64"]["cppcodegen"] == 3.4e-5
    assert data["workloads"][0]["summary"]["thread_speedup"] == pytest.approx(1.5)
    assert any(f.startswith("chain_small:") for f in data["flags"])


def fake_loop_doc():
    doc = fake_doc_extras()
    ok = lambda t, **kw: {"status": "ok", "time_s": t, **kw}
    doc["workloads"] += [
        {"name": "loop_dot", "core": False, "unit": "ms", "bytes": 10**6, "tags": ["loop"],
         "size": [10**7], "reference_s": 1.5, "description": "for i: s += a[i]*b[i]",
         "systems": {"numpy": ok(0.005, vectorized="vec_dot"),
                     "cppcodegen": ok(0.01, time_1t_s=0.01, compile_cold_s=0.5),
                     "numba": ok(0.009), "jax.jit": ok(0.02),
                     "numexpr": {"status": "skipped", "error": "n/a"}}},
        {"name": "thomas", "core": False, "unit": "ms", "bytes": 10**6, "tags": ["loop"],
         "size": [100, 100], "reference_s": 0.03, "description": "Thomas",
         "systems": {"numpy": ok(0.02), "cppcodegen": ok(0.004),
                     "numba": {"status": "WRONG", "error": "output 0 differs"},
                     "jax.jit": {"status": "failed", "error": "boom"}}},
    ]
    return doc


def test_loop_section_report(tmp_path):
    doc = fake_loop_doc()
    main, parts = report.split_suites(doc)
    assert [s.tag for s, _ in parts] == ["loop"]
    suite, loops = parts[0]
    assert [w["name"] for w in loops["workloads"]] == ["loop_dot", "thomas"]
    assert "loop_dot" not in [w["name"] for w in main["workloads"]]
    assert report.section_peers(loops) == ["numba", "jax.jit"]        # numexpr only skipped
    rows = {r[0]: r for r in report.section_rows(loops)}
    assert rows["loop_dot"][1:6] == ("10000000", "1.50 s", "5 ms", "10.0 ms", "0.50x")
    assert rows["loop_dot"][6:10] == ("9 ms", "0.90x", "20.0 ms", "2.00x")
    assert rows["thomas"][2] == "= NumPy" and rows["thomas"][5] == "5.00x"
    assert rows["thomas"][6] == "WRONG" and rows["thomas"][8] == "failed"
    text = report.format_all(doc)
    assert "loop workloads" in text and "thomas / numba: WRONG" in text
    assert "| loop_dot |" not in report.main_markdown(main)
    md = report.to_markdown(doc)
    assert "## Loop workloads" in md and "| loop_dot | 10000000 | 1.50 s |" in md
    assert "- thomas: Thomas" in md and "Flags:" not in md
    loops["workloads"][1]["systems"]["cppcodegen"]["time_1t_s"] = 0.002    # 1 thread faster
    md = report.section_markdown(suite, loops)
    assert "Flags:" in md and "- thomas: cppcodegen with 2 threads" in md


README_TEXT = """# proj

## Benchmarks

Intro kept.

<!-- bench-table -->
stale table
{end}
## Next section

kept too
"""


@pytest.mark.parametrize("closing", [True, False])
def test_readme_section_is_replaced(tmp_path, closing):
    path = tmp_path / "README.md"
    path.write_text(README_TEXT.format(end="<!-- /bench-table -->\n" if closing else ""))
    doc = fake_doc_extras()
    report.update_readme(str(path), doc)
    text = path.read_text()
    assert "stale table" not in text and "Intro kept." in text
    assert text.count(report.README_START) == 1 and text.count(report.README_END) == 1
    assert text.index(report.README_START) < text.index("| chain * |") \
        < text.index(report.README_END) < text.index("## Next section")
    assert text.rstrip().endswith("kept too")
    assert "# cppcodegen benchmark results" not in text          # README has its own heading
    assert "### Thread scaling" in text and "- date: 2030-01-02 03:04 UTC" in text
    report.update_readme(str(path), doc)                         # idempotent
    assert path.read_text() == text


def _loops(doc):
    main, parts = report.split_suites(doc)
    return main, dict((s.tag, d) for s, d in parts)["loop"]


LOOPS_START, LOOPS_END = SUITE_OF["loop_dot"].markers


def test_readme_loop_section(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(README_TEXT.format(end="<!-- /bench-table -->\n"))
    doc = fake_loop_doc()
    report.update_readme(str(path), doc)                 # both kinds: both sections
    text = path.read_text()
    assert text.count(LOOPS_START) == 1 and text.count(LOOPS_END) == 1
    assert text.index(report.README_END) < text.index(LOOPS_START) \
        < text.index("| loop_dot |") < text.index(LOOPS_END) < text.index("## Next")
    assert text.index("| chain * |") < text.index(report.README_END)
    report.update_readme(str(path), doc)                 # idempotent
    assert path.read_text() == text
    _main, loops = _loops(doc)
    loops["workloads"][0]["systems"]["cppcodegen"]["time_s"] = 0.0025
    report.update_readme(str(path), loops)               # a loop-only run: the rest stays
    new = path.read_text()
    assert "| loop_dot | 10000000 | 1.50 s | 5 ms | 2.5 ms | 2.00x |" in new
    assert new.split(LOOPS_START)[0] == text.split(LOOPS_START)[0]
    main, _unused = _loops(doc)
    main["workloads"][0]["systems"]["numpy"]["time_s"] = 0.8
    report.update_readme(str(path), main)                # a run without loops: theirs stays
    newer = path.read_text()
    assert newer.split(LOOPS_START)[1] == new.split(LOOPS_START)[1]
    assert "8.00x" in newer.split(LOOPS_START)[0]


def test_forced_isa_run_has_a_section_of_its_own(tmp_path):
    """CPPCODEGEN_ISA=avx2 make bench on an AVX-512 machine: its figures go between their own
    markers (after the other sections), the CPU's own tables stay, and its header names the
    ISA the kernels were built for and the choices measured in its workloads."""
    path = tmp_path / "README.md"
    path.write_text(README_TEXT.format(end="<!-- /bench-table -->\n"))
    report.update_readme(str(path), fake_doc_extras())
    native = path.read_text()
    doc = fake_doc()
    doc["machine"].update(isa="avx2", isa_native="avx512", isa_forced="avx2")
    doc["workloads"][0]["systems"]["cppcodegen"]["tuning"] = ["matmul float32 64: NumPy"]
    assert report.update_readme(str(path), doc) == ["bench-avx2"]
    text = path.read_text()
    start, end = "<!-- bench-avx2 -->", "<!-- /bench-avx2 -->"
    a, b = text.index(start), text.index(end) + len(end)
    assert text[:a].rstrip() + text[b:] == native.rstrip() + "\n"   # the rest as it was
    assert text.index(report.README_END) < a < text.index("## Next section")
    section = text[a:b]
    assert "cppcodegen kernels: avx2 (CPPCODEGEN_ISA=avx2" in section
    assert "matmul float32 64: NumPy (chain)" in section
    assert "| chain | 400.0 ms | 100.0 ms | 4.00x | numexpr | 2.00x |" in section
    assert "| softmax | 300.0 ms | failed | - | - | - |" in section
    report.update_readme(str(path), doc)                 # idempotent
    assert path.read_text() == text
    doc["machine"]["isa"] = "avx512"                     # forced to what the CPU has: the tables
    assert report.update_readme(str(path), doc) == ["bench-table"]


def test_readme_without_marker_is_an_error(tmp_path):
    path = tmp_path / "README.md"
    path.write_text("# nothing here\n")
    with pytest.raises(ValueError):
        report.update_readme(str(path), fake_doc())


def test_readme_from_json_measures_nothing(tmp_path):
    js, readme = tmp_path / "results.json", tmp_path / "README.md"
    report.write_json(fake_doc_extras(), str(js))
    readme.write_text(README_TEXT.format(end=""))
    p = subprocess.run([sys.executable, "-m", "benchmarks.run", "--from-json", str(js),
                        "--readme", str(readme)], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "SLOWER WITH THREADS" in p.stdout
    assert "| chain_small | 1 us | 2 us | 0.50x |" in readme.read_text()


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
    assert "import" in data and "import cppcodegen" in p.stdout
    # under `make test` the command is reported as started by make
    assert data["date"] and "python3 -m benchmarks.run" in data["command"]


def test_run_quick_loop_workload(tmp_path):
    out = tmp_path / "results.json"
    p = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--tag", "loop",
                        "--only", "loop_dot,chain", "--peers", "none", "--no-warm",
                        "--no-scaling", "--json", str(out)],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    (w,) = json.loads(out.read_text())["workloads"]
    assert w["name"] == "loop_dot" and w["tags"] == ["loop", "python_loop"]
    assert w["reference_s"] > 0
    assert w["systems"]["numpy"]["status"] == "ok"
    assert w["systems"]["numpy"]["vectorized"] == "vec_dot"
    assert w["systems"]["cppcodegen"]["status"] in ("ok", "failed", "WRONG")
    assert "loop workloads" in p.stdout


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


def test_each_suite_gets_its_own_readme_section(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(README_TEXT.format(end="<!-- /bench-table -->\n"))
    doc = fake_loop_doc()
    extra = dict(doc["workloads"][-1], name="mvt_like", tags=["linalg"], description="mvt")
    doc["workloads"].append(extra)
    report.update_readme(str(path), doc)
    text = path.read_text()
    start, end = SUITE_OF["loop_dot"].markers
    lin_start, lin_end = next(s for s in report.suites() if s.tag == "linalg").markers
    assert text.index(end) < text.index(lin_start) < text.index("| mvt_like |") \
        < text.index(lin_end) < text.index("## Next")
    assert "| mvt_like |" not in text.split(lin_start)[0]       # only in its own section
    report.update_readme(str(path), doc)                       # idempotent
    assert path.read_text() == text
