// int8 binary elementwise ops, bit for bit as TFLite's reference integer kernels:
//  ADD / SUB (add.cc, sub.cc): both inputs are shifted left by 20 bits, scaled by
//    in_scale / (2 * max_in_scale), added (or subtracted), then scaled by
//    2 * max_in_scale / (2^20 * out_scale); each scaling is MultiplyByQuantizedMultiplier.
//  MUL (mul.cc): (a - zp_a) * (b - zp_b) scaled by a_scale * b_scale / out_scale.
//  SQUARED_DIFFERENCE (squared_difference.cc): like SUB with a 7-bit left shift, the difference
//    squared in int32, then scaled by (2 * max_in_scale)^2 / (2^14 * out_scale).
//  MAXIMUM / MINIMUM (maximum_minimum.cc): compare the stored values; no requantization.
// Multipliers are derived in double from the float scales, as each Prepare does.
#include <algorithm>
#include <cmath>

#include "tflite/ops/elementwise.hpp"

namespace tickinfer::tfl::ops {
namespace {

inline int8_t clamp_s8(int32_t v, int32_t lo, int32_t hi) { return static_cast<int8_t>(std::min(std::max(v, lo), hi)); }

struct Scaled {
  int32_t multiplier = 0;
  int shift = 0;
};

template <Rounding R>
inline int32_t scale(int32_t x, const Scaled& s) {
  return multiply_by_quantized_multiplier<R>(x, s.multiplier, s.shift);
}

template <Rounding R>
struct AddSubS8 {
  int32_t off_a, off_b, off_out, lo, hi;
  int left_shift;
  Scaled in_a, in_b, out;
  bool subtract;
  int8_t operator()(int8_t a, int8_t b) const noexcept {
    const int32_t sa = scale<R>((a + off_a) * (1 << left_shift), in_a);
    const int32_t sb = scale<R>((b + off_b) * (1 << left_shift), in_b);
    const int32_t raw = subtract ? sa - sb : sa + sb;
    return clamp_s8(scale<R>(raw, out) + off_out, lo, hi);
  }
};

template <Rounding R>
struct MulS8 {
  int32_t off_a, off_b, off_out, lo, hi;
  Scaled out;
  int8_t operator()(int8_t a, int8_t b) const noexcept {
    return clamp_s8(scale<R>((a + off_a) * (b + off_b), out) + off_out, lo, hi);
  }
};

template <Rounding R>
struct SquaredDifferenceS8 {
  int32_t off_a, off_b, off_out;
  int left_shift;
  Scaled in_a, in_b, out;
  int8_t operator()(int8_t a, int8_t b) const noexcept {
    const int32_t sa = scale<R>((a + off_a) * (1 << left_shift), in_a);
    const int32_t sb = scale<R>((b + off_b) * (1 << left_shift), in_b);
    const int32_t d = sa - sb;
    return clamp_s8(scale<R>(d * d, out) + off_out, -128, 127);
  }
};

struct MaximumS8 {
  int8_t operator()(int8_t a, int8_t b) const noexcept { return a > b ? a : b; }
};
struct MinimumS8 {
  int8_t operator()(int8_t a, int8_t b) const noexcept { return a < b ? a : b; }
};

Scaled scaled(const PrepareContext& ctx, double m) {
  const QuantizedMultiplier q = quantize_multiplier(m, rounding(ctx));
  return {q.multiplier, q.shift};
}

template <Rounding R>
std::unique_ptr<PreparedOp> make(const PrepareContext& ctx, BroadcastPlan plan) {
  const AffineParams pa = per_tensor_params(ctx, ctx.input(0), "input");
  const AffineParams pb = per_tensor_params(ctx, ctx.input(1), "input");
  const AffineParams po = per_tensor_params(ctx, ctx.output(0), "output");
  const std::string name = std::string("int8 ") + op_name(ctx.op.code);
  int32_t lo = -128, hi = 127;
  switch (ctx.op.code) {
    case OpCode::Add:
    case OpCode::Sub: {
      int8_activation_range(ctx, ctx.op.options.activation, po, &lo, &hi);
      AddSubS8<R> f{};
      f.off_a = -pa.zero_point;
      f.off_b = -pb.zero_point;
      f.off_out = po.zero_point;
      f.lo = lo;
      f.hi = hi;
      f.left_shift = 20;
      // 2 * max(...) is a float (exact); the ratios are taken in double.
      const double twice_max = 2.0f * std::max(pa.scale, pb.scale);
      f.in_a = scaled(ctx, static_cast<double>(pa.scale) / twice_max);
      f.in_b = scaled(ctx, static_cast<double>(pb.scale) / twice_max);
      f.out = scaled(ctx, twice_max / static_cast<double>(static_cast<float>(1 << f.left_shift) * po.scale));
      f.subtract = ctx.op.code == OpCode::Sub;
      return make_binary<int8_t>(ctx, std::move(plan), f, name);
    }
    case OpCode::Mul: {
      int8_activation_range(ctx, ctx.op.options.activation, po, &lo, &hi);
      MulS8<R> f{};
      f.off_a = -pa.zero_point;
      f.off_b = -pb.zero_point;
      f.off_out = po.zero_point;
      f.lo = lo;
      f.hi = hi;
      f.out = scaled(ctx, static_cast<double>(pa.scale * pb.scale / po.scale));
      return make_binary<int8_t>(ctx, std::move(plan), f, name);
    }
    case OpCode::SquaredDifference: {
      SquaredDifferenceS8<R> f{};
      f.off_a = -pa.zero_point;
      f.off_b = -pb.zero_point;
      f.off_out = po.zero_point;
      f.left_shift = 7;
      const double twice_max = 2.0 * static_cast<double>(std::max(pa.scale, pb.scale));
      f.in_a = scaled(ctx, static_cast<double>(pa.scale) / twice_max);
      f.in_b = scaled(ctx, static_cast<double>(pb.scale) / twice_max);
      f.out = scaled(ctx, twice_max * twice_max /
                              static_cast<double>(static_cast<float>(1 << (2 * f.left_shift)) * po.scale));
      return make_binary<int8_t>(ctx, std::move(plan), f, name);
    }
    case OpCode::Maximum: return make_binary<int8_t>(ctx, std::move(plan), MaximumS8{}, name);
    case OpCode::Minimum: return make_binary<int8_t>(ctx, std::move(plan), MinimumS8{}, name);
    default: break;
  }
  ctx.fail("int8 is not supported for this op");
}

}  // namespace

std::unique_ptr<PreparedOp> make_elementwise_int8(const PrepareContext& ctx, BroadcastPlan plan) {
  if (rounding(ctx) == Rounding::Double) return make<Rounding::Double>(ctx, std::move(plan));
  return make<Rounding::Single>(ctx, std::move(plan));
}

}  // namespace tickinfer::tfl::ops
