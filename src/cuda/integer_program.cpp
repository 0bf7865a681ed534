// The integer program's checks (plain C++: built with or without nvcc, since the engine builds
// programs and the host runner runs them everywhere).
#include "cuda/integer_program.hpp"

#include <algorithm>

namespace tickinfer::cuda {
namespace {

// The extent each step reads and writes, from its own sizes.
struct Extents {
  int64_t in = 0, in2 = 0, weights = 0, per_channel = 1;
};

Extents extents(const IntegerStep& s) {
  Extents e;
  const int64_t in_pixels = int64_t(s.batch) * s.in_h * s.in_w * s.in_c;
  switch (s.kind) {
    case IntKind::Table: e.in = s.count; break;
    case IntKind::FullyConnected:
      e.in = int64_t(s.batch) * s.depth;
      e.weights = int64_t(s.units) * s.depth;
      e.per_channel = s.units;
      break;
    case IntKind::Conv2D:
      e.in = in_pixels;
      e.weights = int64_t(s.out_c) * s.filter_h * s.filter_w * s.in_c;
      e.per_channel = s.out_c;
      break;
    case IntKind::DepthwiseConv2D:
      e.in = in_pixels;
      e.weights = int64_t(s.filter_h) * s.filter_w * s.out_c;
      e.per_channel = s.out_c;
      break;
    case IntKind::MaxPool:
    case IntKind::AvgPool: e.in = in_pixels; break;
    case IntKind::Reduce: e.in = s.outer * s.reduced * s.inner; break;
    case IntKind::Softmax: e.in = s.outer * s.inner; break;
    case IntKind::Lstm:
      e.in = int64_t(s.batch) * s.lstm_time * s.depth;
      e.weights = int64_t(s.rows) * s.depth;
      e.per_channel = s.rows;
      break;
    default: break;
  }
  return e;
}

bool inside(int64_t at, int64_t n, int64_t size) { return at >= 0 && n >= 0 && at + n <= size; }

// The LSTM's own extents: its gates, state, matrices, per-row scales and tables.
std::string lstm_error(const IntegerStep& s, int64_t arena, int64_t params) {
  const int64_t n = s.units, rows = s.rows;
  if (n < 1 || rows != 4 * n || s.batch < 1 || s.lstm_time < 1 || s.depth < 1) return "LSTM sizes do not fit";
  for (int g = 0; g < 4; ++g)
    if (s.gate_row[g] < 0 || s.gate_row[g] + n > rows) return "a gate's rows lie outside the stack";
  if (s.cell_shift < 0 || s.cell_shift > 31) return "the cell shift is out of range";
  if (!inside(s.state, int64_t(s.batch) * n, arena) || !inside(s.cell, 2 * int64_t(s.batch) * n, arena) ||
      !inside(s.scratch, 2 * rows, arena))
    return "its state or gates lie outside the arena";
  if (!inside(s.weights_h, rows * n, params) || !inside(s.bias, 4 * rows, params) || !inside(s.bias_h, 4 * rows, params))
    return "its recurrent matrix or biases lie outside the parameters";
  for (int64_t at : {s.multiplier, s.shift, s.multiplier_h, s.shift_h})
    if (!inside(at, 4 * rows, params)) return "its gate scales lie outside the parameters";
  if (!inside(s.tables, 3 * 65536 * 2, params)) return "its activation tables lie outside the parameters";
  return {};
}

}  // namespace

std::string integer_program_error(const IntegerProgram& p) {
  const int64_t arena = p.arena_bytes, params = int64_t(p.params.size());
  if (int64_t(p.arena_image.size()) > arena) return "the arena image is larger than the arena";
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const IntegerStep& s = p.steps[i];
    const std::string where = "integer step " + std::to_string(i) + (i < p.labels.size() ? " (" + p.labels[i] + ")" : "");
    const Extents e = extents(s);
    if (!inside(s.out, s.count, arena)) return where + ": its output lies outside the arena";
    if (s.kind != IntKind::Gather && s.kind != IntKind::Binary && !inside(s.in, e.in, arena))
      return where + ": its input lies outside the arena";
    if (s.kind == IntKind::Binary) {
      const int64_t na = s.index_a < 0 ? s.count : 0, nb = s.index_b < 0 ? s.count : 0;
      if (!inside(s.in, na, arena) || !inside(s.in2, nb, arena)) return where + ": an operand lies outside the arena";
    }
    const int64_t channels = s.per_channel ? e.per_channel : 1;
    if (s.weights >= 0 && !inside(s.weights, e.weights, params)) return where + ": its filter lies outside the parameters";
    if ((s.kind == IntKind::FullyConnected || s.kind == IntKind::Conv2D) &&
        !inside(s.row_sums, 4 * (e.weights / std::max(s.kind == IntKind::Conv2D ? s.in_c : s.depth, 1)), params))
      return where + ": its filter's row sums lie outside the parameters";
    if (s.bias >= 0 && !inside(s.bias, 4 * e.per_channel, params)) return where + ": its bias lies outside the parameters";
    if (s.kind == IntKind::Lstm) {
      if (std::string e = lstm_error(s, arena, params); !e.empty()) return where + ": " + e;
    }
    const bool requantizes = s.kind != IntKind::Gather && s.kind != IntKind::Table && s.kind != IntKind::MaxPool &&
                             s.kind != IntKind::AvgPool && s.kind != IntKind::Softmax && s.kind != IntKind::Lstm;
    if (s.requant == kRequantScaled ? !inside(s.scale, 8 * channels, params)
                                    : (requantizes &&
                                       (!inside(s.multiplier, 4 * channels, params) || !inside(s.shift, 4 * channels, params))))
      return where + ": its requantization lies outside the parameters";
    for (int64_t at : {s.source, s.index_a, s.index_b})
      if (at >= 0 && !inside(at, 4 * s.count, params)) return where + ": an index map lies outside the parameters";
    if (s.kind == IntKind::Gather) {
      if (s.source < 0) return where + ": a gather without its sources";
      const auto* source = reinterpret_cast<const int32_t*>(p.params.data() + s.source);
      for (int64_t k = 0; k < s.count; ++k)
        if (source[k] >= arena) return where + ": a gathered value lies outside the arena";
    }
    if (s.kind == IntKind::Table && !inside(s.table, 256, params)) return where + ": its table lies outside the parameters";
    if (((s.kind == IntKind::Binary && s.raw != kRawMul) || s.kind == IntKind::Softmax) &&
        (!inside(s.table_a, 1024, params) || !inside(s.table_b, 1024, params)))
      return where + ": its tables lie outside the parameters";
    if (s.kind == IntKind::Softmax && (s.inner < 1 || s.outer * s.inner != s.count))
      return where + ": its rows do not make its output";
  }
  for (const std::vector<ByteRegion>* list : {&p.inputs, &p.outputs})
    for (const ByteRegion& r : *list)
      if (!inside(r.offset, r.bytes, arena)) return "an input or output lies outside the arena";
  return {};
}

int64_t integer_program_macs(const IntegerProgram& p) {
  int64_t macs = 0;
  for (const IntegerStep& s : p.steps) {
    if (s.kind == IntKind::FullyConnected) macs += s.count * s.depth;
    if (s.kind == IntKind::Conv2D) macs += s.count * s.filter_h * s.filter_w * s.in_c;
    if (s.kind == IntKind::DepthwiseConv2D) macs += s.count * s.filter_h * s.filter_w;
    if (s.kind == IntKind::Lstm) macs += int64_t(s.batch) * s.lstm_time * s.rows * (s.depth + s.units);
  }
  return macs;
}

int64_t integer_row_stride(const IntegerProgram& p) { return (std::max<int64_t>(p.arena_bytes, 1) + 255) / 256 * 256; }

std::string integer_why_not_batched(const IntegerProgram& p) {
  if (p.inputs.size() != 1 || p.outputs.size() != 1)
    return "rows side by side need one int8 input and one int8 output (this program has " +
           std::to_string(p.inputs.size()) + " and " + std::to_string(p.outputs.size()) + ")";
  return {};
}

}  // namespace tickinfer::cuda
