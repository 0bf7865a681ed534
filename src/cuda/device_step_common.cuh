// What every step body of the CUDA graph form shares: the host/device qualifier, the
// activations (the scalar kernels' definitions, kernels/activation_scalar.hpp, in CUDA's float
// math), and the contract of the executor a body is written against.
//
// A step body is a template over Mixed (whether any of its tensors may be 16-bit:
// cuda/tensor_view.hpp) and an executor X with two members:
//   x.items(n, f)  calls f(i) once for every i in [0, n), in any order and in parallel: f(i) may
//                  not read what another item of the same call writes;
//   x.sync()       a barrier between two items() calls (only in steps that run as one block).
// On the GPU (device_graph.cu) items are a grid- or block-stride loop over threads and sync is
// __syncthreads(); on the host (device_program_host.cpp) items is a loop, forwards or backwards,
// so a body that breaks the rule gives different answers in the two orders and the tests see it.
#pragma once

#include <math.h>
#include <stdint.h>

#include "cuda/device_program.hpp"
#include "cuda/half_bits.hpp"
#include "cuda/host_device.hpp"
#include "cuda/tensor_view.hpp"

namespace tickinfer::cuda::steps {

// ActKind's order (kernels/activation_spec.hpp); cuda/device_program.cpp checks it.
enum : int32_t {
  kLinear,
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kSigmoid,
  kHardSigmoid,
  kTanh,
  kSoftmax,
  kGelu,
  kGeluTanh,
  kSwish,
  kSoftplus,
  kSoftsign,
  kExponential,
};

TI_HD inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

TI_HD inline float activate(const DevAct& a, float x) {
  switch (a.kind) {
    case kRelu:
      return x >= a.threshold ? fminf(x, a.max_value) : a.alpha * (x - a.threshold);
    case kLeakyRelu:
      return x >= 0.0f ? x : a.alpha * x;
    case kElu:
      return x > 0.0f ? x : a.alpha * expm1f(x);
    case kSelu:
      return 1.0507009873554804934f * (x > 0.0f ? x : 1.6732632423543772848f * expm1f(x));
    case kSigmoid:
      return sigmoid(x);
    case kHardSigmoid: {
      const float v = a.alpha * x + a.beta;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
    case kTanh:
      return tanhf(x);
    case kGelu:
      return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case kGeluTanh:
      return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case kSwish:
      return x * sigmoid(x);
    case kSoftplus:
      return (x > 0.0f ? x : 0.0f) + log1pf(expf(-fabsf(x)));
    case kSoftsign:
      return x / (1.0f + fabsf(x));
    case kExponential:
      return expf(x);
    default:  // Linear; Softmax is its own step
      return x;
  }
}

// lo <= y <= hi with NaN passing through (the CPU kernels' clamp does the same).
TI_HD inline float clamp(float y, float lo, float hi) { return y < lo ? lo : (y > hi ? hi : y); }

// A step's matrix at weight offset `at`, in the step's storage format (fp32, or fp16/bf16 read
// into fp32: cuda/half_bits.hpp).
TI_HD inline MatrixView matrix(const float* W, int64_t at, const DeviceStep& s) { return {W, at, s.weight_format}; }

// The step's tensors as its format fields say they are stored.
template <bool M>
TI_HD inline TensorIn<M> in_of(const float* A, const DeviceStep& s) { return {A, s.in, s.in_format}; }
template <bool M>
TI_HD inline TensorIn<M> rhs_of(const float* A, const DeviceStep& s) { return {A, s.rhs, s.rhs_format}; }
template <bool M>
TI_HD inline TensorIn<M> extra_of(const float* A, const DeviceStep& s, int e) {
  return {A, s.extra[e], s.extra_format[e]};
}
template <bool M>
TI_HD inline TensorOut<M> out_of(float* A, const DeviceStep& s) { return {A, s.out, s.out_format}; }

// init + x . column n of the row-major K x N matrix w (x: a float pointer or a TensorIn).
template <class V>
TI_HD inline float dot_column(const V& x, int K, const MatrixView& w, int N, int n, float init) {
  float acc = init;
  for (int k = 0; k < K; ++k) acc = fmaf(x[k], w[int64_t(k) * N + n], acc);
  return acc;
}

TI_HD inline float weight_or_zero(const float* W, int64_t at, int i) { return at < 0 ? 0.0f : W[at + i]; }

}  // namespace tickinfer::cuda::steps
