// Scalar reference of TFLite's LSTM float logistic / tanh (see the header) and the choice of
// kernel set. The expressions are written one rounding at a time; the tflite module is built
// with -ffp-contract=off so no compiler fuses them.
#include "tflite/kernels/tflite_float_activations.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tickinfer::tfl::kernels {

using namespace tflite_act;

float tflite_sigmoid(float x_in) noexcept {
  // The lower clamp only keeps m (below) in the normal exponent range; the result there is 0.
  const float x = std::fmax(std::fmin(x_in, kExpHi), kExpLo);
  const float h = x * 0.5f;  // exp(x) = exp(x/2)^2 keeps exp(x/2) away from denormals
  const float m = std::floor(h * kLog2e + 0.5f);
  float r = m * kLn2Hi + h;
  r = m * kLn2Lo + r;
  const float r2 = r * r;
  const float p_even = r2 * kP4 + kP2;
  const float p_odd = r2 * kP5 + kP3;
  const float p_low = r + 1.0f;
  float p = r * p_odd + p_even;
  p = r2 * p + p_low;
  // 2^m as a float built from its exponent bits; m is in [-52, 12] after the clamps.
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(m) + 127) << 23;
  float two_m;
  std::memcpy(&two_m, &bits, sizeof two_m);
  float e = p * two_m;
  e = e * e;
  return x_in < kExpLo ? 0.0f : e / (1.0f + e);
}

float tflite_tanh(float x_in) noexcept {
  const float x = std::fmax(std::fmin(x_in, kTanhClamp), -kTanhClamp);
  const float x2 = x * x;
  const float x3 = x2 * x;
  float p = kTanhNum[0];
  for (int i = 1; i < 4; ++i) p = p * x2 + kTanhNum[i];
  float q = kTanhDen[0];
  for (int i = 1; i < 5; ++i) q = q * x2 + kTanhDen[i];
  p = x3 * p + x;  // x (1 + x^2 P): the numerator's constant term is 1
  return p / q;
}

void tflite_sigmoid_scalar(const float* x, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = tflite_sigmoid(x[i]);
}

void tflite_tanh_scalar(const float* x, float* y, int n) noexcept {
  for (int i = 0; i < n; ++i) y[i] = tflite_tanh(x[i]);
}

float eigen_scalar_logistic(float x) noexcept {
  const float e = std::exp(x);
  return std::isinf(e) ? 1.0f : e / (1.0f + e);
}

void tflite_sigmoid_in_buffer(const FloatActivationKernels& k, const float* x, float* y, int n, int64_t offset) noexcept {
  const int head = static_cast<int>(std::min<int64_t>(n, (4 - offset % 4) % 4));
  const int packets = (n - head) / 4 * 4;
  for (int i = 0; i < head; ++i) y[i] = eigen_scalar_logistic(x[i]);
  if (packets > 0) k.sigmoid(x + head, y + head, packets);
  for (int i = head + packets; i < n; ++i) y[i] = eigen_scalar_logistic(x[i]);
}

namespace {
using ::tickinfer::kernels::Isa;
const FloatActivationKernels kScalar{Isa::Scalar, "scalar", tflite_sigmoid_scalar, tflite_tanh_scalar};
#if defined(TICKINFER_HAVE_X86)
const FloatActivationKernels kAvx2{Isa::Avx2, "avx2", tflite_sigmoid_avx2, tflite_tanh_avx2};
const FloatActivationKernels kAvx512{Isa::Avx512, "avx512", tflite_sigmoid_avx512, tflite_tanh_avx512};
#endif
}  // namespace

const FloatActivationKernels& tflite_float_activations(Isa isa) {
  ::tickinfer::kernels::IsaVariants<const FloatActivationKernels*> table;
  table.scalar = &kScalar;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = &kAvx2;
  table.avx512 = &kAvx512;
#endif
  return *table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
