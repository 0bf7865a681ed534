// TFLite's LSTM float logistic / tanh (tflite/kernels/tflite_float_activations.hpp): the AVX2
// version equals the scalar reference bit for bit, both stay within a few ulps of the true
// functions (computed in double here), and the clamps and NaN give defined values. Agreement
// with TFLite itself is checked end to end by the LSTM fixtures (quant_lstm_tflite_test,
// quant_tflite_reference_test), which compare whole hidden states bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "tflite/kernels/tflite_float_activations.hpp"

namespace tickinfer::tfl::kernels {
namespace {

std::vector<float> sweep() {
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 16.6355324f, 16.7f, -104.0f, -104.1f, 7.90738964080810547f, -8.0f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 3e38f, -3e38f}) {
    x.push_back(v);
  }
  x.push_back(0.5f);  // an odd count leaves a tail for the scalar path of the AVX2 loop
  return x;
}

double ulps(float got, double want) {
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(want)) - 23);
  return std::fabs(got - want) / ulp;
}

uint32_t bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

TEST(TfliteFloatActivations, CloseToTheTrueFunctions) {
  const std::vector<float> x = sweep();
  std::vector<float> s(x.size()), t(x.size());
  tflite_sigmoid_scalar(x.data(), s.data(), static_cast<int>(x.size()));
  tflite_tanh_scalar(x.data(), t.data(), static_cast<int>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double xd = x[i];
    const double sig = 1.0 / (1.0 + std::exp(-xd));
    if (sig > 1e-30) {
      EXPECT_LE(ulps(s[i], sig), 8.0) << "sigmoid(" << x[i] << ") = " << s[i];
    }
    if (sig <= 1e-30) {
      EXPECT_LE(s[i], 1e-30f) << x[i];
    }
    if (std::fabs(xd) > 1e-6) {
      EXPECT_LE(ulps(t[i], std::tanh(xd)), 8.0) << "tanh(" << x[i] << ") = " << t[i];
    } else {
      EXPECT_EQ(t[i], x[i]);
    }
  }
  // The clamps: exactly 1 from 16.6355324 up, 0 below -104, +-1 past the tanh clamp.
  EXPECT_EQ(tflite_sigmoid(20.0f), 1.0f);
  EXPECT_EQ(tflite_sigmoid(-105.0f), 0.0f);
  EXPECT_EQ(tflite_tanh(9.0f), 1.0f);
  EXPECT_EQ(tflite_tanh(-9.0f), -1.0f);
}

TEST(TfliteFloatActivations, NaNGivesDefinedValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(tflite_sigmoid(nan), 1.0f);  // clamped to the top of the range
  EXPECT_EQ(tflite_tanh(nan), 1.0f);
}

TEST(TfliteFloatActivations, BestKernelSetEqualsScalarBitForBit) {
  const FloatActivationKernels& best = tflite_float_activations(tickinfer::kernels::best_isa());
  const FloatActivationKernels& scalar = tflite_float_activations(tickinfer::kernels::Isa::Scalar);
  EXPECT_STREQ(scalar.name, "scalar");
  std::vector<float> x = sweep();
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  const int n = static_cast<int>(x.size());
  std::vector<float> a(x.size()), b(x.size());
  scalar.sigmoid(x.data(), a.data(), n);
  best.sigmoid(x.data(), b.data(), n);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << best.name << " sigmoid(" << x[i] << ")";
  scalar.tanh(x.data(), a.data(), n);
  best.tanh(x.data(), b.data(), n);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << best.name << " tanh(" << x[i] << ")";
  // In place (the LSTM overwrites its gates).
  std::vector<float> y = x;
  best.sigmoid(y.data(), y.data(), n);
  scalar.sigmoid(x.data(), a.data(), n);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits(a[i]), bits(y[i])) << "in place " << x[i];
}

}  // namespace
}  // namespace tickinfer::tfl::kernels
