"""Dynamic shapes: one compilation serves many sizes; guards say why a recompile happened.

Every result is compared with NumPy on the same inputs (shape, dtype, values).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.checking.callback import CompileTrigger, callback_handler


def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def chain(a, b, c):
    return np.exp(np.sin(a) * b + c) - 1.0


def close(got, want, rtol=2e-6, atol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


class Counter:
    """Counts compilations (and builds that were not disk-cache loads) through the callbacks."""

    def __enter__(self):
        self.started, self.ended = [], []
        self._s = lambda t, i: self.started.append(t)
        self._e = lambda t, i: self.ended.append(t)
        callback_handler.register_start_callback(self._s)
        callback_handler.register_end_callback(self._e)
        return self

    def __exit__(self, *exc):
        callback_handler.remove_start_callback(self._s)
        callback_handler.remove_end_callback(self._e)


BATCHES = [3, 7, 0, 1, 2, 5, 64, 100, 13, 31, 4, 250, 9, 17, 8, 129, 6, 11, 40, 1000]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_twenty_batch_sizes_compile_at_most_twice(dtype):
    rng = np.random.default_rng(0)
    f = cppcodegen.compile(softmax)
    with Counter() as c:
        for n in BATCHES:
            x = rng.standard_normal((n, 24)).astype(dtype)
            close(f(x), softmax(x), rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert len(BATCHES) == 20 and 0 in BATCHES and 1 in BATCHES
    assert len(c.started) <= 2, c.started
    assert len(f.variants) <= 2
    # the second compile was the automatic-dynamic one, and it says why
    (reason,) = f.recompile_reasons
    assert reason.dynamic and "argument 0 dim 0: size 7, compiled for 3" in reason.reason


def test_layer_norm_and_chain_batches():
    rng = np.random.default_rng(1)
    ln, ch = cppcodegen.compile(layer_norm), cppcodegen.compile(chain)
    w, b = rng.standard_normal(40), rng.standard_normal(40)
    for n in BATCHES:
        x = rng.standard_normal((n, 40))
        close(ln(x, w, b), layer_norm(x, w, b), rtol=1e-10, atol=1e-10)
        a, bb, cc = (rng.standard_normal(n * 3) for _ in range(3))
        close(ch(a, bb, cc), chain(a, bb, cc), rtol=1e-12, atol=1e-12)
    assert len(ln.variants) <= 2 and len(ch.variants) <= 2


def sum_squares_len(u):
    s = 0.0
    for i in range(len(u)):
        s += u[i] * u[i]
    return s


def halves_len(u):
    n = len(u)
    return u[: n // 2] * 2.0 + n


@pytest.mark.parametrize("fn", [sum_squares_len, halves_len])
def test_len_keeps_a_size_symbolic(fn):
    """``len(u)`` is u.shape[0]: a dynamic size stays one (it pinned the size to the value
    it had when traced: a recompile for every new length)."""
    f = cppcodegen.compile(fn)
    rng = np.random.default_rng(2)
    for n in (10, 20, 30, 41, 7):
        u = rng.standard_normal(n)
        close(f(u), fn(u), rtol=0, atol=0)
    assert len(f.variants) == 2, f.recompile_reasons


def half_sum(x):
    n = x.shape[0]
    h = n >> 1
    return x[:h].sum() - x[h:].sum() + (n & 6) + (n ^ 1) + (n | 8) + (1 << 3)


def split3(x):
    q, r = divmod(x.shape[0], 3)
    return x[:q].sum() + r


def odd_even(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] if i & 1 else -x[i]
    return s + (x.shape[0] << 1)


@pytest.mark.parametrize("fn", [half_sum, split3, odd_even])
def test_sizes_in_bit_operations(fn):
    """``n >> 1``, ``n & 6``, ``divmod(n, 3)``, ``i & 1`` of a loop index: sizes stay sizes
    (shifts by a constant) or are this call's values, guarded (a TypeError once the size
    was symbolic)."""
    f = cppcodegen.compile(fn, fallback=False)
    for n in (8, 16, 13, 40):
        x = np.arange(float(n))
        close(f(x), fn(x), rtol=0, atol=0)


def test_dynamic_true_compiles_once_for_every_size():
    rng = np.random.default_rng(2)
    f = cppcodegen.compile(layer_norm, dynamic=True)
    with Counter() as c:
        for rows, cols in [(5, 8), (1, 3), (0, 9), (33, 2), (2, 1000), (257, 17)]:
            x = rng.standard_normal((rows, cols)).astype(np.float32)
            w = rng.standard_normal(cols).astype(np.float32)
            b = rng.standard_normal(cols).astype(np.float32)
            close(f(x, w, b), layer_norm(x, w, b), rtol=2e-4, atol=2e-5)
    assert len(c.started) == 1
    src = cppcodegen.explain(f, x, w, b).source
    assert "const int64_t n0" in src and "for (int64_t i0 = 0; i0 < n0; ++i0)" in src


def test_dynamic_false_specializes_every_size():
    f = cppcodegen.compile(chain, dynamic=False)
    for n in (4, 5, 6):
        a = np.linspace(0, 1, n)
        close(f(a, a, a), chain(a, a, a))
    assert len(f.variants) == 3 and not f.dynamic_variants


def test_mark_dynamic():
    f = cppcodegen.compile(softmax)
    x = np.random.default_rng(3).standard_normal((6, 10))
    cppcodegen.mark_dynamic(x, 0)
    close(f(x), softmax(x), rtol=1e-12)
    assert len(f.dynamic_variants) == 1
    (specs, _, _, _), = f.dynamic_variants
    assert specs[0][0] == "darray" and isinstance(specs[0][2][0], str) and specs[0][2][1] == 10
    y = np.random.default_rng(4).standard_normal((19, 10))
    close(f(y), softmax(y), rtol=1e-12)
    assert len(f.variants) == 1
    with pytest.raises(IndexError):
        cppcodegen.mark_dynamic(x, 2)


def test_one_symbol_per_dimension_equalities_are_guards():
    """Every dimension has its own symbol: a square matrix compiled once serves other shapes;
    broadcasting two sizes records their equality as a guard (and NumPy's error when not)."""
    def f(x, y):
        return x * 2 + y.sum()
    g = cppcodegen.compile(f, dynamic=True)
    for n, m in ((8, 8), (5, 9), (1, 0)):
        x, y = np.ones(n), np.arange(float(m))
        close(g(x, y), f(x, y))
    assert len(g.variants) == 1
    sm = cppcodegen.compile(softmax, dynamic=True)
    for shape in ((16, 16), (15, 16), (3, 40)):
        x = np.random.default_rng(shape[0]).standard_normal(shape)
        close(sm(x), softmax(x), rtol=1e-12)
    assert len(sm.variants) == 1

    def add(x, y):
        return x + y
    h = cppcodegen.compile(add, dynamic=True)
    close(h(np.ones(8), np.ones(8)), np.full(8, 2.0))
    close(h(np.ones(3), np.ones(3)), np.full(3, 2.0))
    assert len(h.variants) == 1 and h.variants[next(iter(h.variants))].plan.guards
    with pytest.raises(ValueError, match="broadcast"):
        h(np.ones(5), np.ones(9))
    assert "failed with n0 = 5, n1 = 9" in h.recompile_reasons[0].reason
    assert "traced with n0 = 8, n1 = 8" in h.recompile_reasons[0].reason


def test_guard_failure_reason_and_values():
    def head(x):
        return x[:5] * 2.0
    f = cppcodegen.compile(head, dynamic=True)
    for n in (10, 7, 12):
        x = np.arange(float(n))
        close(f(x), head(x))
    assert len(f.variants) == 1            # x[:5] of any size >= 5: one kernel
    x = np.arange(3.0)
    close(f(x), head(x))                   # fewer than 5: the guard fails, recompile
    (r,) = f.recompile_reasons
    assert "guard" in r.reason and "failed with n0 = 3" in r.reason
    assert "traced with n0 = 10" in r.reason
    ex = cppcodegen.explain(f, x)
    assert ex.recompiles == f.recompile_reasons


def test_recompile_limit_warns_and_runs_numpy():
    f = cppcodegen.compile(chain, dynamic=False, options={"recompile_limit": 2})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in (3, 4, 5, 6):
            a = np.linspace(-1, 1, n)
            close(f(a, a, a), chain(a, a, a))
    assert len(f.variants) == 2
    hits = [x for x in w if issubclass(x.category, cppcodegen.RecompileLimitWarning)]
    assert len(hits) == 1 and "recompile_limit" in str(hits[0].message)


# ----------------------------------------------------------------- shape arithmetic

def _check_sizes(fn, sizes, make, rtol=1e-12, max_variants=1, **kw):
    f = cppcodegen.compile(fn, dynamic=True, **kw)
    for n in sizes:
        args = make(n)
        before = [a.copy() for a in args]
        got, want = f(*args), fn(*args)
        if isinstance(want, tuple):
            for g, w_ in zip(got, want):
                close(g, w_, rtol=rtol)
        else:
            close(got, want, rtol=rtol)
        for a, b in zip(args, before):
            np.testing.assert_array_equal(a, b)
    assert len(f.variants) <= max_variants, [r.reason for r in f.recompile_reasons]
    return f


def test_symbolic_reshape_flatten_and_split():
    def fn(x):
        flat = x.reshape(-1)
        back = flat.reshape(x.shape[0], -1)
        pairs = x.reshape(x.shape[0], -1, 2)
        return flat * 2, back + 1, pairs.sum(axis=-1)
    _check_sizes(fn, [3, 8, 17, 2], lambda n: (np.random.default_rng(n).standard_normal((n, 6)),))


def test_symbolic_reshape_both_dims():
    def fn(x):
        return x.reshape(-1).cumsum() if False else (x.reshape(-1) * 3).reshape(x.shape).T.copy()
    f = _check_sizes(fn, [(3, 4), (5, 7), (2, 2)],
                     lambda s: (np.arange(s[0] * s[1], dtype=np.float64).reshape(s),))


def test_symbolic_slices_stencil():
    def fn(x):
        return x[2:] - x[:-2], x[::2] * 1.0, x[::-1] + x, x[1:-1].sum()
    _check_sizes(fn, [5, 9, 4, 40, 3], lambda n: (np.random.default_rng(n).standard_normal(n),))


def test_symbolic_2d_stencil():
    def lap(u):
        return u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1] + u[:-2, 1:-1] - 4 * u[1:-1, 1:-1]
    _check_sizes(lap, [(5, 6), (9, 4), (30, 31)],
                 lambda s: (np.random.default_rng(s[0]).standard_normal(s),))


def test_arange_of_symbolic_size_and_shape_arithmetic():
    def fn(x):
        n = x.shape[0]
        i = np.arange(n)
        return x * i, x.sum() / n, np.arange(1, n + 1, 2) * 2, x * (n - 1)
    _check_sizes(fn, [4, 7, 16], lambda n: (np.random.default_rng(n).standard_normal(n),))


@pytest.mark.parametrize("kind", ["sum0", "sum1", "sumall", "mean", "var", "max", "argmax",
                                  "prod", "any", "std1"])
def test_reductions_over_symbolic_extents(kind):
    fns = {
        "sum0": lambda x: x.sum(axis=0), "sum1": lambda x: x.sum(axis=1),
        "sumall": lambda x: x.sum(), "mean": lambda x: x.mean(axis=0),
        "var": lambda x: x.var(), "max": lambda x: x.max(axis=1),
        "argmax": lambda x: x.argmax(axis=0), "prod": lambda x: np.prod(x * 0.1 + 1, axis=1),
        "any": lambda x: (x > 2).any(axis=1), "std1": lambda x: x.std(axis=1, ddof=1),
    }
    fn = fns[kind]
    sizes = [(4, 5), (9, 3), (300, 70), (2, 2)]
    _check_sizes(fn, sizes, lambda s: (np.random.default_rng(s[0]).standard_normal(s),),
                 rtol=1e-10)


def test_large_symbolic_sum_is_parallel_and_accurate():
    f = cppcodegen.compile(lambda x: x.sum(), dynamic=True)
    for n in (1 << 20, (1 << 20) + 7):
        x = np.random.default_rng(n).random(n).astype(np.float32)
        got = f(x)
        exact = x.astype(np.float64).sum()
        assert got.dtype == np.float32
        assert abs(float(got) - exact) / exact < 1e-6
    src = cppcodegen.explain(f, x).source     # threads or not, decided on the call's sizes
    assert "#pragma omp parallel" in src and "if ((n0) >= " in src


def test_strided_transposed_and_reversed_inputs():
    def fn(x):
        return np.sin(x) * 2 + x.T.T
    f = cppcodegen.compile(fn, dynamic=True)
    base = np.random.default_rng(5).standard_normal((20, 30))
    for view in (base[::2, 1::3], base.T, base[::-1], base[3:17, 2:29], base[:, ::-1]):
        close(f(view), fn(view))
    assert len(f.variants) <= 3


def test_matmul_with_dynamic_batch():
    def mlp(x, w, b):
        return np.maximum(x @ w + b, 0.0)
    rng = np.random.default_rng(6)
    w, b = rng.standard_normal((16, 8)), rng.standard_normal(8)
    _check_sizes(lambda x: mlp(x, w, b), [5, 9, 64, 1],
                 lambda n: (rng.standard_normal((n, 16)),), rtol=1e-10, max_variants=1)


def test_int_dtypes_and_broadcasting():
    def fn(a, b):
        return (a[:, None] * b[None, :]) // 3 + a.sum()
    _check_sizes(fn, [3, 5, 11], lambda n: (np.arange(n, dtype=np.int32) - 2,
                                              np.arange(2 * n, dtype=np.int64)))


def test_new_process_with_new_size_loads_the_dynamic_variant(tmp_path):
    """The graph cache key is the symbolic signature: another process, another size, no build."""
    script = textwrap.dedent("""
        import sys, numpy as np, cppcodegen
        from cppcodegen.checking.callback import callback_handler
        seen = []
        callback_handler.register_end_callback(lambda t, i: seen.append(t.name))
        def softmax(x):
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        f = cppcodegen.compile(softmax, dynamic=True)
        n = int(sys.argv[1])
        x = np.random.default_rng(n).standard_normal((n, 12))
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        assert np.allclose(f(x), e / e.sum(axis=-1, keepdims=True), rtol=1e-12)
        print(seen[0])
    """)
    path = tmp_path / "prog.py"
    path.write_text(script)
    env = dict(os.environ, CPPCODEGEN_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, str(path), str(n)], env=env, capture_output=True,
                           text=True, timeout=300) for n in (10, 23)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.strip() == "FIRST_TRACE"
    assert runs[1].stdout.strip() == "CACHE_LOAD"


def test_explain_shows_symbols_and_guards():
    def fn(x):
        return x[1:] * x[:-1]
    ex = cppcodegen.explain(cppcodegen.compile(fn, dynamic=True), np.ones(10))
    assert "n0" in str(ex.graph) and "guard" in str(ex.graph)
    assert ex.plan.guards and ex.plan.sizes


def test_auto_dynamic_falls_back_to_static_when_a_numpy_call_pins_sizes():
    """np.fft.rfft runs as a NumPy call between kernels whose output length (n // 2 + 1)
    follows no input size: it pins its operand's sizes (a guard); automatic dynamic then
    stops retracing dynamically and specializes."""
    def fn(x):
        return np.abs(np.fft.rfft(x * 2.0)) + 1.0
    f = cppcodegen.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (4, 6, 9, 12, 15):
            x = np.random.default_rng(n).standard_normal(n)
            close(f(x), fn(x))
    assert len(f.variants) == 5           # 1 static, 1 pinned dynamic, then static ones
    assert sum(r.dynamic for r in f.recompile_reasons) == 1


def test_dynamic_true_retraces_under_other_guards():
    def head(x):
        return x[:5] + 1.0
    f = cppcodegen.compile(head, dynamic=True)
    for n in (10, 3, 12, 2):
        x = np.arange(float(n))
        close(f(x), head(x))
    assert len(f.variants) == 2            # n >= 5 and n < 5


def test_derived_size_that_broadcasts_as_one():
    """Fuzzer find: x[-8:6] of 13 elements has the derived length 14 - n0, which is 1 here and
    then broadcasts; the trace decides that from the value (guarded) and slices to length 1."""
    def fn(x):
        return np.broadcast_to(x[-8:6], (13,)) + x[:1] * 0, x[-8:6] + x
    x = np.arange(13, dtype=np.float32)
    f = cppcodegen.compile(fn, dynamic=True)
    for got, want in zip(f(x), fn(x)):
        close(got, want)

    def put(x):
        y = np.zeros_like(x)
        y[2:] = x[-8:6]
        return y
    g = cppcodegen.compile(put, dynamic=True)
    close(g(x), put(x))


def test_returned_sizes_are_computed_per_call():
    def fn(x):
        return x.sum(), x.shape[0], (x.shape[0] - 1) * 2, x.ndim
    f = cppcodegen.compile(fn, dynamic=True)
    for n in (4, 9):
        x = np.ones((n, 3))
        got = f(x)
        assert [int(v) for v in got] == [int(v) for v in fn(x)]
    assert len(f.variants) == 1


def test_random_draws_of_symbolic_size():
    def fn(x, rng):
        return (x + np.random.random(x.shape), np.random.rand(x.shape[0], 2).sum(axis=1),
                rng.normal(0.0, 1.0, size=x.shape[0]), np.random.uniform(x, x + 1.0))
    f = cppcodegen.compile(fn, dynamic=True)
    for n in (5, 3000):
        x = np.zeros((n, 3))
        a, b, c, d = f(x, np.random.default_rng(n))
        assert a.shape == (n, 3) and b.shape == (n,) and c.shape == (n,) and d.shape == (n, 3)
        assert ((a >= 0) & (a < 1)).all() and ((d >= x) & (d < x + 1)).all()
    assert abs(a.mean() - 0.5) < 0.05 and abs(c.mean()) < 0.1 and abs(c.std() - 1) < 0.1
    assert len(f.variants) == 1


def flatten_rows(x):
    return x.reshape(x.shape[0], -1) * 2


def test_a_reshape_whose_minus_one_is_a_constant_once_sizes_are_symbolic():
    """x.reshape(x.shape[0], -1) after the batch size changed: the -1 is (n0 * 16) / n0 = 16
    (sympy could not make a polynomial of the constant)."""
    f = cppcodegen.compile(flatten_rows)
    for n in (32, 3, 5):
        x = np.arange(n * 16, dtype=np.float32).reshape(n, 4, 4)
        got = f(x)
        assert got.shape == (n, 16)
        np.testing.assert_array_equal(got, flatten_rows(x))


def normalized_power_step(X, steps):
    cov = X.T @ X
    v = np.ones(cov.shape[0]) / np.sqrt(cov.shape[0])      # a ufunc of a size
    for _ in range(steps):
        v = cov @ v
        v = v / np.linalg.norm(v)
    return v


def kmeans_counts(X, C):
    labels = np.argmin(((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2), axis=1)
    counts = np.bincount(labels, minlength=C.shape[0])     # a size as a NumPy call's int
    sums = np.zeros_like(C)
    np.add.at(sums, labels, X)
    return labels, sums / np.maximum(counts, 1)[:, None]


def test_sizes_passed_to_ufuncs_and_numpy_calls_after_a_shape_change():
    """The second shape traces with symbolic sizes: np.sqrt(n) takes this call's n (guarded,
    as n / 2 does) and np.bincount(minlength=k) receives an int, never a symbol."""
    rng = np.random.default_rng(4)
    f = cppcodegen.compile(normalized_power_step)
    g = cppcodegen.compile(kmeans_counts)
    for n, d, k in [(10, 3, 3), (50, 4, 5), (31, 4, 5), (64, 2, 7)]:
        X = rng.normal(size=(n, d))
        np.testing.assert_allclose(f(X, 4), normalized_power_step(X, 4), rtol=1e-12)
        C = X[:k].copy()
        for got, expected in zip(g(X, C), kmeans_counts(X, C)):
            np.testing.assert_allclose(got, expected, rtol=1e-12)


def flattened_counts(img):
    return np.bincount(img.ravel(), minlength=256), img.reshape(-1).astype(np.int64).sum()


def test_a_flattened_symbolic_array_needs_no_division():
    """ravel() of an (n0, n1) array under symbolic sizes reads element i at its flat offset:
    the row i // n1 is always < n0, so no ``% n0`` (it cost two divisions per element)."""
    img = np.random.default_rng(6).integers(0, 256, (40, 30)).astype(np.uint8)
    f = cppcodegen.compile(flattened_counts, dynamic=True)
    for g, e in zip(f(img), flattened_counts(img)):
        np.testing.assert_array_equal(g, e)
    assert "ccg_idx_div(ccg_idx_div" not in cppcodegen.explain(f, img).source


def padded_median(x):
    p = np.pad(x, 2, mode="reflect")                    # NumPy's call: n0 + 4
    st = np.stack([p[i:i + x.shape[0]] for i in range(5)], axis=0)
    return np.median(st, axis=0), np.gradient(x), np.histogram(x, bins=7)[0]


def test_numpy_calls_between_kernels_follow_symbolic_sizes():
    """A NumPy call between kernels whose output axes follow an input size (np.pad's n + 4,
    np.gradient's n; np.histogram's 7 stays 7) keeps the sizes symbolic, checked by a run on
    larger stand-ins, instead of pinning them: one build for every size after the first
    change (it was a build per size)."""
    f = cppcodegen.compile(padded_median)
    for n in (40, 57, 1000, 3, 23):
        x = np.random.default_rng(n).random(n)
        for g, w in zip(f(x), padded_median(x)):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    assert len(f.recompile_reasons) == 1


def test_trace_and_diagonal_do_not_pin_square_sizes():
    """``A.trace()``/``np.diagonal`` on symbolic sizes gather (i, i + offset) instead of a
    slice stepping m + 1 (a step pins m: one build per size, found by a new user's probe)."""
    rng = np.random.default_rng(0)

    def diag(A):
        return A.trace() + np.diagonal(A, 1).sum() * 2.0 - np.trace(A, offset=-2)

    f = cppcodegen.compile(diag, fallback=False)
    for n in (20, 33, 47, 61, 90):
        A = rng.random((n, n))
        np.testing.assert_allclose(f(A), diag(A), rtol=1e-12)
    assert len(f.recompile_reasons) == 1, f.recompile_reasons     # (to symbolic sizes)


def _size_as_number(x):
    n = len(x)
    return x / np.sqrt(n) + x.sum() / n * 0.5 + n ** 0.5, 2.0 / (n - 1)


def _split_at_a_fraction(x):
    n = x.shape[0]
    k = round(n * 0.3)
    return x[:k].sum(), k, x * np.float32(1.0 / n)


def _grid_by_step(u):
    nx = u.shape[0]
    dx = 2.0 / (nx - 1)
    xs = np.arange(0.0, 2.0 + dx / 2, dx)
    return u * dx + xs[:nx], float(dx), int(1 / dx)


@pytest.mark.parametrize("fn,builds", [(_size_as_number, 2), (_split_at_a_fraction, 2),
                                       (_grid_by_step, 4)])
def test_sizes_used_as_numbers(fn, builds):
    """``dx = 2.0 / (nx - 1)``, ``np.sqrt(n)``, ``round(n * 0.3)`` of symbolic sizes: traced
    values, so one build serves every size (each size was a build of its own); where Python
    needs the number itself (``float(dx)``, ``np.arange``'s step) it is this call's, guarded."""
    compiled = cppcodegen.compile(fn, fallback=False)
    for n in (41, 81, 161, 321):
        x = np.linspace(0.0, 1.0, n)
        got, want = compiled(x), fn(x)
        for g, w in zip(got, want):
            assert type(g) is type(w)
            np.testing.assert_allclose(g, w, rtol=1e-12)
    assert len(compiled.variants) <= builds


def _total_variation(x):
    it = iter(x)
    prev = next(it)
    total = 0.0
    for v in it:
        total += abs(v - prev)
        prev = v
    return total


def test_python_iterating_many_rows_of_a_run_time_length_is_refused_quickly():
    """A loop Python runs over the rows of an array whose length is symbolic decided each
    row's index against the length (seconds per hundred rows: a 10,000-row call ran for
    minutes); past PYTHON_ROWS rows it is refused, and the call runs as Python (or as a
    build for its own length)."""
    import time
    import warnings
    x = np.arange(300.0) ** 2
    with pytest.raises(cppcodegen.UnsupportedError, match="over the 300 rows of an array"):
        cppcodegen.compile(_total_variation, dynamic=True, fallback=False)(x)
    f = cppcodegen.compile(_total_variation, dynamic=True, fallback=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f(x) == _total_variation(x)
    assert time.perf_counter() - t0 < 60
