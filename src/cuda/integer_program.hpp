// A full-integer (int8) TFLite or .tkq program as the CUDA backend runs it: one step per op, each
// a plain-old-data record (kernels take it by value) over one byte arena, every parameter (int8
// filters, int32 biases, multipliers and shifts, double scales, tables, index maps) at a byte
// offset into one parameter buffer. The engine fills it from the interpreter's own integer forms
// (engine/cuda_integer_lowering.cpp, tflite/integer_form.hpp), so every multiplier, shift, table
// and clamp is the CPU op's; the steps (integer_steps.cuh) do TFLite's integer arithmetic, which
// has one answer on any machine: the same bits on a GPU (integer_graph.cu) and on the host
// (integer_program_host.cpp), where machines without a GPU test it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tickinfer::cuda {

enum class IntKind : int32_t {
  Gather,
  Table,
  Binary,
  FullyConnected,
  Conv2D,
  DepthwiseConv2D,
  MaxPool,
  AvgPool,
  Reduce,
  Softmax,  // one item per row (outer rows of inner)
  Lstm,     // the integer LSTM: one block walks the time steps (tflite/integer_form.hpp)
  Count
};
enum IntRequant : int32_t { kRequantDouble, kRequantSingle, kRequantScaled };
enum IntRaw : int32_t { kRawAdd, kRawSub, kRawMul, kRawSquaredDifference };

struct IntegerStep {
  IntKind kind = IntKind::Gather;
  int64_t count = 0;  // output elements: the step's items
  // Arena byte offsets; -1: none.
  int64_t in = -1, in2 = -1, out = -1;
  // Parameter byte offsets (8-byte aligned); -1: none. weights int8; bias, multiplier, shift,
  // table_a/table_b, index_a/index_b, source int32; scale double; table int8[256] (Gather: one
  // per input, index_a naming each element's).
  int64_t weights = -1, bias = -1, multiplier = -1, shift = -1, scale = -1, table = -1, table_a = -1, table_b = -1,
          index_a = -1, index_b = -1, source = -1;
  // FullyConnected and Conv2D: each filter row's sum (int32; a unit's, or a channel's at one tap),
  // so the input offset's share of a sum is one product.
  int64_t row_sums = -1;
  int32_t requant = kRequantDouble, raw = kRawAdd;
  int32_t per_channel = 0;  // 1: multiplier/shift/scale per unit or output channel; 0: one
  int32_t in_offset = 0, out_zp = 0, lo = -128, hi = 127, off_a = 0, off_b = 0, fill = 0;
  int32_t batch = 1, units = 0, depth = 0;
  int32_t in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0;
  int32_t filter_h = 1, filter_w = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_h = 0, pad_w = 0;
  int32_t depth_multiplier = 1;
  int64_t outer = 0, reduced = 0, inner = 0;
  // Lstm: weights / weights_h the stacked W_x / W_h, bias / bias_h, multiplier+shift (x) and
  // multiplier_h+shift_h (h) per row, tables the sigmoid, tanh-of-gate and tanh-of-cell tables
  // (65536 int16 each); in the arena the state h (int8), the cell c (int16) and the gates
  // (int16 per row). Sizes: batch, time (lstm_time), input (depth), cell (units), rows.
  int64_t weights_h = -1, bias_h = -1, multiplier_h = -1, shift_h = -1, tables = -1;
  int64_t state = -1, cell = -1, scratch = -1;
  int32_t lstm_time = 0, rows = 0, time_major = 0, cell_shift = 0, cell_clip = 0;
  int32_t hidden_multiplier = 0, hidden_shift = 0, state_zp = 0;
  int32_t gate_row[4] = {};  // input, forget, cell, output
};

struct ByteRegion {
  int64_t offset = 0, bytes = 0;
};

struct IntegerProgram {
  std::string name;                  // the model, for messages
  std::vector<IntegerStep> steps;    // in run order
  std::vector<std::string> labels;   // per step: the op and its layer
  std::vector<uint8_t> params;       // every step's parameters
  // The arena's first bytes: constants a step reads as an operand (a CONCATENATION's constant
  // part, an ADD's constant tensor) live here, written once when the program starts.
  std::vector<uint8_t> arena_image;
  int64_t arena_bytes = 0;
  std::vector<ByteRegion> inputs;    // where each int8 input is copied before the steps
  std::vector<ByteRegion> outputs;   // where each int8 output is read after them
};

// Empty when every step's offsets and extents lie inside the arena and the parameters; else
// what is wrong, naming the step.
std::string integer_program_error(const IntegerProgram& p);
// Whether a step runs as one thread block that walks its time steps with block barriers (the
// LSTM), or as independent items spread over a grid.
inline bool integer_one_block(const IntegerStep& s) { return s.kind == IntKind::Lstm; }
// Multiply-accumulates of one run (FULLY_CONNECTED, the convolutions, the LSTM).
int64_t integer_program_macs(const IntegerProgram& p);
// Batched rows: row b's arena starts b * integer_row_stride(p) bytes on (256-byte aligned), its
// constants copied in; "" when the program has one input and one output, else why not.
int64_t integer_row_stride(const IntegerProgram& p);
std::string integer_why_not_batched(const IntegerProgram& p);

}  // namespace tickinfer::cuda
