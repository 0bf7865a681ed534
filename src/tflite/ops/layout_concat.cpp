// CONCATENATION, SPLIT, PACK, UNPACK: blocks along one axis. With outer = the product of the
// dimensions before the axis, each op copies, for every outer index, one contiguous block per
// input (or output) in order.
// int8 CONCATENATION: TFLite's int8 kernel requires every input to share the output's scale and
// zero point (the converter arranges that); an input that does not is requantized as TFLite's
// ConcatenationWithScaling does for uint8: round(q * s + b) + zp_out with s = in_scale / out_scale
// and b = -zp_in * s in float, clamped.
#include <cmath>

#include "tflite/fixed_point.hpp"
#include "tflite/ops/layout_copy.hpp"

namespace tickinfer::tfl::ops {
namespace {

int resolve_axis(const PrepareContext& ctx, int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

bool same_quant(const Tensor& a, const Tensor& b) {
  return a.quant.scale == b.quant.scale && a.quant.zero_point == b.quant.zero_point;
}

void build_requant_lut(const AffineParams& in, const AffineParams& out, kernels::LutS8* lut) {
  const float scale = in.scale * (1.0f / out.scale);
  const float bias = -static_cast<float>(in.zero_point) * scale;
  kernels::build_lut_s8(
      [&](int32_t q) {
        const int32_t v = round_to_int32_saturated(static_cast<float>(q) * scale + bias) + out.zero_point;
        return static_cast<int8_t>(std::min(std::max(v, -128), 127));
      },
      lut);
}

// Blocks: tensor `big` is the concatenation of `parts` along `axis`; `gather` true copies parts
// into big (CONCATENATION, PACK), false copies big into the parts (SPLIT, UNPACK).
std::unique_ptr<PreparedOp> blocks(const PrepareContext& ctx, const std::vector<int>& parts, int big, int axis_in_big,
                                   const std::vector<int64_t>& part_axis_len, bool gather, const char* what) {
  const Tensor& b = ctx.program.tensors[static_cast<size_t>(big)];
  const size_t elem = layout_elem_bytes(ctx, b);
  const int64_t outer = product(b.shape, 0, static_cast<size_t>(axis_in_big));
  const int64_t inner = product(b.shape, static_cast<size_t>(axis_in_big) + 1, b.shape.size());
  std::vector<int> ins = gather ? parts : std::vector<int>{big};
  std::vector<int> outs = gather ? std::vector<int>{big} : parts;
  LayoutPlan plan(ins, outs, elem);
  int64_t big_off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t p = 0; p < parts.size(); ++p) {
      const int64_t len = part_axis_len[p] * inner;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t part_off = o * len + k;
        if (gather) plan.add(static_cast<int32_t>(p), part_off, 0, big_off + k);
        else plan.add(0, big_off + k, static_cast<int32_t>(p), part_off);
      }
      big_off += len;
    }
  }
  if (gather && b.type == DType::I8) {
    for (size_t p = 0; p < parts.size(); ++p) {
      const Tensor& t = ctx.program.tensors[static_cast<size_t>(parts[p])];
      if (same_quant(t, b)) continue;
      if (ctx.op.code != OpCode::Concatenation) ctx.fail("int8 inputs must share the output's quantization parameters");
      kernels::LutS8 lut{};
      build_requant_lut(per_tensor_params(ctx, t, "input"), per_tensor_params(ctx, b, "output"), &lut);
      plan.set_lut(p, lut);
    }
  }
  if (!gather && b.type == DType::I8) {
    for (int p : parts) {
      if (!same_quant(ctx.program.tensors[static_cast<size_t>(p)], b)) {
        ctx.fail("int8 outputs must share the input's quantization parameters");
      }
    }
  }
  return std::make_unique<LayoutCopy>(std::move(plan), what);
}

void require_shape(const PrepareContext& ctx, const Tensor& t, const Shape& want) {
  require_static(ctx, t);
  if (t.shape != want) ctx.fail("tensor '" + t.name + "' has shape " + shape_str(t.shape) + ", expected " + shape_str(want));
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_concat_split(const PrepareContext& ctx) {
  const OpOptions& o = ctx.op.options;
  switch (ctx.op.code) {
    case OpCode::Concatenation: {
      if (o.activation != FusedActivation::None) ctx.fail("a fused activation on CONCATENATION is not supported");
      const Tensor& out = ctx.output(0);
      require_static(ctx, out);
      const int axis = resolve_axis(ctx, o.axis, out.shape.size());
      std::vector<int> parts;
      std::vector<int64_t> lens;
      int64_t total = 0;
      for (size_t i = 0; i < ctx.op.inputs.size(); ++i) {
        const Tensor& t = ctx.input(i);
        require_same_type(ctx, t, out);
        require_static(ctx, t);
        Shape want = out.shape;
        if (t.shape.size() != want.size()) ctx.fail("input '" + t.name + "' " + shape_str(t.shape) + " has the wrong rank");
        want[static_cast<size_t>(axis)] = t.shape[static_cast<size_t>(axis)];
        require_shape(ctx, t, want);
        parts.push_back(ctx.input_index(i));
        lens.push_back(t.shape[static_cast<size_t>(axis)]);
        total += lens.back();
      }
      if (parts.empty()) ctx.fail("no inputs");
      if (total != out.shape[static_cast<size_t>(axis)]) ctx.fail("output '" + out.name + "' does not hold the inputs' sum along the axis");
      return blocks(ctx, parts, ctx.output_index(0), axis, lens, true, "concatenation");
    }
    case OpCode::Split: {
      const Tensor& in = ctx.input(1);
      require_static(ctx, in);
      const std::vector<int64_t> a = const_ints(ctx, ctx.input(0), "axis");
      if (a.size() != 1) ctx.fail("axis must be one value");
      const int axis = resolve_axis(ctx, a[0], in.shape.size());
      const int n = static_cast<int>(ctx.op.outputs.size());
      if (n < 1 || (o.num != 0 && o.num != n)) ctx.fail("num_splits " + std::to_string(o.num) + " does not match the outputs");
      const int dim = in.shape[static_cast<size_t>(axis)];
      if (dim % n != 0) ctx.fail("dimension " + std::to_string(dim) + " does not split into " + std::to_string(n));
      Shape want = in.shape;
      want[static_cast<size_t>(axis)] = dim / n;
      std::vector<int> parts;
      for (int i = 0; i < n; ++i) {
        const Tensor& t = ctx.output(static_cast<size_t>(i));
        require_same_type(ctx, t, in);
        require_shape(ctx, t, want);
        parts.push_back(ctx.output_index(static_cast<size_t>(i)));
      }
      return blocks(ctx, parts, ctx.input_index(1), axis, std::vector<int64_t>(static_cast<size_t>(n), dim / n), false, "split");
    }
    case OpCode::SplitV: {  // parts of the sizes size_splits names (one -1: the rest)
      const Tensor& in = ctx.input(0);
      require_static(ctx, in);
      const std::vector<int64_t> a = const_ints(ctx, ctx.input(2), "axis");
      if (a.size() != 1) ctx.fail("axis must be one value");
      const int axis = resolve_axis(ctx, a[0], in.shape.size());
      std::vector<int64_t> lens = const_ints(ctx, ctx.input(1), "size_splits");
      const int n = static_cast<int>(ctx.op.outputs.size());
      if (static_cast<int>(lens.size()) != n || (o.num != 0 && o.num != n)) {
        ctx.fail("size_splits has " + std::to_string(lens.size()) + " sizes for " + std::to_string(n) + " outputs");
      }
      const int64_t dim = in.shape[static_cast<size_t>(axis)];
      int64_t known = 0, rest = -1;
      for (size_t i = 0; i < lens.size(); ++i) {
        if (lens[i] == -1 && rest < 0) {
          rest = static_cast<int64_t>(i);
        } else if (lens[i] < 0 || lens[i] > dim) {
          ctx.fail("size_splits[" + std::to_string(i) + "] = " + std::to_string(lens[i]) + " is not a size of " + std::to_string(dim));
        } else {
          known += lens[i];
        }
      }
      if (known > dim || (rest < 0 && known != dim)) ctx.fail("size_splits do not add up to dimension " + std::to_string(dim));
      if (rest >= 0) lens[static_cast<size_t>(rest)] = dim - known;
      std::vector<int> parts;
      for (int i = 0; i < n; ++i) {
        const Tensor& t = ctx.output(static_cast<size_t>(i));
        require_same_type(ctx, t, in);
        Shape want = in.shape;
        want[static_cast<size_t>(axis)] = static_cast<int>(lens[static_cast<size_t>(i)]);
        require_shape(ctx, t, want);
        parts.push_back(ctx.output_index(static_cast<size_t>(i)));
      }
      return blocks(ctx, parts, ctx.input_index(0), axis, lens, false, "split_v");
    }
    case OpCode::Pack: {
      const Tensor& out = ctx.output(0);
      const Tensor& first = ctx.input(0);
      require_static(ctx, first);
      const int n = static_cast<int>(ctx.op.inputs.size());
      if (o.num != 0 && o.num != n) ctx.fail("values_count " + std::to_string(o.num) + " does not match the inputs");
      const int axis = resolve_axis(ctx, o.axis, first.shape.size() + 1);
      Shape want = first.shape;
      want.insert(want.begin() + axis, n);
      require_same_type(ctx, first, out);
      require_shape(ctx, out, want);
      std::vector<int> parts;
      for (int i = 0; i < n; ++i) {
        const Tensor& t = ctx.input(static_cast<size_t>(i));
        require_same_type(ctx, t, out);
        require_shape(ctx, t, first.shape);
        parts.push_back(ctx.input_index(static_cast<size_t>(i)));
      }
      return blocks(ctx, parts, ctx.output_index(0), axis, std::vector<int64_t>(static_cast<size_t>(n), 1), true, "pack");
    }
    case OpCode::Unpack: {
      const Tensor& in = ctx.input(0);
      require_static(ctx, in);
      const int axis = resolve_axis(ctx, o.axis, in.shape.size());
      const int n = static_cast<int>(ctx.op.outputs.size());
      if (n != in.shape[static_cast<size_t>(axis)] || (o.num != 0 && o.num != n)) {
        ctx.fail("the " + std::to_string(n) + " outputs do not match dimension " + std::to_string(in.shape[static_cast<size_t>(axis)]));
      }
      Shape want = in.shape;
      want.erase(want.begin() + axis);
      std::vector<int> parts;
      for (int i = 0; i < n; ++i) {
        const Tensor& t = ctx.output(static_cast<size_t>(i));
        require_same_type(ctx, t, in);
        require_shape(ctx, t, want);
        parts.push_back(ctx.output_index(static_cast<size_t>(i)));
      }
      return blocks(ctx, parts, ctx.input_index(0), axis, std::vector<int64_t>(static_cast<size_t>(n), 1), false, "unpack");
    }
    default: break;
  }
  ctx.fail("not a concatenation/split op");
}

}  // namespace tickinfer::tfl::ops
