// Python `range(lo, stop, step)` loops in C++, without int64 overflow.
//
// `range(0, 2**63 - 1, 2**62)` has two items in Python; `(stop - lo + step - 1) / step`
// overflows on it, and so does `i += step` after its last item (a loop `i < stop` that
// wraps never ends). trip_count counts in unsigned arithmetic (the distance between two
// int64 values always fits in a uint64); next_index gives `stop` (the loop's end) where the
// next index would leave int64. Loops whose step is a small constant use neither.
#pragma once
#include <cstdint>

namespace ccg {

// Items of range(lo, stop, step), step != 0.
inline int64_t trip_count(int64_t lo, int64_t stop, int64_t step) {
  if (step > 0)
    return stop > lo ? int64_t((uint64_t(stop) - uint64_t(lo) - 1) / uint64_t(step) + 1) : 0;
  return lo > stop ? int64_t((uint64_t(lo) - uint64_t(stop) - 1) / (uint64_t(0) - uint64_t(step)) + 1)
                   : 0;
}

// The index after v, or `stop` where v + step leaves int64 (v was the last item).
inline int64_t next_index(int64_t v, int64_t step, int64_t stop) {
  int64_t next;
  return __builtin_add_overflow(v, step, &next) ? stop : next;
}

}  // namespace ccg
