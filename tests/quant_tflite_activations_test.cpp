// TFLite's LSTM float logistic / tanh (tflite/kernels/tflite_float_activations.hpp): the AVX2
// version equals the scalar reference bit for bit, both stay within a few ulps of the true
// functions (computed in double here), and the clamps and NaN give defined values. Agreement
// with TFLite itself is checked end to end by the LSTM fixtures (quant_lstm_tflite_test,
// quant_tflite_reference_test), which compare whole hidden states bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/kernels/leaky_relu.hpp"
#include "tflite/kernels/lut.hpp"
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

// LEAKY_RELU: every variant equals x > 0 ? x : x * alpha written out, bit for bit, on signed
// zeros, infinities, NaN, subnormals and ordinary values, at lengths around the 8- and 16-lane
// steps and in place.
// The int8 table applied 64 bytes at a time (AVX-512 VBMI) and 32 at a time (AVX2) against the
// one-load-per-byte loop: a random table, every byte value, every tail length around the vectors,
// in place and not.
TEST(Int8Tables, VectorFormsEqualTheLoop) {
#if defined(__x86_64__)
  std::vector<std::pair<const char*, tfl::kernels::ApplyLutS8Fn>> forms;
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2)) {
    EXPECT_EQ(tfl::kernels::apply_lut_s8_fn(::tickinfer::kernels::Isa::Avx2), &tfl::kernels::apply_lut_s8_avx2);
    forms.emplace_back("avx2", tfl::kernels::apply_lut_s8_avx2);
  }
  if (tfl::kernels::lut_s8_vbmi_supported()) {
    EXPECT_EQ(tfl::kernels::apply_lut_s8_fn(::tickinfer::kernels::Isa::Avx512), &tfl::kernels::apply_lut_s8_vbmi);
    forms.emplace_back("vbmi", tfl::kernels::apply_lut_s8_vbmi);
  }
  if (forms.empty()) GTEST_SKIP() << "neither AVX2 nor AVX-512 VBMI on this CPU";
  tfl::kernels::LutS8 lut;
  uint32_t state = 12345;
  for (auto& v : lut.table) v = static_cast<int8_t>((state = state * 1664525u + 1013904223u) >> 24);
  for (const auto& [name, apply] : forms) {
    for (int n : {1, 31, 32, 33, 63, 64, 65, 127, 128, 200, 256, 1000}) {
      std::vector<int8_t> x(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<int8_t>(i * 37 + n);
      std::vector<int8_t> want(x.size() + 8, 5), got(x.size() + 8, 5);
      tfl::kernels::apply_lut_s8(lut, x.data(), want.data(), n);
      apply(lut, x.data(), got.data(), n);
      ASSERT_EQ(got, want) << name << ", n " << n << " (the 8 bytes after the row stay untouched)";
      std::vector<int8_t> in_place = x;
      apply(lut, in_place.data(), in_place.data(), n);
      ASSERT_TRUE(std::equal(in_place.begin(), in_place.end(), want.begin())) << name << ", in place, n " << n;
    }
  }
#else
  GTEST_SKIP() << "not x86-64";
#endif
}

TEST(TfliteFloatActivations, LeakyReluEqualsTheConditional) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, inf, -inf, std::nanf(""), 1e-40f, -1e-40f, 3.5f, -3.5f, 1e30f, -1e30f};
  std::vector<LeakyReluFn> fns{leaky_relu_scalar};
#if defined(__x86_64__)
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2)) fns.push_back(leaky_relu_avx2);
#endif
  for (float alpha : {0.2f, 0.01f, -1.5f}) {
    for (int64_t n : {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 100}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        x[static_cast<size_t>(i)] = i % 3 == 0 ? specials[i % 11] : static_cast<float>(i % 7) - 3.25f;
      }
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] > 0.0f ? x[i] : x[i] * alpha;
      for (size_t f = 0; f < fns.size(); ++f) {
        std::vector<float> got(x.size() + 2, 7.0f), in_place = x;
        fns[f](x.data(), got.data(), n, alpha);
        fns[f](in_place.data(), in_place.data(), n, alpha);
        for (size_t i = 0; i < x.size(); ++i) {
          ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0) << "variant " << f << " n " << n << " i " << i;
          ASSERT_EQ(std::memcmp(&in_place[i], &want[i], 4), 0) << "in place, variant " << f << " n " << n;
        }
        ASSERT_EQ(got[x.size()], 7.0f) << "wrote past n";
      }
    }
  }
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

// Every vector set this CPU runs (AVX2, AVX-512), against the scalar reference.
TEST(TfliteFloatActivations, EveryKernelSetEqualsScalarBitForBit) {
  const FloatActivationKernels& scalar = tflite_float_activations(tickinfer::kernels::Isa::Scalar);
  EXPECT_STREQ(scalar.name, "scalar");
  std::vector<float> x = sweep();
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  const int n = static_cast<int>(x.size());
  int sets = 0;
  for (tickinfer::kernels::Isa isa : {tickinfer::kernels::Isa::Avx2, tickinfer::kernels::Isa::Avx512}) {
    if (!tickinfer::kernels::isa_supported(isa)) continue;
    const FloatActivationKernels& best = tflite_float_activations(isa);
    ++sets;
    std::vector<float> a(x.size()), b(x.size());
    scalar.sigmoid(x.data(), a.data(), n);
    best.sigmoid(x.data(), b.data(), n);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << best.name << " sigmoid(" << x[i] << ")";
    scalar.tanh(x.data(), a.data(), n);
    best.tanh(x.data(), b.data(), n);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << best.name << " tanh(" << x[i] << ")";
    // In place (the LSTM overwrites its gates), and lengths around the vector widths.
    std::vector<float> y = x;
    best.sigmoid(y.data(), y.data(), n);
    scalar.sigmoid(x.data(), a.data(), n);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits(a[i]), bits(y[i])) << best.name << " in place " << x[i];
    for (int len = 0; len < 40; ++len) {
      std::vector<float> ys(static_cast<size_t>(len) + 1, 7.0f), yt(ys);
      best.sigmoid(x.data() + 3, ys.data(), len);
      best.tanh(x.data() + 3, yt.data(), len);
      for (int i = 0; i < len; ++i) {
        EXPECT_EQ(bits(ys[static_cast<size_t>(i)]), bits(tflite_sigmoid(x[static_cast<size_t>(i) + 3]))) << best.name;
        EXPECT_EQ(bits(yt[static_cast<size_t>(i)]), bits(tflite_tanh(x[static_cast<size_t>(i) + 3]))) << best.name;
      }
      EXPECT_EQ(ys[static_cast<size_t>(len)], 7.0f) << best.name << " wrote past n";
    }
  }
  if (sets == 0) GTEST_SKIP() << "no AVX2 on this CPU";
}

}  // namespace
}  // namespace tickinfer::tfl::kernels
