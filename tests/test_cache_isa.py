"""CPU feature detection (runtime/cpu.py), the ``isa`` option, and one build per ISA: every ISA
this machine runs gives NumPy's results, its own cache entry and really different code."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import cppcodegen
from cppcodegen import config
from cppcodegen.runtime import cpu

REAL_CXX = shutil.which("g++") or shutil.which("clang++")
RUNNABLE = [isa for isa in cpu.ISAS if cpu.supports(isa)]


def test_detect_isa_matches_cpu_flags():
    flags, _model = cpu.cpu_info()
    isa = cpu.detect_isa()
    assert isa in cpu.ISAS and cpu.supports(isa)
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"} <= flags:
        assert isa == "avx512"
    elif {"avx2", "fma"} <= flags:
        assert isa == "avx2"
    else:
        assert isa == "scalar"
    assert cpu.cpu_info() is cpu.cpu_info()          # read once, cached


def test_detection_rules_on_fake_cpus():
    skylake = frozenset("sse2 avx avx2 fma avx512f avx512bw avx512dq avx512vl".split())
    knl = frozenset("sse2 avx avx2 fma avx512f avx512cd".split())   # no BW/DQ/VL
    haswell = frozenset("sse2 avx avx2 fma".split())
    assert cpu.supports("avx512", skylake) and not cpu.supports("avx512", knl)
    assert cpu.supports("avx2", knl) and cpu.supports("avx2", haswell)
    assert not cpu.supports("avx2", frozenset({"sse2", "avx"}))
    assert cpu.supports("scalar", frozenset())


def test_isa_flags():
    assert cpu.isa_flags("avx2") == ["-mavx2", "-mfma", "-mno-avx512f"]
    assert cpu.isa_flags("scalar") == ["-DCCG_NO_SIMD"]
    avx512 = cpu.isa_flags("avx512")
    if cpu.supports("avx512"):
        assert avx512 == ["-march=native"]
    else:
        assert {"-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl"} <= set(avx512)
    with pytest.raises(ValueError, match="unknown ISA"):
        cpu.isa_flags("neon")


def test_isa_keys_differ_and_name_the_cpu_for_native():
    keys = {isa: cpu.isa_key(isa) for isa in cpu.ISAS}
    assert len(set(keys.values())) == 3
    if cpu.isa_flags("avx512") == ["-march=native"]:
        assert keys["avx512"].count(":") == 2          # isa:flags:cpu-fingerprint


def test_option_isa_from_env_and_overrides(monkeypatch):
    monkeypatch.setenv("CPPCODEGEN_ISA", "scalar")
    opts = config.get_options()
    assert opts.isa == "scalar" and opts.resolved_isa() == "scalar"
    assert "-DCCG_NO_SIMD" in cppcodegen.pipeline.build_flags(opts)
    assert config.get_options({"isa": "native"}).resolved_isa() == cpu.detect_isa()
    with pytest.raises(ValueError, match="CPPCODEGEN_ISA"):
        config.get_options({"isa": "sse9"})
    monkeypatch.delenv("CPPCODEGEN_ISA")
    native, scalar = config.get_options(), config.get_options({"isa": "scalar"})
    assert native.code_key() != scalar.code_key()
    assert cpu.isa_key(cpu.detect_isa()) in native.code_key()


def test_isa_the_cpu_cannot_run_is_refused(monkeypatch):
    monkeypatch.setattr(cpu, "cpu_info", lambda: (frozenset({"sse2", "avx"}), "old cpu"))
    assert cpu.detect_isa() == "scalar"
    with pytest.raises(ValueError, match="cannot run avx2"):
        cpu.resolve_isa("avx2")
    assert cpu.isa_flags("avx512")[0] == "-mavx512f"     # explicit, not -march=native


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def row_sums(x):
    return x.sum(axis=1)


def int_mix(a, b):
    # vectorizable integer ops, so each ISA's build really differs
    return (a * 3 + b) - (a & b) + np.maximum(a, b)


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 40)).astype(np.float32)
    a = rng.integers(-1000, 1000, 77).astype(np.int32)
    b = rng.integers(-1000, 1000, 77).astype(np.int32)
    return x, a, b


def _disassembly(so) -> str:
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(so)], capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.skipif(REAL_CXX is None, reason="no C++ compiler")
def test_each_runnable_isa_gives_numpys_results_and_its_own_code(tmp_path):
    x, a, b = _inputs()
    sos = {}
    with cppcodegen.fresh_cache(dir=tmp_path) as cache:
        for isa in RUNNABLE:
            opts = {"isa": isa}
            np.testing.assert_allclose(cppcodegen.compile(softmax, options=opts)(x), softmax(x),
                                       rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(cppcodegen.compile(row_sums, options=opts)(x),
                                       row_sums(x), rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(cppcodegen.compile(int_mix, options=opts)(a, b),
                                          int_mix(a, b))
            sos[isa] = {p.parent.name: p for p in cache.glob("??/*/*.so")
                        if not any(p.parent.name in d for d in sos.values())}
            assert len(sos[isa]) == 3, f"{isa}: one new kernel entry per function"
        contents = [p.read_bytes() for d in sos.values() for p in d.values()]
        assert len(set(contents)) == len(contents)           # every .so differs
        if shutil.which("objdump"):
            for isa, entries in sos.items():
                text = "".join(_disassembly(p) for p in entries.values())
                assert ("zmm" in text) == (isa == "avx512"), isa
                if isa == "scalar":
                    assert "ymm" not in text


@pytest.mark.skipif(REAL_CXX is None, reason="no C++ compiler")
def test_env_isa_reaches_a_new_process(tmp_path):
    code = ("import numpy as np, cppcodegen\n"
            "f = cppcodegen.compile(lambda x: x * 2 + 1)\n"
            "print(f.explain(np.ones(8, np.float32)).command)\n")
    env = dict(os.environ, CPPCODEGEN_ISA="scalar", CPPCODEGEN_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "-DCCG_NO_SIMD" in out.stdout and "-march=native" not in out.stdout
