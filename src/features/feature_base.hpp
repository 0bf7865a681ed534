#pragma once
// What every incremental feature holds: its current value and whether its window is full. Each
// feature class (one family per header: book_, return_, volatility_, trade_features.hpp) derives
// from it and provides `void update(const TickContext&) noexcept`, called for every accepted event
// of its instrument; update() is O(1) amortized (time windows evict at most what arrived),
// never allocates, and sets value_ and warm_. The value is defined from the instrument's first
// quote on (partial windows use what they have; docs/features.md); warm() says the window is full.
#include "features/feature_spec.hpp"
#include "features/tick_context.hpp"

namespace tickinfer::features {

class FeatureBase {
 public:
  double value() const noexcept { return value_; }
  bool warm() const noexcept { return warm_; }

 protected:
  double value_ = 0.0;
  bool warm_ = false;
};

}  // namespace tickinfer::features
