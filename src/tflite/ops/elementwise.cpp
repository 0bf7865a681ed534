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

// int32 ADD / SUB / MUL (loop counters, shape arithmetic): wrap-around as TFLite's int32
// kernels compute in practice, computed unsigned so overflow is defined; no fused activation.
struct AddI {
  int32_t operator()(int32_t a, int32_t b) const noexcept {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
  }
};
struct SubI {
  int32_t operator()(int32_t a, int32_t b) const noexcept {
    return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
  }
};
struct MulI {
  int32_t operator()(int32_t a, int32_t b) const noexcept {
    return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
  }
};

std::unique_ptr<PreparedOp> make_elementwise_int32(const PrepareContext& ctx, BroadcastPlan plan) {
  if (ctx.op.options.activation != FusedActivation::None) ctx.fail("int32 with a fused activation is not supported");
  const std::string name = std::string("int32 ") + op_name(ctx.op.code);
  switch (ctx.op.code) {
    case OpCode::Add: return make_binary<int32_t>(ctx, std::move(plan), AddI{}, name);
    case OpCode::Sub: return make_binary<int32_t>(ctx, std::move(plan), SubI{}, name);
    case OpCode::Mul: return make_binary<int32_t>(ctx, std::move(plan), MulI{}, name);
    default: break;
  }
  ctx.fail("int32 operands are supported for ADD, SUB and MUL only");
}

bool has_fused_activation(OpCode code) {
  return code == OpCode::Add || code == OpCode::Sub || code == OpCode::Mul || code == OpCode::Div;
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_elementwise(const PrepareContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_type(ctx, a, "input", {DType::F32, DType::I8, DType::I32});
  require_same_type(ctx, a, b);
  require_same_type(ctx, a, out);
  if (!has_fused_activation(ctx.op.code) && ctx.op.options.activation != FusedActivation::None) {
    ctx.fail("this op takes no fused activation");
  }
  BroadcastPlan plan = plan_broadcast(ctx, a, b, out);
  if (a.type == DType::I8) return make_elementwise_int8(ctx, std::move(plan));
  if (a.type == DType::I32) return make_elementwise_int32(ctx, std::move(plan));

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
