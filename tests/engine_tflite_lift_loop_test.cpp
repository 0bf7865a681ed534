// Keras 3 LSTMs and GRUs converted to TFLite arrive as WHILE loops over cond/body subgraphs; the
// interpreter's rewrite recognises an LSTM loop as one fused LSTM (tflite/rewrite/lstm_loop.cpp), a GRU
// loop is matched by tflite/rewrite/gru_loop.cpp, and the lift (formats/tflite/tflite_lift_recurrent.cpp) takes
// either onto the graph engine, so such a file runs on the same plan as the Keras model. Every
// float LSTM and GRU case of the Keras 3 TFLite fixtures (tools/make_tflite_k3_fixtures.py,
// expected outputs from TFLite's interpreter; GRU reset_after both ways) must lift and agree
// within 1e-5 of the output's largest magnitude, window mode, and run in stream mode fed step by
// step like the window over the same row; the stateful LSTM (state in resource variables) stays
// on the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "formats/npy.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

std::string root() {
  const char* env = std::getenv("TICKINFER_TFLITE_K3_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite_k3";
}

nlohmann::json manifest() {
  std::ifstream f(root() + "/manifest.json");
  return f ? nlohmann::json::parse(f) : nlohmann::json{};
}

struct Case {
  std::string model, variant;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << "/" << c.variant; }

std::vector<Case> float_cases(bool lifting) {
  std::vector<Case> out;
  const auto m = manifest();
  if (!m.contains("models")) return out;
  // A stateful LSTM (CALL_ONCE initialising resource variables the loop reads) keeps its state
  // across invokes the graph cannot hold: it stays on the interpreter.
  for (const auto& [model, entry] : m["models"].items()) {
    for (const auto& [variant, c] : entry["cases"].items()) {
      if (!c.contains("file") || variant.find("float") == std::string::npos) continue;
      const bool stateful = c.value("stateful", false);
      const bool recurrent = model.rfind("lstm", 0) == 0 || model.rfind("gru", 0) == 0;
      if (recurrent && (lifting ? !stateful : stateful)) out.push_back({model, variant});
    }
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.model + "_" + info.param.variant; }

class LiftedRecurrentLoop : public ::testing::TestWithParam<Case> {};

TEST_P(LiftedRecurrentLoop, RunsOnTheGraphEngineAndMatchesTflite) {
  const Case& c = GetParam();
  const auto entry = manifest()["models"][c.model]["cases"][c.variant];
  const std::string dir = root() + "/" + c.model + "/";
  const Model model = Model::load(dir + entry["file"].get<std::string>());
  ASSERT_EQ(model.program(), nullptr) << c.model << " " << c.variant << " stayed on the interpreter";
  bool from_loop = false;
  for (const auto& n : model.graph().nodes) from_loop = from_loop || n.origin.find("WHILE") != std::string::npos;
  EXPECT_TRUE(from_loop) << "no node came from the WHILE loop";

  const auto x = formats::read_npy(dir + entry["input_files"][0].get<std::string>());
  const auto want = formats::read_npy(dir + entry["expected_files"][0].get<std::string>());
  Plan plan = compile(model);
  const size_t in = plan.input_size(0), out = plan.output_size(0);
  const size_t rows = x.data.size() / in;
  ASSERT_EQ(want.data.size(), rows * out);
  double scale = 1e-6;
  for (float v : want.data) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  std::vector<float> y(out);
  double worst = 0;
  for (size_t r = 0; r < rows; ++r) {
    plan.run(x.data.data() + r * in, y.data());
    for (size_t k = 0; k < out; ++k) worst = std::max(worst, std::fabs(y[k] - want.data[r * out + k]) / scale);
  }
  EXPECT_LE(worst, 1e-5) << c.model << " " << c.variant;
}

// Stream mode on the lifted plan: fed a row's T steps one at a time, the same output as the
// window plan over that row. A model that reads the window backwards (go_backwards,
// Bidirectional: REVERSE_V2 before a loop) is refused by that op's name instead.
TEST_P(LiftedRecurrentLoop, StreamsLikeTheWindowOverEachPrefix) {
  const Case& c = GetParam();
  const auto entry = manifest()["models"][c.model]["cases"][c.variant];
  const std::string dir = root() + "/" + c.model + "/";
  const Model model = Model::load(dir + entry["file"].get<std::string>());
  ASSERT_EQ(model.program(), nullptr);
  Plan window = compile(model);
  const Shape& shape = window.input_shape(0);  // [T, F]
  ASSERT_EQ(shape.size(), 2u);
  const int T = shape[0], F = shape[1];
  CompileOptions so;
  so.mode = RecurrentMode::Stream;
  if (c.model.find("bidirectional") != std::string::npos || c.model.find("go_backwards") != std::string::npos) {
    try {
      (void)compile(model, so);
      ADD_FAILURE() << "stream mode compiled a model that reads the window backwards";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("(REVERSE_V2) goes backwards in time"), std::string::npos) << e.what();
    }
    return;
  }
  Plan stream = compile(model, so);
  if (stream.output_size(0) != window.output_size(0)) GTEST_SKIP() << "returns sequences: window output is [T, units]";
  const auto x = formats::read_npy(dir + entry["input_files"][0].get<std::string>());
  const size_t out = window.output_size(0);
  std::vector<float> ys(out), yw(out);
  stream.reset_state();
  double worst = 0, scale = 1e-6;
  for (int t = 0; t < T; ++t) {
    stream.run(x.data.data() + static_cast<size_t>(t) * F, ys.data());
    for (float v : ys) ASSERT_TRUE(std::isfinite(v));
  }
  window.run(x.data.data(), yw.data());
  for (size_t k = 0; k < out; ++k) {
    scale = std::max(scale, static_cast<double>(std::fabs(yw[k])));
    worst = std::max(worst, static_cast<double>(std::fabs(ys[k] - yw[k])));
  }
  EXPECT_LE(worst / scale, 1e-5) << "stream after " << T << " steps vs the window";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LiftedRecurrentLoop, ::testing::ValuesIn(float_cases(true)), case_name);

class UnrecognisedLoop : public ::testing::TestWithParam<Case> {};

TEST_P(UnrecognisedLoop, StaysOnTheInterpreter) {
  const Case& c = GetParam();
  const auto entry = manifest()["models"][c.model]["cases"][c.variant];
  const Model model = Model::load(root() + "/" + c.model + "/" + entry["file"].get<std::string>());
  EXPECT_NE(model.program(), nullptr) << c.model << " " << c.variant << " lifted, but its state lives in resource variables";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, UnrecognisedLoop, ::testing::ValuesIn(float_cases(false)), case_name);

// The multi-horizon DeepLOBs (tools/make_tflite_k3_fixtures.py): an encoder LSTM's WHILE (over
// five loop variables where only its state is read) hands its final h and c to a decoder LSTM's
// WHILE per horizon. The float files lift, each such loop one LSTM node computing h and c
// together (return_state), the decoders reading their states as inputs, and agree with TFLite's
// interpreter; stream mode is refused by name (the decoder restarts from the encoder each run).
std::vector<Case> multi_horizon_cases() {
  std::vector<Case> out;
  const auto m = manifest();
  if (!m.contains("models")) return out;
  for (const auto& [model, entry] : m["models"].items()) {
    if (model.rfind("deeplob_", 0) != 0) continue;
    for (const auto& [variant, c] : entry["cases"].items()) {
      if (c.contains("file") && variant.find("float") != std::string::npos) out.push_back({model, variant});
    }
  }
  return out;
}

class MultiHorizonLoops : public ::testing::TestWithParam<Case> {};

TEST_P(MultiHorizonLoops, LiftWithTheirStatesAndMatchTflite) {
  const Case& c = GetParam();
  const auto entry = manifest()["models"][c.model]["cases"][c.variant];
  const std::string dir = root() + "/" + c.model + "/";
  const Model model = Model::load(dir + entry["file"].get<std::string>());
  ASSERT_EQ(model.program(), nullptr) << c.model << " " << c.variant << " stayed on the interpreter";
  int stateful = 0, seeded = 0;
  for (const auto& n : model.graph().nodes) {
    if (n.kind != OpKind::LSTM) continue;
    stateful += n.return_state;
    seeded += n.inputs.size() == 3;
  }
  EXPECT_EQ(stateful, 4) << "the encoder and three decoder calls, each computing h and c once";
  EXPECT_EQ(seeded, 3) << "each decoder call starts from the previous call's state";

  std::vector<formats::NpyArray> xs;
  for (const auto& f : entry["input_files"]) xs.push_back(formats::read_npy(dir + f.get<std::string>()));
  const auto want = formats::read_npy(dir + entry["expected_files"][0].get<std::string>());
  Plan plan = compile(model);
  ASSERT_EQ(xs.size(), 2u);
  const size_t out = plan.output_size(0), rows = want.data.size() / out;
  double scale = 1e-6, worst = 0;
  for (float v : want.data) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  std::vector<float> y(out);
  for (size_t r = 0; r < rows; ++r) {
    const float* in[2] = {xs[0].data.data() + r * plan.input_size(0), xs[1].data.data() + r * plan.input_size(1)};
    float* outs[1] = {y.data()};
    plan.run(in, outs);
    for (size_t k = 0; k < out; ++k) worst = std::max(worst, std::fabs(y[k] - want.data[r * out + k]) / scale);
  }
  EXPECT_LE(worst, 1e-5) << c.model << " " << c.variant;

  CompileOptions so;
  so.mode = RecurrentMode::Stream;
  try {
    compile(model, so);
    ADD_FAILURE() << "stream mode compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("window mode"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MultiHorizonLoops, ::testing::ValuesIn(multi_horizon_cases()), case_name);

TEST(LiftedRecurrentLoop, FixturesArePresent) {
  const auto lifting = float_cases(true);
  const auto count = [&](const char* prefix) {
    return std::count_if(lifting.begin(), lifting.end(), [&](const Case& c) { return c.model.rfind(prefix, 0) == 0; });
  };
  EXPECT_GE(count("lstm"), 4) << "expected the Keras 3 LSTM fixtures under " << root();
  EXPECT_GE(count("gru"), 4) << "expected the Keras 3 GRU fixtures (reset_after both ways) under " << root();
  EXPECT_GE(float_cases(false).size(), 1u);
  EXPECT_GE(multi_horizon_cases().size(), 4u) << "expected the multi-horizon DeepLOB fixtures under " << root();
}

}  // namespace
}  // namespace tickinfer
