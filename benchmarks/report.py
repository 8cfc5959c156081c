"""Reporting: machine header, derived columns, terminal table, JSON, markdown, PNG chart.

In:  a run document ``{"machine": {...}, "bandwidth": {...}, "settings": {...},
     "workloads": [ {name, unit, core, bytes, systems: {system: {status, time_s, ...}}}, ...]}``.
Out: strings (``format_table``, ``format_core``, ``to_markdown``) and files
     (``write_json``, ``write_markdown``, ``write_png`` -- the last one only with matplotlib).
A system entry's ``status`` is "ok", "failed" (raised; ``error`` says why), "WRONG" (checked
against NumPy and differed; never ranked) or "skipped" (no version of this workload).
Optional entry keys: ``time_1t_s`` (1 thread), ``rel_error_vs_f64`` (sum accuracy),
``compile_cold_s``/``compile_warm_s``, ``tiny_call_s`` (per-call overhead); ``doc["import"]``
holds the ``import cppcodegen`` time. Sections: main table, thread scaling, sum accuracy,
compile time and per-call overhead; ``update_readme`` puts them between README markers.
Workloads of a suite (``benchmarks.spec.Suite``: the loop, linear-algebra and program
workloads; recognized by the suite's tag in their entry's ``tags``) leave those sections for
one per suite (``section_rows``: the function as written under CPython where NumPy times a
rewrite, NumPy, cppcodegen, each peer, 1 thread), between the suite's README markers; a run
without a suite's workloads leaves its part of the README alone, a run of only them (``make
bench-loops``, ``--tag``) leaves the rest alone.
"""
from __future__ import annotations

import json
import os
import platform
import re
import subprocess

BASELINE, COMPILER = "numpy", "cppcodegen"
SCALING_TOL = 0.05   # all threads flagged when slower than 1 thread by more than this (noise)
TARGETS = {"compile_cold_s": 1.0, "compile_warm_s": 0.030, "import_s": 0.150}   # issue 5
README_START, README_END = "<!-- bench-table -->", "<!-- /bench-table -->"
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


def cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


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
    flags = cpu_flags()
    return {"cpu": cpu_model(), "avx512f": "avx512f" in flags if flags else None,
            "cores": os.cpu_count(), "threads": threads,
            "python": platform.python_version(), "numpy": np.__version__,
            "cxx": compiler_version(), "platform": platform.platform(), "versions": versions,
            "load_avg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def tuning_lines(doc: dict) -> list[str]:
    """The measured choices cppcodegen made in the run's workloads (each compiles in a cache
    of its own), each once."""
    seen = {}
    for w in doc.get("workloads", []):
        for line in ((w.get("systems") or {}).get(COMPILER) or {}).get("tuning") or []:
            seen.setdefault(line, w["name"])
    return [f"{line} ({name})" for line, name in seen.items()]


def format_header(doc: dict) -> str:
    m, bw = doc["machine"], doc.get("bandwidth") or {}
    vers = ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()) or "none"
    load = m.get("load_avg_1min")
    busy = (f"  load avg {load:.2f}" + ("  (machine busy: timings may be noisy)"
                                         if load > 0.5 * (m["cores"] or 1) else "")
            ) if load is not None else ""
    isa = {True: " (avx512f)", False: " (no avx512f)"}.get(m.get("avx512f"), "")
    lines = [f"cpu: {m['cpu']}{isa}  cores: {m['cores']}  threads used: {m['threads']}{busy}",
             f"python {m['python']}  numpy {m['numpy']}  cxx: {m['cxx']}",
             f"systems: {vers}"]
    if m.get("isa"):
        forced = (f" (CPPCODEGEN_ISA={m['isa_forced']}; the peers use what the CPU has)"
                  if m.get("isa_forced") else " (the CPU's best)")
        lines.append(f"cppcodegen kernels: {m['isa']}{forced}")
    tuned = tuning_lines(doc)
    if tuned:
        lines.append("choices measured on this machine: " + "; ".join(tuned))
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
        **scaling(w),
        "rel_error_vs_f64": {k: v["rel_error_vs_f64"] for k, v in systems.items()
                             if v.get("status") == "ok" and v.get("rel_error_vs_f64") is not None},
    }


def scaling(w: dict, system: str = COMPILER) -> dict:
    """1 thread vs all threads for one system: times, speedup from threads, and the flag."""
    e = (w.get("systems") or {}).get(system) or {}
    t_all, t_1 = _ok_time(e), e.get("time_1t_s")
    speedup = t_1 / t_all if t_all and t_1 else None
    return {"time_1t_s": t_1 if t_all else None, "thread_speedup": speedup,
            "slower_with_threads": bool(speedup is not None and speedup < 1 - SCALING_TOL)}


def _t(seconds, unit):
    if seconds is None:
        return "-"
    v = seconds * (1e6 if unit == "us" else 1e3)
    return f"{v:.1f} {unit}" if v >= 10 else f"{v:.3g} {unit}"


def _x(ratio):
    if ratio is None:
        return "-"
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


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


def _grid(header, body) -> str:
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(c).ljust(wd) if i == 0 else str(c).rjust(wd)
                              for i, (c, wd) in enumerate(zip(r, widths)))
    return "\n".join([fmt(header), "  ".join("-" * wd for wd in widths), *map(fmt, body)])


def _md_grid(header, body) -> list[str]:
    return ["| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
            *("| " + " | ".join(str(c) for c in r) + " |" for r in body)]


# ----------------------------------------------------------------------------- extra sections
SCALING_COLUMNS = ("workload", "cppcodegen 1 thread", "all threads", "threads speedup",
                   "NumPy 1 thread", "NumPy all threads", "flag")


def scaling_rows(doc: dict) -> list[tuple]:
    """cppcodegen (and, for BLAS workloads, NumPy) at 1 thread vs all threads."""
    out = []
    for w in doc["workloads"]:
        sc, unit = scaling(w), w.get("unit", "ms")
        c = w.get("systems", {}).get(COMPILER) or {}
        n = w.get("systems", {}).get(BASELINE) or {}
        if sc["time_1t_s"] is None and not c.get("time_1t_error") and "time_1t_s" not in n:
            continue
        flag = "SLOWER WITH THREADS" if sc["slower_with_threads"] else \
            (c.get("time_1t_error", "")[:60] if c.get("time_1t_error") else "")
        out.append((w["name"], _t(sc["time_1t_s"], unit), _t(_ok_time(c), unit),
                    _x(sc["thread_speedup"]),
                    _t(n.get("time_1t_s"), unit) if "time_1t_s" in n else "-",
                    _t(_ok_time(n), unit) if "time_1t_s" in n else "-", flag))
    return out


def scaling_flags(doc: dict) -> list[str]:
    out = []
    for w in doc["workloads"]:
        sc, unit = scaling(w), w.get("unit", "ms")
        if sc["slower_with_threads"]:
            out.append(f"{w['name']}: cppcodegen with {doc['machine']['threads']} threads "
                       f"{_t(_ok_time(w['systems'][COMPILER]), unit)} is slower than 1 thread "
                       f"{_t(sc['time_1t_s'], unit)}")
    return out


def accuracy_rows(doc: dict) -> list[tuple]:
    """Relative error against a float64 sum, per workload with an exact reference, per system."""
    out = []
    for w in doc["workloads"]:
        errs = summarize(w, None)["rel_error_vs_f64"]
        for name, e in w.get("systems", {}).items():
            if name in errs:
                out.append((w["name"], name, f"{errs[name]:.2e}"))
    return out


def accuracy_flags(doc: dict) -> list[str]:
    out = []
    for w in doc["workloads"]:
        errs = summarize(w, None)["rel_error_vs_f64"]
        if COMPILER in errs and BASELINE in errs and errs[COMPILER] > errs[BASELINE]:
            out.append(f"{w['name']}: cppcodegen's relative error {errs[COMPILER]:.2e} is larger "
                       f"than NumPy's {errs[BASELINE]:.2e}")
    return out


OVERHEAD_COLUMNS = ("workload", "cold compile s", "warm start ms", "per-call us", "NumPy per-call us",
                    "at size")


def _us(seconds):
    return "-" if seconds is None else (f"{seconds * 1e6:.1f}" if seconds < 1e-2
                                        else f"{seconds * 1e6:.0f}")


def overhead_rows(doc: dict) -> list[tuple]:
    """Workloads tagged "overhead": cold compile, warm start, per-call time at a tiny size (or
    the workload's own size when it is already tiny, e.g. chain_small)."""
    out = []
    for w in doc["workloads"]:
        c = w.get("systems", {}).get(COMPILER) or {}
        n = w.get("systems", {}).get(BASELINE) or {}
        if "tiny_call_s" not in c and "tiny_call_s" not in n and w.get("unit") != "us":
            continue
        if w.get("unit") == "us":
            call, ncall, size = _ok_time(c), _ok_time(n), w.get("size")
        else:
            call, ncall = c.get("tiny_call_s"), n.get("tiny_call_s")
            size = c.get("tiny_size") or n.get("tiny_size")
        cold, warm = c.get("compile_cold_s"), c.get("compile_warm_s")
        out.append((w["name"], "-" if cold is None else f"{cold:.2f}",
                    "-" if warm is None else f"{warm * 1e3:.1f}", _us(call), _us(ncall),
                    "x".join(str(d) for d in size) if size else "-"))
    return out


def import_line(doc: dict) -> str:
    imp = doc.get("import") or {}
    if not imp:
        return "import cppcodegen: not measured"
    if imp.get("error"):
        return f"import cppcodegen: {imp['error']}"
    heavy = ", ".join(imp.get("heavy_modules") or []) or "none"
    return (f"import cppcodegen: {imp['import_s'] * 1e3:.0f} ms after numpy (median of "
            f"{imp['runs']} fresh processes; target < {TARGETS['import_s'] * 1e3:.0f} ms; "
            f"heavy modules it imports: {heavy})")


def overhead_flags(doc: dict) -> list[str]:
    out = []
    for r in overhead_rows(doc):
        name, cold, warm = r[0], r[1], r[2]
        if cold != "-" and float(cold) > TARGETS["compile_cold_s"]:
            out.append(f"{name}: cold compile {cold} s > {TARGETS['compile_cold_s']:g} s target")
        if warm != "-" and float(warm) > TARGETS["compile_warm_s"] * 1e3:
            out.append(f"{name}: warm start {warm} ms > {TARGETS['compile_warm_s'] * 1e3:g} ms target")
    imp = (doc.get("import") or {}).get("import_s")
    if imp is not None and imp > TARGETS["import_s"]:
        out.append(f"import cppcodegen {imp * 1e3:.0f} ms > {TARGETS['import_s'] * 1e3:.0f} ms target")
    return out


SCALING_NOTE = ("1 thread: cppcodegen re-run in a new process with OMP_NUM_THREADS=1 (and every "
                "other thread variable at 1), reusing the compiled kernels; NumPy too where it "
                "uses threads (BLAS). threads speedup = 1-thread time / all-threads time; flagged "
                f"when all threads are slower than 1 thread by more than {SCALING_TOL:.0%}.")
ACCURACY_NOTE = ("Relative error = |result - float64 sum of the same float32 input| / |float64 "
                 "sum|; flagged when cppcodegen's is larger than NumPy's (pairwise sum).")
OVERHEAD_NOTE = ("cold compile: compile() + first call with an empty cache "
                 "(cppcodegen.fresh_cache()), includes building the kernel. warm start: a new "
                 "process with the cache populated, compile() + first call until the result is "
                 "back, import excluded. per-call: median time of one call at the size shown "
                 "(tiny inputs, so this is the call overhead).")


def format_all(doc: dict) -> str:
    """Everything the terminal shows after a run."""
    main, parts = split_suites(doc)
    texts = [format_main(main)] if main["workloads"] or not parts else []
    return "\n\n".join(texts + [format_section(s, d) for s, d in parts])


def format_main(doc: dict) -> str:
    threads = (doc.get("machine") or {}).get("threads")
    parts = [format_table(doc)]
    probs = problems(doc)
    if probs:
        parts.append("failures and mismatches:\n" + "\n".join(f"  {p}" for p in probs))
    body = scaling_rows(doc)
    if body:
        hdr = SCALING_COLUMNS[:2] + (f"{threads} threads",) + SCALING_COLUMNS[3:]
        parts.append(f"thread scaling (1 thread vs {threads} threads):\n" + _grid(hdr, body))
    body = accuracy_rows(doc)
    if body:
        parts.append("float32 sum accuracy (relative error vs a float64 sum):\n"
                     + _grid(("workload", "system", "rel. error"), body))
    body = overhead_rows(doc)
    parts.append("compile time and per-call overhead (cppcodegen):\n"
                 + (_grid(OVERHEAD_COLUMNS, body) + "\n" if body else "") + import_line(doc))
    from benchmarks import dynamic_bench
    text = dynamic_bench.format_text(doc, _grid)
    if text:
        parts.append(text)
    flags = scaling_flags(doc) + accuracy_flags(doc) + overhead_flags(doc)
    if flags:
        parts.append("flags:\n" + "\n".join(f"  {f}" for f in flags))
    parts.append(format_core(doc))
    from benchmarks.dask_bench import format_text       # the Dask section, if it ran
    parts += [format_text(doc)] if doc.get("dask") else []
    return "\n\n".join(parts)


# ----------------------------------------------------------------------------- suite sections
def suites() -> tuple:
    from benchmarks.workloads import SUITES
    return SUITES


def suite_of(w: dict):
    """The suite (``benchmarks.spec.Suite``) whose tag the workload entry carries, or None."""
    tags = w.get("tags") or ()
    return next((s for s in suites() if s.tag in tags), None)


def split_suites(doc: dict) -> tuple[dict, list]:
    """(the run without the suites' workloads, [(suite, the run with only its workloads)] for
    the suites that have any): shallow copies."""
    ws = doc.get("workloads") or []
    parts = [(s, {**doc, "workloads": [w for w in ws if s.tag in (w.get("tags") or ())]})
             for s in suites()]
    return ({**doc, "workloads": [w for w in ws if suite_of(w) is None]},
            [(s, d) for s, d in parts if d["workloads"]])


def section_peers(doc: dict) -> list[str]:
    """The peers that ran (or tried to) on at least one workload, in order of appearance."""
    seen = dict.fromkeys(k for w in doc["workloads"] for k, e in w.get("systems", {}).items()
                         if k not in (BASELINE, COMPILER) and e.get("status") != "skipped")
    return list(seen)


def _ts(seconds, unit):
    """Like ``_t``, in seconds from 1 s up (CPython runs of the loops take that long)."""
    return f"{seconds:.2f} s" if seconds is not None and seconds >= 1 else _t(seconds, unit)


def section_columns(doc: dict) -> tuple:
    cols = ["workload", "size", "as written, CPython", "NumPy", "cppcodegen", "vs NumPy"]
    for p in section_peers(doc):
        cols += [p, f"vs {p}"]
    return tuple(cols + ["cppcodegen 1 thread", "compile cold s"])


def section_rows(doc: dict) -> list[tuple]:
    out = []
    for w in doc["workloads"]:
        unit, systems = w.get("unit", "ms"), w.get("systems", {})
        n, c = systems.get(BASELINE) or {}, systems.get(COMPILER) or {}
        base, cpp = _ok_time(n), _ok_time(c)
        size = w.get("size")
        row = [w["name"], "x".join(str(d) for d in size) if size else "-",
               _ts(w.get("reference_s"), unit) if n.get("vectorized") else "= NumPy",
               _ts(base, unit) if base else _status_cell(n, unit),
               _ts(cpp, unit) if cpp else _status_cell(c, unit),
               _x(base / cpp if base and cpp else None)]
        for p in section_peers(doc):
            e = systems.get(p) or {}
            t = _ok_time(e)
            row += [_ts(t, unit) if t else _status_cell(e, unit),
                    _x(t / cpp if t and cpp else None)]
        cold = c.get("compile_cold_s")
        row += [_ts(c.get("time_1t_s"), unit) if cpp and c.get("time_1t_s") else "-",
                "-" if cold is None else f"{cold:.2f}"]
        out.append(tuple(row))
    return out


def format_section(suite, doc: dict) -> str:
    title = suite.title.lower()
    parts = [f"{title}:\n" + _grid(section_columns(doc), section_rows(doc))]
    flags = scaling_flags(doc)
    if flags:
        parts.append(f"{title}, flags:\n" + "\n".join(f"  {f}" for f in flags))
    probs = problems(doc)
    if probs:
        parts.append(f"{title}, failures and mismatches:\n"
                     + "\n".join(f"  {p}" for p in probs))
    return "\n\n".join(parts)


def section_markdown(suite, doc: dict, level: int = 3) -> str:
    h = "#" * level
    md = [f"{h} {suite.title}", "", suite.note, ""] + _run_lines(doc) + [""]
    md += _md_grid(section_columns(doc), section_rows(doc))
    md += [""] + [f"- {w['name']}: {w.get('description', '')}" for w in doc["workloads"]]
    flags = scaling_flags(doc)
    if flags:
        md += ["", "Flags:", ""] + [f"- {f}" for f in flags]
    probs = problems(doc)
    if probs:
        md += ["", "Failures and mismatches:", ""] + [f"- {p}" for p in probs]
    return "\n".join(md) + "\n"


# ----------------------------------------------------------------------------- files
def enrich(doc: dict) -> dict:
    bw = (doc.get("bandwidth") or {}).get("gbps")
    for w in doc["workloads"]:
        w["summary"] = summarize(w, bw)
    doc["flags"] = scaling_flags(doc) + accuracy_flags(doc) + overhead_flags(doc)
    return doc


def write_json(doc: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(enrich(doc), f, indent=2, sort_keys=False, default=str)


def to_markdown(doc: dict, level: int = 1) -> str:
    """The results as markdown; ``level`` is the heading level of the title (sections get one
    more), so the README can hold it under its ``## Benchmarks``."""
    main, parts = split_suites(doc)
    md = main_markdown(main, level) if main["workloads"] or not parts else ""
    if parts and not md:
        md = f"{'#' * level} cppcodegen benchmark results\n\n"
    for suite, d in parts:
        md += "\n" + section_markdown(suite, d, level + 1)
    return md


def _run_lines(doc: dict) -> list[str]:
    """Machine, mode, date and command of a run, as markdown list items."""
    md = [f"- {line}" for line in format_header(doc).splitlines()]
    st = doc.get("settings", {})
    md += [f"- mode: {'quick' if st.get('quick') else 'full'}, repeats: {st.get('repeats')}"
           + (f", peers only on {', '.join(st['peers_only_on'])}" if st.get("peers_only_on")
              else "")]
    if doc.get("date"):
        md.append(f"- date: {doc['date']}")
    if doc.get("command"):
        md.append(f"- command: `{doc['command']}`")
    return md


def main_markdown(doc: dict, level: int = 1) -> str:
    h = "#" * level
    md = [f"{h} cppcodegen benchmark results", ""] + _run_lines(doc)
    md += ["", "Times are medians (warm-up excluded). `*` marks the core set. "
           "Speedup > 1 means cppcodegen is faster. GB/s counts every input read and every "
           "output written once, at cppcodegen's time; %BW is that over the measured bandwidth "
           "(with --quick the data mostly fits in cache, so %BW can exceed 100%).", ""]
    md.append("| " + " | ".join(COLUMNS) + " |")
    md.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS))) + "|")
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows(doc)]
    hh = h + "#"
    threads = (doc.get("machine") or {}).get("threads")
    body = scaling_rows(doc)
    if body:
        hdr = SCALING_COLUMNS[:2] + (f"{threads} threads",) + SCALING_COLUMNS[3:]
        md += ["", f"{hh} Thread scaling: 1 thread vs {threads} threads", "", SCALING_NOTE, ""]
        md += _md_grid(hdr, body)
    body = accuracy_rows(doc)
    if body:
        md += ["", f"{hh} Float32 sum accuracy", "", ACCURACY_NOTE, ""]
        md += _md_grid(("workload", "system", "relative error vs float64"), body)
    body = overhead_rows(doc)
    md += ["", f"{hh} Compile time and per-call overhead (cppcodegen)", "", OVERHEAD_NOTE, ""]
    if body:
        md += _md_grid(OVERHEAD_COLUMNS, body) + [""]
    md.append(f"- {import_line(doc)}")
    from benchmarks import dynamic_bench
    md += dynamic_bench.markdown(doc, hh, _md_grid)
    from benchmarks.dask_bench import markdown as dask_markdown      # [] when it did not run
    md += dask_markdown(doc, hh)
    flags = scaling_flags(doc) + accuracy_flags(doc) + overhead_flags(doc)
    if flags:
        md += ["", f"{hh} Flags", ""] + [f"- {f}" for f in flags]
    probs = problems(doc)
    if probs:
        md += ["", f"{hh} Failures and mismatches", ""] + [f"- {p}" for p in probs]
    return "\n".join(md) + "\n"


def readme_section(text: str, doc: dict) -> str:
    """``text`` (a README) with everything between the bench-table markers replaced by the
    results (headings under the README's ``## Benchmarks``). A missing closing marker is added:
    the old section then ends at the next ``## `` heading or at the end of the file."""
    start = text.find(README_START)
    if start < 0:
        raise ValueError(f"no {README_START} marker in the README")
    body_start = start + len(README_START)
    end = text.find(README_END, body_start)
    if end >= 0:
        tail = text[end + len(README_END):]
    else:
        m = re.search(r"^## ", text[body_start:], flags=re.M)
        tail = "\n\n" + text[body_start + m.start():] if m else "\n"
    md = to_markdown(doc, level=2).replace("## cppcodegen benchmark results\n\n", "", 1)
    return text[:body_start] + "\n" + md + README_END + tail


def suite_readme_section(text: str, suite, doc: dict) -> str:
    """``text`` with everything between the suite's markers replaced by its section; without
    the markers, the section goes at the end of the Benchmarks part: after the last section
    of a suite, or after the bench-table one."""
    start_m, end_m = suite.markers
    md = section_markdown(suite, doc, level=3)
    start = text.find(start_m)
    if start < 0:
        ends = [text.find(m) for m in [README_END] + [s.markers[1] for s in suites()]]
        ends = [(at, m) for at, m in zip(ends, [README_END] + [s.markers[1] for s in suites()])
                if at >= 0]
        if not ends:
            raise ValueError(f"no {start_m} (nor {README_END}) marker in the README")
        at, m = max(ends)
        at += len(m)
        return text[:at] + f"\n\n{start_m}\n{md}{end_m}" + text[at:]
    body_start = start + len(start_m)
    end = text.find(end_m, body_start)
    if end < 0:
        raise ValueError(f"{start_m} without {end_m} in the README")
    return text[:body_start] + "\n" + md + text[end:]


def update_readme(path: str, doc: dict) -> list[str]:
    """The bench-table section from the workloads of no suite, each suite's section from its
    workloads; a run without any workload of a kind leaves that section as it was. A run whose
    kernels were built for less than the CPU has writes a section of its own instead. Returns
    the names of the sections written."""
    with open(path) as f:
        text = f.read()
    m = doc.get("machine") or {}
    if m.get("isa") and m.get("isa") != m.get("isa_native", m["isa"]):
        from benchmarks import forced_isa        # a section of its own (forced_isa.py)
        new, which = forced_isa.update(text, doc), [f"bench-{m['isa']}"]
    else:
        main, parts = split_suites(doc)
        new, which = text, []
        if main["workloads"] or not parts:
            new, which = readme_section(new, main), ["bench-table"]
        for suite, d in parts:
            new = suite_readme_section(new, suite, d)
            which.append(suite.markers[0][5:-4])
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)
    return which


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
