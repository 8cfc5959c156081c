"""The ``Workload`` record (see ``benchmarks.workloads`` for what its fields mean) and the
``Suite`` record (a set of workloads with a report section of its own).

Apart from the tables so that the suite modules (``benchmarks.loop_workloads`` & co.) can build
their tables without importing ``benchmarks.workloads``, which imports them to register them.
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


@dataclass(frozen=True)
class Suite:
    """Workloads with a report section (and README markers) of their own.

    ``numpy_vectorized``: name -> the NumPy rewrite timed in the NumPy column where the
    function loops in Python (elsewhere NumPy times the function as written). ``numba`` /
    ``jax``: () -> {name: callable}; Numba runs only the names it returns, jax.jit wraps its
    callable instead of the function with ``np`` rebound to ``jax.numpy``. The README section
    lies between ``<!-- {marker} -->`` and ``<!-- /{marker} -->``."""
    tag: str
    title: str
    note: str
    workloads: dict
    quick: tuple = ()
    numpy_vectorized: dict = field(default_factory=dict)
    numba: Callable | None = None
    jax: Callable | None = None
    marker: str = ""

    @property
    def markers(self) -> tuple[str, str]:
        m = self.marker or f"bench-{self.tag}"
        return f"<!-- {m} -->", f"<!-- /{m} -->"
