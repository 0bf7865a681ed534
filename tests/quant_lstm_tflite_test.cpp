// UNIDIRECTIONAL_SEQUENCE_LSTM end to end: tests/fixtures/quant_lstm/*/model.tflite read by
// formats::load_tflite and run by tfl::Interpreter (default options: the int8 zero-point state
// reset, the default rounding). The program is cut before its STRIDED_SLICE, so its output is the
// LSTM's whole output sequence, compared with the LSTM tensor TFLite's reference interpreter held.
// (Whole models with LSTMs, lstm_tiny and lstm_window, are in quant_tflite_reference_test.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "formats/tflite/tflite_file.hpp"
#include "tflite/interpreter.hpp"
#include "quant_lstm_fixture.hpp"

namespace {

using namespace tickinfer;
using namespace tickinfer::tfl;

tfl::Program load_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.empty()) throw std::runtime_error("cannot read " + path);
  return formats::load_tflite(bytes.data(), bytes.size(), path);
}

// Drops every op from the first STRIDED_SLICE on; the program's output becomes that op's input.
void cut_before_strided_slice(Program& p) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    if (p.ops[i].code != OpCode::StridedSlice) continue;
    p.outputs = {p.ops[i].inputs.at(0)};
    p.ops.resize(i);
    return;
  }
}

double max_abs(const float* v, size_t n) {
  double m = 1e-30;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(static_cast<double>(v[i])));
  return m;
}

void expect_fixture_matches(const std::string& name, double tolerance,
                            ActivationForm activations = ActivationForm::Auto) {
  const lstm_fixture::LstmFixture f = lstm_fixture::load(name);
  auto program = std::make_shared<Program>(load_file(lstm_fixture::fixture_dir(name) + "/model.tflite"));
  cut_before_strided_slice(*program);
  ASSERT_EQ(program->ops.back().code, OpCode::SequenceLstm);
  InterpreterOptions options;
  options.lstm_activations = activations;
  Interpreter interp(program, options);
  const size_t in_bytes = f.tensor_bytes(f.input_tensor());
  const size_t out_bytes = f.tensor_bytes(f.output_tensor());
  const bool int8 = interp.output_tensor(0).type == DType::I8;
  const size_t n = out_bytes / (int8 ? 1 : 4);
  for (int s = 0; s < f.samples; ++s) {
    std::memcpy(interp.input_data(0), f.inputs.data() + in_bytes * static_cast<size_t>(s), in_bytes);
    interp.invoke();
    const uint8_t* want = f.outputs.data() + out_bytes * static_cast<size_t>(s);
    if (int8) {
      EXPECT_EQ(std::memcmp(interp.output_data(0), want, out_bytes), 0) << name << " sample " << s;
      continue;
    }
    std::vector<float> w(n), g(n);
    std::memcpy(w.data(), want, out_bytes);
    std::memcpy(g.data(), interp.output_data(0), out_bytes);
    const double scale = max_abs(w.data(), n);
    for (size_t k = 0; k < n; ++k) {
      ASSERT_LE(std::fabs(static_cast<double>(g[k]) - w[k]) / scale, tolerance) << name << " sample " << s << " [" << k << "]";
    }
  }
}

TEST(QuantLstmTflite, Int8ModelFileBitExact) {
  expect_fixture_matches("small_int8", 0);
  expect_fixture_matches("big_seq_int8", 0);
}
// Each activation form whatever prepare would measure here (the computed one from AVX2 on; the
// scalar and portable sets have only the table).
TEST(QuantLstmTflite, Int8ModelFileBitExactWithEitherActivationForm) {
  for (ActivationForm form : {ActivationForm::Table, ActivationForm::Computed}) {
    expect_fixture_matches("small_int8", 0, form);
    expect_fixture_matches("big_seq_int8", 0, form);
  }
}
TEST(QuantLstmTflite, FloatModelFile) { expect_fixture_matches("big_float", 1e-5); }
// Bit for bit: the hybrid step reproduces TFLite's input quantization and float activations.
TEST(QuantLstmTflite, DynamicRangeModelFile) { expect_fixture_matches("wide_seq_dynamic", 0.0); }

}  // namespace
