// Op families whose kernels are not written yet: they refuse the op with a clear error.
#include "quant/ops/ops.hpp"

namespace tickinfer::quant::ops {

std::unique_ptr<PreparedOp> prepare_conv2d(const PrepareContext& ctx) { ctx.fail("not supported yet"); }
std::unique_ptr<PreparedOp> prepare_pool2d(const PrepareContext& ctx) { ctx.fail("not supported yet"); }
std::unique_ptr<PreparedOp> prepare_softmax(const PrepareContext& ctx) { ctx.fail("not supported yet"); }
std::unique_ptr<PreparedOp> prepare_elementwise(const PrepareContext& ctx) { ctx.fail("not supported yet"); }
std::unique_ptr<PreparedOp> prepare_reduce(const PrepareContext& ctx) { ctx.fail("not supported yet"); }
std::unique_ptr<PreparedOp> prepare_layout_op(const PrepareContext& ctx) { ctx.fail("not supported yet"); }

}  // namespace tickinfer::quant::ops
