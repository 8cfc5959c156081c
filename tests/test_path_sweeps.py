"""Path sweeps: every array length 0..129, input offsets 0, 1 and 2 (misaligned views into a
bigger buffer), the AVX-512, AVX2 and portable scalar builds, one thread and all threads.

One compiled function per build takes the inputs of all 130 sizes (260 arguments; the
portable build: 46 of them, see STATIC_SIZES) and returns, per size, one pointwise result of correctly rounded ops (bit-equal to NumPy and
across builds), one result of transcendental functions, and one reduction. Every build
uses ``parallel_threshold=0``, so even the smallest loops run as OpenMP parallel loops; the
same kernels are then run with one thread and with several (``omp_set_num_threads`` of the
process's libgomp).

What must hold:

* every output matches NumPy (exact ops bit-equal; transcendentals within 4 ULP;
  reductions within the summation-order bound ``(n-1) * eps * sum|terms|``);
* inside one build, element i of a pointwise result is the same bits whatever the length
  of the array, i.e. whether it was computed by a full vector, in the tail, by another
  thread, or at another alignment (the inputs of all sizes are prefixes of one buffer);
* every build computes the exact-ops results bit-equal to every other build; reductions
  and transcendentals (libm in the portable build, libmvec's AVX2 or AVX-512 functions in
  the others) within tolerance;
* one thread and all threads give the same bits, reductions included (fixed chunks).

The dynamic kernel of each build (``compile(dynamic=True)``: one kernel for symbolic sizes)
runs at every size 0..129, offset and thread count and must give the static kernels' bits.

Also: every op the scalar renderer supports has a vector form, or is listed below as
deliberately scalarized.
"""
import ctypes
import ctypes.util
import linecache
import os

import numpy as np
import pytest

import cppcodegen
from cppcodegen.runtime import cpu
from cppcodegen.ir.ufuncs import OPS
from helpers import assert_inputs_unchanged, assert_matches_numpy, run_compiled, run_numpy

SIZES = range(130)
# Sizes of the static kernels per build. The portable build's vectors have 4 lanes and its
# C++ takes 2.5x longer to compile, so its static kernels cover every (full vectors, tail)
# combination 0..33 and the ends; its dynamic kernel runs at every size (below).
STATIC_SIZES = {"avx512": list(SIZES), "avx2": list(SIZES),
                "scalar": sorted(set(range(34)) | set(range(61, 68)) | set(range(125, 130)))}
OFFSETS = (0, 1, 2)
BUILDS = {name: {"isa": name, "parallel_threshold": 0}
          for name in ("avx512", "avx2", "scalar") if cpu.supports(name)}
MANY_THREADS = max(4, os.cpu_count() or 1)


def _group(build):
    """Each build's tests in one worker process (it compiles once there)."""
    return pytest.mark.xdist_group(f"path_sweep_{build}")


def _builds():
    return [pytest.param(b, marks=_group(b)) for b in BUILDS]


def _pointwise(x, y):
    """(exact, transcendental) expressions over the array names x and y."""
    exact = (f"np.where(({x} > 0.5) ^ ({y} < 0.25), {x} * {y} + np.sqrt(np.abs({x})), "
             f"np.maximum({x}, {y}) - np.floor({y})) "
             f"+ ({x}.astype(np.float32) * np.float32(3) - np.abs({y}.astype(np.float32)))"
             f".astype(np.float64) "
             f"+ ((({x} * 1000).astype(np.int32) * 7) ^ ({y} * 1000).astype(np.int64))")
    transcendental = f"np.exp({x}) + np.sin({y}.astype(np.float32))"
    return exact, transcendental


def _exprs(n):
    """(exact, transcendental, reduction) expressions for the size-n inputs x{n}, y{n}."""
    x, y = f"x{n}", f"y{n}"
    reduction = [f"({x} * {y}).sum()",
                 f"np.minimum({x}, {y}).astype(np.float32).max()" if n else f"{x}.sum()",
                 f"({x} * 1000).astype(np.int64).sum()",
                 f"{x}.astype(np.float32).sum()"][n % 4]
    return _pointwise(x, y) + (reduction,)


def _function(sizes):
    params = ", ".join(f"x{n}, y{n}" for n in sizes)
    outs = ", ".join(e for n in sizes for e in _exprs(n))
    src = f"def path_sweep({params}):\n    return ({outs},)\n"
    filename = f"<cppcodegen-path-sweep {len(sizes)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"np": np}
    exec(compile(src, filename, "exec"), ns)
    return ns["path_sweep"]


FNS = {}


def function(sizes):
    """The sweep function over ``sizes`` (one per distinct list of sizes)."""
    key = tuple(sizes)
    if key not in FNS:
        FNS[key] = _function(sizes)
    return FNS[key]


_BUF = np.random.default_rng(20260).uniform(-2.5, 2.5, (2, max(SIZES) + 8))
_BUF[:, 37] = [np.nan, 0.5]         # a NaN and ties with the comparison constants
_BUF[:, 61] = [-0.0, 0.25]
_BUF[:, 90] = [np.inf, -np.inf]


def inputs(offset, sizes):
    """x{n}, y{n} for every size: views at ``offset`` into one buffer (prefixes of it)."""
    args = []
    for n in sizes:
        args += [_BUF[0, offset:offset + n], _BUF[1, offset:offset + n]]
    return args


def _gomp():
    name = ctypes.util.find_library("gomp") or "libgomp.so.1"
    return ctypes.CDLL(name)


_RESULTS = {}


def results(build):
    """{(offset, threads): outputs} of ``build``; compiled once per process."""
    if build not in _RESULTS:
        sizes = STATIC_SIZES[build]
        fn = cppcodegen.compile(function(sizes), options=BUILDS[build])
        gomp = _gomp()
        before = gomp.omp_get_max_threads()
        out = {}
        try:
            for threads in (1, MANY_THREADS):
                gomp.omp_set_num_threads(threads)
                for off in OFFSETS:
                    args = inputs(off, sizes)
                    pristine = [a.copy() for a in args]
                    out[off, threads] = run_compiled(fn, *args)
                    assert_inputs_unchanged(args, pristine, f"path sweep {build}")
        finally:
            gomp.omp_set_num_threads(before)
        _RESULTS[build] = out
    return _RESULTS[build]


def expected(offset, sizes):
    key = ("numpy", offset, tuple(sizes))
    if key not in _RESULTS:
        _RESULTS[key] = run_numpy(function(sizes), *inputs(offset, sizes))
    return _RESULTS[key]


def split(outs, sizes):
    """{size: (exact, transcendental, reduction)}"""
    return {n: outs[3 * i:3 * i + 3] for i, n in enumerate(sizes)}


def reduction_bound(n, offset):
    """|a - b| bound for two summation orders of size n's reduction (0 for max/min/ints)."""
    x, y = _BUF[0, offset:offset + n], _BUF[1, offset:offset + n]
    kind = n % 4
    if kind == 0:
        terms, eps = x * y, np.finfo(np.float64).eps
    elif kind == 3:
        terms, eps = x.astype(np.float32).astype(np.float64), np.finfo(np.float32).eps
    else:
        return 0.0
    with np.errstate(all="ignore"):
        return float(max(n - 1, 1) * eps * np.nansum(np.abs(terms)))


def transcendental_atol(n, offset):
    """4 ULP of the float32 sin term (the float64 result carries its error)."""
    y = _BUF[1, offset:offset + n].astype(np.float32)
    with np.errstate(all="ignore"):
        return 4 * np.spacing(np.abs(np.sin(y))).astype(np.float64)


def _bits(a):
    return np.ascontiguousarray(np.asarray(a)).tobytes()


@pytest.mark.parametrize("build", _builds())
def test_matches_numpy(build):
    res, sizes = results(build), STATIC_SIZES[build]
    for (off, threads), outs in res.items():
        exp = split(expected(off, sizes), sizes)
        for n, (e_exact, e_tr, e_red) in exp.items():
            g_exact, g_tr, g_red = split(outs, sizes)[n]
            where = f"{build} size {n} offset {off} threads {threads}"
            assert_matches_numpy(g_exact, e_exact, ulp=0, check_zero_sign=True,
                                 _path=f"{where} exact ops")
            assert_matches_numpy(g_tr, e_tr, ulp=4, atol=transcendental_atol(n, off),
                                 _path=f"{where} transcendental")
            bound = reduction_bound(n, off)
            if isinstance(e_red, float):          # x.sum() of size 0 comes back as float
                e_red = np.float64(e_red)
            assert_matches_numpy(g_red, e_red, atol=bound, ulp=0, _path=f"{where} reduction")


@pytest.mark.parametrize("build", _builds())
def test_one_thread_and_all_threads_bit_equal(build):
    res, sizes = results(build), STATIC_SIZES[build]
    for off in OFFSETS:
        one, many = res[off, 1], res[off, MANY_THREADS]
        for i, (a, b) in enumerate(zip(one, many)):
            assert _bits(a) == _bits(b), (
                f"{build} offset {off}: output {i} (size {sizes[i // 3]}) differs between 1 "
                f"and {MANY_THREADS} threads: {a!r} vs {b!r}")


@pytest.mark.parametrize("build", _builds())
def test_pointwise_independent_of_length_and_alignment(build):
    """Element i has the same bits at every array length (vector body, tail, other thread)
    and at every alignment of the inputs."""
    res, sizes = results(build), STATIC_SIZES[build]
    for (off, threads), outs in res.items():
        longest = split(outs, sizes)[max(sizes)]
        for n, (exact, tr, _) in split(outs, sizes).items():
            for k, what in ((0, "exact ops"), (1, "transcendental")):
                got, ref = (exact, tr)[k], longest[k][:n]
                assert _bits(got) == _bits(ref), (
                    f"{build} offset {off} threads {threads}: {what} of size {n} differ from "
                    f"the first {n} elements of size {max(sizes)}")
    at0, at1 = split(res[0, 1], sizes), split(res[1, 1], sizes)
    for n in sizes:                      # alignment: offset 1's element i is offset 0's i + 1
        if n < 2 or n - 1 not in at1:
            continue
        for k in (0, 1):
            a = at1[n - 1][k]
            b = at0[n][k][1:]
            assert _bits(a) == _bits(b), f"{build}: size {n} at offset 1 vs offset 0"


@_group("scalar")
def test_builds_agree():
    """Exact ops bit-equal across builds; transcendentals and reductions within tolerance."""
    names = list(BUILDS)
    if len(names) < 2:
        pytest.skip("one build only on this CPU")
    ref = results(names[0])
    for other in names[1:]:
        res = results(other)
        common = sorted(set(STATIC_SIZES[names[0]]) & set(STATIC_SIZES[other]))
        for off in OFFSETS:
            a = split(ref[off, 1], STATIC_SIZES[names[0]])
            b = split(res[off, 1], STATIC_SIZES[other])
            for n in common:
                where = f"{names[0]} vs {other}, size {n}, offset {off}"
                assert _bits(a[n][0]) == _bits(b[n][0]), f"{where}: exact ops differ"
                assert_matches_numpy(b[n][1], a[n][1], ulp=4, atol=transcendental_atol(n, off),
                                     _path=f"{where} transcendental")
                assert_matches_numpy(b[n][2], a[n][2], atol=reduction_bound(n, off), ulp=0,
                                     _path=f"{where} reduction")


# ---------------------------------------------------------------- vector forms
# Ops the vector renderer deliberately leaves to scalar loops, and why.
SCALARIZED = {
    "fmod": "no SIMD remainder; lane-wise std::fmod would be no faster than the scalar loop",
    "cbrt": "no libmvec cube root: the C library's per element, as NumPy's loop",
    "logical_and": "bool operands use the Mask form (vector_bool); others run scalar",
    "logical_or": "as logical_and",
    "logical_xor": "as logical_and",
    "logical_not": "as logical_and",
    "mul_fits": "the overflow flag of a Python int product: a scalar loop's check "
                "(scalar.h)",
    "erf": "Python's math.erf of a scalar in a loop body (no NumPy ufunc): libm's, as Python",
    "erfc": "as erf", "gamma": "as erf", "lgamma": "as erf",
    "python_round": "Python's round(x, ndigits) of a Python float: an exact decimal rounding "
                    "per scalar (include/cppcodegen/pyround.h)",
}
# float ops that have no integer vector form (integer operands go to scalar code)
SCALARIZED_INTS = {
    "divide": "true division of ints happens on floats (traced as a cast first)",
    "power": "integer power by squaring, per lane",
    "reciprocal": "integer reciprocal follows NumPy's 1.0/x conversion, per lane",
    "fmax": "integer fmax is maximum; traced for floats",
    "fmin": "integer fmin is minimum; traced for floats",
    "isnan": "false for every integer; no vector form needed",
    "isinf": "as isnan",
    "isfinite": "as isnan",
    "signbit": "floats only in NumPy's loops",
    "sqrt": "float only", "copysign": "float only", "arctan2": "float only",
    "real": "complex operands only", "imag": "complex operands only",
    "conjugate": "complex operands only (of a real number it is traced as positive)",
    "complex": "float parts only", "mul_naive": "complex operands only",
    "div_py": "complex operands only (Python's quotient of Python numbers)",
    "power_by_scalar": "float operands only (np.power of a float array by one exponent)",
    "hypot": "float only", "floor": "identity on ints", "ceil": "identity on ints",
    "trunc": "identity on ints", "rint": "identity on ints",
}


def test_every_scalar_op_has_a_vector_form_or_is_listed():
    missing = []
    for name, op in OPS.items():
        if op.scalar is None:
            continue
        if op.vector is None and op.vector_bool is None and name not in SCALARIZED:
            missing.append(f"{name}: no vector form")
        if op.vector is not None and not op.vector_ints and name not in SCALARIZED_INTS \
                and name not in _TRANSCENDENTAL:
            missing.append(f"{name}: no integer vector form")
    assert not missing, "ops without a vector form, not listed as scalarized: " + ", ".join(missing)
    # the lists name real ops, and nothing listed has meanwhile got the form it lacked
    for name in SCALARIZED:
        assert name in OPS and OPS[name].vector is None, name
    for name in SCALARIZED_INTS:
        assert name in OPS and not OPS[name].vector_ints, name


_TRANSCENDENTAL = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
                   "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
                   "arctanh"}     # float-only functions (NumPy casts ints to float first)


# ---------------------------------------------------------------- dynamic kernels
def _one_src():
    exact, transcendental = _pointwise("x", "y")
    src = (f"def one(x, y):\n    return ({exact}, {transcendental}, (x * y).sum(), "
           f"(x * 1000).astype(np.int64).sum(), x.astype(np.float32).sum())\n")
    filename = "<cppcodegen-path-sweep-dynamic>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"np": np}
    exec(compile(src, filename, "exec"), ns)
    return ns["one"]


ONE = _one_src()


@pytest.mark.parametrize("build", _builds())
def test_dynamic_kernel_every_size(build):
    """One kernel for symbolic sizes (compile(dynamic=True)) run at every size, offset and
    thread count: its pointwise results are bit-equal to the static kernels' (which are
    bit-equal to NumPy for the exact ops), its reductions within the summation bound."""
    static = results(build)
    fn = cppcodegen.compile(ONE, dynamic=True, options=BUILDS[build])
    gomp = _gomp()
    before = gomp.omp_get_max_threads()
    try:
        for threads in (1, MANY_THREADS):
            gomp.omp_set_num_threads(threads)
            for off in OFFSETS:
                # pointwise values do not depend on the length: the static kernel's longest
                # result holds every size's values as a prefix
                sizes = STATIC_SIZES[build]
                longest = split(static[off, threads], sizes)[max(sizes)]
                for n in SIZES:
                    x, y = _BUF[0, off:off + n], _BUF[1, off:off + n]
                    got = run_compiled(fn, x, y)
                    where = f"{build} dynamic, size {n}, offset {off}, threads {threads}"
                    for k, what in ((0, "exact ops"), (1, "transcendental")):
                        assert _bits(got[k]) == _bits(longest[k][:n]), f"{where}: {what} differ"
                    exp = run_numpy(ONE, x, y)
                    with np.errstate(all="ignore"):
                        bounds = (max(n - 1, 1) * np.finfo(np.float64).eps * np.nansum(np.abs(x * y)),
                                  0.0,
                                  max(n - 1, 1) * np.finfo(np.float32).eps * np.nansum(np.abs(x)))
                    for k, bound in zip((2, 3, 4), bounds):
                        assert_matches_numpy(got[k], exp[k], atol=bound, ulp=0,
                                             _path=f"{where}: reduction {k - 2}")
    finally:
        gomp.omp_set_num_threads(before)
    # sizes 0 and 1 are specialized (broadcasting); every other size runs the dynamic kernel
    assert len(fn.dynamic_variants) == 1 and len(fn.variants) <= 3, fn.variants
