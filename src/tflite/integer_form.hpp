#pragma once
// An int8 op's arithmetic written out whole, for an executor other than the interpreter: the
// CUDA backend's integer program (cuda/integer_program.hpp, built by
// engine/cuda_integer_lowering.cpp). A prepared op describes itself (PreparedOp::integer_form)
// from the very multipliers, shifts, tables, copy plans and clamps its own eval uses, so the
// other executor computes TFLite's bits without deriving anything again. Everything is in the
// op's own terms: tensor indices, element counts, NHWC geometry.
#include <array>
#include <cstdint>
#include <vector>

namespace tickinfer::tfl {

enum class IntegerKind : uint8_t {
  Gather,           // out[i] = fill, or element source_element[i] of input source_input[i], through its table
  Table,            // out[i] = table[uint8(in[i])]
  Binary,           // raw(a[index_a[i]], b[index_b[i]]) requantized
  FullyConnected,   // [batch, depth] x [units, depth]^T + bias, requantized per unit
  Conv2D,           // NHWC, filter [out_c, kh, kw, in_c], per output channel
  DepthwiseConv2D,  // NHWC, filter [1, kh, kw, out_c], out channel oc reads input channel oc / multiplier
  MaxPool,          // windows clipped to the input, clamped
  AvgPool,          // the int32 sum / count rounded half away from zero, clamped
  Reduce,           // MEAN / SUM over adjacent axes: input [outer, reduced, inner]
  Softmax,          // rows [outer][inner]: table_a the fixed-point exp per difference to the row's
                    // maximum, table_b its share of the sum (12 integer bits); the sum's reciprocal
                    // scales each exp, rounded twice, output zero point -128
  Lstm,             // UNIDIRECTIONAL_SEQUENCE_LSTM 8x8_16 (IntegerLstmForm), state zeroed first
};

// How an int32 accumulator becomes int8 (tflite/fixed_point.hpp, kernels/requant_scaled.hpp).
enum class RequantForm : uint8_t { Double, Single, Scaled };

// Binary's raw int32 per element pair (ops/elementwise_int8.cpp): ADD/SUB/SQUARED_DIFFERENCE
// scale each input through its 256-entry table; MUL adds the offsets and multiplies.
enum class BinaryRaw : uint8_t { Add, Sub, Mul, SquaredDifference };

// The integer LSTM without peephole, projection, CIFG or layer norm (ops/lstm/
// sequence_lstm_int8.cpp), per step: gate rows r = sat16(MBQM2(bias_x + W_x x) + MBQM2(bias_h +
// W_h h)) (MBQM2: rounding twice); i, f, o = sigmoid, g = tanh (16-bit tables); c =
// sat16(int16(rdivpot(f c, 15)) + int16(rdivpot(i g, cell_shift))), clipped; h =
// clamp8(MBQM(o tanh_cell(c), hidden) + hidden_zp), rounding as `elementwise`; y[t] = h.
struct IntegerLstmForm {
  int batch = 0, time = 0, input = 0, cell = 0;
  bool time_major = false;
  int rows = 0;                   // 4 * cell, stacked
  int gate_row[4] = {};           // first row of the input, forget, cell and output gates
  std::vector<int8_t> wx, wh;     // [rows][input], [rows][cell]
  std::vector<int32_t> bias_x, bias_h, mult_x, shift_x, mult_h, shift_h;  // per row, zero points folded
  int cell_shift = 0;             // 30 + log2 of the cell state's scale
  int16_t cell_clip = 0;          // 0: none
  int32_t hidden_multiplier = 0, hidden_shift = 0, hidden_zp = 0;
  int32_t state_zp = 0;           // the output state's zero point: h before the first step
  RequantForm elementwise = RequantForm::Double;
  // f(raw) for raw in [-32768, 32767], indexed raw + 32768 (the CPU kernels' own tables).
  const int16_t *sigmoid = nullptr, *tanh_gate = nullptr, *tanh_cell = nullptr;
  int state_h = -1, state_c = -1;  // the output_state (int8) and cell_state (int16) tensors
};

struct IntegerForm {
  IntegerKind kind = IntegerKind::Gather;
  std::vector<int> inputs;  // tensor indices read, in the kind's order (activations or constants)
  int output = -1;          // tensor index written
  int64_t count = 0;        // output elements

  // Gather: per output element its input (-1: fill) and element there; input_tables empty, or
  // one 256-entry table per input (an int8 CONCATENATION input requantized to the output's
  // parameters; the identity for an input copied as it is).
  std::vector<int32_t> source_input, source_element;
  std::vector<std::array<int8_t, 256>> input_tables;
  int8_t fill = 0;
  // Table.
  int8_t table[256] = {};
  // Binary: table_x indexed by value + 128; index_a / index_b empty when both have the output's shape.
  BinaryRaw raw = BinaryRaw::Add;
  int32_t table_a[256] = {}, table_b[256] = {};
  int32_t off_a = 0, off_b = 0;
  std::vector<int32_t> index_a, index_b;

  // Requantization (every kind but Gather, Table and the pools): one multiplier and shift, or one
  // per unit / output channel; Scaled: one double per unit instead.
  RequantForm requant = RequantForm::Double;
  std::vector<int32_t> multiplier, shift;
  std::vector<double> scale;
  int32_t in_offset = 0, out_zp = 0, lo = -128, hi = 127;

  // FullyConnected and the convolutions: the constant filter and int32 bias as the op reads
  // them (pointers into the Program, which outlives the form); bias may be null.
  const int8_t* weights = nullptr;
  int64_t weight_count = 0;
  const int32_t* bias = nullptr;
  int batch = 1, units = 0, depth = 0;
  // The convolutions and pools (ops/window.hpp's Window), and depthwise's channel multiplier.
  int in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0;
  int filter_h = 1, filter_w = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_h = 0, pad_w = 0;
  int depth_multiplier = 1;
  // Reduce: out (o, j) sums in[(o * reduced + r) * inner + j] over r, minus in_offset.
  int64_t outer = 0, reduced = 0, inner = 0;
  IntegerLstmForm lstm;
};

}  // namespace tickinfer::tfl
