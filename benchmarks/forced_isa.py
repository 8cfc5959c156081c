"""README section of a run whose kernels were built for another ISA than the CPU's best
(``CPPCODEGEN_ISA=avx2 make bench`` on an AVX-512 machine): one table of every workload, between
``<!-- bench-{isa} -->`` markers, so the figures of the CPU's own run stay where they are.

The peers keep what the CPU has (they cannot be told to use AVX2 only), so against them the
forced run is the pessimistic comparison."""
from __future__ import annotations

from benchmarks import report

COLUMNS = ("workload", "NumPy", "cppcodegen", "vs NumPy", "best peer", "vs peer")


def markers(isa: str) -> tuple[str, str]:
    return f"<!-- bench-{isa} -->", f"<!-- /bench-{isa} -->"


def markdown(doc: dict) -> str:
    isa = doc["machine"]["isa"]
    bw = (doc.get("bandwidth") or {}).get("gbps")
    lines = [f"### Kernels built for {isa} on the same machine", ""] + report._run_lines(doc)
    lines += ["", "One row per workload (every suite); medians; speedup > 1 means cppcodegen is "
              "faster. Ratios below 1.0 are in bold.", ""]
    body, wins = [], []
    for w in doc["workloads"]:
        s, unit = report.summarize(w, bw), w.get("unit", "ms")
        mark = lambda r: report._x(r) if r is None or r >= 1 else f"**{report._x(r)}**"
        systems = w.get("systems", {})
        body.append((w["name"], report._status_cell(systems.get(report.BASELINE), unit),
                     report._status_cell(systems.get(report.COMPILER), unit),
                     mark(s["speedup_vs_numpy"]),
                     s["best_peer"] or "-", mark(s["speedup_vs_best_peer"])))
        wins.append(s["speedup_vs_numpy"])
    lines += report._md_grid(COLUMNS, body)
    got = [r for r in wins if r]
    if got:
        behind = sum(r < 1 for r in got)
        lines += ["", f"{len(got)} workloads measured; {behind} slower than NumPy."]
    return "\n".join(lines) + "\n"


def update(text: str, doc: dict) -> str:
    """``text`` with the run's section replaced, or added at the end of the Benchmarks part
    (after the last of the bench sections' closing markers)."""
    start_m, end_m = markers(doc["machine"]["isa"])
    md = markdown(doc)
    start = text.find(start_m)
    if start >= 0:
        end = text.find(end_m, start)
        if end < 0:
            raise ValueError(f"{start_m} without {end_m} in the README")
        return text[:start + len(start_m)] + "\n" + md + text[end:]
    closers = [report.README_END] + [s.markers[1] for s in report.suites()]
    ends = [text.find(m) + len(m) for m in closers if text.find(m) >= 0]
    if not ends:
        raise ValueError(f"no {report.README_END} marker in the README")
    at = max(ends)
    return text[:at] + f"\n\n{start_m}\n{md}{end_m}" + text[at:]
