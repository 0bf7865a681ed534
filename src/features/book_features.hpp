#pragma once
// Top-of-book features: mid, microprice, spread in basis points, book imbalance. Each is a pure
// function of the last accepted quote (validation guarantees bid, ask > 0, bid <= ask and both
// sizes > 0, so no division here can be by zero).

#include "features/feature_base.hpp"

namespace tickinfer::features {

template <FeatureKind K>
class BookFeature final : public FeatureBase {
 public:
  BookFeature() { warm_ = true; }
  void update(const TickContext& c) noexcept {
    if (!c.is_quote) return;
    if constexpr (K == FeatureKind::Mid) {
      value_ = c.mid;
    } else if constexpr (K == FeatureKind::Microprice) {
      value_ = (c.bid * c.ask_size + c.ask * c.bid_size) / (c.bid_size + c.ask_size);
    } else if constexpr (K == FeatureKind::SpreadBps) {
      value_ = (c.ask - c.bid) / c.mid * 1e4;
    } else {
      value_ = (c.bid_size - c.ask_size) / (c.bid_size + c.ask_size);
    }
  }
};

}  // namespace tickinfer::features
