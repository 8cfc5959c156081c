"""NumPy functions without a lowering run as NumPy calls between compiled kernels."""
import warnings

import numpy as np
import pytest

import cppcodegen

RNG = np.random.default_rng(5)
X = RNG.standard_normal((6, 5)).astype(np.float32)
Y = RNG.standard_normal((6, 5)).astype(np.float32)

CASES = {
    "sort": lambda x, y: np.sort(x * 2, axis=1) + y,
    "argsort": lambda x, y: np.argsort(x + y, axis=0),
    "cumsum": lambda x, y: np.cumsum(x, axis=0) * 2 - y,
    "cumprod": lambda x, y: np.cumprod(x / 4 + 1, axis=1),
    "concatenate": lambda x, y: np.concatenate([x, y * 2], axis=0).sum(0),
    "stack": lambda x, y: np.stack([x, y]) - 1,
    "hstack": lambda x, y: np.hstack([x, y]),
    "median": lambda x, y: np.median(x + y, axis=1),
    "percentile": lambda x, y: np.percentile(x, 90) + y,
    "pad_edge": lambda x, y: np.pad(x, 1, mode="edge") * 2,
    "pad_constant": lambda x, y: np.pad(x, ((1, 0), (2, 1))),
    "tile": lambda x, y: np.tile(x, (2, 1)),
    "repeat": lambda x, y: np.repeat(x, 2, axis=1),
    "roll": lambda x, y: np.roll(x, 2, axis=1) + y,
    "triu": lambda x, y: np.triu(x[:5]),
    "diagonal": lambda x, y: np.diagonal(x) * 3,
    "trace": lambda x, y: np.trace(x),
    "norm": lambda x, y: np.linalg.norm(x - y, axis=1),
    "histogram": lambda x, y: np.histogram(x, bins=4, range=(-3, 3))[0],
    "cov": lambda x, y: np.cov(x),
    "average": lambda x, y: np.average(x, axis=0, weights=np.arange(1.0, 7.0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_extern_call_matches_numpy(name):
    f = CASES[name]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        got = cppcodegen.compile(f)(X, Y)
    want = f(X, Y)
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_functions_returning_lists_of_arrays():
    """np.array_split's uneven pieces (a list) once raised NumPy's "inhomogeneous shape"
    from inside the tracer; a list comes back as a list, a tuple as a tuple."""
    def f(x, y):
        parts = np.array_split(x * 2, 4, axis=1)          # widths 2, 1, 1, 1
        first, second = np.split(y, 2)
        grid = np.meshgrid(x[0], y[:, 0])
        return parts, first - second, grid
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(f)(X, Y)
    want = f(X, Y)
    assert type(got[0]) is list and type(got[2]) is type(want[2])
    for g, w in zip(got[0] + [got[1]] + list(got[2]), want[0] + [want[1]] + list(want[2])):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_extern_call_warns_once_naming_the_function():
    def f(x):
        return np.partition(x, 2, axis=1) + 1
    with pytest.warns(UserWarning, match="numpy.partition runs as a NumPy call"):
        cppcodegen.compile(f)(X)
    ex = cppcodegen.explain(f, X)
    assert [k.form for k in ex.kernels].count("extern") == 1


def test_data_dependent_shapes_are_refused():
    with pytest.raises(cppcodegen.UnsupportedError, match="numpy.unique_counts"):
        cppcodegen.compile(lambda x: np.unique_counts(x))(X)


def test_library_call_with_a_precondition_sees_the_call_values():
    """np.linalg.cholesky needs an SPD matrix: its output shape is learned from this call's
    values (never from stand-ins, which are not SPD); a non-SPD call raises NumPy's error
    naming the user's line."""
    import warnings

    def f(A, b):
        L = np.linalg.cholesky(A + 1e-3 * np.eye(A.shape[0]))
        return np.linalg.solve(L, b) * 2 + 1
    r = np.random.default_rng(0)
    M = r.standard_normal((6, 6))
    A, b = M @ M.T, r.standard_normal(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(cppcodegen.compile(f)(A, b), f(A, b), rtol=1e-10)
        with pytest.raises(np.linalg.LinAlgError, match="test_extern.py"):
            cppcodegen.compile(f)(-A, b)


def _two_masks(x):
    pos = np.nonzero(x > 0)[0]
    neg = np.where(x < 0)[0]
    return pos, neg


def _unique_twice(x):
    v, c = np.unique(x > 0, return_counts=True)
    w, d = np.unique(x < 0, return_counts=True)
    return v, c, w, d


@pytest.mark.parametrize("fn", [_two_masks, _unique_twice])
def test_calls_on_reused_buffers_are_not_shared(fn):
    """Two NumPy calls of the same function on temporaries that share one buffer (the second
    mask is computed where the first was): each gets its own result (the second returned
    the first one's indices; found by a new user's probe)."""
    x = np.array([1.0, -2.0, 3.0, 4.0, -5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(fn)(x)
    for g, w in zip(got, fn(x)):
        np.testing.assert_array_equal(g, w)


def histogram_in_range(x, lo, hi):
    return np.histogram(x, bins=10, range=(lo, hi))


def percentile_at(x, q):
    return np.percentile(x, q), np.quantile(x, q / 100.0)


def test_python_float_arguments_of_numpy_calls_stay_weak():
    """A Python float reaching a NumPy call between kernels is passed as a Python float (weak,
    NEP 50), not a float64: float32 data keep float32 edges and quantiles, and the counts
    at float32 values on the decimal edges are NumPy's."""
    x = np.linspace(0, 1, 11).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, args in ((histogram_in_range, (x, 0.0, 1.0)), (histogram_in_range, (x, 0.1, 0.7)),
                         (percentile_at, (x, 37.0))):
            got, want = cppcodegen.compile(fn, fallback=False)(*args), fn(*args)
            for g, w in zip(got, want):
                assert np.asarray(g).dtype == np.asarray(w).dtype
                np.testing.assert_array_equal(g, w)


def qr_both(A):
    Q, R = np.linalg.qr(A)
    return Q.sum() + R.sum(), Q * 2.0


def test_a_call_with_several_outputs_runs_once(monkeypatch):
    """``Q, R = np.linalg.qr(A)`` with both outputs used, compiled work between their steps:
    NumPy's qr runs once per call (the entry between says what it writes; it wrote neither
    of qr's inputs), not once per output."""
    A = np.random.default_rng(8).random((30, 7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = cppcodegen.compile(qr_both, fallback=False)
        want = qr_both(A)
        f(A)
        calls = []
        from cppcodegen.runtime import extern
        compute = extern.ExternCall._compute

        def counting(self, arrays, memo=None):      # (NumPy's function, each time it runs)
            func = self.func
            self.func = lambda *a, **k: calls.append(1) or func(*a, **k)
            try:
                return compute(self, arrays, memo)
            finally:
                self.func = func
        monkeypatch.setattr(extern.ExternCall, "_compute", counting)
        got = f(A)
    assert len(calls) == 1
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def _sorted_rows(x):
    return np.sort(x, axis=1)


def test_a_returned_numpy_step_result_is_the_array_numpy_made():
    """The result of a NumPy step that nothing after it reads is the array NumPy returned (no
    copy into a buffer made for it): the values, a fresh writeable array per call, never the
    argument's memory."""
    f = cppcodegen.compile(_sorted_rows)
    x = np.random.default_rng(2).random((50, 40))
    a, b = f(x), f(x)
    np.testing.assert_array_equal(a, np.sort(x, axis=1))
    assert a is not b and not np.may_share_memory(a, b) and not np.may_share_memory(a, x)
    a[:] = -1.0
    np.testing.assert_array_equal(f(x), np.sort(x, axis=1))


def test_numpy_step_arguments_are_filled_as_traced():
    """A NumPy step's arguments (arrays in place of the traced ones, constants, keywords that
    are None by default left out) reach the function as the traced call gave them."""
    from cppcodegen.runtime.extern import ExternCall, Slot
    seen = []

    def probe(a, b, *, axis=None, kind=None, scale=1.0):
        seen.append((a, b, axis, kind, scale))
        return a

    call = ExternCall(probe, (Slot(0), (1, Slot(1))), {"axis": 0, "kind": None,
                                                      "scale": Slot(0, py=True)})
    x, y = np.array(2.5), np.array([1, 2])
    assert call._compute((x, y)) is x
    a, b, axis, kind, scale = seen[0]
    assert a is x and b[0] == 1 and b[1] is y and axis == 0 and kind is None
    assert scale == 2.5 and type(scale) is float
