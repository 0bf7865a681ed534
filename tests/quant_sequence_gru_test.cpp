// SEQUENCE_GRU (tflite/ops/sequence_gru.cpp), every expectation from outside the code under test:
//  * the converter's GRU loops (float and dynamic-range, tf_keras and Keras 3 files) lowered to
//    the op give the bits the same loop gives run op by op, on every row of the fixtures' inputs,
//    and TFLite's own outputs (expected_ref_*.npy from tools/make_tflite_fixtures.py);
//  * the quantizer's int8-dynamic GRU, made from the Keras model, equals the dynamic-range
//    converter's file as TFLite runs it (the converter's loop of hybrid FULLY_CONNECTEDs), both
//    reset forms;
//  * GRU and bidirectional Keras models quantize in every mode within the reported bound of the
//    Keras outputs (tests/fixtures/<case>/out*.npy), and their .tkq files run identically.
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

#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "formats/tkq/tkq_file.hpp"
#include "quantizer/calibration.hpp"
#include "quantizer/layers.hpp"
#include "quantizer/lower_graph.hpp"
#include "quantizer/quantize_session.hpp"
#include "quantizer/quantizer.hpp"
#include "support/fixture_manifest.hpp"
#include "support/quant_gru_cases.hpp"
#include "support/source_paths.hpp"
#include "support/tflite_file.hpp"
#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

using namespace ::tickinfer::test::gru_cases;

const std::string kSource = ::tickinfer::test::source_dir();

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// ---- the converter's loops, lowered ------------------------------------------------------------

struct LoopCase {
  std::string file, inputs, expected;  // expected: TFLite's outputs, "" where not recorded
};

std::vector<LoopCase> loop_cases() {
  std::vector<LoopCase> out;
  const std::string k2 = kSource + "/tests/fixtures/tflite/";
  for (const char* model : {"gru", "gru_wide", "gru_wide_before"}) {
    for (const char* mode : {"float", "dynamic"}) {
      const std::string d = k2 + model + "/";
      out.push_back({d + mode + ".tflite", d + "inputs_" + mode + "_0.npy", d + "expected_ref_" + mode + "_0.npy"});
    }
  }
  const std::string k3 = kSource + "/tests/fixtures/tflite_k3/";
  const nlohmann::json m = read_json(k3 + "manifest.json");
  for (const auto& [model, entry] : m["models"].items()) {
    if (model.rfind("gru", 0) != 0) continue;
    for (const auto& [name, c] : entry["cases"].items()) {
      if (!c.contains("expected_files")) continue;
      const std::string d = k3 + model + "/";
      out.push_back({d + c["file"].get<std::string>(), d + c["input_files"][0].get<std::string>(),
                     d + c["expected_files"][0].get<std::string>()});
    }
  }
  return out;
}

class LoweredGruLoop : public ::testing::TestWithParam<std::string> {};

// Every GRU loop of the fixtures is recognised, and the op computes the loop's bits: on every
// kernel set, on every row, against the same file with its loops left to run op by op.
TEST_P(LoweredGruLoop, EqualsTheLoopRunOpByOpBitForBitAndTflite) {
  size_t files = 0;
  for (const LoopCase& c : loop_cases()) {
    const auto program = test::load_shared_tflite_file(c.file);
    auto lowered = interpreter(program, GetParam(), true);
    auto loop = interpreter(program, GetParam(), false);
    // Every WHILE of the file (a stacked pair has two) runs as a SEQUENCE_GRU.
    size_t whiles = 0;
    for (const tfl::Op& op : program->ops) whiles += op.code == tfl::OpCode::While;
    ASSERT_GE(whiles, 1u) << c.file;
    EXPECT_EQ(count(lowered->describe(), "GRU loop ("), whiles) << c.file << "\n" << lowered->describe();
    ASSERT_EQ(loop->describe().find("SEQUENCE_GRU"), std::string::npos) << c.file;
    const formats::NpyArray in = formats::read_npy(c.inputs);
    const formats::NpyArray want = formats::read_npy(c.expected);
    const size_t rows = static_cast<size_t>(in.shape.at(0));
    const size_t per_row = want.data.size() / rows;
    double worst = 0.0;
    for (size_t r = 0; r < rows; ++r) {
      set_row(*lowered, 0, in, r);
      set_row(*loop, 0, in, r);
      lowered->invoke();
      loop->invoke();
      const std::vector<float> a = output_row(*lowered, 0), b = output_row(*loop, 0);
      ASSERT_EQ(a.size(), per_row);
      ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << c.file << " row " << r;
      for (size_t k = 0; k < a.size(); ++k) {
        const float w = want.data[r * per_row + k];
        worst = std::max(worst, std::fabs(static_cast<double>(a[k]) - w) / (1e-6 + std::fabs(w)));
      }
    }
    // TFLite's float FULLY_CONNECTED and this one sum alike; its hybrid one rounds a scale in
    // another order for some rows (quant_tflite_reference_test's 1e-4).
    EXPECT_LT(worst, 1e-4) << c.file;
    ++files;
  }
  EXPECT_EQ(files, loop_cases().size());
  EXPECT_GE(files, 16u);
}

INSTANTIATE_TEST_SUITE_P(Isa, LoweredGruLoop, ::testing::Values("scalar", ""),
                         [](const auto& info) { return info.param.empty() ? std::string("best") : info.param; });

// tf_keras' reset_before file splits the recurrent projection with a SPLIT_V {H, H, -1}. With a
// second -1 (which TFLite refuses), the matcher must not take the loop: the file is refused when
// prepared, by the SPLIT_V itself, whether or not loops are lowered.
TEST(LoweredGruLoopErrors, ASplitVWithTwoRestsIsNotAGruAndIsRefused) {
  tfl::Program p = test::load_tflite_file(kSource + "/tests/fixtures/tflite/gru_wide_before/float.tflite");
  size_t patched = 0;
  for (tfl::Subgraph& sg : p.subgraphs) {
    for (const tfl::Op& op : sg.ops) {
      if (op.code != tfl::OpCode::SplitV) continue;
      tfl::Tensor& sizes = p.tensors[static_cast<size_t>(op.inputs.at(1))];
      ASSERT_EQ(sizes.data.size(), 12u);
      const int32_t two_rests[3] = {32, -1, -1};
      std::memcpy(sizes.data.data(), two_rests, 12);
      ++patched;
    }
  }
  ASSERT_EQ(patched, 1u);
  const auto shared = std::make_shared<const tfl::Program>(p);
  for (bool lower : {true, false}) {
    try {
      interpreter(shared, "", lower);
      FAIL() << "prepared a SPLIT_V with two -1 sizes (lower " << lower << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("SPLIT_V"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("size_splits[2] = -1"), std::string::npos) << e.what();
    }
  }
}

// ---- the quantizer's GRU ------------------------------------------------------------------------

// The Keras model's GRU quantized int8-dynamic, the Dense head left fp32 (as the converter leaves
// a layer under 1024 weights), computes what TFLite computes with the dynamic-range converter's
// file: the same per-channel int8 weights, the same hybrid products, the same gates.
class QuantizedGru : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizedGru, DynamicEqualsTheDynamicRangeConverter) {
  const std::string dir = kSource + "/tests/fixtures/tflite/" + GetParam() + "/";
  const bool reset_after = GetParam() == "gru_wide";
  const tfl::Program f = quantizer::lower_graph(formats::load_any_model_file(dir + "model.h5").graph);
  const std::vector<quantizer::Layer> layers = quantizer::find_layers(f);
  std::vector<tfl::Precision> precisions;
  size_t gru_layers = 0;
  for (const quantizer::Layer& l : layers) {
    const bool gru = f.ops[l.ops.at(0)].code == tfl::OpCode::SequenceGru;
    gru_layers += gru;
    precisions.push_back(gru ? tfl::Precision::Int8Dynamic : tfl::Precision::F32);
  }
  ASSERT_EQ(gru_layers, 1u);
  const std::vector<quantizer::SampleSet> cal{samples(formats::read_npy(dir + "calibration.npy"))};
  const tfl::Program q = quantizer::quantize_program(f, layers, precisions, quantizer::calibrate(f, cal)).program;
  auto interp = interpreter(std::make_shared<const tfl::Program>(q), "", true);
  EXPECT_NE(interp->describe().find(std::string("SEQUENCE_GRU ") + (reset_after ? "reset_after" : "reset_before") +
                                    " time=16 input=40 units=32 (W: hybrid fc asymmetric"),
            std::string::npos)
      << interp->describe();
  const formats::NpyArray in = formats::read_npy(dir + "inputs_dynamic_0.npy");
  const formats::NpyArray want = formats::read_npy(dir + "expected_ref_dynamic_0.npy");
  const size_t rows = static_cast<size_t>(in.shape.at(0));
  size_t exact = 0;
  double worst = 0.0;
  ASSERT_GE(rows, 50u);
  for (size_t r = 0; r < rows; ++r) {
    set_row(*interp, 0, in, r);
    interp->invoke();
    const float got = output_row(*interp, 0).at(0), w = want.data.at(r);
    exact += got == w;
    worst = std::max(worst, std::fabs(static_cast<double>(got) - w));
  }
  EXPECT_EQ(exact, rows) << "worst difference " << worst;
}

INSTANTIATE_TEST_SUITE_P(Converter, QuantizedGru, ::testing::Values("gru_wide", "gru_wide_before"),
                         [](const auto& info) { return info.param; });

// The op writes its state in place at every step, so a file whose SEQUENCE_GRU state is a model
// input (or the op's own input or output) is refused by name instead of overwriting it.
TEST(QuantizedGru, AStateThatIsAModelInputIsRefused) {
  const std::string dir = kSource + "/tests/fixtures/tflite/gru_wide/";
  const tfl::Program f = quantizer::lower_graph(formats::load_any_model_file(dir + "model.h5").graph);
  for (int k : {0, 1}) {
    tfl::Program bad = f;
    for (tfl::Op& op : bad.ops) {
      if (op.code != tfl::OpCode::SequenceGru) continue;
      op.inputs[5] = k == 0 ? bad.inputs.at(0) : op.outputs.at(0);
    }
    try {
      interpreter(std::make_shared<const tfl::Program>(bad), "", true);
      FAIL() << "a state over " << (k == 0 ? "the model input" : "the op's output") << " was prepared";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("SEQUENCE_GRU"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("must be"), std::string::npos) << e.what();
    }
  }
}

// GRU models (reset_after and reset_before, stacked with relu candidates, the bench's
// gru_window) and the backwards-reading ones (go_backwards, Bidirectional with its merges: REVERSE_V2,
// the STRIDED_SLICE of a time slice) in each mode: every GRU takes the precision the mode names
// (int8 has none for a GRU: int8-dynamic) and the arithmetic the mode implies (the converter's in
// dynamic mode, the op's own in the others), the output stays within bounds of Keras' outputs,
// and the .tkq file runs bit for bit as the program it stores.
TEST(RecurrentModels, QuantizeInEveryModeAndRoundTripThroughTkq) {
  const struct {
    quantizer::QuantizeMode mode;
    tfl::Precision gru;
    double bound;
  } modes[] = {{quantizer::QuantizeMode::Dynamic, tfl::Precision::Int8Dynamic, 0.05},
               {quantizer::QuantizeMode::Int8, tfl::Precision::Int8Dynamic, 0.1},
               {quantizer::QuantizeMode::Bf16, tfl::Precision::BF16, 0.02}};
  for (const char* name : {"gru_window", "gru_reset_before_k3", "gru_stacked_k2", "go_backwards_k3",
                           "bidirectional_k3", "bidirectional_merges_k3"}) {
    const KerasCase k = keras_case(name);
    std::vector<quantizer::SampleSet> data;
    for (const auto& file : k.c.inputs) data.push_back(samples(formats::read_npy(file)));
    for (const auto& m : modes) {
      quantizer::QuantizeRequest req;
      req.mode = m.mode;
      req.timing_runs = 0;
      const quantizer::QuantizeReport rep = quantizer::quantize_model(k.f, data, data, req);
      const tfl::Program& q = rep.result.program;
      for (const tfl::Op& op : q.ops) {
        if (op.code != tfl::OpCode::SequenceGru) continue;
        EXPECT_EQ(op.precision, m.gru) << name << " " << op.label;
        EXPECT_EQ(op.options.own_arithmetic, m.mode != quantizer::QuantizeMode::Dynamic) << name << " " << op.label;
      }
      auto ours = interpreter(std::make_shared<const tfl::Program>(q), "", true);
      const double err = error_against_keras(*ours, k);
      EXPECT_LT(err, m.bound) << name << " mode " << static_cast<int>(m.mode);
      RecordProperty(std::string(name) + "_mode" + std::to_string(static_cast<int>(m.mode)) + "_error", std::to_string(err));

      const std::vector<uint8_t> bytes = formats::serialize_tkq(q);
      auto back = interpreter(std::make_shared<const tfl::Program>(formats::load_tkq(bytes.data(), bytes.size(), name)), "", true);
      const formats::NpyArray in = formats::read_npy(k.c.inputs.at(0));
      if (k.c.inputs.size() != 1) continue;
      for (size_t r = 0; r < std::min<size_t>(8, static_cast<size_t>(in.shape.at(0))); ++r) {
        set_row(*ours, 0, in, r);
        set_row(*back, 0, in, r);
        ours->invoke();
        back->invoke();
        for (size_t o = 0; o < ours->num_outputs(); ++o) EXPECT_EQ(output_row(*ours, o), output_row(*back, o)) << name;
      }
    }
  }
}

}  // namespace
}  // namespace tickinfer
