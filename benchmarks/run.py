"""Command-line driver: ``python3 -m benchmarks.run [--quick] [--only NAME,...] [--repeat N]
[--threads N] [--json PATH] [--peers LIST] [--no-warm] [--cpp-options JSON]``.

In:  the workloads table and whatever systems are importable.
Out: progress lines on stderr; machine header, the results table and the core-set summary on
stdout; ``results.json``, ``results.md`` and (with matplotlib) ``speedup.png`` next to --json.
Every system gets the same thread count; its result is checked against NumPy before it is
timed. A system that raises is recorded as "failed" with its message; the run goes on and
exits 0 (exit 2 only for bad arguments).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS",
               "NUMBA_NUM_THREADS", "CPPCODEGEN_NUM_THREADS")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.run", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, 3 repeats (< 60 s)")
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--repeat", type=int, default=None, help="timed samples (default 10, quick 3)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for every system (default: os.cpu_count())")
    p.add_argument("--json", default=os.path.join("bench-results", "results.json"),
                   help="JSON output; results.md and speedup.png go beside it")
    p.add_argument("--peers", default=None,
                   help="comma-separated peers to try (numexpr,numba,torch.compile,jax.jit); "
                        "'none' for none; default: every importable one")
    p.add_argument("--no-warm", action="store_true", help="skip the warm-start subprocess")
    p.add_argument("--cpp-options", default="{}", help="JSON dict for cppcodegen.compile(options=)")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    return p.parse_args(argv)


def set_threads(n: int) -> None:
    """Fix the thread count in the environment -- before NumPy or any peer is imported."""
    for var in THREAD_VARS:
        os.environ[var] = str(n)


def progress(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _err(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip().replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."


def run_system(system, wl, inputs, ref, magnitude, repeats) -> dict:
    """Prepare, check against NumPy, then time one system on one workload."""
    from benchmarks import measure
    from benchmarks.peers import Skip
    try:
        prepared = system.prepare(wl, inputs)
    except Skip as e:
        return {"status": "skipped", "error": str(e)}
    except Exception as e:
        return {"status": "failed", "error": _err(e)}
    entry = dict(prepared.info)
    try:
        got = prepared.to_numpy(prepared.call())
        ok, msg = measure.check(got, ref, magnitude)
        del got
        if not ok:
            entry.update(status="WRONG", error=msg)
            return entry
        entry.update(measure.time_call(prepared.call, repeats), status="ok")
    except Exception as e:
        entry.update(status="failed", error=_err(e))
    finally:
        try:
            prepared.cleanup()
        except Exception as e:
            entry.setdefault("cleanup_error", _err(e))
    return entry


def build_systems(args, quick):
    from benchmarks import measure, peers
    options = json.loads(args.cpp_options)
    probe = None if args.no_warm else (
        lambda name, cache: measure.warm_start(name, cache, quick, options))
    systems = [peers.NumPy(), peers.CppCodegen(options, probe)]
    wanted = None
    if args.peers is not None:
        wanted = set() if args.peers == "none" else set(filter(None, args.peers.split(",")))
    for peer in peers.installed_peers(wanted):
        try:
            peer.setup(args.threads)
            systems.append(peer)
        except Exception as e:
            progress(f"peer {peer.name} unusable, left out: {_err(e)}")
    for s in systems[:2]:
        s.setup(args.threads)
    return systems


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads < 1:
        print("--threads must be >= 1", file=sys.stderr)
        return 2
    set_threads(args.threads)

    import numpy as np  # noqa: F401  (after the thread variables are set)
    from benchmarks import measure, report
    from benchmarks.workloads import WORKLOADS, as_tuple, nbytes_moved

    if args.list:
        for w in WORKLOADS.values():
            print(f"{w.name:<16} {'core ' if w.core else '     '}{w.description}")
        return 0
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s) {unknown}; known: {', '.join(WORKLOADS)}", file=sys.stderr)
        return 2
    quick = args.quick
    repeats = args.repeat if args.repeat is not None else (3 if quick else 10)
    t_start = time.perf_counter()

    progress(f"setting up systems ({args.threads} threads)")
    systems = build_systems(args, quick)
    versions = {s.name: s.version() for s in systems}
    doc = {"machine": report.machine_info(args.threads, versions),
           "settings": {"quick": quick, "repeats": repeats, "only": names,
                        "cpp_options": json.loads(args.cpp_options)},
           "workloads": []}
    print(report.format_header(doc), flush=True)

    n_bw = 2**22 if quick else 2**25
    progress(f"memory bandwidth: triad over {n_bw} float32")
    doc["bandwidth"] = measure.bandwidth(n_bw, repeats, systems[1].mod)
    progress(f"memory bandwidth: {doc['bandwidth']['gbps']:.1f} GB/s "
             f"({doc['bandwidth']['kernel']})")

    for i, name in enumerate(names, 1):
        wl = WORKLOADS[name]
        inputs = wl.inputs(quick)
        ref = as_tuple(wl.fn(*inputs))
        magnitude = wl.magnitude(inputs, ref) if wl.magnitude else None
        result = {"name": name, "description": wl.description, "core": wl.core,
                  "unit": wl.unit, "size": list(np.atleast_1d(wl.size(quick)).tolist()),
                  "bytes": nbytes_moved(inputs, ref), "systems": {}}
        for system in systems:
            progress(f"[{i}/{len(names)}] {name}: {system.name} ...")
            entry = run_system(system, wl, inputs, ref, magnitude, repeats)
            result["systems"][system.name] = entry
            shown = (report._t(entry["time_s"], wl.unit) if entry["status"] == "ok"
                     else f"{entry['status']}: {entry.get('error', '')}"[:160])
            progress(f"[{i}/{len(names)}] {name}: {system.name} {shown}")
        doc["workloads"].append(result)
        del inputs, ref, magnitude
        gc.collect()

    doc["elapsed_s"] = time.perf_counter() - t_start
    print()
    print(report.format_table(doc))
    probs = report.problems(doc)
    if probs:
        print("\nfailures and mismatches:")
        for p in probs:
            print(f"  {p}")
    print()
    print(report.format_core(doc))
    out_dir = os.path.dirname(os.path.abspath(args.json))
    report.write_json(doc, args.json)
    report.write_markdown(doc, os.path.join(out_dir, "results.md"))
    wrote_png = report.write_png(doc, os.path.join(out_dir, "speedup.png"))
    print(f"\nwrote {args.json}, {os.path.join(out_dir, 'results.md')}"
          + (f", {os.path.join(out_dir, 'speedup.png')}" if wrote_png else "")
          + f"  ({doc['elapsed_s']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
