#pragma once
// The text the `[run] metrics` endpoint serves: Prometheus exposition format 0.0.4, every metric
// with HELP and TYPE, base units (seconds), so `promtool check metrics` accepts it as it is.
#include <cstdint>
#include <string>

#include "pipeline/stage_stats.hpp"

namespace tickinfer::pipeline {

// Writes the text into `out` (cleared first; no allocation while it fits out's capacity: the
// pipeline reserves kMetricsTextBytes, so a steady-state run's allocation counter stays flat).
// `last`: the latest completed status interval, or nullptr before the first one (then only
// tickinfer_ready is given).
constexpr std::size_t kMetricsTextBytes = 8192;
void format_metrics(std::string& out, bool ready, const IntervalSample* last, std::uint64_t allocations_since_ready);
inline std::string format_metrics(bool ready, const IntervalSample* last, std::uint64_t allocations_since_ready) {
  std::string out;
  format_metrics(out, ready, last, allocations_since_ready);
  return out;
}

}  // namespace tickinfer::pipeline
