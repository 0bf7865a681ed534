// Top-of-book features: mid, microprice, spread in basis points, book imbalance. Each is a pure
// function of the last accepted quote (validation guarantees bid, ask > 0, bid <= ask and both
// sizes > 0, so no division here can be by zero).
#include <memory>

#include "features/feature.hpp"

namespace tickinfer::features {
namespace {

template <FeatureKind K>
class BookFeature final : public Feature {
 public:
  BookFeature() { warm_ = true; }
  void update(const TickContext& c) noexcept override {
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

}  // namespace

std::unique_ptr<Feature> make_book_feature(const FeatureDef& def) {
  switch (def.kind) {
    case FeatureKind::Mid: return std::make_unique<BookFeature<FeatureKind::Mid>>();
    case FeatureKind::Microprice: return std::make_unique<BookFeature<FeatureKind::Microprice>>();
    case FeatureKind::SpreadBps: return std::make_unique<BookFeature<FeatureKind::SpreadBps>>();
    default: return std::make_unique<BookFeature<FeatureKind::BookImbalance>>();
  }
}

std::unique_ptr<Feature> make_feature(const FeatureDef& def) {
  switch (def.kind) {
    case FeatureKind::Mid:
    case FeatureKind::Microprice:
    case FeatureKind::SpreadBps:
    case FeatureKind::BookImbalance: return make_book_feature(def);
    case FeatureKind::LogReturn:
    case FeatureKind::Momentum: return make_return_feature(def);
    case FeatureKind::RealizedVol:
    case FeatureKind::EwmaMean:
    case FeatureKind::EwmaVol: return make_volatility_feature(def);
    default: return make_trade_feature(def);
  }
}

}  // namespace tickinfer::features
