// The AVX2 implicit-GEMM convolution's tile (tflite/kernels/conv_s8_avx2.hpp) against the scalar
// reference bit for bit: each channel's sum init[r] + sum_i x[p][i] * w[r][i] (int8 times int8,
// int32 wrap-around) requantized by TFLite's MultiplyByQuantizedMultiplier
// (tflite/fixed_point.hpp, checked against TFLite's outputs by the fidelity suites), plus the zero
// point, clamped. Both roundings, with the constants made once (conv_avx2_prepare_requant), with
// and without the left shift; and the sums themselves (the hybrid form, conv_s16_s32_avx2). Seeded random data (the seed is in the failure message): 1 to 72
// channels (every partial block, one or more whole groups of 32 stored at once, a group of 32
// followed by a partial one), 1 to 8 positions (both tile sizes), patches read tap by tap from
// the widened input, weights and inputs over the whole int8 range, -128 included, each
// channel's shift (-31 to 8) bringing its sums near the int8 range, so that a wrong rounding
// shows in the outputs rather than in a clamp; and cases whose sums reach the ends of int32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "kernels/kernel_set.hpp"
#include "tflite/fixed_point.hpp"
#include "support/conv_tile_cases.hpp"
#include "tflite/kernels/conv_s8_avx2.hpp"

namespace {

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::kernels;

using tickinfer::tfl::testing::conv_tile_reference;
using tickinfer::tfl::testing::conv_tile_sum;
using tickinfer::tfl::testing::ConvTileDraw;
using Case = tickinfer::tfl::testing::ConvTileCase<int8_t>;

Case random_case(std::mt19937& rng, bool small, bool right_only, bool extreme = false) {
  return tickinfer::tfl::testing::random_conv_tile_case<int8_t>(rng, ConvTileDraw{72, small, right_only, extreme});
}

template <Rounding R>
std::vector<int8_t> reference(const Case& c) {
  return conv_tile_reference<R>(c);
}

#if defined(__x86_64__)
template <Rounding R>
std::vector<int8_t> tile(const Case& c, bool shifts_left) {
  std::vector<int16_t> packed(conv_avx2_packed_elements(c.rows, c.cols));
  pack_conv_s16_avx2(c.w.data(), c.rows, c.cols, packed.data());
  const size_t padded = static_cast<size_t>(conv_avx2_padded_rows(c.rows));
  std::vector<int32_t> init(padded, 0), multiplier(padded, 0), shift(padded, 0);
  std::copy(c.init.begin(), c.init.end(), init.begin());
  std::copy(c.multiplier.begin(), c.multiplier.end(), multiplier.begin());
  std::copy(c.shift.begin(), c.shift.end(), shift.begin());
  tickinfer::kernels::AlignedVector<int8_t> requant(conv_avx2_requant_bytes(c.rows));
  conv_avx2_prepare_requant<R>(multiplier.data(), shift.data(), c.rows, requant.data());
  std::vector<int16_t> x16(c.x.size());
  widen_s8_to_s16(c.x.data(), c.x.size(), x16.data());
  std::vector<int32_t> offsets;
  for (int t = 0; t < c.taps; ++t) offsets.push_back(t * c.tap_elements);
  std::vector<const int16_t*> xp;
  for (int p = 0; p < c.n; ++p) xp.push_back(x16.data() + static_cast<size_t>(p) * c.stride);
  ConvAvx2Call call;
  call.packed = packed.data();
  call.rows = c.rows;
  call.quads = c.cols / 4;
  call.taps = ConvTaps{c.taps, c.cols / c.taps / 4, offsets.data()};
  call.xp = xp.data();
  call.n = c.n;
  call.init = init.data();
  call.requant = requant.data();
  call.shifts_left = shifts_left;
  if (R == Rounding::Double && shifts_left) {  // the hybrid form: the sums themselves
    const int acc_step = conv_avx2_padded_rows(c.rows) + 8;
    std::vector<int32_t> acc(static_cast<size_t>(acc_step) * c.n, 0);
    conv_s16_s32_avx2(call, acc.data(), acc_step);
    for (int p = 0; p < c.n; ++p)
      for (int r = 0; r < c.rows; ++r) EXPECT_EQ(acc[static_cast<size_t>(p) * acc_step + r], conv_tile_sum(c, p, r)) << p << " " << r;
  }
  RequantParams q;
  q.output_zero_point = c.zp;
  q.act_min = c.lo;
  q.act_max = c.hi;
  std::vector<int8_t> y(static_cast<size_t>(c.n) * c.rows + 32, 0x5A);  // the bytes past the last stay
  conv_s16_requant_avx2<R>(call, q, y.data());
  EXPECT_TRUE(std::all_of(y.end() - 32, y.end(), [](int8_t v) { return v == 0x5A; }));
  y.resize(y.size() - 32);
  return y;
}
#endif

TEST(ConvAvx2, EqualsTheReferenceEveryWayItRounds) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "not x86-64";
#else
  if (!tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) GTEST_SKIP() << "this CPU (or build) has no AVX2";
  const uint32_t seed = 20261208;
  std::mt19937 rng(seed);
  int right_only = 0, left = 0, inside = 0, outputs = 0, grouped = 0, extreme_outputs = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const bool no_left = trial % 3 == 2;
    const Case c = random_case(rng, trial % 2 == 0, no_left);
    SCOPED_TRACE("seed " + std::to_string(seed) + " trial " + std::to_string(trial) + ": " + std::to_string(c.rows) +
                 " channels, " + std::to_string(c.n) + " positions, " + std::to_string(c.cols) + " patch elements");
    const std::vector<int8_t> want = reference<Rounding::Double>(c);
    for (int8_t v : want) inside += v > c.lo && v < c.hi;
    outputs += static_cast<int>(want.size());
    grouped += c.rows >= 32;
    ASSERT_EQ(tile<Rounding::Double>(c, true), want);
    if (no_left) {
      ASSERT_EQ(tile<Rounding::Double>(c, false), want);
      ++right_only;
    } else {
      left += std::any_of(c.shift.begin(), c.shift.end(), [](int32_t s) { return s > 0; });
    }
    ASSERT_EQ(tile<Rounding::Single>(c, true), reference<Rounding::Single>(c));
    if (trial % 2 == 1) {  // and one with extreme sums
      const Case e = random_case(rng, false, false, true);
      SCOPED_TRACE("extreme: " + std::to_string(e.rows) + " channels, " + std::to_string(e.n) + " positions");
      ASSERT_EQ(tile<Rounding::Double>(e, false), reference<Rounding::Double>(e));
      ASSERT_EQ(tile<Rounding::Single>(e, true), reference<Rounding::Single>(e));
      extreme_outputs += e.rows * e.n;
    }
  }
  EXPECT_GT(extreme_outputs, 3000);
  EXPECT_GT(inside, outputs / 4);  // many outputs are not clamped (a ReLU range clamps the negative ones)
  EXPECT_GT(left, 100);
  EXPECT_GT(right_only, 100);
  EXPECT_GT(grouped, 100);
#endif
}

}  // namespace
