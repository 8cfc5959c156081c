// cppcodegen/gemm.h -- packed, cache-blocked matrix product for generated kernels.
//
// Provides, in namespace ccg:
//   gemm<T>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc)   T in {float, double}
//   gemm_sized<T, M, N>(the same arguments): sizes M and N known when compiling
//     C[i, j] = sum_k A[i, k] * B[k, j]  for 0 <= i < M, 0 <= j < N, with element strides:
//     A[i, k] = A[i * rsa + k * csa], B[k, j] = B[k * rsb + j * csb], C[i, j] = C[i * rsc + j * csc].
//     A transposed operand is just swapped strides (x @ w.T: rsb = 1, csb = row stride of w).
//     C is overwritten (K = 0 gives zeros). C must not overlap A or B.
//
// Design (the one of BLIS / GotoBLAS, written from the papers):
//   for jc in N by NC:                    B panel   KC x NC   packed once, shared by threads
//     for pc in K by KC:                  each C element adds one KC-long block sum per pc
//       pack B[pc:pc+KC, jc:jc+NC] into NR-wide micro-panels   (threads split the panels;
//                                         with <= 128 rows of A, full panels of a B with
//                                         contiguous rows are read in place instead)
//       work items, handed out dynamically: row chunks (<= MC) x groups of B's panels
//         pack A[chunk, pc:pc+KC] into MR-tall micro-panels (private to the thread)
//         for jr, ir: micro-kernel: MR x NR tile in registers, broadcast-FMA over KC
// Products of at most 2^22 multiply-adds run on the calling thread.
// Edge tiles are packed with zero padding and computed as full tiles; only the valid part
// is stored. The sum order of every C element is fixed by KC (k ascending inside a block,
// blocks added to C in order), never by the thread partition: results are identical for
// any thread count. The micro-kernel uses explicit FMA on AVX-512 / AVX2 (like BLAS) and
// separate multiply and add in the portable fallback (CCG_NO_SIMD).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>

#include "cppcodegen/placement.h"
#endif

#include "cppcodegen/vec.h"  // decides the ISA: CCG_HAVE_AVX512 / CCG_HAVE_SIMD

namespace ccg {
namespace gemm_detail {

// ------------------------------------------------------------------ register layer
// Simd<T>: one register of L lanes: zero, load (aligned packed data), broadcast, fma.
#if defined(CCG_HAVE_AVX512)
template <class T> struct Simd;
template <> struct Simd<float> {
  using V = __m512;
  static constexpr int L = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_load_ps(p); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V bcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
};
template <> struct Simd<double> {
  using V = __m512d;
  static constexpr int L = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const double* p) { return _mm512_load_pd(p); }
  static V loadu(const double* p) { return _mm512_loadu_pd(p); }
  static void storeu(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V bcast(const double* p) { return _mm512_set1_pd(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
};
#elif defined(CCG_HAVE_SIMD)
template <class T> struct Simd;
template <> struct Simd<float> {
  using V = __m256;
  static constexpr int L = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_load_ps(p); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
};
template <> struct Simd<double> {
  using V = __m256d;
  static constexpr int L = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_load_pd(p); }
  static V loadu(const double* p) { return _mm256_loadu_pd(p); }
  static void storeu(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V bcast(const double* p) { return _mm256_broadcast_sd(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
};
#else
// Portable: one lane, multiply then add (two roundings; no FMA assumed).
template <class T> struct Simd {
  using V = T;
  static constexpr int L = 1;
  static V zero() { return T(0); }
  static V load(const T* p) { return *p; }
  static V loadu(const T* p) { return *p; }
  static void storeu(T* p, V v) { *p = v; }
  static V bcast(const T* p) { return *p; }
  static V fma(V a, V b, V c) { return c + a * b; }
  static V add(V a, V b) { return a + b; }
};
#endif

// ------------------------------------------------------------------ shapes and blocking
// Tile: MR rows x NV registers (NR = NV * L columns); MR * NV accumulators stay in
// registers. Blocking (elements): KC x NR of B (one micro-panel) stays in L1 while the
// MR-tall panels of an MC x KC block of A stream from L2; the KC x NC panel of B sits in
// L2/L3. Zen 5: L1d 48 KB, L2 1 MB per core.
template <class T> struct Shape;
#if defined(CCG_HAVE_AVX512)
template <> struct Shape<float> {
  static constexpr int MR = 8, NV = 3;
  static constexpr int64_t KC = 512, MC = 192, NC = 4080;  // NC: a multiple of NR = 48
};
template <> struct Shape<double> {
  static constexpr int MR = 8, NV = 3;
  static constexpr int64_t KC = 512, MC = 96, NC = 2040;
};
#elif defined(CCG_HAVE_SIMD)
template <> struct Shape<float> {
  static constexpr int MR = 6, NV = 2;
  static constexpr int64_t KC = 256, MC = 144, NC = 4080;
};
template <> struct Shape<double> {
  static constexpr int MR = 6, NV = 2;
  static constexpr int64_t KC = 256, MC = 72, NC = 2040;
};
#else
template <class T> struct Shape {
  static constexpr int MR = 4, NV = 4;
  static constexpr int64_t KC = 256, MC = 64, NC = 2048;
};
#endif
#if defined(CCG_HAVE_AVX512)
// A second AVX-512 tile, 6 rows x 4 registers (NR = 64 floats / 32 doubles): as many FMAs
// per loaded element, and no padding where N is a multiple of 64 (32): a 64 x 64 product
// pads to 64 x 96 with the 48-wide tile. gemm_sized<T, M, N>() (sizes known when compiling)
// takes the tile whose padded product is smaller; gemm() keeps the 8 x 3 one (one
// instantiation each: a second one costs ~0.2 s of g++ per kernel file). Results do not
// depend on the tile: each element's sum order is set by KC. Measured here, 1 thread:
// 64^3 float32 9.9 -> 7.0 us, 256^3 382 -> 329 us; 2000^3 keeps the 8 x 3 tile (it pads
// 2000 to 2016 columns, this one to 2048).
template <class T> struct WideShape {
  static constexpr int MR = 6, NV = 4;
};
#endif

struct Blocking {
  int64_t kc, mc, nc;
  int direct = -1;  // read B in place (rows contiguous): 1 yes, 0 no, -1 decide
};

constexpr int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// ------------------------------------------------------------------ packing
// A block (mc x kc at a) -> MR-tall micro-panels, each kc x MR (k-major), zero-padded rows.
template <class T, int MR>
void pack_a(int64_t mc, int64_t kc, const T* a, int64_t rsa, int64_t csa, T* dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    const int64_t m = std::min<int64_t>(MR, mc - i0);
    T* d = dst + i0 * kc;
    if (csa == 1) {
      // rows of A are contiguous: read each row along k, write with stride MR
      for (int64_t i = 0; i < m; ++i) {
        const T* s = a + (i0 + i) * rsa;
        for (int64_t k = 0; k < kc; ++k) d[k * MR + i] = s[k];
      }
    } else {
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t i = 0; i < m; ++i) d[k * MR + i] = a[(i0 + i) * rsa + k * csa];
    }
    for (int64_t i = m; i < MR; ++i)
      for (int64_t k = 0; k < kc; ++k) d[k * MR + i] = T(0);
  }
}

// Micro-panels [p0, p1) of a B block (kc x nc at b) -> each kc x NR (k-major), zero-padded.
template <class T, int NR>
void pack_b(int64_t p0, int64_t p1, int64_t nc, int64_t kc, const T* b, int64_t rsb,
            int64_t csb, T* dst) {
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t j0 = p * NR;
    const int64_t n = std::min<int64_t>(NR, nc - j0);
    T* d = dst + j0 * kc;
    if (csb == 1) {
      for (int64_t k = 0; k < kc; ++k) {
        const T* s = b + k * rsb + j0;
        T* dk = d + k * NR;
        for (int64_t j = 0; j < n; ++j) dk[j] = s[j];
        for (int64_t j = n; j < NR; ++j) dk[j] = T(0);
      }
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const T* s = b + (j0 + j) * csb;
        for (int64_t k = 0; k < kc; ++k) d[k * NR + j] = s[k * rsb];
      }
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = n; j < NR; ++j) d[k * NR + j] = T(0);
    }
  }
}

// ------------------------------------------------------------------ micro-kernel
// c[0:m, 0:n] (= or +=) a_panel (kc x MR) . b_panel (kc x NR, rows ldb apart: NR when
// packed, B's row stride when read in place); m <= MR, n <= NR.
template <class T, int MR, int NV>
inline void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, int64_t ldb,
                         T* __restrict c, int64_t rsc, int64_t csc, int64_t m, int64_t n,
                         bool accumulate) {
  using S = Simd<T>;
  using V = typename S::V;
  constexpr int L = S::L, NR = NV * L;
  V acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = S::zero();
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = S::loadu(b + k * ldb + v * L);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const V ai = S::bcast(a + k * MR + i);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = S::fma(ai, bv[v], acc[i][v]);
    }
  }
  if (m == MR && n == NR && csc == 1) {
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        T* p = c + i * rsc + v * L;
        S::storeu(p, accumulate ? S::add(S::loadu(p), acc[i][v]) : acc[i][v]);
      }
    return;
  }
  alignas(64) T tile[MR * NR];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) S::storeu(tile + i * NR + v * L, acc[i][v]);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T& dst = c[i * rsc + j * csc];
      dst = accumulate ? dst + tile[i * NR + j] : tile[i * NR + j];
    }
}

// ------------------------------------------------------------------ driver
// Rows [m0, m1) x B micro-panels [q0, q1) of one (jc, pc) step, packing A block by block.
template <class T, int MR, int NV>
void compute_block(int64_t m0, int64_t m1, int64_t q0, int64_t q1, int64_t jc, int64_t nc,
                   int64_t pc, int64_t kc, int64_t mc_max, const T* A, int64_t rsa,
                   int64_t csa, const T* bpack, const T* bdirect, int64_t rsb, T* apack, T* C,
                   int64_t rsc, int64_t csc) {
  constexpr int NR = NV * Simd<T>::L;
  for (int64_t ic = m0; ic < m1; ic += mc_max) {
    const int64_t mc = std::min(mc_max, m1 - ic);
    pack_a<T, MR>(mc, kc, A + ic * rsa + pc * csa, rsa, csa, apack);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t j0 = q * NR;
      const int64_t n = std::min<int64_t>(NR, nc - j0);
      // full panels of B are read in place when bdirect is set, else from the packed copy
      const bool direct = bdirect && n == NR;
      const T* bp = direct ? bdirect + j0 : bpack + j0 * kc;
      const int64_t ldb = direct ? rsb : NR;
      for (int64_t i0 = 0; i0 < mc; i0 += MR) {
        const int64_t m = std::min<int64_t>(MR, mc - i0);
        micro_kernel<T, MR, NV>(kc, apack + i0 * kc, bp, ldb,
                                C + (ic + i0) * rsc + (jc + j0) * csc, rsc, csc, m, n, pc > 0);
      }
    }
  }
}

inline void* aligned_buffer(int64_t bytes) {
  return std::aligned_alloc(64, size_t(round_up(std::max<int64_t>(bytes, 64), 64)));
}

// Products of at most this many multiply-adds run on the calling thread: one core does
// 2^22 in about 45 us, and waking a sleeping OpenMP thread (the runtime sets
// OMP_WAIT_POLICY=PASSIVE) costs 10-60 us on this 2-core machine.
constexpr int64_t kParallelWork = int64_t(1) << 22;
// With at most this many rows, B (when its rows are contiguous) is not packed: each of its
// elements is used too few times to pay for the copy.
constexpr int64_t kDirectRows = 128;

// Products of at most this many multiply-adds skip the blocking: no packing, no buffer, no
// parallel region, each row of C a few vector accumulators over B's rows (gemm_small). A 4x4
// or 8x8 product in a loop (a rotation, a Jacobi sweep's J.T @ A @ J) took 0.75 us in the
// blocked path, most of it the buffer and the region; 32^3 is where packing starts to pay.
constexpr int64_t kSmallWork = int64_t(1) << 15;

// C = A @ B directly: each element's products added in k order with one rounding each
// (fma), as the blocked path adds them when K fits one K-block: the same results.
template <class T>
void gemm_small(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                const T* B, int64_t rsb, int64_t csb, T* C, int64_t rsc, int64_t csc) {
  using S = Simd<T>;
  using V = typename S::V;
  constexpr int L = S::L;
  alignas(64) T row[L];
  alignas(64) T out[L];
  for (int64_t i = 0; i < M; ++i) {
    const T* a = A + i * rsa;
    int64_t j = 0;
    if (csb == 1 && csc == 1) {
      for (; j + 2 * L <= N; j += 2 * L) {
        V c0 = S::zero(), c1 = S::zero();
        for (int64_t k = 0; k < K; ++k) {
          const V x = S::bcast(a + k * csa);
          c0 = S::fma(x, S::loadu(B + k * rsb + j), c0);
          c1 = S::fma(x, S::loadu(B + k * rsb + j + L), c1);
        }
        S::storeu(C + i * rsc + j, c0);
        S::storeu(C + i * rsc + j + L, c1);
      }
    }
    for (; j < N; j += L) {     // the last columns, or strided B / C: through padded rows
      const int64_t w = std::min<int64_t>(L, N - j);
      V c0 = S::zero();
      for (int64_t k = 0; k < K; ++k) {
        for (int64_t t = 0; t < L; ++t) row[t] = t < w ? B[k * rsb + (j + t) * csb] : T(0);
        c0 = S::fma(S::bcast(a + k * csa), S::loadu(row), c0);
      }
      S::storeu(out, c0);
      for (int64_t t = 0; t < w; ++t) C[i * rsc + (j + t) * csc] = out[t];
    }
  }
}

// Slabs of the inner dimension computed apart (their partial products added in slab order)
// when the product is too small to give every thread row and column items of its own but
// its inner dimension is long: X.T @ X of a 50000 x 50 X is 2 items of 98 K-blocks each,
// one thread's work per K-block step. The number depends on the shape only, so every
// element's sum is the same for any thread count.
constexpr int64_t kSlabK = 2048, kMaxSlabs = 16, kSlabArea = 256 * 256;
inline int64_t k_slabs(int64_t M, int64_t N, int64_t K) {
  if (M * N > kSlabArea || K < 2 * kSlabK || K < 8 * std::max(M, N)) return 1;
  return std::min(kMaxSlabs, K / kSlabK);
}

template <class T, int MR, int NV>
void gemm_blocked(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                  const T* B, int64_t rsb, int64_t csb, T* C, int64_t rsc, int64_t csc,
                  Blocking blk, int nthreads) {
  constexpr int NR = NV * Simd<T>::L;
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * rsc + j * csc] = T(0);
    return;
  }
  if (M * N * K <= kSmallWork) {
    gemm_small<T>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc);
    return;
  }
  if (nthreads < 1 || M * N * K <= kParallelWork) nthreads = 1;
  const int64_t slabs = k_slabs(M, N, K);
  if (slabs > 1) {  // a long inner dimension, a small product (X.T @ X of a tall X)
    T* part = static_cast<T*>(aligned_buffer(slabs * M * N * int64_t(sizeof(T))));
    if (part) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads) \
    if (nthreads > 1 && ccg::team_begin())
      for (int64_t s = 0; s < slabs; ++s) {
        const int64_t k0 = K * s / slabs, k1 = K * (s + 1) / slabs;
        gemm_blocked<T, MR, NV>(M, N, k1 - k0, A + k0 * csa, rsa, csa, B + k0 * rsb, rsb, csb,
                                part + s * M * N, N, 1, blk, 1);
      }
      for (int64_t i = 0; i < M; ++i)       // the slabs' partial products, added in order
        for (int64_t j = 0; j < N; ++j) {
          T acc = part[i * N + j];
          for (int64_t s = 1; s < slabs; ++s) acc += part[s * M * N + i * N + j];
          C[i * rsc + j * csc] = acc;
        }
      std::free(part);
      return;
    }
  }
  // Block sizes: whole micro-panels (packing pads the last panel to MR / NR), and the
  // K and N blocks evened out (1100 = 367 + 367 + 366, not 512 + 512 + 76). They depend on
  // the shape only: the sum order of every element is the same for any thread count.
  blk.kc = std::max<int64_t>(1, blk.kc);
  blk.kc = (K + (K + blk.kc - 1) / blk.kc - 1) / ((K + blk.kc - 1) / blk.kc);
  blk.nc = std::max<int64_t>(NR, blk.nc / NR * NR);
  const int64_t jblocks = (N + blk.nc - 1) / blk.nc;
  blk.nc = round_up((N + jblocks - 1) / jblocks, NR);
  blk.mc = std::max<int64_t>(MR, blk.mc / MR * MR);
  const int64_t max_panels = blk.nc / NR;
  // Work items of a (jc, pc) step, handed out dynamically (a busy core takes fewer):
  // row chunks of at most MC rows x groups of B's micro-panels. One thread: MC-row blocks
  // across all of B. Several: at least one row chunk per thread when M is small, and
  // enough panel groups for about four items per thread (each item packs its own rows of A).
  int64_t mc = blk.mc, group = max_panels;
  if (nthreads > 1) {
    mc = std::min(blk.mc, round_up((M + nthreads - 1) / nthreads, MR));
    const int64_t row_items = (M + mc - 1) / mc;
    const int64_t want = (4 * int64_t(nthreads) + row_items - 1) / row_items;
    const int64_t col_items = std::max<int64_t>(1, std::min(max_panels, want));
    group = (max_panels + col_items - 1) / col_items;
  }
  const int64_t kc_max = blk.kc;
  const int64_t nc_max = blk.nc;
  const int64_t mc_max = std::min(mc, round_up(M, MR));
  const int64_t bbytes = kc_max * nc_max * int64_t(sizeof(T));
  const int64_t abytes = round_up(kc_max * mc_max * int64_t(sizeof(T)), 64);
  char* mem = static_cast<char*>(aligned_buffer(round_up(bbytes, 64) + nthreads * abytes));
  if (!mem) {  // out of memory: plain loops, same products, unblocked sum order
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        T s = T(0);
        for (int64_t k = 0; k < K; ++k) s += A[i * rsa + k * csa] * B[k * rsb + j * csb];
        C[i * rsc + j * csc] = s;
      }
    return;
  }
  T* bpack = reinterpret_cast<T*>(mem);
  const bool direct_b = csb == 1 && (blk.direct == 1 || (blk.direct < 0 && M <= kDirectRows));
  const int64_t row_items = (M + mc - 1) / mc;
#pragma omp parallel num_threads(nthreads) if (nthreads > 1 && ccg::team_begin())
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    T* apack = reinterpret_cast<T*>(mem + round_up(bbytes, 64) + tid * abytes);
    for (int64_t jc = 0; jc < N; jc += blk.nc) {
      const int64_t nc = std::min(blk.nc, N - jc);
      const int64_t panels = (nc + NR - 1) / NR;
      const int64_t col_items = (panels + group - 1) / group;
      for (int64_t pc = 0; pc < K; pc += blk.kc) {
        const int64_t kc = std::min(blk.kc, K - pc);
        // (the implicit barrier of the previous step's loop keeps bpack until all are done)
#pragma omp for schedule(static)
        for (int64_t q = 0; q < panels; ++q)
          if (!direct_b || (q + 1) * NR > nc)
            pack_b<T, NR>(q, q + 1, nc, kc, B + pc * rsb + jc * csb, rsb, csb, bpack);
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < row_items * col_items; ++it) {
          const int64_t r = it / col_items, q = it % col_items;
          compute_block<T, MR, NV>(r * mc, std::min(M, (r + 1) * mc), q * group,
                                   std::min(panels, (q + 1) * group), jc, nc, pc, kc, mc, A,
                                   rsa, csa, bpack, direct_b ? B + pc * rsb + jc : nullptr,
                                   rsb, apack, C, rsc, csc);
        }
      }
    }
  }
  std::free(mem);
}

}  // namespace gemm_detail

namespace gemm_detail {
// nthreads <= 0: OpenMP's current default (omp_get_max_threads()).
inline int threads_or_default(int nthreads) {
#ifdef _OPENMP
  return nthreads > 0 ? nthreads : omp_get_max_threads();
#else
  (void)nthreads;
  return 1;
#endif
}

// gemm() with the register tile of MR rows by NV vectors (the cache blocks of Shape<T>)
template <class T, int MR, int NV>
void gemm_tiled(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                const T* B, int64_t rsb, int64_t csb, T* C, int64_t rsc, int64_t csc,
                int nthreads) {
  using Sh = Shape<T>;
  gemm_blocked<T, MR, NV>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc,
                          {Sh::KC, Sh::MC, Sh::NC}, threads_or_default(nthreads));
}
}  // namespace gemm_detail

// C = A @ B with element strides (see the top of this file); T is float or double.
// nthreads <= 0: OpenMP's current default (omp_get_max_threads()).
template <class T>
void gemm(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa, const T* B,
          int64_t rsb, int64_t csb, T* C, int64_t rsc, int64_t csc, int nthreads = 0) {
  using Sh = gemm_detail::Shape<T>;
  gemm_detail::gemm_tiled<T, Sh::MR, Sh::NV>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc,
                                             nthreads);
}

namespace gemm_detail {
// Does the wide tile (WideShape) pad an M x N product less than the default one?
template <class T> constexpr bool wide_tile_pays(int64_t M, int64_t N) {
#if defined(CCG_HAVE_AVX512)
  constexpr int64_t L = Simd<T>::L;
  return round_up(M, WideShape<T>::MR) * round_up(N, WideShape<T>::NV * L) <
         round_up(M, Shape<T>::MR) * round_up(N, Shape<T>::NV * L);
#else
  (void)M, (void)N;
  return false;
#endif
}
}  // namespace gemm_detail

// gemm() for M and N known when compiling (M == MM, N == NN): the register tile that pads less.
template <class T, int64_t MM, int64_t NN>
void gemm_sized(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                const T* B, int64_t rsb, int64_t csb, T* C, int64_t rsc, int64_t csc,
                int nthreads = 0) {
#if defined(CCG_HAVE_AVX512)
  if constexpr (gemm_detail::wide_tile_pays<T>(MM, NN)) {
    using W = gemm_detail::WideShape<T>;
    gemm_detail::gemm_tiled<T, W::MR, W::NV>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc,
                                             nthreads);
  } else {  // (an else: the other tile is not instantiated)
    gemm<T>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc, nthreads);
  }
#else
  gemm<T>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc, nthreads);
#endif
}

}  // namespace ccg
