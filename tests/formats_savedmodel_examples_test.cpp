// The lowering of classify / regress signatures (formats/savedmodel/tf_lower_example.cpp): on the committed
// fixture tests/fixtures/serving/classify/1 (tools/make_classify_fixtures.py), ParseExampleV2's
// dense features become the Graph's inputs with TensorFlow's keys, shapes and defaults, the
// tiled label constant becomes the classes, and a VarLenFeature is refused by name while the
// model and its other signatures still load. The numbers these graphs compute are checked
// against TensorFlow in serving_classify_test.
#include <gtest/gtest.h>

#include <algorithm>

#include "formats/savedmodel/saved_model.hpp"
#include "support/serving_repo.hpp"
#include "tickinfer/error.hpp"

using tickinfer::formats::SavedModelExampleSignature;

namespace {

tickinfer::formats::SavedModel load(bool examples) {
  tickinfer::formats::SavedModelOptions o;
  o.example_signatures = examples;
  return tickinfer::formats::load_saved_model(tickinfer::testing::fixture_path("serving/classify/1"), o);
}

const SavedModelExampleSignature& find(const std::vector<SavedModelExampleSignature>& all, const std::string& key) {
  auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.key == key; });
  if (it == all.end()) throw std::runtime_error("no example signature " + key);
  return *it;
}

TEST(SavedModelExamples, ParseExampleFeaturesBecomeTheGraphInputs) {
  const auto m = load(true);
  EXPECT_EQ(m.info.signature_key, "serving_default");
  ASSERT_EQ(m.example_signatures.size(), 3u);  // classify, regress, sparse (not serving_default)
  const auto& c = find(m.example_signatures, "classify");
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.features.size(), 2u);  // ParseExampleV2's dense keys, sorted as TF sorts them
  EXPECT_EQ(c.features[0].key, "w");
  EXPECT_EQ(c.features[0].shape, std::vector<int64_t>{2});
  ASSERT_TRUE(c.features[0].has_default);
  EXPECT_EQ(c.features[0].default_value, (std::vector<float>{0.5f, -1.0f}));
  EXPECT_EQ(c.features[1].key, "x");
  EXPECT_EQ(c.features[1].shape, std::vector<int64_t>{10});
  EXPECT_FALSE(c.features[1].has_default);
  ASSERT_EQ(c.graph.inputs.size(), 2u);
  EXPECT_EQ(c.graph.nodes[static_cast<size_t>(c.graph.inputs[1])].name, "x");
  EXPECT_EQ(c.graph.output_names, std::vector<std::string>{"scores"});
  ASSERT_EQ(c.constant_outputs.size(), 1u);
  EXPECT_EQ(c.constant_outputs[0].key, "classes");
  EXPECT_EQ(c.constant_outputs[0].shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(c.constant_outputs[0].values, (std::vector<std::string>{"down", "flat", "up"}));

  const auto& r = find(m.example_signatures, "regress");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.graph.output_names, std::vector<std::string>{"outputs"});
  EXPECT_TRUE(r.constant_outputs.empty());

  const auto& s = find(m.example_signatures, "sparse");
  EXPECT_NE(s.error.find("sparse feature(s) 'x' (tf.io.VarLenFeature / SparseFeature) are not supported"), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("ParseExampleV2"), std::string::npos) << s.error;
}

TEST(SavedModelExamples, OnlyAskedForAndThePredictGraphIsUnchanged) {
  const auto plain = load(false);
  EXPECT_TRUE(plain.example_signatures.empty());
  const auto with = load(true);
  EXPECT_EQ(plain.graph.nodes.size(), with.graph.nodes.size());
  EXPECT_EQ(plain.graph.output_names, with.graph.output_names);
  // A string-input signature as the served one is still refused, as before.
  tickinfer::formats::SavedModelOptions o;
  o.signature = "classify";
  try {
    tickinfer::formats::load_saved_model(tickinfer::testing::fixture_path("serving/classify/1"), o);
    FAIL() << "loaded a string-input signature as the predict graph";
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("only float32 is supported"), std::string::npos) << e.what();
  }
}

}  // namespace
