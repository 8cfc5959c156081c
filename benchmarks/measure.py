"""Measuring: correctness check, timing, memory bandwidth, warm-start compile time.

In:  zero-argument callables and NumPy reference results.
Out: plain dicts (JSON-ready) -- nothing here prints.

- ``check``: shapes, dtypes and values against NumPy (rtol 1e-4, atol 1e-5 against a per-element
  error scale: ``|ref|`` by default, a workload's ``magnitude`` hook for sums/matmuls).
- ``time_call``: first a pause of ``SETTLE_S``, so the threads of whatever ran before (OpenBLAS's
  keep spinning ~0.1 s after a call, and took a core from the next system timed in the same
  process: every system of a workload is timed in one process, after NumPy's reference run),
  have gone to sleep; then one warm-up call excluded, then the median over ``repeats`` samples;
  calls faster than ~2 ms are batched so a sample is long enough for the clock.
- ``bandwidth``: a STREAM-like triad ``a + s*b`` compiled by cppcodegen, with a NumPy copy as floor.
- ``warm_start``: a new Python process, pointed at the populated cache, times its first call.
- ``single_thread``: a new process with every thread variable at 1 (OpenMP reads
  OMP_NUM_THREADS when the library loads), reusing the populated cache, times cppcodegen (and
  NumPy, for BLAS workloads) at 1 thread.
- ``import_time``: ``import cppcodegen`` in fresh processes, after ``import numpy``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RTOL, ATOL = 1e-4, 1e-5
MIN_SAMPLE_S = 2e-3
SETTLE_S = 0.25
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check(got: tuple, ref: tuple, magnitude: tuple | None = None,
          rtol: float = RTOL, atol: float = ATOL) -> tuple[bool, str]:
    """(ok, message). A message names the first output that differs and its worst element."""
    if len(got) != len(ref):
        return False, f"returned {len(got)} outputs, NumPy returns {len(ref)}"
    for i, (g, r) in enumerate(zip(got, ref)):
        if g.shape != r.shape:
            return False, f"output {i}: shape {g.shape} != NumPy {r.shape}"
        if g.dtype != r.dtype:
            return False, f"output {i}: dtype {g.dtype} != NumPy {r.dtype}"
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        scale = np.abs(r64) if magnitude is None else np.abs(magnitude[i])
        err = np.abs(g64 - r64)
        allowed = atol + rtol * scale
        same_nan = np.isnan(g64) & np.isnan(r64)
        bad = ~((err <= allowed) | same_nan)
        if bad.any():
            j = np.unravel_index(int(np.argmax(np.where(bad, err / allowed, 0))), bad.shape) \
                if bad.ndim else ()
            return False, (f"output {i}: {int(bad.sum())} of {bad.size} elements differ; "
                           f"at {tuple(int(k) for k in j)} got {float(g64[j]):.7g} vs NumPy {float(r64[j]):.7g}")
    return True, "ok"


def time_call(call, repeats: int) -> dict:
    """Median seconds per call (warm-up excluded) and the spread of the samples."""
    time.sleep(SETTLE_S)
    t0 = time.perf_counter()
    call()                                              # warm-up, not counted
    first = time.perf_counter() - t0
    number = 1 if first >= MIN_SAMPLE_S else min(10000, int(MIN_SAMPLE_S / max(first, 1e-7)) + 1)
    samples = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        samples.append((time.perf_counter() - t0) / number)
    return {"time_s": statistics.median(samples), "min_s": min(samples),
            "max_s": max(samples), "repeats": len(samples), "calls_per_sample": number}


def _triad(a, b):
    return a + 3.0 * b


def bandwidth(n: int, repeats: int, cpp_module=None) -> dict:
    """Memory bandwidth in GB/s (1e9 bytes/s), STREAM style (best sample): a triad
    ``a + s*b`` over ``n`` float32s compiled by cppcodegen (3 arrays of traffic), and a NumPy
    copy (2 arrays) as a floor. ``gbps`` is the better of the two, so a slow compiled triad
    cannot make every workload look bandwidth-bound; ``kernel`` says which one it was."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out = {"n": n, "triad_gbps": None}
    if cpp_module is not None and hasattr(cpp_module, "compile"):
        try:
            f = cpp_module.compile(_triad)
            ok, msg = check((np.asarray(f(a, b)),), (_triad(a, b),))
            if ok:
                t = time_call(lambda: f(a, b), max(repeats, 5))
                out["triad_gbps"] = 3 * a.nbytes / t["min_s"] / 1e9
            else:
                out["note"] = f"compiled triad wrong: {msg}"
        except Exception as e:
            out["note"] = f"compiled triad failed: {type(e).__name__}: {str(e)[:200]}"
    else:
        out["note"] = "cppcodegen.compile unavailable"
    dst = np.empty_like(a)
    t = time_call(lambda: np.copyto(dst, a), max(repeats, 5))
    out["numpy_copy_gbps"] = 2 * a.nbytes / t["min_s"] / 1e9
    if out["triad_gbps"] and out["triad_gbps"] >= out["numpy_copy_gbps"]:
        out.update(gbps=out["triad_gbps"], kernel="cppcodegen triad a + s*b")
    else:
        out.update(gbps=out["numpy_copy_gbps"], kernel="numpy copy")
        if out["triad_gbps"]:
            out.setdefault("note", f"compiled triad only {out['triad_gbps']:.1f} GB/s")
    return out


_WARM_SCRIPT = r"""
import json, os, sys, time
t_start = time.perf_counter()
name, quick, options = sys.argv[1], sys.argv[2] == "1", json.loads(sys.argv[3])
from benchmarks.workloads import WORKLOADS
w = WORKLOADS[name]
inputs = w.inputs(quick)
before = sum(len(f) for _, _, f in os.walk(os.environ["CPPCODEGEN_CACHE_DIR"]))
t0 = time.perf_counter()
import cppcodegen
t1 = time.perf_counter()
f = cppcodegen.compile(w.fn, options=options) if options else cppcodegen.compile(w.fn)
f(*inputs)
t2 = time.perf_counter()
after = sum(len(f) for _, _, f in os.walk(os.environ["CPPCODEGEN_CACHE_DIR"]))
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1, "new_cache_files": after - before}))
"""


def warm_start(name: str, cache_dir: str, quick: bool, options=None, timeout=600) -> dict:
    """Time (in a new process, cache already populated) ``compile(fn)`` + the first call."""
    env = dict(os.environ, CPPCODEGEN_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    try:
        p = subprocess.run([sys.executable, "-c", _WARM_SCRIPT, name, "1" if quick else "0",
                            json.dumps(options or {})], cwd=REPO_ROOT, env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"compile_warm_error": f"warm start timed out after {timeout} s"}
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"compile_warm_error": f"warm start exited {p.returncode}: {tail[:300]}"}
    try:
        got = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"compile_warm_error": f"warm start printed no result: {p.stdout[-200:]!r}"}
    out = {"compile_warm_s": got["first_call_s"], "warm_import_s": got["import_s"]}
    if got.get("new_cache_files"):
        out["compile_warm_note"] = f"cache miss: {got['new_cache_files']} new files"
    return out


_SINGLE_SCRIPT = r"""
import json, sys
name, quick, options, repeats, with_numpy = (sys.argv[1], sys.argv[2] == "1", json.loads(sys.argv[3]),
                                             int(sys.argv[4]), sys.argv[5] == "1")
from benchmarks.measure import check, time_call
from benchmarks.workloads import WORKLOADS, as_tuple
w = WORKLOADS[name]
inputs = w.inputs(quick)
ref = as_tuple(w.fn(*inputs))
out = {}
if with_numpy:
    out["numpy_time_1t_s"] = time_call(lambda: w.fn(*inputs), repeats)["time_s"]
import cppcodegen
f = cppcodegen.compile(w.fn, options=options) if options else cppcodegen.compile(w.fn)
ok, msg = check(as_tuple(f(*inputs)), ref, w.magnitude(inputs, ref) if w.magnitude else None)
if ok:
    out["time_1t_s"] = time_call(lambda: f(*inputs), repeats)["time_s"]
else:
    out["time_1t_error"] = "1-thread result differs from NumPy: " + msg
print(json.dumps(out))
"""


def single_thread(name: str, cache_dir: str, quick: bool, repeats: int, options=None,
                  with_numpy=False, timeout=900) -> dict:
    """cppcodegen's time (``time_1t_s``) with 1 thread, in a new process using ``cache_dir``;
    ``numpy_time_1t_s`` too when ``with_numpy``. Errors land in ``time_1t_error``."""
    from benchmarks.run import THREAD_VARS
    env = dict(os.environ, CPPCODEGEN_CACHE_DIR=str(cache_dir), **{v: "1" for v in THREAD_VARS})
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, "-c", _SINGLE_SCRIPT, name, "1" if quick else "0",
            json.dumps(options or {}), str(repeats), "1" if with_numpy else "0"]
    try:
        p = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"time_1t_error": f"1-thread run timed out after {timeout} s"}
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"time_1t_error": f"1-thread run exited {p.returncode}: {tail[:300]}"}
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"time_1t_error": f"1-thread run printed no result: {p.stdout[-200:]!r}"}


_IMPORT_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import cppcodegen
t2 = time.perf_counter()
heavy = sorted(m for m in ("sympy", "cffi", "scipy", "numba", "torch", "jax") if m in sys.modules)
print(json.dumps({"numpy_s": t1 - t0, "cppcodegen_s": t2 - t1, "heavy_modules": heavy}))
"""


def import_time(runs: int = 5, timeout=120) -> dict:
    """``import cppcodegen`` in ``runs`` fresh processes, timed in-process after ``import numpy``
    (so NumPy's own import is excluded): the median, and which heavy modules it pulled in."""
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    got = []
    for _ in range(max(1, runs)):
        try:
            p = subprocess.run([sys.executable, "-c", _IMPORT_SCRIPT], cwd=REPO_ROOT, env=env,
                               capture_output=True, text=True, timeout=timeout)
            if p.returncode != 0:
                tail = (p.stderr.strip().splitlines() or ["?"])[-1]
                return {"error": f"import cppcodegen failed: {tail[:300]}"}
            got.append(json.loads(p.stdout.strip().splitlines()[-1]))
        except (subprocess.TimeoutExpired, ValueError, IndexError) as e:
            return {"error": f"import probe: {type(e).__name__}: {e}"[:300]}
    return {"import_s": statistics.median(g["cppcodegen_s"] for g in got),
            "numpy_import_s": statistics.median(g["numpy_s"] for g in got),
            "runs": len(got), "heavy_modules": got[-1]["heavy_modules"]}
