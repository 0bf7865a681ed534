#include "features/batch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

constexpr double kMaxBatchCells = 1 << 28;  // 2 GiB of float64 output

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b) < 0) --q;
  return q;
}

// Collects emitted rows per instrument; they arrive in bar order for each instrument.
class CollectingSink final : public RowSink {
 public:
  CollectingSink(const FeatureSpec& spec, bool standardized)
      : width_(spec.width()), std_(standardized), per_(spec.instruments.size()) {
    for (std::size_t i = 0; i < spec.instruments.size(); ++i) index_.push_back({spec.instruments[i], i});
    std::sort(index_.begin(), index_.end());
  }
  void on_row(const RowMeta& m, const double* raw, const double* z) noexcept override {
    auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(m.instrument, std::size_t{0}));
    Rows& r = per_[it->second];
    const double head[4] = {static_cast<double>(m.instrument), static_cast<double>(m.bar),
                            static_cast<double>(static_cast<int>(m.state)), m.warm ? 1.0 : 0.0};
    r.raw.insert(r.raw.end(), head, head + 4);
    r.raw.insert(r.raw.end(), raw, raw + width_);
    if (std_) {
      r.z.insert(r.z.end(), head, head + 4);
      r.z.insert(r.z.end(), z, z + width_);
    }
    ++r.count;
  }
  struct Rows {
    std::vector<double> raw, z;
    std::size_t count = 0;
  };
  std::size_t width_;
  bool std_;
  std::vector<Rows> per_;
  std::vector<std::pair<std::uint32_t, std::size_t>> index_;
};

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

namespace {

// The pipeline with its grid set from the span of the source's timestamps: one row per bar and
// instrument, so a grid that cannot be held (a stray timestamp, or bars far too small for the
// span) is refused instead of allocated.
void set_grid(const FeatureSpec& spec, FeaturePipeline& pipeline, std::int64_t lo, std::int64_t hi, bool& have_grid) {
  have_grid = false;
  if (lo > hi) return;
  const std::int64_t first = floor_div(lo, spec.bar_ns), last = floor_div(hi, spec.bar_ns);
  const double cells = (static_cast<double>(last) - static_cast<double>(first) + 1.0) *
                       static_cast<double>(spec.instruments.size()) * static_cast<double>(spec.width() + 4);
  if (cells > kMaxBatchCells)
    throw Error("ticks: timestamps span " + std::to_string(last - first + 1) + " bars of " +
                std::to_string(spec.bar_ns) + " ns for " + std::to_string(spec.instruments.size()) +
                " instruments: the feature matrix would exceed " +
                std::to_string(static_cast<long long>(kMaxBatchCells)) +
                " values (check the timestamps or raise bar_ns)");
  pipeline.set_grid(first, last);
  have_grid = true;
}

FeatureMatrix collect_matrix(const FeatureSpec& spec, CollectingSink& sink, const FeaturePipeline& pipeline) {
  FeatureMatrix m;
  m.columns = {"instrument", "bar", "state", "warm"};
  for (const auto& f : spec.features) m.columns.push_back(f.name);
  for (auto& r : sink.per_) {
    m.rows += r.count;
    m.raw.insert(m.raw.end(), r.raw.begin(), r.raw.end());
    m.standardized.insert(m.standardized.end(), r.z.begin(), r.z.end());
  }
  m.counters = pipeline.counters();
  return m;
}

// The timestamp range [lo, hi] of the ticks a grid covers (those a bar can hold).
struct Span {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  void add(std::int64_t ts) {
    if (ts < 0 || ts >= kMaxTimestampNs) return;  // invalid (OutOfRange): no bar
    lo = std::min(lo, ts);
    hi = std::max(hi, ts);
  }
};

}  // namespace

namespace {

// What both batch paths run: the pipeline (refits synchronous, deterministic) and the sink
// collecting its rows; the grid from the span of the timestamps; the matrix at the end.
struct BatchRun {
  explicit BatchRun(const FeatureSpec& s)
      : spec(s), pipeline(s, options()), sink(s, s.standardize.mode != StandardizeMode::None) {
    pipeline.set_sink(&sink);
  }
  static FeaturePipeline::Options options() {
    FeaturePipeline::Options opt;
    opt.synchronous_refit = true;
    return opt;
  }
  void grid(const Span& span) { set_grid(spec, pipeline, span.lo, span.hi, have_grid); }
  FeatureMatrix finish() {
    if (have_grid) pipeline.finish();
    return collect_matrix(spec, sink, pipeline);
  }
  const FeatureSpec& spec;
  FeaturePipeline pipeline;
  CollectingSink sink;
  bool have_grid = false;
};

}  // namespace

FeatureMatrix compute_features(const FeatureSpec& spec, TickSource& source) {
  std::vector<SourceTick> ticks;
  SourceTick t;
  while (source.next(t)) ticks.push_back(t);
  BatchRun run(spec);
  Span span;
  for (const auto& x : ticks) span.add(x.event.exchange_ts_ns());
  run.grid(span);
  for (const auto& x : ticks) {
    const FeatureUpdate& u = run.pipeline.on_tick(x, 0);
    if (u.status == UpdateStatus::UnknownInstrument && spec.unknown_instrument == UnknownInstrumentPolicy::Fail)
      throw Error("ticks: line " + std::to_string(x.line) + ": instrument " + std::to_string(u.instrument) +
                  " is not in the feature set (unknown_instrument = \"fail\")");
  }
  return run.finish();
}

FeatureMatrix compute_book_features(const FeatureSpec& spec, BookTickReplay& source) {
  BatchRun run(spec);
  // Pass 1: the span of the feature set's instruments (the book is rebuilt in pass 2: a day's
  // depth per message is too much to keep).
  Span span;
  source.replay([&](const BookTick& t) {
    if (run.pipeline.instrument_index(t.instrument) >= 0) span.add(t.ts_ns);
  });
  run.grid(span);
  source.replay([&](const BookTick& t) { run.pipeline.on_book(t, 0); });
  return run.finish();
}

std::string serialize_npy_f8(std::size_t rows, std::size_t cols, const double* data) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xFF));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  const std::size_t n = rows * cols;
  const std::size_t at = out.size();
  out.resize(at + n * 8);
  if (n) std::memcpy(&out[at], data, n * 8);  // x86/ARM little-endian hosts
  return out;
}

void write_feature_matrix(const std::string& path, const FeatureMatrix& m, bool standardized) {
  const std::vector<double>& data = standardized ? m.standardized : m.raw;
  if (standardized && m.standardized.empty())
    throw Error("output '" + path + "': the spec has no standardization to write");
  std::string lower = path;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string bytes;
  const std::size_t cols = m.columns.size();
  if (lower.size() >= 4 && lower.compare(lower.size() - 4, 4, ".npy") == 0) {
    bytes = serialize_npy_f8(m.rows, cols, data.data());
  } else if (lower.size() >= 4 && lower.compare(lower.size() - 4, 4, ".csv") == 0) {
    std::ostringstream o;
    for (std::size_t c = 0; c < cols; ++c) o << (c ? "," : "") << m.columns[c];
    o << "\n";
    for (std::size_t r = 0; r < m.rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        const double v = data[r * cols + c];
        o << (c ? "," : "");
        if (c < 4) o << static_cast<long long>(v);
        else o << number_text(v);
      }
      o << "\n";
    }
    bytes = o.str();
  } else {
    throw Error("output '" + path + "': expected a .npy or .csv file name");
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("output '" + path + "': cannot create");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error("output '" + path + "': write failed");
}

std::string format_counters(const PipelineCounters& c) {
  std::ostringstream o;
  o << "events " << c.events << "\naccepted " << c.accepted << "\nunknown_instrument " << c.unknown_instrument << "\n";
  for (int r = 1; r < kInvalidReasonCount; ++r)
    o << "invalid_" << invalid_reason_name(static_cast<InvalidReason>(r)) << " " << c.invalid_by_reason[r] << "\n";
  o << "dropped " << c.dropped << "\nheld " << c.held << "\nmarked_invalid " << c.marked << "\nrows_observed "
    << c.rows_observed << "\nrows_interpolated " << c.rows_interpolated << "\nrows_edge_filled " << c.rows_edge_filled
    << "\nrows_invalid " << c.rows_invalid << "\ngaps_interpolated " << c.gaps_interpolated << "\ngaps_invalidated "
    << c.gaps_invalidated << "\nwindows_withheld " << c.windows_withheld << "\n";
  return o.str();
}

}  // namespace tickinfer::features
