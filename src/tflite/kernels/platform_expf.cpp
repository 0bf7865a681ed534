// The scalar form, the table, and the one-time check that picks the vector form
// (platform_expf.hpp).
#include "tflite/kernels/platform_expf.hpp"

#include "tflite/kernels/logistic_f32.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace tickinfer::tfl::kernels {

namespace platform_expf {

const uint64_t* table() noexcept {
  static const struct Table {
    uint64_t t[32];
    Table() noexcept {
      for (int i = 0; i < 32; ++i) {
        const double v = static_cast<double>(std::exp2l(static_cast<long double>(i) / 32.0L));
        uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        t[i] = bits - (static_cast<uint64_t>(i) << 47);
      }
    }
  } table;
  return table.t;
}

}  // namespace platform_expf

void expf_array_scalar(const float* x, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

bool reproduces_libm(ExpfArrayFn f, float (*libm)(float)) noexcept {
  constexpr int kN = 1 << 16;
  std::vector<float> x, got;  // prepare time: two replicas may be checked at once
  try {
    x.resize(kN), got.resize(kN);
  } catch (...) {
    return false;  // no memory for the check: the scalar loop runs
  }
  for (int i = 0; i < kN; ++i) {
    const uint32_t sign = (i & 1) ? 0x80000000u : 0u;
    const uint32_t exponent = static_cast<uint32_t>((i >> 1) % 256) << 23;
    const uint32_t mantissa = (static_cast<uint32_t>(i) * 2654435761u) & 0x7fffffu;
    const uint32_t bits = sign | exponent | mantissa;
    std::memcpy(&x[i], &bits, sizeof bits);
  }
  f(x.data(), got.data(), kN);
  for (int i = 0; i < kN; ++i) {
    const float want = libm(x[i]);
    if (std::memcmp(&want, &got[i], sizeof want) != 0 && !(std::isnan(want) && std::isnan(got[i]))) return false;
  }
  return true;
}

ExpfArrayFn expf_array_vector_unchecked() noexcept {
#if defined(TICKINFER_HAVE_X86)
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2)) return expf_array_avx2;
#endif
  return nullptr;
}

void logistic_array_scalar(const float* x, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = logistic_one(x[i]);
}

LogisticArrayFn logistic_array(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<LogisticArrayFn> table;
  table.scalar = logistic_array_scalar;
#if defined(TICKINFER_HAVE_X86)
  if (expf_array(::tickinfer::kernels::Isa::Avx2) == expf_array_avx2) table.avx2 = logistic_array_avx2;
  if (expf_array(::tickinfer::kernels::Isa::Avx512) == expf_array_avx512) table.avx512 = logistic_array_avx512;
#endif
  return table.pick(isa);
}

ExpfArrayFn expf_array_avx512_unchecked() noexcept {
#if defined(TICKINFER_HAVE_X86)
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx512)) return expf_array_avx512;
#endif
  return nullptr;
}

ExpfArrayFn expf_array(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<ExpfArrayFn> table;
  table.scalar = expf_array_scalar;
#if defined(TICKINFER_HAVE_X86)
  static const bool avx2_ok = ::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2) &&
                              reproduces_libm(expf_array_avx2, [](float v) { return std::exp(v); });
  if (avx2_ok) table.avx2 = expf_array_avx2;
  static const bool avx512_ok = ::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx512) &&
                                reproduces_libm(expf_array_avx512, [](float v) { return std::exp(v); });
  if (avx512_ok) table.avx512 = expf_array_avx512;
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
