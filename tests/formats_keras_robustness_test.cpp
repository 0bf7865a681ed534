// Hostile and damaged model files must fail with tickinfer::Error, never crash or hang: truncated
// fixtures, flipped bytes in the JSON config, archives missing entries, and configs that describe
// what tickinfer cannot run. Runs under the ASan/UBSan preset to catch out-of-bounds reads.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/keras/keras_config.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_synthetic_weights.hpp"
#include "formats/model_file.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::formats {
namespace {

std::string fixtures_dir() {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  return env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures";
}

std::string read_fixture(const std::string& rel) {
  std::ifstream in(fixtures_dir() + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Loading must either succeed or throw tickinfer::Error; anything else fails the test.
bool loads(const std::string& bytes, const std::string& label) {
  try {
    load_model_bytes(bytes.data(), bytes.size(), label);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// --- a minimal writer/reader of STORED zip archives (what Python's zipfile writes) -------------

uint32_t crc32(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put16(std::string& o, uint32_t v) { o += char(v & 0xFF), o += char((v >> 8) & 0xFF); }
void put32(std::string& o, uint32_t v) { put16(o, v & 0xFFFF), put16(o, v >> 16); }
uint32_t get16(const std::string& s, size_t at) {
  return uint8_t(s[at]) | (uint32_t(uint8_t(s[at + 1])) << 8);
}
uint32_t get32(const std::string& s, size_t at) { return get16(s, at) | (get16(s, at + 2) << 16); }

using Entries = std::vector<std::pair<std::string, std::string>>;

std::string write_stored_zip(const Entries& entries) {
  std::string out, central;
  for (const auto& [name, data] : entries) {
    const uint32_t offset = static_cast<uint32_t>(out.size()), crc = crc32(data);
    const uint32_t size = static_cast<uint32_t>(data.size());
    put32(out, 0x04034b50), put16(out, 20), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0x21);
    put32(out, crc), put32(out, size), put32(out, size), put16(out, uint32_t(name.size())), put16(out, 0);
    out += name + data;
    put32(central, 0x02014b50), put16(central, 20), put16(central, 20), put16(central, 0);
    put16(central, 0), put16(central, 0), put16(central, 0x21), put32(central, crc), put32(central, size);
    put32(central, size), put16(central, uint32_t(name.size())), put16(central, 0), put16(central, 0);
    put16(central, 0), put16(central, 0), put32(central, 0), put32(central, offset);
    central += name;
  }
  const uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50), put16(out, 0), put16(out, 0), put16(out, uint32_t(entries.size()));
  put16(out, uint32_t(entries.size())), put32(out, uint32_t(central.size())), put32(out, cd_offset);
  put16(out, 0);
  return out;
}

// Reads the local headers of a stored archive written by Python (sizes in the local header).
Entries read_stored_zip(const std::string& z) {
  Entries entries;
  size_t at = 0;
  while (at + 30 <= z.size() && get32(z, at) == 0x04034b50) {
    const uint32_t method = get16(z, at + 8), size = get32(z, at + 18);
    const uint32_t name_len = get16(z, at + 26), extra_len = get16(z, at + 28);
    EXPECT_EQ(method, 0u) << "fixture archives are expected to be stored, not deflated";
    std::string name = z.substr(at + 30, name_len);
    size_t data_at = at + 30 + name_len + extra_len;
    entries.emplace_back(name, z.substr(data_at, size));
    at = data_at + size;
  }
  return entries;
}

std::string& entry(Entries& entries, const std::string& name) {
  for (auto& [n, data] : entries) {
    if (n == name) return data;
  }
  ADD_FAILURE() << "no entry " << name;
  static std::string none;
  return none;
}

const char* kKerasFixture = "lstm_stacked_k3/model.keras";
const char* kH5Fixture = "lstm_stacked_k2/model.h5";

TEST(KerasRobustness, RewrittenArchiveStillLoads) {
  // Guards the helpers below: an unmodified round trip through write_stored_zip must load.
  std::string original = read_fixture(kKerasFixture);
  ASSERT_FALSE(original.empty());
  Entries entries = read_stored_zip(original);
  ASSERT_GE(entries.size(), 3u);
  EXPECT_TRUE(loads(write_stored_zip(entries), "rewritten.keras"));
}

TEST(KerasRobustness, TruncatedFilesFailCleanly) {
  for (const char* rel : {kKerasFixture, kH5Fixture}) {
    std::string bytes = read_fixture(rel);
    ASSERT_GT(bytes.size(), 1000u) << rel;
    std::vector<size_t> cuts = {0, 1, 4, 8, 30, 100, 512, 2048};
    for (int k = 1; k < 16; ++k) cuts.push_back(bytes.size() * k / 16);
    cuts.push_back(bytes.size() - 1);
    for (size_t cut : cuts) {
      EXPECT_FALSE(loads(bytes.substr(0, cut), rel)) << rel << " truncated to " << cut << " bytes loaded";
    }
  }
}

TEST(KerasRobustness, ZipWithoutConfigJsonIsRejected) {
  Entries entries = read_stored_zip(read_fixture(kKerasFixture));
  Entries without;
  for (auto& e : entries) {
    if (e.first != "config.json") without.push_back(e);
  }
  std::string zip = write_stored_zip(without);
  try {
    load_model_bytes(zip.data(), zip.size(), "noconfig.keras");
    FAIL() << "loaded an archive without config.json";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(loads(write_stored_zip({}), "empty.keras"));
  EXPECT_FALSE(loads(write_stored_zip({{"config.json", "{}"}}), "only_config.keras"));
}

TEST(KerasRobustness, ArchiveWithoutWeightsIsRejected) {
  Entries entries = read_stored_zip(read_fixture(kKerasFixture));
  Entries without;
  for (auto& e : entries) {
    if (e.first != "model.weights.h5") without.push_back(e);
  }
  EXPECT_FALSE(loads(write_stored_zip(without), "noweights.keras"));
}

TEST(KerasRobustness, CorruptedStoredEntryFailsItsChecksum) {
  std::string bytes = read_fixture(kKerasFixture);
  size_t at = bytes.find("\"class_name\"");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] ^= 0x20;
  EXPECT_FALSE(loads(bytes, "crc.keras"));
}

TEST(KerasRobustness, FlippedBytesInConfigJsonFailCleanly) {
  Entries entries = read_stored_zip(read_fixture(kKerasFixture));
  const std::string config = entry(entries, "config.json");
  ASSERT_FALSE(config.empty());
  std::mt19937 rng(12345);  // fixed seed: failures are replayable
  int rejected = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::string damaged = config;
    const int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) {
      size_t pos = rng() % damaged.size();
      damaged[pos] = static_cast<char>(damaged[pos] ^ (1 << (rng() % 8)));
    }
    entry(entries, "config.json") = damaged;
    rejected += !loads(write_stored_zip(entries), "flipped.keras");
  }
  EXPECT_GT(rejected, 100) << "most random corruptions must be detected";
}

TEST(KerasRobustness, FlippedBytesInH5ModelConfigFailCleanly) {
  const std::string original = read_fixture(kH5Fixture);
  const size_t start = original.find("{\"class_name\"");
  ASSERT_NE(start, std::string::npos);
  const size_t len = original.find("}}", start) - start;
  std::mt19937 rng(777);
  for (int trial = 0; trial < 100; ++trial) {
    std::string damaged = original;
    size_t pos = start + rng() % len;
    damaged[pos] = static_cast<char>(damaged[pos] ^ (1 << (rng() % 8)));
    loads(damaged, "flipped.h5");  // must not crash; some flips (inside names) may still load
  }
}

TEST(KerasRobustness, BytesThatAreNoModelAreRejected) {
  EXPECT_FALSE(loads("", "empty"));
  EXPECT_FALSE(loads("PK", "short"));
  EXPECT_FALSE(loads(std::string("\x89HDF\r\n\x1a\n", 8), "hdf5-magic-only.h5"));
  EXPECT_FALSE(loads(std::string(4096, '\0'), "zeros"));
  try {
    load_model_file(fixtures_dir() + "/does-not-exist.keras");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does-not-exist.keras"), std::string::npos);
  }
}

// Edits a real config and expects the error to name the layer and the option.
void expect_config_error(const std::string& file, const std::string& from, const std::string& to,
                         const std::vector<std::string>& parts) {
  Entries entries = read_stored_zip(read_fixture(file));
  std::string& config = entry(entries, "config.json");
  size_t at = config.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  config.replace(at, from.size(), to);
  std::string zip = write_stored_zip(entries);
  try {
    load_model_bytes(zip.data(), zip.size(), "edited.keras");
    FAIL() << "loaded with " << to;
  } catch (const Error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(KerasRobustness, UnsupportedOptionsInRealConfigsNameLayerAndOption) {
  expect_config_error(kKerasFixture, "\"stateful\": false", "\"stateful\": true",
                      {"edited.keras: layer '", "(LSTM)", "stateful=true"});
  expect_config_error(kKerasFixture, "\"name\": \"float32\"", "\"name\": \"bfloat16\"", {"bfloat16"});
  expect_config_error(kKerasFixture, "\"class_name\": \"Dense\"", "\"class_name\": \"Conv3D\"",
                      {"(Conv3D)", "not supported"});
  // A supported class whose config lacks what it needs (a Dense's config under Conv2D's name).
  expect_config_error(kKerasFixture, "\"class_name\": \"Dense\"", "\"class_name\": \"Conv2D\"",
                      {"(Conv2D)", "missing 'filters'"});
}

// The multi-horizon DeepLOB-Attention: an LSTM's state outputs by index, Dot's options. What the
// graph cannot represent is refused naming the layer: an output index past the layer's outputs
// (a layer without return_state has one), Dot's normalize (cosine similarity), Dot contracting
// the batch axis.
TEST(KerasRobustness, MultiOutputReferencesAndDotOptionsAreChecked) {
  const char* f = "deeplob_attention_tiny_k3/model.keras";
  expect_config_error(f, "\"keras_history\": [\"lstm\", 0, 2]", "\"keras_history\": [\"lstm\", 0, 5]",
                      {"uses output 5 of layer 'lstm', which has 3 outputs"});
  expect_config_error(f, "\"return_state\": true", "\"return_state\": false",
                      {"of layer 'lstm', which has 1 output"});
  expect_config_error(f, "\"normalize\": false", "\"normalize\": true", {"(Dot)", "normalize=true"});
  expect_config_error(f, "\"axes\": 2", "\"axes\": 0", {"(Dot)", "batch axis"});
}

// DeepLOB calls its Dropout with training=True (Monte Carlo dropout); Keras 3 saves the flag in the
// call and model.predict() ignores it. The importer runs such a layer as predict() does (the
// reference test checks the outputs) and says so; on a layer that computes, the flag is refused.
TEST(KerasRobustness, TrainingTrueCallIsAcceptedOnlyOnInferenceNoOps) {
  const std::string bytes = read_fixture("deeplob_tiny_k3/model.keras");
  const Graph g = load_model_bytes(bytes.data(), bytes.size(), "deeplob.keras");
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("(Dropout) is called with training=True"), std::string::npos) << g.warnings[0];

  Entries entries = read_stored_zip(bytes);
  std::string& config = entry(entries, "config.json");
  nlohmann::json j = nlohmann::json::parse(config);
  bool edited = false;
  for (auto& layer : j["config"]["layers"]) {
    if (layer["class_name"] == "LSTM") {
      layer["inbound_nodes"][0]["kwargs"]["training"] = true;
      edited = true;
    }
  }
  ASSERT_TRUE(edited);
  config = j.dump();
  const std::string zip = write_stored_zip(entries);
  try {
    load_model_bytes(zip.data(), zip.size(), "edited.keras");
    FAIL() << "an LSTM called with training=True loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(LSTM)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("training=true call argument is not supported"), std::string::npos)
        << e.what();
  }
}

// MultiHeadAttention: each option and call argument the plans do not compute is refused by name;
// inputs handed over by keyword (query=, value=) load as the positional call does.
std::string with_layer(const std::string& bytes, const std::string& name,
                       const std::function<void(nlohmann::json&)>& edit) {
  Entries entries = read_stored_zip(bytes);
  std::string& config = entry(entries, "config.json");
  nlohmann::json j = nlohmann::json::parse(config);
  bool found = false;
  for (auto& layer : j["config"]["layers"]) {
    if (layer["config"]["name"] == name) {
      edit(layer);
      found = true;
    }
  }
  EXPECT_TRUE(found) << name;
  config = j.dump();
  return write_stored_zip(entries);
}

void expect_refused(const std::string& zip, const std::vector<std::string>& parts) {
  try {
    load_model_bytes(zip.data(), zip.size(), "edited.keras");
    FAIL() << "loaded; expected an error with " << parts.back();
  } catch (const Error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(KerasRobustness, AttentionOptionsThePlansDoNotComputeAreRefusedByName) {
  const std::string bytes = read_fixture("attention_k3/model.keras");
  using J = nlohmann::json;
  auto config = [&](const char* key, J value) {
    return with_layer(bytes, "self_attn", [&](J& l) { l["config"][key] = value; });
  };
  auto kwarg = [&](const char* key, J value) {
    return with_layer(bytes, "self_attn", [&](J& l) { l["inbound_nodes"][0]["kwargs"][key] = value; });
  };
  expect_refused(config("use_gate", true), {"'self_attn' (MultiHeadAttention)", "use_gate=true is not supported"});
  expect_refused(config("sliding_window", 0), {"(MultiHeadAttention)", "sliding_window"});
  expect_refused(config("attention_axes", J::array({2})), {"attention_axes=[2] is not supported"});
  expect_refused(config("output_shape", J::array({4, 2})), {"output_shape=[4,2] is not supported"});
  expect_refused(config("num_heads", 3), {"(MultiHeadAttention)", "query kernel has shape"});
  expect_refused(kwarg("return_attention_scores", true), {"return_attention_scores=true is not supported"});
  expect_refused(kwarg("training", true), {"(MultiHeadAttention)", "training=true call argument is not supported"});
  // A mask tensor (here the layer's own input) is a keyword input the importer does not take.
  const std::string masked = with_layer(bytes, "self_attn", [](J& l) {
    l["inbound_nodes"][0]["kwargs"]["attention_mask"] = l["inbound_nodes"][0]["args"][0];
  });
  expect_refused(masked, {"tensor keyword argument 'attention_mask' is not supported"});

  // query= and value= by keyword: the same graph as the positional call.
  const std::string by_keyword = with_layer(bytes, "self_attn", [](J& l) {
    J& call = l["inbound_nodes"][0];
    call["kwargs"]["query"] = call["args"][0];
    call["kwargs"]["value"] = call["args"][1];
    call["args"] = J::array();
  });
  const Graph positional = load_model_bytes(bytes.data(), bytes.size(), "attention.keras");
  const Graph keyword = load_model_bytes(by_keyword.data(), by_keyword.size(), "edited.keras");
  ASSERT_EQ(positional.nodes.size(), keyword.nodes.size());
  for (size_t i = 0; i < positional.nodes.size(); ++i) {
    EXPECT_EQ(positional.nodes[i].inputs, keyword.nodes[i].inputs) << positional.nodes[i].name;
    EXPECT_EQ(positional.nodes[i].causal_mask, keyword.nodes[i].causal_mask) << positional.nodes[i].name;
  }
}

// Keras 3 operations on functional tensors (keras.ops.pad, x + table, ...), saved as operation
// nodes with their arrays inline, and the padding and axis layers: what the plans do not compute
// is refused by name, and an array that does not broadcast is refused with both shapes.
TEST(KerasRobustness, OperationNodesAndLayoutLayersRefuseWhatThePlansDoNotCompute) {
  using J = nlohmann::json;
  const std::string ops = read_fixture("array_operations_k3/model.keras");
  expect_refused(with_layer(ops, "pad", [](J& l) { l["config"]["mode"] = "reflect"; }),
                 {"layer 'pad' (ops.Pad)", "mode='reflect' is not supported"});
  expect_refused(with_layer(ops, "pad", [](J& l) { l["inbound_nodes"][0]["kwargs"]["constant_values"] = 1.5; }),
                 {"(ops.Pad)", "constant_values=1.5 is not supported"});
  expect_refused(with_layer(ops, "pad", [](J& l) { l["config"]["pad_width"][0] = J::array({1, 0}); }),
                 {"(ops.Pad)", "padding the batch axis is not supported"});
  expect_refused(with_layer(ops, "add", [](J& l) {
                   l["inbound_nodes"][0]["args"][1]["config"]["value"] = J::array({J::array({1.0, 2.0})});
                 }),
                 {"(ops.Add)", "constant [1, 2] does not broadcast to [5, 4]"});
  expect_refused(with_layer(ops, "add", [](J& l) { l["inbound_nodes"][0]["args"][1]["config"]["dtype"] = "int32"; }),
                 {"(ops.Add)", "a int32 constant is not supported"});

  const std::string layout = read_fixture("layout_k3/model.keras");
  expect_refused(with_layer(layout, "permute", [](J& l) { l["config"]["dims"] = J::array({1, 1}); }),
                 {"'permute' (Permute)", "is not a permutation of the input's axes"});
  expect_refused(with_layer(layout, "time_distributed", [](J& l) { l["config"]["layer"]["class_name"] = "Conv1D"; }),
                 {"(TimeDistributed)", "wrapping Conv1D is not supported (only Dense"});
  expect_refused(with_layer(layout, "zero_padding1d", [](J& l) { l["config"]["padding"] = J::array({1, 2, 3}); }),
                 {"(ZeroPadding1D)", "must be an int or [before, after]"});
}

// DepthwiseConv2D and SeparableConv2D: the options the plans do not compute, refused by name.
TEST(KerasRobustness, DepthwiseOptionsThePlansDoNotComputeAreRefusedByName) {
  using J = nlohmann::json;
  const std::string bytes = read_fixture("depthwise_k3/model.keras");
  expect_refused(with_layer(bytes, "depthwise_conv2d", [](J& l) { l["config"]["data_format"] = "channels_first"; }),
                 {"'depthwise_conv2d' (DepthwiseConv2D)", "data_format='channels_first' is not supported"});
  expect_refused(with_layer(bytes, "depthwise_conv2d", [](J& l) { l["config"]["padding"] = "causal"; }),
                 {"(DepthwiseConv2D)", "padding='causal' is not supported"});
  expect_refused(with_layer(bytes, "separable_conv2d", [](J& l) { l["config"]["dilation_rate"] = J::array({2, 2}); }),
                 {"(SeparableConv2D)", "strides > 1 with dilation_rate > 1 is not supported"});
  expect_refused(with_layer(bytes, "separable_conv2d", [](J& l) { l["config"]["depth_multiplier"] = 3; }),
                 {"(SeparableConv2D)", "depthwise kernel has shape"});
}

// Keras 3 weight paths are numbered per class, not named after layers; Keras >= 3.6 writes the
// owning layer's name on each vars group, and a disagreement must stop the load rather than
// silently give a layer someone else's weights.
TEST(KerasRobustness, WeightGroupOwnerMismatchIsDetected) {
  Entries entries = read_stored_zip(read_fixture(kKerasFixture));
  std::string& config = entry(entries, "config.json");
  nlohmann::json j = nlohmann::json::parse(config);
  bool renamed = false;
  for (auto& layer : j["config"]["layers"]) {
    if (layer["class_name"] == "Dense" && !renamed) {
      layer["config"]["name"] = "renamed_dense";
      renamed = true;
    }
  }
  ASSERT_TRUE(renamed);
  config = j.dump();
  std::string zip = write_stored_zip(entries);
  try {
    load_model_bytes(zip.data(), zip.size(), "renamed.keras");
    FAIL() << "weights of another layer were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'renamed_dense' (Dense)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("belongs to layer"), std::string::npos) << e.what();
  }
}

// --- the config layer alone, with synthetic weights -------------------------------------------

Graph from_config(const std::string& text) {
  SyntheticWeightSource weights;
  return graph_from_keras_config(nlohmann::json::parse(text), weights, KerasDialect::Keras3, "cfg");
}

TEST(KerasConfig, Keras2SequentialWithBatchInputShapeOnFirstLayer) {
  Graph g = from_config(R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
      {"class_name": "Dense", "config": {"name": "d", "units": 3, "batch_input_shape": [null, 4],
       "activation": "relu", "dtype": "float32"}},
      {"class_name": "LeakyReLU", "config": {"name": "lr", "alpha": 0.25}}]}})");
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].kind, OpKind::Input);
  EXPECT_EQ(g.nodes[0].name, "d_input");
  EXPECT_EQ(g.nodes[0].shape, (Shape{4}));
  EXPECT_EQ(g.nodes[2].activation.kind, ActKind::LeakyRelu);
  EXPECT_FLOAT_EQ(g.nodes[2].activation.alpha, 0.25f);
  EXPECT_NO_THROW(infer_shapes(g));
}

TEST(KerasConfig, SingleTripleEndpointsAndKeras2InboundForm) {
  Graph g = from_config(R"({"class_name": "Functional", "config": {"name": "f",
      "layers": [
        {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4]}, "inbound_nodes": []},
        {"class_name": "Dense", "name": "d", "config": {"name": "d", "units": 4, "use_bias": false},
         "inbound_nodes": [[["x", 0, 0, {}]]]},
        {"class_name": "Add", "name": "a", "config": {"name": "a"}, "inbound_nodes": [[["x", 0, 0, {}], ["d", 0, 0, {}]]]}],
      "input_layers": ["x", 0, 0], "output_layers": ["a", 0, 0]}})");
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.inputs, (std::vector<int>{0}));
  EXPECT_EQ(g.outputs, (std::vector<int>{2}));
  EXPECT_EQ(g.nodes[2].inputs, (std::vector<int>{0, 1}));
  ASSERT_EQ(g.nodes[1].weights.size(), 2u);  // use_bias=false -> zero bias appended
  EXPECT_EQ(g.nodes[1].weights[1].data, std::vector<float>(4, 0.0f));
  EXPECT_NO_THROW(infer_shapes(g));
}

TEST(KerasConfig, RejectionsNameLayerClassAndOption) {
  struct Case {
    const char* layer;
    const char* message;
  } cases[] = {
      {R"({"class_name": "GRU", "config": {"name": "g", "units": 2, "time_major": true}})", "layer 'g' (GRU): time_major=true"},
      {R"({"class_name": "Bidirectional", "config": {"name": "b", "layer": {"class_name": "Dense", "config": {"name": "d", "units": 2}}}})",
       "layer 'b' (Bidirectional): the wrapped layer is Dense; Bidirectional is supported around LSTM and GRU"},
      {R"({"class_name": "Bidirectional", "config": {"name": "b", "merge_mode": "max", "layer": {"class_name": "GRU", "config": {"name": "g", "units": 2}}}})",
       "layer 'b' (Bidirectional): merge_mode='max' is not supported"},
      {R"({"class_name": "Bidirectional", "config": {"name": "b", "layer": {"class_name": "LSTM", "config": {"name": "l", "units": 2, "return_sequences": true}}, "backward_layer": {"class_name": "LSTM", "config": {"name": "r", "units": 2, "go_backwards": true}}}})",
       "layer 'b' (Bidirectional): the forward and backward layers disagree on return_sequences"},
      {R"({"class_name": "Bidirectional", "config": {"name": "b"}})", "layer 'b' (Bidirectional): has no wrapped layer"},
      {R"({"class_name": "Bidirectional", "config": {"name": "b", "merge_mode": null, "layer": {"class_name": "GRU", "config": {"name": "g", "units": 2}}}},
          {"class_name": "Dense", "config": {"name": "d", "units": 1}})",
       "layer 'b' (Bidirectional): merge_mode=None hands two tensors to the next layer"},
      {R"({"class_name": "Bidirectional", "config": {"name": "b", "layer": {"class_name": "GRU", "config": {"name": "g", "units": 2}}, "backward_layer": {"class_name": "GRU", "config": {"name": "r", "units": 2}}}})",
       "layer 'b' (Bidirectional): the forward and backward layers read the window the same way"},
      {R"({"class_name": "Bidirectional", "config": {"name": "b", "layer": {"class_name": "GRU", "config": {"name": "g", "units": 2, "stateful": true}}}})",
       "layer 'b' (Bidirectional): stateful=true"},
      {R"({"class_name": "Conv1D", "config": {"name": "c", "filters": 2, "kernel_size": 3, "groups": 2}})", "layer 'c' (Conv1D): groups=2"},
      {R"({"class_name": "Softmax", "config": {"name": "s", "axis": 1}})", "layer 's' (Softmax): axis=1"},
      {R"({"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "mish"}})", "activation 'mish'"},
      {R"({"class_name": "Dense", "config": {"name": "d", "units": 2, "dtype": "float64"}})", "'float64'"},
      {R"({"class_name": "Dense", "config": {"name": "d", "units": 2, "dtype": {"class_name": "DTypePolicy", "config": {"name": "mixed_float16"}}}})", "mixed_float16"},
      {R"({"class_name": "Sequential", "config": {"name": "inner", "layers": []}})", "layer 'inner' (Sequential): nested models"},
      {R"({"class_name": "Dense", "config": {"name": "d", "units": 1e30}})", "'units'"},
      {R"({"class_name": "MaxPooling1D", "config": {"name": "p", "padding": "causal"}})", "padding='causal'"},
  };
  for (const Case& c : cases) {
    std::string text = std::string(R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"name": "in", "batch_shape": [null, 6, 4]}}, )") +
                       c.layer + "]}}";
    try {
      from_config(text);
      ADD_FAILURE() << "accepted " << c.layer;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("cfg: ", 0), 0u) << e.what();
    }
  }
}

TEST(KerasConfig, DeepNestingIsRejectedBeforeParsingFinishes) {
  std::string deep(100000, '[');
  EXPECT_THROW(parse_json_bounded(deep, "deep"), Error);
}

TEST(KerasConfig, SnakeCaseMatchesKerasNaming) {
  EXPECT_EQ(keras_snake_case("Conv1D"), "conv1d");
  EXPECT_EQ(keras_snake_case("BatchNormalization"), "batch_normalization");
  EXPECT_EQ(keras_snake_case("LeakyReLU"), "leaky_re_lu");
  EXPECT_EQ(keras_snake_case("ReLU"), "re_lu");
  EXPECT_EQ(keras_snake_case("GlobalAveragePooling1D"), "global_average_pooling1d");
  EXPECT_EQ(keras_snake_case("InputLayer"), "input_layer");
  EXPECT_EQ(keras_snake_case("XMLHttp2Request"), "xml_http2_request");
}

}  // namespace
}  // namespace tickinfer::formats
