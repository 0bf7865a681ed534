#pragma once
// How often the machine takes a busy core away from a spinning thread, and for how long: a thread
// pinned to the core reads the clock in a tight loop (~30 ns per read) and counts every gap
// between two reads above a threshold. On bare metal with isolated cores such gaps are rare; on a
// VM they are the host's timer ticks, interrupts and preemptions, and the guest's own ticks. Any
// latency path that keeps that core busy for W us is hit by one with probability about
// rate * W plus the time share in gaps (1 - (1 - share) exp(-rate W) for gaps starting at random,
// which stays below 1 on a machine busy enough for rate * W to pass it): `pipeline bench` prints
// this next to its p99s, because a p99 that carries such a stop says nothing about the code on
// the path.
#include <cmath>
#include <cstdint>
#include <vector>

namespace tickinfer::cli {

struct CpuStalls {
  int cpu = -1;
  double seconds = 0;
  std::uint64_t count = 0;          // gaps above the threshold
  double per_second = 0;
  double fraction = 0;              // of the time spent in such gaps
  std::int64_t p50_ns = 0, p90_ns = 0, max_ns = 0;
  // Probability that a window of `window_ns` on this core sees a gap start, gaps starting as a
  // Poisson process: 1 - exp(-rate * window). A window that begins when data arrives can also
  // begin inside a gap (probability `fraction`; not for a sender, whose timestamp is taken after
  // any gap that preceded it).
  double hit_probability(double window_ns, bool starts_on_arrival) const noexcept {
    const double none_starts = std::exp(-per_second * window_ns * 1e-9);
    return 1.0 - (starts_on_arrival ? 1.0 - fraction : 1.0) * none_starts;
  }
};

// Probes every listed CPU at once (one pinned thread each: the cores are busy together, as in
// the measured run) for `seconds`; gaps above `threshold_ns` count.
std::vector<CpuStalls> probe_cpu_stalls(const std::vector<int>& cpus, double seconds, std::int64_t threshold_ns = 1000);

}  // namespace tickinfer::cli
