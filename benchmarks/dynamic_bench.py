"""Dynamic vs static shapes: the same graph compiled with every size fixed (``dynamic=False``)
and with symbolic sizes (``dynamic=True``), timed on the same inputs in one process.

Run by ``benchmarks.run`` in a child process (``python -m benchmarks.dynamic_bench``, JSON on
stdout); ``rows``/``format_text``/``markdown`` render the result for the terminal and README.
The dynamic variant also runs a second size (one row fewer) to show it serves it without a
compile.
"""
from __future__ import annotations

import json
import sys

GRAPHS = ("chain", "softmax", "layer_norm")
ROUNDS = 3
NOTE = ("Each graph compiled twice, with every size fixed (`dynamic=False`) and with symbolic "
        "sizes (`dynamic=True`, sizes passed as int64 arguments), and timed on the same inputs "
        "in one process (alternating, best of 3 rounds of medians); `dyn/static` > 1 means the "
        "dynamic kernel is slower. `compiles` counts "
        "the dynamic function's compilations after it also ran a second size.")
COLUMNS = ("graph", "size", "static", "dynamic", "dyn/static", "compiles")


def _smaller(inputs):
    """The same inputs with one row (or element) fewer along the first axis of the first."""
    import numpy as np
    first = inputs[0]
    n = first.shape[0] - 1
    return tuple(a[:n].copy() if a.ndim and a.shape[0] == first.shape[0] else a
                 for a in inputs) if isinstance(first, np.ndarray) else inputs


def run(quick: bool, repeats: int) -> dict:
    import numpy as np

    import cppcodegen
    from benchmarks import measure
    from benchmarks.workloads import WORKLOADS, as_tuple

    out = []
    for name in GRAPHS:
        wl = WORKLOADS[name]
        inputs = wl.inputs(quick)
        static = cppcodegen.compile(wl.fn, dynamic=False)
        dynamic = cppcodegen.compile(wl.fn, dynamic=True)
        ref = as_tuple(wl.fn(*inputs))
        row = {"name": name, "size": str(wl.size(quick))}
        for label, f in (("static", static), ("dynamic", dynamic)):
            got = as_tuple(f(*inputs))
            row[label] = {"ok": all(np.allclose(g, r, rtol=1e-4, atol=1e-5)
                                    for g, r in zip(got, ref)), "time_s": float("inf")}
        # alternate the two, several rounds, best median of each: the machine is shared, and
        # a burst of load during one of them would otherwise decide the ratio
        for _ in range(ROUNDS):
            for label, f in (("static", static), ("dynamic", dynamic)):
                t = measure.time_call(lambda f=f: f(*inputs), repeats)
                if t["time_s"] < row[label]["time_s"]:
                    row[label].update(t)
        other = _smaller(inputs)
        ok2 = all(np.allclose(g, r, rtol=1e-4, atol=1e-5)
                  for g, r in zip(as_tuple(dynamic(*other)), as_tuple(wl.fn(*other))))
        row["dynamic_second_size_ok"] = ok2
        row["dynamic_compiles"] = len(dynamic.variants)
        out.append(row)
    return {"rows": out}


def rows(doc: dict) -> list[tuple]:
    body = []
    for r in (doc.get("dynamic") or {}).get("rows", []):
        s, d = r["static"]["time_s"], r["dynamic"]["time_s"]
        unit, scale = ("us", 1e6) if s < 1e-3 else ("ms", 1e3)
        flag = "" if r["static"]["ok"] and r["dynamic"]["ok"] and r["dynamic_second_size_ok"] \
            else " MISMATCH"
        body.append((r["name"], r["size"], f"{s * scale:.3g} {unit}", f"{d * scale:.3g} {unit}",
                     f"{d / s:.2f}{flag}", str(r["dynamic_compiles"])))
    return body


def format_text(doc: dict, grid) -> str:
    body = rows(doc)
    if not body:
        err = (doc.get("dynamic") or {}).get("error")
        return f"dynamic vs static shapes: {err}" if err else ""
    return "dynamic vs static shapes (cppcodegen):\n" + grid(COLUMNS, body)


def markdown(doc: dict, heading: str, md_grid) -> list[str]:
    body = rows(doc)
    if not body:
        return []
    return ["", f"{heading} Dynamic vs static shapes", "", NOTE, ""] + md_grid(COLUMNS, body)


def measure_in_child(quick: bool, repeats: int, timeout: float = 1800) -> dict:
    import subprocess
    cmd = [sys.executable, "-m", "benchmarks.dynamic_bench", "--repeats", str(repeats)]
    if quick:
        cmd.append("--quick")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeats", type=int, default=10)
    a = p.parse_args(argv)
    print(json.dumps(run(a.quick, a.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
