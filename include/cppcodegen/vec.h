// cppcodegen/vec.h -- fixed-width SIMD vectors for generated C++ kernels.
//
// Provides, in namespace ccg:
//   CCG_VEC_BYTES          64 (AVX-512), 32 (AVX2) or 16 (portable fallback)
//   Vec<T, N>              N lanes of T: float, double or an integer of 1, 2, 4 or
//                          8 bytes (N a power of two; 4, 8, 16 in generated code:
//                          narrow integers take the lane count of 32-bit values)
//   Mask<N>                N booleans: a bitmask (AVX-512, portable) or -1/0 lanes (AVX2)
//   arithmetic, bitwise and comparison operators, select, maximum/minimum
//   (NumPy NaN rules), math functions (libmvec on x86), conversions,
//   floordiv/mod and horizontal reductions.  Lane semantics follow
//   cppcodegen/scalar.h (NumPy).
//
// Implementation: with GCC/Clang and AVX2 or AVX-512 the value is a GCC
// vector extension (lowered to zmm/ymm/xmm registers) and a few operations
// use intrinsics (masked loads/stores, blends, masks, rounding, libmvec).
// Otherwise, or with -DCCG_NO_SIMD, a portable array-of-lanes fallback is
// used (no intrinsics, no extensions).  Generated code must link -lmvec.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "scalar.h"

#if !defined(CCG_NO_SIMD) && defined(__GNUC__) && defined(__x86_64__) && \
    (defined(__AVX512F__) || defined(__AVX2__))
#define CCG_HAVE_SIMD 1
#include <immintrin.h>
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__) && \
    defined(__AVX512BW__)
#define CCG_HAVE_AVX512 1
#endif
#endif

#ifndef CCG_VEC_BYTES
#if defined(CCG_HAVE_SIMD) && defined(__AVX512F__)
#define CCG_VEC_BYTES 64
#elif defined(CCG_HAVE_SIMD)
#define CCG_VEC_BYTES 32
#else
#define CCG_VEC_BYTES 16
#endif
#endif

// Functions taken from libmvec (unary "v" and binary "vv" variants).
#define CCG_MVEC_ALL(X)                                                   \
  X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sin) X(cos) \
  X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh)        \
  X(acosh) X(atanh)
#define CCG_MVEC_ALL2(X) X(atan2) X(hypot) X(pow)

// ------------------------------------------------------------ libmvec ABI
#ifdef CCG_HAVE_SIMD
#ifdef __AVX512F__
#define CCG_MVEC_DECL512(fn, v)                                   \
  extern "C" __m512 _ZGVeN16##v##_##fn##f(CCG_MVEC_ARGS_##v(__m512)); \
  extern "C" __m512d _ZGVeN8##v##_##fn(CCG_MVEC_ARGS_##v(__m512d));
#else
#define CCG_MVEC_DECL512(fn, v)
#endif
#define CCG_MVEC_ARGS_v(t) t
#define CCG_MVEC_ARGS_vv(t) t, t
#define CCG_MVEC_DECL(fn, v)                                      \
  CCG_MVEC_DECL512(fn, v)                                         \
  extern "C" __m256 _ZGVdN8##v##_##fn##f(CCG_MVEC_ARGS_##v(__m256));  \
  extern "C" __m256d _ZGVdN4##v##_##fn(CCG_MVEC_ARGS_##v(__m256d)); \
  extern "C" __m128 _ZGVbN4##v##_##fn##f(CCG_MVEC_ARGS_##v(__m128));  \
  extern "C" __m128d _ZGVbN2##v##_##fn(CCG_MVEC_ARGS_##v(__m128d));
#define CCG_MVEC_DECL1(fn) CCG_MVEC_DECL(fn, v)
#define CCG_MVEC_DECL2(fn) CCG_MVEC_DECL(fn, vv)
CCG_MVEC_ALL(CCG_MVEC_DECL1)
CCG_MVEC_ALL2(CCG_MVEC_DECL2)
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ccg {

template <class T, int N> struct Vec;
template <int N> struct Mask;

namespace detail {

template <int S> struct int_of_size;
template <> struct int_of_size<1> { using type = int8_t; };
template <> struct int_of_size<2> { using type = int16_t; };
template <> struct int_of_size<4> { using type = int32_t; };
template <> struct int_of_size<8> { using type = int64_t; };
template <class T> using int_of = typename int_of_size<sizeof(T)>::type;
// the integer of S bytes with T's signedness
template <class T, int S> using resized_int = std::conditional_t<
    std::is_signed_v<T>, typename int_of_size<S>::type,
    std::make_unsigned_t<typename int_of_size<S>::type>>;

#ifdef CCG_HAVE_SIMD
// GCC vector extension holding N lanes of T.
template <class T, int N> struct reg {
  typedef T type __attribute__((vector_size(N * sizeof(T))));
};
template <class M, class V> inline V blend(M m, V a, V b) { return m ? a : b; }
template <class R, class V> inline R convertv(V a) {
  return __builtin_convertvector(a, R);
}
#else
// Portable stand-in for a vector extension: array of lanes with lane-wise
// operators; comparisons give -1 / 0 lanes of the same-width integer.
template <class T, int N> struct Arr {
  T a[N];
  T& operator[](int i) { return a[i]; }
  const T& operator[](int i) const { return a[i]; }
};
#define CCG_ARR_BINOP(op)                                                \
  template <class T, int N>                                              \
  inline Arr<T, N> operator op(const Arr<T, N>& x, const Arr<T, N>& y) { \
    Arr<T, N> r;                                                         \
    for (int i = 0; i < N; ++i) r.a[i] = T(x.a[i] op y.a[i]);            \
    return r;                                                            \
  }
CCG_ARR_BINOP(+) CCG_ARR_BINOP(-) CCG_ARR_BINOP(*) CCG_ARR_BINOP(/)
CCG_ARR_BINOP(&) CCG_ARR_BINOP(|) CCG_ARR_BINOP(^)
#undef CCG_ARR_BINOP
#define CCG_ARR_CMP(op)                                                \
  template <class T, int N>                                            \
  inline Arr<int_of<T>, N> operator op(const Arr<T, N>& x,             \
                                       const Arr<T, N>& y) {           \
    Arr<int_of<T>, N> r;                                               \
    for (int i = 0; i < N; ++i) r.a[i] = (x.a[i] op y.a[i]) ? -1 : 0;  \
    return r;                                                          \
  }
CCG_ARR_CMP(==) CCG_ARR_CMP(!=) CCG_ARR_CMP(<) CCG_ARR_CMP(<=)
CCG_ARR_CMP(>) CCG_ARR_CMP(>=)
#undef CCG_ARR_CMP
template <class T, int N> inline Arr<T, N> operator-(const Arr<T, N>& x) {
  Arr<T, N> r;
  for (int i = 0; i < N; ++i) r.a[i] = T(-x.a[i]);
  return r;
}
template <class T, int N> inline Arr<T, N> operator~(const Arr<T, N>& x) {
  Arr<T, N> r;
  for (int i = 0; i < N; ++i) r.a[i] = T(~x.a[i]);
  return r;
}
template <class T, int N> struct reg { using type = Arr<T, N>; };
template <class I, class T, int N>
inline Arr<T, N> blend(const Arr<I, N>& m, const Arr<T, N>& a,
                       const Arr<T, N>& b) {
  Arr<T, N> r;
  for (int i = 0; i < N; ++i) r.a[i] = m.a[i] ? a.a[i] : b.a[i];
  return r;
}
template <class R, class T, int N> inline R convertv(const Arr<T, N>& x) {
  R r;
  for (int i = 0; i < N; ++i) r.a[i] = decltype(r.a[0] + 0)(x.a[i]);
  return r;
}
#endif

template <class V> using elem_t = std::remove_cv_t<std::remove_reference_t<
    decltype(std::declval<V&>()[0])>>;

// x in every lane. For a GCC vector type, ``x - V{}`` (x - 0 is x for every value, -0.0 and
// NaN included; GCC folds it): one broadcast instruction. The lane-by-lane loop became one
// masked broadcast per lane (SLP vectorization is off in our builds), 15 instructions for an
// AVX-512 double vector, in inner loops too (a column reduction's y[i] * A[i, j]).
template <class V> inline V splat(elem_t<V> x) {
  if constexpr (std::is_class_v<V>) {
    V r;
    for (int i = 0; i < int(sizeof(V) / sizeof(x)); ++i) r[i] = x;
    return r;
  } else {
    return x - V{};
  }
}

// An AVX-512 comparison's k register as a 32-bit value the compiler cannot see into. GCC 12
// can spill an 8-lane mask as one byte and reload it as a quadword, then skip the `& 0xff`
// it believes redundant: stack garbage in the upper bits wrote wrong bools. Through the asm,
// the value is an opaque 32-bit integer, spilled and masked as one.
template <class K> inline uint32_t kbits(K k) {
  uint32_t b = k;
  asm("" : "+r"(b));
  return b;
}

// -1/0 integer lanes -> bitmask (lane i -> bit i).
template <int N, class V> inline uint32_t tobits(const V& m) {
  constexpr int bytes = int(sizeof(V));
  constexpr int es = bytes / N;
  (void)es;
#ifdef CCG_HAVE_SIMD
  if constexpr (bytes > CCG_VEC_BYTES) {
    typedef elem_t<V> E;
    typedef E H __attribute__((vector_size(bytes / 2)));
    H lo, hi;
    std::memcpy(&lo, &m, bytes / 2);
    std::memcpy(&hi, reinterpret_cast<const char*>(&m) + bytes / 2, bytes / 2);
    return tobits<N / 2>(lo) | (tobits<N / 2>(hi) << (N / 2));
  }
  else if constexpr (es < 4 && bytes < 16) {  // 4 or 8 narrow lanes: zero-extend to 16 bytes
    typedef elem_t<V> E;
    typedef E W __attribute__((vector_size(16)));
    W w = {};
    std::memcpy(&w, &m, bytes);
    return tobits<16 / es>(w) & ((uint32_t(1) << N) - 1u);
  }
#ifdef CCG_HAVE_AVX512
  else if constexpr (bytes == 32 && es == 1) return kbits(_mm256_movepi8_mask((__m256i)m));
  else if constexpr (bytes == 16 && es == 1) return kbits(_mm_movepi8_mask((__m128i)m));
  else if constexpr (bytes == 64 && es == 2) return kbits(_mm512_movepi16_mask((__m512i)m));
  else if constexpr (bytes == 32 && es == 2) return kbits(_mm256_movepi16_mask((__m256i)m));
  else if constexpr (bytes == 16 && es == 2) return kbits(_mm_movepi16_mask((__m128i)m));
  else if constexpr (bytes == 64 && es == 4) return kbits(_mm512_movepi32_mask((__m512i)m));
  else if constexpr (bytes == 64 && es == 8) return kbits(_mm512_movepi64_mask((__m512i)m));
  else if constexpr (bytes == 32 && es == 4) return kbits(_mm256_movepi32_mask((__m256i)m));
  else if constexpr (bytes == 32 && es == 8) return kbits(_mm256_movepi64_mask((__m256i)m));
  else if constexpr (bytes == 16 && es == 4) return kbits(_mm_movepi32_mask((__m128i)m));
  else if constexpr (bytes == 16 && es == 8) return kbits(_mm_movepi64_mask((__m128i)m));
#else
  else if constexpr (bytes == 32 && es == 1) return uint32_t(_mm256_movemask_epi8((__m256i)m));
  else if constexpr (bytes == 16 && es == 1) return uint32_t(_mm_movemask_epi8((__m128i)m));
  else if constexpr (bytes == 32 && es == 2)
    return uint32_t(_mm_movemask_epi8(_mm_packs_epi16(_mm256_castsi256_si128((__m256i)m),
                                                      _mm256_extracti128_si256((__m256i)m, 1))));
  else if constexpr (bytes == 16 && es == 2)
    return uint32_t(_mm_movemask_epi8(_mm_packs_epi16((__m128i)m, _mm_setzero_si128()))) & 0xffu;
  else if constexpr (bytes == 32 && es == 4) return uint32_t(_mm256_movemask_ps((__m256)m));
  else if constexpr (bytes == 32 && es == 8) return uint32_t(_mm256_movemask_pd((__m256d)m));
  else if constexpr (bytes == 16 && es == 4) return uint32_t(_mm_movemask_ps((__m128)m));
  else if constexpr (bytes == 16 && es == 8) return uint32_t(_mm_movemask_pd((__m128d)m));
#endif
  else
#endif
  {
    uint32_t b = 0;
    for (int i = 0; i < N; ++i) b |= uint32_t(m[i] != 0) << i;
    return b;
  }
}

// bitmask -> -1/0 integer lanes of type V (integer vector).
template <class V> inline V frombits(uint32_t bits) {
  using E = elem_t<V>;
  constexpr int n = int(sizeof(V) / sizeof(E));
#if defined(CCG_HAVE_SIMD) && !defined(CCG_HAVE_AVX512)
  // AVX2, narrow lanes: each lane picks its byte of the bits (pshufb), tests its own bit
  if constexpr (sizeof(E) == 1 && sizeof(V) == 16) {
    const __m128i sel = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const __m128i b = _mm_shuffle_epi8(_mm_cvtsi32_si128(int(bits)),
                                       _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
    return (V)_mm_cmpeq_epi8(_mm_and_si128(b, sel), sel);
  } else if constexpr (sizeof(E) == 1 && sizeof(V) == 32) {
    const __m256i sel = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128,
                                         1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const __m256i b = _mm256_shuffle_epi8(
        _mm256_set1_epi32(int(bits)),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                         2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    return (V)_mm256_cmpeq_epi8(_mm256_and_si256(b, sel), sel);
  } else if constexpr (sizeof(E) == 2 && sizeof(V) == 16) {
    const __m128i sel = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
    const __m128i b = _mm_set1_epi16(short(bits));
    return (V)_mm_cmpeq_epi16(_mm_and_si128(b, sel), sel);
  } else if constexpr (sizeof(E) == 2 && sizeof(V) == 32) {
    const __m256i sel = _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048,
                                          4096, 8192, 16384, -32768);
    const __m256i b = _mm256_set1_epi16(short(bits));
    return (V)_mm256_cmpeq_epi16(_mm256_and_si256(b, sel), sel);
  } else
#endif
  if constexpr (sizeof(E) < 4) {  // narrow lanes cannot hold bit i: widen, compare, narrow
    return convertv<V>(frombits<typename reg<int32_t, n>::type>(bits));
  } else {
    V lanebit;
    for (int i = 0; i < n; ++i) lanebit[i] = E(E(1) << i);
    return (splat<V>(E(bits)) & lanebit) != splat<V>(E(0));
  }
}

inline uint32_t low_bits(int64_t n) {
  return n >= 32 ? 0xffffffffu : (n <= 0 ? 0u : (uint32_t(1) << n) - 1u);
}

// Up to 8 bool bytes (0/1) <-> bits, reading/writing exactly n bytes.
inline uint32_t bools_to_bits(const bool* p, int n) {
  uint64_t x = 0;
  std::memcpy(&x, p, size_t(n));  // little-endian: byte i at bits 8i
  return uint32_t(((x & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56);
}
inline void bits_to_bools(uint32_t bits, bool* p, int n) {
  uint64_t x = uint64_t(bits & 0xffu) * 0x0101010101010101ull;
  x = (((x & 0x8040201008040201ull) + 0x7f7f7f7f7f7f7f7full) >> 7) &
      0x0101010101010101ull;
  std::memcpy(p, &x, size_t(n));
}

}  // namespace detail

// =================================================================== Mask
// AVX-512 (and the portable build): a bitmask, lane i is bit i (k registers). AVX2: a vector
// of -1/0 lanes, N of them in one 32-byte register (8-byte lanes at most), as a compare
// gives them: a compare feeding a select of the same width is a compare and a blend, with no
// bitmask round trip (movemask, broadcast, and, compare: five instructions each way).
#if defined(CCG_HAVE_SIMD) && !defined(CCG_HAVE_AVX512)
#define CCG_LANE_MASK 1
#endif
namespace detail {
template <int N> constexpr int mask_lane_bytes = 32 / N > 8 ? 8 : (32 / N < 1 ? 1 : 32 / N);

#ifdef CCG_LANE_MASK
template <class R, class V> inline R raw(const V& x) {
  R r;
  std::memcpy(&r, &x, sizeof(R));
  return r;
}
// -1/0 lanes of V as lanes of R (the same count, another width). GCC's convertvector splits
// a widening into halves (4 instructions for one vpmovsxdq): the common cases by hand
// (sign extension; narrowing by signed saturation or a shuffle, exact for -1/0).
template <class R, class V> inline R mask_convert(const V& m) {
  constexpr int vb = int(sizeof(V)), rb = int(sizeof(R));
  constexpr int ve = int(sizeof(elem_t<V>)), re = int(sizeof(elem_t<R>));
  if constexpr (vb == rb && ve == re) {
    return raw<R>(m);
  } else if constexpr (vb == 16 && rb == 32) {          // widen one 128-bit register
    const __m128i x = raw<__m128i>(m);
    if constexpr (ve == 4 && re == 8) return (R)_mm256_cvtepi32_epi64(x);
    else if constexpr (ve == 2 && re == 4) return (R)_mm256_cvtepi16_epi32(x);
    else if constexpr (ve == 1 && re == 2) return (R)_mm256_cvtepi8_epi16(x);
    else return convertv<R>(m);
  } else if constexpr (vb == 8 && rb == 32 && ve == 1 && re == 4) {
    return (R)_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&m)));
  } else if constexpr (vb == 8 && rb == 32 && ve == 2 && re == 8) {
    return (R)_mm256_cvtepi16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&m)));
  } else if constexpr (vb == 32 && rb == 16) {          // narrow into 128 bits
    const __m256i x = raw<__m256i>(m);
    const __m128i lo = _mm256_castsi256_si128(x), hi = _mm256_extracti128_si256(x, 1);
    if constexpr (ve == 8 && re == 4)
      return raw<R>(_mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(lo), _mm_castsi128_ps(hi),
                                                    _MM_SHUFFLE(2, 0, 2, 0))));
    else if constexpr (ve == 4 && re == 2) return raw<R>(_mm_packs_epi32(lo, hi));
    else if constexpr (ve == 2 && re == 1) return raw<R>(_mm_packs_epi16(lo, hi));
    else return convertv<R>(m);
  } else if constexpr (vb == 32 && rb == 8 && ve == 4 && re == 1) {
    const __m256i x = raw<__m256i>(m);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    return raw<R>(_mm_packs_epi16(w, w));
  } else if constexpr (vb == 64 && rb == 32) {          // narrow two registers into one
    struct Two { __m256i a, b; };
    const Two x = raw<Two>(m);
    if constexpr (ve == 8 && re == 4) {
      const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
      return (R)_mm256_blend_epi32(_mm256_permutevar8x32_epi32(x.a, idx),
                                   _mm256_permutevar8x32_epi32(x.b, idx), 0xf0);
    } else if constexpr (ve == 4 && re == 2) {
      return (R)_mm256_permute4x64_epi64(_mm256_packs_epi32(x.a, x.b), 0xd8);
    } else if constexpr (ve == 2 && re == 1) {
      return (R)_mm256_permute4x64_epi64(_mm256_packs_epi16(x.a, x.b), 0xd8);
    } else {
      return convertv<R>(m);
    }
  } else if constexpr (vb == 32 && rb == 64) {          // widen one register into two
    struct Two { __m256i a, b; };
    const __m256i x = raw<__m256i>(m);
    const __m128i lo = _mm256_castsi256_si128(x), hi = _mm256_extracti128_si256(x, 1);
    if constexpr (ve == 4 && re == 8)
      return raw<R>(Two{_mm256_cvtepi32_epi64(lo), _mm256_cvtepi32_epi64(hi)});
    else if constexpr (ve == 2 && re == 4)
      return raw<R>(Two{_mm256_cvtepi16_epi32(lo), _mm256_cvtepi16_epi32(hi)});
    else if constexpr (ve == 1 && re == 2)
      return raw<R>(Two{_mm256_cvtepi8_epi16(lo), _mm256_cvtepi8_epi16(hi)});
    else return convertv<R>(m);
  } else {
    return convertv<R>(m);
  }
}
#endif
}  // namespace detail

template <int N> struct Mask {
  static_assert(N >= 1 && N <= 32, "Mask<N>: 1 <= N <= 32");
  static constexpr uint32_t full = N >= 32 ? 0xffffffffu : (uint32_t(1) << N) - 1u;
#ifdef CCG_LANE_MASK
  using LV = typename detail::reg<typename detail::int_of_size<detail::mask_lane_bytes<N>>::type,
                                  N>::type;
  LV v;  // lane i: -1 (set) or 0

  static Mask from_bits(uint32_t b) { return Mask{detail::frombits<LV>(b & full)}; }
  // from -1/0 lanes of any width (a compare's result), and to them
  template <class IV> static Mask from_lanes(const IV& m) {
    return Mask{detail::mask_convert<LV>(m)};
  }
  template <class IV> IV lanes() const { return detail::mask_convert<IV>(v); }
  uint32_t to_bits() const { return detail::tobits<N>(v); }
  static Mask broadcast(bool b) {
    return Mask{detail::splat<LV>(b ? detail::elem_t<LV>(-1) : detail::elem_t<LV>(0))};
  }
#else
  uint32_t bits;  // lane i is bit i; bits above N are always 0

  static Mask from_bits(uint32_t b) { return Mask{b & full}; }
  template <class IV> static Mask from_lanes(const IV& m) { return Mask{detail::tobits<N>(m)}; }
  template <class IV> IV lanes() const { return detail::frombits<IV>(bits); }
  uint32_t to_bits() const { return bits; }
  static Mask broadcast(bool b) { return Mask{b ? full : 0u}; }
#endif
  static Mask load_partial(const bool* p, int64_t n) {
    uint32_t b = 0;
    for (int i = 0; i < n && i < N; i += 8) {
      int k = int(n - i < 8 ? n - i : 8);
      b |= detail::bools_to_bits(p + i, k) << i;
    }
    return from_bits(b);
  }
  // N bools (bytes 0/1): a compare of the bytes with zero where a register holds them
  // (load_partial's loop, not unrolled, copied 8 bytes at a time through the stack: a Game
  // of Life step read its board at a quarter of NumPy's speed), else 8 at a time
  static Mask load(const bool* p) {
#if defined(CCG_HAVE_AVX512)
    if constexpr (N == 32) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      return Mask{uint32_t(_mm256_test_epi8_mask(x, x))};
    } else if constexpr (N == 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return Mask{uint32_t(_mm_test_epi8_mask(x, x))};
    }
#elif defined(CCG_LANE_MASK)
    if constexpr (N == 32) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      return Mask{detail::raw<LV>(_mm256_cmpgt_epi8(x, _mm256_setzero_si256()))};
    } else if constexpr (N == 16) {
      const __m256i x = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      return Mask{detail::raw<LV>(_mm256_cmpgt_epi16(x, _mm256_setzero_si256()))};
    } else if constexpr (N == 8) {
      const __m256i x = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
      return Mask{detail::raw<LV>(_mm256_cmpgt_epi32(x, _mm256_setzero_si256()))};
    }
#endif
    uint32_t b = 0;
#pragma GCC unroll 4
    for (int i = 0; i < N; i += 8) b |= detail::bools_to_bits(p + i, N - i < 8 ? N - i : 8) << i;
    return from_bits(b);
  }
  static Mask load_strided_partial(const bool* p, int64_t stride, int64_t n) {
    if (stride == 1) return load_partial(p, n);
    uint32_t b = 0;
    for (int i = 0; i < n && i < N; ++i) b |= uint32_t(p[i * stride]) << i;
    return from_bits(b);
  }
  static Mask load_strided(const bool* p, int64_t stride) {
    return load_strided_partial(p, stride, N);
  }
  void store_partial(bool* p, int64_t n) const {
    const uint32_t bits = to_bits();
    for (int i = 0; i < n && i < N; i += 8)
      detail::bits_to_bools(bits >> i, p + i, int(n - i < 8 ? n - i : 8));
  }
  void store(bool* p) const { store_partial(p, N); }
  bool any() const { return to_bits() != 0; }
  bool all() const { return to_bits() == full; }
  int64_t count() const {
#ifdef __GNUC__
    return __builtin_popcount(to_bits());
#else
    int64_t c = 0;
    for (uint32_t b = to_bits(); b; b &= b - 1) ++c;
    return c;
#endif
  }
  bool lane(int i) const { return (to_bits() >> i) & 1u; }
};

#ifdef CCG_LANE_MASK
template <int N> inline Mask<N> operator&(Mask<N> a, Mask<N> b) { return Mask<N>{a.v & b.v}; }
template <int N> inline Mask<N> operator|(Mask<N> a, Mask<N> b) { return Mask<N>{a.v | b.v}; }
template <int N> inline Mask<N> operator^(Mask<N> a, Mask<N> b) { return Mask<N>{a.v ^ b.v}; }
template <int N> inline Mask<N> operator~(Mask<N> a) { return Mask<N>{~a.v}; }
#else
template <int N> inline Mask<N> operator&(Mask<N> a, Mask<N> b) { return Mask<N>{a.bits & b.bits}; }
template <int N> inline Mask<N> operator|(Mask<N> a, Mask<N> b) { return Mask<N>{a.bits | b.bits}; }
template <int N> inline Mask<N> operator^(Mask<N> a, Mask<N> b) { return Mask<N>{a.bits ^ b.bits}; }
template <int N> inline Mask<N> operator~(Mask<N> a) { return Mask<N>{~a.bits & Mask<N>::full}; }
#endif
// lane-wise equality of masks (returns a Mask, like Vec comparisons)
template <int N> inline Mask<N> operator==(Mask<N> a, Mask<N> b) { return ~(a ^ b); }
template <int N> inline Mask<N> operator!=(Mask<N> a, Mask<N> b) { return a ^ b; }

// =================================================================== Vec
template <class T, int N> struct Vec {
  // float, double, or an integer of 1, 2, 4 or 8 bytes, signed or unsigned
  static_assert(std::is_integral_v<T> ? !std::is_same_v<T, bool>
                                      : (std::is_same_v<T, float> || std::is_same_v<T, double>),
                "Vec<T,N>: T must be float, double or a fixed-width integer");
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "Vec<T,N>: N power of 2");
  using value_type = T;
  using V = typename detail::reg<T, N>::type;
  static constexpr int size = N;
  static constexpr int bytes = N * int(sizeof(T));

  V v;

  static Vec from(V x) { Vec r; r.v = x; return r; }
  static Vec load(const T* p) { Vec r; std::memcpy(&r.v, p, sizeof(V)); return r; }
  static Vec broadcast(T x) { return from(detail::splat<V>(x)); }
  static Vec iota(T start) {
    Vec r;
    for (int i = 0; i < N; ++i) r.v[i] = T(start + T(i));
    return r;
  }
  static Vec load_partial(const T* p, int64_t n);
  static Vec load_strided_partial(const T* p, int64_t stride, int64_t n) {
    if (stride == 1) return load_partial(p, n);
#ifdef CCG_HAVE_AVX512
    if constexpr (bytes == 64 && sizeof(T) >= 4) return gather(p, stride, detail::low_bits(n));
#endif
    Vec r = broadcast(T(0));
    for (int i = 0; i < N && i < n; ++i) r.v[i] = ld(p + i * stride);
    return r;
  }
  static Vec load_strided(const T* p, int64_t stride) {
    if (stride == 1) return load(p);
    if (stride == 0) return broadcast(ld(p));
#ifdef CCG_HAVE_SIMD
    using IV = typename detail::reg<detail::int_of<T>, N>::type;
    if (stride == -1 || stride == -2) {     // x[::-1], x[::-2]: the forward load, reversed
      IV rev;
      for (int i = 0; i < N; ++i) rev[i] = detail::int_of<T>(N - 1 - i);
      return from(__builtin_shuffle(load_strided(p + stride * (N - 1), -stride).v, rev));
    }
    if (stride == 2) {      // every other element (x[::2], x[1::2]): two loads, the second
      IV pick;              // from element N - 1 (nothing past the last one read)
      for (int i = 0; i < N; ++i)
        pick[i] = detail::int_of<T>(2 * i < N ? 2 * i : N + 2 * i - (N - 1));
      return from(__builtin_shuffle(load(p).v, load(p + (N - 1)).v, pick));
    }
#endif
#ifdef CCG_HAVE_AVX512
    if constexpr (bytes == 64 && sizeof(T) >= 4) return gather(p, stride, 0xffffffffu);
#endif
    Vec r;
    for (int i = 0; i < N; ++i) r.v[i] = ld(p + i * stride);
    return r;
  }
#ifdef CCG_HAVE_AVX512
  // Masked AVX-512 gather of p[i*stride] for lanes set in k (others 0).
  static Vec gather(const T* p, int64_t stride, uint32_t k) {
    constexpr int64_t lim = int64_t(1) << 26;  // keeps i*stride*sizeof(T) in int32
    if constexpr (sizeof(T) == 4) {
      if (stride > -lim && stride < lim) {
        __m512i idx = _mm512_mullo_epi32(_mm512_set1_epi32(int32_t(stride)),
                                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                           10, 11, 12, 13, 14, 15));
        return from((V)_mm512_mask_i32gather_ps(_mm512_setzero_ps(), __mmask16(k), idx, p, 4));
      }
    } else {
      __m512i idx = _mm512_mullo_epi64(_mm512_set1_epi64(stride),
                                       _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
      return from((V)_mm512_mask_i64gather_pd(_mm512_setzero_pd(), __mmask8(k), idx, p, 8));
    }
    Vec r = broadcast(T(0));
    for (int i = 0; i < N; ++i)
      if ((k >> i) & 1u) r.v[i] = ld(p + i * stride);
    return r;
  }
#endif
  void store(T* p) const { std::memcpy(p, &v, sizeof(V)); }
  void store_partial(T* p, int64_t n) const;
  // p[i * stride] = lane i (out[1::2] = v): the lanes computed together, stored one by one
  void store_strided(T* p, int64_t stride) const {
    if (stride == 1) return store(p);
    for (int i = 0; i < N; ++i) p[i * stride] = v[i];
  }
  T lane(int i) const { return v[i]; }
};

namespace detail {
#ifdef CCG_HAVE_SIMD
// Halves / concatenation via register shuffles (no trip through memory).
template <class T, int N, int... I>
inline Vec<T, sizeof...(I)> shuffle(const Vec<T, N>& a, const Vec<T, N>& b,
                                    std::integer_sequence<int, I...>) {
  return Vec<T, sizeof...(I)>::from(__builtin_shufflevector(a.v, b.v, I...));
}
template <int Off, int... I>
constexpr std::integer_sequence<int, (Off + I)...> offset(std::integer_sequence<int, I...>) { return {}; }
template <class T, int N> inline Vec<T, N / 2> lo(const Vec<T, N>& x) {
  return shuffle(x, x, std::make_integer_sequence<int, N / 2>());
}
template <class T, int N> inline Vec<T, N / 2> hi(const Vec<T, N>& x) {
  return shuffle(x, x, offset<N / 2>(std::make_integer_sequence<int, N / 2>()));
}
template <class T, int H> inline Vec<T, 2 * H> join(const Vec<T, H>& a, const Vec<T, H>& b) {
  return shuffle(a, b, std::make_integer_sequence<int, 2 * H>());
}
#else
template <class T, int N> inline Vec<T, N / 2> lo(const Vec<T, N>& x) {
  Vec<T, N / 2> r;
  for (int i = 0; i < N / 2; ++i) r.v[i] = x.v[i];
  return r;
}
template <class T, int N> inline Vec<T, N / 2> hi(const Vec<T, N>& x) {
  Vec<T, N / 2> r;
  for (int i = 0; i < N / 2; ++i) r.v[i] = x.v[N / 2 + i];
  return r;
}
template <class T, int H> inline Vec<T, 2 * H> join(const Vec<T, H>& a, const Vec<T, H>& b) {
  Vec<T, 2 * H> r;
  for (int i = 0; i < H; ++i) { r.v[i] = a.v[i]; r.v[H + i] = b.v[i]; }
  return r;
}
#endif
inline int64_t clamp_n(int64_t n, int64_t hi) { return n < 0 ? 0 : (n > hi ? hi : n); }
}  // namespace detail

template <class T, int N>
inline Vec<T, N> Vec<T, N>::load_partial(const T* p, int64_t n) {
  constexpr int es = int(sizeof(T));
  (void)es;
#ifdef CCG_HAVE_SIMD
  if constexpr (bytes > CCG_VEC_BYTES) {
    using H = Vec<T, N / 2>;
    if (n >= N) return load(p);
    return detail::join(H::load_partial(p, detail::clamp_n(n, N / 2)),
                        H::load_partial(p + N / 2, detail::clamp_n(n - N / 2, N / 2)));
  }
#ifdef CCG_HAVE_AVX512
  else if constexpr (bytes == 32 && es == 1) return from((V)_mm256_maskz_loadu_epi8(__mmask32(detail::low_bits(n)), p));
  else if constexpr (bytes == 16 && es == 1) return from((V)_mm_maskz_loadu_epi8(__mmask16(detail::low_bits(n)), p));
  else if constexpr (bytes == 64 && es == 2) return from((V)_mm512_maskz_loadu_epi16(__mmask32(detail::low_bits(n)), p));
  else if constexpr (bytes == 32 && es == 2) return from((V)_mm256_maskz_loadu_epi16(__mmask16(detail::low_bits(n)), p));
  else if constexpr (bytes == 16 && es == 2) return from((V)_mm_maskz_loadu_epi16(__mmask8(detail::low_bits(n)), p));
  else if constexpr (bytes == 64 && es == 4) return from((V)_mm512_maskz_loadu_ps(__mmask16(detail::low_bits(n)), p));
  else if constexpr (bytes == 64 && es == 8) return from((V)_mm512_maskz_loadu_pd(__mmask8(detail::low_bits(n)), p));
  else if constexpr (bytes == 32 && es == 4) return from((V)_mm256_maskz_loadu_ps(__mmask8(detail::low_bits(n)), p));
  else if constexpr (bytes == 32 && es == 8) return from((V)_mm256_maskz_loadu_pd(__mmask8(detail::low_bits(n)), p));
  else if constexpr (bytes == 16 && es == 4) return from((V)_mm_maskz_loadu_ps(__mmask8(detail::low_bits(n)), p));
  else if constexpr (bytes == 16 && es == 8) return from((V)_mm_maskz_loadu_pd(__mmask8(detail::low_bits(n)), p));
#else
  else if constexpr ((bytes == 32 || bytes == 16) && es >= 4) {
    using I = detail::int_of<T>;
    auto m = (Vec<I, N>::iota(0).v < detail::splat<typename Vec<I, N>::V>(I(n)));
    if constexpr (bytes == 32 && es == 4) return from((V)_mm256_maskload_ps((const float*)p, (__m256i)m));
    else if constexpr (bytes == 32 && es == 8) return from((V)_mm256_maskload_pd((const double*)p, (__m256i)m));
    else if constexpr (bytes == 16 && es == 4) return from((V)_mm_maskload_ps((const float*)p, (__m128i)m));
    else return from((V)_mm_maskload_pd((const double*)p, (__m128i)m));
  }
#endif
  else
#endif
  {
    Vec r = broadcast(T(0));
    for (int i = 0; i < N && i < n; ++i) r.v[i] = ld(p + i);
    return r;
  }
}

template <class T, int N>
inline void Vec<T, N>::store_partial(T* p, int64_t n) const {
  constexpr int es = int(sizeof(T));
  (void)es;
#ifdef CCG_HAVE_SIMD
  if constexpr (bytes > CCG_VEC_BYTES) {
    if (n >= N) return store(p);
    detail::lo(*this).store_partial(p, detail::clamp_n(n, N / 2));
    detail::hi(*this).store_partial(p + N / 2, detail::clamp_n(n - N / 2, N / 2));
  }
#ifdef CCG_HAVE_AVX512
  else if constexpr (bytes == 32 && es == 1) _mm256_mask_storeu_epi8(p, __mmask32(detail::low_bits(n)), (__m256i)v);
  else if constexpr (bytes == 16 && es == 1) _mm_mask_storeu_epi8(p, __mmask16(detail::low_bits(n)), (__m128i)v);
  else if constexpr (bytes == 64 && es == 2) _mm512_mask_storeu_epi16(p, __mmask32(detail::low_bits(n)), (__m512i)v);
  else if constexpr (bytes == 32 && es == 2) _mm256_mask_storeu_epi16(p, __mmask16(detail::low_bits(n)), (__m256i)v);
  else if constexpr (bytes == 16 && es == 2) _mm_mask_storeu_epi16(p, __mmask8(detail::low_bits(n)), (__m128i)v);
  else if constexpr (bytes == 64 && es == 4) _mm512_mask_storeu_ps(p, __mmask16(detail::low_bits(n)), (__m512)v);
  else if constexpr (bytes == 64 && es == 8) _mm512_mask_storeu_pd(p, __mmask8(detail::low_bits(n)), (__m512d)v);
  else if constexpr (bytes == 32 && es == 4) _mm256_mask_storeu_ps(p, __mmask8(detail::low_bits(n)), (__m256)v);
  else if constexpr (bytes == 32 && es == 8) _mm256_mask_storeu_pd(p, __mmask8(detail::low_bits(n)), (__m256d)v);
  else if constexpr (bytes == 16 && es == 4) _mm_mask_storeu_ps(p, __mmask8(detail::low_bits(n)), (__m128)v);
  else if constexpr (bytes == 16 && es == 8) _mm_mask_storeu_pd(p, __mmask8(detail::low_bits(n)), (__m128d)v);
#else
  else if constexpr ((bytes == 32 || bytes == 16) && es >= 4) {
    using I = detail::int_of<T>;
    auto m = (Vec<I, N>::iota(0).v < detail::splat<typename Vec<I, N>::V>(I(n)));
    if constexpr (bytes == 32 && es == 4) _mm256_maskstore_ps((float*)p, (__m256i)m, (__m256)v);
    else if constexpr (bytes == 32 && es == 8) _mm256_maskstore_pd((double*)p, (__m256i)m, (__m256d)v);
    else if constexpr (bytes == 16 && es == 4) _mm_maskstore_ps((float*)p, (__m128i)m, (__m128)v);
    else _mm_maskstore_pd((double*)p, (__m128i)m, (__m128d)v);
  }
#endif
  else
#endif
  {
    for (int i = 0; i < N && i < n; ++i) st(p + i, T(v[i]));
  }
}

// ------------------------------------------------------------- operators
#define CCG_VEC_BINOP(op)                                                   \
  template <class T, int N>                                                 \
  inline Vec<T, N> operator op(const Vec<T, N>& a, const Vec<T, N>& b) {    \
    return Vec<T, N>::from(a.v op b.v);                                     \
  }
CCG_VEC_BINOP(+) CCG_VEC_BINOP(-) CCG_VEC_BINOP(*)
#undef CCG_VEC_BINOP
template <class T, int N>
inline Vec<T, N> operator/(const Vec<T, N>& a, const Vec<T, N>& b) {
  static_assert(std::is_floating_point_v<T>, "integer Vec division: use floordiv");
  return Vec<T, N>::from(a.v / b.v);
}
#define CCG_VEC_BITOP(op)                                                   \
  template <class T, int N>                                                 \
  inline Vec<T, N> operator op(const Vec<T, N>& a, const Vec<T, N>& b) {    \
    static_assert(std::is_integral_v<T>, "bitwise ops need integer Vec");   \
    return Vec<T, N>::from(a.v op b.v);                                     \
  }
CCG_VEC_BITOP(&) CCG_VEC_BITOP(|) CCG_VEC_BITOP(^)
#undef CCG_VEC_BITOP
template <class T, int N> inline Vec<T, N> operator-(const Vec<T, N>& a) {
  return Vec<T, N>::from(-a.v);
}
// NumPy's shifts (scalar.h): a count outside [0, bits) gives 0 for a left shift; for a right
// shift, -1 where a < 0 and 0 elsewhere. The count is brought into range before the vector
// shift. AVX2 shifts lanes by lane counts of 32 and 64 bits only: 8- and 16-bit lanes are
// shifted by one count for all lanes where it is one (``x >> 3``, ``x >> k``), else as
// 32-bit lanes (a count of 8..31 gives the same 0 or sign there) and narrowed.
namespace detail {
template <bool Left, class T, int N, class F>
inline Vec<T, N> shift_narrow(const Vec<T, N>& a, const Vec<T, N>& b, F shift) {
  const T c = b.v[0];
  if ((b == Vec<T, N>::broadcast(c)).all()) {     // one count for every lane
    using U = std::make_unsigned_t<T>;
    using UV = typename reg<U, N>::type;
    using V = typename Vec<T, N>::V;
    constexpr int bits = int(sizeof(T) * 8);
    const bool in = c >= T(0) && int(c) < bits;
    if (Left) return in ? Vec<T, N>::from((V)(((UV)a.v) << int(c))) : Vec<T, N>::broadcast(T(0));
    if (in) return Vec<T, N>::from(a.v >> int(c));
    return std::is_signed_v<T> ? Vec<T, N>::from(a.v >> (bits - 1)) : Vec<T, N>::broadcast(T(0));
  }
  using W = std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>;
  using WV = typename reg<W, N>::type;
  const auto r = shift(Vec<W, N>::from(__builtin_convertvector(a.v, WV)),
                       Vec<W, N>::from(__builtin_convertvector(b.v, WV)));
  return Vec<T, N>::from(__builtin_convertvector(r.v, typename Vec<T, N>::V));
}
template <bool Left, class T, int N> inline Vec<T, N> shift(const Vec<T, N>& a, const Vec<T, N>& b) {
  static_assert(std::is_integral_v<T>, "shifts need integer Vec");
#if defined(CCG_HAVE_SIMD) && !defined(CCG_HAVE_AVX512)
  if constexpr (sizeof(T) <= 2)
    return shift_narrow<Left>(a, b, [](const auto& x, const auto& y) { return shift<Left>(x, y); });
#endif
#ifdef CCG_HAVE_SIMD
  using U = std::make_unsigned_t<T>;
  using UV = typename reg<U, N>::type;
  using V = typename Vec<T, N>::V;
  constexpr U bits = U(sizeof(T) * 8);
  const UV count = (UV)b.v;                     // (a negative count: past the width)
  const UV in = (UV)(count < splat<UV>(bits));
  const UV c = count & splat<UV>(U(bits - 1));
  if constexpr (Left) {
    return Vec<T, N>::from((V)((((UV)a.v) << c) & in));
  } else if constexpr (std::is_signed_v<T>) {   // past the width: by bits - 1 (-1 or 0)
    return Vec<T, N>::from(a.v >> (V)blend(count < splat<UV>(bits), count,
                                             splat<UV>(U(bits - 1))));
  } else {
    return Vec<T, N>::from((V)((a.v >> c) & in));
  }
#else
  Vec<T, N> r;
  for (int i = 0; i < N; ++i) r.v[i] = Left ? left_shift(a.v[i], b.v[i]) : right_shift(a.v[i], b.v[i]);
  return r;
#endif
}
}  // namespace detail
template <class T, int N> inline Vec<T, N> left_shift(const Vec<T, N>& a, const Vec<T, N>& b) {
  return detail::shift<true>(a, b);
}
template <class T, int N> inline Vec<T, N> right_shift(const Vec<T, N>& a, const Vec<T, N>& b) {
  return detail::shift<false>(a, b);
}
template <class T, int N> inline Vec<T, N> operator~(const Vec<T, N>& a) {
  static_assert(std::is_integral_v<T>, "bitwise ops need integer Vec");
  return Vec<T, N>::from(~a.v);
}
namespace detail {
// Comparison to a bitmask; on AVX-512 straight into a k register.
template <int FP, int IP, class T, int N, class F>
inline Mask<N> compare(const Vec<T, N>& a, const Vec<T, N>& b, F generic) {
  constexpr int bytes = Vec<T, N>::bytes;
  constexpr int es = int(sizeof(T));
  constexpr bool fl = std::is_floating_point_v<T>;
  constexpr bool sg = !fl && std::is_signed_v<T>, us = std::is_unsigned_v<T>;
  (void)bytes; (void)es; (void)fl; (void)sg; (void)us;
#ifdef CCG_HAVE_AVX512
  if constexpr (fl && bytes == 64 && es == 4) return Mask<N>{kbits(_mm512_cmp_ps_mask((__m512)a.v, (__m512)b.v, FP))};
  else if constexpr (fl && bytes == 64 && es == 8) return Mask<N>{kbits(_mm512_cmp_pd_mask((__m512d)a.v, (__m512d)b.v, FP))};
  else if constexpr (fl && bytes == 32 && es == 4) return Mask<N>{kbits(_mm256_cmp_ps_mask((__m256)a.v, (__m256)b.v, FP))};
  else if constexpr (fl && bytes == 32 && es == 8) return Mask<N>{kbits(_mm256_cmp_pd_mask((__m256d)a.v, (__m256d)b.v, FP))};
  else if constexpr (fl && bytes == 16 && es == 4) return Mask<N>{kbits(_mm_cmp_ps_mask((__m128)a.v, (__m128)b.v, FP))};
  else if constexpr (fl && bytes == 16 && es == 8) return Mask<N>{kbits(_mm_cmp_pd_mask((__m128d)a.v, (__m128d)b.v, FP))};
  else if constexpr (sg && bytes == 64 && es == 4) return Mask<N>{kbits(_mm512_cmp_epi32_mask((__m512i)a.v, (__m512i)b.v, IP))};
  else if constexpr (sg && bytes == 64 && es == 8) return Mask<N>{kbits(_mm512_cmp_epi64_mask((__m512i)a.v, (__m512i)b.v, IP))};
  else if constexpr (sg && bytes == 32 && es == 4) return Mask<N>{kbits(_mm256_cmp_epi32_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (sg && bytes == 32 && es == 8) return Mask<N>{kbits(_mm256_cmp_epi64_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (sg && bytes == 16 && es == 4) return Mask<N>{kbits(_mm_cmp_epi32_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else if constexpr (sg && bytes == 16 && es == 8) return Mask<N>{kbits(_mm_cmp_epi64_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else if constexpr (us && bytes == 64 && es == 4) return Mask<N>{kbits(_mm512_cmp_epu32_mask((__m512i)a.v, (__m512i)b.v, IP))};
  else if constexpr (us && bytes == 64 && es == 8) return Mask<N>{kbits(_mm512_cmp_epu64_mask((__m512i)a.v, (__m512i)b.v, IP))};
  else if constexpr (us && bytes == 32 && es == 4) return Mask<N>{kbits(_mm256_cmp_epu32_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (us && bytes == 32 && es == 8) return Mask<N>{kbits(_mm256_cmp_epu64_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (us && bytes == 16 && es == 4) return Mask<N>{kbits(_mm_cmp_epu32_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else if constexpr (us && bytes == 16 && es == 8) return Mask<N>{kbits(_mm_cmp_epu64_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else if constexpr (sg && bytes == 32 && es == 1) return Mask<N>{kbits(_mm256_cmp_epi8_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (us && bytes == 32 && es == 1) return Mask<N>{kbits(_mm256_cmp_epu8_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (sg && bytes == 16 && es == 1) return Mask<N>{kbits(_mm_cmp_epi8_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else if constexpr (us && bytes == 16 && es == 1) return Mask<N>{kbits(_mm_cmp_epu8_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else if constexpr (sg && bytes == 64 && es == 2) return Mask<N>{kbits(_mm512_cmp_epi16_mask((__m512i)a.v, (__m512i)b.v, IP))};
  else if constexpr (us && bytes == 64 && es == 2) return Mask<N>{kbits(_mm512_cmp_epu16_mask((__m512i)a.v, (__m512i)b.v, IP))};
  else if constexpr (sg && bytes == 32 && es == 2) return Mask<N>{kbits(_mm256_cmp_epi16_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (us && bytes == 32 && es == 2) return Mask<N>{kbits(_mm256_cmp_epu16_mask((__m256i)a.v, (__m256i)b.v, IP))};
  else if constexpr (sg && bytes == 16 && es == 2) return Mask<N>{kbits(_mm_cmp_epi16_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else if constexpr (us && bytes == 16 && es == 2) return Mask<N>{kbits(_mm_cmp_epu16_mask((__m128i)a.v, (__m128i)b.v, IP))};
  else
#endif
  return Mask<N>::from_lanes(generic(a.v, b.v));
}
}  // namespace detail

#ifdef CCG_HAVE_AVX512
#define CCG_PRED(fp, ip) fp, ip
#else
#define CCG_PRED(fp, ip) 0, 0
#endif
#define CCG_VEC_CMP(op, fp, ip)                                              \
  template <class T, int N>                                                  \
  inline Mask<N> operator op(const Vec<T, N>& a, const Vec<T, N>& b) {       \
    return detail::compare<CCG_PRED(fp, ip)>(                                \
        a, b, [](const auto& x, const auto& y) { return x op y; });          \
  }
CCG_VEC_CMP(==, _CMP_EQ_OQ, _MM_CMPINT_EQ)
CCG_VEC_CMP(!=, _CMP_NEQ_UQ, _MM_CMPINT_NE)
CCG_VEC_CMP(<, _CMP_LT_OQ, _MM_CMPINT_LT)
CCG_VEC_CMP(<=, _CMP_LE_OQ, _MM_CMPINT_LE)
CCG_VEC_CMP(>, _CMP_GT_OQ, _MM_CMPINT_NLE)
CCG_VEC_CMP(>=, _CMP_GE_OQ, _MM_CMPINT_NLT)
#undef CCG_PRED
#undef CCG_VEC_CMP

// m ? a : b, lane-wise.
template <class T, int N>
inline Vec<T, N> select(Mask<N> m, const Vec<T, N>& a, const Vec<T, N>& b) {
  using V = typename Vec<T, N>::V;
  constexpr int bytes = Vec<T, N>::bytes;
  constexpr int es = int(sizeof(T));
  (void)bytes; (void)es;
#ifdef CCG_HAVE_AVX512
  if constexpr (bytes == 32 && es == 1) return Vec<T, N>::from((V)_mm256_mask_blend_epi8(__mmask32(m.bits), (__m256i)b.v, (__m256i)a.v));
  else if constexpr (bytes == 16 && es == 1) return Vec<T, N>::from((V)_mm_mask_blend_epi8(__mmask16(m.bits), (__m128i)b.v, (__m128i)a.v));
  else if constexpr (bytes == 64 && es == 2) return Vec<T, N>::from((V)_mm512_mask_blend_epi16(__mmask32(m.bits), (__m512i)b.v, (__m512i)a.v));
  else if constexpr (bytes == 32 && es == 2) return Vec<T, N>::from((V)_mm256_mask_blend_epi16(__mmask16(m.bits), (__m256i)b.v, (__m256i)a.v));
  else if constexpr (bytes == 16 && es == 2) return Vec<T, N>::from((V)_mm_mask_blend_epi16(__mmask8(m.bits), (__m128i)b.v, (__m128i)a.v));
  else if constexpr (bytes == 64 && es == 4) return Vec<T, N>::from((V)_mm512_mask_blend_ps(__mmask16(m.bits), (__m512)b.v, (__m512)a.v));
  else if constexpr (bytes == 64 && es == 8) return Vec<T, N>::from((V)_mm512_mask_blend_pd(__mmask8(m.bits), (__m512d)b.v, (__m512d)a.v));
  else if constexpr (bytes == 32 && es == 4) return Vec<T, N>::from((V)_mm256_mask_blend_ps(__mmask8(m.bits), (__m256)b.v, (__m256)a.v));
  else if constexpr (bytes == 32 && es == 8) return Vec<T, N>::from((V)_mm256_mask_blend_pd(__mmask8(m.bits), (__m256d)b.v, (__m256d)a.v));
  else if constexpr (bytes == 16 && es == 4) return Vec<T, N>::from((V)_mm_mask_blend_ps(__mmask8(m.bits), (__m128)b.v, (__m128)a.v));
  else if constexpr (bytes == 16 && es == 8) return Vec<T, N>::from((V)_mm_mask_blend_pd(__mmask8(m.bits), (__m128d)b.v, (__m128d)a.v));
  else
#endif
  {
    using IV = typename Vec<detail::int_of<T>, N>::V;
    return Vec<T, N>::from(detail::blend(m.template lanes<IV>(), a.v, b.v));
  }
}

// ------------------------------------------------------------- min / max
namespace detail {
template <class T, int N> using reg_t = typename Vec<T, N>::V;
template <class T, int N>
inline Vec<T, N> vsel(const typename Vec<int_of<T>, N>::V& m, const Vec<T, N>& a,
                      const Vec<T, N>& b) {
  return Vec<T, N>::from(blend(m, a.v, b.v));
}
}  // namespace detail

// NaN-propagating (NaN of a first); ties return b, as NumPy on x86.
template <class T, int N> inline Vec<T, N> maximum(const Vec<T, N>& a, const Vec<T, N>& b) {
  if constexpr (std::is_floating_point_v<T>) return detail::vsel((a.v > b.v) | (a.v != a.v), a, b);
  else return detail::vsel(a.v > b.v, a, b);
}
template <class T, int N> inline Vec<T, N> minimum(const Vec<T, N>& a, const Vec<T, N>& b) {
  if constexpr (std::is_floating_point_v<T>) return detail::vsel((a.v < b.v) | (a.v != a.v), a, b);
  else return detail::vsel(a.v < b.v, a, b);
}
// NaN-ignoring; ties return b (as NumPy's SIMD loops).
template <class T, int N> inline Vec<T, N> fmax(const Vec<T, N>& a, const Vec<T, N>& b) {
  if constexpr (std::is_floating_point_v<T>) return detail::vsel((a.v > b.v) | (b.v != b.v), a, b);
  else return detail::vsel(a.v > b.v, a, b);
}
template <class T, int N> inline Vec<T, N> fmin(const Vec<T, N>& a, const Vec<T, N>& b) {
  if constexpr (std::is_floating_point_v<T>) return detail::vsel((a.v < b.v) | (b.v != b.v), a, b);
  else return detail::vsel(a.v < b.v, a, b);
}

// ------------------------------------------------------- lane-wise mapping
namespace detail {
#ifdef CCG_HAVE_SIMD
struct no_native {};
template <class T, int B> struct native { using type = no_native; };
template <> struct native<float, 16> { using type = __m128; };
template <> struct native<double, 16> { using type = __m128d; };
template <> struct native<float, 32> { using type = __m256; };
template <> struct native<double, 32> { using type = __m256d; };
#ifdef __AVX512F__
template <> struct native<float, 64> { using type = __m512; };
template <> struct native<double, 64> { using type = __m512d; };
#endif
template <class Op, class R, class = void> struct has_simd1 : std::false_type {};
template <class Op, class R>
struct has_simd1<Op, R, std::void_t<decltype(Op::simd(std::declval<R>()))>>
    : std::true_type {};
template <class Op, class R, class = void> struct has_simd2 : std::false_type {};
template <class Op, class R>
struct has_simd2<Op, R, std::void_t<decltype(Op::simd(std::declval<R>(), std::declval<R>()))>>
    : std::true_type {};
#endif

// Apply Op lane-wise: native SIMD overload Op::simd where one exists for
// this width, halves for wider vectors, else Op::scalar per lane.
template <class Op, class T, int N> inline Vec<T, N> map1(const Vec<T, N>& x) {
  using VT = Vec<T, N>;
#ifdef CCG_HAVE_SIMD
  using R = typename native<T, VT::bytes>::type;
  if constexpr (VT::bytes > CCG_VEC_BYTES) {
    return join(map1<Op>(lo(x)), map1<Op>(hi(x)));
  } else if constexpr (VT::bytes < CCG_VEC_BYTES && has_simd1<Op, typename native<T, CCG_VEC_BYTES>::type>::value) {
    // narrower than a register: run the full-width function on (x, x), keep the low half
    // (one implementation per function and ISA, whatever the lane count: see scalar1)
    return lo(map1<Op>(join(x, x)));
  } else if constexpr (has_simd1<Op, R>::value) {
    return VT::from((typename VT::V)Op::simd((R)x.v));
  } else
#endif
  {
    VT r;
    for (int i = 0; i < N; ++i) r.v[i] = Op::scalar(x.v[i]);
    return r;
  }
}
template <class Op, class T, int N>
inline Vec<T, N> map2(const Vec<T, N>& x, const Vec<T, N>& y) {
  using VT = Vec<T, N>;
#ifdef CCG_HAVE_SIMD
  using R = typename native<T, VT::bytes>::type;
  if constexpr (VT::bytes > CCG_VEC_BYTES) {
    return join(map2<Op>(lo(x), lo(y)), map2<Op>(hi(x), hi(y)));
  } else if constexpr (VT::bytes < CCG_VEC_BYTES && has_simd2<Op, typename native<T, CCG_VEC_BYTES>::type>::value) {
    return lo(map2<Op>(join(x, x), join(y, y)));
  } else if constexpr (has_simd2<Op, R>::value) {
    return VT::from((typename VT::V)Op::simd((R)x.v, (R)y.v));
  } else
#endif
  {
    VT r;
    for (int i = 0; i < N; ++i) r.v[i] = Op::scalar(x.v[i], y.v[i]);
    return r;
  }
}

// ---- rounding and sqrt
#ifdef CCG_HAVE_SIMD
#ifdef __AVX512F__
#define CCG_ROUND512(imm)                                                          \
  static __m512 simd(__m512 x) { return _mm512_roundscale_ps(x, (imm) | _MM_FROUND_NO_EXC); } \
  static __m512d simd(__m512d x) { return _mm512_roundscale_pd(x, (imm) | _MM_FROUND_NO_EXC); }
#else
#define CCG_ROUND512(imm)
#endif
#define CCG_ROUND_OP(name, imm, fn)                                                     \
  struct name {                                                                         \
    static float scalar(float x) { return std::fn(x); }                                 \
    static double scalar(double x) { return std::fn(x); }                               \
    CCG_ROUND512(imm)                                                                   \
    static __m256 simd(__m256 x) { return _mm256_round_ps(x, (imm) | _MM_FROUND_NO_EXC); }   \
    static __m256d simd(__m256d x) { return _mm256_round_pd(x, (imm) | _MM_FROUND_NO_EXC); } \
    static __m128 simd(__m128 x) { return _mm_round_ps(x, (imm) | _MM_FROUND_NO_EXC); }      \
    static __m128d simd(__m128d x) { return _mm_round_pd(x, (imm) | _MM_FROUND_NO_EXC); }    \
  };
#else
#define CCG_ROUND_OP(name, imm, fn)                       \
  struct name {                                           \
    static float scalar(float x) { return std::fn(x); }   \
    static double scalar(double x) { return std::fn(x); } \
  };
#endif
CCG_ROUND_OP(op_floor, 0x01, floor)
CCG_ROUND_OP(op_ceil, 0x02, ceil)
CCG_ROUND_OP(op_trunc, 0x03, trunc)
CCG_ROUND_OP(op_rint, 0x00, nearbyint)
#undef CCG_ROUND_OP
#undef CCG_ROUND512

struct op_sqrt {
  static float scalar(float x) { return std::sqrt(x); }
  static double scalar(double x) { return std::sqrt(x); }
#ifdef CCG_HAVE_SIMD
#ifdef __AVX512F__
  static __m512 simd(__m512 x) { return _mm512_sqrt_ps(x); }
  static __m512d simd(__m512d x) { return _mm512_sqrt_pd(x); }
#endif
  static __m256 simd(__m256 x) { return _mm256_sqrt_ps(x); }
  static __m256d simd(__m256d x) { return _mm256_sqrt_pd(x); }
  static __m128 simd(__m128 x) { return _mm_sqrt_ps(x); }
  static __m128d simd(__m128d x) { return _mm_sqrt_pd(x); }
#endif
};

// ---- libmvec-backed transcendental functions
#ifdef CCG_HAVE_SIMD
#ifdef __AVX512F__
#define CCG_MVEC_SIMD512_v(fn)                                         \
  static __m512 simd(__m512 x) { return _ZGVeN16v_##fn##f(x); }        \
  static __m512d simd(__m512d x) { return _ZGVeN8v_##fn(x); }
#define CCG_MVEC_SIMD512_vv(fn)                                                  \
  static __m512 simd(__m512 x, __m512 y) { return _ZGVeN16vv_##fn##f(x, y); }    \
  static __m512d simd(__m512d x, __m512d y) { return _ZGVeN8vv_##fn(x, y); }
#else
#define CCG_MVEC_SIMD512_v(fn)
#define CCG_MVEC_SIMD512_vv(fn)
#endif
#define CCG_MVEC_OP1(fn)                                                \
  struct op_##fn {                                                      \
    static float scalar(float x) { return std::fn(x); }                 \
    static double scalar(double x) { return std::fn(x); }               \
    CCG_MVEC_SIMD512_v(fn)                                              \
    static __m256 simd(__m256 x) { return _ZGVdN8v_##fn##f(x); }        \
    static __m256d simd(__m256d x) { return _ZGVdN4v_##fn(x); }         \
    static __m128 simd(__m128 x) { return _ZGVbN4v_##fn##f(x); }        \
    static __m128d simd(__m128d x) { return _ZGVbN2v_##fn(x); }         \
  };
#define CCG_MVEC_OP2(fn)                                                              \
  struct op_##fn {                                                                    \
    static float scalar(float x, float y) { return std::fn(x, y); }                   \
    static double scalar(double x, double y) { return std::fn(x, y); }                \
    CCG_MVEC_SIMD512_vv(fn)                                                           \
    static __m256 simd(__m256 x, __m256 y) { return _ZGVdN8vv_##fn##f(x, y); }        \
    static __m256d simd(__m256d x, __m256d y) { return _ZGVdN4vv_##fn(x, y); }        \
    static __m128 simd(__m128 x, __m128 y) { return _ZGVbN4vv_##fn##f(x, y); }        \
    static __m128d simd(__m128d x, __m128d y) { return _ZGVbN2vv_##fn(x, y); }        \
  };
#else
#define CCG_MVEC_OP1(fn)                                  \
  struct op_##fn {                                        \
    static float scalar(float x) { return std::fn(x); }   \
    static double scalar(double x) { return std::fn(x); } \
  };
#define CCG_MVEC_OP2(fn)                                                 \
  struct op_##fn {                                                       \
    static float scalar(float x, float y) { return std::fn(x, y); }      \
    static double scalar(double x, double y) { return std::fn(x, y); }   \
  };
#endif
CCG_MVEC_ALL(CCG_MVEC_OP1)
CCG_MVEC_ALL2(CCG_MVEC_OP2)

template <class To, class From> inline To bitcast(const From& x) {
  static_assert(sizeof(To) == sizeof(From), "bitcast size");
  To r;
  std::memcpy(&r, &x, sizeof(To));
  return r;
}
template <class T, int N> using ivec_t = typename Vec<int_of<T>, N>::V;
}  // namespace detail

// ------------------------------------------------------- math functions
#define CCG_VEC_FN1(fn)                                                        \
  template <class T, int N> inline Vec<T, N> fn(const Vec<T, N>& x) {         \
    static_assert(std::is_floating_point_v<T>, #fn " needs float or double"); \
    return detail::fix_##fn(x, detail::map1<detail::op_##fn>(x));              \
  }
#define CCG_VEC_FN2(fn)                                                        \
  template <class T, int N>                                                    \
  inline Vec<T, N> fn(const Vec<T, N>& x, const Vec<T, N>& y) {                \
    static_assert(std::is_floating_point_v<T>, #fn " needs float or double"); \
    return detail::fix_##fn(x, y, detail::map2<detail::op_##fn>(x, y));        \
  }

namespace detail {
// Special-case patches applied on top of libmvec results (identity unless
// specialised below).
#define CCG_NOFIX1(fn) \
  template <class T, int N> inline Vec<T, N> fix_##fn(const Vec<T, N>&, const Vec<T, N>& r) { return r; }
#define CCG_NOFIX2(fn)                                                    \
  template <class T, int N>                                               \
  inline Vec<T, N> fix_##fn(const Vec<T, N>&, const Vec<T, N>&, const Vec<T, N>& r) { return r; }
CCG_MVEC_ALL(CCG_NOFIX1)
CCG_MVEC_ALL2(CCG_NOFIX2)
CCG_NOFIX1(sqrt) CCG_NOFIX1(floor) CCG_NOFIX1(ceil) CCG_NOFIX1(trunc) CCG_NOFIX1(rint)
#undef CCG_NOFIX1
#undef CCG_NOFIX2
}  // namespace detail

CCG_MVEC_ALL(CCG_VEC_FN1)
CCG_MVEC_ALL2(CCG_VEC_FN2)

// Scalar forms of the libmvec functions, for scalar loops and vector-loop tails. In SIMD
// builds they run the same full-width libmvec function as the vector loops (x in every
// lane, lane 0 kept), so a value computed by a scalar loop is bit-identical to the same
// value computed by a vector loop of the same kernel; libm's scalar functions differ from
// libmvec's by an ULP at some inputs. Portable builds use libm in both.
namespace detail {
template <class Op, class T> inline T scalar1(T x) {
#ifdef CCG_HAVE_SIMD
  using VT = Vec<T, CCG_VEC_BYTES / int(sizeof(T))>;
  return map1<Op>(VT::broadcast(x)).v[0];
#else
  return Op::scalar(x);
#endif
}
template <class Op, class T> inline T scalar2(T x, T y) {
#ifdef CCG_HAVE_SIMD
  using VT = Vec<T, CCG_VEC_BYTES / int(sizeof(T))>;
  return map2<Op>(VT::broadcast(x), VT::broadcast(y)).v[0];
#else
  return Op::scalar(x, y);
#endif
}
}  // namespace detail
#define CCG_SCALAR_FN1(fn)                                                         \
  inline float fn(float x) { return detail::scalar1<detail::op_##fn>(x); }        \
  inline double fn(double x) { return detail::scalar1<detail::op_##fn>(x); }
#define CCG_SCALAR_FN2(fn)                                                                \
  inline float fn(float x, float y) { return detail::scalar2<detail::op_##fn>(x, y); }   \
  inline double fn(double x, double y) { return detail::scalar2<detail::op_##fn>(x, y); }
CCG_MVEC_ALL(CCG_SCALAR_FN1)
CCG_SCALAR_FN2(atan2) CCG_SCALAR_FN2(pow)

#undef CCG_SCALAR_FN1
#undef CCG_SCALAR_FN2
// np.power of floats: non-template overloads, preferred to scalar.h's power template
// (which keeps std::pow for code that includes scalar.h alone).
inline float power(float a, float b) { return ccg::pow(a, b); }
inline double power(double a, double b) { return ccg::pow(a, b); }
// np.power of an array by an exponent the same for every element, known only when the
// program runs (the op power_by_scalar, frontend/ndarray.py): NumPy's loop computes a
// scalar exponent of 2, 0.5 and -1 as square, sqrt and reciprocal (exact), pow otherwise; a
// branch taken the same way for the whole loop.
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
inline T power_uniform(T x, T e) {
  if (e == T(2)) return x * x;
  if (e == T(0.5)) return std::sqrt(x);
  if (e == T(-1)) return T(1) / x;
  return power(x, e);
}
CCG_VEC_FN1(sqrt) CCG_VEC_FN1(floor) CCG_VEC_FN1(ceil) CCG_VEC_FN1(trunc)
CCG_VEC_FN1(rint)
#undef CCG_VEC_FN1
#undef CCG_VEC_FN2

// Integer versions of the rounding functions are the identity.
#define CCG_VEC_INT_IDENTITY(fn) \
  template <int N> inline Vec<int32_t, N> fn(const Vec<int32_t, N>& x) { return x; } \
  template <int N> inline Vec<int64_t, N> fn(const Vec<int64_t, N>& x) { return x; }
CCG_VEC_INT_IDENTITY(floor) CCG_VEC_INT_IDENTITY(ceil) CCG_VEC_INT_IDENTITY(trunc)
CCG_VEC_INT_IDENTITY(rint)
#undef CCG_VEC_INT_IDENTITY

template <class T, int N> inline Vec<T, N> square(const Vec<T, N>& x) { return x * x; }
// power_uniform of vectors: the exponent is the same in every lane (the first decides).
template <class T, int N>
inline Vec<T, N> power_uniform(const Vec<T, N>& x, const Vec<T, N>& e) {
  const T s = e.v[0];
  if (s == T(2)) return x * x;
  if (s == T(0.5)) return sqrt(x);
  if (s == T(-1)) return Vec<T, N>::broadcast(T(1)) / x;
  return pow(x, e);
}

// abs: clears the sign bit of floats; integer MIN wraps to MIN.
template <class T, int N> inline Vec<T, N> abs(const Vec<T, N>& x) {
  using I = detail::int_of<T>;
  using IV = detail::ivec_t<T, N>;
  if constexpr (std::is_floating_point_v<T>) {
    IV bits = detail::bitcast<IV>(x.v) & detail::splat<IV>(std::numeric_limits<I>::max());
    return Vec<T, N>::from(detail::bitcast<typename Vec<T, N>::V>(bits));
  } else if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else {
    using UV = typename detail::reg<std::make_unsigned_t<T>, N>::type;
    IV neg = detail::bitcast<IV>(detail::splat<UV>(0) - detail::bitcast<UV>(x.v));
    return detail::vsel(x.v < detail::splat<IV>(0), Vec<T, N>::from(neg), x);
  }
}

template <class T, int N> inline Mask<N> isnan(const Vec<T, N>& x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return Mask<N>::from_bits(0);
}
template <class T, int N> inline Mask<N> isinf(const Vec<T, N>& x) {
  if constexpr (std::is_floating_point_v<T>)
    return abs(x) == Vec<T, N>::broadcast(std::numeric_limits<T>::infinity());
  else return Mask<N>::from_bits(0);
}
template <class T, int N> inline Mask<N> isfinite(const Vec<T, N>& x) {
  if constexpr (std::is_floating_point_v<T>)
    return abs(x) < Vec<T, N>::broadcast(std::numeric_limits<T>::infinity());
  else return Mask<N>::broadcast(true);
}
template <class T, int N> inline Mask<N> signbit(const Vec<T, N>& x) {
  if constexpr (std::is_unsigned_v<T>) return Mask<N>::from_bits(0);
  using IV = detail::ivec_t<T, N>;
  return Mask<N>::from_lanes(detail::bitcast<IV>(x.v) < detail::splat<IV>(0));
}

// copysign(a, b): magnitude of a, sign bit of b.
template <class T, int N> inline Vec<T, N> copysign(const Vec<T, N>& a, const Vec<T, N>& b) {
  static_assert(std::is_floating_point_v<T>, "copysign needs float or double");
  using I = detail::int_of<T>;
  using IV = detail::ivec_t<T, N>;
  const IV sign = detail::splat<IV>(std::numeric_limits<I>::min());
  IV r = (detail::bitcast<IV>(a.v) & ~sign) | (detail::bitcast<IV>(b.v) & sign);
  return Vec<T, N>::from(detail::bitcast<typename Vec<T, N>::V>(r));
}

// sign: -1, 0 (+0 for ±0), 1; NaN stays NaN.
template <class T, int N> inline Vec<T, N> sign(const Vec<T, N>& x) {
  using VT = Vec<T, N>;
  const VT zero = VT::broadcast(T(0));
  VT r = detail::vsel(x.v > zero.v, VT::broadcast(T(1)), x);
  r = detail::vsel(x.v < zero.v, VT::broadcast(T(-1)), r);
  return detail::vsel(x.v == zero.v, zero, r);
}

// ------------------------------------------------------------ conversions
#ifdef CCG_HAVE_SIMD
namespace detail {
// N 8/16-bit lanes extended (as T's signedness says) to N 32-bit lanes filling at most one
// register: one vpmovzx/vpmovsx, where GCC 12 takes two steps through 16 bits, or lane by lane.
template <class T, int N, class V> inline auto extend_to_32(const V& v) {
  __m128i lo;  // the first 16 bytes (or fewer: the rest are not read)
  if constexpr (sizeof(V) >= 16) std::memcpy(&lo, &v, 16);
  else { lo = _mm_setzero_si128(); std::memcpy(&lo, &v, sizeof(V)); }
  constexpr bool s = std::is_signed_v<T>;
  if constexpr (N * 4 == 16) {
    if constexpr (sizeof(T) == 1) return s ? _mm_cvtepi8_epi32(lo) : _mm_cvtepu8_epi32(lo);
    else return s ? _mm_cvtepi16_epi32(lo) : _mm_cvtepu16_epi32(lo);
  } else if constexpr (N * 4 == 32) {
    if constexpr (sizeof(T) == 1) return s ? _mm256_cvtepi8_epi32(lo) : _mm256_cvtepu8_epi32(lo);
    else return s ? _mm256_cvtepi16_epi32(lo) : _mm256_cvtepu16_epi32(lo);
  } else {
#ifdef __AVX512F__
    if constexpr (sizeof(T) == 1) return s ? _mm512_cvtepi8_epi32(lo) : _mm512_cvtepu8_epi32(lo);
    else {
      __m256i w;
      std::memcpy(&w, &v, 32);
      return s ? _mm512_cvtepi16_epi32(w) : _mm512_cvtepu16_epi32(w);
    }
#endif
  }
}
}  // namespace detail
#endif

// convert<U>(x): float -> int truncates like x86 cvtt (NaN / out of range
// give the minimum integer); int64 -> int32 wraps; otherwise C++ casts.
template <class U, class T, int N> inline Vec<U, N> convert(const Vec<T, N>& x) {
  using VU = Vec<U, N>;
  // GCC 12 lowers a conversion that changes an integer's width more than twofold (uint8 ->
  // float, int32 -> int8) lane by lane; one doubling or halving at a time, each step is one
  // instruction (vpmovzxbw, vpmovdw, vpackus...).
  if constexpr (std::is_same_v<U, T>) {
    return x;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < 4 && !std::is_integral_v<U>) {
    return convert<U>(convert<int32_t>(x));  // every 8/16-bit value is an int32
#ifdef CCG_HAVE_SIMD
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < 4 && sizeof(U) == 4 &&
                       std::is_integral_v<U> && N * 4 >= 16 && N * 4 <= CCG_VEC_BYTES) {
    return VU::from(detail::bitcast<typename VU::V>(detail::extend_to_32<T, N>(x.v)));
#endif
  } else if constexpr (std::is_integral_v<T> && std::is_integral_v<U> && sizeof(U) > 2 * sizeof(T)) {
    // extends as T's signedness says, as C does
    return convert<U>(convert<detail::resized_int<T, 2 * sizeof(T)>>(x));
  } else if constexpr (std::is_integral_v<T> && std::is_integral_v<U> && 2 * sizeof(U) < sizeof(T)) {
    return convert<U>(convert<detail::resized_int<T, sizeof(T) / 2>>(x));  // wraps: low bits
  } else if constexpr (std::is_floating_point_v<T> && std::is_same_v<U, uint64_t>) {
    VU r;  // as ccg::cast: values >= 2^63 shifted into int64's range first
    for (int i = 0; i < N; ++i) r.v[i] = ccg::cast<uint64_t>(x.v[i]);
    return r;
  } else if constexpr (std::is_floating_point_v<T> && std::is_same_v<U, uint32_t>) {
    return convert<U>(convert<int64_t>(x));  // wraps from int64, as ccg::cast
  } else if constexpr (std::is_floating_point_v<T> && std::is_integral_v<U> && sizeof(U) < 4) {
    return convert<U>(convert<int32_t>(x));  // narrow integers wrap from int32, as ccg::cast
  } else if constexpr (std::is_floating_point_v<T> && std::is_integral_v<U>) {
    constexpr T lim = -T(std::numeric_limits<U>::min());  // 2^31 or 2^63
    auto ok = (x.v >= detail::splat<typename Vec<T, N>::V>(-lim)) &
              (x.v < detail::splat<typename Vec<T, N>::V>(lim));
    auto safe = detail::blend(ok, x.v, detail::splat<typename Vec<T, N>::V>(T(0)));
    auto r = detail::convertv<typename VU::V>(safe);
    auto oku = detail::convertv<detail::ivec_t<U, N>>(ok);
    return VU::from(detail::blend(oku, r, detail::splat<typename VU::V>(std::numeric_limits<U>::min())));
  } else if constexpr (std::is_integral_v<T> && std::is_integral_v<U> && sizeof(U) < sizeof(T)) {
    // wrap: convert through the unsigned type of the same width
    using UT = std::make_unsigned_t<T>;
    using UU = std::make_unsigned_t<U>;
    auto u = detail::bitcast<typename detail::reg<UT, N>::type>(x.v);
    auto w = detail::convertv<typename detail::reg<UU, N>::type>(u);
    return VU::from(detail::bitcast<typename VU::V>(w));
  } else {
    return VU::from(detail::convertv<typename VU::V>(x.v));
  }
}

template <class T, int N> inline Vec<T, N> from_mask(Mask<N> m) {
  return select(m, Vec<T, N>::broadcast(T(1)), Vec<T, N>::broadcast(T(0)));
}
template <class T, int N> inline Mask<N> to_mask(const Vec<T, N>& x) {
  return x != Vec<T, N>::broadcast(T(0));
}

// -------------------------------------------------------- floordiv / mod
// NumPy floor_divide / remainder, lane by lane (see scalar.h).
// Integers: one division with a safe divisor (1 where b is 0, or -1 for signed types), then
// the floor correction and NumPy's answers for those divisors (x // 0 == x % 0 == 0,
// x // -1 == -x wrapping); a constant divisor becomes multiplies.
namespace detail {
template <class T, int N>
inline void int_divmod(const Vec<T, N>& a, const Vec<T, N>& b, typename Vec<T, N>::V* q,
                       typename Vec<T, N>::V* r) {
  using V = typename Vec<T, N>::V;
  const V zero = splat<V>(T(0)), one = splat<V>(T(1));
  auto bad = b.v == zero;
  if constexpr (std::is_signed_v<T>) bad = bad | (b.v == splat<V>(T(-1)));
  const V bs = blend(bad, one, b.v);
  *q = a.v / bs;
  *r = a.v - *q * bs;  // 0 where the divisor was replaced
  if constexpr (std::is_signed_v<T>) {
    auto adj = (*r != zero) & ((*r ^ bs) < zero);
    *q = blend(adj, *q - one, *q);
    *r = blend(adj, *r + bs, *r);
  }
}
}  // namespace detail
template <class T, int N> inline Vec<T, N> floordiv(const Vec<T, N>& a, const Vec<T, N>& b) {
  using V = typename Vec<T, N>::V;
  if constexpr (std::is_integral_v<T>) {
    V q, r;
    detail::int_divmod(a, b, &q, &r);
    const V zero = detail::splat<V>(T(0));
    if constexpr (std::is_signed_v<T>) q = detail::blend(b.v == detail::splat<V>(T(-1)), zero - a.v, q);
    return Vec<T, N>::from(detail::blend(b.v == zero, zero, q));
  } else {
    Vec<T, N> r;
    for (int i = 0; i < N; ++i) r.v[i] = ccg::floordiv<T>(a.v[i], b.v[i]);
    return r;
  }
}
template <class T, int N> inline Vec<T, N> mod(const Vec<T, N>& a, const Vec<T, N>& b) {
  if constexpr (std::is_integral_v<T>) {
    typename Vec<T, N>::V q, r;
    detail::int_divmod(a, b, &q, &r);
    return Vec<T, N>::from(r);
  } else {
    Vec<T, N> r;
    for (int i = 0; i < N; ++i) r.v[i] = ccg::mod<T>(a.v[i], b.v[i]);
    return r;
  }
}

// ------------------------------------------------------------ reductions
namespace detail {
struct add_op { template <class V> V operator()(const V& a, const V& b) const { return a + b; } };
struct mul_op { template <class V> V operator()(const V& a, const V& b) const { return a * b; } };
struct max_op { template <class V> V operator()(const V& a, const V& b) const { return maximum(a, b); } };
struct min_op { template <class V> V operator()(const V& a, const V& b) const { return minimum(a, b); } };
struct fmax_op { template <class V> V operator()(const V& a, const V& b) const { return fmax(a, b); } };
struct fmin_op { template <class V> V operator()(const V& a, const V& b) const { return fmin(a, b); } };
// Tree reduction: combine halves until one lane is left.
template <class Op, class T, int N> inline T reduce(const Vec<T, N>& x) {
  if constexpr (N == 1) return x.v[0];
  else return reduce<Op>(Op()(lo(x), hi(x)));
}
}  // namespace detail

template <class T, int N> inline T reduce_add(const Vec<T, N>& x) { return detail::reduce<detail::add_op>(x); }
template <class T, int N> inline T reduce_mul(const Vec<T, N>& x) { return detail::reduce<detail::mul_op>(x); }
template <class T, int N> inline T reduce_max(const Vec<T, N>& x) { return detail::reduce<detail::max_op>(x); }
template <class T, int N> inline T reduce_min(const Vec<T, N>& x) { return detail::reduce<detail::min_op>(x); }
template <class T, int N> inline T reduce_fmax(const Vec<T, N>& x) { return detail::reduce<detail::fmax_op>(x); }
template <class T, int N> inline T reduce_fmin(const Vec<T, N>& x) { return detail::reduce<detail::fmin_op>(x); }

// An argmax (Max) or argmin candidate x at position q folded into (best, best_i): NumPy's
// answer is the first position of the best value, or of the first NaN where there is one; a
// tie goes to the lower position (a vector's lanes, a parallel argmax's chunks).
template <bool Max, class T>
inline void arg_take(T x, int64_t q, T& best, int64_t& best_i) {
  bool take;
  if (x != x) take = best == best || q < best_i;      // a NaN: the first one wins
  else if (best != best) take = false;
  else take = (Max ? x > best : x < best) || (x == best && q < best_i);
  if (take) { best = x; best_i = q; }
}

// A vectorized argmax/argmin's lanes (each its first best value and its position) folded
// into the scalar (best, best_i) of the other elements.
template <bool Max, class T, class P, int N>
inline void arg_lanes(const Vec<T, N>& vbest, const Vec<P, N>& vpos, T& best, int64_t& best_i) {
  alignas(64) T v[N];
  alignas(64) P p[N];
  vbest.store(v);
  vpos.store(p);
  for (int l = 0; l < N; ++l) arg_take<Max>(v[l], int64_t(p[l]), best, best_i);
}

// Which lanes of a float reduction have seen no NaN so far: one compare per vector that the
// loop's other work does not wait on (on AVX-512 a masked compare, the mask kept in its
// register, where Mask<N> would go through a general register each time).
template <class T, int N> struct NanFree {
#if defined(CCG_HAVE_AVX512)
  static constexpr bool zmm = std::is_floating_point_v<T> && sizeof(T) * N == 64;
#else
  static constexpr bool zmm = false;
#endif
  using K = std::conditional_t<zmm, std::conditional_t<sizeof(T) == 4, uint16_t, uint8_t>, Mask<N>>;
  K ok;
  static NanFree all_clean() {
    if constexpr (zmm) return NanFree{K((1u << N) - 1)};
    else return NanFree{Mask<N>::broadcast(true)};
  }
  void see(const Vec<T, N>& v) {
    if constexpr (!std::is_floating_point_v<T>) return;
#if defined(CCG_HAVE_AVX512)
    else if constexpr (zmm && sizeof(T) == 4) {
      const __m512 x = reinterpret_cast<const __m512&>(v.v);
      ok = _mm512_mask_cmp_ps_mask(__mmask16(ok), x, x, _CMP_ORD_Q);
    } else if constexpr (zmm) {
      const __m512d x = reinterpret_cast<const __m512d&>(v.v);
      ok = _mm512_mask_cmp_pd_mask(__mmask8(ok), x, x, _CMP_ORD_Q);
    }
#endif
    else ok = ok & (v == v);
  }
  bool clean() const {
    if constexpr (zmm) return ok == K((1u << N) - 1);
    else return ok.all();
  }
  friend NanFree operator&(const NanFree& a, const NanFree& b) { return NanFree{K(a.ok & b.ok)}; }
};

// The per-lane state of a vectorized float max/min reduction: each lane's best value, and
// whether it has seen a NaN (NumPy's result is then NaN). The best values take one max (min)
// per vector, a NaN in it free to spoil them (the result is NaN then anyway), the NaN test
// beside them (NanFree): a NaN-propagating maximum costs two compares and a blend per vector.
// Ties keep the later value, as maximum does.
template <bool Max, class T, int N> struct ExtremeLanes {
  Vec<T, N> best;
  NanFree<T, N> nan_free;
  static ExtremeLanes broadcast(T init) {
    return ExtremeLanes{Vec<T, N>::broadcast(init), NanFree<T, N>::all_clean()};
  }
  void update(const Vec<T, N>& v) {
    if constexpr (Max) best = detail::vsel(best.v > v.v, best, v);
    else best = detail::vsel(best.v < v.v, best, v);
    nan_free.see(v);
  }
  T fold() const {
    if (!nan_free.clean()) return std::numeric_limits<T>::quiet_NaN();
    return Max ? reduce_max(best) : reduce_min(best);
  }
};
template <bool Max, class T, int N>
inline ExtremeLanes<Max, T, N> extreme_merge(const ExtremeLanes<Max, T, N>& a,
                                             const ExtremeLanes<Max, T, N>& b) {
  return ExtremeLanes<Max, T, N>{Max ? maximum(a.best, b.best) : minimum(a.best, b.best),
                                 a.nan_free & b.nan_free};
}

// The per-lane state of a vectorized argmax/argmin: each lane's first best value and its
// position. Several copies run side by side (each waits on its own compare and blends) and
// are merged lane by lane before the lanes are folded (arg_lanes).
// A NaN never enters ``best`` (a compare with it is false): the lanes only note that they saw
// one, and the caller then looks for the first NaN itself (NumPy's answer), a rare second pass.
template <bool Max, class T, class P, int N> struct ArgLanes {
  Vec<T, N> best;
  Vec<P, N> pos;
  NanFree<T, N> nan_free;
  static ArgLanes broadcast(T init) {
    return ArgLanes{Vec<T, N>::broadcast(init), Vec<P, N>::broadcast(P(0)), NanFree<T, N>::all_clean()};
  }
  // the values of positions start, start + 1, ... (one per lane)
  void update(const Vec<T, N>& v, int64_t start) {
    Mask<N> m;
    if constexpr (Max) m = v > best;
    else m = v < best;
    nan_free.see(v);
    best = select(m, v, best);
    pos = select(m, Vec<P, N>::broadcast(P(start)) + Vec<P, N>::iota(P(0)), pos);
  }
  bool saw_nan() const { return !nan_free.clean(); }
  void fold(T& b, int64_t& b_i) const { arg_lanes<Max>(best, pos, b, b_i); }
};
template <bool Max, class T, class P, int N>
inline ArgLanes<Max, T, P, N> arg_merge(const ArgLanes<Max, T, P, N>& a,
                                         const ArgLanes<Max, T, P, N>& b) {
  Mask<N> better;
  if constexpr (Max) better = b.best > a.best;
  else better = b.best < a.best;
  const Mask<N> m = better | ((b.best == a.best) & (b.pos < a.pos));
  return ArgLanes<Max, T, P, N>{select(m, b.best, a.best), select(m, b.pos, a.pos),
                                a.nan_free & b.nan_free};
}

// A sum of N float lanes kept in double, as two halves of N/2 double lanes: each half is a
// register of the ISA's width (a Vec<double, N> is twice that and spills). Adding a
// Vec<float, N> widens it half by half. float32 sums use it so that no float32 addition
// rounds along the way.
template <int N> struct WideSum {
  static_assert(N >= 2, "WideSum<N>: N >= 2");
  Vec<double, N / 2> lo, hi;
  static WideSum broadcast(double x) {
    return WideSum{Vec<double, N / 2>::broadcast(x), Vec<double, N / 2>::broadcast(x)};
  }
};
template <int N> inline WideSum<N> operator+(const WideSum<N>& a, const Vec<float, N>& x) {
#if defined(CCG_HAVE_SIMD)      // one vcvtps2pd per half (the generic conversion splits more)
  using D = Vec<double, N / 2>;
  auto add = [&](const auto& l, const auto& h) {
    return WideSum<N>{a.lo + D::from(reinterpret_cast<const typename D::V&>(l)),
                      a.hi + D::from(reinterpret_cast<const typename D::V&>(h))};
  };
#if defined(CCG_HAVE_AVX512)
  if constexpr (N == 16) {
    const __m512 v = reinterpret_cast<const __m512&>(x.v);
    return add(_mm512_cvtps_pd(_mm512_castps512_ps256(v)),
               _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
  }
#endif
  if constexpr (N == 8) {
    const __m256 v = reinterpret_cast<const __m256&>(x.v);
    return add(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
               _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
#endif
  return WideSum<N>{a.lo + convert<double>(detail::lo(x)), a.hi + convert<double>(detail::hi(x))};
}
template <int N> inline WideSum<N> operator+(const WideSum<N>& a, const WideSum<N>& b) {
  return WideSum<N>{a.lo + b.lo, a.hi + b.hi};
}
template <int N> inline double reduce_add(const WideSum<N>& x) { return reduce_add(x.lo + x.hi); }

// np.clip, lane-wise, with the semantics of ccg::clip in scalar.h.
template <class T, int N>
inline Vec<T, N> clip(const Vec<T, N>& x, const Vec<T, N>& lo, const Vec<T, N>& hi) {
  // lane compares blended directly (no Mask: on AVX2 a bitmask round trip costs 5 ops each)
  Vec<T, N> t = detail::vsel(x.v < lo.v, lo, x);
  t = detail::vsel(t.v > hi.v, hi, t);
  if constexpr (std::is_floating_point_v<T>) {
    t = detail::vsel((x.v != x.v) | (lo.v != lo.v) | (hi.v != hi.v), x + lo + hi, t);
  }
  return t;
}

// np.hypot of float32 as NumPy computes it (glibc's correctly rounded hypotf): the squares of
// two floats and their sum are exact in double, so one sqrt and one rounding to float
// follow. libmvec's float kernel is an ULP off at some inputs (enough to flip an argmin
// downstream). Infinities and NaN keep libmvec's answer (hypot(inf, nan) is inf).
template <int N> inline Vec<float, N> hypot(const Vec<float, N>& x, const Vec<float, N>& y) {
  const auto xd = convert<double>(x), yd = convert<double>(y);
  const auto exact = convert<float>(sqrt(xd * xd + yd * yd));
  return select(isfinite(x) & isfinite(y), exact, detail::map2<detail::op_hypot>(x, y));
}
inline float hypot(float x, float y) {
  if (std::isfinite(x) && std::isfinite(y))
    return float(std::sqrt(double(x) * double(x) + double(y) * double(y)));
  return detail::scalar2<detail::op_hypot>(x, y);
}

// np.hypot of float64 as NumPy computes it: glibc's hypot (a sqrt, then one correction step
// from the rounding error of the squares, which makes it correctly rounded in practice;
// scaled by 2^600 when an operand is huge or tiny). libmvec's is an ULP off at many inputs,
// which tan() of a result near 1e19 turns into any value. Plain IEEE lane arithmetic (no FMA:
// -ffp-contract=off), so vector lanes and the scalar form agree bit for bit.
namespace detail {
// Ops is hypot_scalar_ops (double) or hypot_vec_ops<N> (Vec<double, N>): constants and select.
struct hypot_scalar_ops {
  using V = double;
  static V c(double d) { return d; }
  static V sel(bool m, V a, V b) { return m ? a : b; }
  static V abs(V a) { return std::fabs(a); }
};
template <int N> struct hypot_vec_ops {
  using V = Vec<double, N>;
  static V c(double d) { return V::broadcast(d); }
  static V sel(Mask<N> m, const V& a, const V& b) { return select(m, a, b); }
  static V abs(const V& a) { return ccg::abs(a); }
};
template <class Ops, class V> inline V hypot_kernel(const V& ax, const V& ay) {
  using std::sqrt;
  const V two = Ops::c(2.0), four = Ops::c(4.0);
  V h = sqrt(ax * ax + ay * ay);
  auto big = h <= two * ay;
  V delta = Ops::sel(big, h - ay, h - ax);
  V t1 = Ops::sel(big, ax * (two * delta - ax), two * delta * (ax - two * ay));
  V t2 = Ops::sel(big, (delta - two * (ax - ay)) * delta, (four * delta - ay) * ay + delta * delta);
  return h - (t1 + t2) / (two * h);
}
// One kernel per lane: huge operands are scaled by 2^-600, tiny ones by 2^600 (the tiny case
// wins when both hold), the rest by 1 (exact), and the result scaled back. Computing all three
// kernels and selecting would square ordinary values times 2^-600: subnormal products, which
// cost a microcode assist each (a 5x slower abs(z) loop on AMD Zen).
template <class Ops, class V> inline V hypot_glibc(const V& x, const V& y) {
  const V up = Ops::c(0x1p600), down = Ops::c(0x1p-600), one = Ops::c(1.0);
  V xa = Ops::abs(x), ya = Ops::abs(y);
  V ax = Ops::sel(xa < ya, ya, xa), ay = Ops::sel(xa < ya, xa, ya);
  auto tiny = ay < Ops::c(0x1p-511);
  auto huge = ax > Ops::c(0x1p511);
  V scale = Ops::sel(tiny, up, Ops::sel(huge, down, one));
  V unscale = Ops::sel(tiny, down, Ops::sel(huge, up, one));
  V r = hypot_kernel<Ops, V>(ax * scale, ay * scale) * unscale;
  return Ops::sel(ay <= ax * Ops::c(0x1p-54), ax + ay, r);
}
}  // namespace detail
inline double hypot(double x, double y) {
  if (std::isinf(x) || std::isinf(y)) return std::numeric_limits<double>::infinity();
  if (std::isnan(x) || std::isnan(y)) return x + y;
  return detail::hypot_glibc<detail::hypot_scalar_ops>(x, y);
}
template <int N> inline Vec<double, N> hypot(const Vec<double, N>& x, const Vec<double, N>& y) {
  using V = Vec<double, N>;
  V r = detail::hypot_glibc<detail::hypot_vec_ops<N>>(x, y);
  r = select(isnan(x) | isnan(y), x + y, r);
  return select(isinf(x) | isinf(y), V::broadcast(std::numeric_limits<double>::infinity()), r);
}


// ------------------------------------------------- powers with a constant exponent
// powc<P>(x) = np.power(x, P / 2) for a compile-time P, |P| <= 16 (integer and half-integer
// exponents up to 8): a few multiplies (and a sqrt or a divide) instead of libmvec's pow, so
// x ** 3 runs at the speed of x * x * x. cppcodegen/backend/cexpr.py (const_power) picks it.
// Accuracy (measured by tests/test_power_const.py over 2^22 float32 samples and 2^20 float64):
//  - float32 positive integer exponents: float-float arithmetic (FMA error-free products,
//    full vector width), rounded once; other float32 exponents: computed in double (at most
//    ~10 roundings of 2^-53) and rounded once to float. Both are correctly rounded except at
//    near-halfway cases (measured: 0 ULP from float64 pow rounded to float32 over 2^22
//    samples), so at most 1 ULP from NumPy's powf, which is itself up to 1 ULP off.
//  - float64: double-double arithmetic (FMA error-free products, one Newton step for sqrt
//    and for 1 / x^n), rounded once: measured max 1 ULP from NumPy's pow.
//  Where x^n or its error terms are subnormal, the extra precision is lost (as plain
//  products: <= ~1.5 ULP of the subnormal spacing).
// Special values are C99 pow's (= NumPy's): pow(x, 0) = 1 (NaN too); for half-integer
// exponents pow(-0, y) and pow(-inf, y) are pow(+0, y) and pow(+inf, y); x ** 0.5 (P == 1) is
// sqrt, as NumPy's own loop computes it (sqrt(-0) = -0, sqrt(-inf) = NaN).
// Scalar forms run the same lane arithmetic, so scalar tails agree with vector loops bit for bit.
namespace detail {
template <class T, int N>
inline Vec<T, N> fmadd(const Vec<T, N>& a, const Vec<T, N>& b, const Vec<T, N>& c) {
  using VT = Vec<T, N>;
#ifdef CCG_HAVE_SIMD
  if constexpr (VT::bytes > CCG_VEC_BYTES) {
    return join(fmadd(lo(a), lo(b), lo(c)), fmadd(hi(a), hi(b), hi(c)));
  }
#if defined(__AVX512F__)
  if constexpr (VT::bytes == 64 && std::is_same_v<T, double>)
    return VT::from((typename VT::V)_mm512_fmadd_pd((__m512d)a.v, (__m512d)b.v, (__m512d)c.v));
  if constexpr (VT::bytes == 64 && std::is_same_v<T, float>)
    return VT::from((typename VT::V)_mm512_fmadd_ps((__m512)a.v, (__m512)b.v, (__m512)c.v));
#endif
#if defined(__FMA__)
  if constexpr (VT::bytes == 32 && std::is_same_v<T, double>)
    return VT::from((typename VT::V)_mm256_fmadd_pd((__m256d)a.v, (__m256d)b.v, (__m256d)c.v));
  if constexpr (VT::bytes == 32 && std::is_same_v<T, float>)
    return VT::from((typename VT::V)_mm256_fmadd_ps((__m256)a.v, (__m256)b.v, (__m256)c.v));
#endif
#endif
  VT r;
  for (int i = 0; i < N; ++i) r.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
  return r;
}
// t where it is finite, something finite where it is not (+-inf to +-max, NaN to -max): the
// error term of powc's last product, which is NaN or infinite only where that product is
// infinite or NaN itself (then any finite term leaves it so). max/min (they return their
// second operand when the first is NaN): two instructions and no compare-and-blend, which
// made AVX2 x ** 3 cost 20% more than x * x * x inside GELU.
template <class T, int N> inline Vec<T, N> clamp_finite(const Vec<T, N>& t) {
  using VT = Vec<T, N>;
  const VT big = VT::broadcast(std::numeric_limits<T>::max());
  const VT nbig = VT::broadcast(-std::numeric_limits<T>::max());
#ifdef CCG_HAVE_SIMD
  if constexpr (VT::bytes > CCG_VEC_BYTES) {
    return join(clamp_finite(lo(t)), clamp_finite(hi(t)));
  }
#if defined(__AVX512F__)
  if constexpr (VT::bytes == 64 && std::is_same_v<T, float>)
    return VT::from((typename VT::V)_mm512_min_ps(_mm512_max_ps((__m512)t.v, (__m512)nbig.v), (__m512)big.v));
  if constexpr (VT::bytes == 64 && std::is_same_v<T, double>)
    return VT::from((typename VT::V)_mm512_min_pd(_mm512_max_pd((__m512d)t.v, (__m512d)nbig.v), (__m512d)big.v));
#endif
#if defined(__AVX__)
  if constexpr (VT::bytes == 32 && std::is_same_v<T, float>)
    return VT::from((typename VT::V)_mm256_min_ps(_mm256_max_ps((__m256)t.v, (__m256)nbig.v), (__m256)big.v));
  if constexpr (VT::bytes == 32 && std::is_same_v<T, double>)
    return VT::from((typename VT::V)_mm256_min_pd(_mm256_max_pd((__m256d)t.v, (__m256d)nbig.v), (__m256d)big.v));
#endif
#endif
  VT r = vsel(t.v != t.v, nbig, t);
  r = vsel(r.v > big.v, big, r);
  return vsel(r.v < nbig.v, nbig, r);
}
}  // namespace detail

template <int P, class T, int N> inline Vec<T, N> powc(const Vec<T, N>& x);
namespace detail {
// x ** (P / 2) as m ** (P / 2) * 2 ** (e * P / 2) for x = m * 2 ** e (e even for a half
// power): the power of m in range, then one rounding by ldexp (into a subnormal, or to 0 or
// an infinity, as the exact result rounds)
template <int P, class T> inline T powc_scaled(T x) {
  int e;
  T m = std::frexp(x, &e);
  if ((P % 2) != 0 && (e & 1)) { m *= T(2); e -= 1; }
  return std::ldexp(powc<P>(Vec<T, 1>::broadcast(m)).v[0], e * P / 2);
}
}  // namespace detail
template <int P, class T, int N> inline Vec<T, N> powc(const Vec<T, N>& x) {
  static_assert(std::is_floating_point_v<T>, "powc needs float or double");
  static_assert(P >= -16 && P <= 16, "powc: |exponent| <= 8");
  using VT = Vec<T, N>;
  constexpr int K = (P < 0 ? -P : P) / 2;        // integer part of |exponent|
  constexpr bool half = (P % 2) != 0;
  if constexpr (P == 0) return VT::broadcast(T(1));
  else if constexpr (P == 2) return x;
  else if constexpr (P == 1) return sqrt(x);
  else if constexpr (P == -2) return VT::broadcast(T(1)) / x;
  else if constexpr (P == 4) return x * x;
  else {
    using VD = Vec<double, N>;
    const double inf = std::numeric_limits<double>::infinity();
    if constexpr (std::is_same_v<T, float> && (half || P < 0)) {
      // float32 with a sqrt or a divide: in double, rounded once
#ifdef CCG_HAVE_SIMD
      // halves of native width: g++ builds the constants of a double vector wider than a
      // register lane by lane on the stack in every iteration (AVX-512 x ** -3 3x slower)
      if constexpr (VD::bytes > CCG_VEC_BYTES && N % 2 == 0)
        return detail::join(powc<P>(detail::lo(x)), powc<P>(detail::hi(x)));
#endif
      VD xd = convert<double>(x);
      if constexpr (half) xd = detail::vsel(xd.v == VD::broadcast(-inf).v, VD::broadcast(inf), xd) + VD::broadcast(0.0);
      VD r = half ? sqrt(xd) : xd;
      for (int k = half ? 0 : 1; k < K; ++k) r = r * xd;
      if constexpr (P < 0) r = VD::broadcast(1.0) / r;
      return convert<float>(r);
    } else {
      // double-double in T (hi + lo, FMA error-free products), rounded once; float32
      // positive integer powers stay at full vector width (x ** 3 at the cost of x * x * x)
      VT xf = x;
      if constexpr (half) xf = detail::vsel(xf.v == VT::broadcast(-T(inf)).v, VT::broadcast(T(inf)), xf) + VT::broadcast(T(0));
      VT hi = xf, lo = VT::broadcast(T(0));
      if constexpr (half) {                     // sqrt(x) = hi + lo (one Newton step)
        hi = sqrt(xf);
        lo = detail::fmadd(-hi, hi, xf) / (hi + hi);
      }
      constexpr int steps = half ? K : K - 1;   // multiplications by x
      for (int k = 0; k < (P > 0 ? steps - 1 : steps); ++k) {  // (hi + lo) * x, hi's product exact
        VT p = hi * xf;
        VT e = detail::fmadd(hi, xf, -p);
        lo = (!half && k == 0) ? e : detail::fmadd(lo, xf, e);   // lo == 0 at the first step
        hi = p;
      }
      if constexpr (P > 0) {
        if constexpr (steps == 0) return hi + lo;              // unreachable (P == 1 is sqrt)
        // the last product rounds once: hi * x + lo * x (signed zeros come out right). An
        // integer power's lo is NaN or infinite only where hi or x is infinite (or x NaN):
        // clamped finite, the product stays hi * x. A half power's lo is also NaN at x = 0
        // (the Newton step's 0 / 0): then the plain product.
        if constexpr (!half) return detail::fmadd(hi, xf, detail::clamp_finite(lo * xf));
        // Where the product overflows, lo * x may be an infinity of the other sign (x **
        // 1.5 of 3e262 was -inf): an infinite or NaN r (r - r is NaN) is the plain product.
        VT r = detail::fmadd(hi, xf, lo * xf);
        VT d = r - r;
        return detail::vsel(d.v != d.v, hi * xf, r);
      } else {
        const VT one = VT::broadcast(T(1));
        VT q = one / hi;
        VT e = detail::fmadd(-q, lo, detail::fmadd(-q, hi, one));   // 1 - q * (hi + lo)
        VT r = detail::fmadd(q, e, q);
        r = detail::vsel(r.v != r.v, q, r);
        // x ** n overflowed where 1 / x ** n is still a subnormal (2e154 ** -2 is 2.5e-309,
        // not 0), or is itself subnormal (its low digits lost): those lanes scaled by a power
        // of two (rare: a branch, off the common path)
        const Mask<N> edge = (isinf(hi) | (abs(hi) < VT::broadcast(std::numeric_limits<T>::min())))
                             & isfinite(xf) & (xf != VT::broadcast(T(0)));
        if (__builtin_expect(edge.any(), 0)) {
          for (int i = 0; i < N; ++i)
            if (std::isinf(hi.v[i]) || std::abs(hi.v[i]) < std::numeric_limits<T>::min())
              if (std::isfinite(xf.v[i]) && xf.v[i] != T(0))
                r.v[i] = detail::powc_scaled<P>(xf.v[i]);
        }
        return r;
      }
    }
  }
}
template <int P> inline float powc(float x) { return powc<P>(Vec<float, 1>::broadcast(x)).v[0]; }
// A scalar double positive integer power (loops of scalar code, where the chain's latency is
// the cost): the same double-double products as the vector form, with the last product's
// low part tested by a branch (predicted, off the chain) instead of clamped.
template <int P> inline double powc(double x) {
  if constexpr (P > 4 && P % 2 == 0) {
    double hi = x * x, lo = std::fma(x, x, -hi);
    for (int k = 2; k < P / 2 - 1; ++k) {
      double p = hi * x;
      lo = std::fma(lo, x, std::fma(hi, x, -p));
      hi = p;
    }
    const double t = lo * x;
    if (__builtin_expect(std::isfinite(t), 1)) return std::fma(hi, x, t);
    return hi * x;
  } else {
    return powc<P>(Vec<double, 1>::broadcast(x)).v[0];
  }
}

}  // namespace ccg

#pragma GCC diagnostic pop
