"""The sanitizer option: CPPCODEGEN_SANITIZE / options={'sanitize': ...} builds kernels with
-fsanitize=<value> -fno-sanitize-recover=all, as part of the cache key (``make sanitize``
runs the whole suite and the fuzzer that way, with libasan preloaded into Python)."""
import numpy as np

import cppcodegen
from cppcodegen import config
from cppcodegen.pipeline import build_flags
from helpers import assert_matches_numpy, run_compiled, run_numpy


def test_flags_and_environment(monkeypatch):
    monkeypatch.delenv("CPPCODEGEN_SANITIZE", raising=False)     # make sanitize sets it
    plain = build_flags(config.get_options({}))
    assert not any(f.startswith("-fsanitize") for f in plain)
    monkeypatch.setenv("CPPCODEGEN_SANITIZE", "address,undefined")
    opts = config.get_options({})
    assert opts.sanitize == "address,undefined"
    flags = build_flags(opts)
    assert "-fsanitize=address,undefined" in flags and "-fno-sanitize-recover=all" in flags
    # everything else is unchanged: the sanitized build differs from the plain one only there
    assert [f for f in flags if f not in plain] == [
        "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
        "-g1"]


def _kernel(x, k):
    return np.left_shift(k, k & 63) // (k | 1) + np.abs(k), (x * 2.5).astype(np.int32), x.sum()


def test_undefined_behaviour_sanitizer_kernel_runs_clean():
    """UBSan needs no preloading: a kernel built with it runs in this process, on the values
    where C++ has undefined behaviour (shifts >= width, INT_MIN // -1, float->int out of
    range) and NumPy has answers; -fno-sanitize-recover=all would abort the process."""
    i64 = np.iinfo(np.int64)
    k = np.array([i64.min, -1, 0, 1, 63, 64, 65, i64.max, -64, 7] * 3, np.int64)
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.5, -0.0, 3e9, -3e9, 2.0] * 3)
    fn = cppcodegen.compile(_kernel, options={"sanitize": "undefined,float-cast-overflow"})
    got = run_compiled(fn, x, k)
    assert_matches_numpy(got, run_numpy(_kernel, x, k), ulp=0)
    build = cppcodegen.explain(fn, x, k)
    assert "-fsanitize=undefined,float-cast-overflow" in " ".join(build.command)


def test_misaligned_inputs_under_ubsan():
    """NumPy arrays need not be aligned to their element size (np.frombuffer at an odd
    offset; dask chunks unpickled from a network frame). Kernels read them through memcpy
    (ccg::ld), so UBSan's alignment check stays quiet in scalar loops, vector broadcasts,
    strided and partial vector loads; a finding would abort the child process."""
    from helpers import run_isolated
    run_isolated("""
        import numpy as np, cppcodegen
        from helpers import assert_matches_numpy, run_compiled, run_numpy

        def f(x, y, k):
            return (x[::3] * y[5] + np.sqrt(np.abs(x[::3])), (x[:, None] + y[::-1][:x.size]).sum(),
                    k * 3 + k[::2].sum(), (x.astype(np.float64) - y[:x.size]).max())

        def misaligned(a, offset=1):
            buf = np.zeros(a.nbytes + 16, np.uint8)
            out = np.frombuffer(buf.data, a.dtype, a.size, offset=offset).reshape(a.shape)
            out[...] = a
            assert not out.flags.aligned
            return out

        r = np.random.default_rng(0)
        x = misaligned(r.standard_normal(41).astype(np.float32), 1)
        y = misaligned(r.standard_normal(67), 3)
        k = misaligned(r.integers(-9, 9, 29, dtype=np.int64), 5)
        for opts in ({}, {"vectorize": False}):
            fn = cppcodegen.compile(f, options=dict(opts, sanitize="undefined"))
            assert_matches_numpy(run_compiled(fn, x, y, k), run_numpy(f, x, y, k), ulp=4,
                                 atol=1e-12)
        print("ok")
    """)


def _audited(x, k, s):
    return ((x * 3).astype(np.int32), (x - 1).astype(np.int64), np.left_shift(k, s),
            np.right_shift(k, s), k * k + np.abs(k) - k // (s | 1), x.sum(), (x * 2).max(),
            k.sum(axis=0), (x > 0).sum(axis=1))


def test_generated_code_is_free_of_undefined_behaviour_by_construction():
    """An audit of the generated C++ that holds for any program, checked on one that has
    every risky construct: float->int conversions only through ccg::cast / ccg::convert
    (NaN and out-of-range values give INT_MIN like x86, never a bare cast); shifts only
    through ccg::left_shift / right_shift (counts < 0 or >= the width handled); integer
    overflow wraps under -fwrapv; parallel partial results are indexed by fixed chunks,
    never by thread number, so no array is sized by a thread count OpenMP may not grant."""
    r = np.random.default_rng(5)
    x = r.uniform(-1e10, 1e10, (300, 257))
    k = r.integers(-2**62, 2**62, (300, 257))
    s = r.integers(-3, 70, (300, 257))
    # UBSan with float-cast-overflow checks every conversion at run time (values of 1e10 do
    # not fit int32); -fno-sanitize-recover=all would abort on the first finding
    fn = cppcodegen.compile(_audited, options={"parallel_threshold": 0,
                                               "sanitize": "undefined,float-cast-overflow"})
    # ints exact; the float sum within (n-1) * eps * sum|x| of NumPy's (summation order)
    assert_matches_numpy(run_compiled(fn, x, k, s), run_numpy(_audited, x, k, s),
                         atol=x.size * np.finfo(float).eps * np.abs(x).sum())
    ex = cppcodegen.explain(fn, x, k, s)
    assert "-fwrapv" in ex.command
    code = "\n".join(line.split("//")[0] for line in ex.source.splitlines())
    import re
    assert "ccg::cast<int32_t>" in code or "ccg::convert<int32_t>" in code
    assert not re.search(r"[^<]<<[^<]|[^>]>>[^>=]", code.replace("<<<", "")), "a bare shift"
    assert "ccg::left_shift" in code and "ccg::right_shift" in code
    assert "omp_get_thread_num" not in code and "omp_get_num_threads" not in code
    assert "partial[" in code or "part[" in code          # the chunked parallel reductions
