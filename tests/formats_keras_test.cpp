// Loads every fixture model of tests/fixtures/manifest.json (written by the committed fixture
// script from real TensorFlow/Keras) and checks what the importer must get right: the layer
// classes and activations the manifest lists, that the graph passes infer_shapes, that its input
// and output shapes match the arrays TensorFlow produced, and that the Keras 3 and Keras 2 files of
// the same architecture import to the same op sequence. Unsupported fixtures must fail with the
// listed message parts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::formats {
namespace {

std::string fixtures_dir() {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  return env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures";
}

nlohmann::json manifest() {
  std::ifstream in(fixtures_dir() + "/manifest.json");
  if (!in) return nlohmann::json();
  return nlohmann::json::parse(in);
}

// "relu" -> the ActivationSpec the importer must produce for a manifest activation tag.
bool activation_matches(const ActivationSpec& a, const std::string& tag) {
  if (tag == "linear") return a.kind == ActKind::Linear;
  if (tag == "relu") return a.kind == ActKind::Relu && a.max_value == std::numeric_limits<float>::infinity();
  if (tag == "relu6") return a.kind == ActKind::Relu && a.max_value == 6.0f;
  if (tag == "leaky_relu") return a.kind == ActKind::LeakyRelu && a.alpha == 0.2f;
  if (tag == "elu") return a.kind == ActKind::Elu && a.alpha == 1.0f;
  if (tag == "selu") return a.kind == ActKind::Selu;
  if (tag == "sigmoid") return a.kind == ActKind::Sigmoid;
  if (tag == "hard_sigmoid") return a.kind == ActKind::HardSigmoid;
  if (tag == "tanh") return a.kind == ActKind::Tanh;
  if (tag == "softmax") return a.kind == ActKind::Softmax;
  if (tag == "gelu") return a.kind == ActKind::Gelu;
  if (tag == "swish" || tag == "silu") return a.kind == ActKind::Swish;
  if (tag == "softplus") return a.kind == ActKind::Softplus;
  if (tag == "softsign") return a.kind == ActKind::Softsign;
  if (tag == "exponential") return a.kind == ActKind::Exponential;
  return false;
}

Shape unbatched(const std::vector<int64_t>& batched) {
  Shape s;
  for (size_t i = 1; i < batched.size(); ++i) s.push_back(static_cast<int>(batched[i]));
  return s;
}

class ManifestCase : public ::testing::TestWithParam<nlohmann::json> {};

TEST(KerasFixtures, ManifestIsPresent) {
  nlohmann::json m = manifest();
  ASSERT_TRUE(m.is_object()) << "missing " << fixtures_dir() << "/manifest.json";
  EXPECT_GE(m["cases"].size(), 10u);
}

TEST_P(ManifestCase, ImportsWithTheListedLayersAndShapes) {
  const nlohmann::json& c = GetParam();
  const std::string file = fixtures_dir() + "/" + c["file"].get<std::string>();
  Graph g = load_model_file(file);
  EXPECT_EQ(g.source_format, c["format"] == "keras3" ? "keras3" : "keras2-h5");
  if (c.contains("window_length")) {  // a None time axis is imported as -1
    for (int idx : g.inputs) {
      ASSERT_EQ(g.nodes[idx].shape.at(0), -1) << file;
      g.nodes[idx].shape[0] = c["window_length"].get<int>();
    }
  }
  ASSERT_NO_THROW(infer_shapes(g)) << file;

  // Every class the manifest lists appears, and nothing else; "Class:act" names a fused or layer
  // activation that some node of that class must carry.
  std::set<std::string> listed, present;
  for (const auto& tag : c["layers"]) {
    std::string t = tag.get<std::string>();
    size_t colon = t.find(':');
    listed.insert(t.substr(0, colon));
    if (colon == std::string::npos) continue;
    const std::string cls = t.substr(0, colon), act = t.substr(colon + 1);
    bool found = false;
    for (const Node& n : g.nodes) {
      found |= n.keras_class == cls && (activation_matches(n.activation, act));
    }
    EXPECT_TRUE(found) << file << ": no " << cls << " node with activation " << act;
  }
  for (const Node& n : g.nodes) {
    // Keras 3 operations (keras.ops.pad, x + table) are nodes of the config but not layers:
    // model.layers, which the list comes from, leaves them out, and so does this comparison.
    const bool operation = n.keras_class.rfind("ops.", 0) == 0 || n.kind == OpKind::Constant;
    if (n.kind != OpKind::Input && !operation) present.insert(n.keras_class);
    for (const Weight& w : n.weights) {
      EXPECT_EQ(static_cast<int64_t>(w.data.size()), shape_size(w.shape)) << n.name;
    }
    for (int i : n.inputs) EXPECT_LT(i, &n - g.nodes.data()) << "not topological: " << n.name;
  }
  EXPECT_EQ(listed, present) << file;

  // Input/output shapes agree with the arrays TensorFlow read and wrote (batch axis dropped).
  ASSERT_EQ(g.inputs.size(), c["inputs"].size());
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    NpyArray x = read_npy(fixtures_dir() + "/" + c["inputs"][i].get<std::string>());
    EXPECT_EQ(g.nodes[g.inputs[i]].shape, unbatched(x.shape)) << file << " input " << i;
  }
  ASSERT_EQ(g.outputs.size(), c["outputs"].size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    NpyArray y = read_npy(fixtures_dir() + "/" + c["outputs"][i].get<std::string>());
    EXPECT_EQ(g.nodes[g.outputs[i]].shape, unbatched(y.shape)) << file << " output " << i;
  }
}

std::vector<nlohmann::json> cases(const char* key) {
  nlohmann::json m = manifest();
  std::vector<nlohmann::json> out;
  if (m.is_object() && m.contains(key)) {
    for (const auto& c : m[key]) out.push_back(c);
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<nlohmann::json>& info) {
  return info.param["name"].get<std::string>();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ManifestCase, ::testing::ValuesIn(cases("cases")), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ManifestCase);

// The fixture script builds each architecture twice (<name>_k3 with Keras 3, <name>_k2 with
// tf_keras); both must import to the same ops, activations and weight shapes.
TEST(KerasFixtures, Keras3AndKeras2FilesOfOneArchitectureImportAlike) {
  std::map<std::string, std::map<std::string, std::string>> by_arch;
  for (const auto& c : cases("cases")) {
    std::string name = c["name"];
    if (name.size() < 3) continue;
    by_arch[name.substr(0, name.size() - 3)][name.substr(name.size() - 2)] = c["file"];
  }
  int compared = 0;
  for (const auto& [arch, files] : by_arch) {
    if (!files.count("k2") || !files.count("k3")) continue;
    Graph g3 = load_model_file(fixtures_dir() + "/" + files.at("k3"));
    Graph g2 = load_model_file(fixtures_dir() + "/" + files.at("k2"));
    ASSERT_EQ(g3.nodes.size(), g2.nodes.size()) << arch;
    for (size_t i = 0; i < g3.nodes.size(); ++i) {
      const Node &a = g3.nodes[i], &b = g2.nodes[i];
      EXPECT_EQ(a.kind, b.kind) << arch << " node " << i;
      EXPECT_EQ(a.inputs, b.inputs) << arch << " node " << i;
      // hard_sigmoid legitimately differs between Keras 2 and 3; everything else must match.
      if (a.activation.kind != ActKind::HardSigmoid) {
        EXPECT_EQ(a.activation, b.activation) << arch << " " << a.name;
      }
      ASSERT_EQ(a.weights.size(), b.weights.size()) << arch << " " << a.name;
      for (size_t w = 0; w < a.weights.size(); ++w) EXPECT_EQ(a.weights[w].shape, b.weights[w].shape);
    }
    ++compared;
  }
  EXPECT_GE(compared, 5);
}

TEST(KerasFixtures, HardSigmoidFollowsTheWritersKerasVersion) {
  for (const char* name : {"activation_layers_k3", "activation_layers_k2"}) {
    std::string dir = fixtures_dir() + "/" + name;
    std::string file = dir + (std::string(name).back() == '3' ? "/model.keras" : "/model.h5");
    if (!std::ifstream(file)) GTEST_SKIP() << file;
    Graph g = load_model_file(file);
    bool seen = false;
    for (const Node& n : g.nodes) {
      if (n.activation.kind != ActKind::HardSigmoid) continue;
      seen = true;
      EXPECT_FLOAT_EQ(n.activation.alpha, std::string(name).back() == '3' ? 1.0f / 6.0f : 0.2f);
      EXPECT_FLOAT_EQ(n.activation.beta, 0.5f);
    }
    EXPECT_TRUE(seen) << name;
  }
}

class UnsupportedCase : public ::testing::TestWithParam<nlohmann::json> {};

TEST_P(UnsupportedCase, FailsNamingLayerAndOption) {
  const nlohmann::json& c = GetParam();
  const std::string file = fixtures_dir() + "/" + c["file"].get<std::string>();
  try {
    Graph g = load_model_file(file);
    FAIL() << file << " loaded but should have been rejected";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& part : c["expect_error_contains"]) {
      EXPECT_NE(msg.find(part.get<std::string>()), std::string::npos) << msg;
    }
    EXPECT_NE(msg.find(file), std::string::npos) << "message must name the file: " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, UnsupportedCase, ::testing::ValuesIn(cases("unsupported")), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(UnsupportedCase);

}  // namespace
}  // namespace tickinfer::formats
