// A model's feature signature: the same ordered features run; any difference in order, parameters
// or width is refused with an error naming the position.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "features/signature.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

const std::string kHead = "[feature_set]\ninstruments = [1]\n";
const std::string kA = "[[feature]]\nkind = \"log_return\"\nticks = 5\n";
const std::string kB = "[[feature]]\nkind = \"spread_bps\"\n";
const std::string kC = "[[feature]]\nkind = \"log_return\"\nticks = 6\nname = \"log_return_5\"\n";

std::string error_of(const FeatureSpec& pipeline, const FeatureSpec& model) {
  try {
    check_signature(pipeline, model, "m.keras");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FeaturesSignature, SameFeaturesInTheSameOrderAreAccepted) {
  const auto a = parse_feature_spec(kHead + kA + kB);
  // Names, policies and standardization are not part of the input vector's definition.
  const auto b = parse_feature_spec("[feature_set]\ninstruments = [3, 4]\ngap_limit = 2\n" + kA + kB);
  EXPECT_EQ(error_of(a, b), "");
  EXPECT_NO_THROW(check_input_width(a, 2, "m.keras"));
}

TEST(FeaturesSignature, OrderMismatchIsRefused) {
  const std::string e = error_of(parse_feature_spec(kHead + kB + kA), parse_feature_spec(kHead + kA + kB));
  EXPECT_NE(e.find("model 'm.keras': feature signature mismatch at position 0: the model was trained on log_return(n=5)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("the pipeline computes spread_bps()"), std::string::npos) << e;
}

TEST(FeaturesSignature, ParameterMismatchIsRefusedEvenUnderTheSameName) {
  const std::string e = error_of(parse_feature_spec(kHead + kC), parse_feature_spec(kHead + kA));
  EXPECT_NE(e.find("position 0"), std::string::npos) << e;
  EXPECT_NE(e.find("log_return(n=6)"), std::string::npos) << e;
}

TEST(FeaturesSignature, WidthMismatchIsRefused) {
  const std::string e = error_of(parse_feature_spec(kHead + kA), parse_feature_spec(kHead + kA + kB));
  EXPECT_NE(e.find("trained on 2 features, the pipeline computes 1"), std::string::npos) << e;
  try {
    check_input_width(parse_feature_spec(kHead + kA), 3, "m.keras");
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("input width 3 does not match the 1 features"), std::string::npos);
  }
}

TEST(FeaturesSignature, TravelsBesideTheModelFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("tickinfer_sig_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model.keras").string();
  EXPECT_EQ(signature_path_for(model), (dir / "features.toml").string());
  EXPECT_THROW(load_model_signature(model), Error);  // no signature: refused, not assumed
  std::ofstream(dir / "features.toml") << kHead << kA << kB;
  const FeatureSpec sig = load_model_signature(model);
  EXPECT_EQ(sig.width(), 2u);
  EXPECT_EQ(error_of(parse_feature_spec(kHead + kA + kB), sig), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tickinfer::features
