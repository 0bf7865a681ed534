// Scales, zero points and rounding of post-training quantization (see quant_params.hpp).
#include "quantizer/quant_params.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tickinfer::quantizer {

AffineParams activation_params(float rmin_f, float rmax_f) {
  constexpr double qmin = -128.0, qmax = 127.0;
  const double rmin = std::min(static_cast<double>(rmin_f), 0.0);
  const double rmax = std::max(static_cast<double>(rmax_f), 0.0);
  if (rmax - rmin <= 0.0) return {1.0f, 0};
  const double scale = (rmax - rmin) / (qmax - qmin);
  // Either end pins the zero point; take the one whose arithmetic adds the smaller error.
  const double zp_from_min = qmin - rmin / scale;
  const double zp_from_max = qmax - rmax / scale;
  const double err_min = std::abs(qmin) + std::abs(rmin / scale);
  const double err_max = std::abs(qmax) + std::abs(rmax / scale);
  const double zp = err_min < err_max ? zp_from_min : zp_from_max;
  int32_t nudged;
  if (zp < qmin) {
    nudged = static_cast<int32_t>(qmin);
  } else if (zp > qmax) {
    nudged = static_cast<int32_t>(qmax);
  } else {
    nudged = static_cast<int32_t>(std::round(zp));
  }
  return {static_cast<float>(scale), nudged};
}

int8_t quantize_value(float x, const AffineParams& p) {
  const float q = std::round(x / p.scale) + static_cast<float>(p.zero_point);
  return static_cast<int8_t>(std::clamp(q, -128.0f, 127.0f));
}

namespace {

// Element i belongs to channel (i / inner) % channels; each channel's scale is max|w| / 127.
QuantizedWeights quantize_grouped(const std::vector<float>& w, size_t channels, size_t inner) {
  QuantizedWeights out;
  out.values.resize(w.size());
  const auto channel = [&](size_t i) { return (i / inner) % channels; };
  std::vector<float> absmax(channels, 0.0f);
  for (size_t i = 0; i < w.size(); ++i) absmax[channel(i)] = std::max(absmax[channel(i)], std::abs(w[i]));
  for (float m : absmax) out.scales.push_back(m > 0.0f ? m / 127.0f : 1.0f);
  for (size_t i = 0; i < w.size(); ++i) {
    const float q = std::round(w[i] / out.scales[channel(i)]);
    out.values[i] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
  }
  return out;
}

}  // namespace

QuantizedWeights quantize_weights(const std::vector<float>& w, int channels, bool per_channel) {
  if (!per_channel || channels <= 0) return quantize_grouped(w, 1, std::max<size_t>(w.size(), 1));
  return quantize_grouped(w, static_cast<size_t>(channels), std::max<size_t>(w.size() / static_cast<size_t>(channels), 1));
}

QuantizedWeights quantize_weights_innermost(const std::vector<float>& w, int channels) {
  return quantize_grouped(w, static_cast<size_t>(std::max(channels, 1)), 1);
}

std::vector<int32_t> quantize_bias(const std::vector<float>& bias, float input_scale,
                                   const std::vector<float>& weight_scales) {
  std::vector<int32_t> q(bias.size());
  for (size_t c = 0; c < bias.size(); ++c) {
    const double s = static_cast<double>(input_scale) *
                     static_cast<double>(weight_scales.size() == 1 ? weight_scales[0] : weight_scales[c]);
    const double v = std::round(static_cast<double>(bias[c]) / s);
    q[c] = static_cast<int32_t>(std::clamp(v, static_cast<double>(std::numeric_limits<int32_t>::min()),
                                           static_cast<double>(std::numeric_limits<int32_t>::max())));
  }
  return q;
}

uint16_t to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x)) return static_cast<uint16_t>((u >> 16) | 0x0040);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

}  // namespace tickinfer::quantizer
