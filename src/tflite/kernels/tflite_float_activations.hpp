#pragma once
// The float logistic and tanh of TFLite's LSTM kernels (ApplyActivationToVector), reproduced
// operation for operation so that the float LSTM and the hybrid LSTM match the x86 TFLite
// builds bit for bit (a one-ulp difference in a hidden state flips the int8 rounding of the next
// hybrid op's input). Those builds evaluate Eigen's vectorized approximations without FMA:
//   logistic(x): x clamped to at most 16.6355324, halved; exp(x/2) by Cephes-style range
//     reduction (m = floor(x/2 * log2(e) + 0.5), r = x/2 - m ln2 in two parts) and a degree-5
//     polynomial, scaled by 2^m and squared; result e / (1 + e), and 0 below -104;
//   tanh(x): x clamped to +-7.90738964080810547; a [9/8] rational x (1 + x^2 P(x^2)) / Q(x^2).
// Every step is an IEEE single-precision add, multiply, divide, floor, min or max, so the
// scalar and vector versions agree bit for bit (none may contract into FMAs). noexcept, no
// allocation; NaN and huge inputs give defined values. x and y may alias.
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

struct FloatActivationKernels {
  ::tickinfer::kernels::Isa isa;
  const char* name;
  void (*sigmoid)(const float* x, float* y, int n) noexcept;
  void (*tanh)(const float* x, float* y, int n) noexcept;
};

// The family's table: scalar (plain C++), avx2 and avx512; portable falls back to scalar
// (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
const FloatActivationKernels& tflite_float_activations(::tickinfer::kernels::Isa isa);

// One value, for tails and for the scalar kernel set.
float tflite_sigmoid(float x) noexcept;
float tflite_tanh(float x) noexcept;

void tflite_sigmoid_scalar(const float* x, float* y, int n) noexcept;
void tflite_tanh_scalar(const float* x, float* y, int n) noexcept;
#if defined(TICKINFER_HAVE_X86)
void tflite_sigmoid_avx2(const float* x, float* y, int n) noexcept;
void tflite_tanh_avx2(const float* x, float* y, int n) noexcept;
void tflite_sigmoid_avx512(const float* x, float* y, int n) noexcept;
void tflite_tanh_avx512(const float* x, float* y, int n) noexcept;
#endif

// TFLite applies these through Eigen to a whole gate buffer at once, and Eigen's linear
// traversal gives the approximation above only to the elements its packets cover: those from
// the first 16-byte boundary of the buffer on, in whole packets of 8 and then at most one of 4
// floats. The elements before that boundary and after the last packet take Eigen's scalar path:
// logistic = e / (1 + e) with e = std::exp(x) (1 where e is infinite). `offset` is the first
// element's index in TFLite's scratch buffer (16-byte aligned), which fixes the boundary.
// Measured element by element on TFLite's preserved scratch buffer (random gate widths 1 to 25;
// every packet/scalar split as above).
void tflite_sigmoid_in_buffer(const FloatActivationKernels& k, const float* x, float* y, int n, int64_t offset) noexcept;
// Eigen's scalar logistic for float.
float eigen_scalar_logistic(float x) noexcept;

// The constants both versions use.
namespace tflite_act {
inline constexpr float kExpHi = 16.6355324f;  // the logistic is exactly 1 from here on
inline constexpr float kExpLo = -104.0f;      // and rounds to 0 below this
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = -0.693359375f;  // -ln 2 in two parts
inline constexpr float kLn2Lo = 2.12194440e-4f;
inline constexpr float kP2 = 0.49999141693115234375f;
inline constexpr float kP3 = 0.16666877269744873046875f;
inline constexpr float kP4 = 4.1898667812347412109375e-2f;
inline constexpr float kP5 = 8.33471305668354034423828125e-3f;
inline constexpr float kTanhClamp = 7.90738964080810547f;  // tanh rounds to +-1 beyond
inline constexpr float kTanhNum[4] = {1.394553628e-8f, 2.102733560e-5f, 3.520756727e-3f, 1.340216100e-1f};
inline constexpr float kTanhDen[5] = {8.015776984e-7f, 3.326951409e-4f, 2.597254514e-2f, 4.673548340e-1f, 1.0f};
}  // namespace tflite_act

}  // namespace tickinfer::tfl::kernels
