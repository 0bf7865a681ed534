// The vector pieces of the hybrid (dynamic-range) path against their plain loops, bit for bit:
//  - the AVX2 row-quantization body against quantize_row_body_portable, on values that hit
//    rounding ties, the +-1024 saturation, NaN and infinities;
//  - every kernel set's row rounding (body and tail values) against the documented rule;
//  - the range search inside quantize_row_symmetric/asymmetric (every kernel set) against a serial
//    std::min/std::max loop written here, through the scale and zero point they return, on rows
//    with NaN, +-0 and infinities at every position;
//  - the AVX2 FC epilogue against the portable one, symmetric and asymmetric, NaN and infinite
//    biases, extreme accumulators, every unit count around the 8-lane width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/quantize_rows.hpp"

namespace {

using namespace tickinfer::tfl::kernels;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool have_avx2() { return tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2); }

// Every kernel set of the row quantization this CPU runs.
std::vector<const QuantizeRowKernels*> row_kernel_sets() {
  std::vector<const QuantizeRowKernels*> out{&quantize_row_kernels(tickinfer::kernels::Isa::Scalar)};
  for (auto isa : {tickinfer::kernels::Isa::Avx2, tickinfer::kernels::Isa::Avx512})
    if (tickinfer::kernels::isa_supported(isa)) out.push_back(&quantize_row_kernels(isa));
  return out;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<float> awkward_row(std::mt19937& rng, int n) {
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const float specials[] = {kNaN, kInf, -kInf, 0.0f, -0.0f, 0.5f, -0.5f, 2.5f, -1.5f, 1e30f, -1e30f, 1e-30f};
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = (rng() % 5 == 0) ? specials[rng() % 12] : u(rng);
  return x;
}

TEST(QuantHybridKernels, QuantizeBodyAvx2EqualsPortable) {
#if defined(__x86_64__)
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 8 * (1 + trial % 9);
    const auto x = awkward_row(rng, n);
    const float inv = trial % 3 == 0 ? 1.0f : trial % 3 == 1 ? 127.0f / 3.0f : 400.0f;  // 1.0: exact .5 ties
    const int32_t zp = trial % 2 ? 0 : static_cast<int32_t>(rng() % 256) - 128;
    const int32_t lo = trial % 2 ? -127 : -128, hi = 127;
    std::vector<int8_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    quantize_row_body_portable(x.data(), n, inv, zp, lo, hi, want.data());
    quantize_row_body_avx2(x.data(), n, inv, zp, lo, hi, got.data());
    ASSERT_EQ(got, want) << "trial " << trial;
  }
#else
  GTEST_SKIP() << "not x86";
#endif
}

TEST(QuantHybridKernels, QuantizeBodyAvx512EqualsPortable) {
#if defined(__x86_64__)
  if (!tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 rng(4);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 8 * (1 + trial % 9);  // odd multiples of 8 take the masked half vector
    const auto x = awkward_row(rng, n);
    const float inv = trial % 3 == 0 ? 1.0f : trial % 3 == 1 ? 127.0f / 3.0f : 400.0f;
    const int32_t zp = trial % 2 ? 0 : static_cast<int32_t>(rng() % 256) - 128;
    const int32_t lo = trial % 2 ? -127 : -128, hi = 127;
    std::vector<int8_t> want(static_cast<size_t>(n) + 8, 55), got(static_cast<size_t>(n) + 8, 55);
    quantize_row_body_portable(x.data(), n, inv, zp, lo, hi, want.data());
    quantize_row_body_avx512(x.data(), n, inv, zp, lo, hi, got.data());
    ASSERT_EQ(got, want) << "trial " << trial << " (the 8 bytes after the row stay untouched)";
  }
#else
  GTEST_SKIP() << "not x86";
#endif
}

// The documented rounding of one value, written here with std::round and plain comparisons:
// body lanes add +-0.5 in float and truncate, tail lanes round half away from zero; both
// saturate at +-1024 (NaN low) before the zero point and the clamp.
int8_t documented_value(float v, float inv, int32_t zp, int32_t lo, int32_t hi, bool body) {
  const float p = v * inv;
  const float r = body ? p + (p < 0.0f ? -0.5f : 0.5f) : std::round(p);
  const float c = r > -1024.0f ? (r < 1024.0f ? r : 1024.0f) : -1024.0f;
  return static_cast<int8_t>(std::clamp(static_cast<int32_t>(c) + zp, lo, hi));
}

// Both roundings of a row, through quantize_row_symmetric on rows whose largest magnitude is
// 127 (so inv = 1 and p = x): ties (0.5, -0.5, 1.5, -2.5, 3.5, +-126.5), values just below a
// half, NaN, on every length from 2 to 40 (tails of 1-7 values after every body length) and
// every kernel set.
TEST(QuantHybridKernels, RowRoundingEqualsTheDocumentedRule) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-127.0f, 127.0f);
  const float ties[] = {0.5f, -0.5f, 1.5f, -2.5f, 126.5f, -126.5f, 0.49999997f, -0.49999997f, 3.5f, kNaN};
  for (const QuantizeRowKernels* k : row_kernel_sets())
  for (int trial = 0; trial < 1200; ++trial) {
    const int n = 2 + trial % 39;
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = rng() % 2 ? ties[rng() % 10] : u(rng);
    x[rng() % static_cast<size_t>(n)] = rng() % 2 ? 127.0f : -127.0f;
    if (std::isnan(x[0])) x[0] = 3.5f;  // a NaN first value is the range's start and stays (scale NaN)
    std::vector<int8_t> got(static_cast<size_t>(n) + 16, 55);
    const float s = quantize_row_symmetric(*k, x.data(), n, got.data());
    ASSERT_EQ(s, 1.0f);
    for (int i = 0; i < n; ++i) {
      const int8_t want = documented_value(x[static_cast<size_t>(i)], 1.0f, 0, -127, 127, i < (n & ~7));
      ASSERT_EQ(got[static_cast<size_t>(i)], want) << "trial " << trial << " n " << n << " value " << i << " (" << x[static_cast<size_t>(i)] << ")";
    }
    for (size_t i = static_cast<size_t>(n); i < got.size(); ++i) ASSERT_EQ(got[i], 55) << "trial " << trial << ": wrote past the row";
  }
}

// The documented range rules with a plain serial loop.
float serial_symmetric_scale(const std::vector<float>& x) {
  float lo = x[0], hi = x[0];
  for (size_t i = 1; i < x.size(); ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float range = std::max(std::fabs(lo), std::fabs(hi));
  return range == 0.0f ? 1.0f : range / 127.0f;
}

void serial_asymmetric_range(const std::vector<float>& x, float* lo, float* hi) {
  *lo = 0.0f;
  *hi = 0.0f;
  for (float v : x) {
    *lo = std::min(*lo, v);
    *hi = std::max(*hi, v);
  }
}

// The header's zero point rule, with std::round.
int32_t documented_zero_point(float lo, float hi) {
  const double s = static_cast<double>(hi - lo) / 255.0;
  const double from_min = -128.0 - lo / s, from_max = 127.0 - hi / s;
  const double z = 128.0 + std::fabs(lo / s) < 127.0 + std::fabs(hi / s) ? from_min : from_max;
  if (z <= -128.0) return -128;
  if (z >= 127.0) return 127;
  return std::isnan(z) ? 0 : static_cast<int32_t>(std::round(z));
}

// The zero point at exact halves, rounded away from zero: rows whose range is 255 wide give
// s = 1, so the zero point is -128 - rmin or 127 - rmax exactly (the header's rule).
TEST(QuantHybridKernels, ZeroPointHalvesRoundAwayFromZero) {
  struct Case {
    std::vector<float> x;
    int32_t zp;
  };
  const Case cases[] = {
      {{-10.5f, 244.5f, 3.0f}, -118},  // from the min side: -128 + 10.5 = -117.5
      {{-200.5f, 54.5f, -7.0f}, 73},   // from the max side: 127 - 54.5 = 72.5
  };
  for (const QuantizeRowKernels* k : row_kernel_sets()) {
    for (const Case& c : cases) {
      std::vector<int8_t> q(c.x.size());
      float scale = 0.0f;
      int32_t zp = 0;
      quantize_row_asymmetric(*k, c.x.data(), static_cast<int>(c.x.size()), q.data(), &scale, &zp);
      EXPECT_EQ(scale, 1.0f);
      EXPECT_EQ(zp, c.zp) << "row starting " << c.x[0];
    }
  }
}

TEST(QuantHybridKernels, LaneRangeSearchEqualsTheSerialLoop) {
  std::mt19937 rng(9);
  for (const QuantizeRowKernels* k : row_kernel_sets())
  for (int trial = 0; trial < 2000; ++trial) {
    const QuantizeRowKernels& kRowBody = *k;
    const int n = 1 + trial % 160;  // every tail of the 32- and 64-value loops
    auto x = awkward_row(rng, n);
    std::vector<int8_t> q(static_cast<size_t>(n));
    const float s = quantize_row_symmetric(kRowBody, x.data(), n, q.data());
    const float want = serial_symmetric_scale(x);
    ASSERT_TRUE(same_bits(s, want) || (std::isnan(s) && std::isnan(want))) << "trial " << trial << " " << s << " vs " << want;

    float scale = 0.0f;
    int32_t zp = 0;
    quantize_row_asymmetric(kRowBody, x.data(), n, q.data(), &scale, &zp);
    float lo, hi;
    serial_asymmetric_range(x, &lo, &hi);
    if (lo == hi) {
      ASSERT_EQ(scale, 1.0f);
    } else {
      // The scale is (double)(hi - lo) / 255 narrowed to float: the range decides it.
      const float want_scale = static_cast<float>(static_cast<double>(hi - lo) / 255.0);
      ASSERT_TRUE(same_bits(scale, want_scale) || (std::isnan(scale) && std::isnan(want_scale))) << "trial " << trial;
      ASSERT_EQ(zp, documented_zero_point(lo, hi)) << "trial " << trial;
    }
  }
}

TEST(QuantHybridKernels, EpilogueAvx2EqualsPortable) {
#if defined(__x86_64__)
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(21);
  std::uniform_int_distribution<int32_t> small(-40000, 40000), any(std::numeric_limits<int32_t>::min(),
                                                                    std::numeric_limits<int32_t>::max());
  std::uniform_real_distribution<float> u(-2.0f, 2.0f), pos(1e-4f, 0.05f);
  const float biases[] = {kNaN, kInf, -kInf, -0.0f, 0.0f};
  for (int trial = 0; trial < 400; ++trial) {
    const int units = 1 + trial % 37;
    std::vector<int32_t> acc(static_cast<size_t>(units)), sums(static_cast<size_t>(units));
    std::vector<float> ws(static_cast<size_t>(units)), y0(static_cast<size_t>(units));
    for (int o = 0; o < units; ++o) {
      acc[static_cast<size_t>(o)] = trial % 7 == 0 ? any(rng) : small(rng);
      sums[static_cast<size_t>(o)] = small(rng) / 8;
      ws[static_cast<size_t>(o)] = pos(rng);
      y0[static_cast<size_t>(o)] = rng() % 9 == 0 ? biases[rng() % 5] : u(rng);
    }
    const bool asym = trial % 2 == 1;
    const bool relu = trial % 3 == 0;
    HybridRow r{acc.data(), asym ? sums.data() : nullptr, static_cast<float>(static_cast<int>(rng() % 256) - 128),
                0.0123f, ws.data(), relu ? 0.0f : -kInf, relu ? 6.0f : kInf};
    std::vector<float> want = y0, got = y0;
    hybrid_epilogue_portable(r, units, want.data());
    hybrid_epilogue_avx2(r, units, got.data());
    for (int o = 0; o < units; ++o) {
      ASSERT_TRUE(same_bits(got[static_cast<size_t>(o)], want[static_cast<size_t>(o)]))
          << "trial " << trial << " unit " << o << ": " << got[static_cast<size_t>(o)] << " vs " << want[static_cast<size_t>(o)];
    }
  }
#else
  GTEST_SKIP() << "not x86";
#endif
}

// The conv form, n positions at once: per-channel (asymmetric, offsets that wrap) and symmetric,
// with and without bias (no bias adds nothing: -0 stays -0), NaN / Inf / -0 biases, clamps.
TEST(QuantHybridKernels, ConvEpilogueAvx2AndAvx512EqualPortable) {
#if defined(__x86_64__)
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(22);
  std::uniform_int_distribution<int32_t> small(-40000, 40000), any(std::numeric_limits<int32_t>::min(),
                                                                    std::numeric_limits<int32_t>::max());
  std::uniform_real_distribution<float> u(-2.0f, 2.0f), pos(1e-4f, 0.05f);
  const float specials[] = {kNaN, kInf, -kInf, -0.0f, 0.0f};
  for (int trial = 0; trial < 400; ++trial) {
    const int out_c = 1 + trial % 37, n = 1 + trial % 4, acc_step = out_c + 8 * (trial % 2) + (8 - out_c % 8) % 8;
    std::vector<int32_t> acc(static_cast<size_t>(acc_step) * n), sums(static_cast<size_t>(out_c));
    std::vector<float> ws(static_cast<size_t>(out_c)), bias(static_cast<size_t>(out_c));
    for (int32_t& a : acc) a = trial % 7 == 0 ? any(rng) : small(rng);
    if (trial % 11 == 0) acc[0] = 0;  // (float)0 * scale: +0, or -0 where a scale is negative
    for (int o = 0; o < out_c; ++o) {
      sums[static_cast<size_t>(o)] = trial % 5 == 0 ? any(rng) : small(rng) / 8;
      ws[static_cast<size_t>(o)] = pos(rng);
      bias[static_cast<size_t>(o)] = rng() % 9 == 0 ? specials[rng() % 5] : u(rng);
    }
    const bool per_channel = trial % 2 == 1, relu = trial % 3 == 0, with_bias = trial % 4 != 2;
    HybridConvOut q;
    if (per_channel) {
      q.row_sums = sums.data();
      q.zero_point = static_cast<int32_t>(rng() % 256) - 128;
      q.filter_scale = ws.data();
    }
    q.input_scale = trial % 13 == 0 ? -0.0123f : 0.0123f;
    q.bias = with_bias ? bias.data() : nullptr;
    q.lo = relu ? 0.0f : -kInf;
    q.hi = relu ? 6.0f : kInf;
    q.leaky = trial % 5 < 2;  // a fused LEAKY_RELU after the clamp
    q.alpha = trial % 5 == 0 ? 0.3f : -0.01f;
    std::vector<float> want(static_cast<size_t>(out_c) * n + 3, 7.0f), got = want;
    hybrid_conv_epilogue_portable(acc.data(), out_c, n, acc_step, q, want.data());
    hybrid_conv_epilogue_avx2(acc.data(), out_c, n, acc_step, q, got.data());
    std::vector<float> got512 = want;
    if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)) {
      std::fill(got512.begin(), got512.end(), 7.0f);
      hybrid_conv_epilogue_avx512(acc.data(), out_c, n, acc_step, q, got512.data());
    }
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_TRUE(same_bits(got[k], want[k])) << "trial " << trial << " element " << k << ": " << got[k] << " vs "
                                              << want[k];
      ASSERT_TRUE(same_bits(got512[k], want[k])) << "avx512 trial " << trial << " element " << k << ": " << got512[k]
                                                 << " vs " << want[k];
    }
  }
#else
  GTEST_SKIP() << "not x86";
#endif
}

// The hybrid LSTM's gate pre-activations: both sides, either skipped, wrapping offsets, every
// length around the vector width.
TEST(QuantHybridKernels, LstmGateAvx2EqualsPortable) {
#if defined(__x86_64__)
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(23);
  std::uniform_int_distribution<int32_t> small(-40000, 40000), any(std::numeric_limits<int32_t>::min(),
                                                                    std::numeric_limits<int32_t>::max());
  std::uniform_real_distribution<float> u(-2.0f, 2.0f), pos(1e-6f, 0.01f);
  const float specials[] = {kNaN, kInf, -kInf, -0.0f, 0.0f};
  for (int trial = 0; trial < 400; ++trial) {
    const int n = trial % 41;
    std::vector<int32_t> ax(static_cast<size_t>(n)), ah(ax.size()), rx(ax.size()), rh(ax.size());
    std::vector<float> bias(ax.size());
    for (size_t r = 0; r < ax.size(); ++r) {
      ax[r] = trial % 7 == 0 ? any(rng) : small(rng);
      ah[r] = trial % 5 == 0 ? any(rng) : small(rng);
      rx[r] = small(rng) / 8;
      rh[r] = trial % 9 == 0 ? any(rng) : small(rng) / 8;
      bias[r] = rng() % 9 == 0 ? specials[rng() % 5] : u(rng);
    }
    HybridGateSide xs, hs;
    if (trial % 4 != 1) xs = {ax.data(), rx.data(), static_cast<int32_t>(rng() % 256) - 128, pos(rng)};
    if (trial % 4 != 2) hs = {ah.data(), rh.data(), static_cast<int32_t>(rng() % 256) - 128, pos(rng)};
    std::vector<float> want(ax.size() + 3, 5.0f), got = want;
    hybrid_gate_portable(bias.data(), xs, hs, n, want.data());
    hybrid_gate_avx2(bias.data(), xs, hs, n, got.data());
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_TRUE(same_bits(got[k], want[k])) << "trial " << trial << " row " << k << ": " << got[k] << " vs " << want[k];
    }
  }
#else
  GTEST_SKIP() << "not x86";
#endif
}

}  // namespace
