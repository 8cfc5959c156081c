"""Tests for the complex C++ layer include/cppcodegen/complex.h against NumPy.

tests/cpp/test_complex.cpp exposes every function of the header over arrays: the scalar
functions element by element (lanes 0) and Vec<Complex<T>, N> loops with masked tails
(lanes 4, 8, 16), for complex64 and complex128. It is compiled once per ISA mode the CPU
supports (AVX-512: -march=native, AVX2: -mavx2 -mfma, portable: -DCCG_NO_SIMD) and cached
by source hash in the temp dir; -O0 by default to keep the build short (the semantics do
not depend on it: kernels and this driver both use -ffp-contract=off), CCG_TEST_OPT=-O3
tests the production level.

The inputs are a grid of every (re, im) pair from a list of components (+-0, +-inf, NaN,
+-1, the largest and smallest normal and subnormal values, values near exp's overflow
and near 1, pi/2, ...), which puts points on every branch cut (negative reals for log and
sqrt, |x| > 1 on the real axis for arcsin/arccos/arctanh, |y| > 1 on the imaginary axis
for arctan/arcsinh, x < 1 for arccosh, with both signs of zero), plus random values.

Expected precision: every function is bit-identical to NumPy (signed zeros included; a
NaN only has to be a NaN in the same component, its sign and payload do not matter),
because the header runs NumPy's own algorithms (multiply and abs as NumPy's SIMD loops,
divide/reciprocal/power/sign as its scalar loops) and calls the same glibc functions
NumPy calls (cexp, clog, csqrt, csin, ..., cpow). The one exception is angle: NumPy's
arctan2 is its own SIMD code (SVML) on AVX-512 machines, ours is libmvec's (as for float
arctan2), so angle is allowed ANGLE_ULP ulp, as test_headers.py allows transcendental
functions (measured maximum: 2 ulp, at 1-30% of the inputs depending on ISA and dtype).
"""

import ctypes
import hashlib
import itertools
import os
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "include"
SRC = ROOT / "tests" / "cpp" / "test_complex.cpp"
HEADERS = [INCLUDE / "cppcodegen" / h for h in ("complex.h", "vec.h", "scalar.h")]

MODES = {
    "avx512": ["-march=native"],
    "avx2": ["-march=x86-64", "-mavx2", "-mfma", "-mno-avx512f"],
    "scalar": ["-march=x86-64", "-DCCG_NO_SIMD"],
}
# as cppcodegen/api.py build_flags builds kernels; -fno-tree-slp-vectorize matters: GCC 12's
# SLP pass fuses the halves of complex division into vfmsubadd even with -ffp-contract=off
KERNEL_FLAGS = ["-std=c++17", "-fPIC", "-shared", "-fwrapv", "-fno-math-errno",
                "-ffp-contract=off", "-fno-tree-slp-vectorize", "-fno-tree-loop-vectorize",
                "-Wno-psabi"]
# 0: the scalar functions; else Vec lanes as a loop would have them (its register width
# over the widest element: complex128 parts are 8 bytes, so 16 lanes only for complex64)
LANES = {"complex64": (0, 4, 8, 16), "complex128": (0, 4, 8)}
ANGLE_ULP = 4
CDTYPES = ("complex64", "complex128")


def _cpu_flags():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


CPU = _cpu_flags()
AVAILABLE = {
    "avx512": {"avx512f", "avx512vl", "avx512dq", "avx512bw"} <= CPU,
    "avx2": {"avx2", "fma"} <= CPU,
    "scalar": True,
}


def _build_all():
    opt = os.environ.get("CCG_TEST_OPT", "-O0")
    digest = hashlib.sha256(opt.encode())
    for p in [SRC, *HEADERS]:
        digest.update(p.read_bytes())
    for flags in [*MODES.values(), KERNEL_FLAGS]:
        digest.update(" ".join(flags).encode())
    cache = Path(tempfile.gettempdir()) / f"ccg_test_complex_{digest.hexdigest()[:16]}"
    cache.mkdir(exist_ok=True)
    procs = {}
    for mode, flags in MODES.items():
        out = cache / f"{mode}.so"
        if out.exists() or not AVAILABLE[mode]:
            continue
        tmp = cache / f"{mode}.{os.getpid()}.so"
        cmd = ["g++", opt, *flags, *KERNEL_FLAGS, f"-I{INCLUDE}", str(SRC), "-o", str(tmp),
               "-lmvec"]
        procs[mode] = (subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True), tmp, out)
    for mode, (proc, tmp, out) in procs.items():
        _, err = proc.communicate()
        assert proc.returncode == 0, f"{mode} build failed:\n{err[-4000:]}"
        os.replace(tmp, out)
    libs = {}
    for mode in MODES:
        if AVAILABLE[mode]:
            lib = ctypes.CDLL(str(cache / f"{mode}.so"))
            lib.ccg_cx.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_int64, ctypes.c_int64]
            libs[mode] = lib
    return libs


@pytest.fixture(scope="session")
def libs():
    return _build_all()


@pytest.fixture(params=list(MODES))
def lib(request, libs):
    if request.param not in libs:
        pytest.skip(f"CPU lacks {request.param}")
    return libs[request.param]


def run(lib, op, lanes, a, b=None, out_dtype=None, stride=1, dtype=None):
    """ccg_cx over a (and b); with stride s, a and b are spread s elements apart."""
    n = len(a)
    dtype = dtype or a.dtype
    if stride != 1:
        def spread(x):
            y = np.full(n * stride, np.nan, dtype=x.dtype)
            y[::stride] = x
            return y
        a = spread(a)
        b = None if b is None else spread(b)
    a = np.ascontiguousarray(a)
    b = None if b is None else np.ascontiguousarray(b)
    out = np.zeros(n, dtype=out_dtype or dtype)
    rc = lib.ccg_cx(op.encode(), str(np.dtype(dtype)).encode(), lanes, a.ctypes.data,
                    None if b is None else b.ctypes.data, out.ctypes.data, n, stride)
    assert rc == 0, f"ccg_cx: unknown op {op} for {dtype}, lanes {lanes}"
    return out


# ------------------------------------------------------------------ inputs

def components(real_dtype):
    f = np.finfo(real_dtype)
    v = [0.0, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 10.0, 100.0, np.pi / 2, np.pi, 1e-8, 1e8,
         88.5, 89.0, 709.0, 711.0, 1e300,
         float(f.tiny), float(f.smallest_subnormal), float(f.max), float(f.max) / 4 * 1.001,
         float(f.eps), 1 - float(f.epsneg), 1 + float(f.eps), float(np.sqrt(f.max)),
         float(np.sqrt(f.tiny)), np.inf]
    v = [x for x in v if x <= float(f.max) or x == np.inf]
    v = sorted(set(np.array(v, dtype=real_dtype).tolist()))
    return np.array(v + [-x for x in v] + [np.nan], dtype=real_dtype)


SMALL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, 1e-30, -1e30, np.inf, -np.inf, np.nan]


def make(re, im, dtype):
    z = np.empty(np.broadcast(re, im).shape, dtype=dtype)
    z.real, z.imag = re, im
    return z


def unary_inputs(dtype, seed=0):
    rt = np.finfo(dtype).dtype
    c = components(rt)
    re, im = (x.ravel() for x in np.meshgrid(c, c))
    rng = np.random.default_rng(seed)
    hi = 30 if rt == np.float32 else 250
    mag = 10.0 ** rng.uniform(-hi, hi, 1500)
    ang = rng.uniform(-np.pi, np.pi, 1500)
    near1 = 1 + rng.normal(size=500) * 1e-3           # |z| near 1: clog's log1p branch
    ang1 = rng.uniform(-np.pi, np.pi, 500)
    g = rng.normal(size=(1000, 2)) * 3
    return np.concatenate([make(re, im, dtype), make(mag * np.cos(ang), mag * np.sin(ang), dtype),
                           make(near1 * np.cos(ang1), near1 * np.sin(ang1), dtype),
                           make(g[:, 0], g[:, 1], dtype)])


def binary_inputs(dtype, seed=1):
    rt = np.finfo(dtype).dtype
    c = np.array(SMALL, dtype=rt)
    vals = make(*(x.ravel() for x in np.meshgrid(c, c)), dtype)
    a, b = (np.array(t, dtype=dtype) for t in zip(*itertools.product(vals, vals)))
    rng = np.random.default_rng(seed)
    r = rng.normal(size=(4, 3000)) * 10.0 ** rng.integers(-3, 4, size=(4, 3000))
    ints = make(rng.integers(-5, 6, 600).astype(rt), np.zeros(600, rt), dtype)   # power's
    return (np.concatenate([a, make(r[0], r[1], dtype), unary_inputs(dtype)[:600]]),
            np.concatenate([b, make(r[2], r[3], dtype), ints]))


# ------------------------------------------------------------------ checking

def ulp_diff(x, y):
    it = np.int32 if x.dtype == np.float32 else np.int64
    xi, yi = x.view(it).astype(np.int64), y.view(it).astype(np.int64)
    lo = np.iinfo(it).min
    xi = np.where(xi < 0, lo - xi, xi)
    yi = np.where(yi < 0, lo - yi, yi)
    return np.abs(xi - yi).astype(np.float64)


def mismatches(got, want, ulps=0):
    """Per element: not equal to NumPy (per component for complex; NaN matches NaN)."""
    if got.dtype.kind == "c":
        return mismatches(got.real, want.real, ulps) | mismatches(got.imag, want.imag, ulps)
    if got.dtype.kind != "f":
        return got != want
    nan = np.isnan(got) | np.isnan(want)
    bad = np.where(nan, np.isnan(got) != np.isnan(want), ulp_diff(got, want) > ulps)
    return bad | (~nan & (np.signbit(got) != np.signbit(want)) & (want == 0))


def check(got, want, inputs, what, ulps=0):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, NumPy {want.dtype}"
    bad = mismatches(got, want, ulps)
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        rows = [f"  in={[x[i] for x in inputs]} got={got[i]!r} want={want[i]!r}" for i in idx]
        pytest.fail(f"{what}: {bad.sum()} of {len(got)} differ from NumPy "
                    f"(tolerance {ulps} ulp)\n" + "\n".join(rows))


def numpy_ref(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


UNARY = {
    "negative": np.negative, "positive": np.positive, "conjugate": np.conjugate,
    "square": np.square, "reciprocal": np.reciprocal, "sign": np.sign, "rint": np.rint,
    "real": np.real, "imag": np.imag, "absolute": np.absolute, "angle": np.angle,
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "logical_not": np.logical_not, "astype_bool": lambda z: z.astype(bool),
    "astype_real": lambda z: z.real.astype(z.real.dtype),
}
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax,
    "fmin": np.fmin, "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}
_INPUTS = {}


def inputs(kind, dtype):
    key = (kind, dtype)
    if key not in _INPUTS:
        make_inputs = unary_inputs if kind == 1 else binary_inputs
        _INPUTS[key] = make_inputs(np.dtype(dtype))
    return _INPUTS[key]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(lib, op, dtype):
    z = inputs(1, dtype)
    want = numpy_ref(UNARY[op], z)
    for lanes in LANES[dtype]:
        got = run(lib, op, lanes, z, out_dtype=want.dtype)
        check(got, want, [z], f"{op} {dtype} lanes={lanes}", ANGLE_ULP if op == "angle" else 0)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary(lib, op, dtype):
    a, b = inputs(2, dtype)
    want = numpy_ref(BINARY[op], a, b)
    for lanes in LANES[dtype]:
        got = run(lib, op, lanes, a, b, out_dtype=want.dtype)
        check(got, want, [a, b], f"{op} {dtype} lanes={lanes}")


def test_multiply_is_numpys_fused_loop(libs):
    """NumPy's SIMD multiply rounds each part once (an FMA); the naive formula differs."""
    a = np.array([1 + 1e-8j, 3 + 1j / 3], dtype=np.complex128)
    b = np.array([1 - 1e-8j, 1 / 3 + 3j], dtype=np.complex128)
    naive = a.real * b.real - a.imag * b.imag
    want = np.multiply(a, b)
    assert (want.real != naive).any(), "NumPy's multiply is not fused on this machine"
    for lib in libs.values():
        assert (run(lib, "multiply", 0, a, b) == want).all()


def test_power_small_integer_exponents_round_twice(libs):
    """np.power(z, 2) is npymath's naive product, not np.square (fused)."""
    z = np.array([0.36159505490948474 - 0.3895534736381311j])
    two = np.full(1, 2 + 0j)
    assert np.power(z, two)[0] != np.square(z)[0]
    for lib in libs.values():
        assert run(lib, "power", 0, z, two)[0] == np.power(z, two)[0]
        assert run(lib, "square", 0, z)[0] == np.square(z)[0]


@pytest.mark.parametrize("dtype", CDTYPES)
def test_real_operands_promote(libs, dtype):
    """complex op real in NumPy is complex op (real + 0j): (inf+1j) * 2.0 is inf+nanj, not
    inf+2j, so the renderer casts the real operand and calls the complex function."""
    a, b = inputs(2, dtype)
    x = b.real.copy()
    assert np.isnan(numpy_ref(np.multiply, make(np.inf, 1.0, dtype), np.array([2.0])).imag).all()
    for lib in libs.values():
        for op in ("add", "subtract", "multiply", "divide", "power", "maximum", "less"):
            want = numpy_ref(BINARY[op], a, x)
            assert want.dtype.kind in "cb"
            xc = run(lib, "from_real", 0, x, dtype=dtype)
            check(run(lib, op, 8, a, xc, out_dtype=want.dtype), want, [a, x], f"{op} {dtype} real")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_prod_orders(lib, dtype):
    """np.prod along a row folds with NumPy's naive scalar multiply (mul_naive), along an
    outer axis with its fused SIMD multiply (operator*)."""
    rng = np.random.default_rng(5)
    z = make(rng.normal(size=(40, 37)), rng.normal(size=(40, 37)), dtype)
    for lanes in LANES[dtype]:
        for axis, op in ((1, "mul_naive"), (0, "multiply")):
            m = np.moveaxis(z, axis, 0)
            acc = np.ascontiguousarray(m[0])
            for k in range(1, len(m)):
                acc = run(lib, op, lanes, acc, np.ascontiguousarray(m[k]))
            check(acc, np.prod(z, axis=axis), [], f"prod axis={axis} {dtype} lanes={lanes}")
    a, b = inputs(2, dtype)
    with np.errstate(all="ignore"):
        want = make(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real, dtype)
    for lanes in LANES[dtype]:
        check(run(lib, "mul_naive", lanes, a, b), want, [a, b], f"mul_naive {dtype} lanes={lanes}")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_branch_cuts(libs, dtype):
    """Both sides of each cut (signed zero in the other component) as NumPy's."""
    rt = np.finfo(dtype).dtype
    xs = np.array([-3.0, -1.5, 1.5, 3.0, -0.5, 0.5], dtype=rt)
    z = np.concatenate([make(xs, np.zeros_like(xs), dtype), make(xs, -np.zeros_like(xs), dtype),
                        make(np.zeros_like(xs), xs, dtype), make(-np.zeros_like(xs), xs, dtype)])
    for lib in libs.values():
        for op in ("log", "sqrt", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
                   "arctanh", "log10", "log2", "log1p"):
            want = numpy_ref(UNARY[op], z)
            for lanes in (0, 8):
                check(run(lib, op, lanes, z), want, [z], f"{op} {dtype} lanes={lanes}")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_strided_loads(libs, dtype):
    """Vector loops reading a[i * 3] (load_strided) and a[0] (stride 0: a broadcast)."""
    a, b = (x[:3001] for x in inputs(2, dtype))
    z = inputs(1, dtype)[:2001]
    for lib in libs.values():
        for lanes in LANES[dtype][1:]:
            for op in ("add", "multiply", "less", "power"):
                want = numpy_ref(BINARY[op], a, b)
                check(run(lib, op, lanes, a, b, out_dtype=want.dtype, stride=3), want, [a, b],
                      f"{op} {dtype} lanes={lanes} stride=3")
                a0, b0 = a[100:101], b[200:201]
                want = np.repeat(numpy_ref(BINARY[op], a0, b0), 37)
                got = np.zeros(37, dtype=want.dtype)
                assert lib.ccg_cx(op.encode(), dtype.encode(), lanes, a0.ctypes.data,
                                  b0.ctypes.data, got.ctypes.data, 37, 0) == 0
                check(got, want, [np.repeat(a0, 37), np.repeat(b0, 37)],
                      f"{op} {dtype} lanes={lanes} stride=0")
            for op in ("absolute", "exp", "conjugate"):
                want = numpy_ref(UNARY[op], z)
                check(run(lib, op, lanes, z, out_dtype=want.dtype, stride=2), want, [z],
                      f"{op} {dtype} lanes={lanes} stride=2")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_casts(lib, dtype):
    z = inputs(1, dtype)
    other = "complex128" if dtype == "complex64" else "complex64"
    rt = np.finfo(dtype).dtype
    ort = np.finfo(other).dtype
    x = np.concatenate([z.real, z.imag])
    xo = numpy_ref(np.concatenate([z.real, z.imag]).astype, ort)
    m = np.random.default_rng(3).integers(0, 2, 777).astype(bool)
    for lanes in LANES[dtype]:
        check(run(lib, "astype_other", lanes, z, out_dtype=other), numpy_ref(z.astype, other),
              [z], f"astype({other}) lanes={lanes}")
        check(run(lib, "from_real", lanes, x, dtype=dtype), x.astype(dtype), [x],
              f"{rt} -> {dtype} lanes={lanes}")
        check(run(lib, "from_other_real", lanes, xo, dtype=dtype), numpy_ref(xo.astype, dtype),
              [xo], f"{ort} -> {dtype} lanes={lanes}")
        if lanes:
            check(run(lib, "from_mask", lanes, m, dtype=dtype), m.astype(dtype), [m],
                  f"bool -> {dtype} lanes={lanes}")
        else:
            for it in ("int64", "int32"):
                check(run(lib, f"astype_{it}", 0, z, out_dtype=it), numpy_ref(z.astype, it),
                      [z], f"astype({it})")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_reduce_add(lib, dtype):
    z = np.random.default_rng(4).normal(size=(256, 2)) @ np.array([1, 1j])
    z = np.ascontiguousarray(z.astype(dtype))
    for lanes in LANES[dtype][1:]:
        want = z.reshape(-1, lanes)
        while want.shape[1] > 1:          # vec.h's tree: halves added pairwise
            h = want.shape[1] // 2
            want = want[:, :h] + want[:, h:]
        got = run(lib, "reduce_add", lanes, z)[:len(z) // lanes]
        check(got, want.ravel(), [], f"reduce_add {dtype} lanes={lanes}")


def test_layout_and_cffi_buffer():
    """A complex128 array's buffer is 2n interleaved doubles, as the header's Complex<T>;
    cffi's from_buffer takes it as double[] (the recommended kernel signature)."""
    cffi = pytest.importorskip("cffi")
    z = np.array([1 + 2j, -3.5 - 0j, np.nan + 1j], dtype=np.complex128)
    ffi = cffi.FFI()
    buf = ffi.from_buffer("double[]", z)
    assert len(buf) == 2 * len(z)
    assert [buf[i] for i in range(4)] == [1.0, 2.0, -3.5, -0.0]
    z64 = z.astype(np.complex64)
    assert len(ffi.from_buffer("float[]", z64)) == 2 * len(z64)
    assert np.dtype(np.complex128).itemsize == 16 and np.dtype(np.complex64).itemsize == 8
