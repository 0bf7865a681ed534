// The fused quad-block gemv + single-rounding requantization (tflite/kernels/gemv_s8.hpp,
// block_requant.hpp) equals the plain reference path, the scalar s8 gemv followed by the scalar
// requantization, bit for bit, for AVX2 and AVX-512 VNNI: seeded random weights (-127..127 for
// AVX2's quad blocks, -128..127 for VNNI's),
// inputs over all of int8, biases and per-row multipliers/shifts over their whole ranges, sizes
// around the 8-row block and the 4-block pass, guard bytes after y.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/fixed_point.hpp"
#include "tflite/kernels/block_requant.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace {

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::kernels;

#if defined(__x86_64__)
// One fused kernel against the reference over 200 seeded trials. w_min: the lowest weight the
// kernel takes (-127 for AVX2's sign trick, -128 for VNNI's).
void check_fused(PackS8Fn pack, GemvRequantSingleFn fused, int w_min) {
  const uint32_t seed = 20261130;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> s8(-128, 127), w8(w_min, 127), zp(-128, 127);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), small_bias(-20000, 20000);
  std::uniform_real_distribution<double> scale(1e-7, 0.9);
  int high_word_trials = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int rows = 1 + trial % 45, cols = 1 + (trial * 7) % 70;
    std::vector<int8_t> w(static_cast<size_t>(rows) * cols), x(static_cast<size_t>(cols));
    for (auto& v : w) v = static_cast<int8_t>(w8(rng));
    for (auto& v : x) v = static_cast<int8_t>(s8(rng));
    std::vector<int32_t> bias(rows), mult(rows), shift(rows);
    for (int r = 0; r < rows; ++r) {
      bias[r] = trial % 4 == 0 ? any(rng) : small_bias(rng);
      // Every third trial keeps all multipliers below 0.5 (the high-word requantization), the
      // others mix in multipliers up to 3.6 (the general one).
      const double m = trial % 3 == 1 ? scale(rng) * 0.5 : trial % 5 == 0 ? scale(rng) * 4.0 : scale(rng);
      const QuantizedMultiplier q = quantize_multiplier(m, Rounding::Single);
      mult[r] = q.multiplier;
      shift[r] = q.shift;
    }
    const int32_t z = zp(rng);
    const int32_t lo = trial % 3 == 0 ? z : -128, hi = 127;

    // Reference: plain s8 gemv, then the scalar requantization.
    const int stride = s8_row_stride(cols);
    std::vector<int8_t> wp(static_cast<size_t>(rows) * stride), xp(static_cast<size_t>(stride), 0);
    pack_s8_rows(w.data(), rows, cols, wp.data());
    std::copy(x.begin(), x.end(), xp.begin());
    std::vector<int32_t> acc(rows);
    gemv_s8s8_s32_scalar(wp.data(), rows, stride, xp.data(), acc.data());
    RequantParams p;
    p.bias = bias.data();
    p.multiplier = mult.data();
    p.shift = shift.data();
    p.output_zero_point = z;
    p.act_min = lo;
    p.act_max = hi;
    std::vector<int8_t> want(rows + 8, 0x5A), got(rows + 8, 0x5A);
    requantize_s32_to_s8_scalar<Rounding::Single>(acc.data(), rows, p, want.data());

    std::vector<int8_t> packed(s8_packed_bytes(rows, cols));
    pack(w.data(), rows, cols, packed.data());
    const BlockRequantSingle q = pack_block_requant_single(rows, bias.data(), mult.data(), shift.data(), z, lo, hi);
    if (trial % 3 == 1) {
      ASSERT_TRUE(q.high_word) << "trial " << trial;
      ++high_word_trials;
    }
    fused(packed.data(), rows, s8_quad_stride(cols), xp.data(), q, got.data());
    ASSERT_EQ(got, want) << "seed " << seed << " trial " << trial << " rows " << rows << " cols " << cols;
  }
  EXPECT_GT(high_word_trials, 60);
}
#endif

TEST(QuantFcFusedRequant, Avx2MatchesScalarGemvAndRequantization) {
#if defined(__x86_64__)
  if (!tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) GTEST_SKIP() << "no AVX2";
  check_fused(pack_s8_quad_blocks, gemv_s8_quads_requant_single_avx2, -127);
#else
  GTEST_SKIP() << "not x86";
#endif
}

TEST(QuantFcFusedRequant, VnniMatchesScalarGemvAndRequantization) {
#if defined(__x86_64__)
  if (!s8_vnni_supported()) GTEST_SKIP() << "CPU lacks AVX-512 VNNI";
  check_fused(pack_s8_quads_vnni, gemv_s8_quads_requant_single_vnni, -128);
#else
  GTEST_SKIP() << "not x86";
#endif
}

}  // namespace
