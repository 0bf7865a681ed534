// Packing of a row-major (K x N) gemv weight matrix into the shared layout documented beside
// kGroup / kDotMaxN in kernel_set.hpp (column groups, or dot rows for small N).
#include "kernels/kernel_set.hpp"

namespace tickinfer::kernels {

void pack_weights(const float* w, int K, int N, float* packed) noexcept {
  if (is_dot_form(N)) {
    const int row = dot_row_floats(K);
    for (int n = 0; n < N; ++n) {
      float* dst = packed + static_cast<size_t>(n) * row;
      for (int k = 0; k < row; ++k) dst[k] = k < K ? w[static_cast<size_t>(k) * N + n] : 0.0f;
    }
    return;
  }
  const int groups = (N + kGroup - 1) / kGroup;
  for (int g = 0; g < groups; ++g) {
    const int width = group_width(N, g);
    float* base = packed + static_cast<size_t>(g) * kGroup * K;
    for (int k = 0; k < K; ++k) {
      float* dst = base + static_cast<size_t>(k) * width;
      for (int j = 0; j < width; ++j) {
        const int n = g * kGroup + j;
        dst[j] = n < N ? w[static_cast<size_t>(k) * N + n] : 0.0f;  // zero padding past N
      }
    }
  }
}

}  // namespace tickinfer::kernels
