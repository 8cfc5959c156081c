// Searching sorted arrays and counting values into bins (np.searchsorted, np.digitize,
// np.bincount, np.histogram).
//
// search_sorted<Right>(a, n, s, v): np.searchsorted of v in the sorted array a (n elements,
// stride s) in NumPy's order, NaN after every number: left = how many elements are less than
// v, right = how many are not greater; defined for sorted a as NumPy's result is. Short
// arrays: vector compares; longer ones: the thread's last result if it is the answer or next
// to it, else a branchless halving (the same number of steps for every v: no mispredicted
// branches).
// count_bin / count_ok: the body of a bincount's loop (cppcodegen/backend/counts.py): an index
// in [0, nb) counts, a negative one is an error where NumPy raises (bincount), and dropped
// where NumPy drops it (histogram's values outside the edges, masked out before).
#pragma once
#include <cstdint>
#include <type_traits>
#if (defined(__AVX512F__) || defined(__AVX2__)) && !defined(CCG_NO_SIMD)
#include <immintrin.h>   // (a no-op after cppcodegen/intrin.h)
#endif
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

namespace detail {
// How many of a[0..n) (contiguous, sorted) come before a number v in NumPy's order: a[k] <= v
// (Right) or a[k] < v, counted with vector compares. For the short arrays of histogram edges
// several times faster than halving, whose every step waits for the load before it (the same
// result for sorted a; NaN elements, sorted last, never count).
template <bool Right, class T> inline int64_t count_before(const T* a, int64_t n, T v) {
  int64_t c = 0, k = 0;
#if defined(__AVX512F__) && !defined(CCG_NO_SIMD)
  if constexpr (std::is_same_v<T, double>) {
    const __m512d vv = _mm512_set1_pd(v);
    const __m512i one = _mm512_set1_epi64(1);   // (two sums: two compares in flight)
    __m512i acc = _mm512_setzero_si512(), acc2 = _mm512_setzero_si512();
    for (; k + 16 <= n; k += 16) {
      acc = _mm512_mask_add_epi64(acc, _mm512_cmp_pd_mask(_mm512_loadu_pd(a + k), vv,
                                  Right ? _CMP_LE_OQ : _CMP_LT_OQ), acc, one);
      acc2 = _mm512_mask_add_epi64(acc2, _mm512_cmp_pd_mask(_mm512_loadu_pd(a + k + 8), vv,
                                   Right ? _CMP_LE_OQ : _CMP_LT_OQ), acc2, one);
    }
    c = _mm512_reduce_add_epi64(_mm512_add_epi64(acc, acc2));
    for (; k + 8 <= n; k += 8)
      c += __builtin_popcount(_mm512_cmp_pd_mask(_mm512_loadu_pd(a + k), vv,
                                                 Right ? _CMP_LE_OQ : _CMP_LT_OQ));
  } else if constexpr (std::is_same_v<T, float>) {
    const __m512 vv = _mm512_set1_ps(v);
    for (; k + 16 <= n; k += 16)
      c += __builtin_popcount(_mm512_cmp_ps_mask(_mm512_loadu_ps(a + k), vv,
                                                 Right ? _CMP_LE_OQ : _CMP_LT_OQ));
  }
#elif defined(__AVX2__) && !defined(CCG_NO_SIMD)
  // (a true compare is all ones, -1 as an integer: subtracted, the lanes count; one
  // horizontal sum at the end instead of a movemask and a popcount per compare)
  if constexpr (std::is_same_v<T, double>) {
    const __m256d vv = _mm256_set1_pd(v);
    __m256i acc = _mm256_setzero_si256(), acc2 = _mm256_setzero_si256();
    for (; k + 8 <= n; k += 8) {
      acc = _mm256_sub_epi64(acc, _mm256_castpd_si256(_mm256_cmp_pd(
          _mm256_loadu_pd(a + k), vv, Right ? _CMP_LE_OQ : _CMP_LT_OQ)));
      acc2 = _mm256_sub_epi64(acc2, _mm256_castpd_si256(_mm256_cmp_pd(
          _mm256_loadu_pd(a + k + 4), vv, Right ? _CMP_LE_OQ : _CMP_LT_OQ)));
    }
    for (; k + 4 <= n; k += 4)
      acc = _mm256_sub_epi64(acc, _mm256_castpd_si256(_mm256_cmp_pd(
          _mm256_loadu_pd(a + k), vv, Right ? _CMP_LE_OQ : _CMP_LT_OQ)));
    acc = _mm256_add_epi64(acc, acc2);
    alignas(32) int64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    c = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  } else if constexpr (std::is_same_v<T, float>) {
    const __m256 vv = _mm256_set1_ps(v);
    __m256i acc = _mm256_setzero_si256();
    for (; k + 8 <= n; k += 8)
      acc = _mm256_sub_epi32(acc, _mm256_castps_si256(_mm256_cmp_ps(
          _mm256_loadu_ps(a + k), vv, Right ? _CMP_LE_OQ : _CMP_LT_OQ)));
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    for (int j = 0; j < 8; ++j) c += lanes[j];
  }
#endif
  for (; k < n; ++k) c += Right ? (a[k] <= v) : (a[k] < v);
  return c;
}
}  // namespace detail

namespace detail {
// the halving search of v in a[lo..hi) (stride s; every element before lo comes before v)
template <bool Right, class T>
inline int64_t halving(const T* a, int64_t lo, int64_t hi, int64_t s, T v) {
  int64_t base = lo, n = hi - lo;
  if (n <= 0) return lo;
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

// the result of a search within kNear of h (where values searched in order leave it): steps
// of 1, 2, 4, ... from h while ``before`` (an element comes before the value) holds, then
// halving between the last two; -1 where it is farther
constexpr int64_t kNear = 64;
template <class Before>
inline int64_t gallop(Before before, int64_t h, int64_t n) {
  int64_t lo, hi;  // the result is in [lo, hi]
  if (h < n && before(h)) {
    lo = h + 1;
    for (int64_t step = 1;; step <<= 1) {
      const int64_t k = lo + step - 1;
      if (k >= n) { hi = n; break; }
      if (!before(k)) { hi = k; break; }
      lo = k + 1;
      if (step >= kNear) return -1;
    }
  } else {
    hi = h;
    for (int64_t step = 1;; step <<= 1) {
      const int64_t k = hi - step;
      if (k < 0) { lo = 0; break; }
      if (before(k)) { lo = k + 1; break; }
      hi = k;
      if (step >= kNear) return -1;
    }
  }
  while (lo < hi) {  // (the first k in [lo, hi) that does not come before the value)
    const int64_t mid = lo + ((hi - lo) >> 1);
    if (before(mid)) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// the calling thread's last result, and whether trying it first would have found the one
// before (values searched in order: np.interp's new grid, sorted samples); a cache line of
// its own (a library's thread-local data may be allocated next to another thread's)
struct alignas(64) LastFound {
  int64_t at = 0;
  bool near = false;
};
// (const: one address per thread, so the compiler takes it once per loop, not per search)
__attribute__((const, noinline)) static LastFound& last_found() {
  static thread_local LastFound last;
  return last;
}
}  // namespace detail

template <bool Right, class T>
inline int64_t search_sorted(const T* a, int64_t n, int64_t s, T v) {
  if (n <= 0) return 0;
  if constexpr (std::is_floating_point_v<T>) {
    if (s == 1 && n <= 256 && v == v) return detail::count_before<Right>(a, n, v);
  }
  // The last result h, the start while the results stay near each other (values searched
  // in order: np.interp's new grid, sorted samples): steps of 1, 2, 4, ... from h (loads next
  // to the last ones, in cache), then halving between the last two steps. Other values halve
  // the whole array, never a part found from h: the next search would wait for this one's
  // loads, and searches the processor now overlaps would run one after the other (3-5x
  // slower in a 10^6 table).
  auto before = [&](int64_t k) { const T m = a[k * s]; return Right ? !sort_less(v, m) : sort_less(m, v); };
  detail::LastFound& last = detail::last_found();
  const int64_t h = last.at < n ? last.at : n;
  int64_t r = -1;
  if (last.near) r = detail::gallop(before, h, n);
  if (r < 0) r = detail::halving<Right>(a, 0, n, s, v);
  last.near = static_cast<uint64_t>(r - h + detail::kNear) <= 2 * detail::kNear;
  last.at = r;
  return r;
}

// err: int64[4] (loopir.STATUS): flag, the value (a check stage: its site, the user's line),
// 0, -1 - code (the runtime's message)
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
