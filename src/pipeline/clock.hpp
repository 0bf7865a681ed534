#pragma once
// The time the pipeline's agents act on, injected so a test can drive it (Aeron's "time is passed
// in"): every agent's do_work(now_ns) gets its duty cycle's reading, and from it come the status
// intervals, the stop conditions (seconds, feed silence), the end-of-session checks, the decision
// log's flush interval and the transmit-stamp read cadence.
//
// Not injected: the stamps measured on the signal path (compute start, model done, signal sent).
// They are latencies against the kernel's receive stamps, so they stay stats::realtime_ns()
// (CLOCK_REALTIME, the clock of SO_TIMESTAMPNS) whatever the clock. For the same reason the real
// clock is CLOCK_REALTIME too: the transmit-stamp cadence compares now_ns with a datagram's send
// stamp (under a ManualClock that rule never fires, and stamps are read by their count rules).
//
// now_ns() is noexcept, allocation-free and safe to call from any thread.
#include <atomic>
#include <cstdint>

#include "stats/clock.hpp"

namespace tickinfer::pipeline {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t now_ns() const noexcept = 0;
};

// CLOCK_REALTIME, ns since the Unix epoch (a vDSO call, no syscall).
class RealtimeClock final : public Clock {
 public:
  std::int64_t now_ns() const noexcept override { return stats::realtime_ns(); }
};

// The process's real clock, shared (it has no state).
inline const Clock& realtime_clock() noexcept {
  static const RealtimeClock clock;
  return clock;
}

// Time that moves only when told to (tests): one writer, any number of reader threads.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t start_ns = 0) noexcept : ns_(start_ns) {}
  std::int64_t now_ns() const noexcept override { return ns_.load(std::memory_order_acquire); }
  void set_ns(std::int64_t ns) noexcept { ns_.store(ns, std::memory_order_release); }
  void advance_ns(std::int64_t ns) noexcept { ns_.fetch_add(ns, std::memory_order_acq_rel); }

 private:
  std::atomic<std::int64_t> ns_;
};

}  // namespace tickinfer::pipeline
