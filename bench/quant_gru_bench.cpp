// The converter's Keras GRU loops on the tensor-program interpreter: run as one SEQUENCE_GRU
// (InterpreterOptions::lower_recurrent_loops, the default) against the same loop run op by op
// (about 20 ops per step), on TFLite's own files: tf_keras GRU(32) over 16 x 40 in float and
// dynamic range (tests/fixtures/tflite/gru_wide), and Keras 3's GRU(7) reset_after over 6 x 4
// (tests/fixtures/tflite_k3/gru_after). Both forms give the same bits
// (quant_sequence_gru_test); this is what the lowering saves. Best kernel set of this CPU.
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "formats/tflite/tflite_file.hpp"
#include "tflite/interpreter.hpp"

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

void BM_GruLoop(benchmark::State& state, const char* file, bool lowered) {
  tfl::InterpreterOptions o;
  o.lower_recurrent_loops = lowered;
  o.reset_variables_each_invoke = true;
  tfl::Interpreter interp(load(file), o);
  const size_t n = static_cast<size_t>(tfl::element_count(interp.input_tensor(0).shape));
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  auto* x = static_cast<float*>(interp.input_data(0));
  for (size_t i = 0; i < n; ++i) x[i] = nd(rng);
  for (auto _ : state) {
    interp.invoke();
    benchmark::DoNotOptimize(interp.output_data(0));
  }
  state.SetLabel(lowered ? "SEQUENCE_GRU" : "loop op by op");
}

}  // namespace

BENCHMARK_CAPTURE(BM_GruLoop, wide_float_lowered, "tflite/gru_wide/float.tflite", true);
BENCHMARK_CAPTURE(BM_GruLoop, wide_float_loop, "tflite/gru_wide/float.tflite", false);
BENCHMARK_CAPTURE(BM_GruLoop, wide_dynamic_lowered, "tflite/gru_wide/dynamic.tflite", true);
BENCHMARK_CAPTURE(BM_GruLoop, wide_dynamic_loop, "tflite/gru_wide/dynamic.tflite", false);
BENCHMARK_CAPTURE(BM_GruLoop, k3_after_lowered, "tflite_k3/gru_after/keras_float.tflite", true);
BENCHMARK_CAPTURE(BM_GruLoop, k3_after_loop, "tflite_k3/gru_after/keras_float.tflite", false);

BENCHMARK_MAIN();
