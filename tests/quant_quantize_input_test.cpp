// Model-input quantization (tflite/kernels/quantize_input.hpp): the scalar loop against values
// worked out by hand from TFLite's Quantize (round half away from zero of x / scale, + zero
// point, clamped), and the AVX2 and AVX-512 variants against the scalar one bit for bit, specials
// included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/kernels/quantize_input.hpp"

namespace {

using namespace tickinfer::tfl::kernels;

TEST(QuantQuantizeInput, ScalarMatchesHandValues) {
  // scale 0.5, zero point 3: q = round_half_away(x / 0.5) + 3, clamped.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f, 0.25f, -0.25f, 0.2f, -0.2f, 0.75f, -0.75f, 1.0f, 100.0f, -100.0f, nan, inf, -inf};
  // 0 -> 0; 0.5 -> 1; -0.5 -> -1; 0.4 -> 0; -0.4 -> 0; 1.5 -> 2; -1.5 -> -2; 2 -> 2; 200 -> clamp;
  // -200 -> clamp; NaN -> zero point; +-inf -> clamp.
  const std::vector<int8_t> want = {3, 4, 2, 3, 3, 5, 1, 5, 127, -128, 3, 127, -128};
  std::vector<int8_t> got(x.size());
  quantize_f32_to_s8_scalar(x.data(), got.data(), x.size(), 0.5f, 3);
  EXPECT_EQ(got, want);
}

// Random lengths 0..40 (every tail of both vector widths), any bit pattern, exact halves.
void expect_matches_scalar(QuantizeF32S8Fn fn) {
  const uint32_t seed = 20261130;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<int> zp(-128, 127);
  for (int trial = 0; trial < 500; ++trial) {
    const size_t n = static_cast<size_t>(trial % 41);
    const float scale = std::ldexp(1.0f + static_cast<float>(trial % 7) / 7.0f, -(trial % 9));
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) {
      const int kind = static_cast<int>(bits(rng) % 4);
      if (kind == 0) {
        const uint32_t b = bits(rng);  // any float bit pattern: NaNs, infinities, denormals
        std::memcpy(&x[i], &b, sizeof b);
      } else if (kind == 1) {
        x[i] = scale * (std::round(normal(rng)) + 0.5f);  // exact halves
      } else {
        x[i] = normal(rng) * scale * 40.0f;
      }
    }
    const int32_t z = zp(rng);
    std::vector<int8_t> want(n + 3, 0x5A), got(n + 3, 0x5A);  // the bytes past n stay untouched
    quantize_f32_to_s8_scalar(x.data(), want.data(), n, scale, z);
    fn(x.data(), got.data(), n, scale, z);
    ASSERT_EQ(got, want) << "seed " << seed << " trial " << trial;
  }
}

TEST(QuantQuantizeInput, Avx2MatchesScalar) {
#if defined(__x86_64__)
  if (!tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) GTEST_SKIP() << "no AVX2";
  expect_matches_scalar(quantize_f32_to_s8_avx2);
#else
  GTEST_SKIP() << "not x86";
#endif
}

TEST(QuantQuantizeInput, Avx512MatchesScalar) {
#if defined(__x86_64__)
  if (!tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  expect_matches_scalar(quantize_f32_to_s8_avx512);
#else
  GTEST_SKIP() << "not x86";
#endif
}

}  // namespace
