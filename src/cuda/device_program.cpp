// The graph form's program, its shape on the grid and its checks (plain C++: built with or
// without nvcc, since the engine builds programs and the host runner runs them everywhere).
#include "cuda/device_program.hpp"

#include <algorithm>

#include "cuda/device_step_common.cuh"
#include "cuda/half_bits.hpp"
#include "kernels/activation_spec.hpp"

namespace tickinfer::cuda {

static_assert(int(ActKind::Relu) == steps::kRelu && int(ActKind::Softmax) == steps::kSoftmax &&
                  int(ActKind::Exponential) == steps::kExponential,
              "device_step_common.cuh's activation numbers follow ActKind");

bool runs_as_one_block(const DeviceStep& s) {
  switch (s.kind) {
    case DevKind::Lstm:
    case DevKind::LstmWindow:
    case DevKind::Gru:
    case DevKind::GruClassic:
      return true;
    case DevKind::Attention:
      return s.attention_stream;
    default:
      return false;
  }
}

int64_t step_items(const DeviceStep& s) {
  switch (s.kind) {
    case DevKind::Dense:
    case DevKind::Affine:
      return int64_t(s.rows) * s.out_width;
    case DevKind::Softmax:
    case DevKind::LayerNorm:
      return s.rows;
    case DevKind::Conv1D:
      return int64_t(s.steps) * s.out_width;
    case DevKind::Conv2D:
    case DevKind::DepthwiseConv2D:
      return int64_t(s.steps) * s.out_w * s.out_width;
    case DevKind::MaxPool:
    case DevKind::AvgPool:
      return int64_t(s.steps) * s.in_ch;
    case DevKind::GlobalAvgPool:
    case DevKind::GlobalMaxPool:
      return s.in_ch;
    case DevKind::MaxPool2D:
    case DevKind::AvgPool2D:
      return int64_t(s.steps) * s.out_w * s.in_ch;
    case DevKind::Concat: {
      int64_t total = 0;
      for (int e = 0; e < s.n_extra; ++e) total += s.concat_widths[e];
      return s.rows * total;
    }
    case DevKind::Attention:
      return int64_t(s.heads) * s.steps;
    case DevKind::Transpose: {
      int64_t total = 1;
      for (int a = 0; a < s.rank; ++a) total *= s.in_shape[a];
      return total;
    }
    case DevKind::MatMul:
      return int64_t(s.steps) * s.rows * s.out_width;
    default:  // Activation, Add, Sub, Mul, Pad, Slice, ReverseRows: out_width floats
      return s.out_width;
  }
}

bool step_has_16bit_tensors(const DeviceStep& s) {
  if (s.in_format != kWeightsFp32 || s.rhs_format != kWeightsFp32 || s.out_format != kWeightsFp32) return true;
  for (int e = 0; e < s.n_extra && e < kDevMaxInputs; ++e)
    if (s.extra_format[e] != kWeightsFp32) return true;
  return false;
}

std::string program_error(const DeviceProgram& p) {
  const int64_t arena = p.arena_floats, weights = int64_t(p.weights.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const DeviceStep& s = p.steps[i];
    const std::string where = "step " + std::to_string(i) + (i < p.labels.size() ? " (" + p.labels[i] + ")" : "");
    if (int(s.kind) < 0 || s.kind >= DevKind::Count) return where + ": unknown kind";
    // A 16-bit tensor's offset counts 16-bit units: twice as many fit in the arena.
    const auto known = [](int32_t f) { return f >= kWeightsFp32 && f <= kWeightsFp16; };
    const auto units = [&](int32_t f) { return f == kWeightsFp32 ? arena : 2 * arena; };
    if (!known(s.in_format) || !known(s.rhs_format) || !known(s.out_format)) return where + ": unknown tensor format";
    if (s.in < -1 || s.in >= units(s.in_format) || s.rhs < -1 || s.rhs >= units(s.rhs_format) || s.out < -1 ||
        s.out >= units(s.out_format))
      return where + ": an arena offset outside the arena";
    for (int64_t off : {s.state, s.scratch})
      if (off < -1 || off >= arena) return where + ": an arena offset outside the arena";
    if (s.kind == DevKind::Attention && s.out_format != kWeightsFp32)
      return where + ": attention accumulates in its output, which must be fp32";
    if (s.n_extra < 0 || s.n_extra > kDevMaxInputs) return where + ": too many inputs";
    for (int e = 0; e < s.n_extra; ++e) {
      if (!known(s.extra_format[e])) return where + ": unknown tensor format";
      if (s.extra[e] < 0 || s.extra[e] >= units(s.extra_format[e])) return where + ": an input outside the arena";
    }
    if (s.weight_format < kWeightsFp32 || s.weight_format > kWeightsFp16) return where + ": unknown weight format";
    const int64_t matrix_units = s.weight_format == kWeightsFp32 ? weights : 2 * weights;
    for (int64_t off : {s.kernel, s.recurrent, s.recurrent_h, s.depthwise})
      if (off < -1 || off >= matrix_units) return where + ": a weight offset outside the weights";
    for (int64_t off : {s.bias, s.recurrent_bias, s.scale, s.shift})
      if (off < -1 || off >= weights) return where + ": a weight offset outside the weights";
    if (s.rank < 0 || s.rank > kDevMaxRank) return where + ": rank above " + std::to_string(kDevMaxRank);
  }
  for (const auto* list : {&p.inputs, &p.outputs, &p.state})
    for (const DeviceRegion& r : *list)
      if (r.offset < 0 || r.floats < 0 || r.offset + r.floats > arena) return "a region outside the arena";
  return {};
}

int64_t row_stride_floats(const DeviceProgram& p) {
  constexpr int64_t kAlignFloats = 64;
  return (std::max<int64_t>(p.arena_floats, 1) + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

std::string why_not_batched(const DeviceProgram& p) {
  // A window run's recurrent steps zero their state first; a stream run's carry it from the last.
  for (const DeviceStep& s : p.steps)
    if (s.state >= 0 && (s.kind == DevKind::Attention ? s.attention_stream : !s.zero_state))
      return "a stream plan keeps one sequence's state, so its rows cannot run side by side";
  if (p.inputs.size() != 1 || p.outputs.size() != 1)
    return "batched rows take models with one input and one output (this one has " + std::to_string(p.inputs.size()) +
           " and " + std::to_string(p.outputs.size()) + ")";
  return {};
}

}  // namespace tickinfer::cuda
