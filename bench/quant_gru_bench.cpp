// The converter's Keras GRU loops on the tensor-program interpreter: run as one SEQUENCE_GRU
// (InterpreterOptions::lower_recurrent_loops, the default) against the same loop run op by op
// (about 20 ops per step), on TFLite's own files: tf_keras GRU(32) over 16 x 40 in float and
// dynamic range (tests/fixtures/tflite/gru_wide), and Keras 3's GRU(7) reset_after over 6 x 4
// (tests/fixtures/tflite_k3/gru_after). Both forms give the same bits
// (quant_sequence_gru_test); this is what the lowering saves.
//
// Then the quantizer's GRUs in either arithmetic (docs/quantization.md, "GRU"): the bench's
// gru_window (GRU(64) over 32 x 10) and gru_wide's tf_keras GRU(32) over 16 x 40, quantized
// int8-dynamic and bf16 in the converter's exact arithmetic and in the op's own, beside the fp32
// graph plan of the same Keras file (what `tickinfer bench model.keras` runs). Calibrated on 64
// seeded N(0, 1) windows. Best kernel set of this CPU.
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "formats/model_file.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "quantizer/calibration.hpp"
#include "quantizer/layers.hpp"
#include "quantizer/lower_graph.hpp"
#include "quantizer/quantizer.hpp"
#include "tflite/interpreter.hpp"
#include "tickinfer/tickinfer.hpp"

namespace {

using namespace tickinfer;

std::shared_ptr<const tfl::Program> load(const std::string& rel) {
  const std::string path = std::string(TICKINFER_SOURCE_DIR) + "/tests/fixtures/" + rel;
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  return std::make_shared<const tfl::Program>(formats::load_tflite(bytes.data(), bytes.size(), path));
}

// Seeded N(0, 1) input, then one invoke per iteration.
void time_invokes(benchmark::State& state, tfl::Interpreter& interp) {
  const size_t n = static_cast<size_t>(tfl::element_count(interp.input_tensor(0).shape));
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  auto* x = static_cast<float*>(interp.input_data(0));
  for (size_t i = 0; i < n; ++i) x[i] = nd(rng);
  for (auto _ : state) {
    interp.invoke();
    benchmark::DoNotOptimize(interp.output_data(0));
  }
}

void BM_GruLoop(benchmark::State& state, const char* file, bool lowered) {
  tfl::InterpreterOptions o;
  o.lower_recurrent_loops = lowered;
  o.reset_variables_each_invoke = true;
  tfl::Interpreter interp(load(file), o);
  time_invokes(state, interp);
  state.SetLabel(lowered ? "SEQUENCE_GRU" : "loop op by op");
}

std::string source(const char* rel) { return std::string(TICKINFER_SOURCE_DIR) + "/" + rel; }

// The Keras file lowered and quantized: every layer with weights at `precision` (else fp32), the
// GRUs in their own arithmetic or the converter's.
std::shared_ptr<const tfl::Program> quantized(const char* keras, tfl::Precision precision, bool own) {
  const tfl::Program f = quantizer::lower_graph(formats::load_any_model_file(source(keras)).graph);
  const auto layers = quantizer::find_layers(f);
  std::vector<tfl::Precision> precisions;
  for (const auto& l : layers) precisions.push_back(quantizer::layer_allows(l, precision) ? precision : tfl::Precision::F32);
  quantizer::SampleSet cal;
  cal.count = 64;
  cal.per_sample = static_cast<size_t>(tfl::element_count(f.tensors[static_cast<size_t>(f.inputs.at(0))].shape));
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  for (size_t i = 0; i < cal.count * cal.per_sample; ++i) cal.values.push_back(nd(rng));
  quantizer::QuantizeOptions o;
  o.gru_own_arithmetic = own;
  return std::make_shared<const tfl::Program>(
      quantizer::quantize_program(f, layers, precisions, quantizer::calibrate(f, {cal}), o).program);
}

void BM_QuantizedGru(benchmark::State& state, const char* keras, tfl::Precision precision, bool own) {
  tfl::InterpreterOptions o;
  o.reset_variables_each_invoke = true;
  tfl::Interpreter interp(quantized(keras, precision, own), o);
  time_invokes(state, interp);
  state.SetLabel(std::string(tfl::precision_name(precision)) + (own ? " own arithmetic" : " converter's arithmetic"));
}

void BM_KerasPlan(benchmark::State& state, const char* keras) {
  Plan plan = compile(Model::load(source(keras)));
  std::vector<float> x(plan.input_size(0)), y(plan.output_size(0));
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  for (float& v : x) v = nd(rng);
  for (auto _ : state) {
    plan.run(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel("fp32 graph plan");
}

constexpr const char* kWindow = "bench/models/gru_window/model.keras";
constexpr const char* kWide = "tests/fixtures/tflite/gru_wide/model.h5";

}  // namespace

BENCHMARK_CAPTURE(BM_KerasPlan, window_fp32_plan, kWindow);
BENCHMARK_CAPTURE(BM_QuantizedGru, window_int8dyn_exact, kWindow, tickinfer::tfl::Precision::Int8Dynamic, false);
BENCHMARK_CAPTURE(BM_QuantizedGru, window_int8dyn_own, kWindow, tickinfer::tfl::Precision::Int8Dynamic, true);
BENCHMARK_CAPTURE(BM_QuantizedGru, window_bf16_exact, kWindow, tickinfer::tfl::Precision::BF16, false);
BENCHMARK_CAPTURE(BM_QuantizedGru, window_bf16_own, kWindow, tickinfer::tfl::Precision::BF16, true);
BENCHMARK_CAPTURE(BM_QuantizedGru, window_fp32_exact, kWindow, tickinfer::tfl::Precision::F32, false);
BENCHMARK_CAPTURE(BM_QuantizedGru, window_fp32_own, kWindow, tickinfer::tfl::Precision::F32, true);
BENCHMARK_CAPTURE(BM_KerasPlan, wide_fp32_plan, kWide);
BENCHMARK_CAPTURE(BM_QuantizedGru, wide_int8dyn_exact, kWide, tickinfer::tfl::Precision::Int8Dynamic, false);
BENCHMARK_CAPTURE(BM_QuantizedGru, wide_int8dyn_own, kWide, tickinfer::tfl::Precision::Int8Dynamic, true);

BENCHMARK_CAPTURE(BM_GruLoop, wide_float_lowered, "tflite/gru_wide/float.tflite", true);
BENCHMARK_CAPTURE(BM_GruLoop, wide_float_loop, "tflite/gru_wide/float.tflite", false);
BENCHMARK_CAPTURE(BM_GruLoop, wide_dynamic_lowered, "tflite/gru_wide/dynamic.tflite", true);
BENCHMARK_CAPTURE(BM_GruLoop, wide_dynamic_loop, "tflite/gru_wide/dynamic.tflite", false);
BENCHMARK_CAPTURE(BM_GruLoop, k3_after_lowered, "tflite_k3/gru_after/keras_float.tflite", true);
BENCHMARK_CAPTURE(BM_GruLoop, k3_after_loop, "tflite_k3/gru_after/keras_float.tflite", false);

BENCHMARK_MAIN();
