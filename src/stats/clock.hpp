#pragma once
// The clocks and the pinning every measured thread uses, in one place so the feed, the pipeline,
// the exchange and the benches all stamp the same way.
//   realtime_ns():  CLOCK_REALTIME, ns since the Unix epoch. The clock SO_TIMESTAMPNS stamps
//                   with, so kernel-receive and user-space stamps can be subtracted.
//   monotonic_ns(): CLOCK_MONOTONIC, ns; for pacing and intervals.
// Both are vDSO calls (no syscall), noexcept, allocation-free.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cstdint>

namespace tickinfer::stats {

inline std::int64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

inline std::int64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

// Pins the calling thread to one CPU; cpu < 0 leaves it unpinned. Best effort: a CPU outside the
// allowed set leaves the thread where it was.
inline void pin_current_thread(int cpu) noexcept {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace tickinfer::stats
