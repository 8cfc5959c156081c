"""Reductions with ``out=``: the result lands in ``out`` as NumPy puts it there (the loop
resolved with out's dtype, any cast, exactly the result's shape; var's sum of squares stored
into out and divided there, std's square root in out's dtype; argmax/argmin into the integer
dtypes NumPy accepts), on arguments and on arrays the function made; compared with NumPy on
copies, result and every argument."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen
from tests.helpers import assert_matches_numpy, run_compiled

RNG = np.random.default_rng(17)
INPUTS = {
    "float64": RNG.standard_normal((7, 33)) * 3,
    "float32": (RNG.standard_normal((7, 33)) * 3).astype(np.float32),
    "int32": RNG.integers(-2**31, 2**31, (7, 33)).astype(np.int32),
    "int64": RNG.integers(-2**20, 2**20, (7, 33)),
    "bool": RNG.random((7, 33)) > 0.3,
}
OUT_DTYPES = ("float64", "float32", "int32", "int64", "bool")


def reducer(kind, axis, keepdims=False):
    def f(x, o):
        r = getattr(np, kind)(x, axis=axis, out=o, keepdims=keepdims)
        return r * 1                # the returned array is out itself
    f.__name__ = f"{kind}_out"
    return f


def check(fn, x, out):
    want_out, got_out = out.copy(), out.copy()
    with np.errstate(all="ignore"):
        want = fn(x.copy(), want_out)
    got = run_compiled(cppcodegen.compile(fn), x, got_out, writes=(1,))
    # float sums of <= 33 terms: NumPy's pairwise order vs our blocked one, a few ULP;
    # a narrower float out rounds once either way
    tol = dict(rtol=1e-5, atol=1e-5) if want.dtype.kind == "f" else {}
    assert_matches_numpy(got, want, **tol)
    assert_matches_numpy(got_out, want_out, **tol)


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min", "any", "all", "mean", "var", "std",
                                  "argmax", "argmin"])
@pytest.mark.parametrize("xd", sorted(INPUTS))
def test_reduction_into_out_of_every_dtype(kind, xd):
    x = INPUTS[xd]
    if kind == "prod":
        x = (x % 3 + 1).astype(x.dtype) if xd != "bool" else x
    for od in OUT_DTYPES:
        for axis in (0, 1, None, (0, 1)):
            shape = np.sum(x, axis=axis).shape
            fn = reducer(kind, axis)
            try:
                with np.errstate(all="ignore"):
                    fn(x.copy(), np.zeros(shape, od))
            except (TypeError, ValueError) as e:       # NumPy refuses: so do we
                with pytest.raises(TypeError if isinstance(e, TypeError) else type(e)):
                    cppcodegen.compile(fn)(x.copy(), np.zeros(shape, od))
                continue
            if (kind in ("max", "min") and axis == 0 and np.dtype(od).itemsize < x.itemsize
                    and x.dtype.kind in "iu"):
                # NumPy casts its accumulator to out's dtype between buffered outer steps, so
                # the max of int64 values wrapped into int32 depends on its iteration order;
                # we give the cast of the exact max (NumPy's answer along the inner axis)
                continue
            check(fn, x, np.zeros(shape, od))


def test_keepdims_and_the_accumulation_dtype():
    x = np.array([[2**31 - 1, 1], [1, 2**31 - 1]], np.int32)
    for od in ("int32", "int64", "float64"):            # int32 wraps, int64/float64 do not
        check(reducer("sum", 0, keepdims=True), x, np.zeros((1, 2), od))
    f = np.array([16777216, 1, 1], np.float32)          # float32 sums lose the 1s, float64 not
    check(reducer("sum", None), f, np.zeros((), np.float64))
    check(reducer("mean", None), np.array([0.6, 0.6, 1.9]), np.zeros((), np.int64))


def test_out_made_inside_the_function_and_used_later():
    def f(x):
        o = np.empty_like(x[0])
        np.sum(x, axis=0, out=o)
        return o / 2 + np.mean(x, axis=1, out=np.zeros_like(x[:, 0]))
    x = RNG.standard_normal((33, 33))
    assert_matches_numpy(run_compiled(cppcodegen.compile(f), x), f(x), rtol=1e-12, atol=1e-12)


def test_out_a_view_of_an_argument():
    def f(x, o):
        np.sum(x, axis=1, out=o[1:, 0])
        return o
    x, o = INPUTS["float64"][:6], np.zeros((7, 2))
    want_o, got_o = o.copy(), o.copy()
    f(x, want_o)
    run_compiled(cppcodegen.compile(f), x, got_o, writes=(1,))
    assert_matches_numpy(got_o, want_o, rtol=1e-12, atol=1e-12)


def test_wrong_out_shapes_are_numpys_errors():
    x = INPUTS["float64"]
    with pytest.raises(ValueError, match="wrong number of dimensions"):
        cppcodegen.compile(reducer("sum", 0))(x, np.zeros((1, 33)))
    with pytest.raises(ValueError, match="shape"):
        cppcodegen.compile(reducer("sum", 0))(x, np.zeros(7))
    with pytest.raises(ValueError, match="shape"):
        cppcodegen.compile(lambda x, o: np.argmax(x, axis=0, out=o))(x, np.zeros(7, np.int64))
    with pytest.raises(TypeError, match="argmax"):         # NumPy takes int64 and int32 only
        cppcodegen.compile(lambda x, o: np.argmax(x, axis=0, out=o))(x, np.zeros(33))
    with pytest.raises(TypeError, match="sqrt"):           # std: sqrt in out's dtype
        cppcodegen.compile(lambda x, o: np.std(x, axis=0, out=o))(x, np.zeros(33, np.int64))
