// cppcodegen/scalar.h -- NumPy-exact scalar semantics for generated C++.
//
// Provides, in namespace ccg, for T in {int8..int64, uint8..uint64, float,
// double}:
//   floordiv, mod            NumPy floor_divide / remainder (sign of divisor,
//                            x//0 == x%0 == 0 for ints, MIN//-1 == MIN)
//   power                    ints by squaring (negative exponent -> 0, where
//                            NumPy raises), floats std::pow
//   maximum, minimum         NaN-propagating, ties return b (like NumPy/x86)
//   fmax, fmin               NaN-ignoring, ties return b (like NumPy arrays)
//   sign, abs, square, rint  (integer abs(MIN) wraps to MIN)
//   reciprocal               ints as NumPy: 1.0 / x converted back (1 / 0 -> INT_MIN)
//   left_shift, right_shift  NumPy semantics for counts < 0 or >= bit width
//   isnan, isinf, isfinite, signbit (also for integers)
//   cast<To>(From)           float->int like x86 cvtt (NaN/out of range ->
//                            INT_MIN), float->bool is x != 0
//   ld, st                   element load/store that allows misaligned pointers
// Portable C++17 (one x86 builtin where it is the defined behaviour: cvtt).
#pragma once

#include <omp.h>

#include <cmath>
#if defined(__SSE2__)
#include <immintrin.h>   // (scalar min/max: the SSE instructions)
#endif
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ccg {

template <class T>
using enable_int = std::enable_if_t<std::is_integral_v<T>, int>;
template <class T>
using enable_float = std::enable_if_t<std::is_floating_point_v<T>, int>;

// ---------------------------------------------------------------- memory
// Element loads that allow misaligned pointers: NumPy arrays may be misaligned (np.frombuffer
// at an odd offset, a chunk unpickled from a network frame), and dereferencing a misaligned
// float* is undefined behaviour. A load through a packed struct is one plain mov on x86, and,
// unlike a memcpy (which the compiler turns into an untyped load), keeps the address an affine
// function of the loop that it can analyse: a recurrence `y[i] = f(y[i - 1])` then keeps the
// previous element in a register instead of reading back what it just stored.
template <class T> struct __attribute__((packed, may_alias)) Loose { T v; };
template <class T> inline T ld(const T* p) { return reinterpret_cast<const Loose<T>*>(p)->v; }
template <class T> inline void st(T* p, T v) { std::memcpy(p, &v, sizeof(T)); }

// NumPy's integer indexing of an axis of n elements: a negative index counts from the end;
// one out of range is reported in err (the first one to get there: err = {1, index, n, axis}, the
// caller raises IndexError) and element 0 is read instead, never memory outside the array
// (``counts``: false where Python would not have evaluated the index, as in the second
// operand of `i < n and a[i] > t`). The common case, 0 <= i < n, is one compare and a
// predicted branch, so the address waits on nothing but i (a select of i or i + n on the
// address's path made a histogram loop 1.4x slower); the rest is out of line.
//
// Python stops at the statement that raised: outside a parallel region the rare path throws
// Stop, which the entry (backend/program.py) catches and returns on, so the loops that call
// it test nothing after each statement (a test of err after every kernel made a scalar loop
// like insertion sort 2x slower). On the threads (an OpenMP region, active or not: nothing may
// be thrown out of one) the loop goes on reading element 0 and the error is raised when the
// call returns.
struct Stop {};

// The OpenMP nesting level, declared const: it is the same wherever one function's serial
// code asks (a parallel region's body is a function of its own), so the rare path of a check
// calls nothing the optimizer must assume writes memory, and a load of a loop (an element
// read at each iteration, `w = weights[k]` in the loop around) stays out of it.
__attribute__((const, noinline, cold)) inline int team_level() { return omp_get_level(); }

// err = {1, index, n, axis}, by the first thread to get there.
inline void index_record(int64_t i, int64_t n, int64_t* err, int64_t axis) {
  int64_t zero = 0;
  if (__atomic_compare_exchange_n(err, &zero, int64_t(1), false, __ATOMIC_RELAXED,
                                  __ATOMIC_RELAXED)) {
    err[1] = i;
    err[2] = n;
    err[3] = axis;
  }
}

[[noreturn]] __attribute__((cold, noinline)) inline void index_stop(int64_t i, int64_t n,
                                                                    int64_t* err, int64_t axis) {
  index_record(i, n, err, axis);
  throw Stop{};
}

// The index of one element stored (``x[i] = v`` in a loop): -1 where it is out of range, so
// the store is skipped on a test of a register (on the threads, where nothing stops, a store
// to element 0 would change an array Python leaves as it was).
inline int64_t checked_store_index(int64_t i, int64_t n, int64_t* err, int64_t axis) {
  if (__builtin_expect(static_cast<uint64_t>(i) < static_cast<uint64_t>(n), 1)) return i;
  if (i < 0 && i + n >= 0) return i + n;
  if (team_level() == 0) index_stop(i, n, err, axis);
  index_record(i, n, err, axis);
  return -1;
}
inline int64_t checked_index(int64_t i, int64_t n, int64_t* err, int64_t axis,
                             bool counts = true) {
  if (__builtin_expect(static_cast<uint64_t>(i) < static_cast<uint64_t>(n), 1)) return i;
  if (i < 0 && i + n >= 0) return i + n;
  if (!counts) return 0;
  if (team_level() == 0) index_stop(i, n, err, axis);
  index_record(i, n, err, axis);
  return 0;
}

// Arrays of a loop that traded buffers (``u, un = un, u``): when the entry ends, each one the
// caller gets back (home[i] its own memory; nullptr: not returned) is put into that memory.
// Whatever sits there is swapped out when it is returned too, else overwritten.
template <class T> inline void settle_traded(T** ptr, T* const* home, int k, int64_t n) {
  for (int i = 0; i < k; ++i) {
    if (!home[i] || ptr[i] == home[i]) continue;
    int j = -1;
    for (int m = 0; m < k; ++m)
      if (m != i && ptr[m] == home[i]) j = m;
    if (j >= 0 && home[j]) {
      std::swap_ranges(ptr[i], ptr[i] + n, home[i]);
      ptr[j] = ptr[i];
    } else {
      std::copy(ptr[i], ptr[i] + n, home[i]);
    }
    ptr[i] = home[i];
  }
}

// ---------------------------------------------------------------- classify
template <class T> inline bool isnan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}
template <class T> inline bool isinf(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x == std::numeric_limits<T>::infinity() ||
           x == -std::numeric_limits<T>::infinity();
  else return false;
}
template <class T> inline bool isfinite(T x) {
  if constexpr (std::is_floating_point_v<T>) return x - x == x - x;
  else return true;
}
template <class T> inline bool signbit(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::signbit(x);
  else if constexpr (std::is_signed_v<T>) return x < 0;
  else return false;
}

// ---------------------------------------------------------------- selection without a branch
// c ? a : b as a blend, never a branch: the stores of a flattened `if` in a serial loop
// (backend/predicate.py), whose condition the data decides (a mispredicted branch costs
// more than both sides). GCC turns a `?:` back into a branch; a select of one-lane vectors
// it keeps (blendv with SSE4.1, and/andnot/or before), and integers' masks too.
template <class T> inline T select(bool c, T a, T b) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
    typedef T V __attribute__((vector_size(16)));
    typedef I M __attribute__((vector_size(16)));
    const V va = {a}, vb = {b};
    const M m = {-I(c)};
    return (m ? va : vb)[0];
  } else if constexpr (std::is_integral_v<T>) {     // (bool too)
    using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;
    const U m = U(0) - U(c);
    return T((U(a) & m) | (U(b) & U(~m)));
  } else {
    return c ? a : b;
  }
}
// c ? a : b for the predicated stores of SIMD lanes (backend/predicate.py): GCC's vectorizer
// masks a `?:`, but not one of bools (its bool pattern finds no vector type: a 3x3 erosion's
// `keep = False` under a branch kept the loop scalar, 12x numba): those as and/or.
template <class T> inline T lane_select(bool c, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return (c & a) | (!c & b);
  else return c ? a : b;
}
// c ? a + b : a (a conditional sum) with the select on the addend, so that a loop carrying
// `a` waits for one add per iteration: b or the add's identity in the sum's type (-0.0 for
// floats: x + -0.0 is x for every x, signed zeros and NaNs included).
template <class A, class B> inline auto add_if(bool c, A a, B b) {
  using R = decltype(a + b);
  if constexpr (std::is_floating_point_v<R>) return a + select(c, R(b), R(-0.0));
  else if constexpr (std::is_integral_v<R>) return a + select(c, R(b), R(0));
  else return select(c, R(a + b), R(a));
}
// c ? a - b : a likewise (x - +0.0 is x for every x)
template <class A, class B> inline auto sub_if(bool c, A a, B b) {
  using R = decltype(a - b);
  if constexpr (std::is_arithmetic_v<R>) return a - select(c, R(b), R(0));
  else return select(c, R(a - b), R(a));
}

// ---------------------------------------------------------------- division
// Integer floor division: x // 0 == 0, MIN // -1 == MIN (wraps).
// Does a * b of two Python ints (int64) fit int64? (the overflow flag of one multiply)
inline bool mul_fits(int64_t a, int64_t b) {
  int64_t r;
  return !__builtin_mul_overflow(a, b, &r);
}

namespace detail {
// a / b and a % b (b != 0, not MIN / -1) of 64-bit integers that both fit 32 unsigned bits
// with the 32-bit divide: a 64-bit idiv takes 40 to 90 cycles on Intel cores before Ice
// Lake, the 32-bit one about 26 (a trial division loop, primes to 2*10^5: 24.6 -> 15.0 ms,
// Numba 15.1, which LLVM gives the same test).
// The test is one OR and a shift; other types divide as they are.
template <class T> inline void divide(T a, T b, T& q, T& r) {
  if constexpr (sizeof(T) == 8) {
    using U = std::make_unsigned_t<T>;
    if (((U(a) | U(b)) >> 32) == 0) {
      const uint32_t a32 = uint32_t(a), b32 = uint32_t(b);
      q = T(a32 / b32);
      r = T(a32 % b32);
      return;
    }
  }
  q = T(a / b);
  r = T(a % b);
}
}  // namespace detail

template <class T, enable_int<T> = 0> inline T floordiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
  }
  T q, r;
  detail::divide(a, b, q, r);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((a < 0) != (b < 0))) q = T(q - 1);
  }
  return q;
}

// Integer remainder with the sign of the divisor: x % 0 == 0.
template <class T, enable_int<T> = 0> inline T mod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return 0;
  }
  T q, r;
  detail::divide(a, b, q, r);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
  }
  return r;
}

namespace detail {
// NumPy's npy_divmod: returns floor quotient, stores remainder.
template <class T> inline T npy_divmod(T a, T b, T* modulus) {
  T m = std::fmod(a, b);
  if (b == 0) {
    *modulus = m;
    return a / b;
  }
  T div = (a - m) / b;
  if (m != 0) {
    if ((b < 0) != (m < 0)) {
      m += b;
      div -= T(1);
    }
  } else {
    m = std::copysign(T(0), b);
  }
  T fdiv;
  if (div != 0) {
    fdiv = std::floor(div);
    if (div - fdiv > T(0.5)) fdiv += T(1);
  } else {
    fdiv = std::copysign(T(0), a / b);
  }
  *modulus = m;
  return fdiv;
}
}  // namespace detail

template <class T, enable_float<T> = 0> inline T floordiv(T a, T b) {
  if (b == 0) return a / b;
  T m;
  return detail::npy_divmod(a, b, &m);
}

template <class T, enable_float<T> = 0> inline T mod(T a, T b) {
  if (b == 0) return std::fmod(a, b);
  T m;
  detail::npy_divmod(a, b, &m);
  return m;
}

// C's truncated remainder, as np.fmod: the sign of the dividend; x fmod 0 is 0 for
// integers (NumPy warns) and NaN for floats; INT_MIN fmod -1 is 0.
template <class T, enable_int<T> = 0> inline T fmod(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  T q, r;
  detail::divide(a, b, q, r);
  return r;
}
template <class T, enable_float<T> = 0> inline T fmod(T a, T b) { return std::fmod(a, b); }

// a > b ? a : b and a < b ? a : b: for float and double the SSE max/min instructions
// themselves, which return b wherever the compare is false (a NaN, a tie). g++ with
// -fno-trapping-math compiled the `?:` as a compare and a branch, mispredicted half the time
// on random data (np.minimum(lut[codes] * g, 1.0): 4x slower).
template <class T> inline T greater_of(T a, T b) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) return _mm_cvtss_f32(_mm_max_ss(_mm_set_ss(a), _mm_set_ss(b)));
  if constexpr (std::is_same_v<T, double>) return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(a), _mm_set_sd(b)));
#endif
  return a > b ? a : b;
}
template <class T> inline T less_of(T a, T b) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) return _mm_cvtss_f32(_mm_min_ss(_mm_set_ss(a), _mm_set_ss(b)));
  if constexpr (std::is_same_v<T, double>) return _mm_cvtsd_f64(_mm_min_sd(_mm_set_sd(a), _mm_set_sd(b)));
#endif
  return a < b ? a : b;
}

// np.clip: x itself unless it is below lo (then lo) or above hi (then hi), applied in that
// order; NaN anywhere gives NaN; ties keep x (clip(-0.0, 0.0, 1.0) is -0.0).
template <class T> inline T clip(T x, T lo, T hi) {
  if constexpr (std::is_floating_point_v<T>) {
    if (x != x || lo != lo || hi != hi) return x + lo + hi;
  }
  const T t = greater_of(lo, x);      // (lo > x ? lo : x)
  return less_of(hi, t);              // (hi < t ? hi : t)
}

// ---------------------------------------------------------------- reciprocal
// 1 / x. Integers as NumPy computes them: 1.0 / x in double, converted back like x86 cvtt,
// so 1 / 0 is INT_MIN for int32/int64 (0 for narrower and unsigned types), 1 / +-1 is +-1,
// everything else 0 (no integer division by zero).
template <class T> inline T reciprocal(T x);

// ---------------------------------------------------------------- power
namespace detail {
// a * b wrapping modulo 2^bits, for unsigned U. uint8_t/uint16_t operands would be promoted
// to (signed) int, where 65535 * 65535 overflows: they are widened to unsigned int first.
template <class U> inline U mul_wrap(U a, U b) {
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return U(W(a) * W(b));
}
}  // namespace detail

// Integer power by squaring, wrapping on overflow. A negative exponent
// returns 0 (NumPy raises ValueError instead).
template <class T, enable_int<T> = 0> inline T power(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) return 0;
  }
  U base = U(a), result = 1;
  U e = U(b);
  while (e) {
    if (e & 1) result = detail::mul_wrap(result, base);
    base = detail::mul_wrap(base, base);
    e >>= 1;
  }
  return T(result);
}
template <class T, enable_float<T> = 0> inline T power(T a, T b) {
  return std::pow(a, b);
}
// Python's float ** (scalar code): the C library's pow even for a constant exponent, which GCC
// would fold (pow(x, 2.0) into x * x, not always pow's bits: 1.885376393636725 ** 2).
inline double libm_pow(double a, double b) {
  asm("" : "+x"(b));    // (the exponent hidden from the folding)
  return std::pow(a, b);
}

// ---------------------------------------------------------------- min/max
// maximum: NaN in a -> a, NaN in b -> b, else a > b ? a : b (ties give b).
template <class T> inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
  }
  return greater_of(a, b);
}
template <class T> inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
  }
  return less_of(a, b);
}
// fmax/fmin ignore a NaN operand; ties give b (as NumPy's SIMD array loops).
template <class T> inline T fmax(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b != b) return a;
  }
  return greater_of(a, b);
}
template <class T> inline T fmin(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b != b) return a;
  }
  return less_of(a, b);
}

// ---------------------------------------------------------------- unary
// sign: -1, 0 (+0 for ±0) or 1; NaN for NaN.
template <class T> inline T sign(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if (x > 0) return T(1);
    if (x < 0) return T(-1);
    if (x == 0) return T(0);
    return x;
  } else if constexpr (std::is_signed_v<T>) {
    return T((x > 0) - (x < 0));
  } else {
    return T(x > 0);
  }
}

// abs: integer MIN wraps to MIN.
template <class T> inline T abs(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(x);
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return x < 0 ? T(U(0) - U(x)) : x;
  } else {
    return x;
  }
}

template <class T> inline T square(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(detail::mul_wrap(U(x), U(x)));
  } else {
    return x * x;
  }
}

// rint: round half to even (default rounding mode).
template <class T> inline T rint(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::nearbyint(x);
  else return x;
}

// ---------------------------------------------------------------- shifts
// Counts outside [0, bits) give 0 for left shifts; for right shifts they
// give -1 for negative a and 0 otherwise.
template <class T, enable_int<T> = 0> inline T left_shift(T a, T b) {
  constexpr int bits = int(sizeof(T) * 8);
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) return 0;
  }
  if (b >= T(bits)) return 0;
  return T(U(U(a) << b));
}
template <class T, enable_int<T> = 0> inline T right_shift(T a, T b) {
  constexpr int bits = int(sizeof(T) * 8);
  if constexpr (std::is_signed_v<T>) {
    if (b < 0 || b >= T(bits)) return a < 0 ? T(-1) : T(0);
  } else {
    if (b >= T(bits)) return 0;
  }
  return T(a >> b);
}

// ---------------------------------------------------------------- casts
namespace detail {
// Truncating float->int64/int32 with x86 cvtt behaviour: NaN and values
// outside the range give the minimum integer.
template <class I, class F> inline I cvtt(F x) {
#if defined(__x86_64__) && defined(__SSE2__)   // the instruction itself (one uop) has
  typedef double d2 __attribute__((vector_size(16)));      // that behaviour
  typedef float f4 __attribute__((vector_size(16)));
  if constexpr (sizeof(I) == 8 && std::is_same_v<F, double>)
    return I(__builtin_ia32_cvttsd2si64(d2{x, 0.0}));
  if constexpr (sizeof(I) == 8 && std::is_same_v<F, float>)
    return I(__builtin_ia32_cvttss2si64(f4{x, 0.f, 0.f, 0.f}));
#endif
  constexpr F lo = -F(std::numeric_limits<I>::max()) - F(1);  // -2^(bits-1)
  if (x >= lo && x < -lo) return I(x);
  return std::numeric_limits<I>::min();
}
}  // namespace detail

template <class To, class From> inline To cast(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (std::is_same_v<To, uint64_t>) {
      // values >= 2^63 are shifted into the int64 range first (as NumPy)
      constexpr From two63 = From(9223372036854775808.0);
      if (x >= two63) return uint64_t(detail::cvtt<int64_t>(x - two63)) ^ (uint64_t(1) << 63);
      return uint64_t(detail::cvtt<int64_t>(x));
    } else if constexpr (sizeof(To) == 8) {
      return To(detail::cvtt<int64_t>(x));
    } else if constexpr (std::is_same_v<To, uint32_t>) {
      return To(detail::cvtt<int64_t>(x));  // wraps like NumPy for -2^63 < x < 2^63
    } else {
      return To(detail::cvtt<int32_t>(x));  // int32 and narrower wrap from int32
    }
  } else {
    return static_cast<To>(x);
  }
}

template <class T> inline T reciprocal(T x) {
  if constexpr (std::is_floating_point_v<T>) return T(1) / x;
  else return cast<T>(1.0 / double(x));
}

}  // namespace ccg

#include "cppcodegen/pyround.h"   // Python's round(x, ndigits) of a float
#include "cppcodegen/segment.h"   // np.<ufunc>.reduceat helpers
#include "cppcodegen/counting.h"  // np.searchsorted / np.bincount helpers
