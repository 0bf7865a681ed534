// The feature plan of a run (features/feature_plan.hpp): the union of the models' features with
// each feature once, every model's columns and scaling, equal views grouped, the gathers, and the
// combinations the plan must refuse. Expected columns and values are written out by hand here.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "features/feature_plan.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

FeatureSpec spec_of(const std::string& features, const std::string& standardize = "") {
  return parse_feature_spec("[feature_set]\ninstruments = [1, 2]\nwindow = 3\n" + standardize + features);
}

const std::string kMid = "[[feature]]\nkind = \"mid\"\n";
const std::string kSpread = "[[feature]]\nkind = \"spread_bps\"\n";
const std::string kRet5 = "[[feature]]\nkind = \"log_return\"\nticks = 5\n";
const std::string kRet20 = "[[feature]]\nkind = \"log_return\"\nticks = 20\n";
const std::string kImb = "[[feature]]\nkind = \"book_imbalance\"\n";

std::string fixed(const std::string& mean, const std::string& scale) {
  return "[standardize]\nmode = \"fixed\"\nmean = " + mean + "\nscale = " + scale + "\n";
}

ModelFeatures model(const FeatureSpec* sig, bool sequence = false) { return {"model 'm'", sig, sequence}; }

TEST(FeaturePlan, TheUnionHoldsEachFeatureOnceAndEveryModelGetsItsColumns) {
  const FeatureSpec pipeline = spec_of(kMid + kSpread + kRet5);
  const FeatureSpec a = spec_of(kRet5 + kMid);                 // a reordered subset
  const FeatureSpec b = spec_of(kRet20 + kSpread + kImb);      // two new features
  const FeatureSpec c = spec_of(kRet5 + kMid);                 // equal to a
  // A feature named differently is the same feature: kind and parameters decide.
  const FeatureSpec d = spec_of("[[feature]]\nkind = \"log_return\"\nticks = 20\nname = \"r20\"\n");
  const FeaturePlan p = plan_features(pipeline, {model(nullptr), model(&a), model(&b), model(&c), model(&d)});
  ASSERT_EQ(p.spec.width(), 5u);
  EXPECT_EQ(p.spec.features[3].name, "log_return_20");
  EXPECT_EQ(p.spec.features[4].name, "book_imbalance");
  EXPECT_EQ(p.pipeline_columns, 3u);
  EXPECT_EQ(p.requested_columns, 3u + 2 + 3 + 2 + 1);
  ASSERT_EQ(p.views.size(), 5u);
  EXPECT_EQ(p.views[0].columns, (std::vector<std::uint16_t>{0, 1, 2}));
  EXPECT_TRUE(p.views[0].prefix);
  EXPECT_FALSE(p.views[0].identity);  // the plan has 5 columns: its window rows are wider
  EXPECT_EQ(p.views[1].columns, (std::vector<std::uint16_t>{2, 0}));
  EXPECT_EQ(p.views[2].columns, (std::vector<std::uint16_t>{3, 1, 4}));
  EXPECT_EQ(p.views[4].columns, (std::vector<std::uint16_t>{3}));
  for (const auto& v : p.views) EXPECT_EQ(v.scaling, ViewScaling::Pipeline);
  EXPECT_EQ(p.views[1].group, p.views[3].group);
  EXPECT_NE(p.views[1].group, p.views[2].group);
  EXPECT_EQ(p.groups, 4u);
}

TEST(FeaturePlan, AModelThatIsThePlanReadsItInPlace) {
  const FeatureSpec pipeline = spec_of(kMid + kSpread);
  const FeaturePlan p = plan_features(pipeline, {model(nullptr), model(&pipeline, true)});
  EXPECT_TRUE(p.views[0].identity);
  EXPECT_TRUE(p.views[1].identity);
  EXPECT_EQ(p.groups, 1u);
}

TEST(FeaturePlan, ScalingIsThePlansWhenEqualElseTheModelsOwnFromTheRawValues) {
  const FeatureSpec pipeline = spec_of(kMid + kSpread, fixed("[100.0, 2.0]", "[10.0, 4.0]"));
  const FeatureSpec same = spec_of(kSpread + kMid, fixed("[2.0, 100.0]", "[4.0, 10.0]"));
  const FeatureSpec other = spec_of(kSpread + kMid, fixed("[1.0, 100.0]", "[4.0, 10.0]"));
  const FeatureSpec none = spec_of(kSpread + kImb);
  const FeaturePlan p = plan_features(pipeline, {model(&same), model(&other), model(&none)});
  EXPECT_EQ(p.views[0].scaling, ViewScaling::Pipeline);
  EXPECT_EQ(p.views[1].scaling, ViewScaling::Own);
  EXPECT_TRUE(p.views[1].standardize);
  EXPECT_EQ(p.views[2].scaling, ViewScaling::Own);
  EXPECT_FALSE(p.views[2].standardize);
  // The column "none" adds to a fixed-scaled plan is left unscaled there.
  ASSERT_EQ(p.spec.standardize.mean.size(), 3u);
  EXPECT_EQ(p.spec.standardize.mean[2], 0.0);
  EXPECT_EQ(p.spec.standardize.scale[2], 1.0);

  // The gathers, on an update of the plan's pipeline: raw 105, 6, 0.5; model input as the plan
  // scales it (0.5, 1.0, 0.5).
  const double raw[3] = {105.0, 6.0, 0.5};
  const float z[3] = {0.5f, 1.0f, 0.5f};
  FeatureUpdate u;
  u.values = raw;
  u.model_input = z;
  float out[2];
  p.views[0].gather_current(u, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 0.5f);
  p.views[1].gather_current(u, out);
  EXPECT_EQ(out[0], static_cast<float>((6.0 - 1.0) / 4.0));
  EXPECT_EQ(out[1], static_cast<float>((105.0 - 100.0) / 10.0));
  p.views[2].gather_current(u, out);
  EXPECT_EQ(out[0], 6.0f);
  EXPECT_EQ(out[1], 0.5f);
  // Rows: three rows of the plan's ring, 3 floats each.
  const float rows[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  float got[6];
  p.views[0].gather_rows(rows, 3, 3, got);
  EXPECT_EQ(std::vector<float>(got, got + 6), (std::vector<float>{2, 1, 5, 4, 8, 7}));
}

std::string refusal(const FeatureSpec& pipeline, const std::vector<ModelFeatures>& models) {
  try {
    plan_features(pipeline, models);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FeaturePlan, WhatThePlanCannotServeIsRefusedNamingTheModel) {
  const FeatureSpec pipeline = spec_of(kMid + kSpread, fixed("[100.0, 2.0]", "[10.0, 4.0]"));
  const FeatureSpec other = spec_of(kSpread + kMid, fixed("[1.0, 100.0]", "[4.0, 10.0]"));
  EXPECT_NE(refusal(pipeline, {model(&other, true)}).find("model 'm': a window or stream model reads standardized rows"),
            std::string::npos);
  const std::string rolling = "[standardize]\nmode = \"rolling\"\nwindow = 100\n";
  const FeatureSpec rolling_model = spec_of(kMid, rolling);
  EXPECT_NE(refusal(pipeline, {model(&rolling_model)}).find("rolling window other than the pipeline's"),
            std::string::npos);
  const FeatureSpec rolling_pipeline = spec_of(kMid, "[standardize]\nmode = \"rolling\"\nwindow = 200\n");
  EXPECT_NE(refusal(rolling_pipeline, {model(&rolling_model)}).find("rolling window other than the pipeline's"),
            std::string::npos);
  const FeatureSpec rolling_same = spec_of(kSpread + kMid, "[standardize]\nmode = \"rolling\"\nwindow = 200\n");
  EXPECT_EQ(refusal(rolling_pipeline, {model(&rolling_same, true)}), "");
  // 65 distinct features in all.
  std::string many;
  for (int i = 1; i <= 64; ++i) many += "[[feature]]\nkind = \"log_return\"\nticks = " + std::to_string(i) + "\n";
  const FeatureSpec wide = spec_of(many);
  const FeatureSpec one_more = spec_of(kMid);
  EXPECT_NE(refusal(wide, {model(&one_more)}).find("more than 64 distinct features"), std::string::npos);
}

}  // namespace
}  // namespace tickinfer::features
