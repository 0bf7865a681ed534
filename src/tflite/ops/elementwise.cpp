// Binary elementwise ops: operand checks, broadcasting and the float formulas (TFLite's reference
// kernels: the op, then the fused activation clamp). int8 lives in elementwise_int8.cpp.
#include <algorithm>

#include "tflite/ops/elementwise.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl::ops {
namespace {

struct ClampF {
  float lo, hi;
  float operator()(float v) const noexcept { return std::min(std::max(v, lo), hi); }
};
struct AddF {
  ClampF c;
  float operator()(float a, float b) const noexcept { return c(a + b); }
};
struct SubF {
  ClampF c;
  float operator()(float a, float b) const noexcept { return c(a - b); }
};
struct MulF {
  ClampF c;
  float operator()(float a, float b) const noexcept { return c(a * b); }
};
struct DivF {
  ClampF c;
  float operator()(float a, float b) const noexcept { return c(a / b); }
};
struct SquaredDifferenceF {
  float operator()(float a, float b) const noexcept {
    const float d = a - b;
    return d * d;
  }
};
struct MaximumF {
  float operator()(float a, float b) const noexcept { return a > b ? a : b; }
};
struct MinimumF {
  float operator()(float a, float b) const noexcept { return a < b ? a : b; }
};

bool has_fused_activation(OpCode code) {
  return code == OpCode::Add || code == OpCode::Sub || code == OpCode::Mul || code == OpCode::Div;
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_elementwise(const PrepareContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_type(ctx, a, "input", {DType::F32, DType::I8});
  require_same_type(ctx, a, b);
  require_same_type(ctx, a, out);
  if (!has_fused_activation(ctx.op.code) && ctx.op.options.activation != FusedActivation::None) {
    ctx.fail("this op takes no fused activation");
  }
  BroadcastPlan plan = plan_broadcast(ctx, a, b, out);
  if (a.type == DType::I8) return make_elementwise_int8(ctx, std::move(plan));

  const std::string name = std::string("float ") + op_name(ctx.op.code);
  ClampF c{};
  if (has_fused_activation(ctx.op.code)) float_activation_range(ctx, ctx.op.options.activation, &c.lo, &c.hi);
  switch (ctx.op.code) {
    case OpCode::Add: return make_binary<float>(ctx, std::move(plan), AddF{c}, name);
    case OpCode::Sub: return make_binary<float>(ctx, std::move(plan), SubF{c}, name);
    case OpCode::Mul: return make_binary<float>(ctx, std::move(plan), MulF{c}, name);
    case OpCode::Div: return make_binary<float>(ctx, std::move(plan), DivF{c}, name);
    case OpCode::SquaredDifference: return make_binary<float>(ctx, std::move(plan), SquaredDifferenceF{}, name);
    case OpCode::Maximum: return make_binary<float>(ctx, std::move(plan), MaximumF{}, name);
    case OpCode::Minimum: return make_binary<float>(ctx, std::move(plan), MinimumF{}, name);
    default: break;
  }
  ctx.fail("not an elementwise binary op");
}

}  // namespace tickinfer::tfl::ops
