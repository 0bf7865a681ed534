#include "tflite/kernels/lut.hpp"

#include <algorithm>
#include <cmath>

namespace tickinfer::tfl::kernels {

void build_lut_s8(const std::function<int8_t(int32_t)>& f, LutS8* lut) {
  for (int32_t q = -128; q <= 127; ++q) lut->table[static_cast<uint8_t>(q)] = f(q);
}

void build_lut_s8_float(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                        float (*transform)(float), LutS8* lut) {
  const float inverse_scale = 1.0f / out_scale;
  for (int32_t q = -128; q <= 127; ++q) {
    const float dequantized = in_scale * static_cast<float>(q - in_zp);
    const float transformed = transform(dequantized);
    int32_t quantized = -128;
    if (std::isfinite(transformed)) {
      const float rescaled = std::round(transformed * inverse_scale);
      // Clamped in float first so the cast is defined for any magnitude.
      quantized = static_cast<int32_t>(std::clamp(rescaled + static_cast<float>(out_zp), -1024.0f, 1024.0f));
    }
    lut->table[static_cast<uint8_t>(q)] = static_cast<int8_t>(std::clamp(quantized, -128, 127));
  }
}

}  // namespace tickinfer::tfl::kernels
