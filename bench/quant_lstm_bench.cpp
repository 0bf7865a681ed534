// UNIDIRECTIONAL_SEQUENCE_LSTM step latency (and, at the end, the integer LSTM's two activation
// forms on one gate): bench/models' lstm_tiny shape (2 stacked LSTM(128),
// input 128, one time step) from the TFLite fixtures, in int8, dynamic-range and float, with the
// plain reference kernels and the fastest kernel set of this CPU, in window and stream mode. Only
// the two LSTM ops run (the program is cut before its STRIDED_SLICE).
#include <benchmark/benchmark.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <vector>
#include <sstream>
#include <string>

#include "formats/tflite/tflite_file.hpp"
#include "kernels/kernel_set.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"
#include "tflite/interpreter.hpp"

namespace {

using namespace tickinfer;

std::shared_ptr<tfl::Program> lstm_tiny(const std::string& mode) {
  const std::string path = std::string(TICKINFER_SOURCE_DIR) + "/tests/fixtures/tflite/lstm_tiny/" + mode + ".tflite";
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  auto p = std::make_shared<tfl::Program>(formats::load_tflite(bytes.data(), bytes.size(), path));
  for (size_t i = 0; i < p->ops.size(); ++i) {
    if (p->ops[i].code != tfl::OpCode::StridedSlice) continue;
    p->outputs = {p->ops[i].inputs.at(0)};
    p->ops.resize(i);
    break;
  }
  return p;
}

// stream = false: window mode (state reset before every invoke, so the recurrent matmul of the
// one step is skipped); true: stream mode (state carried, both matmuls every step).
void BM_LstmTiny(benchmark::State& state, const char* mode, const char* isa, bool stream) {
  tfl::InterpreterOptions options;
  options.isa = isa;
  options.reset_variables_each_invoke = !stream;
  tfl::Interpreter interp(lstm_tiny(mode), options);
  // 64 different random inputs in turn, so branch predictors cannot learn one invoke's pattern.
  const tfl::Tensor& in = interp.input_tensor(0);
  const size_t bytes = static_cast<size_t>(tfl::element_count(in.shape)) * tfl::dtype_size(in.type);
  std::vector<std::vector<uint8_t>> inputs(64, std::vector<uint8_t>(bytes));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& x : inputs) {
    for (size_t i = 0; i < bytes; ++i) x[i] = static_cast<uint8_t>(rng());
    if (in.type == tfl::DType::F32) {
      for (size_t i = 0; i < bytes / 4; ++i) {
        const float v = normal(rng);
        std::memcpy(x.data() + 4 * i, &v, 4);
      }
    }
  }
  size_t next = 0;
  for (auto _ : state) {
    std::memcpy(interp.input_data(0), inputs[next++ & 63].data(), bytes);
    interp.invoke();
    benchmark::DoNotOptimize(interp.output_data(0));
  }
  state.SetLabel(interp.isa());
  state.counters["MACs"] = static_cast<double>(interp.macs());
}

BENCHMARK_CAPTURE(BM_LstmTiny, int8_scalar, "int8", "scalar", false);
BENCHMARK_CAPTURE(BM_LstmTiny, int8_best, "int8", "", false);
BENCHMARK_CAPTURE(BM_LstmTiny, int8_best_stream, "int8", "", true);
BENCHMARK_CAPTURE(BM_LstmTiny, dynamic_scalar, "dynamic", "scalar", false);
BENCHMARK_CAPTURE(BM_LstmTiny, dynamic_best, "dynamic", "", false);
BENCHMARK_CAPTURE(BM_LstmTiny, dynamic_best_stream, "dynamic", "", true);
BENCHMARK_CAPTURE(BM_LstmTiny, float_scalar, "float", "scalar", false);
BENCHMARK_CAPTURE(BM_LstmTiny, float_best, "float", "", false);
BENCHMARK_CAPTURE(BM_LstmTiny, float_best_stream, "float", "", true);

// The integer LSTM's two activation forms (tflite/ops/lstm/sequence_lstm_int8_kernels.hpp) on
// one gate of 64 cells: the logistic of Q3 pre-activations spread over the range gates use, by
// table and computed in 16-bit lanes; ns per gate, elements per second as the rate. The plans
// choose between them by this kind of measurement (`tickinfer inspect` prints theirs).
void BM_Int8GateActivation(benchmark::State& state, bool computed) {
  using tfl::ops::lstm::Int8Activations;
  const tickinfer::kernels::Isa avx2 = tickinfer::kernels::Isa::Avx2;
  if (!tickinfer::kernels::isa_supported(avx2)) {
    state.SkipWithError("no AVX2: the set has only the table");
    return;
  }
  const Int8Activations& form =
      computed ? tfl::ops::lstm::int8_lstm_kernels(avx2).computed : tfl::ops::lstm::int8_lstm_kernels(avx2).table;
  const tfl::ops::lstm::fx16::Activation f = tfl::ops::lstm::fx16::logistic_q3_activation();
  constexpr int kCells = 64;
  std::vector<int16_t> source(kCells), x(kCells);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> q3(-16384, 16383);  // +-4 in Q3.12
  for (int16_t& v : source) v = static_cast<int16_t>(q3(rng));
  for (auto _ : state) {
    std::memcpy(x.data(), source.data(), sizeof(int16_t) * kCells);
    form.activate(f, x.data(), kCells);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(form.name);
  state.SetItemsProcessed(state.iterations() * kCells);
}

BENCHMARK_CAPTURE(BM_Int8GateActivation, table, false);
BENCHMARK_CAPTURE(BM_Int8GateActivation, computed, true);

}  // namespace

BENCHMARK_MAIN();
