// TOML feature specification parser (toml++). Every key is checked: unknown keys, wrong types and
// out-of-range values are errors with the line they sit on.
#include "features/feature_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "features/book_tick.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

struct KindInfo {
  FeatureKind kind;
  const char* name;
  // Parameters the kind accepts (others are errors).
  bool count, window_ns, alpha;
  bool side = false, level = false, levels = false, flow = false;
};
constexpr KindInfo kKinds[] = {
    {FeatureKind::Mid, "mid", false, false, false},
    {FeatureKind::Microprice, "microprice", false, false, false},
    {FeatureKind::SpreadBps, "spread_bps", false, false, false},
    {FeatureKind::BookImbalance, "book_imbalance", false, false, false},
    {FeatureKind::LogReturn, "log_return", true, false, false},
    {FeatureKind::Momentum, "momentum", true, false, false},
    {FeatureKind::RealizedVol, "realized_vol", true, true, false},
    {FeatureKind::EwmaMean, "ewma_mean", false, false, true},
    {FeatureKind::EwmaVol, "ewma_vol", false, false, true},
    {FeatureKind::TradeImbalance, "trade_imbalance", true, false, false},
    {FeatureKind::VwapDeviation, "vwap_deviation", true, false, false},
    {FeatureKind::TimeSinceTrade, "time_since_trade", false, false, false},
    {FeatureKind::TickRate, "tick_rate", false, true, false},
    {FeatureKind::LevelPrice, "level_price", false, false, false, true, true},
    {FeatureKind::LevelSize, "level_size", false, false, false, true, true},
    {FeatureKind::CumulativeDepth, "cumulative_depth", false, false, false, true, false, true},
    {FeatureKind::DepthImbalance, "depth_imbalance", false, false, false, false, false, true},
    {FeatureKind::QueueImbalance, "queue_imbalance", false, false, false, false, true},
    {FeatureKind::OrderFlowImbalance, "order_flow_imbalance", true, false, false, false, false, true},
    {FeatureKind::OrderRate, "order_rate", false, true, false, false, false, false, true},
};
// Not a feature: a group that expands into 4 x levels level_price / level_size features in the
// column order DeepLOB and FI-2010 use (ask price, ask size, bid price, bid size, level by level).
constexpr const char* kLobSnapshot = "lob_snapshot";
constexpr const char* kFlowNames[] = {"add", "cancel", "execute"};

const KindInfo& info(FeatureKind k) {
  for (const auto& i : kKinds)
    if (i.kind == k) return i;
  return kKinds[0];
}

class Parser {
 public:
  explicit Parser(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(int line, const std::string& what) const {
    std::ostringstream o;
    o << "spec '" << source_ << "': ";
    if (line > 0) o << "line " << line << ": ";
    o << what;
    throw Error(o.str());
  }
  static int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

  std::int64_t integer(const toml::node& n, const std::string& what, std::int64_t lo,
                       std::int64_t hi) const {
    const auto* v = n.as_integer();
    if (!v) fail(line_of(n), what + " must be an integer");
    const std::int64_t x = v->get();
    if (x < lo || x > hi)
      fail(line_of(n), what + " = " + std::to_string(x) + " is out of range [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  }
  double number(const toml::node& n, const std::string& what) const {
    double x;
    if (const auto* f = n.as_floating_point()) {
      x = f->get();
    } else if (const auto* i = n.as_integer()) {
      x = static_cast<double>(i->get());
    } else {
      fail(line_of(n), what + " must be a number");
    }
    if (!std::isfinite(x)) fail(line_of(n), what + " must be finite");
    return x;
  }
  std::string string(const toml::node& n, const std::string& what) const {
    const auto* s = n.as_string();
    if (!s) fail(line_of(n), what + " must be a string");
    return s->get();
  }
  std::vector<double> numbers(const toml::node& n, const std::string& what) const {
    const auto* a = n.as_array();
    if (!a) fail(line_of(n), what + " must be an array of numbers");
    std::vector<double> out;
    for (const auto& e : *a) out.push_back(number(e, what + " element"));
    return out;
  }

  FeatureSpec parse(std::string_view text) {
    // Specs are ASCII. Checked before toml++ sees the text: its Debian version (3.3.0) reaches an
    // unreachable branch (undefined behaviour) on some non-ASCII code points (found by fuzzing).
    int line = 1;
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '\n') ++line;
      if (c >= 0x80 || c == 0) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", c);
        fail(line, std::string("byte ") + hex + " is not allowed (feature specifications are ASCII text)");
      }
    }
    toml::table root;
    try {
      root = toml::parse(text, source_);
    } catch (const toml::parse_error& e) {
      fail(static_cast<int>(e.source().begin.line), std::string(e.description()));
    }
    FeatureSpec spec;
    bool have_set = false;
    const toml::array* feats = nullptr;
    for (auto&& [key, node] : root) {
      const std::string k(key.str());
      if (k == "feature_set") {
        if (!node.is_table()) fail(line_of(node), "[feature_set] must be a table");
        parse_set(*node.as_table(), spec);
        have_set = true;
      } else if (k == "standardize") {
        if (!node.is_table()) fail(line_of(node), "[standardize] must be a table");
        parse_standardize(*node.as_table(), spec.standardize);
      } else if (k == "feature") {
        feats = node.as_array();
        if (!feats) fail(line_of(node), "'feature' must be an array of tables ([[feature]])");
      } else {
        fail(static_cast<int>(key.source().begin.line),
             "unknown section '" + k + "' (expected feature_set, standardize, feature)");
      }
    }
    if (!have_set) fail(0, "missing [feature_set] section");
    if (!feats || feats->empty()) fail(0, "no [[feature]] entries: the feature vector is empty");
    std::set<std::string> names;
    for (const auto& f : *feats) {
      if (!f.is_table()) fail(line_of(f), "each [[feature]] must be a table");
      for (FeatureDef& d : parse_entry(*f.as_table())) {
        if (!names.insert(d.name).second) fail(d.line, "duplicate feature name '" + d.name + "'");
        spec.features.push_back(std::move(d));
      }
    }
    if (spec.features.size() > kMaxFeatures)
      fail(0, "at most " + std::to_string(kMaxFeatures) + " features are supported, got " +
                  std::to_string(spec.features.size()));
    const auto& st = spec.standardize;
    if (st.mode == StandardizeMode::Fixed) {
      if (st.mean.size() != spec.width() || st.scale.size() != spec.width())
        fail(standardize_line_, "standardize mean and scale need one value per feature (" +
                                    std::to_string(spec.width()) + "), got " +
                                    std::to_string(st.mean.size()) + " and " +
                                    std::to_string(st.scale.size()));
      for (double s : st.scale)
        if (!(s > 0)) fail(standardize_line_, "standardize scale values must be > 0");
    }
    return spec;
  }

 private:
  void parse_set(const toml::table& t, FeatureSpec& spec) {
    bool have_instruments = false;
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      const std::string what = "feature_set." + k;
      if (k == "name") {
        spec.name = string(n, what);
        if (spec.name.empty()) fail(line_of(n), what + " must not be empty");
      } else if (k == "instruments") {
        const auto* a = n.as_array();
        if (!a || a->empty()) fail(line_of(n), what + " must be a non-empty array of instrument ids");
        std::set<std::int64_t> seen;
        for (const auto& e : *a) {
          const auto id = integer(e, what + " element", 0, 0xFFFFFFFFll);
          if (!seen.insert(id).second) fail(line_of(e), "instrument " + std::to_string(id) + " listed twice");
          spec.instruments.push_back(static_cast<std::uint32_t>(id));
        }
        if (spec.instruments.size() > kMaxInstruments) fail(line_of(n), "too many instruments");
        have_instruments = true;
      } else if (k == "unknown_instrument") {
        const auto s = string(n, what);
        if (s == "ignore") spec.unknown_instrument = UnknownInstrumentPolicy::Ignore;
        else if (s == "fail") spec.unknown_instrument = UnknownInstrumentPolicy::Fail;
        else fail(line_of(n), what + " = '" + s + "': expected 'ignore' or 'fail'");
      } else if (k == "bar_ns") {
        spec.bar_ns = integer(n, what, 1, std::int64_t{86400} * 1'000'000'000);
      } else if (k == "gap_limit") {
        spec.gap_limit = integer(n, what, 0, 1'000'000);
      } else if (k == "invalid_policy") {
        const auto s = string(n, what);
        if (s == "drop") spec.invalid_policy = InvalidPolicy::Drop;
        else if (s == "hold_last") spec.invalid_policy = InvalidPolicy::HoldLast;
        else if (s == "mark_invalid") spec.invalid_policy = InvalidPolicy::MarkInvalid;
        else fail(line_of(n), what + " = '" + s + "': expected 'drop', 'hold_last' or 'mark_invalid'");
      } else if (k == "window") {
        spec.window = integer(n, what, 1, 1 << 16);
      } else {
        fail(static_cast<int>(key.source().begin.line),
             "unknown key '" + what + "' (expected name, instruments, unknown_instrument, bar_ns, "
             "gap_limit, invalid_policy, window)");
      }
    }
    if (!have_instruments) fail(line_of(t), "feature_set.instruments is required");
  }

  void parse_standardize(const toml::table& t, StandardizeSpec& st) {
    standardize_line_ = line_of(t);
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      const std::string what = "standardize." + k;
      if (k == "mode") {
        const auto s = string(n, what);
        if (s == "none") st.mode = StandardizeMode::None;
        else if (s == "fixed") st.mode = StandardizeMode::Fixed;
        else if (s == "rolling") st.mode = StandardizeMode::Rolling;
        else fail(line_of(n), what + " = '" + s + "': expected 'none', 'fixed' or 'rolling'");
      } else if (k == "window") {
        st.window = integer(n, what, 2, 1 << 20);
      } else if (k == "refit_every") {
        st.refit_every = integer(n, what, 1, 1 << 30);
      } else if (k == "drift_threshold") {
        st.drift_threshold = number(n, what);
        if (st.drift_threshold < 0) fail(line_of(n), what + " must be >= 0 (0 disables)");
      } else if (k == "mean") {
        st.mean = numbers(n, what);
      } else if (k == "scale") {
        st.scale = numbers(n, what);
      } else {
        fail(static_cast<int>(key.source().begin.line),
             "unknown key '" + what + "' (expected mode, window, refit_every, drift_threshold, mean, scale)");
      }
    }
  }

  // One [[feature]] entry: a feature, or the features of a group.
  std::vector<FeatureDef> parse_entry(const toml::table& t) {
    const toml::node* kind_node = t.get("kind");
    if (!kind_node) fail(line_of(t), "[[feature]] without 'kind'");
    const std::string kind = string(*kind_node, "feature kind");
    if (kind == kLobSnapshot) return parse_lob_snapshot(t);
    const KindInfo* ki = nullptr;
    for (const auto& i : kKinds)
      if (kind == i.name) ki = &i;
    if (!ki) {
      std::string known;
      for (const auto& i : kKinds) known += std::string(known.empty() ? "" : ", ") + i.name;
      fail(line_of(*kind_node), "unknown feature kind '" + kind + "' (known: " + known + ", and the group " +
                                    kLobSnapshot + ")");
    }
    return {parse_feature(t, *ki)};
  }

  std::vector<FeatureDef> parse_lob_snapshot(const toml::table& t) {
    std::int64_t levels = 0;
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "kind") continue;
      if (k != "levels")
        fail(static_cast<int>(key.source().begin.line),
             std::string("feature '") + kLobSnapshot + "': unknown parameter '" + k +
                 "' (it takes only 'levels'; its columns are named ask_price_1, ask_size_1, bid_price_1, ...)");
      levels = integer(n, std::string("feature '") + kLobSnapshot + "' levels", 1,
                       static_cast<std::int64_t>(std::min(kMaxBookLevels, kMaxFeatures / 4)));
    }
    if (levels == 0) fail(line_of(t), std::string("feature '") + kLobSnapshot + "': missing parameter 'levels'");
    std::vector<FeatureDef> out;
    for (std::int64_t i = 1; i <= levels; ++i) {
      for (std::uint8_t side : {std::uint8_t{1}, std::uint8_t{0}}) {
        for (bool price : {true, false}) {
          FeatureDef d;
          d.line = line_of(t);
          d.kind = price ? FeatureKind::LevelPrice : FeatureKind::LevelSize;
          d.side = side;
          d.level = i;
          d.name = std::string(side ? "ask" : "bid") + (price ? "_price_" : "_size_") + std::to_string(i);
          out.push_back(std::move(d));
        }
      }
    }
    return out;
  }

  FeatureDef parse_feature(const toml::table& t, const KindInfo& kinfo) {
    const KindInfo* ki = &kinfo;
    const std::string kind = ki->name;
    FeatureDef d;
    d.line = line_of(t);
    d.kind = ki->kind;
    const std::string label = "feature '" + kind + "'";
    bool have_count = false, have_window = false, have_alpha = false, have_capacity = false;
    bool have_side = false, have_level = false, have_flow = false;
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "kind") continue;
      if (ki->side && k == "side") {
        const std::string v = string(n, label + " side");
        if (v != "bid" && v != "ask") fail(line_of(n), label + ": side = '" + v + "': expected 'bid' or 'ask'");
        d.side = v == "ask" ? 1 : 0;
        have_side = true;
      } else if ((ki->level && k == "level") || (ki->levels && k == "levels")) {
        d.level = integer(n, label + " " + k, 1, static_cast<std::int64_t>(kMaxBookLevels));
        have_level = true;
      } else if (ki->flow && k == "flow") {
        const std::string v = string(n, label + " flow");
        bool known = false;
        for (std::uint8_t i = 0; i < 3; ++i)
          if (v == kFlowNames[i]) d.flow = i, known = true;
        if (!known) fail(line_of(n), label + ": flow = '" + v + "': expected 'add', 'cancel' or 'execute'");
        have_flow = true;
      } else if (k == "name") {
        d.name = string(n, label + " name");
        if (d.name.empty()) fail(line_of(n), label + ": name must not be empty");
      } else if (ki->count && (k == "ticks" || k == "trades")) {
        const bool want_trades = d.kind == FeatureKind::TradeImbalance || d.kind == FeatureKind::VwapDeviation;
        if ((k == "trades") != want_trades)
          fail(line_of(n), label + ": unknown parameter '" + k + "' (use '" +
                               (want_trades ? "trades" : "ticks") + "')");
        d.count = integer(n, label + " " + k, 1, 1 << 20);
        have_count = true;
      } else if (ki->window_ns && k == "window_ns") {
        d.window_ns = integer(n, label + " window_ns", 1, std::int64_t{86400} * 1'000'000'000);
        have_window = true;
      } else if (ki->window_ns && k == "capacity") {
        d.capacity = integer(n, label + " capacity", 2, 1 << 22);
        have_capacity = true;
      } else if (ki->alpha && k == "alpha") {
        d.alpha = number(n, label + " alpha");
        if (!(d.alpha > 0 && d.alpha <= 1)) fail(line_of(n), label + ": alpha must be in (0, 1]");
        have_alpha = true;
      } else {
        fail(static_cast<int>(key.source().begin.line), label + ": unknown parameter '" + k + "'");
      }
    }
    if (d.kind == FeatureKind::RealizedVol && have_count == have_window)
      fail(d.line, label + ": give exactly one of 'ticks' (count window) or 'window_ns' (time window)");
    if (d.kind != FeatureKind::RealizedVol && ki->count && !have_count)
      fail(d.line, label + ": missing parameter '" +
                       std::string(d.kind == FeatureKind::TradeImbalance || d.kind == FeatureKind::VwapDeviation
                                       ? "trades" : "ticks") + "'");
    if (d.kind == FeatureKind::TickRate && !have_window) fail(d.line, label + ": missing parameter 'window_ns'");
    if (ki->alpha && !have_alpha) fail(d.line, label + ": missing parameter 'alpha'");
    if (have_capacity && !have_window) fail(d.line, label + ": 'capacity' needs 'window_ns'");
    if (d.kind == FeatureKind::OrderRate && !have_window) fail(d.line, label + ": missing parameter 'window_ns'");
    if (ki->side && !have_side) fail(d.line, label + ": missing parameter 'side' ('bid' or 'ask')");
    if ((ki->level || ki->levels) && !have_level)
      fail(d.line, label + ": missing parameter '" + (ki->level ? "level" : "levels") + "'");
    if (ki->flow && !have_flow) fail(d.line, label + ": missing parameter 'flow' ('add', 'cancel' or 'execute')");
    if (have_window && !have_capacity) d.capacity = 4096;
    if (d.name.empty()) {
      d.name = kind;
      if (have_flow) d.name += std::string("_") + kFlowNames[d.flow];
      if (have_side) d.name += d.side ? "_ask" : "_bid";
      if (have_level) d.name += "_" + std::to_string(d.level);
      if (have_count) d.name += "_" + std::to_string(d.count);
      if (have_window) d.name += "_" + std::to_string(d.window_ns) + "ns";
      if (have_alpha) {
        std::ostringstream o;
        o << d.alpha;
        d.name += "_" + o.str();
      }
    }
    return d;
  }

  std::string source_;
  int standardize_line_ = 0;
};

}  // namespace

const char* feature_kind_name(FeatureKind kind) { return info(kind).name; }

const char* invalid_policy_name(InvalidPolicy p) {
  switch (p) {
    case InvalidPolicy::Drop: return "drop";
    case InvalidPolicy::HoldLast: return "hold_last";
    case InvalidPolicy::MarkInvalid: return "mark_invalid";
  }
  return "?";
}

std::string FeatureSpec::canonical_features() const {
  std::ostringstream o;
  o.precision(17);
  for (const auto& f : features) {
    o << feature_kind_name(f.kind) << "(";
    const char* sep = "";
    if (f.count) { o << sep << "n=" << f.count; sep = ","; }
    if (f.window_ns) { o << sep << "window_ns=" << f.window_ns << ",capacity=" << f.capacity; sep = ","; }
    if (f.alpha > 0) { o << sep << "alpha=" << f.alpha; sep = ","; }
    const KindInfo& ki = info(f.kind);
    if (ki.side) { o << sep << "side=" << (f.side ? "ask" : "bid"); sep = ","; }
    if (ki.level || ki.levels) { o << sep << (ki.level ? "level=" : "levels=") << f.level; sep = ","; }
    if (ki.flow) { o << sep << "flow=" << kFlowNames[f.flow]; }
    o << ")\n";
  }
  return o.str();
}

std::size_t FeatureSpec::book_depth() const {
  std::size_t depth = 1;
  for (const auto& f : features) {
    const KindInfo& ki = info(f.kind);
    if (ki.level || ki.levels) depth = std::max(depth, static_cast<std::size_t>(f.level));
  }
  return depth;
}

std::uint64_t FeatureSpec::feature_set_id() const {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : canonical_features()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

FeatureSpec parse_feature_spec(std::string_view text, std::string_view source) {
  return Parser(source).parse(text);
}

FeatureSpec load_feature_spec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("spec '" + path + "': cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_feature_spec(buf.str(), path);
}

}  // namespace tickinfer::features
