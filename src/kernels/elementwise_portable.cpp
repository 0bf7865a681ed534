// Portable (vector-extension) instantiation of layer norm and the binary elementwise ops
// (elementwise_simd.hpp).
#include "kernels/elementwise_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_portable.hpp"

namespace tickinfer::kernels::portable {

using V = Simd::V;

void layer_norm(const float* x, const float* gamma, const float* beta, float eps, float* y,
                int n) noexcept {
  simd::layer_norm<Simd>(x, gamma, beta, eps, y, n);
}
void add(const float* a, const float* b, float* y, int n) noexcept {
  simd::map_binary<Simd>(a, b, y, n, [](V p, V q) { return Simd::add(p, q); });
}
void sub(const float* a, const float* b, float* y, int n) noexcept {
  simd::map_binary<Simd>(a, b, y, n, [](V p, V q) { return Simd::sub(p, q); });
}
void mul(const float* a, const float* b, float* y, int n) noexcept {
  simd::map_binary<Simd>(a, b, y, n, [](V p, V q) { return Simd::mul(p, q); });
}
void affine(const float* x, const float* scale, const float* shift, float* y, int n) noexcept {
  simd::affine<Simd>(x, scale, shift, y, n);
}

}  // namespace tickinfer::kernels::portable
