// The bf16 gemv variants (plain loops over the packed layout, AVX2, AVX-512) against an independent
// reference: the unpacked bf16 matrix widened exactly and summed in order in double. fp32
// summation order is the only difference allowed, so the tolerance is the fp32 rounding bound
// of a K-term sum: |y - ref| <= 2 K eps (sum_k |x_k w_kn| + |init_n|) (+ a tiny absolute floor).
// Seeded random data (seed in every failure message), sizes around the panel (16), the 8-wide
// vector and the dot-form limit (4), misaligned pointers, guard values after y, init absent /
// separate / aliasing y, and clamping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tflite/kernels/gemv_bf16.hpp"

using namespace tickinfer::tfl::kernels;

namespace {

float widen(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t to_bf16_trunc(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

struct Variant {
  const char* name;
  GemvBf16Fn fn;
  bool available;
};

std::vector<Variant> variants() {
  std::vector<Variant> v{{"scalar", gemv_bf16_scalar, true}};
#if defined(__x86_64__)
  v.push_back({"avx2", gemv_bf16_avx2, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")});
  v.push_back({"avx512", gemv_bf16_avx512, tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)});
#endif
  return v;
}

enum class InitMode { None, Separate, Alias };

void check_case(const Variant& var, int K, int N, InitMode mode, bool clamp, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<uint16_t> w(static_cast<size_t>(K) * N);  // W[k][n]
  for (auto& v : w) v = to_bf16_trunc(d(rng));
  std::vector<float> xbuf(static_cast<size_t>(K) + 1);  // +1: x starts misaligned
  float* x = xbuf.data() + 1;
  for (int k = 0; k < K; ++k) x[k] = d(rng);
  std::vector<float> init(static_cast<size_t>(N));
  for (auto& v : init) v = d(rng);

  // Packed copy placed at an odd uint16 offset: kernels need no alignment.
  std::vector<uint16_t> pbuf(bf16_packed_elems(K, N) + 1);
  uint16_t* packed = pbuf.data() + 1;
  pack_bf16_weights(w.data(), K, N, packed);

  constexpr int kGuard = 9;
  const float guard = 12345.0f;
  std::vector<float> ybuf(static_cast<size_t>(N) + kGuard + 1, guard);
  float* y = ybuf.data() + 1;
  const float* init_ptr = nullptr;
  if (mode == InitMode::Separate) init_ptr = init.data();
  if (mode == InitMode::Alias) {
    std::memcpy(y, init.data(), sizeof(float) * N);
    init_ptr = y;
  }
  const float lo = clamp ? -1.0f : -std::numeric_limits<float>::infinity();
  const float hi = clamp ? 1.5f : std::numeric_limits<float>::infinity();
  var.fn(x, K, packed, N, init_ptr, y, lo, hi);

  const double eps = std::numeric_limits<float>::epsilon();
  for (int n = 0; n < N; ++n) {
    double ref = 0.0, mag = 0.0;
    for (int k = 0; k < K; ++k) {
      const double t = static_cast<double>(x[k]) * widen(w[static_cast<size_t>(k) * N + n]);
      ref += t;
      mag += std::fabs(t);
    }
    if (mode != InitMode::None) {
      ref += init[static_cast<size_t>(n)];
      mag += std::fabs(init[static_cast<size_t>(n)]);
    }
    ref = std::min(std::max(ref, static_cast<double>(lo)), static_cast<double>(hi));
    const double tol = 2.0 * (K + 1) * eps * mag + 1e-30;
    ASSERT_NEAR(y[n], ref, tol) << var.name << " K=" << K << " N=" << N << " n=" << n << " init mode "
                                << static_cast<int>(mode) << " clamp " << clamp << " seed " << seed;
  }
  for (int g = 0; g < kGuard; ++g) {
    ASSERT_EQ(y[N + g], guard) << var.name << " wrote past N: K=" << K << " N=" << N << " seed " << seed;
  }
  ASSERT_EQ(ybuf[0], guard) << var.name << " wrote before y";
}

TEST(QuantBf16Gemv, AllVariantsMatchTheUnpackedReferenceOverSizes) {
  const int Ks[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 64, 100, 129};
  const int Ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 80, 96, 129};
  unsigned seed = 1234;
  int ran = 0;
  for (const Variant& v : variants()) {
    if (!v.available) {
      std::printf("skip %s: CPU lacks it\n", v.name);
      continue;
    }
    for (int K : Ks)
      for (int N : Ns)
        for (InitMode m : {InitMode::None, InitMode::Separate, InitMode::Alias}) {
          check_case(v, K, N, m, (seed & 1) != 0, seed);
          ++seed;
          ++ran;
        }
  }
  EXPECT_GT(ran, 0);
}

TEST(QuantBf16Gemv, PackingKeepsTheFloatLayoutExactly) {
  // Panel form: W[k][n] sits at ((n / 16) K + k) 16 + n % 16; zero padding past N.
  const int K = 3, N = 18;
  std::vector<uint16_t> w(static_cast<size_t>(K) * N);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint16_t>(0x3f80 + i);  // 1.0f, then neighbours
  std::vector<uint16_t> packed(bf16_packed_elems(K, N), 0xffff);
  ASSERT_EQ(packed.size(), static_cast<size_t>(32 * K));
  pack_bf16_weights(w.data(), K, N, packed.data());
  EXPECT_EQ(packed[0 * 16 + 5], w[0 * N + 5]);
  EXPECT_EQ(packed[2 * 16 + 15], w[2 * N + 15]);
  EXPECT_EQ(packed[(1 * K + 1) * 16 + 1], w[1 * N + 17]);
  EXPECT_EQ(packed[(1 * K + 2) * 16 + 2], 0);  // column 18 does not exist
  // Dot form: row n padded to 16.
  const int N2 = 2;
  std::vector<uint16_t> w2(static_cast<size_t>(K) * N2);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = static_cast<uint16_t>(0x4000 + i);
  std::vector<uint16_t> p2(bf16_packed_elems(K, N2), 0xffff);
  ASSERT_EQ(p2.size(), static_cast<size_t>(16 * N2));
  pack_bf16_weights(w2.data(), K, N2, p2.data());
  EXPECT_EQ(p2[16 + 2], w2[2 * N2 + 1]);
  EXPECT_EQ(p2[16 + 3], 0);
}

TEST(QuantBf16Gemv, ChoiceFollowsTheIsaName) {
  EXPECT_STREQ(bf16_gemv(tickinfer::kernels::Isa::Scalar).name, "scalar");
  EXPECT_STREQ(bf16_gemv(tickinfer::kernels::Isa::Portable).name, "scalar");
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_STREQ(bf16_gemv(tickinfer::kernels::Isa::Avx2).name, "avx2");
  }
  if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)) {
    EXPECT_STREQ(bf16_gemv(tickinfer::kernels::Isa::Avx512).name, "avx512");
  }
#endif
}

}  // namespace
