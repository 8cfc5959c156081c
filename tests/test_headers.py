"""Tests for the C++ runtime headers include/cppcodegen/{vec,scalar}.h.

tests/cpp/test_headers.cpp is compiled into a shared library once per ISA
mode (AVX-512, AVX2, portable -DCCG_NO_SIMD) and driven through ctypes; every
function is compared against NumPy on edge inputs (NaN, +-inf, +-0, integer
extremes, partial tails).  Integers must match exactly, floats within 1 ULP
(basic ops, most exact) or 4 ULP (transcendentals).  The libraries are built
with -O1 to keep the test fast (set CCG_TEST_OPT=-O3 to test the production
optimisation level) and cached by source hash in the temp dir.
"""

import ctypes
import hashlib
import itertools
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "include"
SRC = ROOT / "tests" / "cpp" / "test_headers.cpp"
HEADERS = [INCLUDE / "cppcodegen" / "vec.h", INCLUDE / "cppcodegen" / "scalar.h"]

MODES = {
    "avx512": ["-march=native"],
    "avx2": ["-march=haswell"],
    "scalar": ["-DCCG_NO_SIMD", "-march=x86-64"],
}
LANES = {"avx512": (4, 8, 16), "avx2": (4, 8, 16), "scalar": (4, 8, 16)}


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
    "avx2": {"avx2", "fma", "bmi2"} <= CPU,
    "scalar": True,
}


def _build_all():
    opt = os.environ.get("CCG_TEST_OPT", "-O1")
    digest = hashlib.sha256(opt.encode())
    for p in [SRC, *HEADERS]:
        digest.update(p.read_bytes())
    cache = Path(tempfile.gettempdir()) / f"ccg_test_headers_{digest.hexdigest()[:16]}"
    cache.mkdir(exist_ok=True)
    procs = {}
    for mode, flags in MODES.items():
        out = cache / f"{mode}.so"
        if out.exists() or not AVAILABLE[mode]:
            continue
        tmp = cache / f"{mode}.{os.getpid()}.so"
        cmd = ["g++", opt, *flags, "-fopenmp", "-fPIC", "-shared", "-fwrapv",
               "-std=c++17", "-Wall", "-Wno-psabi", f"-I{INCLUDE}", str(SRC),
               "-o", str(tmp), "-lmvec"]
        procs[mode] = (subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True), tmp, out)
    for mode, (proc, tmp, out) in procs.items():
        _, err = proc.communicate()
        assert proc.returncode == 0, f"{mode} build failed:\n{err}"
        os.replace(tmp, out)
    libs = {}
    for mode in MODES:
        if AVAILABLE[mode]:
            lib = ctypes.CDLL(str(cache / f"{mode}.so"))
            lib.ccg_vec.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_int64, ctypes.c_int64]
            lib.ccg_scalar.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
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


# ------------------------------------------------------------------ calling

def _ptr(a):
    return a.ctypes.data if a is not None else None


def vec(lib, op, N, a, b=None, out_dtype=None, n=None, param=0, out_len=None):
    a = np.ascontiguousarray(a)
    if b is not None:
        b = np.ascontiguousarray(b, dtype=a.dtype)
    n = len(a) if n is None else n
    out = np.zeros(out_len if out_len is not None else n, dtype=out_dtype or a.dtype)
    rc = lib.ccg_vec(op.encode(), str(a.dtype).encode(), N, _ptr(a), _ptr(b), _ptr(out), n, param)
    assert rc == 0, f"unknown op {op} for {a.dtype}"
    return out


def scalar(lib, op, a, b=None, out_dtype=None):
    a = np.ascontiguousarray(a)
    if b is not None:
        b = np.ascontiguousarray(b, dtype=a.dtype)
    out = np.zeros(len(a), dtype=out_dtype or a.dtype)
    rc = lib.ccg_scalar(op.encode(), str(a.dtype).encode(), _ptr(a), _ptr(b), _ptr(out), len(a))
    assert rc == 0, f"unknown scalar op {op} for {a.dtype}"
    return out


# ------------------------------------------------------------------ checking

def ulp_diff(x, y):
    """ULP distance between float arrays (same dtype), NaN==NaN gives 0."""
    it = np.int32 if x.dtype == np.float32 else np.int64
    xi, yi = x.view(it).astype(np.int64), y.view(it).astype(np.int64)
    lo = np.iinfo(it).min
    xi = np.where(xi < 0, lo - xi, xi)
    yi = np.where(yi < 0, lo - yi, yi)
    d = np.abs(xi - yi).astype(np.float64)
    both_nan = np.isnan(x) & np.isnan(y)
    return np.where(both_nan, 0, d)


def assert_close(got, want, ulps, inputs=(), what=""):
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind != "f":
        bad = got != want
    else:
        bad = ulp_diff(got, want) > ulps
        bad |= np.isnan(got) != np.isnan(want)
        bad |= np.isinf(got) != np.isinf(want)
        zero = want == 0
        bad |= zero & (np.signbit(got) != np.signbit(want))
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        rows = [f"  in={[x[i] for x in inputs]} got={got[i]!r} want={want[i]!r}" for i in idx]
        pytest.fail(f"{what}: {bad.sum()} mismatches (tol {ulps} ulp)\n" + "\n".join(rows))


FLOATS = ["float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def float_edges(dt):
    fi = np.finfo(dt)
    vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5,
            2.5, -2.5, 3.0, -7.0, 100.0, 1e-3, -1e-3, 0.99, -0.99, 1.01, 2.0, 10.0,
            88.5, -88.5, 89.0, -104.0, 700.0, 710.0, -745.0, 1e10, -1e10, 1e30, -1e30,
            fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal,
            -fi.smallest_subnormal, np.pi, -np.pi / 2, 1e-20, 4.5e15, 2.0**31, -2.0**31,
            2.0**63, -2.0**63, 2.0**31 - 1, 3e9]
    return np.array(vals, dtype=np.float64).astype(dt)


def float_inputs(dt, seed=0):
    rng = np.random.default_rng(seed)
    rand = np.concatenate([rng.standard_normal(300), rng.standard_normal(200) * 50,
                           rng.uniform(-1, 1, 200), np.exp(rng.uniform(-40, 40, 200))])
    return np.concatenate([float_edges(dt), rand.astype(dt)])


def float_pairs(dt, seed=1):
    e = float_edges(dt)
    a, b = (np.array(t, dtype=dt) for t in zip(*itertools.product(e, e)))
    r = float_inputs(dt, seed)
    rng = np.random.default_rng(seed)
    return np.concatenate([a, r]), np.concatenate([b, rng.permutation(r)])


def int_inputs(dt, seed=0):
    info = np.iinfo(dt)
    wrap = 1 << info.bits     # -1 is the unsigned maximum, 100 wraps in int8 ... as astype
    edges = [(v - info.min) % wrap + info.min
             for v in (info.min, info.min + 1, info.max, -1, 0, 1, 2, -2, 7, -7, 3, 100, -100)]
    edges = np.array(edges, dtype=dt)
    rng = np.random.default_rng(seed)
    rand = rng.integers(max(info.min, -1000), min(info.max, 1000), 200, dtype=dt)
    big = rng.integers(info.min, info.max, 100, dtype=dt)
    return np.concatenate([edges, rand, big])


def int_pairs(dt, seed=1):
    e = int_inputs(dt, seed)[:13]
    a, b = (np.array(t, dtype=dt) for t in zip(*itertools.product(e, e)))
    r = int_inputs(dt, seed)
    rng = np.random.default_rng(seed)
    return np.concatenate([a, r]), np.concatenate([b, rng.permutation(r)])


@pytest.fixture(autouse=True)
def _quiet():
    with np.errstate(all="ignore"):
        yield


# ------------------------------------------------------------------ Vec tests

FLOAT_UNARY = {
    "neg": (np.negative, 0), "abs": (np.abs, 0), "square": (np.square, 0),
    "sign": (np.sign, 0), "sqrt": (np.sqrt, 0), "floor": (np.floor, 0),
    "ceil": (np.ceil, 0), "trunc": (np.trunc, 0), "rint": (np.rint, 0),
}
TRANSCENDENTAL = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                  "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                  "arccosh", "arctanh"]
FLOAT_BINARY = {
    "add": (np.add, 0), "sub": (np.subtract, 0), "mul": (np.multiply, 0),
    "div": (np.true_divide, 0), "maximum": (np.maximum, 0), "minimum": (np.minimum, 0),
    "fmax": (np.fmax, 0), "fmin": (np.fmin, 0), "copysign": (np.copysign, 0),
    "floordiv": (np.floor_divide, 0), "mod": (np.remainder, 0),
    "arctan2": (np.arctan2, 4), "hypot": (np.hypot, 4), "power": (np.power, 4),
    "select_lt": (lambda a, b: np.where(a < b, a, b), 0),
}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("N", [4, 8, 16])
def test_float_unary(lib, dt, N):
    x = float_inputs(dt)
    for op, (f, tol) in FLOAT_UNARY.items():
        assert_close(vec(lib, op, N, x), f(x), tol, (x,), f"{op} {dt} N={N}")
    for op in TRANSCENDENTAL:
        assert_close(vec(lib, op, N, x), getattr(np, op)(x), 4, (x,), f"{op} {dt} N={N}")


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("N", [4, 8, 16])
def test_float_binary(lib, dt, N):
    a, b = float_pairs(dt)
    for op, (f, tol) in FLOAT_BINARY.items():
        assert_close(vec(lib, op, N, a, b), f(a, b), tol, (a, b), f"{op} {dt} N={N}")
    for op, f in COMPARE.items():
        assert_close(vec(lib, op, N, a, b, out_dtype=bool), f(a, b), 0, (a, b), f"{op} {dt}")


@pytest.mark.parametrize("dt", FLOATS + INTS)
@pytest.mark.parametrize("N", [4, 8, 16])
def test_predicates_and_masks(lib, dt, N):
    x = float_inputs(dt) if dt in FLOATS else int_inputs(dt)
    preds = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
             "signbit": np.signbit, "to_mask": lambda v: v != 0}
    for op, f in preds.items():
        assert_close(vec(lib, op, N, x, out_dtype=bool), f(x), 0, (x,), f"{op} {dt}")
    assert_close(vec(lib, "from_mask", N, x), (x > 0).astype(dt), 0, (x,), "from_mask")
    lanes = np.arange(len(x)) % N
    want = (x + (3 + lanes).astype(dt)).astype(dt)
    assert_close(vec(lib, "iota", N, x), want, 0, (x,), "iota")


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("N", [4, 8, 16])
def test_int_ops(lib, dt, N):
    a, b = int_pairs(dt)
    binary = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
              "maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax,
              "fmin": np.fmin, "floordiv": np.floor_divide, "mod": np.remainder,
              "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
              "bitwise_xor": np.bitwise_xor,
              "select_lt": lambda a, b: np.where(a < b, a, b)}
    for op, f in binary.items():
        assert_close(vec(lib, op, N, a, b), f(a, b), 0, (a, b), f"{op} {dt} N={N}")
    for op, f in COMPARE.items():
        assert_close(vec(lib, op, N, a, b, out_dtype=bool), f(a, b), 0, (a, b), f"{op} {dt}")
    unary = {"neg": np.negative, "abs": np.abs, "invert": np.invert, "sign": np.sign,
             "square": np.square}
    for op, f in unary.items():
        assert_close(vec(lib, op, N, a), f(a), 0, (a,), f"{op} {dt} N={N}")
    # shifts: NumPy's results for counts past the width and (signed) negative counts
    counts = np.arange(-3 if "u" not in dt else 0, 70)
    vals = np.array([1, 5, np.iinfo(dt).max] + ([-1, -8, np.iinfo(dt).min] if "u" not in dt
                                                  else []), dtype=dt)
    x, s = (np.array(t, dtype=dt) for t in zip(*itertools.product(vals, counts.astype(dt))))
    for op, f in {"left_shift": np.left_shift, "right_shift": np.right_shift}.items():
        assert_close(vec(lib, op, N, x, s), f(x, s), 0, (x, s), f"{op} {dt} N={N}")


@pytest.mark.parametrize("src", FLOATS + INTS)
@pytest.mark.parametrize("N", [4, 8, 16])
def test_convert(lib, src, N):
    x = float_inputs(src) if src in FLOATS else int_inputs(src)
    for dst in FLOATS + INTS:
        if src in FLOATS and dst in ("uint32", "uint64"):   # only what NumPy defines
            lo, hi = (-2.0**31, 2.0**32) if dst == "uint32" else (-2.0**63, 2.0**64)
            x = float_inputs(src)
            x = x[np.isfinite(x) & (x > lo) & (x < hi)]
        got = vec(lib, f"cvt_{dst}", N, x, out_dtype=dst)
        assert_close(got, x.astype(dst), 0, (x,), f"convert {src}->{dst} N={N}")


@pytest.mark.parametrize("dt", FLOATS + INTS)
@pytest.mark.parametrize("N", [4, 8, 16])
def test_reductions(lib, dt, N):
    rng = np.random.default_rng(5)
    if dt in FLOATS:
        x = rng.standard_normal(N * 40).astype(dt)
        x[N * 3 + 1] = np.nan
        x[N * 5] = np.nan
        x[N * 6 + N - 1] = np.inf
        x[N * 7:N * 8] = np.nan
        x[N * 9 + 2] = -np.inf
    else:
        x = rng.integers(-50, 50, N * 40).astype(dt)
        x[N * 2] = np.iinfo(dt).min
        x[N * 3] = np.iinfo(dt).max
    chunks = x.reshape(-1, N)
    m = len(chunks)
    for op, f in {"reduce_max": np.max, "reduce_min": np.min,
                  "reduce_fmax": np.fmax.reduce, "reduce_fmin": np.fmin.reduce}.items():
        got = vec(lib, op, N, x, out_len=m)
        want = f(chunks, axis=1)
        ok = (got == want) | (np.isnan(got) & np.isnan(want)) if dt in FLOATS else got == want
        assert ok.all(), f"{op} {dt} N={N}: {got[~ok]} vs {want[~ok]}"
    small = (rng.standard_normal(N * 40) * 0.5 + 1).astype(dt) if dt in FLOATS else \
        rng.integers(-3, 4, N * 40).astype(dt)
    for op, f in {"reduce_add": np.sum, "reduce_mul": np.prod}.items():
        got = vec(lib, op, N, small, out_len=m)
        want = f(small.reshape(-1, N), axis=1).astype(dt)
        if dt in FLOATS:
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"{op} {dt} N={N}")
        else:
            assert (got == want).all(), f"{op} {dt} N={N}"


@pytest.mark.parametrize("dt", FLOATS + INTS)
@pytest.mark.parametrize("N", [4, 8, 16])
def test_partial_and_strided(lib, dt, N):
    src = (np.arange(1, 8 * N + 1) * 3).astype(dt)
    for n in range(N + 1):
        out = np.full(N + 4, 77, dtype=dt)
        a = np.ascontiguousarray(src[:n]) if n else np.zeros(1, dt)
        assert lib.ccg_vec(b"copy_partial", dt.encode(), N, _ptr(a), None, _ptr(out), n, 0) == 0
        want = np.concatenate([src[:n], np.full(N + 4 - n, 77, dtype=dt)])
        assert (out == want).all(), f"copy_partial n={n}: {out}"
        out = np.full(N, 77, dtype=dt)
        assert lib.ccg_vec(b"load_partial_full", dt.encode(), N, _ptr(a), None, _ptr(out), n,
                           0) == 0
        want = np.concatenate([src[:n], np.zeros(N - n, dtype=dt)])
        assert (out == want).all(), f"load_partial n={n}: {out}"
    mid = 4 * N
    for stride in (0, 1, 2, 3, -1, -2):
        for n in (N, N - 1, 1, 0):
            out = np.full(N + 2, 77, dtype=dt)
            base = src.ctypes.data + mid * src.itemsize
            assert lib.ccg_vec(b"strided", dt.encode(), N, base, None, _ptr(out), n,
                               stride) == 0
            want = src[mid + np.arange(n) * stride]
            assert (out[:n] == want).all(), f"strided s={stride} n={n}: {out}"
            assert (out[n:] == 77).all(), f"strided wrote past n={n}"


@pytest.mark.parametrize("N", [4, 8, 16])
def test_mask_load_store(lib, N):
    rng = np.random.default_rng(N)
    patterns = [np.zeros(3 * N, bool), np.ones(3 * N, bool)] + \
        [rng.random(3 * N) < p for p in (0.2, 0.5, 0.8)]
    for bits in patterns:
        for stride in (1, 2, -1):
            for n in sorted({N, N - 1, 1, 0, N // 2}):
                buf = np.full(64 + 8 * 25, 0x55, dtype=np.uint8)
                base = bits.ctypes.data + (N if stride < 0 else 0)
                assert lib.ccg_vec(b"mask_roundtrip", b"float32", N, base, None,
                                   buf.ctypes.data, n, stride) == 0
                start = N if stride < 0 else 0
                lanes = bits[start + np.arange(n) * stride]
                full = np.zeros(N, bool)
                full[:n] = lanes
                out = buf[:64]
                assert (out[:n] == lanes).all() and (out[n:64] == 0x55).all()
                st = buf[64:64 + 8 * (9 + N)].view(np.int64)
                cnt = int(full.sum())
                want = [cnt > 0, cnt == N, cnt, N - cnt, 1, 1, 0, 0, 1, *full.astype(int)]
                assert list(st) == want, f"mask stats N={N} n={n} s={stride}: {st} {want}"


# ------------------------------------------------------------------ scalar.h

SINTS = ["int8", "int16", "int32", "int64"]
UINTS = ["uint8", "uint16", "uint32", "uint64"]


def scalar_int_pairs(dt):
    info = np.iinfo(dt)
    e = sorted({int(v) for v in [info.min, info.min + 1, info.max, 0, 1, 2, 7, 100,
                                 info.max // 3] + ([-1, -2, -7, -100] if info.min else [])})
    e = np.array(e, dtype=dt)
    a, b = (np.array(t, dtype=dt) for t in zip(*itertools.product(e, e)))
    return a, b


@pytest.mark.parametrize("dt", SINTS + UINTS)
def test_scalar_int(lib, dt):
    a, b = scalar_int_pairs(dt)
    for op, f in {"floordiv": np.floor_divide, "mod": np.remainder, "maximum": np.maximum,
                  "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin}.items():
        assert_close(scalar(lib, op, a, b), f(a, b), 0, (a, b), f"scalar {op} {dt}")
    for op, f in {"sign": np.sign, "abs": np.abs, "square": np.square}.items():
        assert_close(scalar(lib, op, a), f(a), 0, (a,), f"scalar {op} {dt}")
    for op, f in {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
                  "signbit": np.signbit}.items():
        assert_close(scalar(lib, op, a, out_dtype=bool), f(a), 0, (a,), f"scalar {op} {dt}")
    # power: non-negative exponents only (NumPy raises for negative ones)
    e = np.arange(0, 70, dtype=dt) if np.iinfo(dt).max >= 70 else np.arange(0, 70).astype(dt)
    base = np.resize(np.array([0, 1, 2, 3, 7, -1, -2, -3] if "u" not in dt else
                              [0, 1, 2, 3, 7, 255], dtype=np.int64).astype(dt), len(e))
    assert_close(scalar(lib, "power", base, e), np.power(base, e), 0, (base, e), "power")
    # shifts, counts beyond the width and (signed) negative counts
    counts = np.arange(-3 if "u" not in dt else 0, 70)
    vals = np.array([1, 5, np.iinfo(dt).max] + ([-1, -8, np.iinfo(dt).min] if "u" not in dt else []),
                    dtype=dt)
    x, s = (np.array(t, dtype=dt) for t in zip(*itertools.product(vals, counts.astype(dt))))
    for op, f in {"left_shift": np.left_shift, "right_shift": np.right_shift}.items():
        assert_close(scalar(lib, op, x, s), f(x, s), 0, (x, s), f"scalar {op} {dt}")
    # integer casts wrap
    for dst in SINTS + UINTS + FLOATS:
        assert_close(scalar(lib, f"cast_{dst}", a, out_dtype=dst), a.astype(dst), 0, (a,),
                     f"cast {dt}->{dst}")
    assert_close(scalar(lib, "cast_bool", a, out_dtype=bool), a.astype(bool), 0, (a,), "bool")


@pytest.mark.parametrize("dt", FLOATS)
def test_scalar_float(lib, dt):
    a, b = float_pairs(dt)
    for op, f in {"floordiv": np.floor_divide, "mod": np.remainder, "maximum": np.maximum,
                  "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin}.items():
        assert_close(scalar(lib, op, a, b), f(a, b), 0, (a, b), f"scalar {op} {dt}")
    assert_close(scalar(lib, "power", a, b), np.power(a, b), 1, (a, b), "scalar power")
    x = float_inputs(dt)
    for op, f in {"sign": np.sign, "abs": np.abs, "rint": np.rint, "square": np.square}.items():
        assert_close(scalar(lib, op, x), f(x), 0, (x,), f"scalar {op} {dt}")
    for op, f in {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
                  "signbit": np.signbit}.items():
        assert_close(scalar(lib, op, x, out_dtype=bool), f(x), 0, (x,), f"scalar {op} {dt}")
    # float -> signed / narrow ints: NaN, inf and out of range like x86 cvtt
    for dst in SINTS + ["uint8", "uint16"] + FLOATS:
        assert_close(scalar(lib, f"cast_{dst}", x, out_dtype=dst), x.astype(dst), 0, (x,),
                     f"cast {dt}->{dst}")
    assert_close(scalar(lib, "cast_bool", x, out_dtype=bool), x.astype(bool), 0, (x,), "bool")
    # float -> uint32/uint64: only values NumPy defines consistently
    fin = x[np.isfinite(x)]
    for dst, lo, hi in (("uint32", -2.0**31, 2.0**32), ("uint64", -2.0**63, 2.0**64)):
        y = fin[(fin > lo) & (fin < hi)]
        assert_close(scalar(lib, f"cast_{dst}", y, out_dtype=dst), y.astype(dst), 0, (y,),
                     f"cast {dt}->{dst}")
