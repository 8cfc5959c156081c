// cppcodegen/complex.h -- complex64 / complex128 with NumPy's semantics, scalar and vector.
//
// Provides, in namespace ccg:
//   Complex<T>, c64 = Complex<float>, c128 = Complex<double>
//                          two T (re, im), trivially copyable: the layout of NumPy's complex
//                          dtypes, so a NumPy array is an array of Complex<T>.
//   operators  + - * / (binary), - + (unary), == != (NumPy equal/not_equal),
//              < <= > >= (NumPy's lexicographic less/..., NaN rules below),
//              explicit operator bool (nonzero: logical_and/or/not, casts to bool)
//   real imag conj abs arg sign square reciprocal rint
//   mul_naive              NumPy's multiply.reduce/np.prod along a row (see operator*)
//   exp exp2 expm1 log log2 log10 log1p sqrt power
//   sin cos tan sinh cosh tanh asin acos atan asinh acosh atanh   (np.arcsin = asin, ...)
//   isnan isinf isfinite maximum minimum fmax fmin
//   cast<To>(Complex) / cast<Complex>(real)  NumPy's casts (to real: the real part, to int
//                          the real part as ccg::cast does, to bool: nonzero)
//   Vec<Complex<T>, N>     N complex lanes held split (Vec<T, N> re, im) but loaded from and
//                          stored to interleaved memory; the same API as Vec<T, N>
//                          (load/load_partial/load_strided/broadcast/store/store_partial),
//                          every scalar function above lane-wise, select, Mask comparisons,
//                          convert<>/to_mask/from_mask, reduce_add, real/imag -> Vec<T, N>.
//
// Semantics: NumPy 2.4 on x86-64 (checked against numpy 2.4.6 bit for bit by
// tests/test_complex_kernels.py, except arg, see below). Where NumPy's own result depends
// on the loop it picks, we take the loop NumPy runs for ordinary (aligned, non-overlapping)
// arrays on x86-64-v3/v4 CPUs (every machine we target):
//  * multiply and square: NumPy's SIMD loop (loops_arithm_fp.dispatch.c.src, simd_cmul):
//      re = fma(ar, br, -(ai*bi)), im = fma(ar, bi, ai*br)   (fmaddsub on AVX2/AVX-512)
//    not the naive ar*br - ai*bi (its scalar loop, taken only for overlapping memory), and
//    without C99 Annex G's infinity recovery (std::complex's operator*, __muldc3, has it:
//    NumPy does not, (inf+0j)*(1+0j) is inf+nanj). Our own code, std::fma everywhere.
//  * abs: NumPy's SIMD loop (loops_unary_complex.dispatch.c.src, simd_cabsolute), taken
//    for every loadable stride: larger * sqrt(fma(r, r, 1)) with r = smaller / larger, inf if
//    either part is inf, NaN if either is NaN; not glibc's hypot/cabs (they differ by an ULP
//    at many inputs). Our own code.
//  * divide: NumPy's loop (loops.c.src CFLOAT_divide): Smith's method with its NaN/zero
//    cases; reciprocal: its own Smith-like loop (CFLOAT_reciprocal). Our own code.
//  * power: npy_cpow (npymath): 1 for a zero exponent, 0 or NaN for a zero base, integer
//    exponents |n| < 100 with an imaginary part == 0 by repeated naive multiplication
//    (two roundings each, unlike multiply above) and Smith division, else glibc cpow.
//    NumPy's `x ** e` operator (multiarray/number.c fast_scalar_power) is np.square for a
//    Python int 2, np.reciprocal for a Python int -1, np.sqrt for a Python float 0.5, and
//    np.power otherwise (2.0, np.int64(2), 3, ...); square and power(x, 2) round
//    differently (fused vs naive), so the renderer must pick the one NumPy picks.
//  * np.prod / multiply.reduce along a row: the naive product (mul_naive), because NumPy
//    takes its scalar loop when the accumulator is the output; along an outer axis the
//    SIMD loop (operator*).
//  * sign: NumPy 2's z / |z| with |z| = glibc hypot (its scalar loop), 0 for 0, NaN+NaNj
//    for NaN anywhere or both parts infinite, (+-1, 0) / (0, +-1) for one infinite part.
//  * maximum/minimum/fmax/fmin: the loop's lexicographic order (CGE/CLE: real parts first,
//    NaN in an imaginary part makes the real-part comparison false); maximum/minimum
//    return the first operand if it has a NaN, fmax/fmin the first unless the second has
//    none and wins (then the second).
//  * exp log sqrt sin cos tan sinh cosh tanh asin acos atan asinh acosh atanh: glibc's
//    cexp/clog/csqrt/... -- NumPy calls exactly these (npy_cexp etc. wrap libm on glibc
//    >= 2.18; numpy's _multiarray_umath imports cexp, clog, csqrt, casin, ... from libm), so
//    results match bit for bit, special values and branch cuts included (NumPy's branch
//    cuts are C99's). Called as __builtin_c* through an empty asm so GCC cannot fold them
//    with MPC at compile time (correctly rounded, which glibc is not always).
//  * log10/log2: clog then both parts times log10(e)/log2(e) (nc_log10/nc_log2);
//    exp2: cexp(z * ln 2) per part; expm1, log1p: NumPy's formulas (nc_expm1: expm1(x)cos(y)
//    - 2 sin^2(y/2) + i e^x sin y; nc_log1p: log(hypot(x+1, y)) + i atan2(y, x+1)), with libm.
//  * arg (np.angle = np.arctan2(imag, real)): ccg::atan2 like the float arctan2 kernels
//    (libmvec in SIMD builds); NumPy's arctan2 uses its own SIMD code (SVML) on AVX-512,
//    so arg is within 2 ULP of NumPy (measured), not bit-exact (as float arctan2 already is).
//  Real -> complex: NumPy promotes the real operand (x -> x+0j) before complex arithmetic,
//  so (inf+1j) * 2.0 is inf+nanj in NumPy. There are no mixed real/complex operators here
//  (and no implicit conversion): the renderer casts the real operand, as NumPy does.
//  Requires the kernel flags -ffp-contract=off and -fno-tree-slp-vectorize (cppcodegen/api.py
//  build_flags): the naive products of divide, reciprocal and power must round twice, as
//  NumPy's (baseline-compiled, FMA-free) loops do, and GCC 12's SLP pass turns the two
//  halves of the division into a vfmsubadd even under -ffp-contract=off.
//
// Vector paths (Vec<Complex<T>, N>): lanes held split, re and im in a Vec<T, N> each, so a
// complex lane lines up with lane i of every real Vec<T, N> of the same loop (real(z) * x,
// masks, selects need no shuffles); a load is two vector loads and two two-source shuffles
// (deinterleave: vpermt2ps/pd on AVX-512), a store the reverse. Native SIMD, bit-identical
// to the scalar forms: + - * (two FMAs) / (Smith's two cases as one formula with per-lane
// operand selects, special cases patched by masks) conj real imag abs (NumPy's SIMD
// algorithm) square reciprocal rint, comparisons, isnan/isinf/isfinite, maximum/minimum/
// fmax/fmin, select. The rest (exp ... atanh, power, sign) runs the scalar function lane by
// lane -- no SIMD code reproduces glibc's bits -- which costs the same as a scalar loop
// (0.9-1.0x) but lets the cheap operations around it run as vectors.
// Speedup of a Vec loop (N = register width, masked tail) over the scalar loop of the same
// functions, 1024 elements (in cache), best of 3, gcc 12 -O3 with the kernel flags, one
// thread, on the AVX-512 machine (AMD EPYC Zen 4, family 25 model 17, 2 cores, shared and
// loaded: +-15%); AVX2 = the same machine with -mavx2 -mfma -mno-avx512f:
//                     AVX-512 c64  c128      AVX2 c64  c128
//   add, subtract        3.8-4.1x  1.5-1.8x   3.4x  1.3-1.7x
//   multiply             3.6x      1.75x      3.0x  1.4x
//   conj                 5.0x      1.7x       2.4x  1.0x
//   abs                  7.3x      4.4x       1.6x  1.9x
//   real, imag           4.6x      2.3x       4.2x  2.4x
//   divide               5.4x      1.4x       1.4x  1.1x   (lane by lane: 0.65-0.8x)
//   reciprocal           7.9x      4.9x       3.0x  2.4x
//   exp (lane by lane)   0.95x     0.94x      0.95x 0.99x
// Out of cache (2^20 elements) complex128 add/subtract/multiply/conj/real/imag are bound by
// memory (0.8-1.2x, noise); abs, divide, reciprocal stay 2.7-3.7x, complex64 1.1-2x (abs,
// divide 2-8x). Holding lanes interleaved instead (multiply by fmaddsub, no shuffles) was
// 1.1-2x faster for a lone complex64 add or conj in cache, the same for multiply and out
// of cache; not taken, as its lanes would not line up with the real Vec lanes of a loop.
//
// Memory and cffi: keep NumPy's interleaved layout. cffi does not know std::complex or
// _Complex in ABI mode, so a kernel's extern "C" signature takes the buffer as `double*`
// (complex128) / `float*` (complex64) -- cdef "double *", ffi.from_buffer("double[]", a)
// takes a complex128 array's buffer as is -- and the kernel body views it as
// `ccg::c128* a = reinterpret_cast<ccg::c128*>(a_raw);` so element offsets are NumPy's
// (strides / itemsize) and ccg::ld/ccg::st (per part through memcpy: misalignment-safe)
// read and write Complex<T> values. A complex Python scalar argument is passed as two
// doubles (re, im), not as a struct by value. We do not use std::complex: its operators
// follow C99 Annex G / libstdc++ (multiply via __muldc3, a different division), not
// NumPy, and a look-alike type would invite them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "scalar.h"
#include "vec.h"

namespace ccg {

// =================================================================== type
template <class T> struct Complex {
  static_assert(std::is_floating_point_v<T>, "Complex<T>: T is float or double");
  using value_type = T;
  T re, im;

  Complex() = default;
  constexpr Complex(T r, T i) : re(r), im(i) {}
  // NumPy's casts: real -> complex (x + 0j), complex64 <-> complex128 (per part). Explicit:
  // NumPy promotes before it computes, and so must the generated code.
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  explicit constexpr Complex(U x) : re(static_cast<T>(x)), im(T(0)) {}
  template <class U>
  explicit constexpr Complex(const Complex<U>& z) : re(static_cast<T>(z.re)), im(static_cast<T>(z.im)) {}
  // nonzero (NaN counts as nonzero, as in NumPy)
  explicit constexpr operator bool() const { return re != T(0) || im != T(0); }
};
using c64 = Complex<float>;
using c128 = Complex<double>;
static_assert(sizeof(c64) == 8 && sizeof(c128) == 16, "Complex<T> must be two packed T");
static_assert(std::is_trivially_copyable_v<c128> && std::is_standard_layout_v<c128>,
              "Complex<T> must be memcpy-able like NumPy's complex");

// Element load/store part by part (misalignment-safe like scalar.h's ld/st): one memcpy of
// an 8-byte c64 goes through a general register and costs 3x in a scalar loop.
template <class T> inline Complex<T> ld(const Complex<T>* p) {
  const T* q = reinterpret_cast<const T*>(p);
  return Complex<T>(ld(q), ld(q + 1));
}
template <class T> inline void st(Complex<T>* p, Complex<T> z) {
  T* q = reinterpret_cast<T*>(p);
  st(q, z.re);
  st(q + 1, z.im);
}

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<Complex<T>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;

namespace detail {
// Hide a value from the optimizer (no instruction): keeps GCC from folding a libm call
// with constant arguments at compile time, which would round differently from glibc.
template <class T> inline T opaque(T x) {
#if defined(__GNUC__) && defined(__x86_64__)
  asm("" : "+x"(x));
#elif defined(__GNUC__)
  asm("" : "+m"(x));
#endif
  return x;
}
// glibc's complex functions through GCC's builtins (C99 _Complex in GNU C++).
#define CCG_CX_GLIBC(fn)                                                          \
  inline c64 fn(c64 z) {                                                          \
    __complex__ float a;                                                          \
    __real__ a = opaque(z.re);                                                    \
    __imag__ a = opaque(z.im);                                                    \
    __complex__ float r = __builtin_c##fn##f(a);                                  \
    return c64(__real__ r, __imag__ r);                                           \
  }                                                                               \
  inline c128 fn(c128 z) {                                                        \
    __complex__ double a;                                                         \
    __real__ a = opaque(z.re);                                                    \
    __imag__ a = opaque(z.im);                                                    \
    __complex__ double r = __builtin_c##fn(a);                                    \
    return c128(__real__ r, __imag__ r);                                          \
  }
namespace glibc {
CCG_CX_GLIBC(exp) CCG_CX_GLIBC(log) CCG_CX_GLIBC(sqrt)
CCG_CX_GLIBC(sin) CCG_CX_GLIBC(cos) CCG_CX_GLIBC(tan)
CCG_CX_GLIBC(sinh) CCG_CX_GLIBC(cosh) CCG_CX_GLIBC(tanh)
CCG_CX_GLIBC(asin) CCG_CX_GLIBC(acos) CCG_CX_GLIBC(atan)
CCG_CX_GLIBC(asinh) CCG_CX_GLIBC(acosh) CCG_CX_GLIBC(atanh)
inline c64 pow(c64 a, c64 b) {
  __complex__ float x, y;
  __real__ x = opaque(a.re); __imag__ x = opaque(a.im);
  __real__ y = opaque(b.re); __imag__ y = opaque(b.im);
  __complex__ float r = __builtin_cpowf(x, y);
  return c64(__real__ r, __imag__ r);
}
inline c128 pow(c128 a, c128 b) {
  __complex__ double x, y;
  __real__ x = opaque(a.re); __imag__ x = opaque(a.im);
  __real__ y = opaque(b.re); __imag__ y = opaque(b.im);
  __complex__ double r = __builtin_cpow(x, y);
  return c128(__real__ r, __imag__ r);
}
}  // namespace glibc
#undef CCG_CX_GLIBC

// npymath's cdiv (npy_math_complex.c.src), used by npy_cpow: Smith's division without the
// NaN cases of the ufunc loop.
template <class T> inline Complex<T> cdiv_npymath(Complex<T> a, Complex<T> b) {
  const T abs_br = std::fabs(b.re), abs_bi = std::fabs(b.im);
  if (abs_br >= abs_bi) {
    if (abs_br == 0 && abs_bi == 0) return Complex<T>(a.re / abs_br, a.im / abs_bi);
    const T rat = b.im / b.re;
    const T scl = T(1.0) / (b.re + b.im * rat);
    return Complex<T>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
  }
  const T rat = b.re / b.im;
  const T scl = T(1.0) / (b.im + b.re * rat);
  return Complex<T>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
template <class T> struct cconst;
template <> struct cconst<float> {
  static constexpr float log10e = 0.434294481903251827651128918916605082f;
  static constexpr float log2e = 1.442695040888963407359924681001892137f;
  static constexpr float loge2 = 0.693147180559945309417232121458176568f;
};
template <> struct cconst<double> {
  static constexpr double log10e = 0.434294481903251827651128918916605082;
  static constexpr double log2e = 1.442695040888963407359924681001892137;
  static constexpr double loge2 = 0.693147180559945309417232121458176568;
};
// NumPy's CGE / CLE / CGT / CLT (loops.c.src)
template <class T> inline bool cge(T xr, T xi, T yr, T yi) {
  return (xr > yr && xi == xi && yi == yi) || (xr == yr && xi >= yi);
}
template <class T> inline bool cle(T xr, T xi, T yr, T yi) {
  return (xr < yr && xi == xi && yi == yi) || (xr == yr && xi <= yi);
}
template <class T> inline bool cgt(T xr, T xi, T yr, T yi) {
  return (xr > yr && xi == xi && yi == yi) || (xr == yr && xi > yi);
}
template <class T> inline bool clt(T xr, T xi, T yr, T yi) {
  return (xr < yr && xi == xi && yi == yi) || (xr == yr && xi < yi);
}
}  // namespace detail

// ============================================================ scalar ops
template <class T> inline T real(Complex<T> z) { return z.re; }
template <class T> inline T imag(Complex<T> z) { return z.im; }
template <class T> inline Complex<T> conj(Complex<T> z) { return Complex<T>(z.re, -z.im); }

template <class T> inline Complex<T> operator+(Complex<T> a) { return a; }
template <class T> inline Complex<T> operator-(Complex<T> a) { return Complex<T>(-a.re, -a.im); }
template <class T> inline Complex<T> operator+(Complex<T> a, Complex<T> b) {
  return Complex<T>(a.re + b.re, a.im + b.im);
}
template <class T> inline Complex<T> operator-(Complex<T> a, Complex<T> b) {
  return Complex<T>(a.re - b.re, a.im - b.im);
}
// NumPy's SIMD multiply (see the header comment): one rounding of a fused product per part.
template <class T> inline Complex<T> operator*(Complex<T> a, Complex<T> b) {
  return Complex<T>(std::fma(a.re, b.re, -(a.im * b.im)), std::fma(a.re, b.im, a.im * b.re));
}
// The naive product, two roundings per part: NumPy's scalar multiply loop, which it runs
// for multiply.reduce / np.prod along a row (the accumulator overlaps the output) and
// npy_cpow runs for integer exponents. np.prod along an outer axis runs the SIMD loop
// (operator* above). Needs -ffp-contract=off.
template <class T> inline Complex<T> mul_naive(Complex<T> a, Complex<T> b) {
  return Complex<T>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// Python's complex quotient (CPython's _Py_c_quot): tops and bottom divided by the larger
// part of b (no reciprocal), NaN+NaNj for a zero or NaN divisor (Python raises there first).
template <class T> inline Complex<T> div_py(Complex<T> a, Complex<T> b) {
  const T abr = std::fabs(b.re), abi = std::fabs(b.im);
  if (abr >= abi) {
    if (abr == T(0)) return Complex<T>(std::numeric_limits<T>::quiet_NaN(),
                                       std::numeric_limits<T>::quiet_NaN());
    const T ratio = b.im / b.re, denom = b.re + b.im * ratio;
    return Complex<T>((a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom);
  }
  if (abi >= abr) {
    const T ratio = b.re / b.im, denom = b.re * ratio + b.im;
    return Complex<T>((a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom);
  }
  return Complex<T>(std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::quiet_NaN());
}
// NumPy's divide loop (loops.c.src @TYPE@_divide), case for case.
template <class T> inline Complex<T> operator/(Complex<T> a, Complex<T> b) {
  const T in1r = a.re, in1i = a.im, in2r = b.re, in2i = b.im;
  const T in2r_abs = std::fabs(in2r), in2i_abs = std::fabs(in2i);
  const bool in1r_nan = in1r != in1r, in1i_nan = in1i != in1i;
  const bool in2_nan = in2r != in2r || in2i != in2i;
  if (!in2_nan && (in1r_nan || in1i_nan) &&
      ((((!in1r_nan && isinf(in1r)) || (!in1i_nan && isinf(in1i))) &&
        (in2r != 0 || in2i != 0)) ||
       (isinf(in2r) && isinf(in2i)))) {
    const T nan = in1r_nan ? in1r : in1i;
    return Complex<T>(nan, nan);
  }
  if (in2r_abs >= in2i_abs) {  // isgreaterequal: false for NaN, like >=
    if (in2r_abs == 0 && in2i_abs == 0) {
      if ((in1r_nan && (in1i == 0 || in1i_nan)) || (in1r == 0 && in1i_nan))
        return Complex<T>(in1r_nan ? in1r : in1i, in1i_nan ? in1i : in1r);
      return Complex<T>(in1r / in2r_abs, in1i / in2i_abs);
    }
    const T rat = in2i / in2r;
    const T scl = T(1.0) / (in2r + in2i * rat);
    return Complex<T>((in1r + in1i * rat) * scl, (in1i - in1r * rat) * scl);
  }
  const T rat = in2r / in2i;
  const T scl = T(1.0) / (in2i + in2r * rat);
  return Complex<T>((in1r * rat + in1i) * scl, (in1i * rat - in1r) * scl);
}
template <class T> inline Complex<T>& operator+=(Complex<T>& a, Complex<T> b) { return a = a + b; }
template <class T> inline Complex<T>& operator-=(Complex<T>& a, Complex<T> b) { return a = a - b; }
template <class T> inline Complex<T>& operator*=(Complex<T>& a, Complex<T> b) { return a = a * b; }
template <class T> inline Complex<T>& operator/=(Complex<T>& a, Complex<T> b) { return a = a / b; }

template <class T> inline bool operator==(Complex<T> a, Complex<T> b) { return a.re == b.re && a.im == b.im; }
template <class T> inline bool operator!=(Complex<T> a, Complex<T> b) { return a.re != b.re || a.im != b.im; }
template <class T> inline bool operator<(Complex<T> a, Complex<T> b) { return detail::clt(a.re, a.im, b.re, b.im); }
template <class T> inline bool operator<=(Complex<T> a, Complex<T> b) { return detail::cle(a.re, a.im, b.re, b.im); }
template <class T> inline bool operator>(Complex<T> a, Complex<T> b) { return detail::cgt(a.re, a.im, b.re, b.im); }
template <class T> inline bool operator>=(Complex<T> a, Complex<T> b) { return detail::cge(a.re, a.im, b.re, b.im); }

template <class T> inline bool isnan(Complex<T> z) { return z.re != z.re || z.im != z.im; }
template <class T> inline bool isinf(Complex<T> z) { return isinf(z.re) || isinf(z.im); }
template <class T> inline bool isfinite(Complex<T> z) { return isfinite(z.re) && isfinite(z.im); }

// maximum/minimum: the first operand if it holds a NaN or wins (CGE/CLE), else the second.
template <class T> inline Complex<T> maximum(Complex<T> a, Complex<T> b) {
  return (isnan(a) || detail::cge(a.re, a.im, b.re, b.im)) ? a : b;
}
template <class T> inline Complex<T> minimum(Complex<T> a, Complex<T> b) {
  return (isnan(a) || detail::cle(a.re, a.im, b.re, b.im)) ? a : b;
}
// fmax/fmin: the first operand if the second holds a NaN or the first wins, else the second.
template <class T> inline Complex<T> fmax(Complex<T> a, Complex<T> b) {
  return (isnan(b) || detail::cge(a.re, a.im, b.re, b.im)) ? a : b;
}
template <class T> inline Complex<T> fmin(Complex<T> a, Complex<T> b) {
  return (isnan(b) || detail::cle(a.re, a.im, b.re, b.im)) ? a : b;
}

// np.absolute: NumPy's SIMD algorithm (see the header comment).
template <class T> inline T abs(Complex<T> z) {
  const T inf = std::numeric_limits<T>::infinity();
  const T re = std::fabs(z.re), im = std::fabs(z.im);
  if (re == inf || im == inf) return inf;
  if (re != re || im != im) return std::numeric_limits<T>::quiet_NaN();
  const T larger = re > im ? re : im, smaller = re > im ? im : re;
  if (larger == 0) return T(0);
  const T ratio = smaller / larger;
  return std::sqrt(std::fma(ratio, ratio, T(1))) * larger;
}
// np.angle: arctan2(imag, real), computed as the float arctan2 kernels compute it.
template <class T> inline T arg(Complex<T> z) { return ccg::atan2(z.im, z.re); }

// np.sign (NumPy 2): z / |z|, |z| by glibc's hypot as NumPy's loop.
template <class T> inline Complex<T> sign(Complex<T> z) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T a = std::hypot(z.re, z.im);
  if (a != a) return Complex<T>(nan, nan);
  if (isinf(a)) {
    if (isinf(z.re)) {
      if (isinf(z.im)) return Complex<T>(nan, nan);
      return Complex<T>(z.re > 0 ? T(1) : T(-1), T(0));
    }
    return Complex<T>(T(0), z.im > 0 ? T(1) : T(-1));
  }
  if (a == 0) return Complex<T>(T(0), T(0));
  return Complex<T>(z.re / a, z.im / a);
}

template <class T> inline Complex<T> square(Complex<T> z) { return z * z; }

// np.reciprocal's loop (loops.c.src @TYPE@_reciprocal).
template <class T> inline Complex<T> reciprocal(Complex<T> z) {
  const T in1r = z.re, in1i = z.im;
  if (std::fabs(in1i) <= std::fabs(in1r)) {
    const T r = in1i / in1r;
    const T d = in1r + in1i * r;
    return Complex<T>(T(1) / d, -r / d);
  }
  const T r = in1r / in1i;
  const T d = in1r * r + in1i;
  return Complex<T>(r / d, T(-1) / d);
}

template <class T> inline Complex<T> rint(Complex<T> z) {
  return Complex<T>(std::rint(z.re), std::rint(z.im));
}

// glibc's functions, as NumPy calls them.
#define CCG_CX_FN(fn) \
  template <class T> inline Complex<T> fn(Complex<T> z) { return detail::glibc::fn(z); }
CCG_CX_FN(exp) CCG_CX_FN(log) CCG_CX_FN(sqrt)
CCG_CX_FN(sin) CCG_CX_FN(cos) CCG_CX_FN(tan)
CCG_CX_FN(sinh) CCG_CX_FN(cosh) CCG_CX_FN(tanh)
CCG_CX_FN(asin) CCG_CX_FN(acos) CCG_CX_FN(atan)
CCG_CX_FN(asinh) CCG_CX_FN(acosh) CCG_CX_FN(atanh)
#undef CCG_CX_FN

template <class T> inline Complex<T> log10(Complex<T> z) {
  const Complex<T> r = detail::glibc::log(z);
  return Complex<T>(r.re * detail::cconst<T>::log10e, r.im * detail::cconst<T>::log10e);
}
template <class T> inline Complex<T> log2(Complex<T> z) {
  const Complex<T> r = detail::glibc::log(z);
  return Complex<T>(r.re * detail::cconst<T>::log2e, r.im * detail::cconst<T>::log2e);
}
template <class T> inline Complex<T> exp2(Complex<T> z) {
  return detail::glibc::exp(Complex<T>(z.re * detail::cconst<T>::loge2, z.im * detail::cconst<T>::loge2));
}
// nc_expm1 / nc_log1p with libm's real functions (std::, not ccg::'s libmvec forms).
template <class T> inline Complex<T> expm1(Complex<T> z) {
  const T a = std::sin(z.im / T(2));
  return Complex<T>(std::expm1(z.re) * std::cos(z.im) - T(2) * a * a,
                    std::exp(z.re) * std::sin(z.im));
}
template <class T> inline Complex<T> log1p(Complex<T> z) {
  const T l = std::hypot(z.re + T(1), z.im);
  return Complex<T>(std::log(l), std::atan2(z.im, z.re + T(1)));
}

// np.power: npy_cpow (see the header comment).
template <class T> inline Complex<T> power(Complex<T> a, Complex<T> b) {
  const T ar = a.re, ai = a.im, br = b.re, bi = b.im;
  if (br == 0 && bi == 0) return Complex<T>(T(1), T(0));
  if (ar == 0 && ai == 0) {
    if (br > 0) return Complex<T>(T(0), T(0));
    const T nan = std::numeric_limits<T>::quiet_NaN();
    return Complex<T>(nan, nan);
  }
  if (bi == 0 && br > -100 && br < 100) {
    const int64_t n0 = static_cast<int64_t>(br);
    if (T(n0) == br) {
      if (n0 == 1) return a;
      if (n0 == 2) return mul_naive(a, a);
      if (n0 == 3) return mul_naive(a, mul_naive(a, a));
      int64_t n = n0 < 0 ? -n0 : n0, mask = 1;
      Complex<T> aa(T(1), T(0)), p = a;
      while (true) {
        if (n & mask) aa = mul_naive(aa, p);
        mask <<= 1;
        if (n < mask || mask <= 0) break;
        p = mul_naive(p, p);
      }
      if (br < 0) aa = detail::cdiv_npymath(Complex<T>(T(1), T(0)), aa);
      return aa;
    }
  }
  return detail::glibc::pow(a, b);
}

// NumPy's casts from complex: to complex (per part), bool (nonzero), real (the real part),
// integer (the real part, as ccg::cast converts a float).
template <class To, class T> inline To cast(Complex<T> z) {
  if constexpr (is_complex_v<To>) return To(z);
  else if constexpr (std::is_same_v<To, bool>) return static_cast<bool>(z);
  else if constexpr (std::is_floating_point_v<To>) return static_cast<To>(z.re);
  else return cast<To>(z.re);
}

// =================================================================== Vec
template <class T, int N> struct Vec<Complex<T>, N> {
  static_assert(std::is_floating_point_v<T>, "Vec<Complex<T>, N>: T is float or double");
  using value_type = Complex<T>;
  using part = Vec<T, N>;
  static constexpr int size = N;

  part re, im;

  static Vec from_parts(const part& r, const part& i) { Vec z; z.re = r; z.im = i; return z; }
  static Vec broadcast(Complex<T> x) { return from_parts(part::broadcast(x.re), part::broadcast(x.im)); }
  // p[0..N) interleaved -> split lanes
  static Vec load(const Complex<T>* p) {
    const T* q = reinterpret_cast<const T*>(p);
    if constexpr (N >= 2) return deinterleave(part::load(q), part::load(q + N));
    else return broadcast(ld(p));
  }
  static Vec load_partial(const Complex<T>* p, int64_t n) {
    const T* q = reinterpret_cast<const T*>(p);
    if (n >= N) return load(p);
    if constexpr (N >= 2) {
      return deinterleave(part::load_partial(q, detail::clamp_n(2 * n, N)),
                          part::load_partial(q + N, detail::clamp_n(2 * n - N, N)));
    } else {
      return broadcast(Complex<T>(T(0), T(0)));
    }
  }
  // p[i * stride], i < N (stride in complex elements, as the index expressions count)
  static Vec load_strided(const Complex<T>* p, int64_t stride) {
    if (stride == 1) return load(p);
    if (stride == 0) return broadcast(ld(p));
    const T* q = reinterpret_cast<const T*>(p);
    return from_parts(part::load_strided(q, 2 * stride), part::load_strided(q + 1, 2 * stride));
  }
  static Vec load_strided_partial(const Complex<T>* p, int64_t stride, int64_t n) {
    if (stride == 1) return load_partial(p, n);
    const T* q = reinterpret_cast<const T*>(p);
    return from_parts(part::load_strided_partial(q, 2 * stride, n),
                      part::load_strided_partial(q + 1, 2 * stride, n));
  }
  void store(Complex<T>* p) const {
    T* q = reinterpret_cast<T*>(p);
    if constexpr (N >= 2) {
      part lo, hi;
      interleave(lo, hi);
      lo.store(q);
      hi.store(q + N);
    } else {
      st(p, lane(0));
    }
  }
  void store_partial(Complex<T>* p, int64_t n) const {
    if (n >= N) return store(p);
    T* q = reinterpret_cast<T*>(p);
    if constexpr (N >= 2) {
      part lo, hi;
      interleave(lo, hi);
      lo.store_partial(q, detail::clamp_n(2 * n, N));
      hi.store_partial(q + N, detail::clamp_n(2 * n - N, N));
    }
  }
  Complex<T> lane(int i) const { return Complex<T>(re.v[i], im.v[i]); }

  // [r0 i0 r1 i1 ...] [.. r(N-1) i(N-1)] <-> re, im
  static Vec deinterleave(const part& a, const part& b) {
#ifdef CCG_HAVE_SIMD
    return from_parts(detail::shuffle(a, b, evens(std::make_integer_sequence<int, N>())),
                      detail::shuffle(a, b, odds(std::make_integer_sequence<int, N>())));
#else
    Vec z;
    for (int i = 0; i < N / 2; ++i) {
      z.re.v[i] = a.v[2 * i]; z.im.v[i] = a.v[2 * i + 1];
      z.re.v[N / 2 + i] = b.v[2 * i]; z.im.v[N / 2 + i] = b.v[2 * i + 1];
    }
    return z;
#endif
  }
  void interleave(part& lo, part& hi) const {
#ifdef CCG_HAVE_SIMD
    lo = detail::shuffle(re, im, zip<0>(std::make_integer_sequence<int, N>()));
    hi = detail::shuffle(re, im, zip<N / 2>(std::make_integer_sequence<int, N>()));
#else
    for (int i = 0; i < N / 2; ++i) {
      lo.v[2 * i] = re.v[i]; lo.v[2 * i + 1] = im.v[i];
      hi.v[2 * i] = re.v[N / 2 + i]; hi.v[2 * i + 1] = im.v[N / 2 + i];
    }
#endif
  }

 private:
  template <int... I> static constexpr std::integer_sequence<int, (2 * I)...>
  evens(std::integer_sequence<int, I...>) { return {}; }
  template <int... I> static constexpr std::integer_sequence<int, (2 * I + 1)...>
  odds(std::integer_sequence<int, I...>) { return {}; }
  // lane j of the result: re[Off + j/2] for even j, im[Off + j/2] (index N + ...) for odd j
  template <int Off, int... I> static constexpr std::integer_sequence<int, ((I % 2) * N + Off + I / 2)...>
  zip(std::integer_sequence<int, I...>) { return {}; }
};

template <class T, int N> using CVec = Vec<Complex<T>, N>;

namespace detail {
// Apply a scalar complex function lane by lane (functions with no SIMD form that matches
// glibc bit for bit).
template <class F, class T, int N> inline CVec<T, N> cmap1(const CVec<T, N>& x, F f) {
  CVec<T, N> r;
  for (int i = 0; i < N; ++i) {
    const Complex<T> y = f(x.lane(i));
    r.re.v[i] = y.re;
    r.im.v[i] = y.im;
  }
  return r;
}
template <class F, class T, int N>
inline CVec<T, N> cmap2(const CVec<T, N>& x, const CVec<T, N>& y, F f) {
  CVec<T, N> r;
  for (int i = 0; i < N; ++i) {
    const Complex<T> z = f(x.lane(i), y.lane(i));
    r.re.v[i] = z.re;
    r.im.v[i] = z.im;
  }
  return r;
}
template <class T, int N>
inline Mask<N> vcge(const CVec<T, N>& x, const CVec<T, N>& y) {
  return ((x.re > y.re) & (x.im == x.im) & (y.im == y.im)) | ((x.re == y.re) & (x.im >= y.im));
}
template <class T, int N>
inline Mask<N> vcle(const CVec<T, N>& x, const CVec<T, N>& y) {
  return ((x.re < y.re) & (x.im == x.im) & (y.im == y.im)) | ((x.re == y.re) & (x.im <= y.im));
}
}  // namespace detail

// ---- native vector arithmetic (bit-identical to the scalar forms)
template <class T, int N> inline Vec<T, N> real(const CVec<T, N>& z) { return z.re; }
template <class T, int N> inline Vec<T, N> imag(const CVec<T, N>& z) { return z.im; }
template <class T, int N> inline CVec<T, N> conj(const CVec<T, N>& z) { return CVec<T, N>::from_parts(z.re, -z.im); }
template <class T, int N> inline CVec<T, N> operator+(const CVec<T, N>& a) { return a; }
template <class T, int N> inline CVec<T, N> operator-(const CVec<T, N>& a) {
  return CVec<T, N>::from_parts(-a.re, -a.im);
}
template <class T, int N> inline CVec<T, N> operator+(const CVec<T, N>& a, const CVec<T, N>& b) {
  return CVec<T, N>::from_parts(a.re + b.re, a.im + b.im);
}
template <class T, int N> inline CVec<T, N> operator-(const CVec<T, N>& a, const CVec<T, N>& b) {
  return CVec<T, N>::from_parts(a.re - b.re, a.im - b.im);
}
template <class T, int N> inline CVec<T, N> operator*(const CVec<T, N>& a, const CVec<T, N>& b) {
  return CVec<T, N>::from_parts(detail::fmadd(a.re, b.re, -(a.im * b.im)),
                                detail::fmadd(a.re, b.im, a.im * b.re));
}
// NumPy's divide without branches: both of Smith's cases are one formula with the operands
// selected per lane (x*1 and x+y == y+x are exact, so each lane does the scalar's very
// operations), then the zero-divisor and NaN cases are patched in.
template <class T, int N> inline CVec<T, N> operator/(const CVec<T, N>& a, const CVec<T, N>& b) {
  using VT = Vec<T, N>;
  const VT ar = a.re, ai = a.im, br = b.re, bi = b.im;
  const VT zero = VT::broadcast(T(0)), one = VT::broadcast(T(1));
  const VT abr = abs(br), abi = abs(bi);
  const Mask<N> ge = abr >= abi;                      // false for NaN, like the scalar >=
  const VT num = select(ge, bi, br), den = select(ge, br, bi);
  const VT rat = num / den;
  const VT scl = one / (den + num * rat);
  VT re = (select(ge, ar, ai) + select(ge, ai, ar) * rat) * scl;
  VT im = (ai * select(ge, one, rat) - ar * select(ge, rat, one)) * scl;
  const Mask<N> n1r = isnan(ar), n1i = isnan(ai);
  const Mask<N> zero2 = (abr == zero) & (abi == zero);
  if (zero2.any()) {
    const Mask<N> znan = (n1r & ((ai == zero) | n1i)) | ((ar == zero) & n1i);
    re = select(zero2, select(znan, select(n1r, ar, ai), ar / abr), re);
    im = select(zero2, select(znan, select(n1i, ai, ar), ai / abi), im);
  }
  const Mask<N> nn = ~(isnan(br) | isnan(bi)) & (n1r | n1i) &
                     ((((~n1r & isinf(ar)) | (~n1i & isinf(ai))) & ((br != zero) | (bi != zero))) |
                      (isinf(br) & isinf(bi)));
  if (nn.any()) {
    const VT nan = select(n1r, ar, ai);
    re = select(nn, nan, re);
    im = select(nn, nan, im);
  }
  return CVec<T, N>::from_parts(re, im);
}
// np.reciprocal's loop, both cases as one formula (as divide above).
template <class T, int N> inline CVec<T, N> reciprocal(const CVec<T, N>& z) {
  using VT = Vec<T, N>;
  const VT one = VT::broadcast(T(1));
  const Mask<N> le = abs(z.im) <= abs(z.re);
  const VT num = select(le, z.im, z.re), den = select(le, z.re, z.im);
  const VT r = num / den;
  const VT d = den + num * r;
  return CVec<T, N>::from_parts(select(le, one, r) / d, -select(le, r, one) / d);
}
template <class T, int N> inline CVec<T, N> div_py(const CVec<T, N>& a, const CVec<T, N>& b) {
  // (lane by lane: Python's scalar quotient, rare in vector loops)
  alignas(64) T ar[N], ai[N], br[N], bi[N], outr[N], outi[N];
  a.re.store(ar); a.im.store(ai); b.re.store(br); b.im.store(bi);
  for (int k = 0; k < N; ++k) {
    const Complex<T> q = div_py(Complex<T>(ar[k], ai[k]), Complex<T>(br[k], bi[k]));
    outr[k] = q.re; outi[k] = q.im;
  }
  return CVec<T, N>::from_parts(Vec<T, N>::load(outr), Vec<T, N>::load(outi));
}
template <class T, int N> inline CVec<T, N> mul_naive(const CVec<T, N>& a, const CVec<T, N>& b) {
  return CVec<T, N>::from_parts(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <class T, int N> inline CVec<T, N> square(const CVec<T, N>& z) { return z * z; }

template <class T, int N> inline Mask<N> operator==(const CVec<T, N>& a, const CVec<T, N>& b) {
  return (a.re == b.re) & (a.im == b.im);
}
template <class T, int N> inline Mask<N> operator!=(const CVec<T, N>& a, const CVec<T, N>& b) {
  return (a.re != b.re) | (a.im != b.im);
}
template <class T, int N> inline Mask<N> operator>=(const CVec<T, N>& a, const CVec<T, N>& b) {
  return detail::vcge(a, b);
}
template <class T, int N> inline Mask<N> operator<=(const CVec<T, N>& a, const CVec<T, N>& b) {
  return detail::vcle(a, b);
}
template <class T, int N> inline Mask<N> operator>(const CVec<T, N>& a, const CVec<T, N>& b) {
  return ((a.re > b.re) & (a.im == a.im) & (b.im == b.im)) | ((a.re == b.re) & (a.im > b.im));
}
template <class T, int N> inline Mask<N> operator<(const CVec<T, N>& a, const CVec<T, N>& b) {
  return ((a.re < b.re) & (a.im == a.im) & (b.im == b.im)) | ((a.re == b.re) & (a.im < b.im));
}
template <class T, int N> inline Mask<N> isnan(const CVec<T, N>& z) { return isnan(z.re) | isnan(z.im); }
template <class T, int N> inline Mask<N> isinf(const CVec<T, N>& z) { return isinf(z.re) | isinf(z.im); }
template <class T, int N> inline Mask<N> isfinite(const CVec<T, N>& z) { return isfinite(z.re) & isfinite(z.im); }

template <class T, int N>
inline CVec<T, N> select(Mask<N> m, const CVec<T, N>& a, const CVec<T, N>& b) {
  return CVec<T, N>::from_parts(select(m, a.re, b.re), select(m, a.im, b.im));
}
template <class T, int N> inline CVec<T, N> maximum(const CVec<T, N>& a, const CVec<T, N>& b) {
  return select(isnan(a) | detail::vcge(a, b), a, b);
}
template <class T, int N> inline CVec<T, N> minimum(const CVec<T, N>& a, const CVec<T, N>& b) {
  return select(isnan(a) | detail::vcle(a, b), a, b);
}
template <class T, int N> inline CVec<T, N> fmax(const CVec<T, N>& a, const CVec<T, N>& b) {
  return select(isnan(b) | detail::vcge(a, b), a, b);
}
template <class T, int N> inline CVec<T, N> fmin(const CVec<T, N>& a, const CVec<T, N>& b) {
  return select(isnan(b) | detail::vcle(a, b), a, b);
}

// np.absolute, NumPy's SIMD algorithm lane for lane.
template <class T, int N> inline Vec<T, N> abs(const CVec<T, N>& z) {
  using VT = Vec<T, N>;
  const VT inf = VT::broadcast(std::numeric_limits<T>::infinity());
  const VT zero = VT::broadcast(T(0));
  const VT re = abs(z.re), im = abs(z.im);
  const VT larger = select(re > im, re, im), smaller = select(re > im, im, re);
  const VT ratio = select(larger == zero, zero, smaller / larger);
  VT r = sqrt(detail::fmadd(ratio, ratio, VT::broadcast(T(1)))) * larger;
  r = select(isnan(re) | isnan(im), VT::broadcast(std::numeric_limits<T>::quiet_NaN()), r);
  return select((re == inf) | (im == inf), inf, r);
}
template <class T, int N> inline Vec<T, N> arg(const CVec<T, N>& z) { return atan2(z.im, z.re); }
template <class T, int N> inline CVec<T, N> rint(const CVec<T, N>& z) {
  return CVec<T, N>::from_parts(rint(z.re), rint(z.im));
}

// ---- lane by lane (glibc, or branchy code that would not pay as vectors)
#define CCG_CVEC_MAP1(fn)                                                   \
  template <class T, int N> inline CVec<T, N> fn(const CVec<T, N>& z) {     \
    return detail::cmap1(z, [](Complex<T> x) { return fn(x); });            \
  }
CCG_CVEC_MAP1(exp) CCG_CVEC_MAP1(exp2) CCG_CVEC_MAP1(expm1)
CCG_CVEC_MAP1(log) CCG_CVEC_MAP1(log2) CCG_CVEC_MAP1(log10) CCG_CVEC_MAP1(log1p)
CCG_CVEC_MAP1(sqrt) CCG_CVEC_MAP1(sin) CCG_CVEC_MAP1(cos) CCG_CVEC_MAP1(tan)
CCG_CVEC_MAP1(sinh) CCG_CVEC_MAP1(cosh) CCG_CVEC_MAP1(tanh)
CCG_CVEC_MAP1(asin) CCG_CVEC_MAP1(acos) CCG_CVEC_MAP1(atan)
CCG_CVEC_MAP1(asinh) CCG_CVEC_MAP1(acosh) CCG_CVEC_MAP1(atanh)
CCG_CVEC_MAP1(sign)
#undef CCG_CVEC_MAP1
// np.power by a constant integer exponent E, 1 <= E <= 8 (cexpr.const_power): npy_cpow's
// products in its order (the same roundings, the same NaN from a first product by 1 + 0j),
// 0 for a zero base; no branch, so vector lanes need no scalar calls.
namespace detail {
template <int E, class Z> inline Z cpow_products(const Z& a, const Z& one) {
  if constexpr (E == 1) return a;
  else if constexpr (E == 2) return mul_naive(a, a);
  else if constexpr (E == 3) return mul_naive(a, mul_naive(a, a));
  else {
    Z aa = one, p = a;
    for (int mask = 1;; mask <<= 1) {     // (E is a constant: unrolled)
      if (E & mask) aa = mul_naive(aa, p);
      if (E < (mask << 1)) break;
      p = mul_naive(p, p);
    }
    return aa;
  }
}
}  // namespace detail
template <int E, class T> inline Complex<T> cpowi(Complex<T> a) {
  static_assert(E >= 1 && E <= 8, "cpowi: a small positive exponent");
  if (a.re == T(0) && a.im == T(0)) return Complex<T>(T(0), T(0));
  return detail::cpow_products<E>(a, Complex<T>(T(1), T(0)));
}
template <int E, class T, int N> inline CVec<T, N> cpowi(const CVec<T, N>& a) {
  static_assert(E >= 1 && E <= 8, "cpowi: a small positive exponent");
  const CVec<T, N> r = detail::cpow_products<E>(a, CVec<T, N>::broadcast(Complex<T>(T(1), T(0))));
  return select((a.re == Vec<T, N>::broadcast(T(0))) & (a.im == Vec<T, N>::broadcast(T(0))),
                CVec<T, N>::broadcast(Complex<T>(T(0), T(0))), r);
}
template <class T, int N> inline CVec<T, N> power(const CVec<T, N>& a, const CVec<T, N>& b) {
  return detail::cmap2(a, b, [](Complex<T> x, Complex<T> y) { return power(x, y); });
}

template <class T, int N> inline Complex<T> reduce_add(const CVec<T, N>& z) {
  return Complex<T>(reduce_add(z.re), reduce_add(z.im));
}

// ---- conversions (the names the vector renderer emits for casts)
// complex -> complex (per part), real (the real part, converted as convert<> does), bool
template <class U, class T, int N> inline Vec<U, N> convert(const CVec<T, N>& z) {
  if constexpr (is_complex_v<U>) {
    using P = typename U::value_type;
    return Vec<U, N>::from_parts(convert<P>(z.re), convert<P>(z.im));
  } else {
    return convert<U>(z.re);
  }
}
template <class T, int N> inline Mask<N> to_mask(const CVec<T, N>& z) {
  const Vec<T, N> zero = Vec<T, N>::broadcast(T(0));
  return (z.re != zero) | (z.im != zero);
}
// real -> complex: explicit specializations of vec.h's convert<U>(Vec<T, N>) (an overload
// could not be told apart from it).
namespace detail {
template <class C, class T, int N> inline Vec<C, N> real_to_complex(const Vec<T, N>& x) {
  using P = typename C::value_type;
  return Vec<C, N>::from_parts(convert<P>(x), Vec<P, N>::broadcast(P(0)));
}
}  // namespace detail
#define CCG_CX_CONVERT(C, T, N)                                                      \
  template <> inline Vec<C, N> convert<C, T, N>(const Vec<T, N>& x) {                \
    return detail::real_to_complex<C>(x);                                            \
  }
#define CCG_CX_CONVERT_N(C, T)                                                       \
  CCG_CX_CONVERT(C, T, 1) CCG_CX_CONVERT(C, T, 2) CCG_CX_CONVERT(C, T, 4)            \
  CCG_CX_CONVERT(C, T, 8) CCG_CX_CONVERT(C, T, 16) CCG_CX_CONVERT(C, T, 32)
#define CCG_CX_CONVERT_T(C)                                                          \
  CCG_CX_CONVERT_N(C, float) CCG_CX_CONVERT_N(C, double)                             \
  CCG_CX_CONVERT_N(C, int8_t) CCG_CX_CONVERT_N(C, int16_t)                         \
  CCG_CX_CONVERT_N(C, int32_t) CCG_CX_CONVERT_N(C, int64_t)                        \
  CCG_CX_CONVERT_N(C, uint8_t) CCG_CX_CONVERT_N(C, uint16_t)                       \
  CCG_CX_CONVERT_N(C, uint32_t) CCG_CX_CONVERT_N(C, uint64_t)
CCG_CX_CONVERT_T(c64) CCG_CX_CONVERT_T(c128)
#undef CCG_CX_CONVERT_T
#undef CCG_CX_CONVERT_N
#undef CCG_CX_CONVERT

}  // namespace ccg
