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

#include <atomic>
#include <chrono>
#include <cstdint>

namespace ccg {

// What one loop site learnt of its iterations' cost on earlier runs (a static of the
// generated code per loop): a loop run over and over (the inner loop of a stencil's rows,
// 80 iterations of a nanosecond) paid for eight clock readings on every run, several times
// its own work. Once a run has measured the cost, runs whose projected time is far below
// kWorthNs read no clock at all; one run in kRecheck probes again, in case the cost changed.
struct LoopCost {
  std::atomic<double> ns_per_iter{-1.0};
  std::atomic<uint32_t> runs{0};
};

class LoopProbe {
 public:
  static constexpr int64_t kProbeNs = 20000;
  static constexpr int64_t kWorthNs = 60000;
  static constexpr uint32_t kRecheck = 64;

  // `always` (a parallel threshold of 0): the threads from the first iteration on.
  explicit LoopProbe(int64_t trip, bool always = false, LoopCost* cost = nullptr)
      : trip_(trip), next_(omp_get_max_threads() > 1 && !omp_in_parallel() ? 1 : trip + 1),
        always_(always && next_ == 1), cost_(cost) {
    if (next_ == 1 && !always_ && cost_ != nullptr && known_small()) next_ = trip_ + 1;
    if (next_ == 1) start_ = std::chrono::steady_clock::now();
    else cost_ = nullptr;           // (nothing measured: nothing to learn)
  }

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
    learn(ns, k);
    return double(ns) * double(trip_ - k) / double(k) >= double(kWorthNs);
  }

  // The loop ended on this thread after `k` iterations: what they cost, for the next run.
  void finish(int64_t k) {
    if (cost_ == nullptr || k <= 0) return;      // (learnt already when it decided)
    learn(std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::chrono::steady_clock::now() - start_).count(), k);
  }

  // The next iteration that reads the clock: a loop whose iterations run several at once
  // (SIMD lanes) runs up to it in one go and asks `threads_from` there.
  int64_t next() const { return next_; }

 private:
  bool known_small() const {
    const double per = cost_->ns_per_iter.load(std::memory_order_relaxed);
    if (per < 0 || cost_->runs.fetch_add(1, std::memory_order_relaxed) % kRecheck == 0)
      return false;
    return per * double(trip_) < double(kWorthNs) / 8;
  }

  void learn(int64_t ns, int64_t k) {
    if (cost_ != nullptr) cost_->ns_per_iter.store(double(ns) / double(k), std::memory_order_relaxed);
    cost_ = nullptr;
  }

  int64_t trip_, next_;
  bool always_;
  LoopCost* cost_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace ccg
