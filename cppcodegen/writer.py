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


def omp_parallel_for(collapse: int = 1) -> str:
    return "#pragma omp parallel for schedule(static)" + (f" collapse({collapse})" if collapse > 1 else "")


OMP_PARALLEL = "#pragma omp parallel"
