"""Reporting: machine header, derived columns, terminal table, JSON, markdown, PNG chart.

In:  a run document ``{"machine": {...}, "bandwidth": {...}, "settings": {...},
     "workloads": [ {name, unit, core, bytes, systems: {system: {status, time_s, ...}}}, ...]}``.
Out: strings (``format_table``, ``format_core``, ``to_markdown``) and files
     (``write_json``, ``write_markdown``, ``write_png`` -- the last one only with matplotlib).
A system entry's ``status`` is "ok", "failed" (raised; ``error`` says why), "WRONG" (checked
against NumPy and differed; never ranked) or "skipped" (no version of this workload).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess

BASELINE, COMPILER = "numpy", "cppcodegen"
COLUMNS = ("workload", "NumPy", "cppcodegen", "vs NumPy", "best peer", "peer time", "vs peer",
           "GB/s", "%BW", "compile cold/warm s")


# ----------------------------------------------------------------------------- machine
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def compiler_version() -> str:
    for cxx in (os.environ.get("CXX"), "g++", "clang++"):
        if not cxx:
            continue
        try:
            out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=10)
            return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else "?"
        except (OSError, subprocess.SubprocessError):
            continue
    return "none found"


def machine_info(threads: int, versions: dict) -> dict:
    import numpy as np
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "threads": threads,
            "python": platform.python_version(), "numpy": np.__version__,
            "cxx": compiler_version(), "platform": platform.platform(), "versions": versions,
            "load_avg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def format_header(doc: dict) -> str:
    m, bw = doc["machine"], doc.get("bandwidth") or {}
    vers = ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()) or "none"
    load = m.get("load_avg_1min")
    busy = (f"  load avg {load:.2f}" + ("  (machine busy: timings may be noisy)"
                                         if load > 0.5 * (m["cores"] or 1) else "")
            ) if load is not None else ""
    lines = [f"cpu: {m['cpu']}  cores: {m['cores']}  threads used: {m['threads']}{busy}",
             f"python {m['python']}  numpy {m['numpy']}  cxx: {m['cxx']}",
             f"systems: {vers}"]
    if bw:
        note = f" ({bw['note']})" if bw.get("note") else ""
        lines.append(f"memory bandwidth: {bw['gbps']:.1f} GB/s via {bw['kernel']}{note}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- derived columns
def _ok_time(entry):
    return entry["time_s"] if entry and entry.get("status") == "ok" else None


def summarize(w: dict, bw_gbps: float | None) -> dict:
    """Derived numbers for one workload: speedups, best peer, achieved GB/s and %BW."""
    systems = w.get("systems", {})
    base, cpp = _ok_time(systems.get(BASELINE)), _ok_time(systems.get(COMPILER))
    peers = {k: _ok_time(v) for k, v in systems.items() if k not in (BASELINE, COMPILER)}
    peers = {k: t for k, t in peers.items() if t is not None}
    best = min(peers, key=peers.get) if peers else None
    gbps = w["bytes"] / cpp / 1e9 if cpp and w.get("bytes") else None
    c = systems.get(COMPILER) or {}
    return {
        "numpy_s": base, "cppcodegen_s": cpp,
        "speedup_vs_numpy": base / cpp if base and cpp else None,
        "best_peer": best, "best_peer_s": peers.get(best),
        "speedup_vs_best_peer": peers[best] / cpp if best and cpp else None,
        "gbps": gbps, "pct_bw": 100 * gbps / bw_gbps if gbps and bw_gbps else None,
        "compile_cold_s": c.get("compile_cold_s"), "compile_warm_s": c.get("compile_warm_s"),
    }


def _t(seconds, unit):
    if seconds is None:
        return "-"
    v = seconds * (1e6 if unit == "us" else 1e3)
    return f"{v:.1f} {unit}" if v >= 10 else f"{v:.3g} {unit}"


def _x(ratio):
    return f"{ratio:.2f}x" if ratio is not None else "-"


def _status_cell(entry, unit):
    if not entry:
        return "-"
    st = entry.get("status")
    return _t(entry.get("time_s"), unit) if st == "ok" else ("-" if st == "skipped" else st)


def rows(doc: dict) -> list[tuple]:
    bw = (doc.get("bandwidth") or {}).get("gbps")
    out = []
    for w in doc["workloads"]:
        s, unit, systems = summarize(w, bw), w.get("unit", "ms"), w.get("systems", {})
        cold, warm = s["compile_cold_s"], s["compile_warm_s"]
        comp = "-" if cold is None else f"{cold:.2f}/" + ("-" if warm is None else f"{warm:.3f}")
        out.append((w["name"] + (" *" if w.get("core") else ""),
                    _status_cell(systems.get(BASELINE), unit),
                    _status_cell(systems.get(COMPILER), unit),
                    _x(s["speedup_vs_numpy"]), s["best_peer"] or "-",
                    _t(s["best_peer_s"], unit), _x(s["speedup_vs_best_peer"]),
                    "-" if s["gbps"] is None else f"{s['gbps']:.1f}",
                    "-" if s["pct_bw"] is None else f"{s['pct_bw']:.0f}%", comp))
    return out


def format_table(doc: dict) -> str:
    body = rows(doc)
    widths = [max(len(str(r[i])) for r in [COLUMNS, *body]) for i in range(len(COLUMNS))]
    fmt = lambda r: "  ".join(str(c).ljust(wd) if i == 0 else str(c).rjust(wd)
                              for i, (c, wd) in enumerate(zip(r, widths)))
    lines = [fmt(COLUMNS), "  ".join("-" * wd for wd in widths), *map(fmt, body)]
    return "\n".join(lines)


def problems(doc: dict) -> list[str]:
    """One line per failed or WRONG entry, with its reason."""
    out = []
    for w in doc["workloads"]:
        for name, e in w.get("systems", {}).items():
            if e.get("status") in ("failed", "WRONG"):
                out.append(f"{w['name']} / {name}: {e['status']}: {e.get('error', '')}")
            if e.get("compile_warm_error"):
                out.append(f"{w['name']} / {name}: warm start: {e['compile_warm_error']}")
    return out


def format_core(doc: dict) -> str:
    """The core set, measured in this one run: NumPy time, compiled time, ratio."""
    lines = ["core set (one run): NumPy vs cppcodegen"]
    for w in doc["workloads"]:
        if not w.get("core"):
            continue
        s, unit = summarize(w, None), w.get("unit", "ms")
        c = w.get("systems", {}).get(COMPILER) or {}
        ratio = _x(s["speedup_vs_numpy"]) if s["speedup_vs_numpy"] else c.get("status", "-")
        lines.append(f"  {w['name']:<12} NumPy {_t(s['numpy_s'], unit):>10}   "
                     f"cppcodegen {_status_cell(c, unit):>10}   ratio {ratio}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- files
def enrich(doc: dict) -> dict:
    bw = (doc.get("bandwidth") or {}).get("gbps")
    for w in doc["workloads"]:
        w["summary"] = summarize(w, bw)
    return doc


def write_json(doc: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(enrich(doc), f, indent=2, sort_keys=False, default=str)


def to_markdown(doc: dict) -> str:
    md = ["# cppcodegen benchmark results", ""]
    md += [f"- {line}" for line in format_header(doc).splitlines()]
    st = doc.get("settings", {})
    md += [f"- mode: {'quick' if st.get('quick') else 'full'}, repeats: {st.get('repeats')}",
           "", "Times are medians (warm-up excluded). `*` marks the core set. "
           "Speedup > 1 means cppcodegen is faster. GB/s counts every input read and every "
           "output written once, at cppcodegen's time; %BW is that over the measured bandwidth "
           "(with --quick the data mostly fits in cache, so %BW can exceed 100%).", ""]
    md.append("| " + " | ".join(COLUMNS) + " |")
    md.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS))) + "|")
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows(doc)]
    probs = problems(doc)
    if probs:
        md += ["", "## Failures and mismatches", ""] + [f"- {p}" for p in probs]
    return "\n".join(md) + "\n"


def write_markdown(doc: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(to_markdown(doc))


def write_png(doc: dict, path: str) -> bool:
    """Grouped bars: speedup over NumPy per workload and system (log scale). False if no
    matplotlib or nothing to plot."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    names = [w["name"] for w in doc["workloads"]]
    systems = [s for s in dict.fromkeys(k for w in doc["workloads"] for k in w["systems"])
               if s != BASELINE]
    series = {}
    for s in systems:
        vals = []
        for w in doc["workloads"]:
            base, t = _ok_time(w["systems"].get(BASELINE)), _ok_time(w["systems"].get(s))
            vals.append(base / t if base and t else 0.0)
        if any(vals):
            series[s] = vals
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(names)), 4.5))
    width = 0.8 / len(series)
    for i, (s, vals) in enumerate(series.items()):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(names))]
        ax.bar(xs, [v if v > 0 else float("nan") for v in vals], width, label=s)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("speedup over NumPy (higher is better)")
    ax.set_title(f"cppcodegen benchmarks, {doc['machine']['threads']} threads")
    ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
