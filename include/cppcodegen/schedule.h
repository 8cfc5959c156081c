// How many iterations of a parallel loop a thread takes at a time (dynamic schedule).
//
// Chunks of ~256K elements (1 MB of floats) stream from memory faster than small ones: the
// hardware prefetchers ramp up again at every chunk a thread starts. x.sum(axis=1) over
// 8192 x 8192 float32 on the 2-core EPYC: 6.3-6.7 ms in chunks of 16K elements, 5.0-5.2 ms
// in chunks of 256K or one range per thread. But every thread should still get 4 chunks or
// so, so that a thread the OS preempts is not waited for at the end; and no chunk is below
// the 16K elements that pay for the hand-out.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace ccg {

inline int64_t chunk_iters(int64_t trip, int64_t work) {
  constexpr int64_t kBig = int64_t(1) << 18, kSmall = int64_t(1) << 14;   // elements
  work = std::max<int64_t>(work, 1);
  const int64_t big = std::max<int64_t>(1, kBig / work);
  const int64_t small = std::max<int64_t>(1, kSmall / work);
  const int64_t balanced = trip / (4 * std::max(1, omp_get_max_threads()));
  return std::max(small, std::min(big, balanced));
}

}  // namespace ccg
