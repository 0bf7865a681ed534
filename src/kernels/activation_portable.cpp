// Portable (vector-extension) instantiation of the templated activations (activation_simd.hpp)
// and softmax.
#include "kernels/activation_simd.hpp"
#include "kernels/elementwise_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_portable.hpp"

namespace tickinfer::kernels::portable {

void activation(const ActivationSpec& act, const float* x, float* y, int n) noexcept {
  if (act.kind == ActKind::Softmax) {  // not elementwise: softmax over the whole array
    simd::softmax<Simd>(x, y, n);
    return;
  }
  simd::activation_array<Simd>(act, x, y, n);
}

void softmax(const float* x, float* y, int n) noexcept { simd::softmax<Simd>(x, y, n); }

}  // namespace tickinfer::kernels::portable
