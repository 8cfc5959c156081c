"""The NumPy reference interpreter on captured control flow (``for``, ``while``, ``if``).

Every case runs the plain Python function, ``compile(fn, backend="numpy")`` (the reference
interpreter on the captured graph) and ``compile(fn, backend="check")`` (compiled C++ and the
reference side by side: raises ``CheckError`` when they differ) on copies of the same
arguments, and compares results and arguments afterwards (same shape, same dtype, values
within tolerance; integers exactly). The programs come from ``test_control_flow.py``.
Then the interpreter's own contract: what ``on_node`` sees inside loops, induction variables
and dynamic sizes bound while regions run, and what check mode compares.
"""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from cppcodegen.checking.check import CheckError, CheckVariant, trace_graph
from cppcodegen.checking.reference import Interpreter, input_sizes, run_graph
from cppcodegen.frontend import signature
from cppcodegen.runtime.hooks import run_intermediate_hooks
from test_control_flow import (A100, B100, M12, R, _compare, _copy, _spd, bubblesort,
                               break_and_continue, collatz_steps, dot_shape, enumerate_positive,
                               first_negative, gemm_loops, halve_until_small, if_without_else,
                               jacobi_1d, lower_triangle_sum, newton_sqrt, prefix_sum_n,
                               reverse_copy, rows_until_threshold, rows_weighted, sign_of_sum,
                               smooth_interior, sum_positive_continue, syrk, trisolv,
                               ema)

EXACT = dict(rtol=0.0, atol=0.0)
CLOSE = dict(rtol=1e-10, atol=1e-12)

def prefix_sums_of_prefixes(a):
    # an array the body makes with a loop-dependent shape (its start value is never read)
    s = 0.0
    for i in range(1, a.shape[0]):
        t = np.zeros(i)
        t += a[:i]
        s += t.sum()
    return s


_L = np.tril(R(7).standard_normal((12, 12))) + 5 * np.eye(12)
_G = R(13)

# (id, function, arguments, tolerance)
CASES = [
    ("for_carried_scalar", dot_shape, (A100, B100), EXACT),
    ("for_int_argument_bound", prefix_sum_n, (A100, 37), EXACT),
    ("for_inplace_copy", smooth_interior, (A100,), CLOSE),
    ("for_negative_step", reverse_copy, (A100,), EXACT),
    ("nested_triangular", lower_triangle_sum, (M12,), EXACT),
    ("nested_trisolv", trisolv, (_L, R(8).standard_normal(12)), CLOSE),
    ("nested_inplace_argument", gemm_loops,
     (1.5, 0.5, _G.standard_normal((6, 7)), _G.standard_normal((6, 5)),
      _G.standard_normal((5, 7))), CLOSE),
    ("nested_symbolic_slices", syrk,
     (1.5, 1.2, R(10).standard_normal((9, 9)), R(9).standard_normal((9, 4))), CLOSE),
    ("nested_if_swap_inplace", bubblesort, (R(11).standard_normal(30),), EXACT),
    ("for_carried_array_pair", ema, (A100, 0.3), CLOSE),
    ("while_data_condition_array", jacobi_1d, (np.ones(12), 1e-4), CLOSE),
    ("while_on_reduction", halve_until_small, (10.0 * M12,), EXACT),
    ("while_in_for", newton_sqrt, (np.abs(A100[:20]) + 0.1, 1e-12), CLOSE),
    ("while_integer_branches", collatz_steps, (np.array([1, 6, 7, 27, 97]),), EXACT),
    ("if_reduction_then", sign_of_sum, (np.abs(M12),), EXACT),
    ("if_reduction_else", sign_of_sum, (-np.abs(M12),), EXACT),
    ("if_without_else", if_without_else, (A100,), EXACT),
    ("break_found", first_negative, (np.array([3.0, 2.0, 1.0, -1.0, 5.0, -2.0]),), EXACT),
    ("break_not_found", first_negative, (np.array([3.0, 2.0, 1.0, 4.0]),), EXACT),
    ("continue", sum_positive_continue, (A100,), EXACT),
    ("break_and_continue", break_and_continue, (A100,), EXACT),
    ("inner_break", rows_until_threshold, (R(16).random((9, 11)), 0.8), EXACT),
    ("enumerate_with_if", enumerate_positive, (A100,), EXACT),
    ("for_row_in_x", rows_weighted, (M12, A100[:12].copy()), CLOSE),
    ("body_array_of_loop_shape", prefix_sums_of_prefixes, (A100[:20],), CLOSE),
]
IDS = [c[0] for c in CASES]
_COMPILED: dict = {}


def compiled(fn, backend):
    key = (fn, backend)
    if key not in _COMPILED:
        _COMPILED[key] = cppcodegen.compile(fn, backend=backend)
    return _COMPILED[key]


def agree(fn, args, tol, backend):
    """The plain function and ``backend`` on copies of ``args``: results and arguments."""
    want_args, got_args = _copy(list(args)), _copy(list(args))
    want = fn(*want_args)
    got = compiled(fn, backend)(*got_args)
    _compare(got, want, tol["rtol"], tol["atol"], f"{fn.__name__} result ({backend})")
    for i, (g, e) in enumerate(zip(got_args, want_args)):
        if isinstance(e, np.ndarray):
            _compare(g, e, tol["rtol"], tol["atol"], f"{fn.__name__} argument #{i} ({backend})")


@pytest.mark.parametrize("name, fn, args, tol", CASES, ids=IDS)
def test_numpy_backend_matches_python(name, fn, args, tol):
    agree(fn, args, tol, "numpy")
    for variant in compiled(fn, "numpy").variants.values():     # loops captured, not unrolled
        assert any(n.op in ("for", "while", "if") for n in variant.graph.nodes)


@pytest.mark.parametrize("name, fn, args, tol", CASES, ids=IDS)
def test_check_backend_matches_python(name, fn, args, tol):
    agree(fn, args, tol, "check")          # raises CheckError if C++ and reference differ


def test_one_numpy_variant_serves_other_trip_counts_and_branches():
    f = compiled(first_negative, "numpy")
    for a in (np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0, 3.0]), np.array([-1.0, 2.0, 3.0])):
        assert f(a.copy()) == first_negative(a.copy())
    g = compiled(halve_until_small, "numpy")
    for x in (M12, 10.0 * M12, 1e5 * M12):
        _compare(g(x), halve_until_small(x), 0.0, 0.0, "halve_until_small")
    assert len(g.variants) == 1


# --------------------------------------------------------------------------- check reports

def test_check_report_compares_results_and_updated_arguments():
    args = (1.5, 0.5, _G.standard_normal((4, 5)), _G.standard_normal((4, 3)),
            _G.standard_normal((3, 5)))
    report = cppcodegen.check(gemm_loops, *_copy(list(args)))
    assert report.ok and report.buffers, str(report)
    labels = {b.node for b in report.buffers}
    graph_out = report.graph.names()[id(report.graph.leaves[0])]
    assert graph_out in labels or report.graph.leaves[0].op == "input"
    mutated = report.graph.names()[id(report.graph.mutations[0][1])]
    assert mutated in labels                 # C (argument 2) updated in place: compared
    assert "all match" in str(report)


def loop_exp(x):
    t = np.zeros(x.shape[1])
    for row in x:
        t += np.exp(row)
    return t


def test_check_names_a_miscompiled_loop_result():
    x = R(3).standard_normal((5, 6))
    with pytest.raises(CheckError) as info:
        cppcodegen.check(loop_exp, x, options={"_testing_miscompile": "exp"})
    bad = info.value.report.first_mismatch
    assert bad.op == "loop_out" and bad.where.endswith(f"{__name__.rpartition('.')[2]}.py:"
                                                       f"{loop_exp.__code__.co_firstlineno + 2}")
    assert cppcodegen.check(loop_exp, x).ok


def running(a):
    out = a * 1.0
    for i in range(1, a.shape[0]):
        out[i] = out[i - 1] + a[i]
    return out


def _traced(fn, *args):
    return trace_graph(fn, signature.classify(args), args)


def test_check_accepts_a_carried_buffer_holding_the_loop_exit_value():
    """Lowering may keep a loop's initial value and its carried value in one buffer; reported
    after the call, that buffer holds the value at the loop's exit."""
    a = np.arange(1.0, 6.0)
    graph = _traced(running, a)
    names = graph.names()
    loop = next(n for n in graph.nodes if n.op == "for")
    init = names[id(loop.inputs[1])]           # carry 0: the index variable; 1: out

    def fake(value):
        def run(args):
            run_intermediate_hooks(f"buf0:{init}:multiply", value)
            run_intermediate_hooks("buf1:carry 1 of for:for", value)
            return np.cumsum(args[0])
        return run
    _, report = CheckVariant(running, graph, fake(np.cumsum(a))).run([a])
    result = names[id(graph.leaves[0])]
    assert report.ok and [b.node for b in report.buffers] == [init, result]
    assert report.unchecked == ["buf1:carry 1 of for:for"]
    _, report = CheckVariant(running, graph, fake(np.cumsum(a) + 1)).run([a])
    assert not report.ok and report.first_mismatch.node == init


# --------------------------------------------------------------------------- the interpreter

def test_on_node_sees_top_level_nodes_and_loop_exit_values():
    graph = _traced(dot_shape, A100[:5], B100[:5])
    seen = []
    out = run_graph(graph, (A100[:5], B100[:5]), on_node=lambda n, v: seen.append((n, v)))
    assert [n for n, _ in seen] == [n for n in graph.nodes if n.op not in ("for", "while", "if")]
    (final,) = [v for n, v in seen if n.op == "loop_out" and n.dtype != bool]  # (not the
                                                    # flag: a Python float when no iteration)
    assert final == out == dot_shape(A100[:5], B100[:5])


def test_each_iteration_reports_region_nodes_with_the_induction_variable_bound():
    a, b = A100[:4], B100[:4]
    graph = _traced(dot_shape, a, b)
    loop = next(n for n in graph.nodes if n.op == "for")
    size_node = next(n for n in loop.attr("body").nodes if n.op == "size")
    sums = [n for n in loop.attr("body").nodes if n.op == "add"]
    log = []
    interp = Interpreter((a, b), input_sizes(graph, (a, b)),
                         on_node=lambda n, v: log.append((n, v, interp.sizes().get("lv0"))),
                         each_iteration=True)
    interp.run(graph.nodes)
    steps = [(int(v), lv) for n, v, lv in log if n is size_node]
    assert steps == [(0, 0), (1, 1), (2, 2), (3, 3)]
    partial = [float(v) for n, v, _ in log if n is sums[-1]]
    assert partial == [float(x) for x in np.cumsum(a * b)] or np.allclose(
        partial, np.cumsum(a * b), rtol=1e-15)
    assert "lv0" not in interp.sizes()        # unbound once the loop is over


def test_dynamic_sizes_are_bound_from_the_arguments():
    def interior(a):
        s = 0.0
        for i in range(1, a.shape[0] - 1):
            s += a[i - 1] * a[i + 1]
        return s, a[1:].mean()
    a = A100[:9].copy()
    graph = trace_graph(interior, signature.classify_dynamic((a,)), (a,))
    for n in (3, 9, 31):
        x = A100[:n].copy()
        got = run_graph(graph, (x,))
        want = interior(x)
        np.testing.assert_allclose([got[0], got[1]], want, rtol=1e-13)


def test_branch_not_taken_is_not_evaluated():
    graph = _traced(sign_of_sum, np.abs(M12))
    top = {id(n) for n in graph.nodes}
    seen = []
    run_graph(graph, (np.abs(M12),), on_node=lambda n, v: seen.append(n), each_iteration=True)
    branch = next(n for n in graph.nodes if n.op == "if")
    inner = [n for n in seen if id(n) not in top]
    assert inner and all(any(n is m for m in branch.attr("then").nodes) for n in inner)


def test_a_size_of_an_unbound_induction_variable_fails_only_when_read():
    from cppcodegen.checking.reference import Unbound, UnboundSize
    from cppcodegen.ir.graph import make_node
    from cppcodegen.ir.shapes import loop_symbol
    zero = make_node("const", (), (), np.float64, value=1.0)
    ones = make_node("broadcast_to", (zero,), (loop_symbol(0),), np.float64)
    total = make_node("reduce", (ones,), (), np.float64, kind="sum", axes=(0,))
    outside = Interpreter(())
    outside.run([zero, ones])                   # lv0 unbound: a value nothing may read
    assert type(outside.values[id(ones)]) is Unbound
    with pytest.raises(UnboundSize, match="lv0"):
        outside.run([total])
    inside = Interpreter((), {"lv0": 3})
    inside.run([zero, ones, total])
    assert inside.values[id(total)] == 3.0
