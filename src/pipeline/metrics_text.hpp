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
// agents / agent_count: with [threading] agents > 1, each agent's sample of the same interval
// (labelled families tickinfer_agent_*{agent="K"}); nullptr / 0 otherwise.
constexpr std::size_t kMetricsTextBytes = 32768;
void format_metrics(std::string& out, bool ready, const IntervalSample* last, std::uint64_t allocations_since_ready,
                    const IntervalSample* agents = nullptr, std::size_t agent_count = 0);
inline std::string format_metrics(bool ready, const IntervalSample* last, std::uint64_t allocations_since_ready,
                                  const IntervalSample* agents = nullptr, std::size_t agent_count = 0) {
  std::string out;
  format_metrics(out, ready, last, allocations_since_ready, agents, agent_count);
  return out;
}

}  // namespace tickinfer::pipeline
