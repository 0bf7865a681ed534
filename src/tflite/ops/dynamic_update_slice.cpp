// DYNAMIC_UPDATE_SLICE (TFLite dynamic_update_slice.cc): the output is the operand with `update`
// written at start indices read at eval, each clamped to [0, operand dim - update dim] as TFLite
// clamps them. The interpreter also runs the converter's "TensorList set item" inside recurrent
// loops as this op (CONCATENATION of two runtime-sized SLICEs around the new item, whose shapes
// change per iteration; tflite/rewrite/program_rewrite.hpp).
#include <algorithm>
#include <cstring>

#include "tflite/ops/op_support.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl::ops {
namespace {

constexpr size_t kMaxRank = 8;

class DynamicUpdateSliceOp final : public PreparedOp {
 public:
  void eval(const TensorMemory& mem) noexcept override {
    const auto* x = static_cast<const uint8_t*>(mem.addr[static_cast<size_t>(operand_)]);
    const auto* u = static_cast<const uint8_t*>(mem.addr[static_cast<size_t>(update_)]);
    auto* y = static_cast<uint8_t*>(mem.addr[static_cast<size_t>(out_)]);
    if (x != y) std::memmove(y, x, bytes_);
    const void* s = mem.addr[static_cast<size_t>(start_)];
    int64_t base = 0;
    for (size_t d = 0; d < rank_; ++d) {
      const int64_t v = wide_ ? static_cast<const int64_t*>(s)[d] : static_cast<const int32_t*>(s)[d];
      base += std::clamp<int64_t>(v, 0, dim_[d] - extent_[d]) * stride_[d];
    }
    int64_t pos[kMaxRank] = {};
    const size_t run = static_cast<size_t>(extent_[rank_ - 1]) * elem_;
    for (int64_t r = 0; r < rows_; ++r) {
      int64_t dst = base;
      for (size_t d = 0; d + 1 < rank_; ++d) dst += pos[d] * stride_[d];
      std::memcpy(y + dst * static_cast<int64_t>(elem_), u + r * static_cast<int64_t>(run), run);
      for (size_t d = rank_ - 1; d-- > 0;) {
        if (++pos[d] < extent_[d]) break;
        pos[d] = 0;
      }
    }
  }
  std::string describe() const override { return "dynamic update slice"; }

  int operand_ = 0, update_ = 0, start_ = 0, out_ = 0;
  bool wide_ = false;
  size_t rank_ = 0, elem_ = 0, bytes_ = 0;
  int64_t rows_ = 0;
  int64_t dim_[kMaxRank] = {}, extent_[kMaxRank] = {}, stride_[kMaxRank] = {};
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_dynamic_update_slice(const PrepareContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& u = ctx.input(1);
  const Tensor& start = ctx.input(2);
  const Tensor& out = ctx.output(0);
  require_same_type(ctx, x, u);
  require_same_type(ctx, x, out);
  require_type(ctx, start, "start indices", {DType::I32, DType::I64});
  require_static(ctx, x);
  require_static(ctx, u);
  const size_t rank = x.shape.size();
  if (rank == 0 || rank > kMaxRank || u.shape.size() != rank || out.shape != x.shape) {
    ctx.fail("operand, update and output must have one shape of rank 1 to 8 (update no larger)");
  }
  if (require_static(ctx, start) != static_cast<int64_t>(rank)) ctx.fail("start indices must hold one value per axis");
  auto op = std::make_unique<DynamicUpdateSliceOp>();
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (u.shape[d] > x.shape[d]) ctx.fail("update " + shape_str(u.shape) + " is larger than operand " + shape_str(x.shape));
    op->dim_[d] = x.shape[d];
    op->extent_[d] = u.shape[d];
    op->stride_[d] = stride;
    stride *= x.shape[d];
  }
  op->rows_ = element_count(u.shape) == 0 ? 0 : 1;
  for (size_t d = 0; d + 1 < rank; ++d) op->rows_ *= u.shape[d];
  op->operand_ = ctx.input_index(0);
  op->update_ = ctx.input_index(1);
  op->start_ = ctx.input_index(2);
  op->out_ = ctx.output_index(0);
  op->wide_ = start.type == DType::I64;
  op->rank_ = rank;
  op->elem_ = dtype_size(x.type);
  op->bytes_ = static_cast<size_t>(element_count(x.shape)) * op->elem_;
  return op;
}

}  // namespace tickinfer::tfl::ops
