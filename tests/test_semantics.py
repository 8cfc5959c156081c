"""NumPy semantics the compiler must reproduce exactly: dtype promotion, NEP 50
weak Python scalars, integer wrap-around, floor-division/modulo signs, int/int
true division, NaN handling of maximum/minimum/max/min vs fmax/fmin, runtime
float scalars vs compile-time int/bool/None/str constants, errors for
data-dependent control flow and unsupported functions, input immutability,
result structure, decorator metadata.  Compilations in this module: ~30.
"""
import inspect

import numpy as np
import pytest

import cppcodegen
from helpers import (ARITH, EXACT, Batch, assert_compiled_raises, assert_matches_numpy,
                     check_against_numpy, compiled_version, is_cppcodegen_error, rng,
                     run_compiled, run_isolated)

# --------------------------------------------------------------------------
# dtype promotion and NEP 50 (one compiled function, one test per rule)
# --------------------------------------------------------------------------
PROMO_PARAMS = ["i8", "i16", "u8", "i32", "i64", "f32", "f64", "b", "z_i64", "z_f64", "z_i8"]


def _promo_args():
    r = rng(300)
    return (r.integers(-100, 100, 9).astype(np.int8), r.integers(-3000, 3000, 9).astype(np.int16),
            r.integers(0, 255, 9).astype(np.uint8),
            r.integers(-2**31, 2**31 - 1, 9, endpoint=True).astype(np.int32),
            r.integers(-2**40, 2**40, 9).astype(np.int64), r.uniform(-9, 9, 9).astype(np.float32),
            r.uniform(-9, 9, 9), r.random(9) < 0.5,
            np.array(3, np.int64), np.array(0.1, np.float64), np.array(-2, np.int8))


PROMOTION = {
    # array op array
    "i8+i16->int16": "i8 + i16", "u8+i8->int16": "u8 + i8", "i32+f32->float64": "i32 + f32",
    "i64+f32->float64": "i64 + f32", "i16+f32->float32": "i16 + f32", "f32+f64->float64": "f32 + f64",
    "b+i8->int8": "b + i8", "u8*f32->float32": "u8 * f32", "u8+i32->int32": "u8 + i32",
    "b+b->bool(or)": "b + b", "b*b->bool(and)": "b * b",
    # int/int true division is float64
    "i32/i32->float64": "i32 / i32[::-1]", "i8/i8->float64": "i8 / (i8 | 1)",
    "u8/u8->float64": "u8 / (u8 | 1)", "i64/i64->float64": "i64 / (i64 | 1)",
    "b/b->float64": "(b | True) / (b | True)", "i32/2": "i32 / 2", "neg7/2": "(i8 * 0 - 7) / 2",
    # NEP 50: Python scalars are weak
    "i8+1->int8": "i8 + 1", "i8*3->int8(wraps)": "i8 * 3", "u8-1->uint8(wraps)": "u8 - 1",
    "f32*2.5->float32": "f32 * 2.5", "f32+1->float32": "f32 + 1", "i32+2.5->float64": "i32 + 2.5",
    "i8*1.5->float64": "i8 * 1.5", "b+1->int64": "b + 1", "b+True->bool": "b + True",
    "b*1.5->float64": "b * 1.5", "f32**2->float32": "f32 ** 2", "i8**2->int8": "i8 ** 2",
    "i32//2.0->float64": "i32 // 2.0", "2-u8->uint8": "2 - u8", "1.5/f32->float32": "1.5 / f32",
    "f32>0.1": "f32 > 0.1", "i8<1000": "i8 < 1000", "u8>-1": "u8 > -1",
    "f32*True": "f32 * True", "i16*0.5": "i16 * 0.5",
    # NumPy scalars and 0-d arrays are NOT weak
    "i8+np.int64(1)->int64": "i8 + np.int64(1)", "f32*np.float64(2.5)->float64": "f32 * np.float64(2.5)",
    "f32+np.float32(0.1)->float32": "f32 + np.float32(0.1)",
    "i8+0d_i64->int64": "i8 + z_i64", "f32+0d_f64->float64": "f32 + z_f64",
    "i16*0d_i8->int16": "i16 * z_i8", "0d_i64*0d_f64": "z_i64 * z_f64",
    # ufunc forms and mixed-kind functions
    "np.add(i8,u8)": "np.add(i8, u8)", "np.maximum(i8,f32)": "np.maximum(i8, f32)",
    "np.where(b,i8,u8)": "np.where(b, i8, u8)", "np.where(b,f32,0.0)": "np.where(b, f32, 0.0)",
    "np.where(b,i8,1)": "np.where(b, i8, 1)", "np.clip(i8,-1.5,2.5)": "np.clip(i8, -1.5, 2.5)",
    "np.sqrt(i16)->float32": "np.sqrt(np.abs(i16))", "np.sqrt(i32)->float64": "np.sqrt(np.abs(i64))",
    "np.exp(b.astype(f32))": "np.exp(b.astype(np.float32))",
    "astype_then_weak": "i64.astype(np.float32) * 0.5",
    "i32.sum()->int64": "i32.sum()", "i8.sum()->int64": "i8.sum()", "u8.sum()->uint64": "u8.sum()",
    "b.sum()->int64": "b.sum()", "f32.mean()->float32": "f32.mean()", "i8.mean()->float64": "i8.mean()",
    "i32.max()->int32": "i32.max()", "i8.prod()->int64": "(i8 % 3).prod()",
}
# split in a few compiled functions (by the comment blocks above) to limit the
# blast radius of one unsupported rule
_PROMO_SPLIT = ["i8+i16->int16", "i32/i32->float64", "i8+1->int8", "f32*True",
                "i8+np.int64(1)->int64", "np.add(i8,u8)"]
_names = list(PROMOTION)
_cuts = [_names.index(k) for k in _PROMO_SPLIT] + [len(_names)]
PROMO_BATCHES = [Batch(f"semantics-promotion-{i}", PROMO_PARAMS,
                       {k: PROMOTION[k] for k in _names[a:b]}, _promo_args)
                 for i, (a, b) in enumerate(zip(_cuts, _cuts[1:]))]


@pytest.mark.parametrize("batch,rule", [b.param(k) for b in PROMO_BATCHES for k in b.exprs])
def test_promotion(batch, rule):
    batch.check(rule, ulp=2 if "mean" in rule else 1)


def int8_plus_1000(x):
    return x + 1000


def test_weak_int_out_of_range_raises_like_numpy():
    x = np.arange(5, dtype=np.int8)
    with pytest.raises(OverflowError):
        int8_plus_1000(x)
    with pytest.raises(OverflowError):
        run_compiled(compiled_version(int8_plus_1000), x)


def add_const(x, k):
    return x + k


def test_int_constant_argument_out_of_range_raises():
    x = np.arange(5, dtype=np.int8)
    with pytest.raises(OverflowError):
        add_const(x, 300)
    with pytest.raises(OverflowError):
        run_compiled(compiled_version(add_const), x, 300)


# --------------------------------------------------------------------------
# integer wrap-around (signed overflow is UB in C++: the kernel must still wrap)
# --------------------------------------------------------------------------
WRAP = {
    "int8_100+100": "a8 + b8", "int8_sum_gt0": "(a8 + b8) > 0", "int8_mul": "a8 * c8",
    "int8_mul_floordiv3": "(a8 * c8) // 3", "int8_sum_as_int16": "(a8 + b8).astype(np.int16)",
    "uint8_avg": "(u + v) // 2", "uint8_sub": "v - u", "uint8_sub_lt": "(v - u) < 10",
    "uint8_neg": "-u", "int32_max+1": "m32 + 1", "int32_max+1_lt0": "(m32 + 1) < 0",
    "int32_mul": "m32 * 3", "int64_max+1": "m64 + 1", "int64_mul": "m64 * m64",
    "int64_min-1": "(-m64 - 1) - 1", "abs_int_min": "np.abs(n32)", "neg_int_min": "-n32",
    "abs_int8_min": "np.abs(n8)", "int16_square": "np.square(s16)", "int8_pow": "c8 ** 5",
    "int8_cumulative": "a8 + a8 + a8 + a8", "int32_shift_wrap": "m32 << 1",
    "int8_minus_min": "a8[:3] - n8", "int8_div_after_wrap": "(a8 + b8) / 2",
}
WRAP_PARAMS = ["a8", "b8", "c8", "u", "v", "m32", "m64", "n32", "n8", "s16"]


def _wrap_args():
    return (np.array([100, 127, -100, 1, 64], np.int8), np.array([100, 1, -100, -1, 64], np.int8),
            np.array([3, 2, 5, -128, 127], np.int8), np.array([200, 1, 255, 0, 128], np.uint8),
            np.array([100, 0, 1, 255, 128], np.uint8),
            np.array([2**31 - 1, 2**30, -5, 0], np.int32),
            np.array([2**63 - 1, 2**62, 3, -1], np.int64),
            np.array([-2**31, -2**31 + 1, 0], np.int32), np.array([-128, 127, -1], np.int8),
            np.array([300, -300, 182, 256, -32768], np.int16))


WRAP_BATCH = Batch("semantics-wrap", WRAP_PARAMS, WRAP, _wrap_args)


@pytest.mark.parametrize("batch,case", [WRAP_BATCH.param(k) for k in WRAP])
def test_integer_wraparound(batch, case):
    batch.check(case)


@pytest.mark.xdist_group("semantics-wrap")
def test_int8_100_plus_100_is_minus_56():
    g, e = WRAP_BATCH.get("int8_100+100")
    assert e[0] == -56  # oracle sanity
    assert np.asarray(g).dtype == np.int8 and np.asarray(g)[0] == -56


# --------------------------------------------------------------------------
# floor division / modulo signs (Python semantics), int and float
# --------------------------------------------------------------------------
DIVMOD = {
    "i_floordiv": "xi // yi", "i_mod": "xi % yi", "i_divmod": "np.divmod(xi, yi)",
    "i_divmod_builtin": "divmod(xi, yi)", "f_divmod_builtin": "divmod(xf, yf)",
    "i_floordiv_const2": "xi // 2", "i_mod_const2": "xi % 2", "i_floordiv_const_neg2": "xi // -2",
    "i_mod_const_neg2": "xi % -2", "i_floordiv_const7": "xi // 7", "i_mod_const8": "xi % 8",
    "i_truediv": "xi / yi", "i8_floordiv": "xi.astype(np.int8) // yi.astype(np.int8)",
    "i8_mod": "xi.astype(np.int8) % yi.astype(np.int8)", "u8_floordiv_const3": "(xi + 8).astype(np.uint8) // 3",
    "i64_floordiv": "xi.astype(np.int64) // yi", "i64_mod_neg": "xi.astype(np.int64) % -yi",
    "f_floordiv": "xf // yf", "f_mod": "xf % yf", "f_remainder": "np.remainder(xf, yf)",
    "f_floordiv_const": "xf // 2.0", "f_mod_const": "xf % -2.0", "f_divmod": "np.divmod(xf, yf)",
    "f_mod_inf": "xf % np.inf", "f_floordiv_inf": "xf // -np.inf", "f_one_floordiv_tenth": "1.0 // tf",
    "f_mod_tenth": "1.0 % tf", "f32_floordiv": "xf.astype(np.float32) // yf.astype(np.float32)",
    "f32_mod": "xf.astype(np.float32) % yf.astype(np.float32)",
}


def _divmod_args():
    xi = np.array([-7, 7, -7, 7, 0, -1, 1, -8, 8, 5, -5, 6, -6, 123, -123], np.int32)
    yi = np.array([2, -2, -2, 2, 3, 3, -3, 3, -3, 5, 5, -4, 4, 10, 10], np.int32)
    xf = xi.astype(np.float64) + np.array([0, 0, 0, 0, -0.0, 0.5, -0.5, 0.25, 0, 0, 0, 0, 0, 0.5, -0.5])
    xf[4] = -0.0
    yf = yi.astype(np.float64)
    tf = np.array([0.1, 0.3, 0.7, 1e-3], np.float64)
    return xi, yi, xf, yf, tf


DIVMOD_BATCH = Batch("semantics-divmod", ["xi", "yi", "xf", "yf", "tf"], DIVMOD, _divmod_args)


@pytest.mark.parametrize("batch,case", [DIVMOD_BATCH.param(k) for k in DIVMOD])
def test_floor_division_and_modulo(batch, case):
    batch.check(case, **EXACT)


@pytest.mark.xdist_group("semantics-divmod")
def test_divmod_sign_examples():
    g, _ = DIVMOD_BATCH.get("i_floordiv")
    m, _ = DIVMOD_BATCH.get("i_mod")
    g, m = np.asarray(g), np.asarray(m)
    assert (g[0], m[0]) == (-4, 1)      # -7 // 2, -7 % 2
    assert (g[1], m[1]) == (-4, -1)     # 7 // -2, 7 % -2
    assert (g[2], m[2]) == (3, -1)      # -7 // -2, -7 % -2



@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64])
def test_power_of_two_divisor_is_floor_semantics(dt):
    # x % 2**k and x // 2**k are rendered as a mask and a shift (cexpr.pow2_divisor): NumPy's
    # floor semantics for negative x, in the vector lanes (x % 8 over an array) and in scalar
    # code (the loop's carried value, which has no vector form)
    info = np.iinfo(dt)
    values = [info.min, info.min + 1, -9, -8, -7, -1, 0, 1, 7, 8, 9, info.max - 1, info.max]
    x = np.array([v for v in values + list(range(-40, 40)) if info.min <= v <= info.max], dt)

    def f(x):
        return x % 8, x // 8, np.remainder(x, 64), x // 2, x % 1

    check_against_numpy(f, x)

    def loop(x):
        out = np.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i] // 4 + x[i] % 16
        return out

    got = cppcodegen.compile(loop)(x)
    expected = loop(x)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


# Division by zero and INT_MIN // -1: NumPy returns 0 / INT_MIN (with a
# warning); a naive C++ kernel gets SIGFPE, so these run in a subprocess.
_ISOLATED = {
    "array_div_by_zero": """
        import numpy as np
        from helpers import check_against_numpy
        def f(x, y):
            return x // y, x % y, np.floor_divide(x, y), np.remainder(x, y)
        for dt in (np.int32, np.int64, np.int8, np.uint8):
            x = np.array([7, 0, 1, 100, 5, 3, 2, 9], dt)
            y = np.array([0, 0, 3, 0, 2, 0, 1, 0], dt)
            got, exp = check_against_numpy(f, x, y)
            assert int(exp[0][0]) == 0 and int(exp[1][0]) == 0
        print("ok")
    """,
    "const_div_by_zero": """
        import numpy as np
        from helpers import check_against_numpy
        def f(x):
            return x // 0, x % 0
        for dt in (np.int32, np.int64):
            check_against_numpy(f, np.array([-7, 0, 7, 2**31 - 1], dt))
        print("ok")
    """,
    "int_min_floordiv_neg1": """
        import numpy as np
        from helpers import check_against_numpy
        def f(x, y):
            return x // y, x % y, np.divmod(x, y)
        for dt in (np.int32, np.int64, np.int8, np.int16):
            mn = np.iinfo(dt).min
            x = np.array([mn, mn, mn + 1, -1, 5], dt)
            y = np.array([-1, 1, -1, -1, -1], dt)
            check_against_numpy(f, x, y)
        print("ok")
    """,
    "int_truediv_by_zero": """
        import numpy as np
        from helpers import check_against_numpy
        def f(x, y):
            return x / y, np.true_divide(x, y)
        check_against_numpy(f, np.array([1, -1, 0, 5], np.int32), np.array([0, 0, 0, 2], np.int32))
        print("ok")
    """,
}


@pytest.mark.parametrize("case", list(_ISOLATED))
def test_integer_division_edge_cases_isolated(case):
    out = run_isolated(_ISOLATED[case])
    assert "ok" in out


# --------------------------------------------------------------------------
# NaN propagation
# --------------------------------------------------------------------------
NAN = {
    "maximum_nan_first": "np.maximum(n, o)", "maximum_nan_second": "np.maximum(o, n)",
    "minimum_nan_first": "np.minimum(n, o)", "minimum_nan_second": "np.minimum(o, n)",
    "fmax_ignores_nan": "np.fmax(n, o)", "fmax_ignores_nan2": "np.fmax(o, n)",
    "fmin_ignores_nan": "np.fmin(n, o)", "fmin_both_nan": "np.fmin(n, n)",
    "max_with_nan": "n.max()", "min_with_nan": "np.min(n)", "amax_axis": "np.amax(n2, axis=1)",
    "amin_axis0": "np.amin(n2, axis=0)", "argmax_first_nan": "np.argmax(n)", "argmin_first_nan": "n.argmin()",
    "max_f32": "n.astype(np.float32).max()", "maximum_f32": "np.maximum(n.astype(np.float32), 0.0)",
    "clip_nan": "np.clip(n, -1.0, 1.0)", "where_nan_cmp": "np.where(n > 0, n, 0.0)",
    "nan_eq_nan": "n == n", "nan_ne_nan": "n != n", "nan_lt": "n < 1.0", "sum_nan": "n2.sum(axis=0)",
    "sign_nan": "np.sign(n)", "maximum_reduce_tail": "np.maximum(t, t[::-1])", "max_tail": "t.max()",
}


def _nan_args():
    n = np.array([1.0, np.nan, -2.0, np.nan, 3.0, -np.inf, np.inf, 0.0])
    o = np.array([np.nan, 5.0, -3.0, np.nan, 2.0, np.nan, 1.0, -0.0])
    n2 = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0], [np.nan, 0.0, -1.0]])
    t = np.arange(131, dtype=np.float64)
    t[130] = np.nan  # NaN only in the vector tail
    return n, o, n2, t


NAN_BATCH = Batch("semantics-nan", ["n", "o", "n2", "t"], NAN, _nan_args)


@pytest.mark.parametrize("batch,case", [NAN_BATCH.param(k) for k in NAN])
def test_nan_semantics(batch, case):
    batch.check(case, **EXACT)


# --------------------------------------------------------------------------
# runtime float scalars vs compile-time constants
# --------------------------------------------------------------------------
def affine(x, a):
    return x * a + 1.0


def test_runtime_float_scalar_changes_result_without_recompiling():
    x = rng(310).uniform(-2, 2, (5, 7))
    for a in (2.0, -3.5, 0.0, float("nan"), 1e300):
        check_against_numpy(affine, x, a, **ARITH)
    e1 = cppcodegen.explain(affine, x, 2.0)
    e2 = cppcodegen.explain(compiled_version(affine), x, -3.5)
    assert list(e1.cache_paths) == list(e2.cache_paths), (
        "a Python float argument must be a runtime scalar (same kernel for every value): "
        f"{e1.cache_paths} != {e2.cache_paths}")


def scale_f32(x, a):
    return x * a, x + a


def test_runtime_float_scalar_is_weak():
    x = rng(311).uniform(-2, 2, 11).astype(np.float32)
    got, _ = check_against_numpy(scale_f32, x, 0.1, **ARITH)
    assert np.asarray(got[0]).dtype == np.float32


def literal_vs_arg(x, a):
    return x * 0.3 - x / 0.7, x * a - x / 0.7


def test_float_literal_and_float_arg_agree():
    x = rng(312).uniform(-2, 2, 13)
    got, _ = check_against_numpy(literal_vs_arg, x, 0.3, **ARITH)
    assert_matches_numpy(got[1], got[0], **ARITH, _path="x*a vs x*0.3")


def int_const(x, k):
    return x + k, x * k, x // k, x % k


@pytest.mark.parametrize("k", [3, -2])
def test_int_constant_argument(k):
    x = np.array([-7, -1, 0, 1, 7, 100, -128, 127], np.int8)
    got, _ = check_against_numpy(int_const, x, k)
    assert np.asarray(got[0]).dtype == np.int8  # constants stay weak


def reshape_n(x, n):
    return x.reshape(n, -1) * 2.0


@pytest.mark.parametrize("n", [2, 4])
def test_int_constant_as_shape(n):
    check_against_numpy(reshape_n, np.arange(8.0), n, **EXACT)


def sum_axis(x, axis, keep):
    return x.sum(axis=axis, keepdims=keep)


@pytest.mark.parametrize("axis,keep", [(0, False), (1, True), (None, False), (-1, False)])
def test_constant_axis_none_and_bool(axis, keep):
    check_against_numpy(sum_axis, np.arange(12, dtype=np.int32).reshape(3, 4), axis, keep)


def by_mode(x, mode):
    if mode == "sqrt":  # Python control flow on a compile-time constant is fine
        return np.sqrt(x)
    return -x


@pytest.mark.parametrize("mode", ["sqrt", "neg"])
def test_str_constant_argument(mode):
    check_against_numpy(by_mode, np.array([1.0, 4.0, 9.0]), mode, **EXACT)


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------
def data_dependent_if(x):
    if x.sum() > 0:
        return x * 2
    return x


def test_data_dependent_control_flow_compiles():
    # an if on an array value is a branch in the compiled code (issue 15): one compiled
    # function takes either way
    f = cppcodegen.compile(data_dependent_if)
    for x in (np.arange(5.0), -np.arange(5.0)):
        np.testing.assert_array_equal(f(x.copy()), data_dependent_if(x.copy()))


def uses_eigvals(x):
    y = x * 2
    return np.linalg.eigvals(y)  # unsupported (a real or a complex result, as values say)


def test_unsupported_function_raises_with_location():
    lines, start = inspect.getsourcelines(uses_eigvals)
    line = start + next(i for i, s in enumerate(lines) if "np.linalg.eigvals(" in s)
    with pytest.raises(cppcodegen.UnsupportedError) as info:
        run_compiled(compiled_version(uses_eigvals), np.arange(8.0))
    msg = str(info.value)
    assert "eigvals" in msg, msg
    assert f"test_semantics.py:{line}" in msg, f"expected 'test_semantics.py:{line}' in {msg!r}"


# --------------------------------------------------------------------------
# inputs, outputs, decorator
# --------------------------------------------------------------------------
def aliased_args(x, y):
    return x + y * 2, x.T - y.T


def test_same_array_passed_twice():
    x = rng(320).uniform(-1, 1, (3, 4))
    check_against_numpy(aliased_args, x, x, **ARITH)


def overlapping_views(x, y):
    return x - y


def test_overlapping_views_as_arguments():
    base = np.arange(20.0)
    check_against_numpy(overlapping_views, base[1:], base[:-1], **EXACT)


def structured(x):
    return (x + 1, (x * 2, x.sum()), [x[0]], {"neg": -x, "nested": (x.max(), [x - 1])}, 3)


def test_result_structure_is_preserved():
    x = np.array([1.5, -2.0, 3.25])
    got, _ = check_against_numpy(structured, x, **EXACT)
    assert type(got) is tuple and type(got[1]) is tuple and type(got[2]) is list
    assert type(got[3]) is dict and type(got[3]["nested"][1]) is list


def zero_d(x, s):
    return x + s, x * 2.0, np.sqrt(x), x.sum(), x[()] + 1.0


def test_zero_d_input():
    check_against_numpy(zero_d, np.array(2.25), np.array(-1.0), **EXACT)


def mixed_scalars(x):
    return x.sum(), x[0], x.max() - x.min(), x.mean() * 2


def test_scalar_results_types():
    got, exp = check_against_numpy(mixed_scalars, np.array([3, 1, 2], np.int32), **ARITH)
    for g, e in zip(got, exp):
        assert isinstance(g, (np.generic, np.ndarray)) and np.ndim(g) == 0
        assert np.asarray(g).dtype == np.asarray(e).dtype


def documented(x, y=2.0):
    """Docstring of documented."""
    return x * y


def test_decorator_keeps_metadata():
    bare = cppcodegen.compile(documented)
    called = cppcodegen.compile()(documented)
    with_args = cppcodegen.compile(backend="cpp", options=None)(documented)
    for c in (bare, called, with_args):
        assert c.__name__ == "documented"
        assert c.__doc__ == "Docstring of documented."
        assert inspect.signature(c) == inspect.signature(documented)
    x = np.arange(4.0)
    assert_matches_numpy(run_compiled(bare, x, 3.0), documented(x, 3.0), **EXACT)


def test_explain_reports():
    x = rng(330).uniform(-1, 1, (5, 7))
    check_against_numpy(affine, x, 2.0, **ARITH)
    for f in (affine, compiled_version(affine)):
        ex = cppcodegen.explain(f, x, 2.0)
        assert str(ex.graph).strip()
        assert isinstance(ex.num_kernels, int) and ex.num_kernels >= 1
        assert isinstance(ex.source, str) and ex.source.strip()
        assert isinstance(ex.cache_paths, list) and ex.cache_paths
        assert all(isinstance(p, str) for p in ex.cache_paths)
