#pragma once
// The clocks `tickinfer bench` times Plan::run with. Both read a monotonically increasing tick
// count; ns_per_tick converts a difference to nanoseconds.
//
//  * TscClock: the x86 time-stamp counter (rdtsc / rdtscp with lfence so the timed code can
//    neither start before the first read nor finish after the second). ~10-30 ns per pair and
//    no syscall, but only a clock when the TSC is invariant (constant_tsc + nonstop_tsc); its
//    rate is calibrated against std::chrono::steady_clock at start-up.
//  * SteadyClock: std::chrono::steady_clock (clock_gettime(CLOCK_MONOTONIC) through the vDSO
//    on Linux), 1 tick = 1 ns. The fallback when the TSC is unusable.
// Reported latencies include one start/stop pair; bench measures that overhead separately and
// reports it rather than subtracting it.
#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TICKINFER_CLI_HAVE_TSC 1
#else
#define TICKINFER_CLI_HAVE_TSC 0
#endif

namespace tickinfer::cli {

struct SteadyClock {
  static constexpr const char* kName = "steady_clock";
  static uint64_t start() noexcept { return now(); }
  static uint64_t stop() noexcept { return now(); }
  static uint64_t now() noexcept {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }
};

#if TICKINFER_CLI_HAVE_TSC
struct TscClock {
  static constexpr const char* kName = "rdtsc";
  static uint64_t start() noexcept {
    _mm_lfence();  // earlier instructions finish before the read
    const uint64_t t = __rdtsc();
    _mm_lfence();  // the timed code starts after the read
    return t;
  }
  static uint64_t stop() noexcept {
    unsigned aux;
    const uint64_t t = __rdtscp(&aux);  // waits for the timed code to finish
    _mm_lfence();                       // later instructions wait for the read
    return t;
  }
  static uint64_t now() noexcept { return start(); }
};
#endif

// True when TscClock exists and /proc/cpuinfo says the TSC is invariant.
bool tsc_usable();
// TSC nanoseconds per tick, measured against steady_clock over `seconds` of wall time.
double calibrate_tsc_ns_per_tick(double seconds);

// Median cost in ns of one Clock::start() + Clock::stop() pair with nothing between, over
// `pairs` samples.
template <typename Clock>
double measure_timer_overhead_ns(double ns_per_tick, int pairs);

}  // namespace tickinfer::cli
