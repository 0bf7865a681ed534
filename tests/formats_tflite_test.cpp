// The TFLite loader reads the committed converter outputs (tests/fixtures/tflite, written by
// tools/make_tflite_fixtures.py) exactly as the TFLite interpreter does: every tensor's name,
// type, shape and quantization, and every op with its operands, compared with what the
// interpreter itself reported into manifest.json (get_tensor_details / _get_ops_details).
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/tflite/tflite_file.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

std::string fixture_dir() { return std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite"; }

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

nlohmann::json manifest() {
  std::ifstream f(fixture_dir() + "/manifest.json");
  EXPECT_TRUE(f.good());
  return nlohmann::json::parse(f);
}

struct Loaded {
  std::string model, mode;
  nlohmann::json expect;
  tfl::Program program;
};

// Every model/mode the converter produced, loaded (a load failure fails the test).
std::vector<Loaded> load_all(bool skip_unsupported = true) {
  std::vector<Loaded> out;
  const auto m = manifest();
  for (const auto& [model, entry] : m.at("models").items()) {
    for (const auto& [mode, e] : entry.at("modes").items()) {
      if (!e.contains("file")) continue;  // the converter refused this one (recorded there)
      // The GRUs are WHILE loops over subgraphs (the manifest lists the main graph's tensors only).
      if (skip_unsupported && model.rfind("gru", 0) == 0) continue;
      const std::string path = fixture_dir() + "/" + model + "/" + e.at("file").get<std::string>();
      const auto bytes = read_file(path);
      try {
        out.push_back({model, mode, e, formats::load_tflite(bytes.data(), bytes.size(), path)});
      } catch (const Error& err) {
        ADD_FAILURE() << err.what();
      }
    }
  }
  return out;
}

TEST(TfliteFixtures, EveryBenchAndCoverageModelLoadsInEveryMode) {
  const auto all = load_all();
  // 7 supported models x float/dynamic/int8.
  EXPECT_EQ(all.size(), 21u);
}

TEST(TfliteFixtures, TensorsMatchTheInterpreter) {
  for (const auto& l : load_all()) {
    SCOPED_TRACE(l.model + "/" + l.mode);
    const auto& tensors = l.expect.at("tensors");
    ASSERT_EQ(l.program.tensors.size(), tensors.size());
    for (const auto& t : tensors) {
      const auto i = t.at("index").get<size_t>();
      const tfl::Tensor& x = l.program.tensors.at(i);
      SCOPED_TRACE("tensor " + std::to_string(i) + " " + x.name);
      EXPECT_EQ(x.name, t.at("name").get<std::string>());
      EXPECT_EQ(std::string(tfl::dtype_name(x.type)), t.at("dtype").get<std::string>());
      EXPECT_EQ(x.shape, t.at("shape").get<std::vector<int>>());
      const auto scales = t.at("scales").get<std::vector<float>>();
      EXPECT_EQ(x.quant.scale, scales);
      EXPECT_EQ(x.quant.zero_point, t.at("zero_points").get<std::vector<int64_t>>());
      if (scales.size() > 1) {
        EXPECT_EQ(x.quant.axis, t.at("quantized_dimension").get<int>());
      }
    }
  }
}

TEST(TfliteFixtures, OpsMatchTheInterpreter) {
  for (const auto& l : load_all()) {
    SCOPED_TRACE(l.model + "/" + l.mode);
    const auto& ops = l.expect.at("ops");
    ASSERT_EQ(l.program.ops.size(), ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const tfl::Op& op = l.program.ops[i];
      EXPECT_EQ(std::string(tfl::op_name(op.code)), ops[i].at("op").get<std::string>()) << "op " << i;
      EXPECT_EQ(op.inputs, ops[i].at("inputs").get<std::vector<int>>()) << "op " << i;
      EXPECT_EQ(op.outputs, ops[i].at("outputs").get<std::vector<int>>()) << "op " << i;
      EXPECT_EQ(op.label, l.program.tensors.at(static_cast<size_t>(op.outputs.at(0))).name);
    }
  }
}

TEST(TfliteFixtures, InputsAndOutputsMatchTheInterpreter) {
  for (const auto& l : load_all()) {
    SCOPED_TRACE(l.model + "/" + l.mode);
    std::vector<int> ins, outs;
    for (const auto& d : l.expect.at("inputs")) ins.push_back(d.at("index").get<int>());
    for (const auto& d : l.expect.at("outputs")) outs.push_back(d.at("index").get<int>());
    EXPECT_EQ(l.program.inputs, ins);
    EXPECT_EQ(l.program.outputs, outs);
    for (int t : ins) EXPECT_FALSE(l.program.tensors[static_cast<size_t>(t)].is_constant());
  }
}

// Facts from the schema (interop.md section 5), checked on the converter's LSTMs: inputs 18 and
// 19 are the output and cell state, variable tensors without data.
TEST(TfliteFixtures, LstmStateTensorsAreVariables) {
  int lstms = 0;
  for (const auto& l : load_all()) {
    for (const auto& op : l.program.ops) {
      if (op.code != tfl::OpCode::SequenceLstm) continue;
      ++lstms;
      ASSERT_EQ(op.inputs.size(), 24u) << l.model << "/" << l.mode;
      for (size_t k : {18u, 19u}) {
        const tfl::Tensor& s = l.program.tensors.at(static_cast<size_t>(op.inputs[k]));
        EXPECT_TRUE(s.is_variable) << l.model << "/" << l.mode << " input " << k;
        EXPECT_FALSE(s.is_constant());
      }
      EXPECT_EQ(op.options.activation, tfl::FusedActivation::Tanh);
      EXPECT_FALSE(op.options.time_major);
    }
  }
  EXPECT_EQ(lstms, 9);  // lstm_window 1 + lstm_tiny 2, in three modes
}

// Precision follows the tensor types: int8 activations, float activations with int8 weights
// (dynamic range; the converter leaves weights under 1024 elements float), or float.
TEST(TfliteFixtures, PrecisionFollowsTheTensorTypes) {
  int dynamic = 0;
  for (const auto& l : load_all()) {
    for (const auto& op : l.program.ops) {
      if (op.code != tfl::OpCode::FullyConnected) continue;
      const int filter = op.inputs.at(1);
      const bool int8_filter = l.expect.at("tensors").at(static_cast<size_t>(filter)).at("dtype") == "int8";
      auto expected = tfl::Precision::F32;
      if (l.mode == "int8") {
        expected = tfl::Precision::Int8;
      } else if (int8_filter) {
        expected = tfl::Precision::Int8Dynamic;
        ++dynamic;
      }
      EXPECT_EQ(op.precision, expected) << l.model << "/" << l.mode << " " << op.label;
    }
  }
  EXPECT_GT(dynamic, 0);
}

TEST(TfliteFixtures, KerasGruLoadsAsAWhileLoopOverItsSubgraphs) {
  // The converter has no fused GRU op: the layer is a WHILE over a cond and a body subgraph,
  // whose tensors follow the main graph's in Program::tensors.
  const std::string path = fixture_dir() + "/gru/float.tflite";
  const auto bytes = read_file(path);
  const tfl::Program p = formats::load_tflite(bytes.data(), bytes.size(), "gru.tflite");
  ASSERT_GE(p.subgraphs.size(), 2u);
  const auto w = std::find_if(p.ops.begin(), p.ops.end(), [](const tfl::Op& op) { return op.code == tfl::OpCode::While; });
  ASSERT_NE(w, p.ops.end());
  const tfl::Subgraph* cond = p.subgraph(w->options.cond_subgraph);
  const tfl::Subgraph* body = p.subgraph(w->options.body_subgraph);
  ASSERT_TRUE(cond && body);
  EXPECT_EQ(body->inputs.size(), w->inputs.size());
  EXPECT_EQ(cond->outputs.size(), 1u);
  EXPECT_EQ(p.tensors[static_cast<size_t>(cond->outputs[0])].type, tfl::DType::Bool);
  // Subgraph tensors come after the main graph's.
  for (int t : body->inputs) EXPECT_GT(t, *std::max_element(p.inputs.begin(), p.inputs.end()));
}

}  // namespace
}  // namespace tickinfer
