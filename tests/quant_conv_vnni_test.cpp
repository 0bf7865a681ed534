// The VNNI implicit-GEMM convolution's tile (tflite/kernels/conv_s8_vnni.hpp) against the scalar
// reference bit for bit: each channel's sum init[r] + sum_i x[p][i] * w[r][i] (u8 times s8, int32
// wrap-around) requantized by TFLite's MultiplyByQuantizedMultiplier (tflite/fixed_point.hpp,
// checked against TFLite's outputs by the fidelity suites), plus the zero point, clamped. Every
// way the tile gets its rounding constants: made per tile from the RequantParams, made once
// (double_rounding_constants16) with a channel shifting left, and made once with every shift at
// most 0 (the form without the left shift), single rounding too. Seeded random data (the seed is
// in the failure message): 1 to 40 channels (every lane mask), 1 to 8 positions (every tile
// size), patches read tap by tap, each channel's shift (-31 to 8) bringing its sums near the int8
// range, so that a wrong rounding shows in the outputs rather than in a clamp; and cases whose
// sums reach the ends of int32 (support/conv_tile_cases.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tflite/fixed_point.hpp"
#include "support/conv_tile_cases.hpp"
#include "tflite/kernels/conv_s8_vnni.hpp"

namespace {

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::kernels;

using tickinfer::tfl::testing::conv_tile_reference;
using tickinfer::tfl::testing::ConvTileDraw;
using Case = tickinfer::tfl::testing::ConvTileCase<uint8_t>;

Case random_case(std::mt19937& rng, bool small, bool extreme = false) {
  return tickinfer::tfl::testing::random_conv_tile_case<uint8_t>(rng, ConvTileDraw{40, small, false, extreme});
}

template <Rounding R>
std::vector<int8_t> reference(const Case& c) {
  return conv_tile_reference<R>(c);
}

enum class Constants { PerTile, Prepared };

#if defined(__x86_64__)
template <Rounding R>
std::vector<int8_t> tile(const Case& c, Constants constants) {
  std::vector<int8_t> packed(conv_vnni_packed_bytes(c.rows, c.cols));
  pack_conv_s8_vnni(c.w.data(), c.rows, c.cols, packed.data());
  std::vector<int32_t> init(static_cast<size_t>(conv_vnni_padded_rows(c.rows)), 0);
  std::copy(c.init.begin(), c.init.end(), init.begin());
  std::vector<int32_t> offsets;
  for (int t = 0; t < c.taps; ++t) offsets.push_back(t * c.tap_elements);
  std::vector<const uint8_t*> xp;
  for (int p = 0; p < c.n; ++p) xp.push_back(c.x.data() + static_cast<size_t>(p) * c.stride);
  ConvVnniCall call;
  call.packed = packed.data();
  call.rows = c.rows;
  call.quads = conv_vnni_quads(c.cols);
  call.taps = ConvTaps{c.taps, c.cols / c.taps / 4, offsets.data()};
  call.xp = xp.data();
  call.n = c.n;
  call.init = init.data();
  std::vector<int8_t> rounding;
  if (constants == Constants::Prepared) {
    rounding.resize(conv_vnni_rounding_bytes(c.rows));
    double_rounding_constants16(c.multiplier.data(), c.shift.data(), c.rows, rounding.data());
    call.rounding = rounding.data();
    call.shifts_left = std::any_of(c.shift.begin(), c.shift.end(), [](int32_t s) { return s > 0; });
  }
  RequantParams q;
  q.multiplier = c.multiplier.data();
  q.shift = c.shift.data();
  q.output_zero_point = c.zp;
  q.act_min = c.lo;
  q.act_max = c.hi;
  std::vector<int8_t> y(static_cast<size_t>(c.n) * c.rows + 16, 0x5A);  // the bytes past the last stay
  conv_u8s8_requant_vnni<R>(call, q, y.data());
  EXPECT_TRUE(std::all_of(y.end() - 16, y.end(), [](int8_t v) { return v == 0x5A; }));
  y.resize(y.size() - 16);
  return y;
}
#endif

TEST(ConvVnni, EqualsTheReferenceEveryWayItRounds) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "not x86-64";
#else
  if (!s8_vnni_supported()) GTEST_SKIP() << "this CPU (or build) has no AVX-512 VNNI";
  const uint32_t seed = 20261207;
  std::mt19937 rng(seed);
  int prepared_right_only = 0, prepared_left = 0, inside = 0, outputs = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const Case c = random_case(rng, trial % 2 == 0);
    SCOPED_TRACE("seed " + std::to_string(seed) + " trial " + std::to_string(trial) + ": " + std::to_string(c.rows) +
                 " channels, " + std::to_string(c.n) + " positions, " + std::to_string(c.cols) + " patch bytes");
    const std::vector<int8_t> want = reference<Rounding::Double>(c);
    for (int8_t v : want) inside += v > c.lo && v < c.hi;
    outputs += static_cast<int>(want.size());
    ASSERT_EQ(tile<Rounding::Double>(c, Constants::PerTile), want);
    ASSERT_EQ(tile<Rounding::Double>(c, Constants::Prepared), want);
    const bool left = std::any_of(c.shift.begin(), c.shift.end(), [](int32_t s) { return s > 0; });
    ++(left ? prepared_left : prepared_right_only);
    ASSERT_EQ(tile<Rounding::Single>(c, Constants::PerTile), reference<Rounding::Single>(c));
    if (trial % 2 == 1) {  // and one whose sums reach the ends of int32
      const Case e = random_case(rng, false, true);
      SCOPED_TRACE("extreme: " + std::to_string(e.rows) + " channels, " + std::to_string(e.n) + " positions");
      ASSERT_EQ(tile<Rounding::Double>(e, Constants::PerTile), reference<Rounding::Double>(e));
      ASSERT_EQ(tile<Rounding::Double>(e, Constants::Prepared), reference<Rounding::Double>(e));
      ASSERT_EQ(tile<Rounding::Single>(e, Constants::PerTile), reference<Rounding::Single>(e));
    }
  }
  EXPECT_GT(inside, outputs / 4);  // many outputs are not clamped (a ReLU range clamps the negative ones)
  EXPECT_GT(prepared_left, 100);
  EXPECT_GT(prepared_right_only, 100);
#endif
}

}  // namespace
