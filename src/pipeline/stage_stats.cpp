#include "pipeline/stage_stats.hpp"

namespace tickinfer::pipeline {

const char* stage_name(int s) noexcept {
  static const char* const names[kStageCount] = {"wire",         "receive",    "queue",    "book",
                                                 "features",     "model",      "signal",   "rx_to_signal",
                                                 "end_to_end",   "rx_to_tx",   "end_to_end_tx"};
  return s >= 0 && s < kStageCount ? names[s] : "?";
}

bool stage_is_compute(int s) noexcept { return s == kBook || s == kFeatures || s == kModel || s == kSignal; }

// 10 s ceiling: everything above counts in the top bucket (and as saturated), 2.6 KiB less to scan.
StageStats::StageStats()
    : stage{stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000), stats::LatencyHistogram(10'000'000'000),
            stats::LatencyHistogram(10'000'000'000)},
      interval_rx(10'000'000'000),
      interval_e2e(10'000'000'000),
      interval_e2e_tx(10'000'000'000) {}

void StageStats::track_models(std::size_t n) {
  model_rx.assign(n, stats::LatencyHistogram(10'000'000'000));
  model_e2e.assign(n, stats::LatencyHistogram(10'000'000'000));
}

void StageStats::merge(const StageStats& o) {
  for (int i = 0; i < kStageCount; ++i) stage[i].merge(o.stage[i]);
  if (model_rx.size() < o.model_rx.size()) track_models(o.model_rx.size());
  for (std::size_t i = 0; i < o.model_rx.size(); ++i) {
    model_rx[i].merge(o.model_rx[i]);
    model_e2e[i].merge(o.model_e2e[i]);
  }
}

void StageStats::reset() noexcept {
  for (auto& h : model_rx) h.reset();
  for (auto& h : model_e2e) h.reset();
  for (auto& h : stage) h.reset();
  interval_rx.reset();
  interval_e2e.reset();
  interval_e2e_tx.reset();
}

}  // namespace tickinfer::pipeline
