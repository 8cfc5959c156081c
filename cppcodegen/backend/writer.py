"""An indented text buffer for emitting C++, and the one place pragmas are spelled."""
from __future__ import annotations

import contextlib


class CodeWriter:
    def __init__(self, indent: str = "  "):
        self.lines: list[str] = []
        self.level = 0
        self.indent_text = indent

    def line(self, text: str = ""):
        self.lines.append(self.indent_text * self.level + text if text else "")

    def lines_(self, text: str):
        for t in text.splitlines():
            self.line(t)

    @contextlib.contextmanager
    def indent(self, open_: str | None = None, close: str = "}"):
        if open_ is not None:
            self.line(open_)
        self.level += 1
        try:
            yield
        finally:
            self.level -= 1
            if open_ is not None:
                self.line(close)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def omp_parallel_for(collapse: int = 1, work: int = 1 << 14, contiguous: bool = False,
                     condition: str | None = None, trip: str | None = None) -> str:
    """A parallel loop whose iterations each touch about ``work`` elements. Iterations are
    handed out dynamically in chunks, so a thread that the OS preempts does not hold the
    others back (results never depend on the schedule): of ~16K elements, or, given the
    loop's ``trip`` count (C++), as large as 256K elements while every thread still gets
    4 chunks (``ccg::chunk_iters``, include/cppcodegen/schedule.h). ``contiguous``: one
    contiguous range per thread (static), for loops that stream a large operand which later
    calls read again (a matrix-vector product in an iteration)."""
    work = max(1, int(work))
    chunk = max(1, (1 << 14) // work)
    if trip is not None and not contiguous:
        chunk = f"ccg::chunk_iters({trip}, {work})"
    sched = "static" if contiguous else f"dynamic, {chunk}"
    return (f"#pragma omp parallel for schedule({sched})"
            + (f" collapse({collapse})" if collapse > 1 else "") + team_if(condition))


def team_if(condition: str | None = None) -> str:
    """The ``if`` clause of every parallel pragma: ``condition`` (when given) and then the
    placement of the call's team (include/cppcodegen/placement.h), once per call, only when
    a region does run on several threads."""
    return f" if({condition} && ccg::team_begin())" if condition else " if(ccg::team_begin())"



def omp_parallel() -> str:
    """A parallel region whose loops are shared out by ``omp_for`` (one team start for
    several loops)."""
    return "#pragma omp parallel" + team_if()


def omp_for(chunk: int | None = None) -> str:
    """A loop of the enclosing parallel region: dynamic chunks of ``chunk`` iterations, or
    equal contiguous ranges (static) without it; a barrier follows the loop."""
    return f"#pragma omp for schedule({'static' if chunk is None else f'dynamic, {chunk}'})"
