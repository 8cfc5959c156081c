"""Check mode: find the first buffer where compiled code and NumPy disagree.

In: a function and arguments (``check(fn, *args)``) or ``compile(fn, backend="check")``.
Out: a ``CheckReport`` listing, in execution order, every buffer the compiled code
materialized (reported through ``cppcodegen.hooks``) compared with the value of the same
graph node in the NumPy reference interpreter (``reference.run_graph``) of the same traced
graph; on a mismatch, ``CheckError`` naming the first diverging buffer, its op, the user's
file:line and the largest absolute and relative errors::

    report = cppcodegen.check(softmax, x)                       # raises on a mismatch
    report = cppcodegen.check(softmax, x, raise_on_mismatch=False)
    print(report)

Tolerances per dtype (``DEFAULT_TOLERANCES``, override with ``tolerances={dtype: (rtol,
atol, ulp)}``): integers and bools exact; floats pass where ``|got - ref| <= atol + rtol *
|ref|`` or where they are at most ``ulp`` units in the last place apart; NaN positions and
infinities (with their sign) must match exactly. Only materialized buffers are compared
(see ``cppcodegen.hooks``): a pointwise value fused into its consumer shows up in the first
buffer that consumes it. Then the results and the arguments updated in place, those the hooks
did not report (``result[1]:%9:loop_out``, ``arg2:%14:loop_out``).

Loops and branches: the graph is traced as the ``cpp`` backend traces it (control flow
captured), and the reference runs it as Python would (``reference.py``). Hooks report after
the call: a buffer a loop carries holds its value at the loop's exit (a buffer lowering shares
between a carried value's start and the loop is compared with either), a buffer inside a loop
body is never reported (``pipeline._plan`` hooks only the stages of top-level graph nodes).
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..errors import CppCodegenError
from ..ir.graph import CONTROL_OPS, Node
from ..runtime.hooks import intermediate_hook

__all__ = ["check", "CheckReport", "BufferCheck", "CheckError", "DEFAULT_TOLERANCES"]

DEFAULT_TOLERANCES = {
    np.dtype("float16"): (1e-3, 1e-5, 2),
    np.dtype("float32"): (1e-5, 1e-6, 4),
    np.dtype("float64"): (1e-12, 1e-14, 4),
}


@dataclass
class BufferCheck:
    name: str              # "buf3:%7:exp"
    node: str              # "%7"
    op: str
    where: str             # the user's file:line
    shape: tuple
    dtype: str
    ok: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    bad: int = 0           # elements outside tolerance
    reason: str = ""       # why it failed: 'values', 'NaN positions', 'shape', ...

    def line(self) -> str:
        status = "ok      " if self.ok else "MISMATCH"
        err = f"max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}"
        extra = f"  [{self.reason}: {self.bad} elements]" if not self.ok else ""
        return (f"{status} {self.name:<22} {self.dtype}{list(self.shape)}  {err}  "
                f"at {self.where or '?'}{extra}")


@dataclass
class CheckReport:
    function: str
    buffers: list = field(default_factory=list)     # BufferCheck, in execution order
    graph: object = None
    unchecked: list = field(default_factory=list)   # reported names with no graph node

    @property
    def ok(self) -> bool:
        return all(b.ok for b in self.buffers)

    @property
    def first_mismatch(self) -> BufferCheck | None:
        return next((b for b in self.buffers if not b.ok), None)

    def __str__(self):
        head = (f"cppcodegen.check of {self.function}: {len(self.buffers)} buffers compared, "
                + ("all match" if self.ok else f"first mismatch {self.first_mismatch.name}"))
        extra = [f"  not compared: {', '.join(self.unchecked)}"] if self.unchecked else []
        return "\n".join([head] + ["  " + b.line() for b in self.buffers] + extra)


class CheckError(CppCodegenError, AssertionError):
    """A compiled buffer diverged from the NumPy reference; ``.report`` has the details."""

    def __init__(self, report: CheckReport):
        self.report = report
        b = report.first_mismatch
        before = [x.name for x in report.buffers[:report.buffers.index(b)]]
        super().__init__(
            f"cppcodegen.check: {report.function}: buffer {b.name} (op {b.op}, graph node "
            f"{b.node}, at {b.where or 'unknown location'}) diverges from the NumPy reference: "
            f"{b.reason}, max abs error {b.max_abs:.3g}, max rel error {b.max_rel:.3g}, "
            f"{b.bad} of {int(np.prod(b.shape, dtype=np.int64))} elements outside tolerance. "
            f"Buffers before it match ({', '.join(before) or 'none'}). "
            "cppcodegen.explain(fn, *args) shows that node in the graph, loop IR and C++.")


# ----------------------------------------------------------------- comparison

def _ordered(a: np.ndarray) -> np.ndarray:
    """Floats as integers that count representable values (for ULP distances)."""
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(itype).astype(np.int64)
    return np.where(i < 0, np.int64(np.iinfo(itype).min) - i, i)


def compare(got: np.ndarray, ref: np.ndarray, tolerances=None) -> tuple:
    """(ok, max_abs, max_rel, bad count, reason) for one buffer."""
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        return False, np.inf, np.inf, got.size, f"shape {got.shape} != reference {ref.shape}"
    if got.dtype != ref.dtype:
        return False, np.inf, np.inf, got.size, f"dtype {got.dtype} != reference {ref.dtype}"
    if got.dtype.kind not in "fc":
        diff = got != ref
        bad = int(np.count_nonzero(diff))
        if not bad:
            return True, 0.0, 0.0, 0, ""
        d = np.abs(got[diff].astype(np.float64) - ref[diff].astype(np.float64))
        r = d / np.maximum(np.abs(ref[diff].astype(np.float64)), 1)
        return False, float(d.max()), float(r.max()), bad, "values (exact dtype)"
    if got.dtype.kind == "c":       # per component, each as a float of the part's dtype
        return _compare_parts(got, ref, tolerances)
    rtol, atol, ulp = {**DEFAULT_TOLERANCES, **{np.dtype(k): v for k, v in (tolerances or {}).items()}}[got.dtype]
    gn, rn = np.isnan(got), np.isnan(ref)
    nan_bad = gn != rn
    gi, ri = np.isinf(got), np.isinf(ref)
    inf_bad = (gi | ri) & ~(gn | rn) & (got != ref)
    fin = ~(gn | rn | gi | ri)
    g64, r64 = got[fin].astype(np.float64), ref[fin].astype(np.float64)
    d = np.abs(g64 - r64)
    rel = d / np.maximum(np.abs(r64), np.finfo(got.dtype).tiny)
    close = d <= atol + rtol * np.abs(r64)
    if not close.all():
        go, ro = _ordered(got[fin]), _ordered(ref[fin])
        close |= np.abs(go - ro) <= ulp
    bad = int(np.count_nonzero(nan_bad) + np.count_nonzero(inf_bad) + np.count_nonzero(~close))
    max_abs = float(d.max()) if d.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    if np.any(nan_bad):
        return False, max_abs, max_rel, bad, "NaN positions differ"
    if np.any(inf_bad):
        return False, max_abs, max_rel, bad, "infinities differ"
    if bad:
        return False, max_abs, max_rel, bad, f"values (rtol={rtol:g}, atol={atol:g}, {ulp} ulp)"
    return True, max_abs, max_rel, 0, ""


def _compare_parts(got, ref, tolerances) -> tuple:
    """``compare`` of complex buffers: the real parts, then the imaginary parts, each with the
    tolerances of the part's float dtype (or those given for the complex dtype)."""
    part = np.dtype(f"f{got.dtype.itemsize // 2}")
    tols = {np.dtype(k): v for k, v in (tolerances or {}).items()}
    if got.dtype in tols:
        tols[part] = tols[got.dtype]
    results = [compare(np.ascontiguousarray(g), np.ascontiguousarray(r), tols)
               for g, r in ((got.real, ref.real), (got.imag, ref.imag))]
    reason = "; ".join(f"{name} part: {res[4]}" for name, res in zip(("real", "imaginary"), results)
                       if not res[0])
    return (all(r[0] for r in results), max(r[1] for r in results), max(r[2] for r in results),
            sum(r[3] for r in results), reason)


# ----------------------------------------------------------------- running

class CheckVariant:
    """A hooked compiled variant and the traced graph, run side by side."""

    def __init__(self, fn, graph, compiled, tolerances=None):
        self.fn, self.graph, self.compiled = fn, graph, compiled
        self.tolerances = tolerances

    def run(self, args):
        """Returns (compiled outputs, CheckReport)."""
        from .reference import run_graph      # lazy: kept out of `import cppcodegen` (import time)
        from ..runtime.device import get_device_hooks
        reported = []
        before = [np.array(a) if isinstance(a, np.ndarray) else      # (updated in place?)
                  copy.deepcopy(a) if isinstance(a, np.random.Generator) else a for a in args]
        generator = get_device_hooks().default_generator(0)
        start = generator.get_state()   # the reference draws what the compiled code drew
        with intermediate_hook(lambda name, value: reported.append((name, value))):
            out = self.compiled(args)
        names = self.graph.names()
        reference = {}
        end = generator.get_state()
        generator.set_state(start)
        try:
            run_graph(self.graph, before,
                      on_node=lambda n, v: reference.__setitem__(names[id(n)], v))
        finally:
            generator.set_state(end)
        nodes = {names[id(n)]: n for n in self.graph.nodes}
        report = CheckReport(getattr(self.fn, "__qualname__", repr(self.fn)), graph=self.graph)
        exits = _carried_exits(self.graph, names)
        seen = set()
        for name, value in reported:
            _, label, op = name.split(":")        # buffer:node label:op, as pipeline._plan names it
            node = nodes.get(label)
            if node is None or label not in reference:
                report.unchecked.append(name)
                continue
            seen.add(label)
            result = compare(value, reference[label], self.tolerances)
            for other in exits.get(label, ()):    # its buffer may hold a loop's final value
                if not result[0] and other in reference:
                    alt = compare(value, reference[other], self.tolerances)
                    result = alt if alt[0] else result
            report.buffers.append(_buffer_check(name, node, value, result))
        # what the hooks did not show (a loop's carried values, arguments updated in place)
        finals = [(f"result{path}", node, got) for path, node, got
                  in _leaves(self.graph.outputs, out, "") if node.op != "input"]
        finals += [(f"arg{i}", node, args[i]) for i, node in self.graph.mutations]
        for prefix, node, got in finals:
            label = names[id(node)]
            if label in seen or label not in reference:
                continue
            seen.add(label)
            got, want = np.asarray(got), np.asarray(reference[label], dtype=node.dtype)
            report.buffers.append(_buffer_check(f"{prefix}:{label}:{node.op}", node, got,
                                                compare(got, want, self.tolerances)))
        return out, report

    def __call__(self, args):
        out, report = self.run(args)
        if not report.ok:
            raise CheckError(report)
        return out


def _buffer_check(name, node, value, result) -> BufferCheck:
    ok, mabs, mrel, bad, reason = result
    _, label, op = name.split(":")
    return BufferCheck(name, label, op, node.where, tuple(value.shape), str(value.dtype),
                       ok, mabs, mrel, bad, reason)


def _leaves(tree, got, path):
    """(path, output node, compiled value) for each node of the output tree (none where the
    compiled value is None: a result None on some paths, frontend/nones.py)."""
    if got is None:
        return
    if isinstance(tree, Node):
        yield path, tree, got
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, got[k], f"{path}[{k!r}]")
    elif isinstance(tree, (tuple, list)):
        for k, v in enumerate(tree):
            yield from _leaves(v, got[k], f"{path}[{k}]")


def _carried_exits(graph, names) -> dict:
    """label of a construct's initial carried value -> labels of the values it carries out
    (its ``loop_out``): lowering may keep both in one buffer, which then ends with the latter."""
    outs = {}
    for n in graph.nodes:
        if n.op == "loop_out":
            outs[(id(n.inputs[0]), n.attr("index"))] = names[id(n)]
    exits: dict = {}
    for n in graph.nodes:
        if n.op in CONTROL_OPS:
            first = 1 if n.op == "if" else 0
            for k, init in enumerate(n.inputs[first:first + n.attr("ncarry")]):
                if (id(n), k) in outs:
                    exits.setdefault(names[id(init)], []).append(outs[(id(n), k)])
    return exits


def trace_graph(fn, specs, args):
    """The graph the ``cpp`` backend compiles: ``fn`` traced with its loops and branches
    captured (``frontend/control.py``)."""
    from ..frontend.control import trace_function
    return trace_function(fn, specs, args)


def make_check_variant(fn, specs, args, opts, compilation, cpp_backend,
                       tolerances=None) -> CheckVariant:
    """The ``check`` backend: trace, compile with intermediate hooks on (``cpp_backend``, the
    registered 'cpp' backend), pair with the graph."""
    graph = trace_graph(fn, specs, args)
    opts = dataclasses.replace(opts, generate_intermediate_hooks=True)
    return CheckVariant(fn, graph, cpp_backend(fn, specs, args, opts, compilation), tolerances)
