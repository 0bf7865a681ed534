// UNIDIRECTIONAL_SEQUENCE_LSTM prepare refuses malformed or unsupported programs with a
// tickinfer::Error naming the op and the problem (never a crash), and the op keeps its state
// across invokes exactly as TFLite's variable tensors do.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "quant_lstm_fixture.hpp"
#include "tickinfer/error.hpp"

namespace {

using namespace tickinfer::tfl;
using lstm_fixture::LstmFixture;

// Prepares f's op and expects an Error whose message contains every part of `parts`.
void expect_refused(const LstmFixture& f, std::vector<std::string> parts) {
  InterpreterOptions options;
  try {
    lstm_fixture::prepare(f.program, options, "scalar");
    ADD_FAILURE() << "prepare accepted the program; expected an error mentioning " << parts.at(0);
  } catch (const tickinfer::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("UNIDIRECTIONAL_SEQUENCE_LSTM"), std::string::npos) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in: " << msg;
  }
}

Tensor& operand(LstmFixture& f, int i) { return f.program.tensors.at(static_cast<size_t>(f.program.ops[0].inputs.at(static_cast<size_t>(i)))); }

TEST(QuantLstmErrors, MissingRequiredWeights) {
  LstmFixture f = lstm_fixture::load("small_float");
  f.program.ops[0].inputs[2] = -1;
  expect_refused(f, {"input_to_forget_weights"});
}

TEST(QuantLstmErrors, TensorIndexOutOfRange) {
  LstmFixture f = lstm_fixture::load("small_int8");
  f.program.ops[0].inputs[3] = 999;
  expect_refused(f, {"999"});
}

TEST(QuantLstmErrors, WrongWeightShape) {
  LstmFixture f = lstm_fixture::load("small_float");
  operand(f, 7).shape = {4, 5};
  expect_refused(f, {"recurrent_to_cell_weights", "[4, 5]"});
}

TEST(QuantLstmErrors, TruncatedWeightData) {
  LstmFixture f = lstm_fixture::load("small_int8");
  operand(f, 4).data.resize(5);
  expect_refused(f, {"input_to_output_weights", "5 bytes"});
}

TEST(QuantLstmErrors, HalfCifgIsRefused) {
  LstmFixture f = lstm_fixture::load("small_float");
  f.program.ops[0].inputs[5] = -1;  // recurrent_to_input gone, input_to_input kept
  expect_refused(f, {"CIFG"});
}

TEST(QuantLstmErrors, WrongOperandCount) {
  LstmFixture f = lstm_fixture::load("small_float");
  f.program.ops[0].inputs.resize(23);
  expect_refused(f, {"24 inputs", "23"});
}

TEST(QuantLstmErrors, UnsupportedTypes) {
  LstmFixture f = lstm_fixture::load("small_float");
  operand(f, 0).type = DType::I16;
  expect_refused(f, {"int16", "float32"});
}

TEST(QuantLstmErrors, UnsupportedActivation) {
  LstmFixture f = lstm_fixture::load("small_float");
  f.program.ops[0].options.activation = FusedActivation::SignBit;
  expect_refused(f, {"fused_activation_function"});
}

TEST(QuantLstmErrors, Int8EightByEightVariantIsRefused) {
  LstmFixture f = lstm_fixture::load("small_int8");
  std::vector<int>& im = f.program.ops[0].intermediates;
  while (im.size() < 12) im.push_back(im.back());
  expect_refused(f, {"8x8_8"});
}

TEST(QuantLstmErrors, Int8LayerNormIsRefused) {
  LstmFixture f = lstm_fixture::load("small_int8");
  Tensor ln;
  ln.name = "ln";
  ln.type = DType::I16;
  ln.shape = {4};
  ln.data.assign(8, 0);
  f.program.tensors.push_back(ln);
  for (int g = 0; g < 4; ++g) f.program.ops[0].inputs[static_cast<size_t>(20 + g)] = static_cast<int>(f.program.tensors.size()) - 1;
  expect_refused(f, {"layer normalization"});
}

TEST(QuantLstmErrors, Int8PerAxisWeightsAreRefused) {
  LstmFixture f = lstm_fixture::load("small_int8");
  Tensor& w = operand(f, 2);
  w.quant.scale.assign(4, w.quant.scale[0]);
  w.quant.zero_point.assign(4, 0);
  expect_refused(f, {"input_to_forget_weights", "per-axis"});
}

TEST(QuantLstmErrors, Int8CellScaleMustBeAPowerOfTwo) {
  LstmFixture f = lstm_fixture::load("small_int8");
  operand(f, 19).quant.scale[0] = 1.5e-4f;
  expect_refused(f, {"cell_state scale", "power of two"});
}

TEST(QuantLstmErrors, Int8ZeroPointOutsideInt8IsRefused) {
  LstmFixture f = lstm_fixture::load("small_int8");
  operand(f, 18).quant.zero_point[0] = 300;
  expect_refused(f, {"output_state", "zero point 300"});
}

TEST(QuantLstmErrors, Int8HugeEffectiveScaleIsRefused) {
  LstmFixture f = lstm_fixture::load("small_int8");
  operand(f, 2).quant.scale[0] = 1e12f;
  expect_refused(f, {"effective scale"});
}

TEST(QuantLstmErrors, ConstantStateIsRefused) {
  LstmFixture f = lstm_fixture::load("small_float");
  operand(f, 18).data.assign(16, 0);
  expect_refused(f, {"output_state", "variable"});
}

// Streaming: one time step per invoke with the states carried over gives TFLite's full-sequence
// output row by row (bit for bit in int8).
template <class T>
void expect_streaming_matches(const std::string& name, double tolerance) {
  LstmFixture f = lstm_fixture::load(name);
  Op& op = f.program.ops[0];
  Tensor& in = f.program.tensors[static_cast<size_t>(op.inputs[0])];
  Tensor& out = f.program.tensors[static_cast<size_t>(op.outputs[0])];
  const int steps = in.shape[1], n_in = in.shape[2], n_out = out.shape[2];
  in.shape = {1, 1, n_in};
  out.shape = {1, 1, n_out};
  InterpreterOptions options;
  options.reset_variables_each_invoke = false;
  auto prepared = lstm_fixture::prepare(f.program, options, "scalar");
  lstm_fixture::Memory m(f.program);
  m.reset(f.program, op.inputs[18]);
  m.reset(f.program, op.inputs[19]);
  const T* x = reinterpret_cast<const T*>(f.inputs.data());  // sample 0
  const T* want = reinterpret_cast<const T*>(f.outputs.data());
  for (int t = 0; t < steps; ++t) {
    std::memcpy(m.bytes(op.inputs[0]), x + static_cast<size_t>(t) * n_in, sizeof(T) * static_cast<size_t>(n_in));
    prepared->eval(m.mem);
    const T* got = reinterpret_cast<const T*>(m.bytes(op.outputs[0]));
    for (int k = 0; k < n_out; ++k) {
      const double w = static_cast<double>(want[static_cast<size_t>(t) * n_out + k]);
      EXPECT_NEAR(static_cast<double>(got[k]), w, tolerance) << name << " step " << t << " unit " << k;
    }
  }
}

TEST(QuantLstmStreaming, Int8StateCarriesOverBitExact) { expect_streaming_matches<int8_t>("small_seq_int8", 0.0); }
TEST(QuantLstmStreaming, FloatStateCarriesOver) { expect_streaming_matches<float>("small_seq_float", 1e-6); }
TEST(QuantLstmStreaming, HybridStateCarriesOver) { expect_streaming_matches<float>("wide_seq_dynamic", 1e-5); }

// With batch 1, [time, 1, features] (time_major) holds the same bytes as [1, time, features].
TEST(QuantLstmLayout, TimeMajorBatchOneMatches) {
  LstmFixture f = lstm_fixture::load("small_seq_int8");
  Op& op = f.program.ops[0];
  op.options.time_major = true;
  Tensor& in = f.program.tensors[static_cast<size_t>(op.inputs[0])];
  Tensor& out = f.program.tensors[static_cast<size_t>(op.outputs[0])];
  in.shape = {in.shape[1], 1, in.shape[2]};
  out.shape = {out.shape[1], 1, out.shape[2]};
  InterpreterOptions options;
  auto prepared = lstm_fixture::prepare(f.program, options, "scalar");
  EXPECT_EQ(lstm_fixture::run_all(f, *prepared), f.outputs);
}

}  // namespace
