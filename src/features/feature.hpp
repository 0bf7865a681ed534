#pragma once
// One incremental feature of one instrument, as a closed set of concrete types. A std::variant
// (not a virtual interface) so the per-event loop is a jump table into inlined update bodies
// stored inline in the instrument's array: no pointer chase, no call per feature.
#include <variant>

#include "features/book_features.hpp"
#include "features/depth_features.hpp"
#include "features/feature_base.hpp"
#include "features/return_features.hpp"
#include "features/trade_features.hpp"
#include "features/volatility_features.hpp"

namespace tickinfer::features {

using AnyFeature =
    std::variant<BookFeature<FeatureKind::Mid>, BookFeature<FeatureKind::Microprice>,
                 BookFeature<FeatureKind::SpreadBps>, BookFeature<FeatureKind::BookImbalance>, LogReturn,
                 Momentum, RealizedVolCount, RealizedVolTime, Ewma<false>, Ewma<true>, TradeImbalance,
                 VwapDeviation, TimeSinceTrade, TickRate, LevelValue<true>, LevelValue<false>, CumulativeDepth,
                 DepthImbalance, QueueImbalance, OrderFlowImbalance, OrderRate>;

// The feature `def` describes, with its windows allocated. def comes from a parsed spec.
AnyFeature make_feature(const FeatureDef& def);

// Updates f with the event and returns it as its common base (value(), warm()).
inline const FeatureBase& update_feature(AnyFeature& f, const TickContext& c) noexcept {
  return std::visit(
      [&c](auto& x) -> const FeatureBase& {
        x.update(c);
        return x;
      },
      f);
}

}  // namespace tickinfer::features
