// Searching sorted arrays and counting values into bins (np.searchsorted, np.digitize,
// np.bincount, np.histogram).
//
// search_sorted<Right>(a, n, s, v): np.searchsorted of v in the sorted array a (n elements,
// stride s) in NumPy's order, NaN after every number: left = how many elements are less than
// v, right = how many are not greater. A branchless halving (the same number of steps for
// every v: no mispredicted branches), defined for sorted a as NumPy's result is.
// count_bin / count_ok: the body of a bincount's loop (cppcodegen/backend/counts.py): an index
// in [0, nb) counts, a negative one is an error where NumPy raises (bincount), and dropped
// where NumPy drops it (histogram's values outside the edges, masked out before).
#pragma once
#include <cstdint>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace ccg {

// the calling thread's number in its team, and the team size a parallel loop would get
inline int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

template <class T> inline bool sort_less(T a, T b) {
  if constexpr (T(0.5) != T(0)) return (a < b) | ((b != b) & (a == a));   // no branches
  else return a < b;
}

template <bool Right, class T>
inline int64_t search_sorted(const T* a, int64_t n, int64_t s, T v) {
  if (n <= 0) return 0;
  int64_t base = 0;
  while (n > 1) {
    const int64_t half = n >> 1;
    const T m = a[(base + half) * s];
    const bool go = Right ? !sort_less(v, m) : sort_less(m, v);
    base += half & -static_cast<int64_t>(go);
    n -= half;
  }
  const T m = a[base * s];
  return base + (Right ? !sort_less(v, m) : sort_less(m, v));
}

// err: int64[4] (loopir.STATUS): flag, the value, 0, -1 - code (the runtime's message)
inline void count_error(int64_t value, int64_t* err, int64_t code) {
  int64_t zero = 0;
  if (__atomic_compare_exchange_n(err, &zero, int64_t(1), false, __ATOMIC_RELAXED,
                                  __ATOMIC_RELAXED)) {
    err[1] = value;
    err[2] = 0;
    err[3] = -1 - code;
  }
}

}  // namespace ccg
