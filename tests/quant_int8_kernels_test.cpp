// The int8 kernels against the scalar reference, bit for bit: seeded random data (the seed is in
// every failure message), sizes around the SIMD widths and tiles, misaligned pointers, guard bytes
// after outputs, both rounding modes. Also: FULLY_CONNECTED fast == reference through the op, and
// eval allocates nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/fixed_point.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/requant_scaled.hpp"
#include "tflite/kernels/sum_rows_s8.hpp"
#include "support/counting_allocator.hpp"
#include "support/quant_program_builder.hpp"

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::kernels;
using tickinfer::tfl::testing::ProgramBuilder;

namespace {

struct Variant {
  const char* name;
  PackS8Fn pack;
  int (*stride)(int cols);
  GemvS8S8S32Fn gemv;
  bool available;
  bool takes_minus_128;  // the quad-block kernel needs weights in [-127, 127]
};

std::vector<Variant> gemv_variants() {
  std::vector<Variant> v;
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  v.push_back({"avx2 rows", pack_s8_rows, s8_row_stride, gemv_s8s8_s32_avx2, avx2, true});
  v.push_back({"avx2 quad blocks", pack_s8_quad_blocks, s8_quad_stride, gemv_s8s8_s32_quads_avx2, avx2, false});
  v.push_back({"avx512vnni quad blocks", pack_s8_quads_vnni, s8_quad_stride, gemv_s8s8_s32_quads_vnni, s8_vnni_supported(), true});
#endif
  return v;
}

std::vector<int8_t> random_s8(std::mt19937& rng, size_t n, int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

}  // namespace

// The row sums of an int8 MEAN/SUM: the AVX2 variant equals the written-out sums (and the
// scalar variant) for widths around its 32- and 8-column steps, values at both int8 ends, and
// starting sums near the int32 limits, where the wrap is the reference's.
TEST(Int8Kernels, RowSumsEqualTheWrittenOutSums) {
  std::mt19937 rng(20261206);
  std::uniform_int_distribution<int> v8(-128, 127);
  std::vector<tickinfer::tfl::kernels::SumRowsS8Fn> fns{tickinfer::tfl::kernels::sum_rows_s8_scalar};
#if defined(__x86_64__)
  if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) fns.push_back(tickinfer::tfl::kernels::sum_rows_s8_avx2);
#endif
  for (int64_t inner : {1, 7, 8, 9, 31, 32, 33, 40, 64, 77}) {
    for (int64_t rows : {1, 2, 5, 64}) {
      std::vector<int8_t> x(static_cast<size_t>(rows * inner));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i % 11 == 0 ? -128 : i % 13 == 0 ? 127 : v8(rng));
      std::vector<int32_t> start(static_cast<size_t>(inner) + 3, 0x5A5A5A5A);
      for (int64_t j = 0; j < inner; ++j) start[static_cast<size_t>(j)] = j % 3 == 0 ? INT32_MAX - 100 : j % 3 == 1 ? INT32_MIN + 50 : 17;
      std::vector<int32_t> want = start;
      for (int64_t j = 0; j < inner; ++j) {
        uint32_t s = static_cast<uint32_t>(start[static_cast<size_t>(j)]);
        for (int64_t r = 0; r < rows; ++r) s += static_cast<uint32_t>(int32_t{x[static_cast<size_t>(r * inner + j)]});
        want[static_cast<size_t>(j)] = static_cast<int32_t>(s);
      }
      for (size_t f = 0; f < fns.size(); ++f) {
        std::vector<int32_t> got = start;
        fns[f](x.data(), rows, inner, got.data());
        ASSERT_EQ(got, want) << "variant " << f << " rows " << rows << " inner " << inner;
      }
    }
  }
}

TEST(Int8Kernels, GemvMatchesScalarAcrossSizesAndOffsets) {
  const int rows_list[] = {1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 129};
  const int cols_list[] = {1, 3, 15, 16, 17, 31, 33, 63, 64, 65, 127, 200};
  for (const Variant& v : gemv_variants()) {
    if (!v.available) {
      GTEST_LOG_(INFO) << v.name << " skipped: CPU lacks it";
      continue;
    }
    for (int rows : rows_list) {
      for (int cols : cols_list) {
        const uint32_t seed = static_cast<uint32_t>(rows * 1000 + cols);
        std::mt19937 rng(seed);
        const int stride = s8_row_stride(cols);
        const auto w = random_s8(rng, static_cast<size_t>(rows) * cols, v.takes_minus_128 ? -128 : -127);
        // The reference on the rows layout.
        std::vector<int8_t> wrows(static_cast<size_t>(rows) * stride);
        pack_s8_rows(w.data(), rows, cols, wrows.data());
        // The variant's layout in a buffer at an odd offset, x too: kernels must not assume alignment.
        std::vector<int8_t> wbuf(s8_packed_bytes(rows, cols) + 3);
        v.pack(w.data(), rows, cols, wbuf.data() + 3);
        std::vector<int8_t> xbuf(static_cast<size_t>(stride) + 5);
        auto x = random_s8(rng, static_cast<size_t>(stride));  // padding bytes random: weights there are 0
        std::memcpy(xbuf.data() + 5, x.data(), x.size());
        const size_t padded = static_cast<size_t>(s8_padded_rows(rows));
        std::vector<int32_t> ref(padded + 4, 0x5a5a5a5a), got = ref;
        gemv_s8s8_s32_scalar(wrows.data(), rows, stride, xbuf.data() + 5, ref.data());
        v.gemv(wbuf.data() + 3, rows, v.stride(cols), xbuf.data() + 5, got.data());
        ASSERT_EQ(std::vector<int32_t>(got.begin(), got.begin() + rows), std::vector<int32_t>(ref.begin(), ref.begin() + rows))
            << v.name << " rows " << rows << " cols " << cols << " seed " << seed;
        // Independent check of the reference on one row: plain dot product over the real columns.
        int32_t dot = 0;
        for (int c = 0; c < cols; ++c) dot += w[static_cast<size_t>(c)] * x[static_cast<size_t>(c)];
        ASSERT_EQ(ref[0], dot);
        ASSERT_EQ(got[padded], 0x5a5a5a5a) << v.name << ": guard past the padded rows overwritten";
      }
    }
  }
}

TEST(Int8Kernels, ExtremeValuesStayExact) {
  // Weights at -128 (or -127 for the quad blocks) times x = -128 or 127: vpmaddwd pairs reach
  // 2 * 16384, vpmaddubsw pairs 2 * 128 * 127 = 32512, the +128 trick 0 * -128; all exact.
  const int rows = 5, cols = 257, stride = s8_row_stride(cols);
  for (int wv : {-128, -127, 127}) {
    for (int xv : {-128, 127}) {
      std::vector<int8_t> w(static_cast<size_t>(rows) * cols, static_cast<int8_t>(wv));
      std::vector<int8_t> rows_layout(static_cast<size_t>(rows) * stride), packed(s8_packed_bytes(rows, cols));
      pack_s8_rows(w.data(), rows, cols, rows_layout.data());
      std::vector<int8_t> x(static_cast<size_t>(stride), static_cast<int8_t>(xv));
      std::vector<int32_t> ref(static_cast<size_t>(s8_padded_rows(rows))), got = ref;
      gemv_s8s8_s32_scalar(rows_layout.data(), rows, stride, x.data(), ref.data());
      EXPECT_EQ(ref[0], 257 * wv * xv);
      for (const Variant& v : gemv_variants()) {
        if (!v.available || (wv == -128 && !v.takes_minus_128)) continue;
        v.pack(w.data(), rows, cols, packed.data());
        v.gemv(packed.data(), rows, v.stride(cols), x.data(), got.data());
        EXPECT_EQ(std::vector<int32_t>(got.begin(), got.begin() + rows), std::vector<int32_t>(ref.begin(), ref.begin() + rows))
            << v.name << " w " << wv << " x " << xv;
      }
    }
  }
}

TEST(Int8Kernels, WeightsAtMinus128TakeTheRowsKernel) {
  // -128 weights would saturate the quad blocks' vpmaddubsw: the kernel choice avoids them.
  const std::vector<int8_t> w = {1, -128, 3};
  EXPECT_TRUE(s8_reaches_minus_128(w.data(), w.size()));
  EXPECT_FALSE(s8_reaches_minus_128(w.data(), 1));
  const S8Kernels& with = s8_kernels(tickinfer::kernels::Isa::Avx2, true);
  const S8Kernels& without = s8_kernels(tickinfer::kernels::Isa::Avx2, false);
  EXPECT_NE(std::string(with.name), "avx2 quad blocks");
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_EQ(std::string(without.name), "avx2 quad blocks");
  }
#else
  EXPECT_STREQ(without.name, "scalar");
#endif
  EXPECT_STREQ(s8_kernels(tickinfer::kernels::Isa::Scalar, false).name, "scalar");
}

TEST(Int8Kernels, LeadingBlocksOfAPackedMatrixMultiplyAlone) {
  // The LSTM multiplies the leading rows of a stacked matrix alone (S8Matrix::gemv's used_rows):
  // every layout must keep a prefix of whole blocks self-contained (VNNI's row sums included).
  const int rows = 40, cols = 37;
  std::mt19937 rng(4040);
  const auto w = random_s8(rng, static_cast<size_t>(rows) * cols, -128);
  const int stride = s8_row_stride(cols);
  std::vector<int8_t> wrows(static_cast<size_t>(rows) * stride);
  pack_s8_rows(w.data(), rows, cols, wrows.data());
  const auto x = random_s8(rng, static_cast<size_t>(stride));
  std::vector<int32_t> ref(static_cast<size_t>(s8_padded_rows(rows)));
  gemv_s8s8_s32_scalar(wrows.data(), rows, stride, x.data(), ref.data());
  for (const Variant& v : gemv_variants()) {
    if (!v.available || !v.takes_minus_128) continue;
    std::vector<int8_t> packed(s8_packed_bytes(rows, cols));
    v.pack(w.data(), rows, cols, packed.data());
    for (int used : {8, 16, 17, 33}) {
      std::vector<int32_t> got(static_cast<size_t>(s8_padded_rows(rows)) + 8, 0x5a5a5a5a);
      v.gemv(packed.data(), used, v.stride(cols), x.data(), got.data());
      EXPECT_EQ(std::vector<int32_t>(got.begin(), got.begin() + used), std::vector<int32_t>(ref.begin(), ref.begin() + used))
          << v.name << " used rows " << used;
      EXPECT_EQ(got[static_cast<size_t>(s8_padded_rows(used))], 0x5a5a5a5a) << v.name << ": wrote past the used blocks";
    }
  }
}

TEST(Int8Kernels, GemmOfSeveralVectorsEqualsTheirGemvs) {
  // Each kernel set's gemm (conv positions) against the scalar gemv of each vector, over row
  // counts around the 4-block step, patch sizes with and without an odd last quad, and vector
  // counts around the 2- and 4-vector steps; weights reach -128 where the set takes it.
  using tickinfer::kernels::Isa;
  struct Set {
    const S8Kernels* k;
    bool minus_128;
  };
  std::vector<Set> sets = {{&s8_kernels(Isa::Scalar, false), true}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    sets.push_back({&s8_kernels(Isa::Avx2, false), false});
    sets.push_back({&s8_kernels(Isa::Avx2, true), true});
  }
  if (s8_vnni_supported()) {
    sets.push_back({&s8_kernels(Isa::Avx512, true), true});
  } else {
    GTEST_LOG_(INFO) << "avx512vnni gemm skipped: CPU lacks AVX-512 VNNI";
  }
#endif
  for (const Set& set : sets) {
    const S8Kernels& k = *set.k;
    for (int rows : {1, 8, 9, 24, 32, 33, 40, 64, 65}) {
      for (int cols : {3, 8, 30, 96, 97}) {
        for (int n : {1, 2, 3, 4, 5, 7, 8, 9}) {
          const uint32_t seed = static_cast<uint32_t>(rows * 100000 + cols * 100 + n);
          std::mt19937 rng(seed);
          const auto w = random_s8(rng, static_cast<size_t>(rows) * cols, set.minus_128 ? -128 : -127);
          const int rstride = s8_row_stride(cols), kstride = k.stride(cols);
          std::vector<int8_t> wrows(static_cast<size_t>(rows) * rstride);
          pack_s8_rows(w.data(), rows, cols, wrows.data());
          std::vector<int8_t> packed(s8_packed_bytes(rows, cols));
          k.pack(w.data(), rows, cols, packed.data());
          // n vectors kstride apart (what the set reads), each copied to a rows-layout vector
          // for the reference; the padding bytes hold random values the zero weights cancel.
          const auto x = random_s8(rng, static_cast<size_t>(n) * kstride + 16);
          const size_t step = static_cast<size_t>(s8_padded_rows(rows));
          std::vector<int32_t> got(step * n + 8, 0x5a5a5a5a), ref(step);
          k.gemm(packed.data(), rows, kstride, x.data(), n, got.data());
          for (int p = 0; p < n; ++p) {
            std::vector<int8_t> xr(static_cast<size_t>(rstride), 0);
            std::memcpy(xr.data(), x.data() + static_cast<size_t>(p) * kstride, static_cast<size_t>(cols));
            gemv_s8s8_s32_scalar(wrows.data(), rows, rstride, xr.data(), ref.data());
            ASSERT_EQ(std::vector<int32_t>(got.begin() + p * step, got.begin() + p * step + rows),
                      std::vector<int32_t>(ref.begin(), ref.begin() + rows))
                << k.name << " rows " << rows << " cols " << cols << " n " << n << " vector " << p << " seed " << seed;
          }
          ASSERT_EQ(got[step * n], 0x5a5a5a5a) << k.name << ": wrote past the last vector's accumulators";
        }
      }
    }
  }
}

TEST(Int8Kernels, VnniSetTakesEveryWeightValue) {
  if (!s8_vnni_supported()) GTEST_SKIP() << "CPU lacks AVX-512 VNNI";
  EXPECT_STREQ(s8_kernels(tickinfer::kernels::Isa::Avx512, true).name, "avx512vnni quad blocks");
  EXPECT_STREQ(s8_kernels(tickinfer::kernels::Isa::Avx512, false).name, "avx512vnni quad blocks");
}

// Per-row requantization parameters as the kernels meet them: multipliers over 2^-40 .. 2^40,
// every fourth an exact power of two (ties are common with those), a bias on odd seeds, a zero
// point and a clamp from the seed.
template <Rounding R>
struct RandomRequant {
  std::vector<int32_t> bias, mult, shift;
  RequantParams p;
  RandomRequant(std::mt19937& rng, int rows, uint32_t seed)
      : bias(static_cast<size_t>(rows)), mult(bias.size()), shift(bias.size()) {
    std::uniform_int_distribution<int32_t> small(-100000, 100000);
    std::uniform_real_distribution<double> logm(-40.0, 40.0);
    for (int i = 0; i < rows; ++i) {
      const size_t k = static_cast<size_t>(i);
      bias[k] = small(rng);
      QuantizedMultiplier q = quantize_multiplier(std::pow(2.0, logm(rng)), R);
      if (i % 4 == 1) q = quantize_multiplier(std::ldexp(1.0, -(i % 31)), R);
      mult[k] = q.multiplier;
      shift[k] = q.shift;
    }
    p.bias = (seed & 1) ? bias.data() : nullptr;
    p.multiplier = mult.data();
    p.shift = shift.data();
    p.output_zero_point = static_cast<int32_t>(seed % 50) - 25;
    p.act_min = -120;
    p.act_max = 100;
  }
};

// Accumulators: the whole int32 range for every third, small ones (where ties are) otherwise.
static int32_t random_acc(std::mt19937& rng, int i) {
  std::uniform_int_distribution<int32_t> any(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  std::uniform_int_distribution<int32_t> small(-100000, 100000);
  return i % 3 == 0 ? any(rng) : small(rng);
}

// The positions form (a conv call's n output pixels, accumulators acc_step apart, outputs
// packed): each position as the per-row scalar requantization, every set, both roundings, channel
// counts around the vector width, positions 1 to 5.
template <Rounding R>
void check_requant_pixels(uint32_t seed, const S8Kernels& k) {
  std::mt19937 rng(seed);
  for (int rows : {1, 7, 8, 9, 17, 32, 35}) {
    const int n = 1 + static_cast<int>(seed % 5), acc_step = s8_padded_rows(rows) + static_cast<int>(seed % 3) * 8;
    std::vector<int32_t> acc(static_cast<size_t>(acc_step) * n);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = random_acc(rng, static_cast<int>(i));
    const RandomRequant<R> q(rng, rows, seed);
    std::vector<int8_t> want(static_cast<size_t>(rows) * n + 8, 77), got = want;
    for (int j = 0; j < n; ++j) {
      requantize_s32_to_s8_scalar<R>(acc.data() + static_cast<size_t>(j) * acc_step, rows, q.p,
                                     want.data() + static_cast<size_t>(j) * rows);
    }
    k.requant_pixels(R)(acc.data(), rows, n, acc_step, q.p, got.data());
    ASSERT_EQ(got, want) << k.name << " rows " << rows << " n " << n << " seed " << seed;
  }
}

TEST(Int8Kernels, RequantOfSeveralPositionsEqualsEachPositionsRequant) {
  using ::tickinfer::kernels::Isa;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (!::tickinfer::kernels::isa_supported(isa) || (isa == Isa::Avx512 && !s8_vnni_supported())) {
      GTEST_LOG_(INFO) << ::tickinfer::kernels::isa_name(isa) << " skipped: CPU lacks it";
      continue;
    }
    for (bool minus_128 : {false, true}) {
      const S8Kernels& k = s8_kernels(isa, minus_128);
      for (uint32_t seed = 1; seed <= 60; ++seed) {
        check_requant_pixels<Rounding::Double>(seed, k);
        check_requant_pixels<Rounding::Single>(seed, k);
      }
    }
  }
}

#if defined(__x86_64__)
template <Rounding R>
void check_requant(uint32_t seed, RequantS8Fn fast) {
  std::mt19937 rng(seed);
  for (int rows : {1, 7, 8, 9, 15, 16, 17, 23, 32, 47, 64}) {
    std::vector<int32_t> acc(static_cast<size_t>(rows));
    for (int i = 0; i < rows; ++i) acc[static_cast<size_t>(i)] = random_acc(rng, i);
    if (rows > 2) acc[1] = std::numeric_limits<int32_t>::min();
    const RandomRequant<R> q(rng, rows, seed);
    const RequantParams& p = q.p;
    std::vector<int8_t> ref(static_cast<size_t>(rows) + 8, 77), got = ref;
    requantize_s32_to_s8_scalar<R>(acc.data(), rows, p, ref.data());
    fast(acc.data(), rows, p, got.data());
    ASSERT_EQ(got, ref) << "rows " << rows << " seed " << seed << " rounding " << static_cast<int>(R);
  }
}

// FULLY_CONNECTED's double-precision requantization (requant_scaled.hpp): hand cases whose answer
// is the definition itself, round half away from zero, where single rounding rounds a negative
// tie up (-1.5 -> -1) and double rounding can round twice; then every variant against the scalar.
TEST(Int8Kernels, ScaledRequantRoundsHalfAwayFromZero) {
  // acc * 0.5 with acc = -3, -1, 1, 3, 5, -5 -> -1.5, -0.5, 0.5, 1.5, 2.5, -2.5
  const std::vector<int32_t> acc = {-3, -1, 1, 3, 5, -5, 0, 7};
  const std::vector<double> scale(acc.size(), 0.5);
  ScaledRequant q{nullptr, scale.data(), 0, -128, 127};
  const std::vector<int8_t> want = {-2, -1, 1, 2, 3, -3, 0, 4};
  std::vector<int8_t> y(acc.size());
  requantize_s32_to_s8_scaled_scalar(acc.data(), static_cast<int>(acc.size()), q, y.data());
  EXPECT_EQ(y, want);
  // Single rounding of the same tie: (x * m + 2^(t-1)) >> t takes -1.5 to -1, not TFLite's -2.
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(-3, 1 << 30, 0), -1);
  // A product outside int32 converts as x86's cvttsd2si does (INT32_MIN), then the zero point
  // wraps and the clamp takes it: TFLite's bytes, not a saturated 127.
  const int32_t big = 2000000000;
  const double four = 4.0;
  ScaledRequant wide{nullptr, &four, -5, -128, 127};
  int8_t one = 0;
  requantize_s32_to_s8_scaled_scalar(&big, 1, wide, &one);
  EXPECT_EQ(one, 127);  // INT32_MIN - 5 wraps to INT32_MAX - 4
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(7);
  for (int rows : {1, 3, 4, 7, 8, 33}) {
    std::vector<int32_t> a(static_cast<size_t>(rows)), bias(static_cast<size_t>(rows));
    std::vector<double> sc(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      a[static_cast<size_t>(r)] = static_cast<int32_t>(rng()) >> (rng() % 24);
      bias[static_cast<size_t>(r)] = static_cast<int32_t>(rng() % 20001) - 10000;
      sc[static_cast<size_t>(r)] = r % 3 == 0 ? 1.0 / static_cast<double>(1u << (rng() % 16)) : 1e-4 * (1 + rng() % 1000);
    }
    a[0] = -(1 << 12);  // a tie under a power-of-two scale
    ScaledRequant rq{bias.data(), sc.data(), static_cast<int32_t>(rng() % 256) - 128, -128, 127};
    std::vector<int8_t> ys(static_cast<size_t>(rows)), yv(static_cast<size_t>(rows));
    requantize_s32_to_s8_scaled_scalar(a.data(), rows, rq, ys.data());
    requantize_s32_to_s8_scaled_avx2(a.data(), rows, rq, yv.data());
    EXPECT_EQ(ys, yv) << rows;
  }
  requantize_s32_to_s8_scaled_avx2(&big, 1, wide, &one);
  EXPECT_EQ(one, 127);
#endif
}

TEST(Int8Kernels, RequantAvx2MatchesScalarBothModes) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2";
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    check_requant<Rounding::Double>(seed, requantize_s32_to_s8_avx2<Rounding::Double>);
    check_requant<Rounding::Single>(seed, requantize_s32_to_s8_avx2<Rounding::Single>);
  }
}

TEST(Int8Kernels, RequantAvx512MatchesScalarBothModes) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw")) {
    GTEST_SKIP() << "CPU lacks AVX-512F/BW: the 16-lane requantization is not run";
  }
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    check_requant<Rounding::Double>(seed, requantize_s32_to_s8_avx512<Rounding::Double>);
    check_requant<Rounding::Single>(seed, requantize_s32_to_s8_avx512<Rounding::Single>);
  }
}

TEST(Int8Kernels, RequantAvx2MatchesFormulaOnHandCases) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2";
  // x = 101 with M = 0.25 (2^30, -1): double 26, single 25 (see quant_fixed_point_test).
  std::vector<int32_t> acc(8, 101), mult(8, 1 << 30), shift(8, -1);
  RequantParams p;
  p.multiplier = mult.data();
  p.shift = shift.data();
  std::vector<int8_t> y(8);
  requantize_s32_to_s8_avx2<Rounding::Double>(acc.data(), 8, p, y.data());
  EXPECT_EQ(y, std::vector<int8_t>(8, 26));
  requantize_s32_to_s8_avx2<Rounding::Single>(acc.data(), 8, p, y.data());
  EXPECT_EQ(y, std::vector<int8_t>(8, 25));
}
#endif

namespace {

// A random int8 FULLY_CONNECTED (per-channel or per-tensor) prepared for `isa`; returns outputs.
std::vector<int8_t> run_random_fc(uint32_t seed, int batch, int depth, int units, bool per_channel,
                                  const char* isa, Rounding r) {
  std::mt19937 rng(seed);
  ProgramBuilder b;
  std::uniform_real_distribution<float> sc(0.001f, 0.05f);
  std::uniform_int_distribution<int> zp(-20, 20);
  const int in = b.tensor("x", DType::I8, {batch, depth}, {sc(rng)}, {zp(rng)});
  const auto w = random_s8(rng, static_cast<size_t>(units) * depth, -127, 127);
  std::vector<float> wscale(per_channel ? static_cast<size_t>(units) : 1);
  for (auto& s : wscale) s = sc(rng);
  const int f = b.constant("w", DType::I8, {units, depth}, w, wscale, std::vector<int64_t>(wscale.size(), 0), 0);
  std::vector<int32_t> bias(static_cast<size_t>(units));
  std::uniform_int_distribution<int32_t> bd(-5000, 5000);
  for (auto& v : bias) v = bd(rng);
  const int bi = b.constant("b", DType::I32, {units}, bias);
  const int out = b.tensor("y", DType::I8, {batch, units}, {sc(rng) * 4}, {zp(rng)});
  b.op(OpCode::FullyConnected, {in, f, bi}, {out}).options.activation =
      (seed % 2) ? FusedActivation::Relu : FusedActivation::None;
  auto op = b.prepare(0, isa, r);
  auto x = random_s8(rng, static_cast<size_t>(batch) * depth);
  std::vector<int8_t> y(static_cast<size_t>(batch) * units + 16, 55);
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  return y;
}

}  // namespace

TEST(Int8FullyConnected, FastMatchesReferenceOnRandomLayers) {
  const int shapes[][3] = {{1, 10, 128}, {1, 128, 64}, {1, 64, 32}, {1, 32, 1}, {3, 17, 9}, {2, 65, 13}, {1, 1, 1}, {1, 200, 7}};
  for (const char* isa : {"avx2", "avx512"}) {
    for (Rounding r : {Rounding::Double, Rounding::Single}) {
      uint32_t seed = 1;
      for (const auto& s : shapes) {
        for (bool pc : {false, true}) {
          ++seed;
          const auto ref = run_random_fc(seed, s[0], s[1], s[2], pc, "scalar", r);
          const auto got = run_random_fc(seed, s[0], s[1], s[2], pc, isa, r);
          ASSERT_EQ(got, ref) << isa << " seed " << seed << " shape " << s[0] << "x" << s[1] << "->" << s[2];
        }
      }
    }
  }
}

TEST(Int8FullyConnected, EvalAllocatesNothing) {
  for (const char* isa : {"scalar", "avx2"}) {
    ProgramBuilder b;
    const int in = b.tensor("x", DType::F32, {1, 40});
    const int q = b.tensor("q", DType::I8, {1, 40}, {0.02f}, {3});
    const int f = b.constant("w", DType::I8, {20, 40}, std::vector<int8_t>(800, 3), {0.01f}, {0});
    const int h = b.tensor("h", DType::I8, {1, 20}, {0.05f}, {-128});
    const int s = b.tensor("s", DType::I8, {1, 20}, {1.0f / 256}, {-128});
    const int yf = b.tensor("y", DType::F32, {1, 20});
    const int hy = b.tensor("hy", DType::F32, {1, 20});
    b.op(OpCode::Quantize, {in}, {q});
    b.op(OpCode::FullyConnected, {q, f, -1}, {h}).options.activation = FusedActivation::Relu;
    b.op(OpCode::Logistic, {h}, {s});
    b.op(OpCode::Dequantize, {s}, {yf});
    b.op(OpCode::FullyConnected, {in, f, -1}, {hy});  // hybrid
    std::vector<std::unique_ptr<PreparedOp>> ops;
    for (size_t i = 0; i < b.program.ops.size(); ++i) ops.push_back(b.prepare(i, isa));
    std::vector<float> x(40, 0.25f), y(20), y2(20);
    std::vector<int8_t> qb(40), hb(20), sb(20);
    TensorMemory m = b.memory();
    m.addr[in] = x.data();
    m.addr[q] = qb.data();
    m.addr[h] = hb.data();
    m.addr[s] = sb.data();
    m.addr[yf] = y.data();
    m.addr[hy] = y2.data();
    g_allocs = 0;
    g_counting = true;
    for (int it = 0; it < 10; ++it)
      for (auto& op : ops) op->eval(m);
    g_counting = false;
    EXPECT_EQ(g_allocs.load(), 0) << isa;
    EXPECT_GT(y[0], 0.5f);  // relu output >= zero point maps to sigmoid >= 0.5
  }
}

