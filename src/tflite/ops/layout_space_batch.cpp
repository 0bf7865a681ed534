// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND over M spatial dimensions after the batch
// (TFLite reference space_to_batch_nd.h / batch_to_space_nd.h, any M):
//  SPACE_TO_BATCH: output batch ob = k * B + b, where k enumerates the block offsets (row-major,
//    last block dimension fastest); output position s reads padded position s * block + offset,
//    minus the leading padding; padding reads 0 (float) or the output zero point (int8).
//  BATCH_TO_SPACE: the inverse, with crops instead of paddings.
#include "tflite/ops/layout_copy.hpp"

namespace tickinfer::tfl::ops {

std::unique_ptr<PreparedOp> prepare_space_batch(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_same_type(ctx, in, out);
  if (in.quant.scale != out.quant.scale || in.quant.zero_point != out.quant.zero_point) {
    ctx.fail("input '" + in.name + "' and output '" + out.name + "' must have the same quantization parameters");
  }
  require_static(ctx, in);
  require_static(ctx, out);
  const bool to_batch = ctx.op.code == OpCode::SpaceToBatchNd;
  const std::vector<int64_t> block = const_ints(ctx, ctx.input(1), "block_shape");
  const std::vector<int64_t> pads = const_ints(ctx, ctx.input(2), to_batch ? "paddings" : "crops");
  const size_t m = block.size();
  if (m < 1 || in.shape.size() < m + 1 || pads.size() != 2 * m) {
    ctx.fail("block_shape and " + std::string(to_batch ? "paddings" : "crops") + " do not fit input " + shape_str(in.shape));
  }
  int64_t blocks = 1;
  for (size_t i = 0; i < m; ++i) {
    if (block[i] < 1 || block[i] > 4096 || pads[2 * i] < 0 || pads[2 * i + 1] < 0 || pads[2 * i] + pads[2 * i + 1] > (1 << 24)) {
      ctx.fail("block_shape must be positive and paddings/crops small and non-negative");
    }
    blocks *= block[i];
  }
  // `space` is the side with batch B (the other has B * blocks).
  const Tensor& space = to_batch ? in : out;
  Shape want = to_batch ? in.shape : out.shape;  // check the other side's shape from this one
  if (to_batch) {
    want[0] = static_cast<int>(in.shape[0] * blocks);
    for (size_t i = 0; i < m; ++i) {
      const int64_t padded = in.shape[i + 1] + pads[2 * i] + pads[2 * i + 1];
      if (padded % block[i] != 0) ctx.fail("padded spatial dimension " + std::to_string(i) + " is not a multiple of the block");
      want[i + 1] = static_cast<int>(padded / block[i]);
    }
    if (out.shape != want) ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " should be " + shape_str(want));
  } else {
    if (in.shape[0] % blocks != 0) ctx.fail("input batch is not a multiple of the block count");
    want = in.shape;
    want[0] = static_cast<int>(in.shape[0] / blocks);
    for (size_t i = 0; i < m; ++i) {
      const int64_t cropped = in.shape[i + 1] * block[i] - pads[2 * i] - pads[2 * i + 1];
      if (cropped < 0) ctx.fail("crops are larger than the spatial dimension");
      want[i + 1] = static_cast<int>(cropped);
    }
    if (out.shape != want) ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " should be " + shape_str(want));
  }
  const int b_space = space.shape[0];
  const std::vector<int64_t> src_stride = strides_of(in.shape);
  LayoutPlan plan({ctx.input_index(0)}, {ctx.output_index(0)}, layout_elem_bytes(ctx, in));
  if (in.type == DType::I8 || in.type == DType::U8) {
    const uint8_t zp = static_cast<uint8_t>(out.quant.zero_point.empty() ? 0 : out.quant.zero_point[0]);
    plan.set_fill(&zp);
  }
  const size_t rank = out.shape.size();
  std::vector<int> pos(rank, 0);
  std::vector<int64_t> shift(m);
  int64_t o_off = 0;
  if (element_count(out.shape) > 0) {
    do {
      int64_t src = 0;
      bool inside = true;
      if (to_batch) {
        // pos indexes the batch side (the output).
        int64_t k = pos[0] / b_space;
        const int b = pos[0] % b_space;
        for (size_t i = m; i-- > 0;) {
          shift[i] = k % block[i];
          k /= block[i];
        }
        src = b * src_stride[0];
        for (size_t i = 0; i < m && inside; ++i) {
          const int64_t s = pos[i + 1] * block[i] + shift[i] - pads[2 * i];
          inside = s >= 0 && s < in.shape[i + 1];
          src += s * src_stride[i + 1];
        }
      } else {
        // pos indexes the space side (the output); find the batch-side element that lands here.
        int64_t k = 0;
        int64_t spatial = 0;
        for (size_t i = 0; i < m; ++i) {
          const int64_t p = pos[i + 1] + pads[2 * i];
          k = k * block[i] + p % block[i];
          spatial += (p / block[i]) * src_stride[i + 1];
        }
        src = (k * b_space + pos[0]) * src_stride[0] + spatial;
      }
      for (size_t d = m + 1; d < rank; ++d) src += pos[d] * src_stride[d];
      plan.add(inside ? 0 : -1, inside ? src : 0, 0, o_off++);
    } while (next_position(pos, out.shape));
  }
  return std::make_unique<LayoutCopy>(std::move(plan), to_batch ? "space to batch" : "batch to space");
}

}  // namespace tickinfer::tfl::ops
