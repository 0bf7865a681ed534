// The scalar form and the one-time check that picks the vector form (platform_tanhf.hpp).
#include "tflite/kernels/platform_tanhf.hpp"

#include <cmath>
#include <cstring>

namespace tickinfer::tfl::kernels {

void tanhf_array_scalar(const float* x, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

namespace {

bool reproduces_std_tanh(TanhfArrayFn f) noexcept {
  constexpr int kN = 1 << 16;
  static float x[kN], got[kN];
  for (int i = 0; i < kN; ++i) {
    const uint32_t sign = (i & 1) ? 0x80000000u : 0u;
    const uint32_t exponent = static_cast<uint32_t>((i >> 1) % 256) << 23;
    const uint32_t mantissa = (static_cast<uint32_t>(i) * 2654435761u) & 0x7fffffu;
    const uint32_t bits = sign | exponent | mantissa;
    std::memcpy(&x[i], &bits, sizeof bits);
  }
  f(x, got, kN);
  for (int i = 0; i < kN; ++i) {
    const float want = std::tanh(x[i]);
    if (std::memcmp(&want, &got[i], sizeof want) != 0 && !(std::isnan(want) && std::isnan(got[i]))) return false;
  }
  return true;
}

}  // namespace

TanhfArrayFn tanhf_array_vector_unchecked() noexcept {
#if defined(TICKINFER_HAVE_X86)
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2)) return tanhf_array_avx2;
#endif
  return nullptr;
}

TanhfArrayFn tanhf_array(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<TanhfArrayFn> table;
  table.scalar = tanhf_array_scalar;
#if defined(TICKINFER_HAVE_X86)
  static const bool avx2_ok = ::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2) &&
                              reproduces_std_tanh(tanhf_array_avx2);
  if (avx2_ok) table.avx2 = tanhf_array_avx2;
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
