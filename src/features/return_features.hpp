#pragma once
// Price-path features over the last n quote ticks: log return over k ticks and momentum
// (log distance of mid from its n-tick simple moving average).
#include <cmath>

#include "features/feature_base.hpp"
#include "features/ring_buffer.hpp"

namespace tickinfer::features {

// ln(mid_t / mid_{t-k}); with fewer than k earlier quotes, against the first mid seen. Computed
// without a log per tick: ln(mid_t / mid_{t-k}) = r_{t-k+1} + ... + r_t (one-tick log returns,
// r_0 = 0 makes the short-history case telescope to ln(mid_t / mid_0)), kept as a compensated
// sum over a ring of the last k returns.
class LogReturn final : public FeatureBase {
 public:
  explicit LogReturn(std::int64_t k) : k_(k), r_(static_cast<std::size_t>(k)) {}
  void update(const TickContext& c) noexcept {
    if (!c.is_quote) return;
    if (r_.full()) sum_.sub(r_.front());
    r_.push(c.r1);
    sum_.add(c.r1);
    ++quotes_;
    value_ = sum_.value();
    warm_ = quotes_ > k_;
  }

 private:
  std::int64_t k_, quotes_ = 0;
  Ring<double> r_;
  CompensatedSum sum_;
};

// ln(mid_t / SMA_n(mid)), SMA over the last n quotes (fewer at the start).
class Momentum final : public FeatureBase {
 public:
  explicit Momentum(std::int64_t n) : mids_(static_cast<std::size_t>(n)) {}
  void update(const TickContext& c) noexcept {
    if (!c.is_quote) return;
    if (mids_.full()) sum_.sub(mids_.front());
    mids_.push(c.mid);
    sum_.add(c.mid);
    // ln(mid / (sum / n)) as ln(mid * n / sum): one division on the latency chain, not two.
    value_ = std::log(c.mid * static_cast<double>(mids_.size()) / sum_.value());
    warm_ = mids_.full();
  }

 private:
  Ring<double> mids_;
  CompensatedSum sum_;
};

}  // namespace tickinfer::features
