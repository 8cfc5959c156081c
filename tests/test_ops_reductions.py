"""Reductions: cppcodegen vs NumPy.

Tolerances (see helpers docstring):
  * integer/bool results, max/min/amax/amin, argmax/argmin, any/all: exact;
  * sum-like ("sum"): |got-exp| <= max(n-1,1)*eps*sum(|terms|) + 1 ULP, which
    holds for ANY summation order (NumPy is pairwise, kernels are lane/chunk
    wise); n = number of reduced elements per output;
  * mean: (n+1)*eps*mean(|terms|) + 2 ULP;
  * prod: rtol (n+1)*eps;
  * var/std: rtol 2*(n+4)*eps relative to the result (a two-pass or Welford
    algorithm meets that; E[x^2]-E[x]^2 does not on offset data, see
    `var-offset`);
  * batches built on dyadic data (big float32 arrays) have exact sums in every
    order, so there sum/prod are exact and mean is within 2 ULP.

Compilations in this module: ~50.
"""
import re
import warnings

import numpy as np
import pytest

from helpers import (EXACT, Batch, assert_compiled_raises, assert_matches_numpy,
                     check_against_numpy, dyadic, rng)

# --------------------------------------------------------------------------
# op tables: name -> (expr, tolerance kind).  {acc} is a dtype= accumulator.
# --------------------------------------------------------------------------
SUM_ND = {
    "sum": ("np.sum(x)", "sum"), "sum_method": ("x.sum()", "sum"),
    "sum_a0": ("np.sum(x, axis=0)", "sum"), "sum_a1_method": ("x.sum(axis=1)", "sum"),
    "sum_neg_axis": ("np.sum(x, axis=-1)", "sum"),
    "sum_tuple": ("np.sum(x, axis=(0, 2))", "sum"),
    "sum_tuple_neg": ("x.sum(axis=(-1, -2))", "sum"),
    "sum_all_axes": ("np.sum(x, axis=(0, 1, 2))", "sum"),
    "sum_keepdims": ("np.sum(x, keepdims=True)", "sum"),
    "sum_a1_keepdims": ("np.sum(x, axis=1, keepdims=True)", "sum"),
    "sum_tuple_keepdims": ("x.sum(axis=(0, 2), keepdims=True)", "sum"),
    "sum_dtype": ("np.sum(x, dtype={acc})", "sum"),
    "sum_a2_dtype": ("x.sum(axis=2, dtype={acc})", "sum"),
    "sum_sq": ("np.sum(x * x, axis=0)", "sum"),
    "prod": ("np.prod(p)", "prod"), "prod_method_a1": ("p.prod(axis=1)", "prod"),
    "prod_tuple_keep": ("np.prod(p, axis=(0, 1), keepdims=True)", "prod"),
    "prod_dtype": ("np.prod(p, axis=-1, dtype={acc})", "prod"),
    "mean": ("np.mean(x)", "mean"), "mean_method_a0": ("x.mean(axis=0)", "mean"),
    "mean_tuple_keep": ("np.mean(x, axis=(0, 2), keepdims=True)", "mean"),
    "mean_neg_dtype": ("x.mean(axis=-1, dtype=np.float64)", "mean"),
    "mean_abs": ("np.abs(x).mean(axis=1)", "mean"),
}
EXT_ND = {
    "max": ("np.max(x)", "exact"), "max_method_a0": ("x.max(axis=0)", "exact"),
    "amax_neg_keep": ("np.amax(x, axis=-1, keepdims=True)", "exact"),
    "max_tuple": ("np.max(x, axis=(0, 2))", "exact"),
    "min": ("np.min(x)", "exact"), "min_method_tuple": ("x.min(axis=(1, 2))", "exact"),
    "amin_a1": ("np.amin(x, axis=1)", "exact"),
    "min_keepdims": ("np.min(x, keepdims=True)", "exact"),
    "argmax": ("np.argmax(x)", "exact"), "argmax_method_a0": ("x.argmax(axis=0)", "exact"),
    "argmax_neg": ("np.argmax(x, axis=-1)", "exact"),
    "argmax_keep": ("np.argmax(x, axis=1, keepdims=True)", "exact"),
    "argmin": ("np.argmin(x)", "exact"), "argmin_method_a1": ("x.argmin(axis=1)", "exact"),
    "argmin_a2_keep": ("np.argmin(x, axis=2, keepdims=True)", "exact"),
    "any": ("np.any(x)", "exact"), "all_method": ("x.all()", "exact"),
    "any_a0": ("np.any(x, axis=0)", "exact"), "all_tuple": ("np.all(x, axis=(1, 2))", "exact"),
    "any_neg_keep": ("x.any(axis=-1, keepdims=True)", "exact"),
    "all_cmp_a1": ("np.all(x > 0, axis=1)", "exact"), "any_cmp": ("np.any(x > 1)", "exact"),
    "max_of_expr": ("np.max(x * 2, axis=1)", "exact"),
}
VAR_ND = {
    "var": ("np.var(x)", "var"), "var_method_a0": ("x.var(axis=0)", "var"),
    "var_neg_ddof": ("np.var(x, axis=-1, ddof=1)", "var"),
    "var_tuple_keep": ("np.var(x, axis=(0, 2), keepdims=True)", "var"),
    "std": ("np.std(x)", "var"), "std_method_tuple_ddof": ("x.std(axis=(0, 2), ddof=1)", "var"),
    "std_a1_keep": ("np.std(x, axis=1, keepdims=True)", "var"),
    "var_dtype": ("np.var(x, dtype=np.float64)", "var"),
    "std_ddof2": ("np.std(x, ddof=2)", "var"),
}

# 1-D inputs (length 131: vector tails)
OPS_1D = {
    "sum": ("np.sum(x)", "sum"), "sum_a0": ("x.sum(axis=0)", "sum"),
    "sum_neg_keep": ("np.sum(x, axis=-1, keepdims=True)", "sum"),
    "sum_dtype": ("np.sum(x, dtype={acc})", "sum"),
    "prod": ("np.prod(p)", "prod"), "mean": ("x.mean()", "mean"),
    "max": ("np.max(x)", "exact"), "min": ("x.min(axis=0)", "exact"),
    "argmax": ("np.argmax(x)", "exact"), "argmin": ("x.argmin()", "exact"),
    "any": ("np.any(x > 5)", "exact"), "all": ("np.all(x)", "exact"),
    "var": ("np.var(x)", "var"), "std_ddof1": ("x.std(ddof=1)", "var"),
}

# 2-D (big: 257 x 1031, multithreaded / vector paths)
SUM_2D = {
    "sum": ("np.sum(x)", "sum"), "sum_a0": ("x.sum(axis=0)", "sum"),
    "sum_a1": ("np.sum(x, axis=1)", "sum"), "sum_neg_keep": ("x.sum(axis=-2, keepdims=True)", "sum"),
    "sum_tuple": ("np.sum(x, axis=(0, 1))", "sum"), "sum_dtype": ("np.sum(x, axis=1, dtype={acc})", "sum"),
    "prod": ("np.prod(p)", "prod"), "prod_a0": ("p.prod(axis=0)", "prod"),
    "prod_a1": ("np.prod(p, axis=1)", "prod"),
    "mean": ("np.mean(x)", "mean"), "mean_a0": ("x.mean(axis=0)", "mean"),
    "mean_a1_keep": ("np.mean(x, axis=1, keepdims=True)", "mean"),
    "sum_T_a1": ("x.T.sum(axis=1)", "sum"),
}
EXT_2D = {
    "max": ("np.max(x)", "exact"), "max_a0": ("x.max(axis=0)", "exact"),
    "min_a1": ("np.min(x, axis=1)", "exact"), "amax_keep": ("np.amax(x, axis=-1, keepdims=True)", "exact"),
    "argmax": ("np.argmax(x)", "exact"), "argmax_a0": ("x.argmax(axis=0)", "exact"),
    "argmin_a1": ("np.argmin(x, axis=1)", "exact"), "argmin": ("x.argmin()", "exact"),
    "any": ("np.any(x)", "exact"), "all_a0": ("np.all(x, axis=0)", "exact"),
    "any_a1": ("x.any(axis=1)", "exact"), "all_cmp": ("np.all(x > -1)", "exact"),
}
VAR_2D = {
    "var": ("np.var(x)", "var"), "var_a0": ("x.var(axis=0)", "var"),
    "std_a1_ddof": ("np.std(x, axis=1, ddof=1)", "var"), "std": ("x.std()", "var"),
}

ACC = {"float32": "np.float64", "float64": "np.float32", "int32": "np.int32",
       "int64": "np.float64", "int8": "np.int8", "uint8": "np.int32", "bool": "np.int32"}


def _fmt(ops, dtname):
    return {n: (e.format(acc=ACC[dtname]), k) for n, (e, k) in ops.items()}


# --------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------
def _x(dt, shape, seed, kind="ties"):
    r = rng(seed)
    dt = np.dtype(dt)
    if dt == np.bool_:
        return r.random(shape) < 0.6
    if dt.kind in "iu":
        lo, hi = (0, 6) if dt.kind == "u" else (-3, 3)
        if kind == "wide":
            ii = np.iinfo(dt)
            return r.integers(ii.min, ii.max, shape, endpoint=True).astype(dt)
        return r.integers(lo, hi, shape, endpoint=True).astype(dt)  # many ties
    if kind == "ties":
        return (r.integers(-10, 10, shape) / 2.0).astype(dt)  # ties for argmax
    if kind == "dyadic":
        return dyadic(dt, shape, seed)
    return r.uniform(-5, 5, shape).astype(dt)


def _p(dt, shape, seed, exact=False):
    """Values for prod: near 1 (floats), small / odd (ints)."""
    r = rng(seed)
    dt = np.dtype(dt)
    if dt == np.bool_:
        return r.random(shape) < 0.95
    if dt.kind in "iu":
        if exact:  # odd numbers: the int64 product mod 2^64 is non-trivial
            return (2 * r.integers(-1000, 1000, shape) + 1).astype(dt)
        v = r.choice([1, 1, 1, 2, 3] + ([-1, -2] if dt.kind == "i" else []), shape)
        return v.astype(dt)
    if exact:  # +-1 and rare powers of two: products exact in any order
        return r.choice([1.0, -1.0, 2.0, 0.5], shape, p=[0.495, 0.495, 0.005, 0.005]).astype(dt)
    return r.uniform(0.6, 1.5, shape).astype(dt)


DT3 = ["float32", "float64", "int32", "int64", "int8", "uint8", "bool"]


def _batches():
    out = {}

    def add(key, params, ops, make, exact_sums=False):
        out[key] = (Batch(key, params, {n: e for n, (e, _) in ops.items()}, make),
                    {n: k for n, (_, k) in ops.items()}, exact_sums)

    for dn in DT3:
        mk = lambda dn=dn: (_x(dn, (2, 3, 4), 100), _p(dn, (2, 3, 4), 101))  # noqa: E731
        add(f"red-sum-{dn}-3d", ["x", "p"], _fmt(SUM_ND, dn), mk)
        add(f"red-ext-{dn}-3d", ["x", "p"], _fmt(EXT_ND, dn), mk)
        add(f"red-var-{dn}-3d", ["x", "p"], _fmt(VAR_ND, dn), mk)
    for dn in ["float32", "float64", "int64"]:
        mk = lambda dn=dn: (_x(dn, (131,), 110, "real" if "f" in dn else "wide"),  # noqa: E731
                            _p(dn, (131,), 111))
        add(f"red-1d-{dn}", ["x", "p"], _fmt(OPS_1D, dn), mk)
    big = {
        "float32": (lambda: (_x("float32", (257, 1031), 120, "dyadic"),
                             _p("float32", (257, 1031), 121, exact=True)), True),
        "float64": (lambda: (_x("float64", (257, 1031), 122, "real"),
                             _p("float64", (257, 1031), 123, exact=True)), False),
        "int32": (lambda: (_x("int32", (257, 1031), 124, "wide"),
                           _p("int32", (257, 1031), 125, exact=True)), True),
        "bool": (lambda: (_x("bool", (257, 1031), 126), _p("bool", (257, 1031), 127)), True),
    }
    for dn, (mk, exact) in big.items():
        add(f"red-sum-{dn}-big", ["x", "p"], _fmt(SUM_2D, dn), mk, exact)
        add(f"red-ext-{dn}-big", ["x", "p"], _fmt(EXT_2D, dn), mk, exact)
        if dn != "bool":
            add(f"red-var-{dn}-big", ["x", "p"], _fmt(VAR_2D, dn), mk, exact)

    # non-contiguous inputs
    def lay(dt):
        def mk():
            b = _x(dt, (9, 14), 130, "ties")
            return (b.T, b[::2, ::-3], np.broadcast_to(_x(dt, (5,), 131, "ties"), (4, 5)),
                    _x(dt, (131,), 132, "ties")[::-1], _x(dt, (300, 701), 133, "ties")[::-1, 1::2].T)
        return mk
    lops = {}
    for a in ["t", "s", "bc", "neg", "bigt"]:
        lops.update({
            f"sum[{a}]": (f"np.sum({a})", "sum"), f"sum_a0[{a}]": (f"{a}.sum(axis=0)", "sum"),
            f"max_a_last[{a}]": (f"np.max({a}, axis=-1)", "exact"),
            f"argmax[{a}]": (f"np.argmax({a})", "exact"),
            f"argmin_a0[{a}]": (f"{a}.argmin(axis=0)", "exact"),
            f"mean[{a}]": (f"np.mean({a})", "mean"), f"any[{a}]": (f"np.any({a} > 2)", "exact"),
            f"var_a0[{a}]": (f"np.var({a}, axis=0)", "var"),
        })
    for dn in ["float64", "float32", "int32"]:
        add(f"red-layout-{dn}", ["t", "s", "bc", "neg", "bigt"], lops, lay(dn))

    # NaN propagation
    def nan_in(dt):
        def mk():
            x = _x(dt, (4, 6), 140, "real")
            x[1, 2] = np.nan
            x[2, 0] = np.nan
            x[2, 4] = np.nan
            x[3, 5] = np.inf
            y = _x(dt, (37,), 141, "real")
            y[[5, 30]] = np.nan
            return x, y
        return mk
    nops = {
        "max": ("np.max(x)", "exact"), "min_a0": ("x.min(axis=0)", "exact"),
        "amax_a1": ("np.amax(x, axis=1)", "exact"), "argmax": ("np.argmax(x)", "exact"),
        "argmin_a1": ("x.argmin(axis=1)", "exact"), "argmax_a0": ("np.argmax(x, axis=0)", "exact"),
        "sum_a1": ("np.sum(x, axis=1)", "sum"), "mean_a0": ("x.mean(axis=0)", "mean"),
        "any": ("np.any(x, axis=1)", "exact"), "all": ("np.all(x, axis=0)", "exact"),
        "var_a1": ("np.var(x, axis=1)", "var"), "max_1d": ("np.max(y)", "exact"),
        "min_1d": ("y.min()", "exact"), "argmin_1d": ("np.argmin(y)", "exact"),
        "argmax_1d": ("y.argmax()", "exact"), "sum_1d": ("y.sum()", "sum"),
        "max_nan_free_row": ("x[0].max()", "exact"),
    }
    for dn in ["float32", "float64"]:
        add(f"red-nan-{dn}", ["x", "y"], nops, nan_in(dn))

    # empty inputs where NumPy defines the result
    eops = {
        "sum": ("np.sum(e)", "sum"), "prod": ("np.prod(e)", "prod"), "any": ("np.any(e)", "exact"),
        "all": ("e.all()", "exact"), "mean": ("np.mean(e)", "mean"),
        "sum_a1": ("np.sum(e2, axis=1)", "sum"), "prod_a1": ("e2.prod(axis=1)", "prod"),
        "sum_a0": ("e2.sum(axis=0)", "sum"), "max_a0": ("np.max(e2, axis=0)", "exact"),
        "argmax_a0": ("np.argmax(e2, axis=0)", "exact"), "any_a1": ("np.any(e2, axis=1)", "exact"),
        "all_a1_keep": ("np.all(e2, axis=1, keepdims=True)", "exact"),
        "mean_a1": ("np.mean(e2, axis=1)", "mean"), "var": ("np.var(e)", "var"),
        "sum_keep": ("np.sum(e2, keepdims=True)", "sum"),
    }
    for dn in ["float64", "int32"]:
        ops = eops if dn == "float64" else {  # int mean/var of nothing: keep 0/0 out of int kernels
            k: v for k, v in eops.items() if k not in ("mean", "mean_a1", "var")}
        add(f"red-empty-{dn}", ["e", "e2"], ops,
            lambda dn=dn: (np.zeros((0,), dn), np.zeros((3, 0), dn)))

    # var/std on data with a large offset (catches E[x^2]-E[x]^2)
    vops = {"var": ("np.var(x)", "var"), "std_a0": ("x.std(axis=0)", "var"),
            "var_a1_ddof": ("np.var(x, axis=1, ddof=1)", "var")}
    add("var-offset-float32", ["x"], vops,
        lambda: ((1000.0 + rng(150).standard_normal((64, 33))).astype(np.float32),))
    add("var-offset-float64", ["x"], vops,
        lambda: (1e8 + rng(151).standard_normal((64, 33)),))
    return out


BATCHES = _batches()


def _bound(kind, batch, name, expected, exact_sums):
    """Tolerance kwargs for one reduction result (see module docstring)."""
    if isinstance(expected, tuple) or np.dtype(expected.dtype).kind != "f":
        return EXACT
    if kind == "exact":
        return EXACT
    args = batch.results()[0]
    expr = batch.exprs[name]
    used = [a for p, a in zip(batch.params, args) if re.search(rf"\b{p}\b", expr)]
    n = max(a.size for a in used) // max(np.size(expected), 1)
    eps = float(np.finfo(expected.dtype).eps)
    if kind == "var":
        return {"rtol": 2 * (n + 4) * eps}
    if kind == "prod":
        return EXACT if exact_sums else {"rtol": (n + 1) * eps, "ulp": 1}
    if exact_sums:
        return EXACT if kind == "sum" else {"ulp": 2}
    absargs = [np.abs(a.astype(np.float64)) for a in args]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = eval(f"lambda {', '.join(batch.params)}: {expr}", {"np": np})(*absargs)
    s = np.nan_to_num(np.asarray(s, np.float64), nan=0.0, posinf=0.0)
    if kind == "sum":
        return {"atol": max(n - 1, 1) * eps * s, "ulp": 1}
    if kind == "mean":
        return {"atol": (n + 1) * eps * s, "ulp": 2}
    raise ValueError(kind)


@pytest.mark.parametrize("batch,op,kind,exact_sums", [
    b.param(op, kind, exact) for b, kinds, exact in BATCHES.values() for op, kind in kinds.items()])
def test_reduction(batch, op, kind, exact_sums):
    got, expected = batch.get(op)
    tol = _bound(kind, batch, op, expected, exact_sums)
    assert_matches_numpy(got, expected, _path=f"{batch.key}:{op} = {batch.exprs[op]}", **tol)


# --------------------------------------------------------------------------
# reductions NumPy refuses: the compiled function must raise as well
# --------------------------------------------------------------------------
def max_of_empty(x):
    return np.max(x)


def min_of_empty_axis(x):
    return x.min(axis=1)


def argmax_of_empty(x):
    return np.argmax(x)


def amax_of_empty_2d(x):
    return np.amax(x, axis=None)


@pytest.mark.parametrize("fn,arg", [
    (max_of_empty, np.zeros((0,), np.float64)),
    (min_of_empty_axis, np.zeros((3, 0), np.float64)),
    (argmax_of_empty, np.zeros((0,), np.int32)),
    (amax_of_empty_2d, np.zeros((0, 3), np.float32)),
], ids=["max_empty", "min_empty_axis", "argmax_empty", "amax_empty_2d"])
def test_empty_reduction_raises(fn, arg):
    with pytest.raises(ValueError):
        fn(arg.copy())  # the oracle really refuses
    assert_compiled_raises(fn, (arg,), [r"empty", r"identity"])


# a plain (non-batched) function through check_against_numpy: sum of a
# runtime-sized reduction combined with elementwise work, returns a tuple
def normalize(x):
    s = x.sum(axis=1, keepdims=True)
    return x / s, s.ravel(), x.max()


def test_normalize_tuple():
    x = rng(160).uniform(0.5, 2.0, (33, 17))
    eps = np.finfo(np.float64).eps
    check_against_numpy(normalize, x, rtol=40 * eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n", [1, 37, 1 << 20, 3_000_001])
def test_vectorized_and_chunked_argmax_find_numpys_position(dtype, n):
    """argmax/argmin run in vector lanes and in parallel chunks: the answer is still the
    first position of the best value, or of the first NaN, as NumPy's."""
    import cppcodegen
    rng = np.random.default_rng(n)
    fns = [lambda a: a.argmax(), lambda a: np.argmin(a), lambda a: np.abs(a - 3).argmax()]
    compiled = [cppcodegen.compile(f) for f in fns]
    for case in range(5):
        a = (rng.standard_normal(n) * 100).astype(dtype)
        if case == 1:
            a = np.round(a / 50).astype(dtype)          # many ties
        elif case == 2 and a.dtype.kind == "f":
            a[[n - 1, n // 3, max(0, n // 3 - 1)]] = np.nan
        elif case == 3 and a.dtype.kind == "f":
            a[:] = -np.inf
        elif case == 4:
            a[:] = 7
        for f, c in zip(fns, compiled):
            assert c(a) == f(a), (case, f(a), c(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [4, 70, 4098, 1 << 20])
def test_max_min_lanes_see_every_nan(dtype, n):
    """Float max/min keep NaN-free best values per lane and, beside them, which lanes saw a
    NaN: a NaN anywhere (any lane, any of the unrolled copies, any parallel chunk, the
    scalar tail) makes NumPy's NaN; without one, infinities are NumPy's. (Which zero a tie of
    -0.0 and 0.0 gives depends on the lanes, NumPy's as ours: not compared.)"""
    import cppcodegen
    rng = np.random.default_rng(n)

    def extremes(a):
        return a.max(), np.min(a), np.max(a[1:] * 2.0), a.reshape(2, -1).max(axis=1)
    compiled = cppcodegen.compile(extremes)
    for pos in [None, 0, n // 2 + 1, n - 1, "inf"]:
        a = rng.standard_normal(n).astype(dtype)
        if pos == "inf":
            a[[0, n - 1]] = [np.inf, -np.inf]
        elif pos is not None:
            a[pos] = np.nan
        for got, want in zip(compiled(a), extremes(a)):
            assert np.array_equal(got, want, equal_nan=True), (pos, got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (pos, got, want)
