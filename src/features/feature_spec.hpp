#pragma once
// The declarative feature specification: which features, with which parameters, in which order.
// The order is the model's input vector; the same file travels beside the model as its signature
// (see signature.hpp). Parsed from TOML (docs/features.md has the format and every key).
//
// Errors: parse_feature_spec throws tickinfer::Error naming the source, the 1-based line and the
// problem ("spec 'f.toml': line 12: feature 'realized_vol': unknown parameter 'tick'"); nothing is
// defaulted silently for a key that is present but wrong.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::features {

enum class FeatureKind : std::uint8_t {
  Mid,             // (bid + ask) / 2, price units
  Microprice,      // (bid * ask_size + ask * bid_size) / (bid_size + ask_size)
  SpreadBps,       // (ask - bid) / mid * 1e4
  BookImbalance,   // (bid_size - ask_size) / (bid_size + ask_size)
  LogReturn,       // ln(mid_t / mid_{t-k}) over quote ticks
  Momentum,        // ln(mid_t / mean(mid over the last n quote ticks))
  RealizedVol,     // sqrt(sum of r^2 over the last n quote ticks, or over a time window)
  EwmaMean,        // EWMA of mid, m_t = a*mid_t + (1-a)*m_{t-1}
  EwmaVol,         // sqrt(EWMA of r^2)
  TradeImbalance,  // sum(sign*size) / sum(size) over the last n trades
  VwapDeviation,   // ln(mid_t / VWAP of the last n trades)
  TimeSinceTrade,  // seconds since the last trade
  TickRate,        // valid events per second over a time window
  // Book depth (docs/features.md, "Book features"); a quote feed is a one-level book.
  LevelPrice,        // price of level `level` of `side`
  LevelSize,         // shares at level `level` of `side`
  CumulativeDepth,   // shares of `side` over the best `level` levels
  DepthImbalance,    // (bid - ask) / (bid + ask) depth over the best `level` levels
  QueueImbalance,    // (bid - ask) / (bid + ask) shares at level `level`
  OrderFlowImbalance,  // multi-level OFI over the best `level` levels, summed over the last n events
  OrderRate,         // orders of kind `flow` per second over a time window
};

// Name as written in the spec ("log_return"); parse throws on an unknown name.
const char* feature_kind_name(FeatureKind kind);

struct FeatureDef {
  FeatureKind kind = FeatureKind::Mid;
  std::string name;          // column name: the spec's `name`, or kind + params ("log_return_5")
  std::int64_t count = 0;    // ticks / trades window (LogReturn, Momentum, RealizedVol, Trade*)
  std::int64_t window_ns = 0;  // time window (RealizedVol by time, TickRate); 0 = count window
  std::int64_t capacity = 0;   // time windows: most samples kept (ring size)
  double alpha = 0.0;        // EwmaMean / EwmaVol smoothing factor in (0, 1]
  std::uint8_t side = 0;     // LevelPrice, LevelSize, CumulativeDepth: 0 bid, 1 ask
  // LevelPrice, LevelSize, QueueImbalance: the level (1 = best); CumulativeDepth,
  // DepthImbalance, OrderFlowImbalance: how many levels from the best. At most kMaxBookLevels.
  std::int64_t level = 0;
  std::uint8_t flow = 0;     // OrderRate: 0 arrivals, 1 cancels, 2 executions (OrderFlowKind)
  int line = 0;              // where it was declared, for later error messages
};

// What to do with an input that fails validation (NaN/Inf, price <= 0, crossed book, empty side,
// negative or zero size, timestamp going backwards). Every case is counted.
enum class InvalidPolicy : std::uint8_t {
  Drop,         // ignore the event; a bar holding only dropped events is a missing bar (gap)
  HoldLast,     // ignore the event, but the bar counts as observed with the last values
  MarkInvalid,  // the bar becomes an invalid row: never interpolated, never fed to a model
};
const char* invalid_policy_name(InvalidPolicy policy);

// Events for an instrument outside the configured set.
enum class UnknownInstrumentPolicy : std::uint8_t { Ignore, Fail };

enum class StandardizeMode : std::uint8_t { None, Fixed, Rolling };

struct StandardizeSpec {
  StandardizeMode mode = StandardizeMode::None;
  std::int64_t window = 500;      // Rolling: rows in the fitting window
  std::int64_t refit_every = 100; // Rolling: publish after every this many accepted rows
  double drift_threshold = 0.0;   // Rolling: also publish when |mean_now - mean_pub| > t * scale_pub
  std::vector<double> mean;       // Fixed: per feature, from training
  std::vector<double> scale;      // Fixed: per feature, > 0
};

struct FeatureSpec {
  std::string name = "features";       // feature-set name
  std::vector<std::uint32_t> instruments;  // the preallocated instrument set (non-empty, unique)
  UnknownInstrumentPolicy unknown_instrument = UnknownInstrumentPolicy::Ignore;
  std::int64_t bar_ns = 1'000'000'000;  // bar = [k*bar_ns, (k+1)*bar_ns) of exchange time
  std::int64_t gap_limit = 10;          // longest run of missing bars that is interpolated
  InvalidPolicy invalid_policy = InvalidPolicy::Drop;
  std::int64_t window = 1;              // T: rows kept for sequence models
  StandardizeSpec standardize;
  std::vector<FeatureDef> features;     // the ordered input vector

  std::size_t width() const { return features.size(); }
  // The book levels per side the features read (0: none beyond the top of book): what a book
  // source fills into BookLevels.
  std::size_t book_depth() const;
  // One line per feature "kind(param=value,...)" in order: what the signature compares.
  std::string canonical_features() const;
  // FNV-1a 64 of canonical_features(): the feature-set id used by the cache and the shm store.
  // Formats text (allocates): compute it once at set-up, never per tick.
  std::uint64_t feature_set_id() const;
};

inline constexpr std::size_t kMaxFeatures = 64;  // validity is a 64-bit mask
inline constexpr std::size_t kMaxInstruments = 1 << 16;

FeatureSpec parse_feature_spec(std::string_view text, std::string_view source = "<memory>");
FeatureSpec load_feature_spec(const std::string& path);

}  // namespace tickinfer::features
