"""A construct cppcodegen cannot compile runs the plain function (option ``fallback``, on
by default): the caller gets the plain function's result and a FallbackWarning naming the
construct and the user's line; with the option off the error is raised. A mistake of the
user's own (shapes that do not broadcast) raises as NumPy raises it either way."""
import warnings

import numpy as np
import pytest

import cppcodegen
import fallback_programs as P


def _args():
    return (np.linspace(0.1, 7.3, 11),)


def test_unsupported_call_runs_the_plain_function_with_a_warning():
    f = cppcodegen.compile(P.low_bits, options={"fallback": True})
    with pytest.warns(cppcodegen.FallbackWarning,
                      match=r"low_bits .*view\(dtype\).*fallback_programs.py:\d+"):
        got = f(*_args())
    np.testing.assert_array_equal(got, P.low_bits(*_args()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # decided once for these arguments: no second warning
        np.testing.assert_array_equal(f(*_args()), P.low_bits(*_args()))


def test_fallback_off_raises_the_error():
    f = cppcodegen.compile(P.low_bits, options={"fallback": False})
    with pytest.raises(cppcodegen.UnsupportedError, match="fallback_programs.py"):
        f(*_args())


def test_user_errors_are_not_hidden_by_the_fallback():
    f = cppcodegen.compile(P.bad_shapes, options={"fallback": True})
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(3), np.ones(4))


def relax_and_report(p, tol):
    err = 1.0
    it = 0
    while err > tol:
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1])
        p[:, -1] = 1.0
        err = np.abs(p - pn).max()
        it += 1
    print("converged after", it, "iterations", p[1, :2])
    return p


def test_print_of_an_array_runs_the_plain_function(capsys):
    """Compiled code prints numbers (tests/test_print.py), not arrays: print() of an array
    is refused (naming the line), so with the fallback the function prints what Python
    prints."""
    f = cppcodegen.compile(relax_and_report, options={"fallback": True})
    with pytest.warns(cppcodegen.FallbackWarning, match=r"print\(\) of an array of shape"):
        got = f(np.zeros((12, 12)), 1e-3)
    np.testing.assert_array_equal(got, relax_and_report(np.zeros((12, 12)), 1e-3))
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0] == out[1] and out[0].startswith("converged after ")
    with pytest.raises(cppcodegen.UnsupportedError, match="test_fallback.py"):
        cppcodegen.compile(relax_and_report, options={"fallback": False})(np.zeros((12, 12)), 1e-3)


def test_a_loop_python_would_unroll_into_a_huge_program_is_refused_fast():
    """A path grown over 2000 steps: not thousands of copies of the body to compile
    (minutes), but the fallback at once (or, with fallback off, an error naming the loop and
    why)."""
    args = (1.0, 2000)
    with pytest.warns(cppcodegen.FallbackWarning, match="too large to compile"):
        got = cppcodegen.compile(P.growing_path, options={"fallback": True})(*args)
    np.testing.assert_array_equal(got, P.growing_path(*args))
    with pytest.raises(cppcodegen.UnsupportedError, match="changes its shape.*too large"):
        cppcodegen.compile(P.growing_path)(*args)
    small = (1.0, 30)       # a few steps: still compiled, unrolled
    np.testing.assert_allclose(cppcodegen.compile(P.growing_path)(*small),
                               P.growing_path(*small), rtol=1e-12)


def test_an_internal_assertion_falls_back_and_a_users_assert_does_not(monkeypatch):
    """A failed assertion inside the compiler is its own bug: with the fallback on, the
    function runs as plain Python (the warning names the error); off, it is raised. The
    user's own ``assert`` that fails while tracing raises as it does in Python."""
    from cppcodegen.passes import lower
    ns: dict = {}
    exec(compile("def run(self, *args):\n    raise AssertionError('invariant')",
                 lower.__file__, "exec"), ns)          # (an assertion in the package's code)
    monkeypatch.setattr(lower.Lowering, "run", ns["run"])

    def add_one(x):
        return x + 1

    x = np.arange(4.0)
    with pytest.warns(cppcodegen.FallbackWarning, match="AssertionError: invariant"):
        got = cppcodegen.compile(add_one, options={"fallback": True})(x)
    np.testing.assert_array_equal(got, x + 1)
    with pytest.raises(AssertionError, match="invariant"):
        cppcodegen.compile(add_one, options={"fallback": False})(x)
    monkeypatch.undo()

    def needs_two(x):
        assert x.shape[0] == 2, "needs two rows"
        return x

    with pytest.raises(AssertionError, match="needs two rows"):
        cppcodegen.compile(needs_two, options={"fallback": True})(x)


def _methods(x):
    return x.repeat(2), x.nonzero()[0]


def _raw_bytes(x):
    return x.tobytes()


def test_ndarray_methods_the_tracer_lacks():
    """x.repeat / x.nonzero compile as their NumPy functions; an ndarray attribute the tracer
    has not (x.tobytes()) is an unsupported construct, so the default fallback runs Python
    (it raised AttributeError from inside the compiler; found by a new user's probe)."""
    x = np.array([0.0, 1.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for g, w in zip(cppcodegen.compile(_methods)(x), _methods(x)):
            np.testing.assert_array_equal(g, w)
        assert cppcodegen.compile(_raw_bytes, options={"fallback": True})(x) == x.tobytes()
    with pytest.raises(cppcodegen.UnsupportedError, match="ndarray.tobytes"):
        cppcodegen.compile(_raw_bytes, options={"fallback": False})(x)
