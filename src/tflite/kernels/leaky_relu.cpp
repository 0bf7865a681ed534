// Scalar float LEAKY_RELU (tflite/kernels/leaky_relu.hpp) and the choice of variant.
#include "tflite/kernels/leaky_relu.hpp"

#include <cstring>

namespace tickinfer::tfl::kernels {

// Four lanes of the compiler's vector extension (plain code did not vectorize), then one at a time.
void leaky_relu_scalar(const float* x, float* y, int64_t n, float alpha) noexcept {
  using F4 = float __attribute__((vector_size(16)));
  using U4 = int32_t __attribute__((vector_size(16)));
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    F4 v;
    std::memcpy(&v, x + i, 16);
    const F4 scaled = v * alpha;
    const U4 keep = v > 0.0f;
    U4 vb, sb;
    std::memcpy(&vb, &v, 16);
    std::memcpy(&sb, &scaled, 16);
    const U4 r = (vb & keep) | (sb & ~keep);
    std::memcpy(y + i, &r, 16);
  }
  for (; i < n; ++i) {
    const float v = x[i], scaled = v * alpha;
    uint32_t vb, sb;
    std::memcpy(&vb, &v, 4);
    std::memcpy(&sb, &scaled, 4);
    const uint32_t keep = 0u - static_cast<uint32_t>(v > 0.0f);
    const uint32_t r = (vb & keep) | (sb & ~keep);
    std::memcpy(y + i, &r, 4);
  }
}

LeakyReluFn leaky_relu(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<LeakyReluFn> table;
  table.scalar = leaky_relu_scalar;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = leaky_relu_avx2;
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
