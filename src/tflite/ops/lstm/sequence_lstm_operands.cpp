// Operand checks shared by every UNIDIRECTIONAL_SEQUENCE_LSTM variant.
#include "tflite/ops/lstm/sequence_lstm_operands.hpp"

#include <cstring>
#include <string>

namespace tickinfer::tfl::ops::lstm {

namespace {

const char* const kOperandNames[24] = {
    "input",
    "input_to_input_weights", "input_to_forget_weights", "input_to_cell_weights",
    "input_to_output_weights",
    "recurrent_to_input_weights", "recurrent_to_forget_weights", "recurrent_to_cell_weights",
    "recurrent_to_output_weights",
    "cell_to_input_weights", "cell_to_forget_weights", "cell_to_output_weights",
    "input_gate_bias", "forget_gate_bias", "cell_gate_bias", "output_gate_bias",
    "projection_weights", "projection_bias",
    "output_state", "cell_state",
    "input_layer_norm_coefficients", "forget_layer_norm_coefficients",
    "cell_layer_norm_coefficients", "output_layer_norm_coefficients",
};

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// The tensor of an optional operand, or -1.
int optional(const PrepareContext& ctx, int operand) {
  const size_t i = static_cast<size_t>(operand);
  if (!ctx.has_input(i)) return -1;
  (void)ctx.input(i);  // fails, naming the op, for an index outside the program's tensors
  return ctx.input_index(i);
}

int required(const PrepareContext& ctx, int operand) {
  const int t = optional(ctx, operand);
  if (t < 0) ctx.fail(std::string("missing required operand ") + kOperandNames[operand]);
  return t;
}

void expect_shape(const PrepareContext& ctx, int operand, int tensor, std::initializer_list<int> dims) {
  const Shape& s = ctx.program.tensors[static_cast<size_t>(tensor)].shape;
  const Shape want(dims);
  if (s != want) {
    ctx.fail(std::string(kOperandNames[operand]) + " has shape " + shape_str(s) + ", expected " +
             shape_str(want));
  }
}

void expect_constant(const PrepareContext& ctx, int operand, int tensor) {
  const Tensor& t = ctx.program.tensors[static_cast<size_t>(tensor)];
  if (!t.is_constant()) {
    ctx.fail(std::string(kOperandNames[operand]) + " ('" + t.name +
             "') must be a constant tensor; run-time weights are not supported");
  }
  const size_t want = static_cast<size_t>(element_count(t.shape)) * dtype_size(t.type);
  if (t.data.size() != want) {
    ctx.fail(std::string(kOperandNames[operand]) + " ('" + t.name + "') holds " + std::to_string(t.data.size()) +
             " bytes; its shape " + shape_str(t.shape) + " and type " + dtype_name(t.type) + " need " +
             std::to_string(want));
  }
}

}  // namespace

const char* operand_name(int operand) {
  return operand >= 0 && operand < 24 ? kOperandNames[operand] : "operand";
}

LstmOperands parse_lstm_operands(const PrepareContext& ctx) {
  const Op& op = ctx.op;
  if (op.inputs.size() != 24 && op.inputs.size() != 20) {
    ctx.fail("expects 24 inputs (or the legacy 20), got " + std::to_string(op.inputs.size()));
  }
  if (op.outputs.size() != 1) ctx.fail("expects 1 output, got " + std::to_string(op.outputs.size()));

  LstmOperands o;
  o.time_major = op.options.time_major;
  o.input = required(ctx, kInput);
  (void)ctx.output(0);
  o.output = ctx.output_index(0);
  const Tensor& in = ctx.program.tensors[static_cast<size_t>(o.input)];
  if (in.shape.size() == 3) {
    o.n_time = o.time_major ? in.shape[0] : in.shape[1];
    o.n_batch = o.time_major ? in.shape[1] : in.shape[0];
    o.n_input = in.shape[2];
  } else if (in.shape.size() == 2) {  // one time step, as TFLite treats a rank-2 input
    o.n_time = 1;
    o.n_batch = in.shape[0];
    o.n_input = in.shape[1];
  } else {
    ctx.fail("input has shape " + shape_str(in.shape) + "; expected rank 3 [batch, time, features]");
  }
  if (o.n_time <= 0 || o.n_batch <= 0 || o.n_input <= 0) {
    ctx.fail("input has shape " + shape_str(in.shape) + " with an empty or unknown dimension");
  }

  for (int g = 0; g < kGates; ++g) {
    o.input_weights[g] = optional(ctx, kInputToGate + g);
    o.recurrent_weights[g] = optional(ctx, kRecurrentToGate + g);
    o.bias[g] = optional(ctx, kGateBias + g);
    if (op.inputs.size() == 24) o.layer_norm_weights[g] = optional(ctx, kLayerNorm + g);
  }
  for (int g = kForgetGate; g < kGates; ++g) {
    required(ctx, kInputToGate + g);
    required(ctx, kRecurrentToGate + g);
  }
  const int out_w = o.input_weights[kOutputGate];
  const int rec_w = o.recurrent_weights[kOutputGate];
  const Shape& ws = ctx.program.tensors[static_cast<size_t>(out_w)].shape;
  const Shape& rs = ctx.program.tensors[static_cast<size_t>(rec_w)].shape;
  if (ws.size() != 2 || rs.size() != 2) {
    ctx.fail("input_to_output_weights " + shape_str(ws) + " and recurrent_to_output_weights " +
             shape_str(rs) + " must be rank 2");
  }
  o.n_cell = ws[0];
  o.n_output = rs[1];
  if (o.n_cell <= 0 || o.n_output <= 0) ctx.fail("n_cell and n_output must be positive");

  // CIFG: the input gate's weights and bias are all present or all absent.
  const bool has_ii = o.input_weights[kInputGate] >= 0, has_ri = o.recurrent_weights[kInputGate] >= 0;
  if (has_ii != has_ri) ctx.fail("input_to_input_weights and recurrent_to_input_weights must both be present or both absent (CIFG)");
  o.cifg = !has_ii;
  if (o.cifg && o.bias[kInputGate] >= 0) ctx.fail("input_gate_bias given without input-gate weights (CIFG)");

  for (int g = 0; g < kGates; ++g) {
    if (!o.has_gate(g)) continue;
    if (o.bias[g] < 0) ctx.fail(std::string("missing required operand ") + kOperandNames[kGateBias + g]);
    expect_shape(ctx, kInputToGate + g, o.input_weights[g], {o.n_cell, o.n_input});
    expect_shape(ctx, kRecurrentToGate + g, o.recurrent_weights[g], {o.n_cell, o.n_output});
    expect_shape(ctx, kGateBias + g, o.bias[g], {o.n_cell});
    expect_constant(ctx, kInputToGate + g, o.input_weights[g]);
    expect_constant(ctx, kRecurrentToGate + g, o.recurrent_weights[g]);
    expect_constant(ctx, kGateBias + g, o.bias[g]);
  }

  // Peepholes: all present (cell_to_input only without CIFG) or all absent.
  o.peephole_weights[kInputGate] = optional(ctx, kCellToInput);
  o.peephole_weights[kForgetGate] = optional(ctx, kCellToForget);
  o.peephole_weights[kOutputGate] = optional(ctx, kCellToOutput);
  const bool pf = o.peephole_weights[kForgetGate] >= 0, po = o.peephole_weights[kOutputGate] >= 0;
  const bool pi = o.peephole_weights[kInputGate] >= 0;
  if (pf != po || (pf && pi == o.cifg) || (!pf && pi)) {
    ctx.fail("peephole weights (cell_to_*) must be all present (cell_to_input only without CIFG) or all absent");
  }
  o.peephole = pf;
  for (int g : {kInputGate, kForgetGate, kOutputGate}) {
    if (o.peephole_weights[g] < 0) continue;
    const int operand = g == kInputGate ? kCellToInput : g == kForgetGate ? kCellToForget : kCellToOutput;
    expect_shape(ctx, operand, o.peephole_weights[g], {o.n_cell});
    expect_constant(ctx, operand, o.peephole_weights[g]);
  }

  // Layer norm: forget's coefficients decide (as TFLite does); then all gates need theirs.
  o.layer_norm = o.layer_norm_weights[kForgetGate] >= 0;
  for (int g = 0; g < kGates; ++g) {
    const bool want = o.layer_norm && o.has_gate(g);
    if (want != (o.layer_norm_weights[g] >= 0)) {
      ctx.fail(std::string(kOperandNames[kLayerNorm + g]) + (want ? " is missing" : " is unexpected") +
               " (layer-norm coefficients are all present or all absent; none for the input gate under CIFG)");
    }
    if (want) {
      expect_shape(ctx, kLayerNorm + g, o.layer_norm_weights[g], {o.n_cell});
      expect_constant(ctx, kLayerNorm + g, o.layer_norm_weights[g]);
    }
  }

  o.projection_weights = optional(ctx, kProjectionWeights);
  o.projection_bias = optional(ctx, kProjectionBias);
  o.projection = o.projection_weights >= 0;
  if (!o.projection && o.projection_bias >= 0) ctx.fail("projection_bias given without projection_weights");
  if (o.projection) {
    expect_shape(ctx, kProjectionWeights, o.projection_weights, {o.n_output, o.n_cell});
    expect_constant(ctx, kProjectionWeights, o.projection_weights);
    if (o.projection_bias >= 0) {
      expect_shape(ctx, kProjectionBias, o.projection_bias, {o.n_output});
      expect_constant(ctx, kProjectionBias, o.projection_bias);
    }
  } else if (o.n_output != o.n_cell) {
    ctx.fail("without projection n_output (" + std::to_string(o.n_output) + ") must equal n_cell (" +
             std::to_string(o.n_cell) + ")");
  }
  if (op.options.cell_clip < 0.0f || op.options.proj_clip < 0.0f) ctx.fail("cell_clip and proj_clip must be >= 0");

  // States: variable (or at least non-constant) tensors of batch * size elements.
  o.output_state = required(ctx, kOutputState);
  o.cell_state = required(ctx, kCellState);
  for (int operand : {kOutputState, kCellState}) {
    const int t = operand == kOutputState ? o.output_state : o.cell_state;
    const Tensor& s = ctx.program.tensors[static_cast<size_t>(t)];
    const int64_t want = int64_t{o.n_batch} * (operand == kOutputState ? o.n_output : o.n_cell);
    if (s.is_constant()) ctx.fail(std::string(kOperandNames[operand]) + " ('" + s.name + "') must be a variable tensor, not a constant");
    if (element_count(s.shape) != want) {
      ctx.fail(std::string(kOperandNames[operand]) + " has shape " + shape_str(s.shape) + ", expected " +
               std::to_string(want) + " elements");
    }
  }

  const Tensor& out = ctx.program.tensors[static_cast<size_t>(o.output)];
  const int64_t want_out = int64_t{o.n_batch} * o.n_time * o.n_output;
  if (element_count(out.shape) != want_out || out.shape.empty() || out.shape.back() != o.n_output) {
    ctx.fail("output has shape " + shape_str(out.shape) + ", expected " + std::to_string(want_out) +
             " elements ending in n_output = " + std::to_string(o.n_output));
  }
  return o;
}

std::vector<float> constant_as_f32(const PrepareContext& ctx, int tensor, const char* what) {
  const Tensor& t = ctx.program.tensors[static_cast<size_t>(tensor)];
  const size_t n = static_cast<size_t>(element_count(t.shape));
  std::vector<float> out(n);
  if (t.type == DType::F32 && t.data.size() == n * 4) {
    std::memcpy(out.data(), t.data.data(), n * 4);
  } else if (t.type == DType::BF16 && t.data.size() == n * 2) {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, t.data.data() + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(&out[i], &bits, 4);
    }
  } else {
    ctx.fail(std::string(what) + " ('" + t.name + "') is " + dtype_name(t.type) + " with " +
             std::to_string(t.data.size()) + " bytes; expected float32 or bfloat16 data for " +
             std::to_string(n) + " elements");
  }
  return out;
}

}  // namespace tickinfer::tfl::ops::lstm
