"""End-to-end behaviour of the pipeline: fusion, generated code, cache, guards, errors."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cppcodegen
from cppcodegen.ir import ufuncs
from cppcodegen.checking.reference import run_graph
from cppcodegen.frontend.signature import classify
from cppcodegen.frontend.trace import trace


def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def chain(a, b, c):
    return np.exp(a) * b + np.sin(c) - a * c


RNG = np.random.default_rng(7)
F32 = lambda *shape: RNG.standard_normal(shape).astype(np.float32)  # noqa: E731
THREE_GRAPHS = [
    (softmax, lambda: (F32(600, 1031),)),
    (layer_norm, lambda: (F32(600, 1031), F32(1031), F32(1031))),
    (chain, lambda: (F32(600007), F32(600007), F32(600007))),
]


@pytest.mark.parametrize("fn,make", THREE_GRAPHS, ids=lambda v: getattr(v, "__name__", ""))
def test_three_graphs_are_one_parallel_vectorized_kernel(fn, make):
    args = make()
    ex = cppcodegen.explain(fn, *args)
    assert ex.num_kernels == 1, [k.describe() for k in ex.kernels]
    src = ex.source
    assert src.count("#pragma omp parallel for") == 1, src
    assert "ccg::Vec<float, L>::load(" in src and ".store(" in src
    assert "i0 += L" in src or "i1 += L" in src           # a vector loop
    got = cppcodegen.compile(fn)(*args)
    want = fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_decorator_keeps_name_doc_signature():
    @cppcodegen.compile
    def f(x, y=2.0):
        """doc"""
        return x * y

    assert f.__name__ == "f" and f.__doc__ == "doc"
    assert list(inspect.signature(f).parameters) == ["x", "y"]

    g = cppcodegen.compile(options={"vectorize": False})(layer_norm)
    x, w, b = F32(4, 33), F32(33), F32(33)
    np.testing.assert_allclose(g(x, w, b), layer_norm(x, w, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g(x, w, b, 0.5), layer_norm(x, w, b, 0.5), rtol=1e-5, atol=1e-5)


def test_runtime_float_scalar_does_not_recompile():
    f = cppcodegen.compile(lambda x, s: x * s + 1)
    x = F32(64)
    for s in (0.5, 2.0, -3.25):
        np.testing.assert_array_equal(f(x, s), x * s + 1)
    assert len(f.variants) == 1


def test_int_constant_is_guarded_by_value():
    f = cppcodegen.compile(lambda x, k: x + k)
    x = np.arange(10, dtype=np.int32)
    assert (f(x, 3) == x + 3).all() and (f(x, 5) == x + 5).all()
    assert len(f.variants) == 2


def test_guards_retrace_on_new_signature():
    f = cppcodegen.compile(lambda x: x.sum(axis=0))
    a = F32(6, 5)
    np.testing.assert_allclose(f(a), a.sum(0), rtol=1e-6)
    np.testing.assert_allclose(f(a.T), a.T.sum(0), rtol=1e-6)          # new layout
    b = a.astype(np.float64)
    assert f(b).dtype == np.float64                                   # new dtype
    c = F32(7, 3)
    np.testing.assert_allclose(f(c), c.sum(0), rtol=1e-6)     # new shape: the dynamic variant
    assert len(f.variants) == 3                 # static (6,5); dynamic from a.T; float64


def test_strided_inputs_without_copies():
    x = F32(40, 50)
    for view in (x.T, x[::-1], x[::3, ::-2], x[5:30:4, 1:]):
        np.testing.assert_allclose(cppcodegen.compile(softmax)(view), softmax(view), rtol=1e-5,
                                   atol=1e-6)
    before = x.copy()
    cppcodegen.compile(chain)(x, np.asfortranarray(x), x[::-1])
    np.testing.assert_array_equal(x, before)


def test_pytree_outputs_and_scalars():
    @cppcodegen.compile
    def f(x):
        return {"sum": x.sum(), "parts": (x.max(axis=0), [x.shape[0], None])}

    x = F32(9, 4)
    out = f(x)
    assert isinstance(out["sum"], np.float32)
    np.testing.assert_allclose(out["sum"], x.sum(), rtol=1e-5)
    np.testing.assert_array_equal(out["parts"][0], x.max(axis=0))
    assert out["parts"][1] == [9, None]


def test_unsupported_function_names_function_and_line():
    def f(x):
        return np.linalg.eigvals(x)
    line = inspect.getsourcelines(f)[1] + 1
    with pytest.raises(cppcodegen.UnsupportedError) as info:
        cppcodegen.compile(f)(F32(8))
    msg = str(info.value)
    assert "eigvals" in msg and f"test_pipeline.py:{line}" in msg


@pytest.mark.parametrize("body", ["return x if x.sum() > 0 else -x", "return x * float(x[0])"])
def test_data_dependent_control_flow_is_refused(body):
    ns = {"np": np}
    exec(f"def f(x):\n    {body}\n", ns)
    with pytest.raises(cppcodegen.DataDependentError, match="data-dependent|value"):
        cppcodegen.compile(ns["f"])(F32(8))


def test_compile_error_carries_compiler_message_and_source(tmp_path):
    fake = tmp_path / "badcxx"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo fake 1.0; exit 0; fi\n"
                    "echo 'error: the compiler said no' >&2\nexit 1\n")
    fake.chmod(0o755)
    f = cppcodegen.compile(lambda x: x + 1, options={"cxx": str(fake), "cache_dir": str(tmp_path / "c")})
    with pytest.raises(cppcodegen.CompileError) as info:
        f(F32(3))
    assert "the compiler said no" in str(info.value)
    assert os.path.exists(info.value.source_path)


def test_code_the_compiler_rejects_runs_as_python_with_the_fallback_on(tmp_path):
    """The C++ compiler rejecting the code cppcodegen wrote is a bug of ours: with the
    fallback on, the call runs as plain Python with the compiler's message in the warning
    (it raised CompileError at every call); off, it raises."""
    fake = tmp_path / "rejecting"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo fake 1.0; exit 0; fi\n"
                    "echo \"k.cpp:23:63: error: 'v1' was not declared in this scope\" >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    opts = {"cxx": str(fake), "cache_dir": str(tmp_path / "c")}
    f = cppcodegen.compile(lambda x: x + 1, options=dict(opts, fallback=True))
    x = F32(3)
    with pytest.warns(cppcodegen.FallbackWarning, match="v1"):
        np.testing.assert_array_equal(f(x), x + 1)
    with pytest.raises(cppcodegen.CompileError):
        cppcodegen.compile(lambda x: x + 2, options=dict(opts, fallback=False))(F32(3))


def test_second_process_runs_no_compiler(tmp_path):
    log = tmp_path / "cxx.log"
    wrapper = tmp_path / "cxx"
    wrapper.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec g++ \"$@\"\n")
    wrapper.chmod(0o755)
    script = textwrap.dedent("""
        import numpy as np, cppcodegen, sys
        def f(x):
            return np.exp(x) * 2 - x
        x = np.linspace(-1, 1, 1000, dtype=np.float32)
        y = cppcodegen.compile(f)(x)
        assert np.allclose(y, np.exp(x) * 2 - x, rtol=1e-6)
        print('sympy' in sys.modules)
    """)
    env = dict(os.environ, CPPCODEGEN_CACHE_DIR=str(tmp_path / "cache"), CXX=str(wrapper))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    compiles = [l for l in log.read_text().splitlines()
                if "--version" not in l and "c++-header" not in l]     # not the PCH build
    assert len(compiles) == 1, compiles
    # the warm process hit the graph-level cache: no lowering, so sympy was never imported
    assert runs[0].stdout.split() == ["True"] and runs[1].stdout.split() == ["False"]


def test_import_does_not_load_sympy_or_codegen():
    code = "import sys, cppcodegen; print('sympy' in sys.modules, 'cppcodegen.backend.program' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_graph_is_printable_hashable_and_matches_reference():
    x = F32(5, 7)
    specs = classify((x,))
    g1 = trace(softmax, specs, (x,))
    g2 = trace(softmax, specs, (x,))
    assert g1.key() == g2.key() and "reduce" in str(g1) and "exp" in str(g1)
    np.testing.assert_allclose(run_graph(g1, (x,)), softmax(x), rtol=1e-6)


def test_explain_exposes_every_stage():
    x = F32(64, 64)
    ex = cppcodegen.explain(softmax, x)
    text = str(ex)
    for part in ("== graph ==", "== loop IR ==", "== kernels (1) ==", "ccg_run", "-fopenmp"):
        assert part in text
    assert all(os.path.exists(p) for p in ex.cache_paths)


def test_every_op_has_every_implementation():
    for name, op in ufuncs.OPS.items():
        assert op.numpy is not None and op.scalar, name
        assert op.vector is not None or op.vector_bool is not None or name in (
            "fmod", "cbrt", "mul_fits", "python_round",
            *ufuncs.PYTHON_MATH), name
    for name in ufuncs.TRACEABLE - {"divmod"}:
        assert ufuncs.ALIASES.get(name, name) in ufuncs.OPS, name


def test_column_reduction_and_tiny_work_are_not_parallel():
    ex = cppcodegen.explain(lambda x: x.sum(axis=0), F32(1024, 700))
    assert "tile" in ex.source and "#pragma omp parallel for" in ex.source
    small = cppcodegen.explain(chain, F32(1000), F32(1000), F32(1000))
    assert "#pragma omp" not in small.source


def test_softmax_computes_exp_once_per_element():
    src = cppcodegen.explain(softmax, F32(64, 1003)).source
    # one vector exp and one scalar exp (tail; scalar code calls the same libmvec function
    # through ccg::exp): the output loop reads the stored row instead
    assert src.count("ccg::exp(") == 2 and "std::exp(" not in src, src
    assert "row0[" in src


def test_sibling_outputs_share_one_loop():
    def f(s, k):
        d = np.log(s / k) * 0.5
        return np.exp(d) * s, np.exp(d) * k
    s, k = F32(5000) ** 2 + 1, F32(5000) ** 2 + 1
    ex = cppcodegen.explain(f, s, k)
    # one log in the vector loop, one in its scalar tail
    assert ex.num_kernels == 1 and ex.source.count("ccg::log(") == 2
    for got, want in zip(cppcodegen.compile(f)(s, k), f(s, k)):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_black_scholes_is_one_loop_of_two_stores():
    """call and put share d1/d2, each read four times at the same index: counted as the C++
    writes it (shared subexpressions once), the inlined expression stays far under the
    materialization limit, so no intermediate gets a buffer (a tree count made 6 stores)."""
    from benchmarks.workloads import black_scholes, make_black_scholes
    args = make_black_scholes(4099)
    ex = cppcodegen.explain(black_scholes, *args)
    assert ex.num_kernels == 1 and [len(k.stages) for k in ex.kernels] == [2]
    for got, want in zip(cppcodegen.compile(black_scholes)(*args), black_scholes(*args)):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * float(np.abs(want).max()))


def test_in_place_operators_on_fresh_results_and_refusals():
    def fresh(x):
        y = x * 2
        y += 1
        y *= y
        return y
    x = F32(4, 5)
    np.testing.assert_array_equal(cppcodegen.compile(fresh)(x), fresh(x.copy()))

    def on_argument(x):
        x += 1
        return x
    def through_view(x):
        y = x * 2
        z = y[1:]
        z += 1
        return y
    for fn in (on_argument, through_view):      # as NumPy: the argument is updated
        x_np, x_cc = x.copy(), x.copy()
        want, got = fn(x_np), cppcodegen.compile(fn)(x_cc)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(x_cc, x_np)

    def scalar_rebinds(x, s):
        s += 1.0
        return x * s
    np.testing.assert_array_equal(cppcodegen.compile(scalar_rebinds)(x, 2.0), x * 3.0)

    def bad_cast(x):
        y = (x * 10).astype(np.int32)
        y += 1.5
        return y
    with pytest.raises(TypeError, match="same_kind"):
        cppcodegen.compile(bad_cast)(x)


def test_assignment_into_a_fresh_array():
    x = F32(9, 11)

    def stencil(x):
        y = np.zeros_like(x)
        y[1:-1, 1:-1] = x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1]
        return y

    def steps(x):
        y = x * 1
        y[::2] = 0
        y[:, ::-3] = y[:, ::-3] * 10          # reads the old values, as NumPy does
        y[3] = 7
        y[..., 4] = x[:, 0]
        y[-1, -1] = 1.5
        y[1:] = y[:-1]                         # overlapping shift
        y += 1
        return y

    def int_target(x):
        y = (x * 10).astype(np.int32)
        y[1:4, :] = x[1:4] * 100               # float into int: cast like NumPy's setitem
        return y

    for fn in (stencil, steps, int_target):
        got, want = cppcodegen.compile(fn)(x), fn(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)

    def on_argument(x):
        x[0] = 1
        return x

    def stale_view(x):
        y = x * 1
        v = y[1:]
        y[0] = 5
        return v

    for fn in (on_argument, stale_view):   # the argument is updated; the view sees y[0] = 5
        x_np, x_cc = x.copy(), x.copy()
        want, got = fn(x_np), cppcodegen.compile(fn)(x_cc)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(x_cc, x_np)
    with pytest.raises(ValueError, match="could not broadcast"):
        cppcodegen.compile(lambda x: (lambda y: y.__setitem__(slice(0, 2), x[:3]))(x * 1))(x)
