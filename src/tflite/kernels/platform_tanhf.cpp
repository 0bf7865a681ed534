// The scalar form and the one-time check that picks the vector form (platform_tanhf.hpp).
#include "tflite/kernels/platform_tanhf.hpp"

#include <cmath>

#include "tflite/kernels/platform_expf.hpp"

namespace tickinfer::tfl::kernels {

void tanhf_array_scalar(const float* x, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}


TanhfArrayFn tanhf_array_vector_unchecked() noexcept {
#if defined(TICKINFER_HAVE_X86)
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2)) return tanhf_array_avx2;
#endif
  return nullptr;
}

TanhfArrayFn tanhf_array_avx512_unchecked() noexcept {
#if defined(TICKINFER_HAVE_X86)
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx512)) return tanhf_array_avx512;
#endif
  return nullptr;
}

TanhfArrayFn tanhf_array(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<TanhfArrayFn> table;
  table.scalar = tanhf_array_scalar;
#if defined(TICKINFER_HAVE_X86)
  static const bool avx2_ok = ::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2) &&
                              reproduces_libm(tanhf_array_avx2, [](float v) { return std::tanh(v); });
  if (avx2_ok) table.avx2 = tanhf_array_avx2;
  static const bool avx512_ok = ::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx512) &&
                                reproduces_libm(tanhf_array_avx512, [](float v) { return std::tanh(v); });
  if (avx512_ok) table.avx512 = tanhf_array_avx512;
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
