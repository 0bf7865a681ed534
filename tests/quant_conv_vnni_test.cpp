// The VNNI implicit-GEMM convolution's tile (tflite/kernels/conv_s8_vnni.hpp) against the scalar
// reference bit for bit: each channel's sum init[r] + sum_i x[p][i] * w[r][i] (u8 times s8, int32
// wrap-around) requantized by TFLite's MultiplyByQuantizedMultiplier (tflite/fixed_point.hpp,
// checked against TFLite's outputs by the fidelity suites), plus the zero point, clamped. Every
// way the tile gets its rounding constants: made per tile from the RequantParams, made once
// (double_rounding_constants16) with a channel shifting left, and made once with every shift at
// most 0 (the form without the left shift), single rounding too. Seeded random data (the seed is
// in the failure message): 1 to 40 channels (every lane mask), 1 to 8 positions (every tile
// size), patches read tap by tap, each channel's shift (-31 to 8) bringing its sums near the int8
// range, so that a wrong rounding shows in the outputs rather than in a clamp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tflite/fixed_point.hpp"
#include "tflite/kernels/conv_s8_vnni.hpp"

namespace {

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::kernels;

struct Case {
  int rows = 0, cols = 0, n = 0, taps = 1;
  std::vector<int8_t> w;                 // [rows][cols]
  std::vector<uint8_t> x;                // each position's origin at p * stride; taps at tap * tap_bytes
  int stride = 0, tap_bytes = 0;
  std::vector<int32_t> init, multiplier, shift;
  int32_t zp = 0, lo = -128, hi = 127;
};

// Each channel's sum before requantization (int32 wrap-around, as the accumulator's).
int32_t raw_sum(const Case& c, int p, int r) {
  const int per_tap = c.cols / c.taps;
  uint32_t sum = static_cast<uint32_t>(c.init[static_cast<size_t>(r)]);
  for (int i = 0; i < c.cols; ++i) {
    const uint8_t xv = c.x[static_cast<size_t>(p) * c.stride + static_cast<size_t>(i / per_tap) * c.tap_bytes + i % per_tap];
    sum += static_cast<uint32_t>(xv * c.w[static_cast<size_t>(r) * c.cols + i]);
  }
  return static_cast<int32_t>(sum);
}

// small: data whose sums are tens, so the shifts that bring them near the int8 range are positive
// (a multiplier above 1, as where the output scale is finer than input times weight scale).
Case random_case(std::mt19937& rng, bool small) {
  std::uniform_int_distribution<int> byte(0, 255), rows(1, 40), npos(1, 8), taps(1, 3), quads(1, 6), jitter(-1, 1);
  Case c;
  c.rows = rows(rng);
  c.n = npos(rng);
  c.taps = taps(rng);
  const int per_tap = 4 * quads(rng);  // a tap is a whole number of quads when read tap by tap
  c.cols = c.taps * per_tap;
  c.tap_bytes = per_tap + 4 * (byte(rng) % 3);  // taps apart in memory, as a dilated conv's are
  c.stride = per_tap + byte(rng) % 9;
  c.x.resize(static_cast<size_t>(c.stride) * c.n + static_cast<size_t>(c.tap_bytes) * c.taps + 64);
  for (uint8_t& v : c.x) v = static_cast<uint8_t>(small ? byte(rng) % 3 : byte(rng));
  c.w.resize(static_cast<size_t>(c.rows) * c.cols);
  for (int8_t& v : c.w) v = static_cast<int8_t>(small ? byte(rng) % 5 - 2 : byte(rng) - 128);
  std::uniform_int_distribution<int32_t> init(small ? -20 : -5'000'000, small ? 20 : 5'000'000), mult(1 << 30, INT32_MAX);
  for (int r = 0; r < c.rows; ++r) {
    c.init.push_back(init(rng));
    c.multiplier.push_back(mult(rng));
  }
  // Each channel's shift brings its largest sum to a few hundred: most outputs inside the range,
  // some clamped; a few channels far right (-31 to -13).
  for (int r = 0; r < c.rows; ++r) {
    double largest = 1.0;
    for (int p = 0; p < c.n; ++p) largest = std::max(largest, std::fabs(static_cast<double>(raw_sum(c, p, r))));
    int shift = static_cast<int>(std::floor(std::log2(300.0 / largest))) + jitter(rng);
    if (byte(rng) % 8 == 0) shift = -13 - byte(rng) % 19;
    c.shift.push_back(std::clamp(shift, -31, 8));
  }
  c.zp = byte(rng) - 128;
  c.lo = std::max(-128, c.zp - byte(rng) % 64);  // a fused ReLU's range starts at the zero point
  c.hi = 127 - byte(rng) % 4;
  return c;
}

template <Rounding R>
std::vector<int8_t> reference(const Case& c) {
  std::vector<int8_t> y(static_cast<size_t>(c.n) * c.rows);
  for (int p = 0; p < c.n; ++p)
    for (int r = 0; r < c.rows; ++r) {
      const int32_t q = multiply_by_quantized_multiplier<R>(raw_sum(c, p, r), c.multiplier[static_cast<size_t>(r)],
                                                            c.shift[static_cast<size_t>(r)]);
      y[static_cast<size_t>(p) * c.rows + r] = static_cast<int8_t>(std::clamp(q + c.zp, c.lo, c.hi));
    }
  return y;
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
  for (int t = 0; t < c.taps; ++t) offsets.push_back(t * c.tap_bytes);
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
  }
  EXPECT_GT(inside, outputs / 4);  // many outputs are not clamped (a ReLU range clamps the negative ones)
  EXPECT_GT(prepared_left, 100);
  EXPECT_GT(prepared_right_only, 100);
#endif
}

}  // namespace
