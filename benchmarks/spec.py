"""The ``Workload`` record (see ``benchmarks.workloads`` for what its fields mean).

Apart from the tables so that ``benchmarks.loop_workloads`` can build its own table without
importing ``benchmarks.workloads``, which imports it back to register it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Workload:
    name: str
    fn: Callable
    make_inputs: Callable[[Any], tuple]
    full_size: Any
    quick_size: Any
    description: str
    core: bool = False
    unit: str = "ms"                       # "ms" or "us" for display
    magnitude: Callable | None = None      # (inputs, ref_outputs) -> tuple of error scales
    tags: tuple = field(default=())
    exact: Callable | None = None          # inputs -> float64 reference outputs (accuracy)
    tiny_size: Any = None                  # size for the per-call overhead measurement

    def tiny_inputs(self) -> tuple:
        return self.make_inputs(self.tiny_size)

    def size(self, quick: bool):
        return self.quick_size if quick else self.full_size

    def inputs(self, quick: bool) -> tuple:
        return self.make_inputs(self.size(quick))
