"""The Dask section of the benchmarks: compiled per chunk vs dask.array with NumPy chunks.

In: nothing (``python3 -m benchmarks.dask_bench [--quick] [--repeat N] [--json PATH]``, or
``run_child`` from ``benchmarks.run``). Out: a dict (JSON) with, per workload (chain, softmax,
layer_norm), the shape and chunks, the median time of computing the result on the cluster
(``persist`` + ``wait``: no transfer to the client) for the compiled function called with the
dask arrays and for the same NumPy function run by dask.array itself, the first call's time
(graph + compiling the chunk kernels on the client), the builds on the client and on the
workers, and the largest difference between the two results. ``format_text`` and
``markdown`` render it for the terminal and for the README.

The cluster: ``distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1)``
sharing a fresh kernel cache with the client. The inputs are generated on the workers
(``dask.array.random``) and persisted before anything is timed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SEED = 1234
SIZES = {   # name -> (full shape, full chunks, quick shape, quick chunks)
    "chain": ((2**24,), (2**21,), (2**18,), (2**16,)),
    "softmax": ((4096, 4096), (512, 4096), (512, 512), (128, 512)),
    "layer_norm": ((8192, 1024), (1024, 1024), (1024, 256), (256, 256)),
}


def _inputs(name, shape, chunks):
    import dask.array as da
    import numpy as np
    rng = da.random.default_rng(SEED)
    if name == "chain":     # one array sliced three ways: a task's three blocks share a worker
        abc = rng.uniform(-1.0, 1.0, size=(3,) + shape, chunks=(3,) + chunks)
        return tuple(abc[i].astype(np.float32) for i in range(3))
    x = rng.standard_normal(shape, chunks=chunks, dtype=np.float32)
    if name == "softmax":
        return (x,)
    w = rng.standard_normal(shape[-1:], chunks=shape[-1:], dtype=np.float32)
    b = rng.standard_normal(shape[-1:], chunks=shape[-1:], dtype=np.float32)
    return (x, w, b)


def run(quick: bool = False, repeats: int = 5) -> dict:
    """Start the cluster, measure every workload, stop it; never raises for a workload."""
    try:
        import dask.array as da
        import distributed
    except ImportError as e:
        return {"skipped": f"dask/distributed not installed ({e}); pip install '.[dask]'"}
    import cppcodegen
    from cppcodegen.integrations import dask as ccg_dask

    from benchmarks import workloads
    doc = {"workers": 2, "threads_per_worker": 1, "repeats": repeats, "quick": quick,
           "dynamic": True, "rows": [], "dask": _version("dask")}
    with cppcodegen.fresh_cache():       # the workers inherit it: one cache for all
        saved = dict(os.environ)
        cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                           dashboard_address=":0", silence_logs=40)
        _restore(saved)                   # the Nanny changes thread variables here
        try:
            with distributed.Client(cluster) as client:
                client.run(ccg_dask.start_counting_builds)
                for name, (fshape, fchunks, qshape, qchunks) in SIZES.items():
                    shape, chunks = (qshape, qchunks) if quick else (fshape, fchunks)
                    row = {"name": name, "shape": list(shape), "chunks": list(chunks)}
                    try:
                        row.update(_measure(client, name, getattr(workloads, name),
                                            shape, chunks, repeats))
                    except Exception as e:          # recorded, the others still run
                        row["error"] = f"{type(e).__name__}: {e}"[:300]
                    doc["rows"].append(row)
                doc["worker_builds"] = sum(client.run(ccg_dask.builds_counted).values())
        finally:
            cluster.close()
            _restore(saved)
    return doc


def _restore(saved):
    for k in set(os.environ) - set(saved):
        del os.environ[k]
    os.environ.update(saved)


def _measure(client, name, fn, shape, chunks, repeats) -> dict:
    import dask.array as da
    import distributed
    import cppcodegen
    from cppcodegen.integrations import dask as ccg_dask

    args = client.persist(list(_inputs(name, shape, chunks)))
    distributed.wait(args)
    compiled = cppcodegen.compile(fn)
    ccg_dask.start_counting_builds()
    t0 = time.perf_counter()
    first = compiled(*args)             # traces, compiles the chunk kernels on the client
    graph_s = time.perf_counter() - t0
    first = first.persist()
    distributed.wait(first)
    first_s = time.perf_counter() - t0
    client_builds = ccg_dask.builds_counted()

    def timed(make):
        out = []
        for _ in range(repeats):
            # the keys are deterministic: the scheduler must have forgotten the last result,
            # or it would hand it back instead of computing it again
            _settle(client, base)
            t = time.perf_counter()
            r = make().persist()
            distributed.wait(r)
            out.append(time.perf_counter() - t)
            del r
        return statistics.median(out)
    reference = fn(*args).persist()     # dask.array's own NumPy chunks
    distributed.wait(reference)
    diff = float(abs(first - reference).max().compute())
    scale = float(abs(reference).max().compute())
    del first, reference
    base = sum(a.npartitions for a in args)     # the tasks holding the inputs
    t_ccg = timed(lambda: compiled(*args))
    t_np = timed(lambda: fn(*args))
    return {"compiled_s": t_ccg, "numpy_s": t_np, "speedup": t_np / t_ccg,
            "first_call_s": first_s, "graph_s": graph_s, "client_builds": client_builds,
            "nchunks": int(args[0].npartitions), "max_abs_diff": diff,
            "ok": diff <= 1e-4 * max(1.0, scale)}


def _settle(client, tasks, timeout=10.0):
    """Wait until the scheduler holds only ``tasks`` tasks (earlier results released)."""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if client.run_on_scheduler(_count_tasks) <= tasks:
            return
        time.sleep(0.01)


def _count_tasks(dask_scheduler=None):
    return len(dask_scheduler.tasks)


def _version(dist):
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


# ----------------------------------------------------------------- the runner's side

def run_child(quick: bool, repeats: int, workdir: str, timeout: float) -> dict:
    """``run`` in a child process (a crash or hang is recorded, not fatal)."""
    path = os.path.join(workdir, "dask.json")
    cmd = [sys.executable, "-m", "benchmarks.dask_bench", "--json", path,
           "--repeat", str(repeats)] + (["--quick"] if quick else [])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        rc = subprocess.run(cmd, cwd=root, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"error": f"the Dask benchmark exited {rc} without results"}


def _ms(s):
    return f"{s * 1e3:.1f} ms" if s < 10 else f"{s:.1f} s"


COLUMNS = ("workload", "shape", "chunks", "dask+cppcodegen", "dask+NumPy", "speedup",
           "first call", "builds: client", "match")


def table_rows(dd: dict) -> list:
    out = []
    for r in dd.get("rows", []):
        shape = "x".join(map(str, r["shape"]))
        chunks = f"{r.get('nchunks', '?')} x " + "x".join(map(str, r["chunks"]))
        if "error" in r:
            out.append((r["name"], shape, chunks, "failed: " + r["error"], "", "", "", "", ""))
            continue
        out.append((r["name"], shape, chunks, _ms(r["compiled_s"]), _ms(r["numpy_s"]),
                    f"{r['speedup']:.2f}x", _ms(r["first_call_s"]), str(r["client_builds"]),
                    "yes" if r["ok"] else f"NO (max diff {r['max_abs_diff']:.2g})"))
    return out


def summary_line(dd: dict) -> str:
    kernels = "symbolic sizes (one build for all chunk sizes)" if dd.get("dynamic") else \
        "one build per distinct chunk shape"
    return (f"LocalCluster: {dd.get('workers')} worker processes x {dd.get('threads_per_worker')}"
            f" thread, dask {dd.get('dask')}, shared kernel cache; builds on the workers: "
            f"{dd.get('worker_builds', '?')} (the client builds before it submits; {kernels}); "
            f"median of {dd.get('repeats')} runs of persist + wait")


def format_text(doc: dict) -> str:
    """The terminal's Dask section ('' when there is none)."""
    dd = doc.get("dask")
    if not dd:
        return ""
    if "skipped" in dd or "error" in dd:
        return f"dask: {dd.get('skipped') or dd.get('error')}"
    body = table_rows(dd)
    widths = [max(len(str(x)) for x in col) for col in zip(COLUMNS, *body)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in [COLUMNS] + body]
    return "dask (compiled per chunk vs dask.array with NumPy chunks):\n" + "\n".join(lines) + \
        "\n" + summary_line(dd)


DASK_NOTE = ("The core workloads as `dask.array`s on a 2-worker `distributed.LocalCluster`: "
             "the compiled function called with the dask arrays (one compiled kernel per chunk) "
             "against the same NumPy function run by dask.array itself. Inputs live on the "
             "workers; times are to compute the result there. `first call` includes tracing "
             "and compiling the chunk kernels on the client; `builds: client` counts them.")


def markdown(doc: dict, hh: str) -> list:
    """The README's Dask section as markdown lines ([] when there is none)."""
    dd = doc.get("dask")
    if not dd:
        return []
    md = ["", f"{hh} Dask: compiled per chunk on a LocalCluster", "", DASK_NOTE, ""]
    if "skipped" in dd or "error" in dd:
        return md + [f"- {dd.get('skipped') or dd.get('error')}"]
    md.append("| " + " | ".join(COLUMNS) + " |")
    md.append("|" + "|".join("---" if i < 3 else "---:" for i in range(len(COLUMNS))) + "|")
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in table_rows(dd)]
    return md + ["", f"- {summary_line(dd)}"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.dask_bench")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    dd = run(args.quick, args.repeat)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dd, f, indent=2)
    print(format_text({"dask": dd}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
