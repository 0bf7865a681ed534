// Hybrid (dynamic-range) input quantization (tflite/kernels/quantize_rows.hpp) on rows built so
// that each rounding path of the x86 TFLite builds shows; every expected value is worked out by
// hand below from the formulas in the header (docs/quantization.md, "Hybrid input
// quantization"). The end-to-end check against TFLite itself is quant_tflite_reference_test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tflite/kernels/quantize_rows.hpp"

namespace tickinfer::tfl::kernels {
namespace {

// The rounding body of the best ISA here (every variant gives the same bits).
const QuantizeRowKernels& kRowBody = quantize_row_kernels(::tickinfer::kernels::best_isa());

// Symmetric, range 127: s = 1 and inv = 127 / 127 = 1 exactly, so p = x.
TEST(HybridQuantizeSymmetric, VectorBodyAndTailRoundDifferently) {
  // 0.49999997 (= 0.5 - 2^-25): the body adds 0.5 in float, 0.99999997 rounds to 1.0, and the
  // truncation gives 1; the tail's exact std::round gives 0. Index 1 is in the body (first
  // 8 values), index 8 in the tail.
  const float just_below_half = 0.5f - std::ldexp(1.0f, -25);
  std::vector<float> x = {127.0f, just_below_half, -2.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, just_below_half, -2.5f};
  std::vector<int8_t> q(x.size());
  const float s = quantize_row_symmetric(kRowBody, x.data(), static_cast<int>(x.size()), q.data());
  EXPECT_EQ(s, 1.0f);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 1);   // body: trunc(fl(0.49999997 + 0.5)) = trunc(1.0)
  EXPECT_EQ(q[8], 0);   // tail: round(0.49999997)
  EXPECT_EQ(q[2], -3);  // a true half rounds away from zero on both paths
  EXPECT_EQ(q[9], -3);
}

TEST(HybridQuantizeSymmetric, AllZeroRow) {
  std::vector<float> x(12, 0.0f);
  std::vector<int8_t> q(x.size(), 5);
  EXPECT_EQ(quantize_row_symmetric(kRowBody, x.data(), static_cast<int>(x.size()), q.data()), 1.0f);
  for (int8_t v : q) EXPECT_EQ(v, 0);
}

// Asymmetric, rmin = -200, rmax = 55: s = 255 / 255 = 1 (inv 1); zero point from the max side
// (error 127 + 55 < 128 + 200): 127 - 55 = 72.
TEST(HybridQuantizeAsymmetric, ZeroPointIsAddedAfterRounding) {
  std::vector<float> x = {-200.0f, 55.0f, -0.5f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f, -0.5f, 0.5f, -127.5f};
  std::vector<int8_t> q(x.size());
  float s = 0.0f;
  int32_t zp = 0;
  quantize_row_asymmetric(kRowBody, x.data(), static_cast<int>(x.size()), q.data(), &s, &zp);
  EXPECT_EQ(s, 1.0f);
  EXPECT_EQ(zp, 72);
  EXPECT_EQ(q[0], -128);  // 72 - 200 clamps
  EXPECT_EQ(q[1], 127);   // 72 + 55
  // 72 + round(-0.5) = 71 (rounding 72 - 0.5 = 71.5 instead would give 72), on both paths.
  EXPECT_EQ(q[2], 71);
  EXPECT_EQ(q[8], 71);
  EXPECT_EQ(q[3], 73);
  EXPECT_EQ(q[9], 73);
  EXPECT_EQ(q[10], -56);  // tail: 72 + round(-127.5) = 72 - 128
}

TEST(HybridQuantizeAsymmetric, RangeIsSubtractedInFloat) {
  // rmax - rmin = 1 + 6e-8 rounds to 1 + 2^-23 in float; divided by 255 in double and stored
  // as float it is one ulp above the value the exact (double) difference gives.
  const float lo = -6e-8f, hi = 1.0f;
  std::vector<float> x = {hi, lo, 0.25f};
  std::vector<int8_t> q(x.size());
  float s = 0.0f;
  int32_t zp = 0;
  quantize_row_asymmetric(kRowBody, x.data(), static_cast<int>(x.size()), q.data(), &s, &zp);
  const float float_range = hi - lo;
  const float want = static_cast<float>(static_cast<double>(float_range) / 255.0);
  const float exact_range_scale = static_cast<float>((static_cast<double>(hi) - static_cast<double>(lo)) / 255.0);
  ASSERT_NE(want, exact_range_scale) << "the row no longer separates the two computations";
  EXPECT_EQ(s, want);
  EXPECT_EQ(zp, -128);  // from the min side: -128 - rmin / s, just above -128, rounds to -128
}

TEST(HybridQuantizeAsymmetric, AllZeroRowAndNaNStayDefined) {
  std::vector<float> zeros(9, 0.0f);
  std::vector<int8_t> q(zeros.size(), 3);
  float s = 0.0f;
  int32_t zp = 7;
  quantize_row_asymmetric(kRowBody, zeros.data(), static_cast<int>(zeros.size()), q.data(), &s, &zp);
  EXPECT_EQ(s, 1.0f);
  EXPECT_EQ(zp, 0);
  for (int8_t v : q) EXPECT_EQ(v, 0);

  // A NaN must not crash or hit UB: it takes the low end, as the SSE float->int conversion
  // (which gives INT32_MIN) does in TFLite, and the finite values keep their range.
  std::vector<float> x = {1.0f, std::numeric_limits<float>::quiet_NaN(), -1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.5f};
  quantize_row_asymmetric(kRowBody, x.data(), static_cast<int>(x.size()), q.data(), &s, &zp);
  EXPECT_GE(zp, -128);
  EXPECT_LE(zp, 127);
  EXPECT_EQ(q[1], -128);
  std::vector<int8_t> qs(x.size());
  quantize_row_symmetric(kRowBody, x.data(), static_cast<int>(x.size()), qs.data());
  EXPECT_EQ(qs[0], 127);
  EXPECT_EQ(qs[1], -127);
  EXPECT_EQ(qs[2], -127);
}

}  // namespace
}  // namespace tickinfer::tfl::kernels
