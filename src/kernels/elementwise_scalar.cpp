// Reference layer norm and elementwise binary ops.
#include <cmath>

#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::scalar {

void layer_norm(const float* x, size_t ldx, int rows, const float* gamma, const float* beta, float eps, float* y,
                size_t ldy, int n) noexcept {
  for (int r = 0; r < rows; ++r, x += ldx, y += ldy) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += x[i];
    const float mean = sum / static_cast<float>(n);
    float sq = 0.0f;  // two-pass (population) variance: no cancellation from E[x^2] - mean^2
    for (int i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
    const float inv_std = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
    for (int i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * gamma[i] + beta[i];
  }
}

void add(const float* a, const float* b, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void sub(const float* a, const float* b, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = a[i] - b[i];
}
void mul(const float* a, const float* b, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
void affine(const float* x, const float* scale, const float* shift, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = x[i] * scale[i] + shift[i];
}
void scale_sums(const int32_t* sums, const float* scale, float s, const float* bias, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = std::fma(static_cast<float>(sums[i]), s * scale[i], bias[i]);
}

}  // namespace tickinfer::kernels::scalar
