#pragma once
// The clock Plan::profile reads between steps: the x86 time-stamp counter (a few cycles, no
// serialisation: a step's time is the difference of two reads, the out-of-order overlap of a
// step with its neighbours included), else steady_clock nanoseconds. Plan::profile converts
// ticks to nanoseconds against steady_clock over the whole profile.
#include <chrono>
#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace tickinfer::engine {

inline uint64_t step_clock() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
#endif
}

}  // namespace tickinfer::engine
