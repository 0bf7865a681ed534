// The scalar reference of requant_scaled.hpp and the kernel choice.
#include "tflite/kernels/requant_scaled.hpp"

namespace tickinfer::tfl::kernels {

void requantize_s32_to_s8_scaled_scalar(const int32_t* acc, int rows, const ScaledRequant& q, int8_t* y) noexcept {
  for (int r = 0; r < rows; ++r) {
    const uint32_t b = q.bias ? static_cast<uint32_t>(q.bias[r]) : 0u;
    const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[r]) + b);
    y[r] = requant_scaled_one(a, q.scale[r], q.output_zero_point, q.act_min, q.act_max);
  }
}

RequantScaledFn requant_scaled_for(::tickinfer::kernels::Isa isa) {
  ::tickinfer::kernels::IsaVariants<RequantScaledFn> v;
  v.scalar = requantize_s32_to_s8_scaled_scalar;
#if defined(TICKINFER_HAVE_X86)
  v.avx2 = requantize_s32_to_s8_scaled_avx2;
#endif
  return v.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
