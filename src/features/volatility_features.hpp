#pragma once
// Volatility and smoothing: realized volatility over the last n quote returns or over a time
// window, EWMA of mid, EWMA volatility. r is the one-tick log return of mid (0 for the first
// quote), so every window is defined from the first quote on.
#include <cmath>

#include "features/feature_base.hpp"
#include "features/ring_buffer.hpp"

namespace tickinfer::features {

// sqrt(sum of r^2 over the last n quotes).
class RealizedVolCount final : public FeatureBase {
 public:
  explicit RealizedVolCount(std::int64_t n) : sq_(static_cast<std::size_t>(n)) {}
  void update(const TickContext& c) noexcept {
    if (!c.is_quote) return;
    if (sq_.full()) sum_.sub(sq_.front());
    const double s = c.r1 * c.r1;
    sq_.push(s);
    sum_.add(s);
    const double v = sum_.value();
    value_ = v > 0 ? std::sqrt(v) : 0.0;
    warm_ = sq_.full();
  }

 private:
  Ring<double> sq_;
  CompensatedSum sum_;
};

// sqrt(sum of r^2 over quotes with timestamp in (t - window, t]), t = the current event's time,
// so the value also decays on trades and quiet quotes. The ring holds at most `capacity`
// returns; a window holding more than that drops its oldest returns (size capacity for the
// busiest instrument: docs/features.md).
class RealizedVolTime final : public FeatureBase {
 public:
  RealizedVolTime(std::int64_t window_ns, std::int64_t capacity)
      : window_ns_(window_ns), sq_(static_cast<std::size_t>(capacity)) {}
  void update(const TickContext& c) noexcept {
    if (c.is_quote) {
      if (sq_.full()) sum_.sub(sq_.front().sq);
      sq_.push({c.ts_ns, c.r1 * c.r1});
      sum_.add(c.r1 * c.r1);
    }
    while (!sq_.empty() && sq_.front().ts <= c.ts_ns - window_ns_) {
      sum_.sub(sq_.front().sq);
      sq_.pop_front();
    }
    if (sq_.empty()) sum_.reset();  // re-anchor: an empty window sums to exactly 0
    const double v = sum_.value();
    value_ = v > 0 ? std::sqrt(v) : 0.0;
    warm_ = c.ts_ns - c.first_ts_ns >= window_ns_;
  }

 private:
  struct Sample {
    std::int64_t ts;
    double sq;
  };
  std::int64_t window_ns_;
  Ring<Sample> sq_;
  CompensatedSum sum_;
};

// m_t = a * x_t + (1 - a) * m_{t-1}, m_0 = x_0 (pandas ewm(alpha=a, adjust=False)). x is mid
// (EwmaMean) or r^2 (EwmaVol, value sqrt(m)). Warm after ceil(1/a) quotes.
template <bool kVol>
class Ewma final : public FeatureBase {
 public:
  explicit Ewma(double alpha) : a_(alpha), warm_after_(static_cast<std::int64_t>(std::ceil(1.0 / alpha))) {}
  void update(const TickContext& c) noexcept {
    if (!c.is_quote) return;
    const double x = kVol ? c.r1 * c.r1 : c.mid;
    m_ = n_ == 0 ? x : a_ * x + (1.0 - a_) * m_;
    ++n_;
    value_ = kVol ? std::sqrt(m_) : m_;
    warm_ = n_ >= warm_after_;
  }

 private:
  double a_;
  std::int64_t warm_after_;
  double m_ = 0;
  std::int64_t n_ = 0;
};

}  // namespace tickinfer::features
