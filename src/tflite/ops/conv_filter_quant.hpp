#pragma once
// What CONV_2D and DEPTHWISE_CONV_2D share about an int8 filter's quantization: the checks
// (symmetric, positive scales, per tensor or one scale per output channel on the op's channel
// axis), each channel's scale, and the per-channel fixed-point multipliers
// in_scale * w_scale[oc] / out_scale (double, as TFLite's PopulateConvolutionQuantizationParams).
#include <cmath>
#include <string>
#include <vector>

#include "tflite/fixed_point.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {

inline void check_conv_filter_scales(const PrepareContext& ctx, const Tensor& f, int out_c, int axis) {
  if (f.quant.empty()) ctx.fail("filter '" + f.name + "' has no quantization parameters");
  if (f.quant.per_axis() && (f.quant.axis != axis || static_cast<int>(f.quant.scale.size()) != out_c)) {
    ctx.fail("filter '" + f.name + "' per-channel quantization must have one scale per output channel on axis " +
             std::to_string(axis));
  }
  for (int64_t zp : f.quant.zero_point)
    if (zp != 0) ctx.fail("filter '" + f.name + "' must be symmetric (zero point 0)");
  for (float s : f.quant.scale)
    if (!(s > 0.0f) || !std::isfinite(s)) ctx.fail("filter '" + f.name + "' has a non-positive scale");
}

inline float conv_channel_scale(const Tensor& f, int oc) {
  return f.quant.per_axis() ? f.quant.scale[static_cast<size_t>(oc)] : f.quant.scale[0];
}

struct ChannelMultipliers {
  std::vector<int32_t> multiplier, shift;
};

inline ChannelMultipliers conv_channel_multipliers(const Tensor& f, int out_c, float in_scale, float out_scale,
                                                   Rounding rounding) {
  ChannelMultipliers m;
  m.multiplier.resize(static_cast<size_t>(out_c));
  m.shift.resize(static_cast<size_t>(out_c));
  for (int oc = 0; oc < out_c; ++oc) {
    const double real = static_cast<double>(in_scale) * static_cast<double>(conv_channel_scale(f, oc)) /
                        static_cast<double>(out_scale);
    const QuantizedMultiplier q = quantize_multiplier(real, rounding);
    m.multiplier[static_cast<size_t>(oc)] = q.multiplier;
    m.shift[static_cast<size_t>(oc)] = q.shift;
  }
  return m;
}

}  // namespace tickinfer::tfl::ops
