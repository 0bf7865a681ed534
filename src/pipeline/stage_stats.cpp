#include "pipeline/stage_stats.hpp"

namespace tickinfer::pipeline {

const char* stage_name(int s) noexcept {
  static const char* const names[kStageCount] = {"wire",  "receive", "queue",        "features",
                                                 "model", "signal",  "rx_to_signal", "end_to_end",
                                                 "rx_to_tx", "end_to_end_tx"};
  return s >= 0 && s < kStageCount ? names[s] : "?";
}

bool stage_is_compute(int s) noexcept { return s == kFeatures || s == kModel || s == kSignal; }

// 10 s ceiling: everything above counts in the top bucket (and as saturated), 2.6 KiB less to scan.
StageStats::StageStats()
    : stage{stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000)},
      interval_rx(10'000'000'000),
      interval_e2e(10'000'000'000),
      interval_e2e_tx(10'000'000'000) {}

void StageStats::reset() noexcept {
  for (auto& h : stage) h.reset();
  interval_rx.reset();
  interval_e2e.reset();
  interval_e2e_tx.reset();
}

}  // namespace tickinfer::pipeline
