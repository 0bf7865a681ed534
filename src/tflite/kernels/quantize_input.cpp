// Scalar model-input quantization (tflite/kernels/quantize_input.hpp) and the choice of variant.
#include "tflite/kernels/quantize_input.hpp"

#include <algorithm>
#include <cmath>

namespace tickinfer::tfl::kernels {

void quantize_f32_to_s8_scalar(const float* x, int8_t* q, size_t n, float scale, int32_t zp) noexcept {
  // Branch-free: inputs differ call to call, and a branch per element mispredicts about half
  // the time.
  for (size_t i = 0; i < n; ++i) {
    const float v0 = x[i] / scale;  // the division in float, as TFLite's Quantize does it
    // fmax/fmin turn NaN into the bound; the select below then maps NaN to the zero point.
    const float v = std::fmin(std::fmax(v0, -1e9f), 1e9f);
    // Round half away from zero without libm: v minus its truncation is exact in float.
    int32_t r = static_cast<int32_t>(v);
    const float frac = v - static_cast<float>(r);
    r += static_cast<int32_t>(frac >= 0.5f) - static_cast<int32_t>(frac <= -0.5f);
    r = v0 == v0 ? r : 0;
    q[i] = static_cast<int8_t>(std::min(std::max(r + zp, -128), 127));
  }
}

QuantizeF32S8Fn quantize_f32_to_s8(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<QuantizeF32S8Fn> table;
  table.scalar = quantize_f32_to_s8_scalar;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = quantize_f32_to_s8_avx2;
  table.avx512 = quantize_f32_to_s8_avx512;
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
