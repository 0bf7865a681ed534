// Per-value int8 formulas of the unary ops (TFLite activations.cc / elementwise.cc semantics).
#include "tflite/ops/unary_int8.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tflite/fixed_point.hpp"
#include "tflite/fixed_point_math.hpp"

namespace tickinfer::tfl::ops {
namespace {

template <Rounding R>
void relu_family(float act_min, float act_max, const AffineParams& in, const AffineParams& out,
                 const QuantizedMultiplier& m, kernels::LutS8* lut) {
  // QuantizedReluX: bounds from the float activation range on the output scale.
  const int32_t qmin = std::max<int32_t>(-128, out.zero_point + round_to_int32_saturated(act_min / out.scale));
  const int32_t qmax = act_max == std::numeric_limits<float>::infinity()
                           ? 127
                           : std::min<int32_t>(127, out.zero_point + round_to_int32_saturated(act_max / out.scale));
  kernels::build_lut_s8(
      [&](int32_t q) {
        int32_t v = out.zero_point + multiply_by_quantized_multiplier<R>(q - in.zero_point, m.multiplier, m.shift);
        return static_cast<int8_t>(std::min(qmax, std::max(qmin, v)));
      },
      lut);
}

template <Rounding R>
void leaky_relu(const AffineParams& in, const AffineParams& out, const QuantizedMultiplier& identity,
                const QuantizedMultiplier& alpha, kernels::LutS8* lut) {
  kernels::build_lut_s8(
      [&](int32_t q) {
        const int32_t v = q - in.zero_point;
        const QuantizedMultiplier& m = v >= 0 ? identity : alpha;
        const int32_t r = out.zero_point + multiply_by_quantized_multiplier<R>(v, m.multiplier, m.shift);
        return static_cast<int8_t>(std::clamp(r, -128, 127));
      },
      lut);
}

// elementwise.cc RsqrtEvalQuantized: 1/sqrt(q - zp_in) as a fixed-point multiplier, applied to
// 1 with a 20-bit headroom, then scaled by 1 / (sqrt(in_scale) * out_scale). A zero input gives
// the largest output. (TFLite fails the invoke on a negative input; the table gives it the
// largest output too, since eval cannot fail.)
template <Rounding R>
void rsqrt(const AffineParams& in, const AffineParams& out, const QuantizedMultiplier& m, kernels::LutS8* lut) {
  constexpr int kShift = 20;
  kernels::build_lut_s8(
      [&](int32_t q) {
        const int32_t value = q - in.zero_point;
        if (value <= 0) return static_cast<int8_t>(127);
        int32_t inv_mult;
        int inv_shift;
        fx::inv_sqrt_quantized_multiplier_exp(value, -1, &inv_mult, &inv_shift);
        const int32_t data = multiply_by_quantized_multiplier<R>(1, inv_mult, inv_shift + kShift);
        const int32_t r = multiply_by_quantized_multiplier<R>(data, m.multiplier, m.shift - kShift) + out.zero_point;
        return static_cast<int8_t>(std::clamp(r, -128, 127));
      },
      lut);
}

}  // namespace

void build_unary_int8_lut(const PrepareContext& ctx, const AffineParams& in, const AffineParams& out,
                          kernels::LutS8* lut) {
  const Rounding r = rounding(ctx);
  switch (ctx.op.code) {
    case OpCode::Logistic:
      if (out.scale != 1.0f / 256.0f || out.zero_point != -128) {
        ctx.fail("int8 output must have scale 1/256 and zero point -128 (TFLite's fixed LOGISTIC output)");
      }
      kernels::build_lut_s8_float(in.scale, in.zero_point, out.scale, out.zero_point,
                                  [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, lut);
      return;
    case OpCode::Tanh:
      kernels::build_lut_s8_float(in.scale, in.zero_point, out.scale, out.zero_point,
                                  [](float x) { return std::tanh(x); }, lut);
      return;
    case OpCode::Relu:
    case OpCode::Relu6: {
      // ReluPrepare: the scale ratio is taken in float, then widened.
      const QuantizedMultiplier m = quantize_multiplier(static_cast<double>(in.scale / out.scale), r);
      const float hi = ctx.op.code == OpCode::Relu6 ? 6.0f : std::numeric_limits<float>::infinity();
      if (r == Rounding::Double) relu_family<Rounding::Double>(0.0f, hi, in, out, m, lut);
      else relu_family<Rounding::Single>(0.0f, hi, in, out, m, lut);
      return;
    }
    case OpCode::LeakyRelu: {
      const float alpha = ctx.op.options.alpha;
      const QuantizedMultiplier ma = quantize_multiplier(static_cast<double>(in.scale * alpha / out.scale), r);
      const QuantizedMultiplier mi = quantize_multiplier(static_cast<double>(in.scale / out.scale), r);
      if (r == Rounding::Double) leaky_relu<Rounding::Double>(in, out, mi, ma, lut);
      else leaky_relu<Rounding::Single>(in, out, mi, ma, lut);
      return;
    }
    case OpCode::Rsqrt: {
      // SetRsqrtOutputMultiplier: sqrt and product in float, the reciprocal in double.
      const QuantizedMultiplier m = quantize_multiplier(1.0 / static_cast<double>(std::sqrt(in.scale) * out.scale), r);
      if (m.shift - 20 < -31 || m.shift > 30) ctx.fail("input/output scales are out of the supported range");
      if (r == Rounding::Double) rsqrt<Rounding::Double>(in, out, m, lut);
      else rsqrt<Rounding::Single>(in, out, m, lut);
      return;
    }
    default: break;
  }
  ctx.fail("int8 is not supported for this op");
}

}  // namespace tickinfer::tfl::ops
