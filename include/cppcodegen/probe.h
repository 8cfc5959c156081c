// When a loop whose iterations the compiler proved independent is worth the threads.
//
// Its work per iteration is not known when the code is generated (a while loop inside, a
// row of run-time length), so the loop starts on the calling thread and times itself: at
// iterations 1, 2, 4, 8, ... it reads a clock, and once `kProbeNs` have passed it projects
// the time of the iterations left at the rate so far. When that is at least `kWorthNs`
// (several times what starting a team and sharing out blocks costs, a few microseconds),
// the rest runs in blocks on the threads; otherwise the loop finishes on this thread and
// reads no more clocks. Short loops never wake a thread, long ones lose at most kProbeNs of
// parallel time. The results do not depend on the choice: the iterations are independent.
#pragma once

#include <omp.h>

#include <chrono>
#include <cstdint>

namespace ccg {

class LoopProbe {
 public:
  static constexpr int64_t kProbeNs = 20000;
  static constexpr int64_t kWorthNs = 60000;

  // `always` (a parallel threshold of 0): the threads from the first iteration on.
  explicit LoopProbe(int64_t trip, bool always = false)
      : trip_(trip), next_(omp_get_max_threads() > 1 && !omp_in_parallel() ? 1 : trip + 1),
        always_(always && next_ == 1), start_(std::chrono::steady_clock::now()) {}

  // Called before iteration `k` runs on this thread: true when the iterations from `k` on
  // should run on the threads instead.
  bool threads_from(int64_t k) {
    if (always_) return true;
    if (k != next_) return false;
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start_).count();
    if (ns < kProbeNs) {
      next_ = 2 * k;
      return false;
    }
    next_ = trip_ + 1;              // decided: no more clocks
    return double(ns) * double(trip_ - k) / double(k) >= double(kWorthNs);
  }

  // The next iteration that reads the clock: a loop whose iterations run several at once
  // (SIMD lanes) runs up to it in one go and asks `threads_from` there.
  int64_t next() const { return next_; }

 private:
  int64_t trip_, next_;
  bool always_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ccg
