#pragma once
// The numbers of post-training quantization, as the TFLite converter computes them:
//  * activations: per-tensor asymmetric int8 from an observed [min, max]; the range is widened to
//    contain 0 and the zero point nudged to an integer so that real 0 is exact;
//  * weights: per-channel (or per-tensor) symmetric int8 in [-127, 127], zero point 0;
//  * biases: int32 with scale input_scale * weight_scale[c], zero point 0;
//  * bf16: float32 rounded to nearest even in its upper 16 bits.
#include <cstdint>
#include <vector>

#include "quantizer/tflite_names.hpp"

namespace tickinfer::quantizer {

struct AffineParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Asymmetric int8 parameters for values observed in [rmin, rmax] (qmin -128, qmax 127):
// rmin' = min(rmin, 0), rmax' = max(rmax, 0), scale = (rmax' - rmin') / 255 in double; the zero
// point is qmin - rmin'/scale or qmax - rmax'/scale, whichever has the smaller rounding error,
// clamped to [qmin, qmax] and rounded. An all-zero range gives scale 1 (any value would do).
AffineParams activation_params(float rmin, float rmax);

// Quantizes one real value with given params: clamp(round_half_away(x / scale) + zp, -128, 127),
// the division in float (TFLite's QUANTIZE).
int8_t quantize_value(float x, const AffineParams& p);

struct QuantizedWeights {
  std::vector<int8_t> values;  // same layout as the float weights
  std::vector<float> scales;   // one per channel (per_channel) or one
};
// Symmetric int8 of a [channels, ...] weight tensor (channels = the first dimension):
// scale_c = max|w_c| / 127 (1 for an all-zero channel), q = round_half_away(w / scale_c).
QuantizedWeights quantize_weights(const std::vector<float>& w, int channels, bool per_channel);
// The same per channel of the last dimension (a depthwise filter [1, kh, kw, channels]).
QuantizedWeights quantize_weights_innermost(const std::vector<float>& w, int channels);

// int32 bias for an int8 op: q[c] = round_half_away(b[c] / (input_scale * weight_scale[c])),
// with the product taken in double; saturates at the int32 range.
std::vector<int32_t> quantize_bias(const std::vector<float>& bias, float input_scale,
                                   const std::vector<float>& weight_scales);

// float32 -> bfloat16 bits, round to nearest even (NaN stays a quiet NaN).
uint16_t to_bf16(float x);
float from_bf16(uint16_t b);

}  // namespace tickinfer::quantizer
