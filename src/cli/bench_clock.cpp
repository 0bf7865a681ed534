#include "cli/bench_clock.hpp"

#include <algorithm>
#include <thread>
#include <vector>

#include "cli/machine_info.hpp"

namespace tickinfer::cli {

bool tsc_usable() {
#if TICKINFER_CLI_HAVE_TSC
  return cpu_has_invariant_tsc();
#else
  return false;
#endif
}

double calibrate_tsc_ns_per_tick(double seconds) {
#if TICKINFER_CLI_HAVE_TSC
  // Bracket the interval with both clocks read back to back; spinning (not sleeping) keeps the
  // thread on its CPU so a migration cannot skew the pair.
  const uint64_t ns0 = SteadyClock::now();
  const uint64_t t0 = TscClock::now();
  const auto wait_ns = static_cast<uint64_t>(seconds * 1e9);
  uint64_t ns1 = ns0;
  while (ns1 - ns0 < wait_ns) ns1 = SteadyClock::now();
  const uint64_t t1 = TscClock::now();
  return static_cast<double>(ns1 - ns0) / static_cast<double>(t1 - t0);
#else
  (void)seconds;
  return 1.0;
#endif
}

template <typename Clock>
double measure_timer_overhead_ns(double ns_per_tick, int pairs) {
  std::vector<uint64_t> ticks(static_cast<size_t>(pairs));
  for (auto& t : ticks) {
    const uint64_t a = Clock::start();
    const uint64_t b = Clock::stop();
    t = b - a;
  }
  std::nth_element(ticks.begin(), ticks.begin() + pairs / 2, ticks.end());
  return static_cast<double>(ticks[static_cast<size_t>(pairs / 2)]) * ns_per_tick;
}

template double measure_timer_overhead_ns<SteadyClock>(double, int);
#if TICKINFER_CLI_HAVE_TSC
template double measure_timer_overhead_ns<TscClock>(double, int);
#endif

}  // namespace tickinfer::cli
