// Where OpenMP's worker threads run: anywhere this process may run, except the core the
// calling thread is on now.
//
// Why: a worker that sleeps between parallel regions is woken by the calling thread, and
// Linux tends to wake it on the waker's own core ("wake affine"). On the 2-core EPYC VM that
// put both threads of a team on one core for tens of milliseconds at a time, while the other
// core idled: A.sum() over 4M doubles took 0.66-0.72 ms instead of 0.30-0.38 ms, a float32
// 256^3 product 0.40-0.50 ms instead of 0.14-0.16 ms. OMP_PROC_BIND=true cures it but pins
// the calling thread too (the user's Python thread, and every thread it starts later, on
// CPU 0 in every process). So only the workers are placed, from the calling thread: at a
// compiled call's first parallel region, unless the first worker's mask already leaves out
// this thread's core (a vDSO call and one read; a migration is rare), the team's workers are
// allowed every CPU of the process's mask but that one. Not done when the user places threads
// (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY), inside a parallel region, for one thread,
// or when the mask has one CPU.
#pragma once

#include <omp.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace ccg {

struct TeamPlacement {
  int nthreads = 0;             // the team whose thread ids are known
  bool off = false;
  std::vector<pid_t> tids;      // tids[i]: the kernel thread id of team member i
  cpu_set_t allowed;            // the calling thread's mask when the team was learned
};

inline bool placement_by_user() {
  static const bool user = std::getenv("OMP_PROC_BIND") || std::getenv("OMP_PLACES") ||
                           std::getenv("GOMP_CPU_AFFINITY");
  return user;
}

inline int place_team();

// One call of a compiled function (its entry declares one): at the call's first parallel
// region (`team_begin()`, which every parallel pragma's `if` clause calls), the workers are
// placed and the calling thread is kept on its core until the call returns (its own mask
// back then), so that a barrier's wake-up cannot move it onto a worker's core in the middle
// of the call. A call whose loops all run on the calling thread pays nothing.
struct TeamCall {
  bool placed = false, pinned = false;
  cpu_set_t saved;
  TeamCall* outer;
  static TeamCall*& current() {
    static thread_local TeamCall* call = nullptr;
    return call;
  }
  TeamCall() : outer(current()) { current() = this; }
  ~TeamCall() {
    if (pinned) sched_setaffinity(0, sizeof(cpu_set_t), &saved);
    current() = outer;
  }
  void begin() {
    placed = true;
    const int cpu = place_team();
    if (cpu < 0) return;
    cpu_set_t here;
    CPU_ZERO(&here);
    CPU_SET(cpu, &here);
    pinned = sched_getaffinity(0, sizeof(cpu_set_t), &saved) == 0 &&
             sched_setaffinity(0, sizeof(cpu_set_t), &here) == 0;
  }
};

// In a parallel pragma's `if` clause: places the team once per call; always true.
inline bool team_begin() {
  TeamCall* call = TeamCall::current();
  if (call != nullptr && !call->placed) call->begin();
  return true;
}

// The calling thread's core, the workers placed around it; or -1 (nothing placed).
inline int place_team() {
  static thread_local TeamPlacement state;
  TeamPlacement* t = &state;    // (inside the region below, `state` is each thread's own)
  if (t->off || omp_in_parallel()) return -1;
  const int n = omp_get_max_threads();
  if (n <= 1) return -1;
  if (placement_by_user()) { t->off = true; return -1; }
  const int cpu = sched_getcpu();
  if (cpu < 0) { t->off = true; return -1; }
  if (n != t->nthreads) {       // learn the team's thread ids (one region, once per team size)
    if (sched_getaffinity(0, sizeof(cpu_set_t), &t->allowed) != 0 || CPU_COUNT(&t->allowed) < 2) {
      t->off = true;
      return -1;
    }
    t->tids.assign(n, 0);
    #pragma omp parallel num_threads(n)
    {
      const int i = omp_get_thread_num();
      if (i < (int)t->tids.size()) t->tids[i] = (pid_t)syscall(SYS_gettid);
    }
    t->nthreads = n;
  }
  cpu_set_t others = t->allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0) return -1;    // this thread runs outside the learned mask
  // the first worker's mask says where the team is (read, not remembered: every compiled
  // function's library has its own copy of this state, and they share the workers)
  cpu_set_t now;
  if (sched_getaffinity(t->tids[1], sizeof(cpu_set_t), &now) == 0 && CPU_EQUAL(&now, &others))
    return cpu;
  for (int i = 1; i < n; ++i) {
    if (t->tids[i] > 0 && sched_setaffinity(t->tids[i], sizeof(cpu_set_t), &others) != 0) {
      t->nthreads = 0;          // a worker has gone (a new pool): learn the team again
      return -1;
    }
  }
  return cpu;
}

}  // namespace ccg
