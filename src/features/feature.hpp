#pragma once
// One incremental feature of one instrument. Implementations hold their own preallocated
// windows; update() is O(1) amortized (time windows evict at most what arrived), noexcept and
// never allocates. The value is defined from the instrument's first quote on (partial windows
// use what they have; see docs/features.md); warm() says the window is full.
#include <memory>

#include "features/feature_spec.hpp"
#include "features/tick_context.hpp"

namespace tickinfer::features {

class Feature {
 public:
  virtual ~Feature() = default;
  // Called for every accepted event of the instrument (quote or trade), after ctx is updated.
  // Sets value_ and warm_: one indirect call per feature per event, the reads below are plain.
  virtual void update(const TickContext& ctx) noexcept = 0;
  double value() const noexcept { return value_; }
  bool warm() const noexcept { return warm_; }

 protected:
  double value_ = 0.0;
  bool warm_ = false;
};

// Factories, one per family file.
std::unique_ptr<Feature> make_book_feature(const FeatureDef& def);        // book_features.cpp
std::unique_ptr<Feature> make_return_feature(const FeatureDef& def);      // return_features.cpp
std::unique_ptr<Feature> make_volatility_feature(const FeatureDef& def);  // volatility_features.cpp
std::unique_ptr<Feature> make_trade_feature(const FeatureDef& def);       // trade_features.cpp
// Dispatches on def.kind to the family factories above.
std::unique_ptr<Feature> make_feature(const FeatureDef& def);

}  // namespace tickinfer::features
