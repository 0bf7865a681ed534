// Price-path features over the last n quote ticks: log return over k ticks and momentum
// (log distance of mid from its n-tick simple moving average).
#include <cmath>
#include <memory>

#include "features/feature.hpp"
#include "features/ring_buffer.hpp"

namespace tickinfer::features {
namespace {

// ln(mid_t / mid_{t-k}); with fewer than k earlier quotes, against the first mid seen.
// Ring of the last k+1 mids: front() is mid_{t-k} once full.
class LogReturn final : public Feature {
 public:
  explicit LogReturn(std::int64_t k) : mids_(static_cast<std::size_t>(k) + 1) {}
  void update(const TickContext& c) noexcept override {
    if (!c.is_quote) return;
    if (mids_.empty()) first_ = c.mid;
    mids_.push(c.mid);
    value_ = std::log(c.mid / (mids_.full() ? mids_.front() : first_));
  }
  double value() const noexcept override { return value_; }
  bool warm() const noexcept override { return mids_.full(); }

 private:
  Ring<double> mids_;
  double first_ = 0, value_ = 0;
};

// ln(mid_t / SMA_n(mid)), SMA over the last n quotes (fewer at the start).
class Momentum final : public Feature {
 public:
  explicit Momentum(std::int64_t n) : mids_(static_cast<std::size_t>(n)) {}
  void update(const TickContext& c) noexcept override {
    if (!c.is_quote) return;
    if (mids_.full()) sum_.sub(mids_.front());
    mids_.push(c.mid);
    sum_.add(c.mid);
    value_ = std::log(c.mid / (sum_.value() / static_cast<double>(mids_.size())));
  }
  double value() const noexcept override { return value_; }
  bool warm() const noexcept override { return mids_.full(); }

 private:
  Ring<double> mids_;
  CompensatedSum sum_;
  double value_ = 0;
};

}  // namespace

std::unique_ptr<Feature> make_return_feature(const FeatureDef& def) {
  if (def.kind == FeatureKind::LogReturn) return std::make_unique<LogReturn>(def.count);
  return std::make_unique<Momentum>(def.count);
}

}  // namespace tickinfer::features
