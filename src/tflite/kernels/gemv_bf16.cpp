// bf16 gemv: packing, the plain-loop variant, and the choice of variant (gemv_bf16.hpp).
#include "tflite/kernels/gemv_bf16.hpp"

#include <cstring>
#include <vector>

#include "kernels/kernel_set.hpp"

namespace tickinfer::tfl::kernels {

namespace {

inline float widen(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline float clamp_one(float acc, const float* init, float lo, float hi) {
  float v = (init ? *init : 0.0f) + acc;
  v = v < lo ? lo : v;  // false for NaN: NaN propagates
  return v > hi ? hi : v;
}

}  // namespace

size_t bf16_packed_elems(int K, int N) { return ::tickinfer::kernels::packed_floats(K, N); }

void pack_bf16_weights(const uint16_t* w, int K, int N, uint16_t* packed) {
  // Widening is exact and so is taking the upper half back, so packing the widened floats with
  // the engine's own pack_weights gives exactly its layout (zero padding included).
  const size_t n = static_cast<size_t>(K) * static_cast<size_t>(N);
  std::vector<float> wide(n);
  for (size_t i = 0; i < n; ++i) wide[i] = widen(w[i]);
  std::vector<float> packed_f(bf16_packed_elems(K, N));
  ::tickinfer::kernels::pack_weights(wide.data(), K, N, packed_f.data());
  for (size_t i = 0; i < packed_f.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &packed_f[i], 4);
    packed[i] = static_cast<uint16_t>(bits >> 16);
  }
}

void gemv_bf16_scalar(const float* x, int K, const uint16_t* packed, int N, const float* init, float* y, float lo,
                      float hi) noexcept {
  using ::tickinfer::kernels::kPanel;
  if (::tickinfer::kernels::is_dot_form(N)) {
    const size_t stride = static_cast<size_t>(::tickinfer::kernels::dot_row_floats(K));
    for (int n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += x[k] * widen(packed[n * stride + static_cast<size_t>(k)]);
      y[n] = clamp_one(acc, init ? init + n : nullptr, lo, hi);
    }
    return;
  }
  for (int n = 0; n < N; ++n) {
    const uint16_t* col = packed + static_cast<size_t>(n / kPanel) * static_cast<size_t>(K) * kPanel + n % kPanel;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += x[k] * widen(col[static_cast<size_t>(k) * kPanel]);
    y[n] = clamp_one(acc, init ? init + n : nullptr, lo, hi);
  }
}

const Bf16Gemv& bf16_gemv(::tickinfer::kernels::Isa isa) {
  using ::tickinfer::kernels::Isa;
  static const Bf16Gemv kScalar{Isa::Scalar, "scalar", gemv_bf16_scalar};
  ::tickinfer::kernels::IsaVariants<const Bf16Gemv*> table;
  table.scalar = &kScalar;
#if defined(TICKINFER_HAVE_X86)
  static const Bf16Gemv kAvx2{Isa::Avx2, "avx2", gemv_bf16_avx2};
  static const Bf16Gemv kAvx512{Isa::Avx512, "avx512", gemv_bf16_avx512};
  table.avx2 = &kAvx2;
  table.avx512 = &kAvx512;
#endif
  return *table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
