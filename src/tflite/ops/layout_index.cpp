// PAD, STRIDED_SLICE, TRANSPOSE, REVERSE_V2, GATHER: each output element's source worked out from
// constant operands at prepare time (TFLite pad.cc, strided_slice.cc with strided_slice_logic.h,
// transpose.cc, reverse.cc, gather.cc).
//  PAD pads with 0 (float) or the output zero point (int8), as TFLite's pad value defaults.
//  STRIDED_SLICE: begin/end/strides with begin_mask, end_mask, shrink_axis_mask and offset;
//    ellipsis_mask and new_axis_mask are refused.
//  GATHER: constant indices, batch_dims 0; an index out of range is refused at prepare.
#include <algorithm>

#include "tflite/ops/layout_copy.hpp"

namespace tickinfer::tfl::ops {
namespace {

void require_same_quant(const PrepareContext& ctx, const Tensor& in, const Tensor& out) {
  require_same_type(ctx, in, out);
  if (in.quant.scale != out.quant.scale || in.quant.zero_point != out.quant.zero_point) {
    ctx.fail("input '" + in.name + "' and output '" + out.name + "' must have the same quantization parameters");
  }
}

void require_count(const PrepareContext& ctx, const Tensor& out, const Shape& want) {
  if (require_static(ctx, out) != element_count(want)) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " does not match the expected shape " + shape_str(want));
  }
}

std::unique_ptr<PreparedOp> pad(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_same_quant(ctx, in, out);
  require_static(ctx, in);
  const size_t rank = in.shape.size();
  const std::vector<int64_t> p = const_ints(ctx, ctx.input(1), "paddings");
  if (p.size() != 2 * rank) ctx.fail("paddings must be [" + std::to_string(rank) + ", 2]");
  Shape want(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (p[2 * d] < 0 || p[2 * d + 1] < 0 || p[2 * d] + p[2 * d + 1] > (1 << 24)) ctx.fail("paddings must be small and non-negative");
    want[d] = in.shape[d] + static_cast<int>(p[2 * d] + p[2 * d + 1]);
  }
  require_count(ctx, out, want);
  LayoutPlan plan({ctx.input_index(0)}, {ctx.output_index(0)}, layout_elem_bytes(ctx, in));
  if (in.type == DType::I8 || in.type == DType::U8) {
    const uint8_t zp = static_cast<uint8_t>(out.quant.zero_point.empty() ? 0 : out.quant.zero_point[0]);
    plan.set_fill(&zp);
  }
  const std::vector<int64_t> in_stride = strides_of(in.shape);
  std::vector<int> pos(rank, 0);
  int64_t o = 0;
  if (element_count(want) > 0) {
    do {
      int64_t src = 0;
      bool inside = true;
      for (size_t d = 0; d < rank && inside; ++d) {
        const int64_t i = pos[d] - p[2 * d];
        inside = i >= 0 && i < in.shape[d];
        src += i * in_stride[d];
      }
      plan.add(inside ? 0 : -1, inside ? src : 0, 0, o++);
    } while (next_position(pos, want));
  }
  return std::make_unique<LayoutCopy>(std::move(plan), "pad");
}

// strided_slice_logic.h StartForAxis / StopForAxis with the masks this op supports.
int start_for_axis(int64_t begin, int stride, int dim, bool masked) {
  if (masked) return stride > 0 ? 0 : dim - 1;
  int64_t s = begin < 0 ? begin + dim : begin;
  s = stride > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, -1, dim - 1);
  return static_cast<int>(s);
}
int stop_for_axis(int64_t end, int stride, int dim, bool masked, bool shrink, int start) {
  if (shrink) return start + 1;
  if (masked) return stride > 0 ? dim : -1;
  int64_t s = end < 0 ? end + dim : end;
  s = stride > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, -1, dim - 1);
  return static_cast<int>(s);
}

std::unique_ptr<PreparedOp> strided_slice(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_same_quant(ctx, in, out);
  require_static(ctx, in);
  const OpOptions& o = ctx.op.options;
  if (o.ellipsis_mask != 0 || o.new_axis_mask != 0) ctx.fail("ellipsis_mask and new_axis_mask are not supported");
  const size_t rank = in.shape.size();
  const std::vector<int64_t> begin = const_ints(ctx, ctx.input(1), "begin");
  std::vector<int64_t> end = const_ints(ctx, ctx.input(2), "end");
  const std::vector<int64_t> strides = const_ints(ctx, ctx.input(3), "strides");
  if (begin.size() != rank || end.size() != rank || strides.size() != rank) {
    ctx.fail("begin, end and strides must each hold " + std::to_string(rank) + " values");
  }
  std::vector<int> start(rank), step(rank), count(rank);
  Shape want;
  for (size_t d = 0; d < rank; ++d) {
    if (strides[d] == 0 || strides[d] > (1 << 30) || strides[d] < -(1 << 30)) ctx.fail("stride must be non-zero");
    step[d] = static_cast<int>(strides[d]);
    const bool shrink = (o.shrink_axis_mask >> d) & 1;
    if (o.offset) end[d] += begin[d];
    start[d] = start_for_axis(begin[d], step[d], in.shape[d], !shrink && ((o.begin_mask >> d) & 1));
    const int stop = stop_for_axis(end[d], step[d], in.shape[d], (o.end_mask >> d) & 1, shrink, start[d]);
    const int64_t span = step[d] > 0 ? stop - start[d] : start[d] - stop;
    const int64_t mag = step[d] > 0 ? step[d] : -static_cast<int64_t>(step[d]);
    count[d] = span <= 0 ? 0 : static_cast<int>((span + mag - 1) / mag);
    if (shrink) {
      if (count[d] != 1 || start[d] < 0 || start[d] >= in.shape[d]) ctx.fail("shrink axis " + std::to_string(d) + " index out of range");
    } else {
      want.push_back(count[d]);
    }
  }
  require_count(ctx, out, want);
  LayoutPlan plan({ctx.input_index(0)}, {ctx.output_index(0)}, layout_elem_bytes(ctx, in));
  const std::vector<int64_t> in_stride = strides_of(in.shape);
  const Shape counts(count.begin(), count.end());
  if (element_count(counts) > 0) {
    std::vector<int> pos(rank, 0);
    int64_t o_off = 0;
    do {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += (start[d] + static_cast<int64_t>(pos[d]) * step[d]) * in_stride[d];
      plan.add(0, src, 0, o_off++);
    } while (next_position(pos, counts));
  }
  return std::make_unique<LayoutCopy>(std::move(plan), "strided slice");
}

std::unique_ptr<PreparedOp> transpose(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_same_quant(ctx, in, out);
  require_static(ctx, in);
  const size_t rank = in.shape.size();
  const std::vector<int64_t> perm = const_ints(ctx, ctx.input(1), "perm");
  if (perm.size() != rank) ctx.fail("perm must hold " + std::to_string(rank) + " values");
  std::vector<bool> seen(rank, false);
  Shape want(rank);
  std::vector<size_t> p(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t a = perm[d] < 0 ? perm[d] + static_cast<int64_t>(rank) : perm[d];
    if (a < 0 || a >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(a)]) ctx.fail("perm is not a permutation");
    seen[static_cast<size_t>(a)] = true;
    p[d] = static_cast<size_t>(a);
    want[d] = in.shape[p[d]];
  }
  require_count(ctx, out, want);
  LayoutPlan plan({ctx.input_index(0)}, {ctx.output_index(0)}, layout_elem_bytes(ctx, in));
  const std::vector<int64_t> in_stride = strides_of(in.shape);
  if (element_count(want) > 0) {
    std::vector<int> pos(rank, 0);
    int64_t o_off = 0;
    do {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += pos[d] * in_stride[p[d]];
      plan.add(0, src, 0, o_off++);
    } while (next_position(pos, want));
  }
  return std::make_unique<LayoutCopy>(std::move(plan), "transpose");
}

// REVERSE_V2: the converter's form of Keras' go_backwards and of Bidirectional's backward layer
// (the time axis reversed before the loop, and its outputs reversed back). Each listed axis once.
std::unique_ptr<PreparedOp> reverse(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_same_quant(ctx, in, out);
  require_static(ctx, in);
  const size_t rank = in.shape.size();
  std::vector<bool> flip(rank, false);
  if (ctx.input(1).type != DType::I32) ctx.fail("axis '" + ctx.input(1).name + "' must be int32");
  for (int64_t a : const_ints(ctx, ctx.input(1), "axis")) {
    const int64_t d = a < 0 ? a + static_cast<int64_t>(rank) : a;
    if (d < 0 || d >= static_cast<int64_t>(rank)) ctx.fail("axis " + std::to_string(a) + " is out of range for " + shape_str(in.shape));
    if (flip[static_cast<size_t>(d)]) ctx.fail("axis " + std::to_string(a) + " is listed twice");
    flip[static_cast<size_t>(d)] = true;
  }
  // TFLite's kernel reverses one contiguous run of axes; a file listing others fails there too.
  const auto first = std::find(flip.begin(), flip.end(), true);
  const auto past = std::find(first, flip.end(), false);
  if (std::find(past, flip.end(), true) != flip.end()) ctx.fail("the reversed axes are not contiguous (TFLite refuses them too)");
  if (require_static(ctx, out) != element_count(in.shape) || out.shape != in.shape) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " is not the input's shape " + shape_str(in.shape));
  }
  LayoutPlan plan({ctx.input_index(0)}, {ctx.output_index(0)}, layout_elem_bytes(ctx, in));
  const std::vector<int64_t> in_stride = strides_of(in.shape);
  if (element_count(in.shape) > 0) {
    std::vector<int> pos(rank, 0);
    int64_t o_off = 0;
    do {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += (flip[d] ? in.shape[d] - 1 - pos[d] : pos[d]) * in_stride[d];
      plan.add(0, src, 0, o_off++);
    } while (next_position(pos, in.shape));
  }
  return std::make_unique<LayoutCopy>(std::move(plan), "reverse");
}

std::unique_ptr<PreparedOp> gather(const PrepareContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_same_quant(ctx, params, out);
  require_static(ctx, params);
  const Tensor& idx_t = ctx.input(1);
  if (!idx_t.is_constant()) ctx.fail("indices '" + idx_t.name + "' must be a constant tensor");
  const std::vector<int64_t> idx = const_ints(ctx, idx_t, "indices");
  const int axis = ctx.op.options.axis < 0 ? ctx.op.options.axis + static_cast<int>(params.shape.size()) : ctx.op.options.axis;
  if (axis < 0 || axis >= static_cast<int>(params.shape.size())) ctx.fail("axis is out of range");
  const int dim = params.shape[static_cast<size_t>(axis)];
  for (int64_t i : idx)
    if (i < 0 || i >= dim) ctx.fail("index " + std::to_string(i) + " is out of range [0, " + std::to_string(dim) + ")");
  Shape want(params.shape.begin(), params.shape.begin() + axis);
  want.insert(want.end(), idx_t.shape.begin(), idx_t.shape.end());
  want.insert(want.end(), params.shape.begin() + axis + 1, params.shape.end());
  require_count(ctx, out, want);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= params.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < params.shape.size(); ++d) inner *= params.shape[d];
  LayoutPlan plan({ctx.input_index(0)}, {ctx.output_index(0)}, layout_elem_bytes(ctx, params));
  int64_t o_off = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx)
      for (int64_t k = 0; k < inner; ++k) plan.add(0, (o * dim + i) * inner + k, 0, o_off++);
  return std::make_unique<LayoutCopy>(std::move(plan), "gather");
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_index_map(const PrepareContext& ctx) {
  switch (ctx.op.code) {
    case OpCode::Pad: return pad(ctx);
    case OpCode::StridedSlice: return strided_slice(ctx);
    case OpCode::Transpose: return transpose(ctx);
    case OpCode::ReverseV2: return reverse(ctx);
    case OpCode::Gather: return gather(ctx);
    default: break;
  }
  ctx.fail("not an index-map layout op");
}

}  // namespace tickinfer::tfl::ops
