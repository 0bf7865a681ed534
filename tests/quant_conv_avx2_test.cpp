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
#include "tflite/kernels/conv_s8_avx2.hpp"

namespace {

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::kernels;

struct Case {
  int rows = 0, cols = 0, n = 0, taps = 1;
  std::vector<int8_t> w;  // [rows][cols]
  std::vector<int8_t> x;  // each position's origin at p * stride; taps at tap * tap_elements
  int stride = 0, tap_elements = 0;
  std::vector<int32_t> init, multiplier, shift;
  int32_t zp = 0, lo = -128, hi = 127;
};

// Each channel's sum before requantization (int32 wrap-around, as the accumulator's).
int32_t raw_sum(const Case& c, int p, int r) {
  const int per_tap = c.cols / c.taps;
  uint32_t sum = static_cast<uint32_t>(c.init[static_cast<size_t>(r)]);
  for (int i = 0; i < c.cols; ++i) {
    const int8_t xv = c.x[static_cast<size_t>(p) * c.stride + static_cast<size_t>(i / per_tap) * c.tap_elements + i % per_tap];
    sum += static_cast<uint32_t>(xv * c.w[static_cast<size_t>(r) * c.cols + i]);
  }
  return static_cast<int32_t>(sum);
}

// small: data whose sums are tens, so the shifts that bring them near the int8 range are positive
// (a multiplier above 1, as where the output scale is finer than input times weight scale).
// right_only: every shift at most 0 (the kernel's form without the left shift).
// extreme: starting sums anywhere in int32 (its ends, around +-32768 and +-2^31 among them) and
// multipliers near 1 with shift 0 or -1, so the requantized values reach every range the
// narrowing meets, and the zero point's addition wraps where the reference's does.
Case random_case(std::mt19937& rng, bool small, bool right_only, bool extreme = false) {
  std::uniform_int_distribution<int> byte(0, 255), rows(1, 72), npos(1, 8), taps(1, 3), quads(1, 6), jitter(-1, 1);
  Case c;
  c.rows = rows(rng);
  c.n = npos(rng);
  c.taps = taps(rng);
  const int per_tap = 4 * quads(rng);  // a tap is a whole number of quads when read tap by tap
  c.cols = c.taps * per_tap;
  c.tap_elements = per_tap + 4 * (byte(rng) % 3);  // taps apart in memory, as a dilated conv's are
  c.stride = per_tap + byte(rng) % 9;
  c.x.resize(static_cast<size_t>(c.stride) * c.n + static_cast<size_t>(c.tap_elements) * c.taps + 64);
  for (int8_t& v : c.x) v = static_cast<int8_t>(small ? byte(rng) % 5 - 2 : byte(rng) - 128);
  c.w.resize(static_cast<size_t>(c.rows) * c.cols);
  for (int8_t& v : c.w) v = static_cast<int8_t>(small ? byte(rng) % 5 - 2 : byte(rng) - 128);
  std::uniform_int_distribution<int32_t> init(small ? -20 : -5'000'000, small ? 20 : 5'000'000), mult(1 << 30, INT32_MAX);
  for (int r = 0; r < c.rows; ++r) {
    c.init.push_back(init(rng));
    c.multiplier.push_back(mult(rng));
  }
  if (extreme) {
    std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), near(-300, 300), top(1 << 20, 0);
    const int32_t ends[] = {INT32_MIN, INT32_MAX, 32768, -32768, 65536, -65536, INT32_MIN + 128, INT32_MAX - 128};
    for (int r = 0; r < c.rows; ++r) {
      const int kind = byte(rng) % 3;
      c.init[static_cast<size_t>(r)] =
          kind == 0 ? any(rng) : static_cast<int32_t>(static_cast<uint32_t>(ends[byte(rng) % 8]) + static_cast<uint32_t>(near(rng)));
      // Half the channels at the largest multiplier with shift 0: a sum at an end of int32 stays
      // within a few units of it, where adding the zero point wraps.
      const bool at_end = byte(rng) % 2 == 0;
      c.multiplier[static_cast<size_t>(r)] = at_end ? INT32_MAX : INT32_MAX - byte(rng) * 4096;
      c.shift.push_back(at_end ? 0 : -(byte(rng) % 2));
    }
    for (int8_t& v : c.x) v = static_cast<int8_t>(byte(rng) % 5 - 2);
  }
  // Each channel's shift brings its largest sum to a few hundred: most outputs inside the range,
  // some clamped; a few channels far right (-31 to -13).
  for (int r = extreme ? c.rows : 0; r < c.rows; ++r) {
    double largest = 1.0;
    for (int p = 0; p < c.n; ++p) largest = std::max(largest, std::fabs(static_cast<double>(raw_sum(c, p, r))));
    int shift = static_cast<int>(std::floor(std::log2(300.0 / largest))) + jitter(rng);
    if (byte(rng) % 8 == 0) shift = -13 - byte(rng) % 19;
    c.shift.push_back(std::clamp(shift, -31, right_only ? 0 : 8));
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
      // + zero point wraps, as TFLite's int32 arithmetic (and every kernel's vector add) does
      const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(q) + static_cast<uint32_t>(c.zp));
      y[static_cast<size_t>(p) * c.rows + r] = static_cast<int8_t>(std::clamp(v, c.lo, c.hi));
    }
  return y;
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
      for (int r = 0; r < c.rows; ++r) EXPECT_EQ(acc[static_cast<size_t>(p) * acc_step + r], raw_sum(c, p, r)) << p << " " << r;
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
      extreme_outputs += static_cast<int>(e.init.size());
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
