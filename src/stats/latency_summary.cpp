#include "stats/latency_summary.hpp"

#include <cstdio>

namespace tickinfer::stats {

namespace {
constexpr int kColumnWidth = 9;
constexpr int kRunsWidth = 11;
}  // namespace

LatencySummary LatencySummary::from(const LatencyHistogram& histogram) noexcept {
  LatencySummary s;
  s.p50_ns = histogram.value_at_percentile(50.0);
  s.p90_ns = histogram.value_at_percentile(90.0);
  s.p99_ns = histogram.value_at_percentile(99.0);
  s.p999_ns = histogram.value_at_percentile(99.9);
  s.min_ns = histogram.min();
  s.max_ns = histogram.max();
  s.mean_ns = histogram.mean();
  s.runs = histogram.count();
  return s;
}

std::string LatencySummary::table_header() {
  char line[160];
  std::snprintf(line, sizeof line, "%*s%*s%*s%*s%*s%*s%*s", kColumnWidth, "p50", kColumnWidth,
                "p90", kColumnWidth, "p99", kColumnWidth, "p99.9", kColumnWidth, "max",
                kColumnWidth, "mean", kRunsWidth, "runs");
  return line;
}

std::string LatencySummary::table_row() const {
  char line[200];
  std::snprintf(line, sizeof line, "%*lld%*lld%*lld%*lld%*lld%*.1f%*lld", kColumnWidth,
                static_cast<long long>(p50_ns), kColumnWidth, static_cast<long long>(p90_ns),
                kColumnWidth, static_cast<long long>(p99_ns), kColumnWidth,
                static_cast<long long>(p999_ns), kColumnWidth, static_cast<long long>(max_ns),
                kColumnWidth, mean_ns, kRunsWidth, static_cast<long long>(runs));
  return line;
}

std::string LatencySummary::to_json() const {
  char text[320];
  std::snprintf(text, sizeof text,
                "{\"p50_ns\":%lld,\"p90_ns\":%lld,\"p99_ns\":%lld,\"p999_ns\":%lld,"
                "\"min_ns\":%lld,\"max_ns\":%lld,\"mean_ns\":%.1f,\"runs\":%lld}",
                static_cast<long long>(p50_ns), static_cast<long long>(p90_ns),
                static_cast<long long>(p99_ns), static_cast<long long>(p999_ns),
                static_cast<long long>(min_ns), static_cast<long long>(max_ns), mean_ns,
                static_cast<long long>(runs));
  return text;
}

}  // namespace tickinfer::stats
