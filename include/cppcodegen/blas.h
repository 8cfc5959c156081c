// cppcodegen/blas.h -- matrix products computed by the BLAS NumPy links, called from a kernel.
//
// Provides, in namespace ccg:
//   blas_gemm<T>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc)   T in {float, double}
//     the product of gemm.h (same arguments, same meaning), computed by cblas_sgemm /
//     cblas_dgemm of the library NumPy's matmul calls when each operand has a unit stride
//     on one axis (a transposed operand is BLAS's 'T'), and by ccg::gemm otherwise.
//     A product of a matrix with its own transpose (x.T @ x: the same memory, strides
//     swapped) is cblas_?syrk's, one triangle mirrored into the other, as NumPy's matmul
//     computes it (half the multiplies; the result exactly symmetric).
//   blas_detail::use(sgemm, dgemm, ssyrk, dsyrk, int64): the addresses of the functions and
//     whether their integers are 64-bit (an ILP64 build); the module's exported ccg_use_blas
//     (backend/program.py) sets them once after loading (runtime/blas.py finds them).
// Why call BLAS from the kernel and not as a NumPy step: a step costs a return to Python
// (~7 us), which is the whole product at 64 x 64; called from here it costs the call.
// The pointers are per module (internal linkage): nothing here is shared between kernels.
#pragma once

#include <cstdint>

#include "cppcodegen/gemm.h"

namespace ccg {
namespace blas_detail {
enum : int { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };

enum : int { kUpper = 121 };

static void* g_sgemm = nullptr;
static void* g_dgemm = nullptr;
static void* g_ssyrk = nullptr;
static void* g_dsyrk = nullptr;
static bool g_int64 = true;

inline void use(void* sgemm, void* dgemm, void* ssyrk, void* dsyrk, bool int64) {
  g_sgemm = sgemm;
  g_dgemm = dgemm;
  g_ssyrk = ssyrk;
  g_dsyrk = dsyrk;
  g_int64 = int64;
}

// One operand of rows x cols with strides (rs, cs) as BLAS takes it in row-major order:
// the transpose flag and leading dimension, or false when neither axis has a unit stride.
inline bool layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int& trans,
                   int64_t& ld) {
  if (cs == 1 && rs >= (cols > 1 ? cols : 1)) {
    trans = kNoTrans, ld = rs;
    return true;
  }
  if (rs == 1 && cs >= (rows > 1 ? rows : 1)) {
    trans = kTrans, ld = cs;
    return true;
  }
  return false;
}

template <class T>
inline void* function(bool syrk = false) {
  if constexpr (sizeof(T) == 4) {
    return syrk ? g_ssyrk : g_sgemm;
  } else {
    return syrk ? g_dsyrk : g_dgemm;
  }
}

template <class T, class I>
inline void call(void* fn, int ta, int tb, int64_t M, int64_t N, int64_t K, const T* A,
                 int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc) {
  using F = void (*)(int, int, int, I, I, I, T, const T*, I, const T*, I, T, T*, I);
  reinterpret_cast<F>(fn)(kRowMajor, ta, tb, I(M), I(N), I(K), T(1), A, I(lda), B, I(ldb),
                          T(0), C, I(ldc));
}

// C (N x N, row stride ldc) = X X^T for X of N x K with BLAS's transpose flag ta: the upper
// triangle by syrk, then mirrored into the lower
template <class T, class I>
inline void syrk(void* fn, int ta, int64_t N, int64_t K, const T* A, int64_t lda, T* C,
                 int64_t ldc) {
  using F = void (*)(int, int, int, I, I, T, const T*, I, T, T*, I);
  for (int64_t i = 0; i < N; ++i)       // (C's memory may hold NaN: beta 0 times it is NaN
    for (int64_t j = i; j < N; ++j) C[i * ldc + j] = T(0);      // in some BLAS builds)
  reinterpret_cast<F>(fn)(kRowMajor, kUpper, ta, I(N), I(K), T(1), A, I(lda), T(0), C, I(ldc));
  for (int64_t i = 1; i < N; ++i)
    for (int64_t j = 0; j < i; ++j) C[i * ldc + j] = C[j * ldc + i];
}
}  // namespace blas_detail

template <class T>
void blas_gemm(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
               const T* B, int64_t rsb, int64_t csb, T* C, int64_t rsc, int64_t csc,
               int nthreads = 0) {
  using namespace blas_detail;
  void* fn = function<T>();
  int ta = 0, tb = 0, tc = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  // (BLAS's own checks reject what these let through: they would print, not compute)
  const bool fits = g_int64 || (M < INT32_MAX && N < INT32_MAX && K < INT32_MAX &&
                                rsa < INT32_MAX && csa < INT32_MAX && rsb < INT32_MAX &&
                                csb < INT32_MAX && rsc < INT32_MAX);
  // (inside a parallel region, a loop body on the threads: ccg::gemm, no nested BLAS threads)
  if (fn == nullptr || !fits || M <= 0 || N <= 0 || K <= 0 || omp_in_parallel() ||
      !layout(M, K, rsa, csa, ta, lda) || !layout(K, N, rsb, csb, tb, ldb) ||
      !layout(M, N, rsc, csc, tc, ldc) || tc != kNoTrans) {
    gemm<T>(M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc, nthreads);
    return;
  }
  void* sy = function<T>(true);
  if (sy != nullptr && A == B && M == N && rsa == csb && csa == rsb) {   // x.T @ x, x @ x.T
    if (g_int64) {
      syrk<T, int64_t>(sy, ta, N, K, A, lda, C, ldc);
    } else {
      syrk<T, int32_t>(sy, ta, N, K, A, lda, C, ldc);
    }
    return;
  }
  if (g_int64) {
    call<T, int64_t>(fn, ta, tb, M, N, K, A, lda, B, ldb, C, ldc);
  } else {
    call<T, int32_t>(fn, ta, tb, M, N, K, A, lda, B, ldb, C, ldc);
  }
}

}  // namespace ccg
