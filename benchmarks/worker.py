"""The child side of the runner: one workload (or the bandwidth probe) in its own process.

In:  a job file (JSON) written by ``benchmarks.run``: workload name, quick, repeats, threads,
     peers, cpp options, warm probe on/off, 1-thread probe on/off (``scaling``), and ``skip`` (systems already measured or crashed).
Out: the job's state file (JSON), rewritten after every step: ``in_progress`` names the system
     being measured, ``systems`` holds the finished entries. If the process dies (a segfault in
     compiled code, an abort), the parent reads this file, blames ``in_progress`` and starts a
     new child for the remaining systems. So a crash costs one entry, never the run.
"""
from __future__ import annotations

import json
import os
import sys
import time


def progress(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def err_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip().replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."


def run_system(system, wl, inputs, ref, magnitude, repeats, exact=None) -> dict:
    """Prepare, check against NumPy, then time one system on one workload."""
    from benchmarks import measure
    from benchmarks.peers import Skip
    try:
        prepared = system.prepare(wl, inputs)
    except Skip as e:
        return {"status": "skipped", "error": str(e)}
    except Exception as e:
        return {"status": "failed", "error": err_text(e)}
    entry = dict(prepared.info)
    try:
        got = prepared.to_numpy(prepared.call())
        ok, msg = measure.check(got, ref, magnitude)
        if ok and exact is not None:
            from benchmarks.workloads import rel_error
            entry["rel_error_vs_f64"] = rel_error(got, exact)
        del got
        if not ok:
            entry.update(status="WRONG", error=msg)
            return entry
        entry.update(measure.time_call(prepared.call, repeats), status="ok")
    except Exception as e:
        entry.update(status="failed", error=err_text(e))
    finally:
        try:
            prepared.cleanup()
        except Exception as e:
            entry.setdefault("cleanup_error", err_text(e))
    return entry


def build_systems(job: dict, skip=()) -> list:
    """NumPy, cppcodegen and the importable peers asked for, minus ``skip`` (not set up yet)."""
    from benchmarks import measure, peers
    quick, options = job["quick"], job["cpp_options"]
    probe = None if job["no_warm"] else (
        lambda name, cache: measure.warm_start(name, cache, quick, options))
    single = None if not job.get("scaling") else (
        lambda wl, cache: measure.single_thread(wl.name, cache, quick, job["repeats"], options,
                                                with_numpy="blas" in wl.tags))
    systems = [peers.NumPy(job["repeats"]),
               peers.CppCodegen(options, probe, single, job["repeats"])]
    wanted = job.get("peers")
    systems += peers.installed_peers(None if wanted is None else set(wanted))
    return [s for s in systems if s.name not in skip]


def set_up(system, threads) -> bool:
    """Import and configure one system, just before it runs: a peer's thread pools (torch,
    jax, numba) must not exist yet while NumPy and cppcodegen are timed."""
    try:
        system.setup(threads)
        return True
    except Exception as e:
        progress(f"{system.name} unusable, left out: {err_text(e)}")
        return False


class State:
    """The state file, rewritten atomically after each step."""

    def __init__(self, path):
        self.path = path
        self.data = {"systems": {}, "in_progress": None}

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, default=str)
        os.replace(tmp, self.path)


def run_job(job: dict, state: State) -> None:
    import numpy as np
    from benchmarks import measure
    from benchmarks.workloads import WORKLOADS, as_tuple, nbytes_moved

    if job["name"] == "__bandwidth__":
        import importlib
        state.data["in_progress"] = "cppcodegen"
        state.save()
        try:
            cpp = importlib.import_module("cppcodegen")
        except Exception:
            cpp = None
        state.data["bandwidth"] = measure.bandwidth(job["n"], job["repeats"], cpp)
        if cpp is not None:     # the ISA the kernels are built for (CPPCODEGEN_ISA or the CPU's)
            state.data["isa"] = cpp.config.get_options().resolved_isa()
            state.data["isa_native"] = cpp.config.get_options({"isa": "native"}).resolved_isa()
        state.data["in_progress"] = None
        state.save()
        return

    wl = WORKLOADS[job["name"]]
    inputs = wl.inputs(job["quick"])
    t0 = time.perf_counter()
    ref = as_tuple(wl.fn(*inputs))
    reference_s = time.perf_counter() - t0      # one call of the function as written
    magnitude = wl.magnitude(inputs, ref) if wl.magnitude else None
    exact = wl.exact(*inputs) if wl.exact else None
    state.data.update(size=list(np.atleast_1d(wl.size(job["quick"])).tolist()),
                      bytes=nbytes_moved(inputs, ref), reference_s=reference_s)
    state.save()
    tag = f"[{job['index']}/{job['total']}] {wl.name}"
    for system in build_systems(job, skip=set(job.get("skip", ()))):
        state.data["in_progress"] = system.name        # a crash in its import is its own
        state.save()
        if not set_up(system, job["threads"]):
            state.data["in_progress"] = None
            state.save()
            continue
        progress(f"{tag}: {system.name} ...")
        if os.environ.get("CPPCODEGEN_BENCH_CRASH") == system.name:   # for the smoke test
            import signal
            os.kill(os.getpid(), signal.SIGSEGV)
        entry = run_system(system, wl, inputs, ref, magnitude, job["repeats"], exact)
        numpy_1t = entry.pop("numpy_time_1t_s", None)    # measured by the cppcodegen probe
        if numpy_1t is not None and "numpy" in state.data["systems"]:
            state.data["systems"]["numpy"]["time_1t_s"] = numpy_1t
        state.data["systems"][system.name] = entry
        state.data["in_progress"] = None
        state.save()
        if entry["status"] == "ok":
            from benchmarks.report import _t
            shown = _t(entry["time_s"], wl.unit)
        else:
            shown = f"{entry['status']}: {entry.get('error', '')}"[:160]
        progress(f"{tag}: {system.name} {shown}")


def main(job_path: str) -> int:
    with open(job_path) as f:
        job = json.load(f)
    state = State(job["state"])
    run_job(job, state)
    return 0
