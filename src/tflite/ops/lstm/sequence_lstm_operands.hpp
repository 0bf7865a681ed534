#pragma once
// The 24 operands of UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite order), checked once and shared by the
// float, bf16-weight, hybrid and integer (8x8_16) variants of the op.
//
// Layout (interop facts, section 5): 0 input [batch, time, n_input] ([time, batch, n_input] when
// time_major); 1-4 input_to_{i,f,c,o} weights [n_cell, n_input]; 5-8 recurrent_to_{i,f,c,o}
// [n_cell, n_output]; 9-11 cell_to_{i,f,o} peepholes [n_cell] (optional); 12-15 {i,f,c,o} gate
// biases [n_cell]; 16 projection weights [n_output, n_cell] and 17 projection bias [n_output]
// (optional); 18 output_state [batch, n_output] and 19 cell_state [batch, n_cell] (variable
// tensors); 20-23 layer-norm coefficients [n_cell] (optional). A missing input gate (1, 5, 12)
// means CIFG: i = 1 - f.
#include <cstdint>
#include <string>
#include <vector>

#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops::lstm {

// Gate order everywhere in this module: input, forget, cell, output.
enum Gate : int { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3 };
inline constexpr int kGates = 4;

// Operand indices into Op::inputs.
inline constexpr int kInput = 0;
inline constexpr int kInputToGate = 1;       // + gate
inline constexpr int kRecurrentToGate = 5;   // + gate
inline constexpr int kCellToInput = 9, kCellToForget = 10, kCellToOutput = 11;
inline constexpr int kGateBias = 12;         // + gate
inline constexpr int kProjectionWeights = 16, kProjectionBias = 17;
inline constexpr int kOutputState = 18, kCellState = 19;
inline constexpr int kLayerNorm = 20;        // + gate

struct LstmOperands {
  int n_batch = 0, n_time = 0, n_input = 0, n_cell = 0, n_output = 0;
  bool time_major = false;
  bool cifg = false;        // no input gate
  bool peephole = false;    // cell_to_{i,f,o} present (cell_to_i absent under CIFG)
  bool projection = false;  // projection weights present
  bool layer_norm = false;  // layer-norm coefficients present

  // Tensor indices into Program::tensors; -1 when absent. Peepholes are indexed by gate too
  // (kCellGate never has one).
  int input = -1, output = -1, output_state = -1, cell_state = -1;
  int input_weights[kGates] = {-1, -1, -1, -1};
  int recurrent_weights[kGates] = {-1, -1, -1, -1};
  int peephole_weights[kGates] = {-1, -1, -1, -1};
  int bias[kGates] = {-1, -1, -1, -1};
  int layer_norm_weights[kGates] = {-1, -1, -1, -1};
  int projection_weights = -1, projection_bias = -1;

  bool has_gate(int g) const { return !(cifg && g == kInputGate); }
  // Row offsets of a (batch b, time t) step in the input and output tensors.
  int64_t input_row(int b, int t) const {
    return (time_major ? int64_t{t} * n_batch + b : int64_t{b} * n_time + t) * n_input;
  }
  int64_t output_row(int b, int t) const {
    return (time_major ? int64_t{t} * n_batch + b : int64_t{b} * n_time + t) * n_output;
  }

  // The float and hybrid forms' eval (the integer form runs its steps in chunks, the chunk's input
  // terms first): the state tensors hold one row per batch entry; each batch entry runs its
  // time steps in order, step(x_row, h, c, y_row) updating h and c in place. In and C are the
  // form's element types (float and float; int8 with an int16 cell state).
  template <class In, class C, class Step>
  void for_each_step(const TensorMemory& mem, Step&& step) const noexcept {
    const In* in = mem.at<In>(input);
    In* out = mem.at<In>(output);
    In* h_state = mem.at<In>(output_state);
    C* c_state = mem.at<C>(cell_state);
    for (int b = 0; b < n_batch; ++b) {
      In* h = h_state + static_cast<size_t>(b) * n_output;
      C* c = c_state + static_cast<size_t>(b) * n_cell;
      for (int t = 0; t < n_time; ++t) step(in + input_row(b, t), h, c, out + output_row(b, t));
    }
  }
};

// Checks operand count, presence rules (CIFG, peephole and layer-norm all-or-none, projection
// bias only with projection weights), shapes, and that the weights are constants and the states
// variable tensors of the right size. Types are the variant's business. Throws tickinfer::Error
// naming the op and the operand.
LstmOperands parse_lstm_operands(const PrepareContext& ctx);

// A constant tensor's data as float: F32 as is, BF16 widened (the upper 16 bits of an fp32).
// Fails (naming the op and `what`) for any other type.
std::vector<float> constant_as_f32(const PrepareContext& ctx, int tensor, const char* what);

// Human-readable operand name for error messages: "input_to_forget_weights" etc.
const char* operand_name(int operand);

}  // namespace tickinfer::tfl::ops::lstm
