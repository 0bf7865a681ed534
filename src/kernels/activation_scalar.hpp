#pragma once
// Internal: the scalar definition of every elementwise activation, in the plainest <cmath> form.
// This is the reference the SIMD variants are tested against. Include it only from scalar
// translation units (files without ISA flags), so no ISA-specific copy of these inline functions
// can be merged into portable code.
#include <cmath>

#include "kernels/activation_spec.hpp"

namespace tickinfer::kernels::scalar {

inline constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
inline constexpr float kSeluScale = 1.0507009873554804934193349852946f;

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// y = act(x). Softmax is not elementwise and is treated as Linear here (see activation()).
inline float activate(const ActivationSpec& a, float x) {
  switch (a.kind) {
    case ActKind::Linear:
    case ActKind::Softmax:
      return x;
    case ActKind::Relu:
      return x >= a.threshold ? std::fmin(x, a.max_value) : a.alpha * (x - a.threshold);
    case ActKind::LeakyRelu:
      return x >= 0.0f ? x : a.alpha * x;
    case ActKind::Elu:
      return x > 0.0f ? x : a.alpha * std::expm1(x);
    case ActKind::Selu:
      return kSeluScale * (x > 0.0f ? x : kSeluAlpha * std::expm1(x));
    case ActKind::Sigmoid:
      return sigmoid(x);
    case ActKind::HardSigmoid: {
      const float v = a.alpha * x + a.beta;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);  // NaN passes through
    }
    case ActKind::Tanh:
      return std::tanh(x);
    case ActKind::Gelu:
      return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
    case ActKind::GeluTanh: {
      const float k = std::sqrt(2.0f / 3.14159265358979323846f);
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    case ActKind::Swish:
      return x * sigmoid(x);
    case ActKind::Softplus:
      // log(1 + exp(x)) rewritten so exp never overflows: max(x, 0) + log1p(exp(-|x|)).
      return (x > 0.0f ? x : 0.0f) + std::log1p(std::exp(-std::fabs(x)));
    case ActKind::Softsign:
      return x / (1.0f + std::fabs(x));
    case ActKind::Exponential:
      return std::exp(x);
  }
  return x;
}

}  // namespace tickinfer::kernels::scalar
