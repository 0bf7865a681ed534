#include "stats/latency_summary.hpp"

#include <algorithm>
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

namespace {
constexpr int kColumns = 7;
const char* const kTitles[kColumns] = {"p50", "p90", "p99", "p99.9", "max", "mean", "runs"};
constexpr int kMinWidth[kColumns] = {kColumnWidth, kColumnWidth, kColumnWidth, kColumnWidth,
                                     kColumnWidth, kColumnWidth, kRunsWidth};

struct Cells {
  std::string text[kColumns];
};

Cells cells_of(const LatencySummary& s) {
  Cells c;
  const long long ints[] = {s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.max_ns};
  for (int i = 0; i < 5; ++i) c.text[i] = std::to_string(ints[i]);
  char mean[64];
  std::snprintf(mean, sizeof mean, "%.1f", s.mean_ns);
  c.text[5] = mean;
  c.text[6] = std::to_string(static_cast<long long>(s.runs));
  return c;
}

// Right-aligns text in width, with at least one space before it.
void put(std::string& out, const std::string& text, std::size_t width) {
  const std::size_t w = std::max(width, text.size() + 1);
  out.append(w - text.size(), ' ');
  out += text;
}

void put_left(std::string& out, const std::string& text, std::size_t width) {
  out += text;
  out.append(width - text.size(), ' ');
}
}  // namespace

std::string LatencySummary::table_header() {
  std::string line;
  for (int i = 0; i < kColumns; ++i) put(line, kTitles[i], static_cast<std::size_t>(kMinWidth[i]));
  return line;
}

std::string LatencySummary::table_row() const {
  const Cells c = cells_of(*this);
  std::string line;
  for (int i = 0; i < kColumns; ++i) put(line, c.text[i], static_cast<std::size_t>(kMinWidth[i]));
  return line;
}

std::string latency_table(const std::string& label_title, const std::vector<LatencyRow>& rows) {
  std::size_t label_width = label_title.size();
  std::size_t width[kColumns];
  for (int i = 0; i < kColumns; ++i) width[i] = static_cast<std::size_t>(kMinWidth[i]);
  std::vector<Cells> cells;
  cells.reserve(rows.size());
  for (const LatencyRow& r : rows) {
    label_width = std::max(label_width, r.label.size());
    cells.push_back(cells_of(r.summary));
    for (int i = 0; i < kColumns; ++i) width[i] = std::max(width[i], cells.back().text[i].size() + 1);
  }
  std::string out;
  put_left(out, label_title, label_width);
  for (int i = 0; i < kColumns; ++i) put(out, kTitles[i], width[i]);
  out += '\n';
  for (std::size_t r = 0; r < rows.size(); ++r) {
    put_left(out, rows[r].label, label_width);
    for (int i = 0; i < kColumns; ++i) put(out, cells[r].text[i], width[i]);
    out += '\n';
  }
  return out;
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
