#include "features/feature.hpp"

namespace tickinfer::features {

AnyFeature make_feature(const FeatureDef& d) {
  switch (d.kind) {
    case FeatureKind::Mid: return BookFeature<FeatureKind::Mid>();
    case FeatureKind::Microprice: return BookFeature<FeatureKind::Microprice>();
    case FeatureKind::SpreadBps: return BookFeature<FeatureKind::SpreadBps>();
    case FeatureKind::BookImbalance: return BookFeature<FeatureKind::BookImbalance>();
    case FeatureKind::LogReturn: return LogReturn(d.count);
    case FeatureKind::Momentum: return Momentum(d.count);
    case FeatureKind::RealizedVol:
      if (d.window_ns > 0) return RealizedVolTime(d.window_ns, d.capacity);
      return RealizedVolCount(d.count);
    case FeatureKind::EwmaMean: return Ewma<false>(d.alpha);
    case FeatureKind::EwmaVol: return Ewma<true>(d.alpha);
    case FeatureKind::TradeImbalance: return TradeImbalance(d.count);
    case FeatureKind::VwapDeviation: return VwapDeviation(d.count);
    case FeatureKind::TimeSinceTrade: return TimeSinceTrade();
    case FeatureKind::TickRate: return TickRate(d.window_ns, d.capacity);
    case FeatureKind::LevelPrice: return LevelValue<true>(d.side, d.level);
    case FeatureKind::LevelSize: return LevelValue<false>(d.side, d.level);
    case FeatureKind::CumulativeDepth: return CumulativeDepth(d.side, d.level);
    case FeatureKind::DepthImbalance: return DepthImbalance(d.level);
    case FeatureKind::QueueImbalance: return QueueImbalance(d.level);
    case FeatureKind::OrderFlowImbalance: return OrderFlowImbalance(d.level, d.count);
    case FeatureKind::OrderRate: return OrderRate(static_cast<OrderFlowKind>(d.flow), d.window_ns, d.capacity);
  }
  return BookFeature<FeatureKind::Mid>();
}

}  // namespace tickinfer::features
