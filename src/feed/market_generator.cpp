#include "feed/market_generator.hpp"

#include <algorithm>
#include <cmath>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

namespace {
struct RegimeParams {
  double drift;        // mean mid move per quote, ticks
  double vol;          // std dev of the move, ticks
  double trade_prob;   // chance an event is a trade
  double buy_prob;     // chance a trade's aggressor is the buyer
  int spread_min, spread_max;  // ticks
  double queue_mean;   // mean touch size, units
  double gap_scale;    // multiplies the mean event gap (illiquid markets are slow)
};
RegimeParams params(Regime r) {
  switch (r) {
    case Regime::Calm: return {0.0, 0.6, 0.15, 0.5, 1, 2, 800, 1.0};
    case Regime::Rally: return {0.35, 0.8, 0.25, 0.7, 1, 2, 500, 0.8};
    case Regime::Crash: return {-0.8, 1.6, 0.35, 0.2, 2, 6, 150, 0.5};
    case Regime::Flat: return {0.0, 0.1, 0.03, 0.5, 4, 10, 60, 8.0};
    case Regime::Burst: return {0.0, 3.0, 0.4, 0.5, 1, 5, 250, 0.4};
  }
  return {0, 1, 0.1, 0.5, 1, 2, 500, 1};
}
}  // namespace

Regime parse_regime(const std::string& name) {
  if (name == "calm") return Regime::Calm;
  if (name == "rally") return Regime::Rally;
  if (name == "crash") return Regime::Crash;
  if (name == "flat") return Regime::Flat;
  if (name == "burst") return Regime::Burst;
  throw Error("regime '" + name + "': expected calm, rally, crash, flat or burst");
}

const char* to_string(Regime r) noexcept {
  switch (r) {
    case Regime::Calm: return "calm";
    case Regime::Rally: return "rally";
    case Regime::Crash: return "crash";
    case Regime::Flat: return "flat";
    case Regime::Burst: return "burst";
  }
  return "?";
}

MarketGenerator::MarketGenerator(const GeneratorConfig& config)
    : cfg_(config), rng_(config.seed), ts_(config.start_ts_ns) {
  if (cfg_.instruments == 0) throw Error("market generator: at least one instrument");
  if (cfg_.regimes.empty()) throw Error("market generator: at least one regime");
  if (cfg_.events_per_regime == 0) throw Error("market generator: events per regime must be > 0");
  if (cfg_.mean_gap_ns <= 0) throw Error("market generator: mean event gap must be > 0");
  // Tick sizes 0.01, 0.05, 0.25, 0.01, ...; prices around 20..500 currency units.
  static const std::int64_t kTicks[] = {1'000'000, 5'000'000, 25'000'000};
  for (std::uint32_t i = 0; i < cfg_.instruments; ++i) {
    Instrument in{};
    in.tick = kTicks[i % 3];
    const std::int64_t price = (20 + static_cast<std::int64_t>(rng_() % 480)) * md::kPriceScale;
    in.bid_ticks = price / in.tick;
    in.spread = 1;
    in.bid_size = 500;
    in.ask_size = 500;
    inst_.push_back(in);
  }
}

md::Event MarketGenerator::quote_of(std::uint32_t id) const {
  const Instrument& in = inst_[id];
  md::Quote q;
  q.instrument = id + 1;  // instrument ids start at 1
  q.exchange_ts_ns = ts_;
  q.bid_price = in.bid_ticks * in.tick;
  q.ask_price = (in.bid_ticks + in.spread) * in.tick;
  q.bid_size = in.bid_size;
  q.ask_size = in.ask_size;
  return md::Event::of(q);
}

md::Event MarketGenerator::next() {
  if (events_ > 0 && events_ % cfg_.events_per_regime == 0) {
    regime_index_ = (regime_index_ + 1) % cfg_.regimes.size();
  }
  ++events_;
  const RegimeParams p = params(regime());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::exponential_distribution<double> gap(1.0 / (static_cast<double>(cfg_.mean_gap_ns) * p.gap_scale));
  ts_ += 1 + static_cast<std::int64_t>(gap(rng_));
  const auto id = static_cast<std::uint32_t>(rng_() % inst_.size());
  Instrument& in = inst_[id];
  std::geometric_distribution<std::uint32_t> queue(1.0 / p.queue_mean);
  auto refill = [&] { return 1 + queue(rng_); };

  if (in.quote_pending) {
    in.quote_pending = false;
    return quote_of(id);
  }
  if (u(rng_) < p.trade_prob) {
    md::Trade t;
    t.instrument = id + 1;
    t.exchange_ts_ns = ts_;
    const bool buy = u(rng_) < p.buy_prob;
    t.aggressor = buy ? md::Side::Buy : md::Side::Sell;
    std::uint32_t& q = buy ? in.ask_size : in.bid_size;
    std::geometric_distribution<std::uint32_t> take(4.0 / p.queue_mean > 1.0 ? 1.0 : 4.0 / p.queue_mean);
    t.size = std::min<std::uint32_t>(q, 1 + take(rng_));
    t.price = (buy ? in.bid_ticks + in.spread : in.bid_ticks) * in.tick;
    q -= t.size;
    if (q == 0) {  // the touch is gone: price moves one tick through it, queue refills
      in.bid_ticks += buy ? 1 : -1;
      if (in.bid_ticks < 1) in.bid_ticks = 1;
      q = refill();
      in.quote_pending = true;
    }
    return md::Event::of(t);
  }
  std::normal_distribution<double> move(p.drift, p.vol);
  in.bid_ticks += static_cast<std::int64_t>(std::lround(move(rng_)));
  if (in.bid_ticks < 1) in.bid_ticks = 1;
  in.spread = p.spread_min + static_cast<std::int64_t>(rng_() % (p.spread_max - p.spread_min + 1));
  in.bid_size = refill();
  in.ask_size = refill();
  return quote_of(id);
}

}  // namespace tickinfer::feed
