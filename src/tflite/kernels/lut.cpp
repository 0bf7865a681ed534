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

namespace {
void apply_lut_s8_loop(const LutS8& lut, const int8_t* x, int8_t* y, int64_t n) noexcept { apply_lut_s8(lut, x, y, n); }
}  // namespace

bool lut_s8_vbmi_supported() noexcept {
#if defined(TICKINFER_HAVE_X86)
  return ::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx512) && __builtin_cpu_supports("avx512vbmi");
#else
  return false;
#endif
}

ApplyLutS8Fn apply_lut_s8_fn(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<ApplyLutS8Fn> table;
  table.scalar = apply_lut_s8_loop;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = apply_lut_s8_avx2;
  if (lut_s8_vbmi_supported()) table.avx512 = apply_lut_s8_vbmi;  // VBMI is beyond the avx512 ISA's own check
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
