#pragma once
// A seeded synthetic market: top-of-book quotes and trades for several instruments, moving
// through named regimes. Same seed, same configuration -> the same event stream, bit for bit
// (std::mt19937_64 and integer arithmetic only; no wall clock).
//
// Microstructure per instrument: a price grid (tick size), a bid/ask spread of a whole number of
// ticks, queue sizes at the touch, and trades that arrive as a Poisson process (exponential gaps
// on the exchange clock) and consume the queue they hit; an emptied queue moves the touch by one
// tick and is refilled. Regimes set drift, volatility, spread, queue depth and trade intensity:
//   calm      small moves, tight spread, deep queues
//   rally     steady upward drift, buyers aggress more
//   crash     strong downward drift, wide spread, thin queues, sellers aggress
//   flat      illiquid: rare events, wide spread, few trades, almost no movement
//   burst     volatility burst: large symmetric moves, frequent trades
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tickinfer/market_data.hpp"

namespace tickinfer::feed {

enum class Regime : std::uint8_t { Calm, Rally, Crash, Flat, Burst };
Regime parse_regime(const std::string& name);  // throws tickinfer::Error listing valid names
const char* to_string(Regime r) noexcept;

struct GeneratorConfig {
  std::uint64_t seed = 1;
  std::uint32_t instruments = 4;
  std::vector<Regime> regimes = {Regime::Calm, Regime::Rally, Regime::Burst, Regime::Crash, Regime::Flat};
  std::uint64_t events_per_regime = 50'000;      // the regimes cycle in this order
  std::int64_t start_ts_ns = 1'767'364'200'000'000'000;  // 2026-01-02 14:30:00 UTC
  std::int64_t mean_gap_ns = 20'000;             // exchange-clock gap between events (calm)
};

class MarketGenerator {
 public:
  explicit MarketGenerator(const GeneratorConfig& config);  // throws on 0 instruments / no regimes
  md::Event next();
  Regime regime() const noexcept { return cfg_.regimes[regime_index_]; }
  std::uint64_t events() const noexcept { return events_; }

 private:
  struct Instrument {
    std::int64_t tick;       // tick size, fixed-point
    std::int64_t bid_ticks;  // best bid in ticks
    std::int64_t spread;     // ask - bid in ticks, >= 1
    std::uint32_t bid_size, ask_size;
    bool quote_pending;      // a trade emptied a queue: the next event for it is a quote
  };
  md::Event quote_of(std::uint32_t id) const;

  GeneratorConfig cfg_;
  std::mt19937_64 rng_;
  std::vector<Instrument> inst_;
  std::size_t regime_index_ = 0;
  std::uint64_t events_ = 0;
  std::int64_t ts_;
};

}  // namespace tickinfer::feed
