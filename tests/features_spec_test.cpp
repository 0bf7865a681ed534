// The feature specification parser: what a valid file yields, and that every mistake is refused
// with the line it sits on.
#include <gtest/gtest.h>

#include <string>

#include "features/feature_spec.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

const char* kValid = R"([feature_set]
name = "mm"
instruments = [7, 42]
bar_ns = 500_000_000
gap_limit = 4
invalid_policy = "hold_last"
window = 16

[standardize]
mode = "rolling"
window = 300
refit_every = 50
drift_threshold = 0.5

[[feature]]
kind = "log_return"
ticks = 5

[[feature]]
kind = "realized_vol"
window_ns = 2_000_000_000

[[feature]]
kind = "ewma_vol"
alpha = 0.25
name = "vol_fast"

[[feature]]
kind = "trade_imbalance"
trades = 20
)";

// The message of the Error thrown by parsing `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_feature_spec(text, "t.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string with_feature(const std::string& body) {
  return "[feature_set]\ninstruments = [1]\n\n[[feature]]\n" + body;
}

TEST(FeaturesSpec, ParsesEveryKeyInOrder) {
  const FeatureSpec s = parse_feature_spec(kValid, "t.toml");
  EXPECT_EQ(s.name, "mm");
  EXPECT_EQ(s.instruments, (std::vector<std::uint32_t>{7, 42}));
  EXPECT_EQ(s.bar_ns, 500'000'000);
  EXPECT_EQ(s.gap_limit, 4);
  EXPECT_EQ(s.invalid_policy, InvalidPolicy::HoldLast);
  EXPECT_EQ(s.window, 16);
  EXPECT_EQ(s.standardize.mode, StandardizeMode::Rolling);
  EXPECT_EQ(s.standardize.window, 300);
  EXPECT_EQ(s.standardize.refit_every, 50);
  EXPECT_DOUBLE_EQ(s.standardize.drift_threshold, 0.5);
  ASSERT_EQ(s.width(), 4u);
  EXPECT_EQ(s.features[0].kind, FeatureKind::LogReturn);
  EXPECT_EQ(s.features[0].count, 5);
  EXPECT_EQ(s.features[0].name, "log_return_5");
  EXPECT_EQ(s.features[1].window_ns, 2'000'000'000);
  EXPECT_EQ(s.features[1].capacity, 4096);  // default ring for time windows
  EXPECT_EQ(s.features[2].name, "vol_fast");
  EXPECT_DOUBLE_EQ(s.features[2].alpha, 0.25);
  EXPECT_EQ(s.features[3].count, 20);
}

TEST(FeaturesSpec, DefaultsAreDocumented) {
  const FeatureSpec s = parse_feature_spec(with_feature("kind = \"mid\"\n"));
  EXPECT_EQ(s.gap_limit, 10);
  EXPECT_EQ(s.bar_ns, 1'000'000'000);
  EXPECT_EQ(s.invalid_policy, InvalidPolicy::Drop);
  EXPECT_EQ(s.standardize.mode, StandardizeMode::None);
  EXPECT_EQ(s.standardize.window, 500);
}

TEST(FeaturesSpec, FeatureSetIdDependsOnOrderAndParameters) {
  const FeatureSpec a = parse_feature_spec(kValid);
  std::string swapped = kValid;
  swapped.replace(swapped.find("ticks = 5"), 9, "ticks = 6");
  EXPECT_NE(a.feature_set_id(), parse_feature_spec(swapped).feature_set_id());
  EXPECT_EQ(a.feature_set_id(), parse_feature_spec(kValid).feature_set_id());
  const FeatureSpec b = parse_feature_spec(with_feature("kind = \"mid\"\n[[feature]]\nkind = \"spread_bps\"\n"));
  const FeatureSpec c = parse_feature_spec(with_feature("kind = \"spread_bps\"\n[[feature]]\nkind = \"mid\"\n"));
  EXPECT_NE(b.feature_set_id(), c.feature_set_id());
}

TEST(FeaturesSpec, UnknownFeatureKindNamesLineAndKnownKinds) {
  const std::string e = error_of(with_feature("kind = \"midd\"\n"));
  EXPECT_NE(e.find("spec 't.toml': line 5: unknown feature kind 'midd'"), std::string::npos) << e;
  EXPECT_NE(e.find("microprice"), std::string::npos) << e;
}

TEST(FeaturesSpec, UnknownParameterIsRefusedWithItsLine) {
  const std::string e = error_of(with_feature("kind = \"log_return\"\nticks = 3\ntick = 4\n"));
  EXPECT_NE(e.find("line 7: feature 'log_return': unknown parameter 'tick'"), std::string::npos) << e;
  EXPECT_NE(error_of(with_feature("kind = \"mid\"\nticks = 3\n")).find("unknown parameter 'ticks'"), std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"vwap_deviation\"\nticks = 3\n")).find("use 'trades'"), std::string::npos);
}

TEST(FeaturesSpec, BadValuesAreRefused) {
  EXPECT_NE(error_of(with_feature("kind = \"log_return\"\nticks = 0\n")).find("line 6: feature 'log_return' ticks = 0 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"log_return\"\nticks = \"5\"\n")).find("must be an integer"), std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"ewma_mean\"\nalpha = 1.5\n")).find("alpha must be in (0, 1]"), std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"ewma_mean\"\nalpha = nan\n")).find("must be finite"), std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"ewma_mean\"\n")).find("missing parameter 'alpha'"), std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"realized_vol\"\nticks = 3\nwindow_ns = 10\n")).find("exactly one of"),
            std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"tick_rate\"\n")).find("missing parameter 'window_ns'"), std::string::npos);
  EXPECT_NE(error_of("[feature_set]\ninstruments = [1]\ninvalid_policy = \"skip\"\n[[feature]]\nkind = \"mid\"\n")
                .find("line 3: feature_set.invalid_policy = 'skip'"),
            std::string::npos);
  EXPECT_NE(error_of("[feature_set]\ninstruments = [1, 1]\n[[feature]]\nkind = \"mid\"\n").find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("[feature_set]\ninstruments = [1]\ngap_limt = 3\n[[feature]]\nkind = \"mid\"\n")
                .find("line 3: unknown key 'feature_set.gap_limt'"),
            std::string::npos);
}

TEST(FeaturesSpec, StructuralMistakesAreRefused) {
  EXPECT_NE(error_of("[[feature]]\nkind = \"mid\"\n").find("missing [feature_set]"), std::string::npos);
  EXPECT_NE(error_of("[feature_set]\ninstruments = [1]\n").find("no [[feature]] entries"), std::string::npos);
  EXPECT_NE(error_of("[feature_set]\n[[feature]]\nkind = \"mid\"\n").find("instruments is required"), std::string::npos);
  EXPECT_NE(error_of(with_feature("kind = \"mid\"\n[[feature]]\nkind = \"mid\"\n")).find("duplicate feature name 'mid'"),
            std::string::npos);
  EXPECT_NE(error_of("[feature_set\n").find("spec 't.toml': line 1:"), std::string::npos);
  EXPECT_NE(error_of("[features]\n").find("unknown section 'features'"), std::string::npos);
  const std::string fixed = "[feature_set]\ninstruments = [1]\n[standardize]\nmode = \"fixed\"\nmean = [0.0]\nscale = [1.0, 2.0]\n"
                            "[[feature]]\nkind = \"mid\"\n";
  EXPECT_NE(error_of(fixed).find("one value per feature (1)"), std::string::npos);
  const std::string zero = "[feature_set]\ninstruments = [1]\n[standardize]\nmode = \"fixed\"\nmean = [0.0]\nscale = [0.0]\n"
                           "[[feature]]\nkind = \"mid\"\n";
  EXPECT_NE(error_of(zero).find("scale values must be > 0"), std::string::npos);
}

TEST(FeaturesSpec, NonAsciiBytesAreRefusedWithTheirLine) {
  EXPECT_NE(error_of("[feature_set]\ninstruments = [1] # \xC2\xB5s\n").find("line 2: byte 0xC2 is not allowed"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("\xef\xbb\x88o/>")).find("line 1: byte 0xEF"), std::string::npos);
}

TEST(FeaturesSpec, MissingFileIsAnError) {
  EXPECT_THROW(load_feature_spec("/nonexistent/spec.toml"), Error);
}

}  // namespace
}  // namespace tickinfer::features
