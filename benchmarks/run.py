"""Command-line driver: ``python3 -m benchmarks.run [--quick] [--only NAME,...] [--tag TAG]
[--repeat N] [--threads N] [--json PATH] [--peers LIST] [--no-warm] [--no-scaling]
[--cpp-options JSON] [--readme [PATH]] [--from-json PATH] [--dask] [--no-dask]``.

In:  the workloads table and whatever systems are importable.
Out: progress lines on stderr; machine header, the results table and the core-set summary on
stdout; ``results.json``, ``results.md`` and (with matplotlib) ``speedup.png`` next to --json.
Every system gets the same thread count; its result is checked against NumPy before it is
timed. Each workload (and the bandwidth probe) runs in a child process (``benchmarks.worker``):
a system that raises is recorded as "failed" with its message, one that crashes the process
(segfault, abort, timeout) as "failed" with the signal, and the rest still run. The run exits 0
whatever the systems did (2 only for bad arguments).
The suites' workloads (``benchmarks.workloads.SUITES``: tag "loop", Python for/while/if around
NumPy code; "linalg", matrix products and small linear-algebra programs; "program", sparse,
histogram and complex programs) get a table each (``--tag loop`` runs only the loops;
``--quick`` runs only each suite's ``quick`` ones unless named).
Besides the main table: cppcodegen at 1 thread vs all threads (a fresh process per workload,
reusing the cold-compiled cache), float32 sum accuracy against a float64 sum, and compile
times / per-call overhead / ``import cppcodegen`` time. ``--readme`` writes the markdown results
between the ``<!-- bench-table -->`` markers of README.md; with ``--from-json`` it does so from
an earlier run's results.json without measuring anything.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks.worker import progress    # imports nothing heavy

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS",
               "NUMBA_NUM_THREADS", "CPPCODEGEN_NUM_THREADS")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.run", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, 3 repeats (< 60 s)")
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--tag", default=None,
                   help="only the workloads with this tag (e.g. loop: the loop workloads)")
    p.add_argument("--repeat", type=int, default=None, help="timed samples (default 10, quick 3)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for every system (default: os.cpu_count())")
    p.add_argument("--json", default=os.path.join("bench-results", "results.json"),
                   help="JSON output; results.md and speedup.png go beside it")
    p.add_argument("--peers", default=None,
                   help="comma-separated peers to try (numexpr,numba,torch.compile,jax.jit); "
                        "'none' for none; default: every importable one")
    p.add_argument("--no-warm", action="store_true", help="skip the warm-start subprocess")
    p.add_argument("--all-peers", action="store_true",
                   help="with --quick: run the peers on every workload, not only on "
                        "chain, softmax, layer_norm, sum_all and loop_dot")
    p.add_argument("--no-scaling", action="store_true",
                   help="skip the 1-thread cppcodegen runs (thread scaling)")
    p.add_argument("--readme", nargs="?", const="README.md", default=None, metavar="PATH",
                   help="write the results into PATH's <!-- bench-table --> section "
                        "(default README.md)")
    p.add_argument("--from-json", default=None, metavar="PATH",
                   help="measure nothing: report (and --readme) from an earlier results.json")
    p.add_argument("--cpp-options", default="{}", help="JSON dict for cppcodegen.compile(options=)")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="seconds one workload's child process may take (default 1800)")
    p.add_argument("--dask", action="store_true",
                   help="with --quick: run the Dask section too (tiny sizes)")
    p.add_argument("--no-dask", action="store_true",
                   help="skip the Dask section (LocalCluster; benchmarks/dask_bench.py)")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def set_threads(n: int) -> None:
    """Fix the thread count in the environment -- before NumPy or any peer is imported."""
    for var in THREAD_VARS:
        os.environ[var] = str(n)


SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV"}


def describe_exit(rc) -> str:
    if rc is None:
        return "timed out"
    if rc < 0:
        return f"crashed with signal {-rc} ({SIGNALS.get(-rc, 'signal')})"
    return f"worker exited {rc}"


def run_in_child(job: dict, workdir: str, timeout: float) -> tuple[dict, int | None]:
    """Run one job in a new Python process; return (its last state, exit code or None)."""
    path = os.path.join(workdir, f"job-{job['name']}.json")
    job = dict(job, state=path + ".state")
    with open(path, "w") as f:
        json.dump(job, f)
    if os.path.exists(job["state"]):
        os.remove(job["state"])
    cmd = [sys.executable, "-m", "benchmarks.run", "--worker", path]
    # Temporary files (fresh kernel caches included) go under workdir, which the parent
    # removes at the end, so a child that crashes inside fresh_cache() leaves nothing behind.
    tmp = os.path.join(workdir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=dict(os.environ, TMPDIR=tmp))
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = None
    try:
        with open(job["state"]) as f:
            return json.load(f), rc
    except (OSError, ValueError):
        return {"systems": {}, "in_progress": None}, rc


def run_workload(job: dict, workdir: str, timeout: float, expected: list) -> dict:
    """All systems on one workload, restarting the child after a crash without the culprit."""
    merged, extra = {}, {}
    for _attempt in range(len(expected) + 1):
        state, rc = run_in_child(dict(job, skip=sorted(merged)), workdir, timeout)
        merged.update(state.get("systems", {}))
        extra.update({k: v for k, v in state.items() if k not in ("systems", "in_progress")})
        if rc == 0:
            break
        culprit = state.get("in_progress")
        why = describe_exit(rc)
        progress(f"{job['name']}: worker {why}" + (f" while running {culprit}" if culprit else ""))
        if culprit:
            merged[culprit] = {"status": "failed", "error": f"{why} (isolated in a child process)"}
        else:                            # died before any system started: give up on the rest
            for name in expected:
                merged.setdefault(name, {"status": "failed", "error": f"{why} during setup"})
            break
    return {**extra, "systems": merged}


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        set_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        from benchmarks import worker
        return worker.main(args.worker)
    if args.threads < 1:
        print("--threads must be >= 1", file=sys.stderr)
        return 2
    set_threads(args.threads)

    from benchmarks import dynamic_bench, peers, report    # NumPy: after the thread variables
    from benchmarks.workloads import QUICK, QUICK_PEERS, WORKLOADS

    if args.from_json:
        with open(args.from_json) as f:
            doc = json.load(f)
        print(report.format_all(doc))
        if args.readme:
            print()
            _write_readme(report, args.readme, doc)
        return 0
    if args.list:
        for w in WORKLOADS.values():
            print(f"{w.name:<16} {'core ' if w.core else '     '}{w.description}")
        return 0
    names = [n for n in args.only.split(",") if n] or list(QUICK if args.quick else WORKLOADS)
    if args.tag:
        pool = [n for n in args.only.split(",") if n] or list(WORKLOADS)
        names = [n for n in pool if n in WORKLOADS and args.tag in WORKLOADS[n].tags]
        if not names:
            print(f"no workload has the tag {args.tag!r}", file=sys.stderr)
            return 2
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s) {unknown}; known: {', '.join(WORKLOADS)}", file=sys.stderr)
        return 2
    quick = args.quick
    repeats = args.repeat if args.repeat is not None else (3 if quick else 10)
    wanted = None
    if args.peers is not None:
        wanted = [] if args.peers == "none" else [p for p in args.peers.split(",") if p]
    t_start = time.perf_counter()

    found = peers.installed_peers(None if wanted is None else set(wanted))
    systems = [peers.NumPy(), peers.CppCodegen()] + found
    versions = {s.name: _version(s) for s in systems}
    doc = {"machine": report.machine_info(args.threads, versions),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"),
           "command": _command(argv),
           "settings": {"quick": quick, "repeats": repeats, "only": names,
                        "peers_only_on": list(QUICK_PEERS) if quick and not args.all_peers
                        and args.peers is None else None,
                        "peers": [p.name for p in found],
                        "cpp_options": json.loads(args.cpp_options)},
           "workloads": []}
    print(report.format_header(doc), flush=True)
    base_job = {"quick": quick, "repeats": repeats, "threads": args.threads,
                "peers": [p.name for p in found], "no_warm": args.no_warm,
                "scaling": not args.no_scaling and args.threads > 1,
                "cpp_options": json.loads(args.cpp_options), "total": len(names)}
    timeout = args.timeout
    if doc["settings"]["peers_only_on"] and found:
        progress(f"quick mode: peers run only on {', '.join(QUICK_PEERS)} (--all-peers for all)")

    with tempfile.TemporaryDirectory(prefix="cppcodegen-bench-jobs-") as workdir:
        n_bw = 2**22 if quick else 2**25
        progress(f"memory bandwidth: triad over {n_bw} float32")
        state, rc = run_in_child(dict(base_job, name="__bandwidth__", n=n_bw, index=0),
                                 workdir, timeout)
        bw = state.get("bandwidth")
        if bw is None:                   # the compiled triad crashed the child: NumPy copy here
            from benchmarks import measure
            bw = measure.bandwidth(n_bw, repeats, None)
            bw["note"] = f"compiled triad {describe_exit(rc)}"
        doc["bandwidth"] = bw
        doc["machine"]["isa"] = state.get("isa")
        doc["machine"]["isa_native"] = state.get("isa_native")
        doc["machine"]["isa_forced"] = os.environ.get("CPPCODEGEN_ISA") or None
        print(report.format_header(doc).splitlines()[-1], flush=True)
        progress("import cppcodegen time (fresh processes)")
        from benchmarks import measure
        doc["import"] = measure.import_time(3 if quick else 5)

        for i, name in enumerate(names, 1):
            wl = WORKLOADS[name]
            job = dict(base_job, name=name, index=i)
            if quick and not args.all_peers and args.peers is None and name not in QUICK_PEERS:
                job["peers"] = []        # peers' compile times (torch ~10 s) dominate --quick
            got = run_workload(job, workdir, timeout,
                               [s.name for s in systems[:2]] + job["peers"])
            doc["workloads"].append({"name": name, "description": wl.description,
                                     "core": wl.core, "unit": wl.unit,
                                     "tags": list(wl.tags), **got})
        if not args.no_dask and (not quick or args.dask):
            from benchmarks import dask_bench
            progress("dask: chain, softmax, layer_norm on a 2-worker LocalCluster")
            doc["dask"] = dask_bench.run_child(quick, min(repeats, 5), workdir, timeout)

        if set(dynamic_bench.GRAPHS) <= set(names):
            progress("dynamic vs static shapes")
            doc["dynamic"] = dynamic_bench.measure_in_child(quick, repeats)

    doc["elapsed_s"] = time.perf_counter() - t_start
    print()
    print(report.format_all(doc))
    out_dir = os.path.dirname(os.path.abspath(args.json))
    report.write_json(doc, args.json)
    report.write_markdown(doc, os.path.join(out_dir, "results.md"))
    wrote_png = report.write_png(doc, os.path.join(out_dir, "speedup.png"))
    print(f"\nwrote {args.json}, {os.path.join(out_dir, 'results.md')}"
          + (f", {os.path.join(out_dir, 'speedup.png')}" if wrote_png else "")
          + f"  ({doc['elapsed_s']:.1f} s)")
    if args.readme:
        _write_readme(report, args.readme, doc)
    return 0


def _write_readme(report, path, doc) -> None:
    try:
        which = report.update_readme(path, doc)
        print(f"wrote the {', '.join(which)} section(s) of {path}")
    except (OSError, ValueError) as e:
        print(f"README not updated: {e}", file=sys.stderr)


def _command(argv) -> str:
    """How this run was started, for the report (``make bench`` when make started it)."""
    args = sys.argv[1:] if argv is None else list(argv)
    cmd = " ".join(["python3 -m benchmarks.run", *args])
    if os.environ.get("MAKELEVEL") is not None:
        target = ("bench-quick" if "--quick" in args
                  else "bench-loops" if "--tag" in args and args[args.index("--tag") + 1:][:1] == ["loop"]
                  else "bench")
        cmd = f"make {target}  ({cmd})"
    return cmd


def _version(system) -> str:
    """A system's version without importing it (the parent stays light)."""
    if not system.module:
        import numpy as np
        return np.__version__
    from importlib.metadata import PackageNotFoundError, version
    dist = {"torch": "torch", "jax": "jax", "numba": "numba", "numexpr": "numexpr",
            "cppcodegen": "cppcodegen"}.get(system.module, system.module)
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
