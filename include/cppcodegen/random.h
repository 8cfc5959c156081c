// Counter-based random numbers for kernels: Philox4x32-10 (Salmon et al. 2011).
// Element i of a random op draws philox(counter = (i, offset), key = seed) on its own, so the
// values depend only on (seed, offset, i): never on threads, vector width or chunking.
// runtime/random.py holds the NumPy reference of exactly this scheme (the tests' oracle).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cppcodegen/vec.h"

namespace ccg {

struct Philox4 { uint32_t w[4]; };

// Ten rounds on four 32-bit words, each held in a 64-bit W: a uint64_t, or a vector of them
// (random_uniform_lanes: each round's products are then vpmuludq's). The key's increments
// after the last round are never used.
// a * c of 32-bit values in 64-bit lanes: one vpmuludq per register (GCC's own 64-bit
// vector multiply is three of them and shifts: it cannot see that the high halves are zero)
template <class W> inline W mul32(const W& a, uint64_t c) {
#ifdef CCG_HAVE_SIMD
#ifdef __AVX512F__
  if constexpr (sizeof(W) == 64) return (W)_mm512_mul_epu32((__m512i)a, _mm512_set1_epi64(c));
#endif
#ifdef __AVX2__
  if constexpr (sizeof(W) == 32) return (W)_mm256_mul_epu32((__m256i)a, _mm256_set1_epi64x(c));
  if constexpr (sizeof(W) == 64) {
    __m256i h[2];
    std::memcpy(h, &a, sizeof(W));
    h[0] = _mm256_mul_epu32(h[0], _mm256_set1_epi64x(c));
    h[1] = _mm256_mul_epu32(h[1], _mm256_set1_epi64x(c));
    W r;
    std::memcpy(&r, h, sizeof(W));
    return r;
  }
#endif
#endif
  return a * c;
}

template <class W>
inline void philox_rounds(W& c0, W& c1, W& c2, W& c3, uint64_t k0, uint64_t k1) {
#pragma GCC unroll 10
  for (int r = 0; r < 10; ++r) {
    const W p0 = mul32(c0, 0xD2511F53ull), p1 = mul32(c2, 0xCD9E8D57ull);
    const W n0 = (p1 >> 32) ^ c1 ^ k0, n2 = (p0 >> 32) ^ c3 ^ k1;
    c1 = p1 & 0xffffffffull; c3 = p0 & 0xffffffffull; c0 = n0; c2 = n2;
    k0 = (k0 + 0x9E3779B9ull) & 0xffffffffull; k1 = (k1 + 0xBB67AE85ull) & 0xffffffffull;
  }
}

inline Philox4 philox4x32(uint64_t index, uint64_t offset, uint64_t seed) {
  uint64_t c0 = index & 0xffffffffull, c1 = index >> 32;
  uint64_t c2 = offset & 0xffffffffull, c3 = offset >> 32;
  philox_rounds(c0, c1, c2, c3, seed & 0xffffffffull, seed >> 32);
  return Philox4{{uint32_t(c0), uint32_t(c1), uint32_t(c2), uint32_t(c3)}};
}

// uniform in [0, 1): 24 random bits for float, 53 for double
template <class T> inline T random_uniform(int64_t index, uint64_t seed, uint64_t offset) {
  const Philox4 r = philox4x32(uint64_t(index), offset, seed);
  if constexpr (sizeof(T) == 4) {
    return T(r.w[0] >> 8) * T(5.9604644775390625e-08);                 // 2**-24
  } else {
    const uint64_t bits = ((uint64_t(r.w[0]) << 32) | r.w[1]) >> 11;
    return T(bits) * T(1.1102230246251565e-16);                         // 2**-53
  }
}

// standard normal by Box-Muller (cosine branch), computed in double; log and cos are the
// vector loops' (libmvec's, vec.h's scalar forms), so a lane of random_normal_lanes and this
// draw of the same index are bit-identical
template <class T> inline T random_normal(int64_t index, uint64_t seed, uint64_t offset) {
  const Philox4 r = philox4x32(uint64_t(index), offset, seed);
  const double two_pi = 6.283185307179586;
  double u1, u2;
  if constexpr (sizeof(T) == 4) {
    u1 = (double(r.w[0] >> 8) + 1.0) * 5.9604644775390625e-08;         // (0, 1]
    u2 = double(r.w[1] >> 8) * 5.9604644775390625e-08;
  } else {
    u1 = (double(((uint64_t(r.w[0]) << 32) | r.w[1]) >> 11) + 1.0) * 1.1102230246251565e-16;
    u2 = double(((uint64_t(r.w[2]) << 32) | r.w[3]) >> 11) * 1.1102230246251565e-16;
  }
  return T(std::sqrt(-2.0 * ccg::log(u1)) * ccg::cos(two_pi * u2));
}

#ifdef CCG_HAVE_SIMD
// Lanes of fewer than 2**53 as doubles, exactly. Without AVX-512DQ there is no vector
// int64 -> double instruction (GCC converts lane by lane): each 32-bit half goes in through
// the mantissa of 2**52 (or'd into its bits, 2**52 subtracted), then hi * 2**32 + lo.
template <int N, class U> inline Vec<double, N> exact_double(const U& bits) {
#ifdef __AVX512DQ__
  using I = typename Vec<int64_t, N>::V;
  return convert<double>(Vec<int64_t, N>::from((I)bits));
#else
  using D = typename Vec<double, N>::V;
  const U magic = detail::splat<U>(0x4330000000000000ull);
  const D two52 = detail::splat<D>(4503599627370496.0);
  const D hi = (D)((bits >> 32) | magic) - two52, lo = (D)((bits & 0xffffffffull) | magic) - two52;
  return Vec<double, N>::from(hi * detail::splat<D>(4294967296.0) + lo);
#endif
}

// Philox's four words for each lane's index (the draws' counter: index, offset; key: seed)
template <class U, class VI, class VS, class VO>
inline void philox_lanes(const VI& index, const VS& seed, const VO& offset, U& c0, U& c1, U& c2,
                         U& c3) {
  const uint64_t off = uint64_t(offset.v[0]), key = uint64_t(seed.v[0]);
  const U ix = (U)index.v;
  c0 = ix & 0xffffffffull;
  c1 = ix >> 32;
  c2 = detail::splat<U>(off & 0xffffffffull);
  c3 = detail::splat<U>(off >> 32);
  philox_rounds(c0, c1, c2, c3, key & 0xffffffffull, key >> 32);
}
#endif

// Uniform draws of a vector's lanes (the vector renderer's random_uniform): the same bits as
// the scalar draw of each lane's index. The four words are 64-bit lanes holding 32-bit
// values, so each round's products are vpmuludq's (mul32); the 53 bits become a double
// exactly (exact_double).
template <class T, class VI, class VS, class VO>
inline Vec<T, VI::size> random_uniform_lanes(const VI& index, const VS& seed,
                                             const VO& offset) {
  constexpr int N = VI::size;
#ifdef CCG_HAVE_SIMD
  using U = typename Vec<uint64_t, N>::V;
  U c0, c1, c2, c3;
  philox_lanes(index, seed, offset, c0, c1, c2, c3);
  if constexpr (sizeof(T) == 4) {
    return convert<T>(exact_double<N>(U(c0 >> 8)) * Vec<double, N>::broadcast(5.9604644775390625e-08));
  } else {
    return exact_double<N>(U(((c0 << 32) | c1) >> 11)) * Vec<double, N>::broadcast(1.1102230246251565e-16);
  }
#else
  Vec<T, N> r;
  for (int l = 0; l < N; ++l) r.v[l] = random_uniform<T>(int64_t(index.v[l]), uint64_t(seed.v[0]),
                                                         uint64_t(offset.v[0]));
  return r;
#endif
}

// Normal draws of a vector's lanes: random_normal's Box-Muller on each lane's words, the
// log, sqrt and cos in vector form (in double; a float draw is rounded once at the end).
template <class T, class VI, class VS, class VO>
inline Vec<T, VI::size> random_normal_lanes(const VI& index, const VS& seed, const VO& offset) {
  constexpr int N = VI::size;
#ifdef CCG_HAVE_SIMD
  using U = typename Vec<uint64_t, N>::V;
  using D = Vec<double, N>;
  U c0, c1, c2, c3;
  philox_lanes(index, seed, offset, c0, c1, c2, c3);
  D u1, u2;
  if constexpr (sizeof(T) == 4) {
    u1 = (exact_double<N>(U(c0 >> 8)) + D::broadcast(1.0)) * D::broadcast(5.9604644775390625e-08);
    u2 = exact_double<N>(U(c1 >> 8)) * D::broadcast(5.9604644775390625e-08);
  } else {
    u1 = (exact_double<N>(U(((c0 << 32) | c1) >> 11)) + D::broadcast(1.0)) *
         D::broadcast(1.1102230246251565e-16);
    u2 = exact_double<N>(U(((c2 << 32) | c3) >> 11)) * D::broadcast(1.1102230246251565e-16);
  }
  const D r = sqrt(D::broadcast(-2.0) * log(u1)) * cos(D::broadcast(6.283185307179586) * u2);
  if constexpr (sizeof(T) == 4) return convert<T>(r);
  else return r;
#else
  Vec<T, N> r;
  for (int l = 0; l < N; ++l) r.v[l] = random_normal<T>(int64_t(index.v[l]), uint64_t(seed.v[0]),
                                                        uint64_t(offset.v[0]));
  return r;
#endif
}

}  // namespace ccg
