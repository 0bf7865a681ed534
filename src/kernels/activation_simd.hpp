#pragma once
// Internal: elementwise activations over arrays, written once against a Simd traits type and
// instantiated per ISA in activation_<isa>.cpp. Definitions follow activation_scalar.hpp (the
// reference); vmath documents the accuracy of the transcendental pieces.
#include "kernels/vector_math.hpp"
#include "kernels/activation_spec.hpp"

namespace tickinfer::kernels::simd {

// y[i] = f(x[i]) for i in [0, n): full vectors, then one partial vector that reads and writes
// only the remaining elements. In-place safe (each vector is loaded before it is stored).
template <class S, class F>
inline void map_unary(const float* x, float* y, int n, F f) {
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) S::store(y + i, f(S::load(x + i)));
  if (i < n) S::store_partial(y + i, f(S::load_partial(x + i, n - i)), n - i);
}

inline constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
inline constexpr float kSeluScale = 1.0507009873554804934193349852946f;
inline constexpr float kInvSqrt2 = 0.70710678118654752f;
inline constexpr float kSqrt2OverPi = 0.79788456080286536f;

// Applies activation kind K (parameters from `a`) to one vector; K is a template argument so the
// element loop carries no branch on the kind.
template <class S, ActKind K>
inline typename S::V activate(const ActivationSpec& a, typename S::V x) {
  using V = typename S::V;
  const V zero = S::zero();
  const V one = S::set1(1.0f);
  if constexpr (K == ActKind::Relu) {
    const V thr = S::set1(a.threshold);
    const V pos = S::min(S::set1(a.max_value), x);
    const V neg = S::mul(S::set1(a.alpha), S::sub(x, thr));
    return S::select(S::ge(x, thr), pos, neg);  // NaN: alpha * NaN = NaN
  } else if constexpr (K == ActKind::LeakyRelu) {
    return S::select(S::ge(x, zero), x, S::mul(S::set1(a.alpha), x));
  } else if constexpr (K == ActKind::Elu) {
    return S::select(S::gt(x, zero), x,
                     S::mul(S::set1(a.alpha), vmath::expm1_nonpositive<S>(x)));
  } else if constexpr (K == ActKind::Selu) {
    const V neg = S::mul(S::set1(kSeluAlpha), vmath::expm1_nonpositive<S>(x));
    return S::mul(S::set1(kSeluScale), S::select(S::gt(x, zero), x, neg));
  } else if constexpr (K == ActKind::Sigmoid) {
    return vmath::sigmoid<S>(x);
  } else if constexpr (K == ActKind::HardSigmoid) {
    // Written as multiply, then add, like Keras (the compiler may still contract it to an FMA).
    const V v = S::add(S::mul(S::set1(a.alpha), x), S::set1(a.beta));
    return S::min(one, S::max(zero, v));  // data as second operand: NaN passes through
  } else if constexpr (K == ActKind::Tanh) {
    return vmath::tanh<S>(x);
  } else if constexpr (K == ActKind::Gelu) {
    // TensorFlow's form 0.5 x (1 + erf(x / sqrt 2)), cancellation for negative x included.
    return S::mul(S::mul(S::set1(0.5f), x),
                  S::add(one, vmath::erf<S>(S::mul(x, S::set1(kInvSqrt2)))));
  } else if constexpr (K == ActKind::GeluTanh) {
    const V inner = S::fmadd(S::mul(S::set1(0.044715f), S::mul(x, x)), x, x);
    return S::mul(S::mul(S::set1(0.5f), x),
                  S::add(one, vmath::tanh<S>(S::mul(S::set1(kSqrt2OverPi), inner))));
  } else if constexpr (K == ActKind::Swish) {
    return S::mul(x, vmath::sigmoid<S>(x));
  } else if constexpr (K == ActKind::Softplus) {
    // max(x, 0) + log1p(exp(-|x|)): exp never overflows.
    return S::add(S::max(zero, x), vmath::log1p_unit<S>(vmath::exp<S>(S::neg(S::abs(x)))));
  } else if constexpr (K == ActKind::Softsign) {
    return S::div(x, S::add(one, S::abs(x)));
  } else if constexpr (K == ActKind::Exponential) {
    return vmath::exp<S>(x);
  } else {  // Linear; Softmax is not elementwise and is identity here
    return x;
  }
}

template <class S, ActKind K>
inline void map_activation(const ActivationSpec& a, const float* x, float* y, int n) {
  map_unary<S>(x, y, n, [&a](typename S::V v) { return activate<S, K>(a, v); });
}

// y = act(x) over n elements; the kind is switched on once per call. Softmax is the caller's
// job (activation_<isa>.cpp routes it to softmax).
template <class S>
inline void activation_array(const ActivationSpec& a, const float* x, float* y, int n) {
  switch (a.kind) {
    case ActKind::Linear:
    case ActKind::Softmax:
      if (x != y) map_activation<S, ActKind::Linear>(a, x, y, n);
      return;
    case ActKind::Relu: return map_activation<S, ActKind::Relu>(a, x, y, n);
    case ActKind::LeakyRelu: return map_activation<S, ActKind::LeakyRelu>(a, x, y, n);
    case ActKind::Elu: return map_activation<S, ActKind::Elu>(a, x, y, n);
    case ActKind::Selu: return map_activation<S, ActKind::Selu>(a, x, y, n);
    case ActKind::Sigmoid: return map_activation<S, ActKind::Sigmoid>(a, x, y, n);
    case ActKind::HardSigmoid: return map_activation<S, ActKind::HardSigmoid>(a, x, y, n);
    case ActKind::Tanh: return map_activation<S, ActKind::Tanh>(a, x, y, n);
    case ActKind::Gelu: return map_activation<S, ActKind::Gelu>(a, x, y, n);
    case ActKind::GeluTanh: return map_activation<S, ActKind::GeluTanh>(a, x, y, n);
    case ActKind::Swish: return map_activation<S, ActKind::Swish>(a, x, y, n);
    case ActKind::Softplus: return map_activation<S, ActKind::Softplus>(a, x, y, n);
    case ActKind::Softsign: return map_activation<S, ActKind::Softsign>(a, x, y, n);
    case ActKind::Exponential: return map_activation<S, ActKind::Exponential>(a, x, y, n);
  }
}

}  // namespace tickinfer::kernels::simd
