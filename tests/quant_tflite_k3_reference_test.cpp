// TFLite files as the current converter writes them from Keras 3 (tools/make_tflite_k3_fixtures.py:
// WHILE loops for LSTM/GRU, CALL_ONCE + resource variables for a stateful LSTM, SHAPE/PACK and
// SPACE_TO_BATCH_ND for Flatten and dilated Conv1D, BATCH_MATMUL; from_keras_model and
// from_saved_model; float, dynamic-range and int8), run by tickinfer's interpreter against the
// TFLite interpreter's outputs (BUILTIN_REF, or the default resolver where the manifest says so):
//   int8 bit-identical; dynamic within 1e-4 and float within 1e-5 of the reference, relative to the
//   output's largest magnitude. A stateful model's rows are one stream (state kept between
//   invokes, as the reference ran them); every other row starts from zero state.
// Both the plain reference kernels ("scalar") and the fastest kernel set of this CPU run, each with
// recognised LSTM loops lowered onto the fused LSTM op and with every loop run op by op; a
// lowered dynamic-range loop also equals the op-by-op run bit for bit. The
// committed fixtures are tests/fixtures/tflite_k3; `make tflite-k3-reference` regenerates them
// with the TensorFlow installed now and points TICKINFER_TFLITE_K3_FIXTURES there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "support/tflite_file.hpp"
#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

std::string fixtures_root() {
  const char* env = std::getenv("TICKINFER_TFLITE_K3_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite_k3";
}

nlohmann::json manifest() {
  std::ifstream f(fixtures_root() + "/manifest.json");
  if (!f) return {};
  return nlohmann::json::parse(f);
}

std::shared_ptr<const tfl::Program> load(const std::string& path) {
  return ::tickinfer::test::load_shared_tflite_file(path);
}

struct Case {
  std::string model, name, isa;
  bool lower = true;  // InterpreterOptions::lower_recurrent_loops
};
std::string label(const Case& c) {
  return c.model + "_" + c.name + "_" + (c.isa.empty() ? "best" : c.isa) + (c.lower ? "" : "_loop");
}
void PrintTo(const Case& c, std::ostream* os) { *os << label(c); }

std::vector<Case> cases() {
  std::vector<Case> out;
  const nlohmann::json m = manifest();
  if (!m.contains("models")) return out;
  for (const auto& [model, entry] : m["models"].items()) {
    for (const auto& [name, c] : entry["cases"].items()) {
      if (!c.contains("expected_files")) continue;  // the converter or the reference refused it
      for (const char* isa : {"scalar", ""}) {
        for (bool lower : {true, false}) out.push_back({model, name, isa, lower});
      }
    }
  }
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) { return label(info.param); }

void set_input(tfl::Interpreter& interp, size_t i, const formats::NpyArray& rows, size_t r) {
  const tfl::Tensor& t = interp.input_tensor(i);
  const size_t n = static_cast<size_t>(tfl::element_count(t.shape));
  ASSERT_GE(rows.data.size(), (r + 1) * n);
  const float* src = rows.data.data() + r * n;
  void* dst = interp.input_data(i);
  if (t.type == tfl::DType::I8) {
    for (size_t k = 0; k < n; ++k) static_cast<int8_t*>(dst)[k] = static_cast<int8_t>(src[k]);
  } else {
    ASSERT_EQ(t.type, tfl::DType::F32);
    std::memcpy(dst, src, n * sizeof(float));
  }
}

double output_value(const tfl::Interpreter& interp, size_t o, size_t k) {
  const tfl::Tensor& t = interp.output_tensor(o);
  return t.type == tfl::DType::I8 ? static_cast<const int8_t*>(interp.output_data(o))[k]
                                  : static_cast<const float*>(interp.output_data(o))[k];
}

class TfliteK3Reference : public testing::TestWithParam<Case> {};

TEST_P(TfliteK3Reference, MatchesTheTfliteInterpreter) {
  const Case& c = GetParam();
  const std::string dir = fixtures_root() + "/" + c.model;
  const nlohmann::json entry = manifest()["models"][c.model]["cases"][c.name];
  const std::string file = dir + "/" + entry["file"].get<std::string>();
  const bool stateful = entry.value("stateful", false);
  const bool int8 = c.name.find("int8") != std::string::npos;

  std::unique_ptr<tfl::Interpreter> interp;
  try {
    tfl::InterpreterOptions options;
    options.isa = c.isa;
    options.reset_variables_each_invoke = !stateful;
    options.lower_recurrent_loops = c.lower;
    interp = std::make_unique<tfl::Interpreter>(load(file), options);
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  std::vector<formats::NpyArray> inputs, expected;
  for (const auto& f : entry["input_files"]) inputs.push_back(formats::read_npy(dir + "/" + f.get<std::string>()));
  for (const auto& f : entry["expected_files"]) expected.push_back(formats::read_npy(dir + "/" + f.get<std::string>()));
  ASSERT_EQ(inputs.size(), interp->num_inputs());
  ASSERT_EQ(expected.size(), interp->num_outputs());
  const size_t rows = static_cast<size_t>(inputs[0].shape[0]);
  ASSERT_GE(rows, 1u);

  const double rtol = int8 ? 0.0 : (c.name.find("dynamic") != std::string::npos ? 1e-4 : 1e-5);
  std::vector<double> scale(expected.size(), 1e-6);
  for (size_t o = 0; o < expected.size(); ++o) {
    for (float v : expected[o].data) scale[o] = std::max(scale[o], static_cast<double>(std::fabs(v)));
  }
  size_t mismatches = 0;
  double worst = 0.0;
  std::string first;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < inputs.size(); ++i) set_input(*interp, i, inputs[i], r);
    interp->invoke();
    for (size_t o = 0; o < expected.size(); ++o) {
      const size_t n = static_cast<size_t>(tfl::element_count(interp->output_tensor(o).shape));
      ASSERT_EQ(expected[o].data.size(), rows * n);
      for (size_t k = 0; k < n; ++k) {
        const double want = expected[o].data[r * n + k], got = output_value(*interp, o, k);
        const double err = std::fabs(got - want) / (int8 ? 1.0 : scale[o]);
        worst = std::max(worst, err);
        if (!(err <= rtol) && mismatches++ == 0) {
          first = "row " + std::to_string(r) + " output " + std::to_string(o) + "[" + std::to_string(k) + "]: got " +
                  std::to_string(got) + ", TFLite " + std::to_string(want);
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << c.model << " " << c.name << " (" << interp->isa() << ", reference "
                            << entry.value("resolver", std::string("?")) << "): " << mismatches << " mismatching values over "
                            << rows << " rows; first: " << first << "; worst error " << worst;
  RecordProperty("worst_error", std::to_string(worst));
  // Every float Keras 3 LSTM loop is recognised and runs as the fused op.
  const bool float_lstm = c.model.rfind("lstm", 0) == 0 && c.name.find("float") != std::string::npos;
  const std::string plan = interp->describe();
  if (c.lower && float_lstm) {
    EXPECT_NE(plan.find("LSTM loop"), std::string::npos) << plan;
  }
  // So is every dynamic-range one whose weights the converter wrote as int8.
  if (c.lower && (c.model == "lstm_wide" || c.model == "lstm_long") && c.name.find("dynamic") != std::string::npos) {
    EXPECT_NE(plan.find("Keras LSTM cell as its loop body's ops"), std::string::npos) << plan;
  }
  if (!c.lower) {
    EXPECT_EQ(plan.find("LSTM loop"), std::string::npos) << plan;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TfliteK3Reference, testing::ValuesIn(cases()), case_name);

// Runs every row of case c through two interpreters whose options differ as `vary` says, and
// expects the same output bits; skips (saying so) when `marker` is not in the first one's plan.
void expect_same_bits(const Case& c, void (*vary)(tfl::InterpreterOptions&, bool), const std::string& marker) {
  const std::string dir = fixtures_root() + "/" + c.model;
  const nlohmann::json entry = manifest()["models"][c.model]["cases"][c.name];
  const std::string file = dir + "/" + entry["file"].get<std::string>();
  const bool stateful = entry.value("stateful", false);
  std::unique_ptr<tfl::Interpreter> interp[2];
  for (int k = 0; k < 2; ++k) {
    tfl::InterpreterOptions options;
    options.isa = c.isa;
    options.reset_variables_each_invoke = !stateful;
    vary(options, k == 0);
    interp[k] = std::make_unique<tfl::Interpreter>(load(file), options);
  }
  if (interp[0]->describe().find(marker) == std::string::npos) {
    GTEST_SKIP() << c.model << " " << c.name << ": nothing to compare (no '" << marker << "' in its plan)";
  }
  std::vector<formats::NpyArray> inputs;
  for (const auto& f : entry["input_files"]) inputs.push_back(formats::read_npy(dir + "/" + f.get<std::string>()));
  const size_t rows = static_cast<size_t>(inputs[0].shape[0]);
  size_t compared = 0;
  for (size_t r = 0; r < rows; ++r) {
    for (auto& it : interp) {
      for (size_t i = 0; i < inputs.size(); ++i) set_input(*it, i, inputs[i], r);
      it->invoke();
    }
    for (size_t o = 0; o < interp[0]->num_outputs(); ++o) {
      const size_t n = static_cast<size_t>(tfl::element_count(interp[0]->output_tensor(o).shape));
      ASSERT_EQ(std::memcmp(interp[0]->output_data(o), interp[1]->output_data(o), n * sizeof(float)), 0)
          << c.model << " " << c.name << " (" << interp[0]->isa() << ") row " << r << " output " << o;
      compared += n;
    }
  }
  EXPECT_GT(compared, 0u);
}

// A lowered dynamic-range LSTM loop (ops/lstm/keras_cell_hybrid.cpp) computes what its body's
// ops compute: its outputs equal the same file's loop run op by op bit for bit, on every row.
class TfliteK3LoweredHybridLoop : public testing::TestWithParam<Case> {};

TEST_P(TfliteK3LoweredHybridLoop, EqualsTheLoopRunOpByOpBitForBit) {
  expect_same_bits(
      GetParam(), [](tfl::InterpreterOptions& o, bool first) { o.lower_recurrent_loops = first; }, "Keras LSTM cell");
}

// A LEAKY_RELU fused into the convolution before it (tflite/rewrite/program_fuse_leaky.cpp)
// gives the bits the two ops give, float and hybrid convolutions alike.
class TfliteK3FusedLeakyRelu : public testing::TestWithParam<Case> {};

TEST_P(TfliteK3FusedLeakyRelu, EqualsTheTwoOpsBitForBit) {
  expect_same_bits(
      GetParam(), [](tfl::InterpreterOptions& o, bool first) { o.fuse_activations = first; }, "LEAKY_RELU (fused)");
}

std::vector<Case> dynamic_cases() {
  std::vector<Case> out;
  for (const Case& c : cases())
    if (c.lower && c.name.find("dynamic") != std::string::npos) out.push_back(c);
  return out;
}

std::vector<Case> float_output_cases() {
  std::vector<Case> out;
  for (const Case& c : cases())
    if (c.lower && c.name.find("int8") == std::string::npos) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TfliteK3LoweredHybridLoop, testing::ValuesIn(dynamic_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, TfliteK3FusedLeakyRelu, testing::ValuesIn(float_output_cases()), case_name);

TEST(TfliteK3ReferenceFixtures, AreThere) {
  // Guards against an empty or missing manifest silently running no case.
  EXPECT_GE(cases().size(), 80u) << fixtures_root();
}

}  // namespace
}  // namespace tickinfer
