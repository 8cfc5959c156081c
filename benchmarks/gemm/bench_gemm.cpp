// Standalone timing of ccg::gemm (include/cppcodegen/gemm.h); see benchmarks/gemm/README.md.
//   g++ -O3 -std=c++17 -fopenmp -march=native -ffp-contract=off -Iinclude
//       benchmarks/gemm/bench_gemm.cpp -o /tmp/bench_gemm
//   /tmp/bench_gemm M N K [f|d] [reps] [MR NV KC MC NC]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "cppcodegen/gemm.h"

using namespace ccg::gemm_detail;

template <class T, int MR, int NV>
double run(int64_t M, int64_t N, int64_t K, int reps, Blocking blk, int nt, bool trans_b) {
  std::vector<T> A(M * K), B(K * N), C(M * N);
  std::mt19937 g(1);
  std::normal_distribution<double> d;
  for (auto& x : A) x = T(d(g));
  for (auto& x : B) x = T(d(g));
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (trans_b)  // B stored as N x K
      gemm_blocked<T, MR, NV>(M, N, K, A.data(), K, 1, B.data(), 1, K, C.data(), N, 1, blk, nt);
    else
      gemm_blocked<T, MR, NV>(M, N, K, A.data(), K, 1, B.data(), N, 1, C.data(), N, 1, blk, nt);
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  // spot check a few entries against a double-precision dot product
  double maxrel = 0;
  for (int s = 0; s < 50 && M > 0 && N > 0; ++s) {
    int64_t i = (s * 7919) % M, j = (s * 104729) % N;
    double ref = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) {
      double bb = trans_b ? B[j * K + k] : B[k * N + j];
      ref += double(A[i * K + k]) * bb;
      mag += std::abs(double(A[i * K + k]) * bb);
    }
    maxrel = std::max(maxrel, std::abs(C[i * N + j] - ref) / (mag + 1e-30));
  }
  std::printf("%s M=%ld N=%ld K=%ld MR=%d NV=%d KC=%ld MC=%ld NC=%ld nt=%d%s: %.3f ms  %.1f GFLOP/s  err/mag %.2e\n",
              sizeof(T) == 4 ? "f32" : "f64", (long)M, (long)N, (long)K, MR, NV, (long)blk.kc,
              (long)blk.mc, (long)blk.nc, nt, trans_b ? " B^T" : "", best * 1e3,
              2.0 * M * N * K / best / 1e9, maxrel);
  return best;
}

template <class T>
void dispatch(int mr, int nv, int64_t M, int64_t N, int64_t K, int reps, Blocking b, int nt, bool tb) {
#define CASE(R, V) if (mr == R && nv == V) { run<T, R, V>(M, N, K, reps, b, nt, tb); return; }
#if defined(CCG_HAVE_AVX512)
  CASE(8, 3) CASE(14, 2) CASE(12, 2) CASE(6, 4) CASE(10, 2) CASE(7, 4)
#elif defined(CCG_HAVE_SIMD)
  CASE(6, 2) CASE(4, 3)
#else
  CASE(4, 4)
#endif
  std::printf("no such shape\n");
}

int main(int argc, char** argv) {
  int64_t M = atol(argv[1]), N = atol(argv[2]), K = atol(argv[3]);
  bool dbl = argc > 4 && argv[4][0] == 'd';
  bool tb = argc > 4 && argv[4][1] == 't';
  int reps = argc > 5 ? atoi(argv[5]) : 7;
  int nt = getenv("NT") ? atoi(getenv("NT")) : omp_get_max_threads();
  if (argc > 10) {
    Blocking b{atol(argv[8]), atol(argv[9]), atol(argv[10]), getenv("DIRECT") ? atoi(getenv("DIRECT")) : -1};
    if (dbl) dispatch<double>(atoi(argv[6]), atoi(argv[7]), M, N, K, reps, b, nt, tb);
    else dispatch<float>(atoi(argv[6]), atoi(argv[7]), M, N, K, reps, b, nt, tb);
  } else if (dbl) {
    using S = Shape<double>;
    run<double, S::MR, S::NV>(M, N, K, reps, {S::KC, S::MC, S::NC}, nt, tb);
  } else {
    using S = Shape<float>;
    run<float, S::MR, S::NV>(M, N, K, reps, {S::KC, S::MC, S::NC}, nt, tb);
  }
}
