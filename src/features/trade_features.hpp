#pragma once
// Trade-flow features: signed-volume imbalance and VWAP deviation over the last n trades, time
// since the last trade, and the event rate over a time window.
#include <cmath>

#include "features/feature_base.hpp"
#include "features/ring_buffer.hpp"

namespace tickinfer::features {

// sum(sign * size) / sum(size) over the last n trades; 0 before the first trade. sign is +1 for
// a buyer aggressor, -1 for a seller, 0 when unknown (its size still counts in the denominator).
class TradeImbalance final : public FeatureBase {
 public:
  explicit TradeImbalance(std::int64_t n) : trades_(static_cast<std::size_t>(n)) {}
  void update(const TickContext& c) noexcept {
    if (!c.is_trade) return;
    if (trades_.full()) {
      signed_.sub(trades_.front().signed_size);
      total_.sub(trades_.front().size);
    }
    const Entry e{c.trade_sign * c.trade_size, c.trade_size};
    trades_.push(e);
    signed_.add(e.signed_size);
    total_.add(e.size);
    const double t = total_.value();
    value_ = t > 0 ? signed_.value() / t : 0.0;
    warm_ = trades_.full();
  }

 private:
  struct Entry {
    double signed_size, size;
  };
  Ring<Entry> trades_;
  CompensatedSum signed_, total_;
};

// ln(mid_t / VWAP), VWAP = sum(price * size) / sum(size) over the last n trades; recomputed on
// every event because mid moves on quotes. 0 until both a quote and a trade were seen.
class VwapDeviation final : public FeatureBase {
 public:
  explicit VwapDeviation(std::int64_t n) : trades_(static_cast<std::size_t>(n)) {}
  void update(const TickContext& c) noexcept {
    if (c.is_trade) {
      if (trades_.full()) {
        pv_.sub(trades_.front().pv);
        vol_.sub(trades_.front().size);
      }
      const Entry e{c.trade_price * c.trade_size, c.trade_size};
      trades_.push(e);
      pv_.add(e.pv);
      vol_.add(e.size);
    }
    value_ = (c.have_quote && !trades_.empty()) ? std::log(c.mid / (pv_.value() / vol_.value())) : 0.0;
    warm_ = trades_.full();
  }

 private:
  struct Entry {
    double pv, size;
  };
  Ring<Entry> trades_;
  CompensatedSum pv_, vol_;
};

// Seconds from the last trade (or, before any trade, from the instrument's first event) to the
// current event.
class TimeSinceTrade final : public FeatureBase {
 public:
  void update(const TickContext& c) noexcept {
    const std::int64_t since = c.last_trade_ts_ns >= 0 ? c.last_trade_ts_ns : c.first_ts_ns;
    value_ = static_cast<double>(c.ts_ns - since) * 1e-9;
    warm_ = c.last_trade_ts_ns >= 0;
  }
};

// Accepted events (quotes and trades) with timestamp in (t - window, t], per second.
class TickRate final : public FeatureBase {
 public:
  TickRate(std::int64_t window_ns, std::int64_t capacity)
      : window_ns_(window_ns), per_second_(1e9 / static_cast<double>(window_ns)),
        ts_(static_cast<std::size_t>(capacity)) {}
  void update(const TickContext& c) noexcept {
    ts_.push(c.ts_ns);
    while (ts_.front() <= c.ts_ns - window_ns_) ts_.pop_front();
    value_ = static_cast<double>(ts_.size()) * per_second_;
    warm_ = c.ts_ns - c.first_ts_ns >= window_ns_;
  }

 private:
  std::int64_t window_ns_;
  double per_second_;
  Ring<std::int64_t> ts_;
};

}  // namespace tickinfer::features
