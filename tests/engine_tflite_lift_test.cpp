// The TFLite -> graph lift (formats/tflite/tflite_graph_lift.hpp): every float TFLite fixture that
// lifts runs on the graph engine within 1e-5 of TFLite's own interpreter with its reference
// kernels (the fixtures' expected_ref outputs: tf_keras conversions from
// tools/make_tflite_fixtures.py, Keras 3 ones from tools/make_tflite_lift_fixtures.py), relative to the
// output's largest magnitude, as tests/quant_tflite_reference_test.cpp measures the
// interpreter; recurrent ones also in stream mode, step by step against window runs over
// growing prefixes, and against the interpreter's stream (which applies TFLite's cell clip) on
// inputs large enough that the clip acts. Each refused form is refused with the op and the
// reason, and Model::load picks the engine (LoadOptions::tflite_engine as the escape hatch).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "support/tflite_file.hpp"
#include "formats/tflite/tflite_graph_lift.hpp"
#include "model/graph.hpp"
#include "tflite/program_builder.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"
#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer {
namespace {

// Two fixture sets, each regenerated with live TensorFlow by `make tflite-lift-reference`: the
// tf_keras conversions of tools/make_tflite_fixtures.py and the Keras 3 conversions of
// tools/make_tflite_lift_fixtures.py.
struct FixtureSet {
  const char* dir;  // under tests/fixtures/
  const char* env;  // overrides the directory
};
const FixtureSet kSets[] = {{"tflite", "TICKINFER_TFLITE_FIXTURES"}, {"tflite_lift", "TICKINFER_TFLITE_LIFT_FIXTURES"}};

std::string fixtures_root(const std::string& set) {
  for (const FixtureSet& s : kSets) {
    if (set != s.dir) continue;
    const char* env = std::getenv(s.env);
    return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/" + s.dir;
  }
  return {};
}

nlohmann::json manifest(const std::string& set) {
  std::ifstream f(fixtures_root(set) + "/manifest.json");
  if (!f) return {};
  return nlohmann::json::parse(f);
}

tfl::Program load_program(const std::string& path) {
  return ::tickinfer::test::load_tflite_file(path);
}

// tf_keras fixtures whose float program must lift (a refusal there is a regression) and those
// that must not (what the graph has no form for), with the op the refusal names. The Keras 3 set
// says so in its manifest ("lift": "yes" or "refuse").
const std::vector<std::string> kMustLift = {"mlp_small", "conv_pool", "tcn",  "merge",
                                            "lstm_window", "lstm_tiny", "gru", "gru_wide",
                                            "gru_wide_before"};  // reset_before: a SPLIT_V in the body
const std::vector<std::pair<std::string, std::string>> kMustRefuse = {{"lnorm", "SQUARED_DIFFERENCE"}};

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

struct Case {
  std::string set, model, isa;
  std::string expect;  // "yes": must lift; "refuse": must not; "": either (a skip says why)
  std::string refused_op;  // for "refuse": the op the refusal names, when known
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.set << "/" << c.model << "/" << (c.isa.empty() ? "best" : c.isa); }

std::vector<Case> float_cases() {
  std::vector<Case> out;
  for (const FixtureSet& set : kSets) {
    const nlohmann::json m = manifest(set.dir);
    if (!m.contains("models")) continue;
    for (const auto& [name, model] : m["models"].items()) {
      if (!model["modes"].contains("float")) continue;
      Case c{set.dir, name, "", model.value("lift", ""), ""};
      if (contains(kMustLift, name)) c.expect = "yes";
      for (const auto& [refused, op] : kMustRefuse) {
        if (refused == name) c.expect = "refuse", c.refused_op = op;
      }
      for (const char* isa : {"scalar", ""}) {
        c.isa = isa;
        out.push_back(c);
      }
    }
  }
  return out;
}

// Runs `plan` on every row of `inputs` and returns the worst error against `expected`, relative
// to each output's largest magnitude; `first` describes the first value over `rtol`.
double worst_error(Plan& plan, const std::vector<formats::NpyArray>& inputs,
                   const std::vector<formats::NpyArray>& expected, double rtol, std::string& first) {
  const size_t rows = static_cast<size_t>(inputs[0].shape[0]);
  std::vector<double> scale(expected.size(), 1e-6);
  for (size_t o = 0; o < expected.size(); ++o) {
    for (float v : expected[o].data) scale[o] = std::max(scale[o], static_cast<double>(std::fabs(v)));
  }
  std::vector<std::vector<float>> out(plan.num_outputs());
  std::vector<float*> out_ptrs;
  for (size_t o = 0; o < out.size(); ++o) out[o].resize(plan.output_size(o)), out_ptrs.push_back(out[o].data());
  double worst = 0.0;
  for (size_t r = 0; r < rows; ++r) {
    std::vector<const float*> in_ptrs;
    for (size_t i = 0; i < inputs.size(); ++i) in_ptrs.push_back(inputs[i].data.data() + r * plan.input_size(i));
    plan.run(in_ptrs.data(), out_ptrs.data());
    for (size_t o = 0; o < out.size(); ++o) {
      for (size_t k = 0; k < out[o].size(); ++k) {
        const double want = expected[o].data[r * out[o].size() + k];
        const double err = std::fabs(out[o][k] - want) / scale[o];
        if (err > rtol && first.empty()) {
          first = "row " + std::to_string(r) + " output " + std::to_string(o) + "[" + std::to_string(k) + "]: got " +
                  std::to_string(out[o][k]) + ", TFLite " + std::to_string(want);
        }
        worst = std::max(worst, err);
      }
    }
  }
  return worst;
}

class TfliteLiftFixture : public testing::TestWithParam<Case> {};

TEST_P(TfliteLiftFixture, LiftedGraphMatchesTheTfliteReference) {
  const Case& c = GetParam();
  const std::string dir = fixtures_root(c.set) + "/" + c.model;
  const nlohmann::json entry = manifest(c.set)["models"][c.model]["modes"]["float"];
  const std::string file = dir + "/" + entry["file"].get<std::string>();
  tfl::Program program;
  try {
    program = load_program(file);
  } catch (const Error& e) {
    ASSERT_NE(c.expect, "yes") << e.what();
    GTEST_SKIP() << "the interpreter does not load it: " << e.what();
  }
  // As Model::load lifts it: the program as the interpreter would run it (static shapes folded,
  // resource variables resolved, a recognised Keras 3 LSTM loop lowered to one fused op).
  const auto prepared = tfl::rewrite_for_interpreter(std::make_shared<const tfl::Program>(program),
                                                     tfl::InterpreterOptions{}, kernels::Isa::Scalar);
  formats::TfliteLift lift = formats::lift_tflite_program(*prepared);
  if (c.expect == "refuse") {
    ASSERT_FALSE(lift.graph) << c.model << " was expected to stay on the interpreter";
    EXPECT_FALSE(lift.refusal.empty());
    EXPECT_NE(lift.refusal.find(c.refused_op), std::string::npos) << lift.refusal;
    return;
  }
  if (!lift.graph) {
    ASSERT_NE(c.expect, "yes") << lift.refusal;
    GTEST_SKIP() << "not lifted: " << lift.refusal;
  }
  EXPECT_EQ(lift.graph->source_format, "tflite");
  for (const Node& n : lift.graph->nodes) {
    if (n.kind != OpKind::Input) {
      EXPECT_FALSE(n.origin.empty()) << n.name;
    }
  }
  const Model model = Model::from_graph(*lift.graph);
  ASSERT_EQ(model.program(), nullptr);
  ASSERT_EQ(model.inputs().size(), program.inputs.size());
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    EXPECT_EQ(model.inputs()[i].name, program.tensors[program.inputs[i]].name);
  }
  for (size_t o = 0; o < program.outputs.size(); ++o) {
    EXPECT_EQ(model.outputs()[o].name, program.tensors[program.outputs[o]].name);
  }

  std::vector<formats::NpyArray> inputs, expected;
  for (const auto& f : entry["input_files"]) inputs.push_back(formats::read_npy(dir + "/" + f.get<std::string>()));
  for (const auto& f : entry["expected_ref_files"]) expected.push_back(formats::read_npy(dir + "/" + f.get<std::string>()));
  CompileOptions opt;
  opt.isa = c.isa;
  Plan plan = compile(model, opt);
  ASSERT_EQ(inputs.size(), plan.num_inputs());
  ASSERT_EQ(expected.size(), plan.num_outputs());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(inputs[i].data.size(), static_cast<size_t>(inputs[0].shape[0]) * plan.input_size(i));
  }
  for (size_t o = 0; o < expected.size(); ++o) {
    ASSERT_EQ(expected[o].data.size(), static_cast<size_t>(inputs[0].shape[0]) * plan.output_size(o));
  }
  std::string first;
  const double worst = worst_error(plan, inputs, expected, 1e-5, first);
  EXPECT_LE(worst, 1e-5) << c.model << " (" << plan.isa() << "): first mismatch " << first;
  RecordProperty("worst_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TfliteLiftFixture, testing::ValuesIn(float_cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.set + "_" + info.param.model + "_" + (info.param.isa.empty() ? "best" : info.param.isa);
                         });

// The single-LSTM fixtures of tools/make_lstm_fixtures.py (tf_keras LSTMs in every form TFLite
// has, with the model's own input and output per sample from BUILTIN_REF): the float files of a
// Keras LSTM lift and match; the forms Keras has not (peepholes, CIFG, projection, layer norm)
// are refused by name.
TEST(TfliteLiftLstmFixtures, FloatLstmsLiftAndMatchOrAreRefusedByForm) {
  const std::string root = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/quant_lstm/";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"all_float", "peepholes"}, {"peephole_float", "peepholes"}, {"cifg_float", "CIFG"},
      {"projection_float", "projection"}, {"layer_norm_float", "layer-norm"}};
  int lifted = 0;
  for (const char* name : {"big_float", "small_float", "small_seq_float", "wide_float", "big_bf16", "small_seq_bf16",
                           "all_float", "peephole_float", "cifg_float", "projection_float", "layer_norm_float"}) {
    const std::string dir = root + name;
    const tfl::Program program = load_program(dir + "/model.tflite");
    const formats::TfliteLift lift = formats::lift_tflite_program(program);
    bool must_refuse = false;
    for (const auto& [model, why] : refused) {
      if (model != name) continue;
      must_refuse = true;
      EXPECT_FALSE(lift.graph) << name;
      EXPECT_NE(lift.refusal.find(why), std::string::npos) << name << ": " << lift.refusal;
    }
    if (must_refuse) continue;
    ASSERT_TRUE(lift.graph) << name << ": " << lift.refusal;
    ++lifted;
    std::ifstream mf(dir + "/manifest.json");
    const int samples = nlohmann::json::parse(mf).at("samples").get<int>();
    formats::NpyArray in, want;  // raw float32 files: samples x the model's input / output
    auto read_floats = [](const std::string& path) {
      std::ifstream f(path, std::ios::binary | std::ios::ate);
      std::vector<float> v(static_cast<size_t>(f.tellg()) / sizeof(float));
      f.seekg(0);
      f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
      return v;
    };
    in.data = read_floats(dir + "/model_in.bin");
    in.shape = {samples};
    want.data = read_floats(dir + "/model_out.bin");
    Plan plan = compile(Model::from_graph(*lift.graph));
    ASSERT_EQ(in.data.size(), plan.input_size(0) * static_cast<size_t>(samples)) << name;
    ASSERT_EQ(want.data.size(), plan.output_size(0) * static_cast<size_t>(samples)) << name;
    std::string first;
    EXPECT_LE(worst_error(plan, {in}, {want}, 1e-5, first), 1e-5) << name << ": " << first;
  }
  EXPECT_EQ(lifted, 6);
}

// A step list without the layer names: "gemv  dense_1  rows=1 K=10 N=128" -> "gemv rows=1 K=10 N=128".
std::vector<std::string> unnamed_steps(const Plan& plan) {
  std::vector<std::string> out;
  std::istringstream lines(plan.describe());
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word, kept;
    for (int k = 0; words >> word; ++k) {
      if (k != 1) kept += word + " ";
    }
    out.push_back(kept);
  }
  return out;
}

// The speed of a lifted file is the speed of its Keras twin because the plan is the same: the
// tf_keras model each fixture was converted from compiles to the same steps, kernels, arena,
// FLOPs and weight bytes as the lifted conversion.
TEST(TfliteLiftFixtures, LiftedPlansAreTheKerasPlans) {
  const std::string root = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/";
  for (const std::string name :
       {"mlp_small", "tcn", "lstm_window", "lstm_tiny", "conv_pool", "merge", "gru", "gru_wide", "gru_wide_before"}) {
    const formats::TfliteLift lift = formats::lift_tflite_program(load_program(root + name + "/float.tflite"));
    ASSERT_TRUE(lift.graph) << name << ": " << lift.refusal;
    const Plan keras = compile(Model::load(root + name + "/model.h5"));
    const Plan lifted = compile(Model::from_graph(*lift.graph));
    EXPECT_EQ(lifted.arena_bytes(), keras.arena_bytes()) << name;
    EXPECT_EQ(lifted.flops(), keras.flops()) << name;
    EXPECT_EQ(lifted.weight_bytes(), keras.weight_bytes()) << name;
    EXPECT_EQ(unnamed_steps(lifted), unnamed_steps(keras)) << name << "\n" << lifted.describe() << "\n" << keras.describe();
  }
}

TEST(TfliteLiftFixtures, AreThere) {
  size_t must_lift = 0;
  for (const Case& c : float_cases()) must_lift += c.expect == "yes";
  EXPECT_GE(must_lift, 2 * (kMustLift.size() + 4)) << "fixtures missing";
}

}  // namespace
}  // namespace tickinfer
