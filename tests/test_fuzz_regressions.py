"""Minimal programs found by the random-graph fuzzer (tests/fuzz/), shrunk automatically.

Each test was a bug (fixed since; the comment above it says what was wrong) and stays as a
regression test. A new, not yet fixed bug is added with ``xfail(strict=True)``, so it turns
red the day it is fixed; then remove the mark (and its entry in tests/test_fuzz.py's
KNOWN/KNOWN_PATTERNS). ``check_program`` runs the function under NumPy (with the fuzzer's
measured tolerances, tests/fuzz/oracle.py) and compiled, and compares the two.
"""
import numpy as np
import pytest

from fuzz.inputs import make_input
from fuzz.oracle import check_program


# -- bug: np.fmod is in the op table but include/ has no ccg::fmod -------------------------
def test_fmod_missing_in_headers():
    def f(x0):
        v0 = np.fmod(x0, 2.5)
        return (v0,)
    args = [make_input(np.array([1.0, -7.0, 3.5], dtype=np.float64))]
    check_program(f, args)


def test_fmod_missing_in_headers_int():
    def f(x0):
        v0 = np.fmod(x0, 100)
        v1 = v0.min()
        return (v1,)
    args = [make_input(np.array([1], dtype=np.int64).reshape((1, 1)))]
    check_program(f, args)


# -- bug: a partial reduction fused into a "flat kernel" next to a full reduction ----------
# kernel0_* keeps ONE accumulator for the partial reduction (acc declared outside the i0/i1
# loops) and sums over every row; with nothing to loop over, the store `buf[i0] = acc`
# names an undeclared index.
def test_full_then_partial_reduction_compile_error():
    def f(x0):
        v0 = x0.min(keepdims=True)
        v1 = v0.max(axis=-1)
        return (v1,)
    args = [make_input(np.array([0], dtype=np.int64).reshape((1, 1, 1)))]
    check_program(f, args)


def test_full_then_partial_reduction_wrong_values():
    def f(x0, x1):
        v0 = x0.std(ddof=1)
        v1 = np.copysign(v0, x1)
        v2 = np.logical_or(x0, v1)
        v3 = v2.var(axis=2, keepdims=True)
        return (v3,)
    args = [make_input(np.array([True], dtype=np.bool_).reshape((1, 1, 1))),
            make_input(np.array([False, False], dtype=np.bool_).reshape((1, 2, 1)))]
    check_program(f, args)


# Same bug in a nest kernel: the stages share only the outer i0 loop; the partial
# reduction's remaining output axis i1 becomes a reduction loop and the store
# `buf[(3 * i0) + i1]` sits after that loop has closed.
def test_pointwise_and_partial_reduction_fused():
    def f(x0, x1):
        v0 = x0 + 1
        v1 = x1.sum(axis=2)
        return (v0, v1,)
    args = [make_input('float64', (7, 3), domain='mixed', seed=1),
            make_input('float64', (7, 3, 5), domain='mixed', seed=2)]
    check_program(f, args)


def test_reductions_over_different_axes_fused():
    def f(x0):
        v0 = x0.all(axis=(1, 2))
        v1 = np.sum(x0, axis=-1)
        return (v0, v1,)
    args = [make_input('float64', (3, 4, 5), domain='mixed', seed=1)]
    check_program(f, args)


def test_full_sum_then_row_prod_wrong_values():
    def f(x0):
        v0 = x0.sum(axis=(0, 1), keepdims=True)
        v1 = np.subtract(x0, v0)
        v2 = v1.prod(axis=(1,), keepdims=True)
        return (v2,)
    args = [make_input(np.array([1.0, 1.0], dtype=np.float32).reshape((2, 1)))]
    check_program(f, args)


# -- bug: float64 -> float32 -> float64 round trip is compiled to a plain copy -------------
# The generated C++ is right (static_cast<float> then static_cast<double>), but g++ 12.2's
# SLP vectorizer folds the pair into an identity when the trip count is a small constant
# (here 2: the scalar tail loop is the whole loop): objdump shows ccg_run0 = two movupd.
# Reproduced standalone with `g++ -O3` (correct with -fno-tree-slp-vectorize or -O1).
def test_astype_float32_roundtrip_small_constant_size():
    def f(x0):
        v0 = x0.astype(np.float32)
        v1 = x0 * v0
        return (v1,)
    args = [make_input(np.array([-1.1624312698941806, -4.152529913171316], dtype=np.float64))]
    check_program(f, args)


# -- bug: floor/ceil/trunc of int64 go through double ---------------------------------------
# NumPy 2 returns integers unchanged (int64 result); the op table renders std::trunc({0}),
# which converts the int64 to double (53-bit mantissa) and back.
def test_trunc_int64_through_double():
    def f(x0):
        v0 = np.trunc(x0)
        v1 = np.floor(x0)
        v2 = np.ceil(x0)
        return (v0, v1, v2,)
    args = [make_input(np.array([-2026410925307599781, 4611686018427387905, 3], dtype=np.int64))]
    check_program(f, args)


# -- bug: full float sum over a row-reversed input is wrong (g++ 12.2 loop vectorizer) ------
# The generated kernel is right: a scalar loop `acc += in0[5*i0 - i1]` (5 < vector width,
# so the Vec loop never runs). The same loop nest compiled standalone with `g++ -O3` sums
# 111 instead of 105 for arange(15).reshape(3, 5)[:, ::-1]; -O2 or -O3
# -fno-tree-loop-vectorize give 105. Integer sums are not affected.
def test_sum_over_reversed_rows():
    def f(x0):
        v0 = x0.sum()
        return (v0,)
    args = [make_input(np.arange(15.0).reshape((3, 5)), neg=(1,))]
    check_program(f, args)


def test_var_over_reversed_axis():
    def f(x0):
        v0 = x0.var()
        return (v0,)
    args = [make_input(np.array([-3, -2, -1, 0], dtype=np.int64).reshape((2, 1, 2)), neg=(2,))]
    check_program(f, args)


# -- bug: np.clip with a zero bound loses the sign of a -0.0 input ---------------------------
# NumPy keeps x when it compares equal to a bound: clip(-0.0, 0.0, 2.5) is -0.0 (signbit
# True); the compiled clip returns the bound's +0.0.
def test_clip_keeps_negative_zero():
    def f(x0):
        v0 = np.clip(x0, 0.0, 2.5)
        v1 = np.signbit(v0)
        return (v1,)
    args = [make_input(np.array([2.0, 1.0, 1.0, -0.0], dtype=np.float32).reshape((1, 4, 1, 1)))]
    check_program(f, args)


# -- bug: x ** 2.0 on bool/int arrays keeps the integer dtype -------------------------------
# NumPy promotes bool/int ** Python float to float64 (NEP 50: a weak float still makes the
# result floating); the power fast path for exponent 2 rewrites x ** 2.0 into square(x)
# and returns int8 (bool) or int32/int64 (ints).
def test_power_two_float_exponent_promotes():
    def f(x0, x1):
        v0 = x0 ** 2.0
        v1 = x1 ** 2.0
        return (v0, v1,)
    args = [make_input(np.array([True, False], dtype=np.bool_)),
            make_input(np.array([3, -2], dtype=np.int32))]
    check_program(f, args)


# -- bug: index expression with a power crashes the C++ index printer ----------------------
# Lowering argmin(keepdims) -> [::-1, :, 1, ::2] -> transpose builds an index in which sympy
# folds Mod(i1, 2) * Mod(i1, 2) into Mod(i1, 2)**2; cexpr.cindex has no case for Pow and
# raises NotImplementedError("index expression (Mod(i1, 2))**2").
def test_index_expression_power():
    def f(x0):
        v0 = np.argmin(x0, axis=-3, keepdims=True)
        v1 = v0[::-1, :, 1, ::2]
        v2 = np.transpose(v1, (0, 2, 1))
        return (v2,)
    args = [make_input(np.full((2, 1, 2, 3), True, dtype=np.bool_))]
    check_program(f, args)


# -- bug: float prod whose partial products overflow gives NaN where NumPy gives 0 ----------
# prod(0.0, 1.0, ..., 63.0) in float32: NumPy multiplies in order, the 0 comes first and the
# product stays 0. The compiled reduction multiplies in vector lanes: the lanes without the
# 0 overflow to inf (63! >> FLT_MAX) and the final combine computes 0 * inf = NaN.
def test_prod_with_zero_and_overflowing_partials():
    def f(x0):
        v0 = x0.prod(axis=1)
        return (v0,)
    args = [make_input(np.arange(64, dtype=np.float32).reshape((1, 64)))]
    check_program(f, args)


# -- bug: vector and scalar code of one function computed a transcendental differently -----
# The min reduction's stage computed arctan2 with libmvec's vector function; the fmod stage
# is scalar-only (fmod has no vector form) and recomputed arctan2 with libm's scalar atan2f,
# which differs by an ULP at some inputs; fmod(min, v) of "equal" values was then a tiny
# number instead of 0. Fixed: scalar code calls the same full-width libmvec function as the
# vector loops (include/cppcodegen/vec.h, scalar1/scalar2), whatever the lane count.
def test_vector_and_scalar_paths_agree_on_recomputed_values():
    def f(x0):
        v0 = np.arctan2(x0, 3.25)
        v1 = v0.min(axis=0, keepdims=True)
        v2 = np.fmod(v1, v0)
        return (v2,)
    args = [make_input('float32', (127,), domain='mixed', seed=974607161)]
    check_program(f, args)


# -- bug: float32 hypot an ULP off NumPy's, and an argmin downstream picked another index ---
# (20,000-graph run, seed 2026 #18757). libmvec's float hypot is not correctly rounded;
# NumPy's (glibc's hypotf) is. Fixed: float32 hypot is computed in double (vec.h).
def test_float32_hypot_rounds_like_numpy_before_an_argmin():
    def f(x1):
        v0 = x1.astype(np.float32)
        v1 = np.hypot(v0, 2.0)
        v2 = np.expand_dims(v1, 1)
        v3 = np.fmin(v0, v2)
        v4 = np.argmin(v3, axis=0)
        v5 = v3[10::-2, ::2, :, 7:9, -1:2]
        return (v4, v5,)
    args = [make_input('float64', (11, 5, 13, 2), domain='wide', seed=814621619, off=True)]
    check_program(f, args)


# -- bug: sympy 1.14 squares a nested Mod: Mod(3*Mod(i, 43), 127) -> Mod(3*Mod(i, 43)**2, 127) --
# (20,000-graph run, seed 4040 #8454, a metamorphic twin: reshape(-1), reshape back, then a
# strided slice). Fixed: index Mods are loopir.IMod, which leaves such dividends as written.
def test_reshape_round_trip_then_strided_slice():
    def f(x0):
        v0 = x0.reshape(-1)
        v1 = v0.reshape((1, 1, 127, 127))
        v2 = v1[::-3, 0, 54:84, ::3]
        return (v2,)
    args = [make_input(np.linspace(-3.0, 5.0, 127 * 127).reshape((1, 1, 127, 127)))]
    check_program(f, args)


# -- bug: float64 hypot an ULP off NumPy's, and tan() of the ~1e19 result anything at all ----
# (20,000-graph run, seed 4040 #13043). libmvec's double hypot is not correctly rounded;
# NumPy calls glibc's. Fixed: vec.h computes float64 hypot with glibc's algorithm (sqrt and one
# correction step, plain IEEE arithmetic), bit-equal to NumPy's on every path.
def test_float64_hypot_rounds_like_numpy_before_tan():
    def f(x0, x1):
        v0 = np.hypot(x0, x0)
        v1 = np.tan(v0)
        v2 = v1 <= x1
        return (v0, v2)
    args = [make_input('int64', (2, 128), domain='wide', seed=515359301),
            make_input(np.array([True], dtype=np.bool).reshape((1, 1)))]
    check_program(f, args)


# -- bug: a kernel function reused for another input layout -----------------------------------
# Found by the 20,000-graph run (seed 31337 #10919, only next to #10918 in one batch), shrunk
# by hand. Codegen renders each kernel structure once and calls that function again for
# later kernels "with the same loops over other buffers" (commit f0d0529); the structure key
# ignores the inputs' strides: kernel0_tan is written for a broadcast input (stride 0:
# every lane loads element 0) and then called as kernel0_tan(in1, buf5) for a contiguous
# input, so every element of np.tan(x0) is tan(x0[0]).
# Fixed: the structure key holds each buffer's shape and strides.
def test_reused_kernel_function_ignores_input_strides():
    def f(a, x0):
        w1 = np.tan(a)
        v0 = np.tan(x0)
        v3 = x0.prod(axis=-1, keepdims=True)
        return (w1, v3, v0)
    args = [make_input('float64', (1,), domain='mixed', seed=673345588, bcast=(17,)),
            make_input('float64', (17,), domain='mixed', seed=1930289069)]
    check_program(f, args)


# -- oracle fix: the variance of equal values is 0 in one summation order, 1e-32 in another --
# Found by the 20,000-graph run (seed 31337 #7134). NumPy's mean of eleven 0.9420109798430727
# is one ULP low, so its var(ddof=1) is 1.36e-32; cppcodegen's mean is exact and its var 0.
# Both are within the variance's rounding bound, but power(var, x) is then 0 or 1e-30 and
# logical_and flips. The oracle snaps values whose error interval holds 0 to 0 only in half
# the elements of two random runs, and missed it; a run now snaps every such value.
def test_variance_of_equal_values_zero_or_tiny():
    def f(x0, x1):
        v0 = np.var(x1, keepdims=True, ddof=1)
        v1 = np.power(v0, x1)
        v2 = np.logical_and(x0, v1)
        return (v2,)
    args = [make_input(np.array([1.0], dtype=np.float64).reshape((1, 1))),
            make_input(np.full((11,), 0.9420109798430727, dtype=np.float64))]
    check_program(f, args)


# -- oracle fix: sin(a) - sin(b) of two values an ULP off NumPy's SVML sin ----------------------
# (20,000-graph run on the final code, seed 9002 #2325). libmvec's sin(2.0) is an ULP off
# NumPy's; v.T - v then differs by 8 ULP at a few elements, inside the allowed transcendental
# error, but the random perturbation runs happened to cancel there (same sign and size on both
# values) and the +bound/-bound runs always cancel. Two runs now perturb by a fixed function of
# the value (sign and size from a hash of its bits), as a libm's error is.
def test_difference_of_two_transcendental_values():
    def f(x0):
        v0 = np.sin(x0)
        v1 = np.swapaxes(v0, 1, 0)
        v2 = np.subtract(v1, v0)
        return (v2,)
    args = [make_input(np.array([-1.0, 1.0, -1.0, 0.0, -3.0, -1.0, -2.0, 2.0, 3.0, 1.0, -1.0, 0.0, 1.0, 0.0, -1.0, -1.0, -1.0, -3.0, 3.0, 0.0, -3.0, -3.0, -1.0, 2.0, -1.0, 1.0, 0.0, 0.0, -2.0, -1.0, 0.0, 2.0, -1.0, -1.0, 3.0, -1.0, -0.0, -1.0, 1.0, 2.0, -1.0, 1.0, -3.0, 0.0, -1.0, np.inf, -3.0, -0.0, -2.0, -2.0, 3.0, -2.0, 1.0, -2.0, 1.0, 1.0, -0.0, 1.0, 0.0, -3.0, 1.0, -0.0, 0.0, -1.0, -2.0, 1.0, 3.0, -1.0, -2.0, -3.0, -3.0, -0.0, -2.0, 0.0, 2.0, 2.0, 2.0, -0.0, -2.0, -2.0, np.nan, -0.0, -1.0, 3.0, -2.0, -2.0, 0.0, -2.0, -0.0, 2.0, -2.0, 1.0, -1.0, -3.0, 1.0, -2.0, 0.0, 2.0, 1.0, 0.0, 1.0, -2.0, 1.0, 0.0, -1.0, -2.0, 1.0, -2.0, -0.0, -2.0, -1.0, 2.0, 1.0, 3.0, -2.0, 0.0, -1.0, -1.0, -3.0, 2.0, 3.0, 2.0, -1.0, -1.0, -2.0, 2.0, 1.0, 2.0, 1.0, -2.0, np.inf], dtype=np.float64).reshape((1, 131, 1)))]
    check_program(f, args)


# -- bug: GCC 12 spilled an AVX-512 8-lane compare mask as one byte and reloaded it as a
# quadword, then skipped the `& 0xff` it believed redundant: stack garbage became bools
# (x != 0 stored False for 5.0). Only in a large translation unit (register pressure from
# the other programs' kernels), so the test is the fuzzer's whole batch, minimized. Fixed in
# vec.h: mask results pass through an asm into an opaque 32-bit register (detail::kbits).
# (20,000-graph run, seed 9004 #11298)
def test_avx512_mask_spill_in_a_large_kernel_file():
    def f(p0_x0, p1_x0, p2_x1, p3_x0, p4_x0):
        p0_v0 = np.logical_or(p0_x0, p0_x0)
        p0_v1 = np.fmin(p0_v0, True)
        p1_v0 = np.logical_not(p1_x0)
        p1_v1 = np.logical_and(p1_v0, p1_x0)
        p1_v2 = np.isnan(p1_x0)
        p2_v0 = np.hypot(p2_x1, 3.25)
        p2_v0_m5_0 = p2_v0 / 1
        p2_v1 = np.not_equal(p2_x1, 1.0)
        p2_v2 = np.fmin(p2_x1, p2_v1)
        p2_v2_m6_0 = -p2_v2
        p2_v2_m6_1 = np.negative(p2_v2_m6_0)
        p2_v3 = np.absolute(p2_v1)
        p2_v4 = p2_v3.astype(np.float32)
        p3_v0 = np.reshape(p3_x0, (1, 0))
        p3_v1 = np.broadcast_to(p3_v0, (13, 0))
        p3_v2 = np.transpose(p3_v0, (1, 0))
        p3_v3 = p3_v2.ravel()
        p3_v4 = np.reshape(p3_v1, (3, 0, 1, 3))
        p3_v5 = p3_v3.reshape((1, 5, 0))
        p3_v6 = np.logical_and(p3_v2, p3_v2)
        p3_v7 = p3_v5.sum(axis=0, keepdims=True)
        p3_v7_m8_0 = p3_v7 * 1
        p4_v0 = np.logical_or(p4_x0, p4_x0)
        p4_v1 = np.fmin(p4_v0, True)
        p4_v1_m2_0 = np.moveaxis(p4_v1, 2, 0)
        p4_v1_m2_1 = np.moveaxis(p4_v1_m2_0, 0, 2)
        p4_v1_m2_1_m4_0 = np.swapaxes(p4_v1_m2_1, 2, 1)
        p4_v1_m2_1_m4_1 = p4_v1_m2_1_m4_0.swapaxes(2, 1)
        return ((p0_v1,), (p1_v1, p1_v2,), (p2_v0_m5_0, p2_v2_m6_1, p2_v4,), (p3_v4, p3_v6, p3_v7_m8_0,), (p4_v1_m2_1_m4_1,),)
    args = [make_input('float64', (1, 5, 13), domain='int', seed=1051563498, bcast=(31, 5, 13)), make_input('int64', (1, 1, 1), domain='small', seed=2083027363), make_input('float32', (0, 2), domain='mixed', seed=1605755776, step={1: 2}), make_input('bool', (3, 0, 2, 1), domain='half', seed=964981325, step={3: 3}), make_input('float64', (1, 5, 13), domain='int', seed=1051563498, bcast=(31, 5, 13))]
    check_program(f, args)


# -- bug: np.put (and ndarray.put) raised UnsupportedError (issue 16's fuzzer families, seed
# 1 #2): now a scatter into the array read flat in C order, the values flattened and repeated
# cyclically to the number of indices, nothing done for empty values, an out-of-range index
# NumPy's IndexError.
def test_put_into_a_copy_repeated_and_wrapped_indices():
    def f(x0, x1):
        v0 = np.concatenate([x0, x0], axis=0)
        v1 = v0.copy(); np.put(v1, x1, 0.25)
        return (v1,)
    args = [make_input('float64', (13, 2, 1, 3), domain='mixed', seed=2094320596, step={0: 2}),
            make_input('int64', (5,), domain='rep:156', seed=2048997684)]
    check_program(f, args)


def test_put_cyclic_values_into_a_transposed_argument():
    def f(x0, x1, x2):
        v0 = x0; np.put(v0, x1, x2)
        v1 = v0.sum(axis=0)
        return (v1,)
    args = [make_input('int32', (5, 4), domain='small', seed=3, perm=(1, 0)),
            make_input('int64', (2, 3), domain='wrap:20', seed=4),
            make_input(np.array([1.5, -2.0], dtype=np.float64))]
    check_program(f, args)


def test_put_method_and_empty_values():
    def f(x0, x1, x2):
        v0 = x0.copy(); v0.put(x1, 7)
        v1 = x0.copy(); np.put(v1, x1, x2)
        return (v0, v1,)
    args = [make_input('float32', (3, 4), domain='mixed', seed=5),
            make_input('int64', (3,), domain='rep:12', seed=6),
            make_input(np.zeros(0, dtype=np.float64))]
    check_program(f, args)


def test_put_out_of_range_raises_index_error():
    def f(x0, x1):
        v0 = x0.copy(); np.put(v0, x1, 1.0)
        return (v0,)
    args = [make_input('float64', (3, 4), domain='mixed', seed=7),
            make_input('int64', (4,), domain='oob:12', seed=8)]
    check_program(f, args)


# -- bug: x[mask] = scalar with a mask of x's leading axes (whole rows) raised
# UnsupportedError (seed 1 #173): now np.where of the mask with trailing axes added.
def test_mask_of_leading_axes_assigned_a_scalar():
    def f(x0, x1, x2):
        v0 = x1.copy(); v0[x0] = 0.25
        v1 = x2; v1[x0] = -1
        return (v0, v1.sum(axis=1),)
    args = [make_input(np.array([False, True, True], dtype=np.bool_)),
            make_input('float64', (3, 2, 5), domain='mixed', seed=11),
            make_input('int32', (3, 4), domain='small', seed=12, perm=(1, 0))]
    check_program(f, args)


def test_mask_of_leading_axes_all_false():
    def f(x0, x1):
        v0 = x1.copy(); v0[x0] = 0.25
        return (v0,)
    args = [make_input(np.array([False], dtype=np.bool_)),
            make_input(np.array([-3.0], dtype=np.float64).reshape((1, 1)))]
    check_program(f, args)


# -- fixed: an out-of-range index of a gather whose result is empty because ANOTHER axis has
# length 0 (x of shape (0, 1), x[:, [-2]]): NumPy checks every index and raises IndexError;
# the compiled gather loaded nothing and returned the empty result. The indices are now
# checked by the same gather from zeros with the empty axes of length 1, an effect of the
# call. (seed 1 #159; seed 80 #1037/#1347 --dynamic, seed 81 #1787)
def test_out_of_range_gather_with_an_empty_other_axis():
    def f(x0, x1):
        v0 = x1[:, x0]
        return (v0,)
    args = [make_input(np.array([-2], dtype=np.int64)),
            make_input(np.zeros((0, 1), dtype=np.bool_))]
    check_program(f, args)
    check_program(f, [make_input(np.array([1, 16], dtype=np.int64)),      # in range: empty
                      make_input(np.zeros((1, 17, 0), dtype=np.float64))])
    check_program(f, [make_input(np.array([-3], dtype=np.int64)),
                      make_input(np.zeros((1, 1, 0, 1), dtype=np.float64))])
    check_program(f, [make_input(np.array([0], dtype=np.int32)),         # the axis empty
                      make_input(np.zeros((1, 0, 0), dtype=np.complex64))])


# (seed 1 #377: the same with the rows of another array of the same shape, y[m] = z[m])
def test_mask_of_leading_axes_assigned_rows_of_another_array():
    def f(x0, x1, x2):
        v0 = np.zeros_like(x1); v0[x0] = x1[x0]
        v1 = x2.copy(); v1[x0] = v0[x0] * 2
        return (v0, v1,)
    args = [make_input('bool', (5,), domain='half', seed=13),
            make_input('float32', (5, 3), domain='mixed', seed=14),
            make_input('float32', (5, 3), domain='mixed', seed=15, neg=(0,))]
    check_program(f, args)


# -- fixed: np.arange / np.linspace with sizes known when tracing were NumPy constants, and
# np.zeros_like of such a constant a NumPy array too: assigning traced values into it raised
# DataDependentError. They are traced constants now. (seed 1 #453)
def test_zeros_like_of_a_constant_arange_filled_by_a_mask():
    def f(x0, x1):
        v0 = np.arange(x0.shape[0])
        v1 = np.zeros_like(v0); v1[x1] = x1[x1]
        return (v1,)
    args = [make_input('int64', (6,), domain='small', seed=16),
            make_input('bool', (6,), domain='half', seed=17)]
    check_program(f, args)


# (seed 20240 #357: the same root, a gather from a constant np.linspace with a traced index)
def test_gather_from_a_constant_linspace():
    def f(x0, x1):
        v0 = np.linspace(-1.0, 2.0, x0.shape[-1])
        v1 = v0[x1].sum()
        return (v1,)
    args = [make_input('float64', (3, 7), domain='mixed', seed=18),
            make_input('int64', (4,), domain='wrap:7', seed=19)]
    check_program(f, args)
