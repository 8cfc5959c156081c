"""complex64 / complex128 through the whole pipeline (issue 16, part 3), against NumPy 2.4.

The C++ layer (include/cppcodegen/complex.h, tests/test_complex_kernels.py) runs NumPy's own
algorithms and calls the glibc functions NumPy calls, so compiled complex code is compared
**bit for bit**, component by component (helpers: a NaN must be a NaN in the same component,
signed zeros checked), with two exceptions, each with its reason:

* ``np.angle`` is ``np.arctan2(z.imag, z.real)``: NumPy's float arctan2 is its own SIMD code on
  AVX-512, ours libmvec's (as for real arctan2), so 4 ULP as every transcendental function in
  tests/test_loop_matrix.py (measured: 2);
* sums (sum, mean, var, std) add in another order than NumPy's pairwise sum: each component is
  allowed the bound of two summation orders, (n - 1) * eps * sum(|z|).

The ufunc matrix: every complex loop NumPy has for the ufuncs cppcodegen supports (``F->F``,
``DD->D``, ``FF->?``, ...), casts from complex to every type, where, clip, real/imag/angle/conj,
mixed real/complex operators and ``z ** e`` for the exponents NumPy 2.4 treats apart, over a
grid of (re, im) pairs of special components (+-0, +-inf, NaN, +-1, huge, tiny, subnormal, near
exp's overflow, pi/2, ... : every branch cut point of log/sqrt/arcsin/arctanh/... with both
signs of zero), on AVX-512, AVX2, the portable build and scalar loops.
"""
import warnings

import numpy as np
import pytest

import cppcodegen
from benchmarks.program_workloads import mandelbrot_masked   # the array-style grid
from cppcodegen.ir.ufuncs import ALIASES, OPS, TRACEABLE
from cppcodegen.runtime import cpu
from helpers import Batch, assert_matches_numpy, check_against_numpy, run_numpy

@pytest.fixture(autouse=True)
def _extern_warnings_stay_unsaid():
    """Warnings about NumPy steps are given once per process: the ones these tests trigger
    (np.cumsum of complex values, ...) are forgotten afterwards, for other tests to see."""
    from cppcodegen.frontend import externs
    saved = set(externs.WARNED)
    yield
    externs.WARNED.clear()
    externs.WARNED.update(saved)


CONFIGS = {"avx512": {"isa": "avx512"}, "avx2": {"isa": "avx2"},
           "scalar_isa": {"isa": "scalar"}, "no_vectorize": {"vectorize": False}}
SUPPORTED = {k: v for k, v in CONFIGS.items() if "isa" not in v or cpu.supports(v["isa"])}
CDT = {"F": np.dtype(np.complex64), "D": np.dtype(np.complex128)}
PART = {"F": np.float32, "D": np.float64}
ANGLE_ULP = 4


# ------------------------------------------------------------------ inputs
def components(dt):
    fi = np.finfo(dt)
    big = 80.0 if dt == np.float32 else 700.0          # near exp's overflow
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 3.0,
                     float(fi.max), float(fi.tiny), float(fi.smallest_subnormal), 1e-3, big,
                     np.pi / 2, 2.0], dt)


def grid(cdt, comps):
    re, im = np.meshgrid(comps, comps, indexing="ij")
    z = np.empty(re.size, cdt)
    z.real, z.imag = re.ravel(), im.ravel()
    return z


def make_args():
    args = {}
    for ch, cdt in CDT.items():
        comps = components(PART[ch])
        r = np.random.default_rng(5)
        rnd = (r.uniform(-4, 4, 40) + 1j * r.uniform(-4, 4, 40)).astype(cdt)
        # + points on the branch cuts away from the grid: x > 1 / |y| > 1 on the axes
        cuts = np.array([1.5, -1.5, 2j, -2j, -1.1, 1.1j, -3.0, 0.5j], cdt)
        args[f"u{ch}"] = np.concatenate([grid(cdt, comps), rnd, cuts])       # 334 values
        small = grid(cdt, comps[[0, 1, 2, 3, 4, 5, 6, 7, 8, 16]])             # 100 values
        args[f"a{ch}"] = np.repeat(small, len(small))                        # all pairs
        args[f"b{ch}"] = np.tile(small, len(small))
        args[f"x{ch}"] = np.repeat(comps[[0, 1, 2, 3, 4, 5, 6, 7, 8, 16]], len(small) ** 2 // 10)
    return args


ARGS = make_args()


def matrix_exprs():
    out = {}
    names = sorted({n for n in TRACEABLE if isinstance(getattr(np, n, None), np.ufunc)}
                   & (set(OPS) | {"divmod"}))
    for n in names:
        for loop in getattr(np, n).types:
            ins, _ = loop.split("->")
            if ins[0] in CDT:
                ch = ins[0]
                out[f"{n}[{loop}]"] = f"np.{n}(u{ch})" if len(ins) == 1 else f"np.{n}(a{ch}, b{ch})"
    for ch in CDT:
        for d in ("bool_", "int32", "int64", "float32", "float64", "complex64", "complex128"):
            out[f"astype[{ch}->{d}]"] = f"u{ch}.astype(np.{d})"
        out[f"where[{ch}]"] = f"np.where(a{ch}.real > b{ch}.imag, a{ch}, b{ch})"
        out[f"clip[{ch}]"] = f"np.clip(u{ch}, a{ch}[:len(u{ch})], b{ch}[:len(u{ch})])"
        for f in ("real", "imag", "angle", "conj", "iscomplex", "isreal"):
            out[f"{f}[{ch}]"] = f"np.{f}(u{ch})"
        out[f"float_power[{ch}]"] = f"np.float_power(a{ch}, b{ch})"
        for op in "+-*/":
            out[f"real{op}complex[{ch}]"] = f"x{ch} {op} b{ch}"
            out[f"complex{op}real[{ch}]"] = f"b{ch} {op} x{ch}"
        for e in ("2", "-1", "0.5", "2.0", "-1.0", "3", "-2", "0", "1", "4", "5", "7", "8",
                  "(3+0j)", "3.0"):
            out[f"pow{e}[{ch}]"] = f"u{ch} ** {e}"
    return out


EXPRS = matrix_exprs()
BATCHES = {cfg: Batch(f"complex_matrix_{cfg}", tuple(ARGS), EXPRS, lambda: tuple(ARGS.values()),
                      options=opts) for cfg, opts in SUPPORTED.items()}


def test_matrix_covers_every_complex_loop():
    """Every supported ufunc with a complex loop in NumPy is in the matrix, with its
    complex64 and complex128 loops."""
    names = {ALIASES.get(n, n) for n in TRACEABLE if isinstance(getattr(np, n, None), np.ufunc)}
    with_complex = {n for n in names if any(t[0] in "FD" for t in getattr(np, n).types)}
    covered = {k.split("[")[0] for k in EXPRS}
    assert with_complex <= covered, sorted(with_complex - covered)
    assert {"exp[F->F]", "exp[D->D]", "power[DD->D]", "less[FF->?]", "absolute[D->d]",
            "arctanh[F->F]", "sign[D->D]", "logical_xor[DD->?]"} <= set(EXPRS)


@pytest.mark.parametrize("batch,name", [b.param(name, id=f"{cfg}-{name}")
                                        for cfg, b in BATCHES.items() for name in EXPRS])
def test_loop(batch, name):
    ulp = ANGLE_ULP if name.startswith("angle") else 0
    batch.check(name, ulp=ulp, check_zero_sign=True)


def test_branch_cuts_keep_the_sign_of_zero():
    """log, sqrt, arcsin, arctanh on the cuts: the side is chosen by the sign of the zero
    imaginary part, exactly as NumPy (C99) does."""
    z = np.array([complex(-2.0, 0.0), complex(-2.0, -0.0), complex(2.0, 0.0), complex(2.0, -0.0),
                  complex(0.0, 2.0), complex(-0.0, 2.0), complex(0.0, -2.0), complex(-0.0, -2.0)])

    def f(z):
        return np.log(z), np.sqrt(z), np.arcsin(z), np.arctanh(z), np.arccos(z), np.arcsinh(z)
    got, expected = check_against_numpy(f, z, ulp=0, check_zero_sign=True)
    assert np.signbit(got[1].imag[1]) and not np.signbit(got[1].imag[0])       # sqrt(-2 -+ 0j)


# ------------------------------------------------------------------ promotion, scalars
PROMOTIONS = [
    (np.float32, np.complex64), (np.float64, np.complex64), (np.int8, np.complex64),
    (np.int32, np.complex64), (np.int64, np.complex128), (np.bool_, np.complex64),
    (np.float32, np.complex128), (np.complex64, np.complex128), (np.uint16, np.complex64),
]


@pytest.mark.parametrize("real,cplx", PROMOTIONS, ids=lambda t: np.dtype(t).name)
def test_mixed_promotion_is_numpys(real, cplx):
    r = np.random.default_rng(1)
    x = (r.uniform(-5, 5, 37) if np.dtype(real).kind in "fc" else r.integers(0, 9, 37)).astype(real)
    z = (r.uniform(-5, 5, 37) + 1j * r.uniform(-5, 5, 37)).astype(cplx)
    x[:3] = np.array([0, 1, 0]).astype(real)
    z[:4] = [complex(np.inf, 1), complex(np.nan, 0), complex(-0.0, np.inf), 0]

    def f(x, z):
        return x + z, z * x, x / z, z - x, x == z, np.maximum(x, z), np.where(x != 0, x, z)
    check_against_numpy(f, x, z, ulp=0, check_zero_sign=True)


def test_real_times_complex_promotes_the_real_operand_first():
    """NumPy computes (inf+1j) * 2.0 as (inf+1j) * (2+0j): inf + nan j (no C99 recovery)."""
    z = np.array([complex(np.inf, 1.0), complex(1.0, np.inf), complex(np.nan, 0.0)])
    got, expected = check_against_numpy(lambda z: z * 2.0, z, ulp=0)
    assert np.isnan(got[0].imag)


def test_weak_complex_literals_follow_nep50():
    f32 = np.linspace(-2, 2, 33, dtype=np.float32)
    i64 = np.arange(-5, 6)
    c64 = (f32 + 1j * f32[::-1]).astype(np.complex64)

    def f(f32, i64, c64):
        return (1j * f32, f32 + 2j, i64 * 1j, c64 * (0.5 - 1j), c64 + 2.5, c64 * np.float64(2),
                c64 * np.complex128(1j), 3 - 1j * c64, np.exp(-2j * np.pi * f32))
    got, expected = check_against_numpy(f, f32, i64, c64, ulp=0, check_zero_sign=True)
    assert [g.dtype for g in got] == [e.dtype for e in expected]
    assert got[0].dtype == np.complex64 and got[5].dtype == np.complex128


def test_complex_scalar_arguments_are_runtime_values():
    """A Python complex (weak) or NumPy complex scalar argument is passed at run time as
    (re, im): other values reuse the build."""
    z = np.linspace(0, 1, 50).astype(np.complex64) * (1 + 1j)
    f = cppcodegen.compile(lambda z, c: z * c + c)
    for c in (1 + 2j, -0.5j, complex(np.inf, 0), 3 + 0j):
        assert_matches_numpy(f(z, c), (lambda z, c: z * c + c)(z, c), ulp=0)
    assert len(f.variants) == 1
    assert f(z, 1 + 2j).dtype == np.complex64                 # weak: complex64 stays
    for c in (np.complex128(1 - 1j), np.complex128(2j)):
        out = f(z, c)
        assert out.dtype == np.complex128
        assert_matches_numpy(out, z * c + c, ulp=0)
    assert len(f.variants) == 2
    g = cppcodegen.compile(lambda z, c: z - c)
    assert_matches_numpy(g(z.astype(np.complex128), np.complex64(1 + 1j)),
                         z.astype(np.complex128) - np.complex64(1 + 1j), ulp=0)
    assert "double, double" in cppcodegen.explain(lambda z, c: z * c, z, 1j).cdef


def test_complex_results_and_constants():
    table = np.array([1 + 2j, -3j, 0.5, complex(np.nan, 1)])

    def f(x):
        c = complex(2, -1)
        return x[:, None] * table + c, np.zeros(3, dtype=complex), np.full(2, 1j), \
            np.ones_like(x, dtype=np.complex64)
    check_against_numpy(f, np.arange(5.0), ulp=0)


# ------------------------------------------------------------------ reductions
def _sum_tol(z, axis):
    """Per component: two summation orders differ by at most (n-1) * eps * sum(|z|)."""
    n = z.size if axis is None else np.prod([z.shape[a] for a in np.atleast_1d(axis)])
    eps = np.finfo(z.real.dtype).eps
    return float(n * eps * np.max(np.sum(np.abs(z), axis=axis)))


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reductions(dt, axis):
    r = np.random.default_rng(7)
    z = (r.uniform(-2, 2, (23, 67)) + 1j * r.uniform(-2, 2, (23, 67))).astype(dt)
    tol = _sum_tol(z, axis)
    check_against_numpy(lambda z: (z.sum(axis=axis), np.mean(z, axis=axis)), z, atol=tol, ulp=2)
    check_against_numpy(lambda z: (np.var(z, axis=axis), z.std(axis=axis, ddof=1)), z,
                        atol=4 * tol, ulp=4)
    exact = lambda z: (z.max(axis=axis), np.min(z, axis=axis),             # noqa: E731
                       np.prod(z[:, :9], axis=axis), z.sum(axis=axis, keepdims=True).shape)
    check_against_numpy(exact, z, ulp=0, check_zero_sign=True)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_reductions_with_special_values(dt):
    """max/min/argmax/argmin in NumPy's lexicographic order (a NaN in either part wins, the
    first one), products along rows (NumPy's naive product) and along columns (its fused
    SIMD product), exact."""
    r = np.random.default_rng(9)
    z = (r.uniform(0.5, 1.5, (9, 40)) * np.exp(1j * r.uniform(-3, 3, (9, 40)))).astype(dt)
    z[2, 5], z[4, 7], z[6, 3], z[7, 1] = complex(np.inf, 1), complex(np.nan, 0), \
        complex(0, np.inf), complex(3, np.nan)
    z[8, :] = z[8, 0]                               # ties: the first index
    z[1, :] = np.where(np.arange(40) % 2, 1 + 0j, 1 - 0j)

    def f(z):
        return (z.max(axis=0), z.min(axis=1), z.max(), np.argmax(z, axis=1), np.argmin(z, axis=0),
                np.argmax(z), np.prod(z, axis=1), np.prod(z, axis=0), np.prod(z.T, axis=1),
                np.prod(z[:3]), np.maximum.reduce(z, axis=1))
    check_against_numpy(f, z, ulp=0, check_zero_sign=True)


def test_large_complex_products_are_numpys_blas_call():
    """Complex matrix products above FUSED_COMPLEX multiply-adds are NumPy steps (its BLAS
    call, bit for bit), not the native float GEMM."""
    r = np.random.default_rng(2)
    a = r.standard_normal((40, 50)) + 1j * r.standard_normal((40, 50))
    b = r.standard_normal((50, 30)) + 1j * r.standard_normal((50, 30))
    x = r.standard_normal((50, 30))

    def f(a, b, x):
        return a @ b + 1, np.dot(a, x), a.astype(np.complex64) @ b.astype(np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_against_numpy(f, a, b, x, ulp=0)
        src = cppcodegen.explain(f, a, b, x).source
    assert "gemm" not in src.lower()


def small_products(a, b, S):
    for k in range(S.shape[0]):                 # a loop around: compiled, not unrolled
        S[k] += a[k] @ b[k] + a[k] @ b[k, :, 0]
    return a[0] @ b[0], a[0, 0] @ b[0], np.dot(a[0, 0], a[0, 1])


def test_small_complex_products_are_fused_and_compile_in_loops():
    r = np.random.default_rng(3)
    a = r.standard_normal((4, 3, 5)) + 1j * r.standard_normal((4, 3, 5))
    b = r.standard_normal((4, 5, 3)) + 1j * r.standard_normal((4, 5, 3))
    S1, S2 = np.zeros((4, 3, 3), complex), np.zeros((4, 3, 3), complex)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no NumPy step between kernels
        got = cppcodegen.compile(small_products)(a, b, S1)
    want = small_products(a, b, S2)
    for g, w in zip(got + (S1,), want + (S2,)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14)


# ------------------------------------------------------------------ where, comparisons, casts
def test_where_comparisons_and_predicates():
    r = np.random.default_rng(4)
    z = np.round(r.uniform(-2, 2, 64)) + 1j * np.round(r.uniform(-2, 2, 64))
    w = np.round(r.uniform(-2, 2, 64)) + 1j * np.round(r.uniform(-2, 2, 64))
    z[:4] = [complex(np.nan, 0), complex(1, np.nan), complex(np.inf, 0), complex(0, -np.inf)]

    def f(z, w):
        return (np.where(z.real > w.imag, z, w), np.where(np.abs(z) < 2, z, 1j), z == w, z != 1j,
                z < w, z >= w, np.isnan(z), np.isinf(z), np.isfinite(z), np.logical_and(z, w),
                np.logical_not(z), np.isclose(z, w, atol=0.5), np.allclose(z, z),
                np.select([z.real > 0, z.imag > 0], [z, 2 * z], 1j))
    check_against_numpy(f, z, w, ulp=0, check_zero_sign=True)


def test_casts_from_complex_take_the_real_part_and_warn_as_numpy():
    z = np.array([1.5 + 2j, -2.7 - 1j, complex(np.nan, 1), complex(np.inf, -1), 0j, -0.0 + 3j])

    def f(z):
        return z.astype(np.float32), z.astype(np.int32), z.astype(bool), z.astype(np.complex64)
    f_c = cppcodegen.compile(f)
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        got = f_c(z)
    expected = run_numpy(f, z)
    assert_matches_numpy(got, expected, ulp=0, check_zero_sign=True)
    with warnings.catch_warnings():          # to bool and to complex: no warning
        warnings.simplefilter("error")
        cppcodegen.compile(lambda z: (z.astype(bool), z.astype(np.complex64), z + 1.0))(z)

    def into_real(x, z):
        x[1:3] = z[:2]
        return x
    with pytest.warns(np.exceptions.ComplexWarning):
        got = cppcodegen.compile(into_real)(np.zeros(4), z)
    assert_matches_numpy(got, np.array([0.0, 1.5, -2.7, 0.0]), ulp=0)


def test_real_result_into_real_array_refused_as_numpy():
    """x += z for real x: NumPy's same_kind rule refuses the complex -> float cast."""
    def f(x, z):
        x += z
        return x
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        cppcodegen.compile(f)(np.zeros(3), np.ones(3, complex))


def test_operations_numpy_has_no_complex_loop_for_raise_its_typeerror():
    z = np.ones(4, complex)
    for fn in (lambda z: np.floor(z), lambda z: z // 2, lambda z: np.arctan2(z, z),
               lambda z: z % 2, lambda z: np.signbit(z)):
        with pytest.raises(TypeError):
            fn(z)                                   # NumPy refuses ...
        with pytest.raises(TypeError, match="loop|not supported"):
            cppcodegen.compile(fn)(z)               # ... and so does the trace


def test_clongdouble_is_refused_with_a_clear_message():
    with pytest.raises(TypeError, match="complex64/complex128 arrays; got an array of dtype "
                                        "complex256"):
        cppcodegen.compile(lambda z: z + 1)(np.ones(3, np.clongdouble))


# ------------------------------------------------------------------ real and imag parts
def test_real_imag_conj_angle_as_values():
    r = np.random.default_rng(3)
    z = (r.standard_normal((5, 7)) + 1j * r.standard_normal((5, 7))).astype(np.complex64)
    x = r.standard_normal((5, 7))

    def f(z, x):
        return (z.real, z.imag, np.real(z), np.imag(z), np.conj(z), z.conj(), z.conjugate(),
                np.conjugate(z), x.real, x.imag, np.real(x), np.imag(x), np.conj(x),
                np.angle(x), np.angle(z, deg=True), np.iscomplex(x), np.isreal(z), z.T.real,
                abs(z), np.iscomplexobj(z), np.isrealobj(x))
    got, expected = check_against_numpy(f, z, x, ulp=ANGLE_ULP)
    assert got[0].dtype == np.float32 and got[8].dtype == np.float64


def test_conj_method_of_a_real_array_is_the_array():
    """ndarray.conj() of a real array is the array itself (bool stays bool), while the ufunc
    np.conjugate of bools computes in int8 (found by the fuzzer, seed 5 #1112)."""
    def f(b, i):
        return b.conj(), np.conjugate(b), i.conjugate(), np.conj(i)
    got, _ = check_against_numpy(f, np.array([True, False]), np.arange(3))
    assert got[0].dtype == bool and got[1].dtype == np.int8


def test_parts_are_views_of_the_array():
    """z.real sees later updates of z, as NumPy's view does."""
    def f(z):
        re = z.real
        im = z.imag[1:]
        z *= 2j
        return re, im, z
    check_against_numpy(f, np.array([1 + 2j, 3 - 1j, -1j]), writes=(0,), ulp=0)


def test_writing_the_parts():
    """z.real[...] = v, z.imag[1:] *= 2, z.real = v on a fresh array and on the caller's."""
    def fresh(z, x):
        y = z * 1
        y.real[...] = x
        y.imag[1:] *= 2
        w = np.zeros(3, dtype=np.complex128)
        w.imag = x
        w.real[::2] += 1
        return y, w

    def argument(z, x):
        z.real = x
        z.imag[::2] = -z.imag[::2]
        return z.sum()
    z = np.array([1 + 2j, 3 - 1j, complex(np.nan, -0.0)])
    x = np.array([0.5, -0.0, np.inf])
    check_against_numpy(fresh, z, x, ulp=0, check_zero_sign=True)
    got_z, exp_z = z.copy(), z.copy()
    got = cppcodegen.compile(argument)(got_z, x)
    expected = argument(exp_z, x)
    assert_matches_numpy(got, expected, ulp=0)
    assert_matches_numpy(got_z, exp_z, ulp=0, check_zero_sign=True)


def test_imag_of_a_real_array_is_read_only():
    def f(x):
        x.imag[...] = 1.0
        return x
    with pytest.raises(ValueError, match="read-only"):
        f(np.zeros(3))                                      # NumPy
    with pytest.raises(ValueError, match="read-only"):
        cppcodegen.compile(f)(np.zeros(3))


# ------------------------------------------------------------------ loops
def dft(x):
    N = x.shape[0]
    out = np.zeros(N, dtype=np.complex128)
    for k in range(N):
        s = 0j
        for n in range(N):
            s += x[n] * np.exp(-2j * np.pi * k * n / N)
        out[k] = s
    return out


def dft_rows(x):
    N = x.shape[0]
    n = np.arange(N)
    out = np.empty(N, dtype=complex)
    for k in range(N):
        out[k] = np.sum(x * np.exp(-2j * np.pi * k * n / N))
    return out


def mandelbrot(c, maxiter):
    out = np.zeros(c.shape, dtype=np.int64)
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            z = 0j
            for k in range(maxiter):
                z = z * z + c[i, j]
                if z.real * z.real + z.imag * z.imag > 4.0:
                    out[i, j] = k + 1
                    break
    return out


@pytest.mark.parametrize("fn", [dft, dft_rows])
def test_dft_written_with_loops_compiles_as_loops(fn):
    x = np.random.default_rng(1).standard_normal(64)
    # the same loops as Python runs them: bit for bit (NumPy scalars multiply naively, as
    # compiled scalar code does); np.sum of a row adds in another order: its bound
    tol = {"ulp": 0} if fn is dft else {"atol": 64 * 64 * 4 * np.finfo(float).eps, "ulp": 2}
    got, expected = check_against_numpy(fn, x, **tol)
    np.testing.assert_allclose(got, np.fft.fft(x), atol=1e-12)
    src = cppcodegen.explain(fn, x).source
    assert "// for at" in src and src.count("ccg::exp(") <= 4    # a C++ loop, not unrolled
    assert "iterations proved independent" in src                # out[k]: k on the threads
    assert "ccg::exp(" in src
    y = np.random.default_rng(2).standard_normal(64) + 1j      # a complex input too
    check_against_numpy(fn, y, **tol)


def test_mandelbrot_escape_counts_with_a_complex_carried_value():
    re, im = np.meshgrid(np.linspace(-2, 0.6, 23), np.linspace(-1.2, 1.2, 17))
    c = re + 1j * im
    check_against_numpy(mandelbrot, c, 40)
    src = cppcodegen.explain(mandelbrot, c, 40).source
    assert "ccg::c128" in src and "break" in src


def shifted_then_written(z, n):
    w = np.zeros(z.shape, dtype=np.int64)
    z = z.copy()
    for it in range(n):
        w[1:] += (np.abs(z[:-1]) > 1.0)      # reads z one row behind ...
        z[:] = z * 0.9 + 0.2j                # ... of the one this writes: never one loop
    return w, z


def test_a_carried_array_written_where_a_sibling_read_it_is_one_pass():
    """escape[...] reads the old z at each element and z[...] = writes it there: one loop
    computing z * z + c and |z| once (schedule._same_point); a read at another element keeps
    the write in its own pass."""
    re, im = np.meshgrid(np.linspace(-2.2, 0.8, 37), np.linspace(-1.2, 1.2, 29))
    c = re + 1j * im
    check_against_numpy(mandelbrot_masked, c, 30)
    src = cppcodegen.explain(mandelbrot_masked, c, 30).source
    body = src[src.index("// for at"):]
    assert body.count("kernel") == 1 and src.count("ccg::abs(") == 2    # vector + tail loop
    z = np.linspace(-2, 2, 41 * 7).reshape(41, 7) + 0.5j
    check_against_numpy(shifted_then_written, z, 5)


def test_numpy_functions_of_python_scalars_are_numpy_scalars():
    """np.exp(-2j * pi * k / n) of a loop's k is a complex128 NumPy scalar (it promotes a
    complex64 z[k] to complex128), while Python arithmetic on Python numbers stays weak."""
    def g(z, x, n):
        s = 0j
        t = 0.0
        for k in range(n):
            s += z[k] * np.exp(-2j * np.pi * k / n)
            t += x[k] * np.exp(0.5 * k) + x[k] * (0.5 * k)
        return s, t
    z = np.arange(8).astype(np.complex64) * (1 - 0.5j)
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    got, expected = check_against_numpy(g, z, x, 8, ulp=0)
    assert got[0].dtype == np.complex128 and got[1].dtype == np.float64


def test_complex_loop_carried_array_and_dynamic_sizes():
    def rotate(z, steps):
        w = np.exp(0.25j)
        for _ in range(steps):
            z = z * w + 0.01 * np.conj(z)
        return z
    f = cppcodegen.compile(rotate, dynamic=True)
    for n in (7, 33):
        z = np.linspace(0, 1, n) * (1 - 1j)
        assert_matches_numpy(f(z, 5), rotate(z, 5), ulp=0)
    assert len(f.variants) + len(f.dynamic_variants) <= 2


# ------------------------------------------------------------------ the rest of the pipeline
def layer(z, x):
    a = np.exp(1j * x) * z
    s = a.sum(axis=1, keepdims=True)
    return np.abs(a - s / a.shape[1]), a.real.max(), np.sqrt(a)


def test_check_mode_and_numpy_backend():
    r = np.random.default_rng(0)
    z = r.standard_normal((30, 40)) + 1j * r.standard_normal((30, 40))
    x = r.standard_normal((30, 40))
    report = cppcodegen.check(layer, z, x)
    assert report.ok and "sqrt" in str(report)
    assert any(b.dtype == "complex128" for b in report.buffers)
    with pytest.raises(cppcodegen.CheckError, match="sqrt"):
        cppcodegen.check(layer, z, x, options={"_testing_miscompile": "sqrt"})
    expected = run_numpy(layer, z, x)
    got = cppcodegen.compile(layer, backend="numpy")(z, x)
    assert_matches_numpy(got, expected, atol=1e-12, ulp=2)
    assert cppcodegen.check(dft, x[0]).ok


def test_hooks_report_complex_buffers():
    r = np.random.default_rng(0)
    z = (r.standard_normal((8, 9)) + 1j).astype(np.complex64)
    x = r.standard_normal((8, 9)).astype(np.float32)
    seen = []
    f = cppcodegen.compile(layer, options={"generate_intermediate_hooks": True})
    with cppcodegen.hooks.intermediate_hook(lambda name, v: seen.append((name, v.dtype))):
        f(z, x)
    assert (np.dtype(np.complex64) in [d for _, d in seen]
            and any(n.endswith(":sqrt") for n, _ in seen))


def test_check_compares_complex_buffers_per_component():
    from cppcodegen.checking.check import compare
    ref = np.array([1 + 1j, complex(np.nan, 2), complex(3, np.inf)])
    assert compare(ref.copy(), ref)[0]
    ok, _, _, bad, reason = compare(ref * (1 + 1e-9), ref)
    assert not ok and "part" in reason
    assert not compare(np.array([1 + 1j, complex(2, np.nan), complex(3, np.inf)]), ref)[0]


def test_numpy_steps_with_complex_values():
    """NumPy calls between kernels take and return complex arrays (np.fft, np.sort, cumsum)."""
    x = np.random.default_rng(5).standard_normal(32)

    def f(x):
        spec = np.fft.fft(x * 2)
        return np.abs(spec) + 1, np.sort(spec * 1j), np.cumsum(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_against_numpy(f, x, ulp=0)


def test_codegen_complex_vector_loop():
    z = np.ones(1000, complex)
    src = cppcodegen.explain(lambda z, x: np.abs(np.exp(1j * x) * z + 1), z, np.ones(1000)).source
    assert "ccg::Vec<ccg::c128, L>::load(" in src and "ccg_lanes<8>" in src
    assert "ccg::convert<ccg::c128>(" in src and "const ccg::c128* __restrict__" in src
    src = cppcodegen.explain(lambda z: z * z.conj(), z.astype(np.complex64)).source
    assert "ccg::Vec<ccg::c64, L>" in src and "ccg_lanes<4>" in src


def test_dask_chunks():
    da = pytest.importorskip("dask.array")
    import dask
    r = np.random.default_rng(0)
    z = r.standard_normal((400, 64)) + 1j * r.standard_normal((400, 64))
    x = r.standard_normal((400, 64))

    def f(z, x):
        return np.abs(np.exp(1j * x) * z + 1), (z * 1j).sum(axis=0)
    cf = cppcodegen.compile(f)
    with dask.config.set(scheduler="synchronous"):
        a, s = cf(da.from_array(z, chunks=(100, 64)), da.from_array(x, chunks=(100, 64)))
        assert isinstance(a, da.Array) and s.dtype == np.complex128
        assert_matches_numpy(a.compute(), f(z, x)[0], ulp=0)
        assert_matches_numpy(s.compute(), f(z, x)[1], atol=_sum_tol(z, 0), ulp=2)


def _escape(c, maxit):
    z = 0j
    for k in range(maxit):
        z = z * z + c
        if abs(z) > 2.0:
            return k
    return maxit


def complex_builtin_grid(re, im, maxit):
    out = np.zeros((im.shape[0], re.shape[0]), dtype=np.int64)
    for i in range(im.shape[0]):
        for j in range(re.shape[0]):
            out[i, j] = _escape(complex(re[j], im[i]), maxit)
    return out


def complex_of_parts(x, y):
    s = 0j
    for k in range(x.shape[0]):
        s += complex(x[k], y[k]) * complex(y[k]) + complex(x[k] + 1j * y[k])
    return s


def test_complex_builtin_of_traced_scalars():
    """complex(re, im) of traced values builds the number from its parts (an infinite or NaN
    part stays in its place, as Python's complex does), complex(z) keeps a complex value."""
    re, im = np.linspace(-2.0, 0.5, 13), np.linspace(-1.0, 1.0, 7)
    np.testing.assert_array_equal(cppcodegen.compile(complex_builtin_grid)(re, im, 40),
                                  complex_builtin_grid(re, im, 40))
    x = np.array([1.0, -2.0, np.inf, 0.5])
    y = np.array([0.5, np.nan, 1.0, -3.0])
    got, want = cppcodegen.compile(complex_of_parts)(x, y), complex_of_parts(x, y)
    assert np.iscomplexobj(got)
    np.testing.assert_allclose(got, want, equal_nan=True)


def _mandelbrot_masked(c, steps):
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    for _ in range(steps):
        m = np.abs(z) <= 2.0
        z[m] = z[m] * z[m] + c[m]           # (a lazy z[m] * z[m]: it was refused)
        counts += m
    return z, counts


def test_masked_complex_product_compiles():
    """``z[m] = z[m] * z[m] + c[m]`` (the vectorized Mandelbrot) compiles: the product of two
    complex selections of one mask stays lazy, as the sum does (found by a new user's
    probe: it ran as Python)."""
    y, x = np.mgrid[-1.2:1.2:31j, -2.0:0.6:41j]
    c = x + 1j * y
    got = cppcodegen.compile(_mandelbrot_masked, fallback=False)(c, 12)
    want = _mandelbrot_masked(c, 12)
    np.testing.assert_array_equal(got[1], want[1])
    finite = np.isfinite(want[0])
    np.testing.assert_allclose(got[0][finite], want[0][finite], rtol=1e-12)
    assert got[0].dtype == want[0].dtype


def energy_and_overlap(a, b):
    return np.vdot(a, a), np.vdot(a, b), np.vdot(a.real, b), a.sum().real, np.imag(b.sum())


def test_vdot_and_parts_of_complex_scalars_are_numpys():
    """``np.vdot(a, a)`` has an imaginary part of exactly 0 (four real dot products, as BLAS's
    zdotc sums them), and the parts of a complex scalar are NumPy float scalars, not 0-d
    arrays."""
    rng = np.random.default_rng(5)
    for n in (1, 7, 1001):
        a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
        got = cppcodegen.compile(energy_and_overlap, fallback=False)(a, b)
        want = energy_and_overlap(a, b)
        assert got[0].imag == 0.0 == want[0].imag
        for g, w in zip(got, want):      # (float32 sums in another order: float32's epsilon)
            assert type(g) is type(w)
            np.testing.assert_allclose(g, w, rtol=1e-12 if w.itemsize >= 8 else 1e-5)


def dft_bin(x, k):
    s = 0j
    for n in range(x.shape[0]):
        s += x[n] * np.exp(-2j * np.pi * k * n / x.shape[0])
    return s


def test_a_python_complex_constant_is_returned():
    """``s = 0j`` left by a loop of no trips (a trace whose result is the constant) and a
    constant ``1j`` are returned as Python complex numbers, compiled."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = cppcodegen.compile(dft_bin, fallback=False)
        x = np.arange(16.0)
        np.testing.assert_allclose(f(x, 3), dft_bin(x, 3), rtol=1e-13)
        got = f(np.zeros(0), 1)
        assert got == 0j and type(got) is complex
        got = cppcodegen.compile(lambda x: 1j, fallback=False)(x)
        assert got == 1j and type(got) is complex


def complex_products_loop(x, y):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * y[i]
    return out


def test_complex_scalar_products_in_a_loop_are_pythons_bits():
    """``x[i] * y[i]`` of complex scalars is NumPy's scalar product (two roundings per part),
    bit for bit: GCC's vectorizer would fuse it in SIMD lanes, so the loop runs without."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(1000) + 1j * rng.standard_normal(1000)
    y = rng.standard_normal(1000) + 1j * rng.standard_normal(1000)
    got = cppcodegen.compile(complex_products_loop, fallback=False)(x, y)
    np.testing.assert_array_equal(got, complex_products_loop(x, y))


def python_quotients(ar, ai, br, bi, n):
    w = complex(br, bi)
    return complex(ar, ai) / w, complex(ar, ai) / n, 1 / w, w ** -1, w ** -3, (ar + 0j) / 2.5


def test_python_complex_division_is_pythons_quotient():
    """``/`` of Python numbers, one complex (and ``w ** -n``), is CPython's quotient (tops
    and bottom divided by the divisor's larger part), not NumPy's reciprocal-multiply: a
    third of the results differed in the last bit, and so did ``dft`` of 13 points."""
    rng = np.random.default_rng(12)
    f = cppcodegen.compile(python_quotients, fallback=False)
    for _ in range(60):
        args = [float(v) for v in rng.standard_normal(4)] + [13]
        assert f(*args) == python_quotients(*args)
    assert f(1.0, 2.0, 0.0, 3.0, 7) == python_quotients(1.0, 2.0, 0.0, 3.0, 7)
    x = rng.standard_normal(13)
    np.testing.assert_array_equal(cppcodegen.compile(dft, fallback=False)(x), dft(x))
    with pytest.raises(ZeroDivisionError):
        f(1.0, 1.0, 0.0, 0.0, 1)


def multibrot(c, maxiter):
    z = np.zeros_like(c)
    it = np.zeros(c.shape, dtype=np.int32)
    for k in range(maxiter):
        m = np.abs(z) <= 2
        z[m] = z[m] ** 3 + c[m]
        it[m] = k
    return it, z


def test_a_masked_cube_stays_a_selection_in_a_compiled_loop():
    """``z[m] ** 3`` keeps the selection lazy (the power of the whole array, where(m, ...)):
    the loop compiles as a loop with no NumPy step, whatever its trip count, and the cube is
    npy_cpow's products (ccg::cpowi), bit for bit."""
    re, im = np.meshgrid(np.linspace(-1.6, 1.2, 33), np.linspace(-1.3, 1.3, 27))
    c = re + 1j * im
    check_against_numpy(multibrot, c, 12)
    check_against_numpy(multibrot, c.astype(np.complex64), 5)
    e = cppcodegen.explain(multibrot, c, 12)
    assert all(k.form != "extern" for k in e.kernels)
    assert "ccg::cpowi<3>" in e.source and "// for at" in e.source
