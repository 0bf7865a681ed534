#pragma once
// The numbers a latency report quotes, taken from a LatencyHistogram once a run is over, and
// their two renderings: an aligned text table row and a JSON object. Formatting allocates; it is
// for the reporting side, never the recording thread.
#include <cstdint>
#include <string>
#include <vector>

#include "stats/latency_histogram.hpp"

namespace tickinfer::stats {

struct LatencySummary {
  // All latencies in nanoseconds. Percentiles carry the histogram's bucket precision (< 0.8%);
  // min, max and mean are exact.
  int64_t p50_ns = 0;
  int64_t p90_ns = 0;
  int64_t p99_ns = 0;
  int64_t p999_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0.0;
  int64_t runs = 0;  // samples recorded (including any coordinated-omission fill-ins)

  static LatencySummary from(const LatencyHistogram& histogram) noexcept;

  // A header line and a matching row, columns right-aligned:
  //   "      p50      p90      p99    p99.9      max     mean       runs"  (values in ns)
  // A value wider than its column widens that cell (at least one space before every value), so
  // cells never run together; latency_table() keeps whole columns aligned at any width.
  static std::string table_header();
  std::string table_row() const;

  // One flat JSON object with exactly these keys:
  //   {"p50_ns":..,"p90_ns":..,"p99_ns":..,"p999_ns":..,"min_ns":..,"max_ns":..,"mean_ns":..,"runs":..}
  // mean_ns has one decimal; the rest are integers.
  std::string to_json() const;
};

struct LatencyRow {
  std::string label;
  LatencySummary summary;
};
// A labelled table: a header line (label_title, then LatencySummary's columns) and one line per
// row, each column as wide as its widest cell (at least table_header()'s widths), every line
// ending in '\n'.
std::string latency_table(const std::string& label_title, const std::vector<LatencyRow>& rows);

}  // namespace tickinfer::stats
