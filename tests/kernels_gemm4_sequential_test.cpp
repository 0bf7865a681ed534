// The sequential fp32 product of 1 to 4 rows (KernelSet::gemm4_sequential) against an independent reference: the
// plain loop over the unpacked matrix, total = 0; total += x * w (k ascending, fp32, no FMA: this
// file is built without FMA flags, and contraction is off); y = clamp(init + total). The kernel
// promises that rounding exactly, so the outputs must be equal bit for bit. Seeded data (seed in every message); N around the 8-wide half panel and the 16-wide
// panel (N > 4: panel form only); row strides with gaps, misaligned pointers, guard values around
// every output row; init absent or present; clamping.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernel_set.hpp"

using namespace tickinfer::kernels;

namespace {

void check_case(Gemm4SequentialFn fn, int rows, int K, int N, bool with_init, bool clamp, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> wm(static_cast<size_t>(K) * N);  // W[k][n]
  for (auto& v : wm) v = d(rng);
  std::vector<float> packed(packed_floats(K, N) + 1);
  pack_weights(wm.data(), K, N, packed.data() + 1);  // misaligned
  const size_t ldx = static_cast<size_t>(K) + 3;                          // rows with a gap
  std::vector<float> xbuf(ldx * kGemm4Rows + 1);
  for (auto& v : xbuf) v = d(rng);
  const float* x = xbuf.data() + 1;
  std::vector<float> init(static_cast<size_t>(N));
  for (auto& v : init) v = d(rng);
  const size_t ldy = static_cast<size_t>(N) + 5;
  const float guard = -777.0f;
  std::vector<float> ybuf(ldy * kGemm4Rows + 1, guard);
  float* y = ybuf.data() + 1;
  const float lo = clamp ? -1.0f : -std::numeric_limits<float>::infinity();
  const float hi = clamp ? 2.0f : std::numeric_limits<float>::infinity();
  fn(x, rows, ldx, K, packed.data() + 1, N, with_init ? init.data() : nullptr, y, ldy, lo, hi);

  for (int r = 0; r < kGemm4Rows; ++r) {
    if (r >= rows) {  // rows past `rows` are not written
      for (size_t g = 0; g < ldy; ++g) ASSERT_EQ(y[r * ldy + g], guard) << "wrote row " << r << " of " << rows;
      continue;
    }
    for (int n = 0; n < N; ++n) {
      volatile float total = 0.0f;  // volatile: one rounding per product and per sum, whatever the flags
      for (int k = 0; k < K; ++k) {
        volatile float prod = x[r * ldx + k] * wm[static_cast<size_t>(k) * N + n];
        total = total + prod;
      }
      float ref = (with_init ? init[static_cast<size_t>(n)] : 0.0f) + total;
      ref = std::min(std::max(ref, lo), hi);
      ASSERT_EQ(y[r * ldy + n], ref)
          << "rows=" << rows << " K=" << K << " N=" << N << " row " << r << " n=" << n << " seed " << seed;
    }
    for (size_t g = static_cast<size_t>(N); g < ldy; ++g) {
      ASSERT_EQ(y[r * ldy + g], guard) << "wrote past N: K=" << K << " N=" << N << " row " << r << " seed " << seed;
    }
  }
  ASSERT_EQ(ybuf[0], guard);
}

TEST(KernelsGemm4Sequential, MatchesTheUnpackedReferenceOverSizes) {
  if (!isa_supported(Isa::Avx2)) GTEST_SKIP() << "CPU lacks AVX2 + FMA";
  const Gemm4SequentialFn fn = kernel_set(Isa::Avx2).gemm4_sequential;
  ASSERT_NE(fn, nullptr);
  const int Ks[] = {1, 2, 3, 7, 8, 9, 30, 96, 97, 160};
  const int Ns[] = {5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 64, 65};
  unsigned seed = 77;
  for (int K : Ks)
    for (int N : Ns)
      for (bool with_init : {false, true}) {
        check_case(fn, kGemm4Rows, K, N, with_init, (seed % 3) == 0, seed);
        ++seed;
      }
}

// Fewer rows (a batch-1 FULLY_CONNECTED, a conv's last pixels) take another path: each row over
// up to four panels at a time; N spans 1 to 6 panels so each group size and a partial one occur.
TEST(KernelsGemm4Sequential, FewerRowsMatchTheReferenceAndWriteOnlyThem) {
  if (!isa_supported(Isa::Avx2)) GTEST_SKIP() << "CPU lacks AVX2 + FMA";
  const Gemm4SequentialFn fn = kernel_set(Isa::Avx2).gemm4_sequential;
  const int Ks[] = {1, 3, 16, 97};
  const int Ns[] = {5, 9, 16, 17, 33, 48, 49, 64, 65, 80, 96, 100};
  unsigned seed = 9001;
  for (int rows = 1; rows < kGemm4Rows; ++rows)
    for (int K : Ks)
      for (int N : Ns) {
        check_case(fn, rows, K, N, (seed % 2) == 0, (seed % 3) == 0, seed);
        ++seed;
      }
}

TEST(KernelsGemm4Sequential, ScalarAndPortableChooseNoKernel) {
  EXPECT_EQ(kernel_set(Isa::Scalar).gemm4_sequential, nullptr);
  EXPECT_EQ(kernel_set(Isa::Portable).gemm4_sequential, nullptr);
}

}  // namespace
