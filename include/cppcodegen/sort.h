// Sorting in NumPy's order (np.sort, np.argsort in compiled loops; np.median, np.percentile).
//
// NumPy sorts NaN after every number; other values by <. sort_values sorts a row in place
// (NaNs moved to the end first, then the numbers sorted by plain <); sort_positions writes
// the positions 0..n-1 ordered by their keys, equal keys in their original order (a stable
// sort: NumPy's kind="stable"; its default sort may order ties differently). RowScratch holds
// one row: on the stack up to Small elements, else on the heap.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "cppcodegen/counting.h"   // sort_less: NumPy's order

namespace ccg {

template <class T> inline void sort_values(T* v, int64_t n) {
  if (n < 2) return;
  T* end = v + n;
  if constexpr (std::is_floating_point_v<T>) end = std::partition(v, end, [](T x) { return x == x; });
  std::sort(v, end);
}

template <class T> inline void sort_positions(const T* keys, int64_t* pos, int64_t n) {
  for (int64_t i = 0; i < n; ++i) pos[i] = i;
  std::stable_sort(pos, pos + n,
                   [keys](int64_t a, int64_t b) { return sort_less(keys[a], keys[b]); });
}

// The row rearranged so that positions kth[0] < kth[1] < ... hold what a sorted row holds
// there (NaN last), by successive selections (std::nth_element): NumPy's np.partition, as its
// median and quantiles use it; other positions hold the other values in no given order.
template <class T> inline void select_values(T* v, int64_t n, const int64_t* kth, int nk) {
  T* end = v + n;
  if constexpr (std::is_floating_point_v<T>) end = std::partition(v, end, [](T x) { return x == x; });
  int64_t lo = 0;
  for (int j = 0; j < nk; ++j) {
    T* k = v + kth[j];
    if (k >= end) break;
    if (kth[j] < lo) continue;
    if (k == v + lo) std::iter_swap(k, std::min_element(k, end));          // the next one
    else if (k == end - 1) std::iter_swap(k, std::max_element(v + lo, end));   // the last
    else std::nth_element(v + lo, k, end);
    lo = kth[j] + 1;
  }
}

template <class T, int Small = 256> struct RowScratch {
  T small[Small];
  std::unique_ptr<T[]> big;
  T* p;
  explicit RowScratch(int64_t n) : p(small) {
    if (n > Small) {
      big.reset(new T[size_t(n)]);
      p = big.get();
    }
  }
  T* data() { return p; }
  T& operator[](int64_t i) { return p[i]; }
};

}  // namespace ccg
