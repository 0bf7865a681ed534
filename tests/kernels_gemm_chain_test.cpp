// KernelSet::gemm_chain (the Conv1D GEMM, kernels/gemm_chain_simd.hpp): the scalar reference
// against an unpacked triple loop written here with std::fma (an oracle independent of the packed
// layout), and every ISA that has the kernel against the scalar one bit for bit: row counts around
// the register blocks (4 rows on AVX2, 8 on AVX-512) and their remainders, panel counts around the
// AVX-512 block of 2 panels, a last partial panel, strided rows, init and clamps, NaN propagated,
// nothing written past a row's N outputs. Portable has none (nullptr: callers use gemv).
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel_set.hpp"
#include "kernels_test_support.hpp"

namespace tickinfer::kernels {
namespace {

using namespace testing;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> packed(const std::vector<float>& w, int K, int N) {
  std::vector<float> p(packed_floats(K, N), kGuard);
  pack_weights(w.data(), K, N, p.data());
  return p;
}

TEST(KernelsGemmChain, ScalarReferenceIsOneFmaChainPerOutput) {
  const KernelSet& ks = kernel_set(Isa::Scalar);
  ASSERT_NE(ks.gemm_chain, nullptr);
  std::mt19937 rng(test_seed());
  for (int K : {1, 5, 33}) {
    for (int N : {5, 16, 37}) {
      const auto w = random_vector(rng, K * N, -1.0f, 1.0f);
      const auto x = random_vector(rng, 3 * K, -2.0f, 2.0f);
      const auto init = random_vector(rng, N, -1.0f, 1.0f);
      std::vector<float> y(3 * static_cast<size_t>(N));
      ks.gemm_chain(x.data(), 3, K, 1, 0, K, packed(w, K, N).data(), N, init.data(), y.data(), N, -kInf, kInf);
      for (int r = 0; r < 3; ++r) {
        for (int n = 0; n < N; ++n) {
          float acc = 0.0f;
          for (int k = 0; k < K; ++k) acc = std::fma(x[r * K + k], w[k * N + n], acc);
          const float want = init[n] + acc;
          ASSERT_EQ(std::memcmp(&y[r * N + n], &want, sizeof want), 0) << "K=" << K << " N=" << N << " r=" << r;
        }
      }
    }
  }
}

class KernelsGemmChainIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(KernelsGemmChainIsa, EqualsTheScalarReferenceBitForBit) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const KernelSet& ks = kernel_set(isa);
  if (!ks.gemm_chain) GTEST_SKIP() << ks.name << " has no gemm_chain (no fused multiply-add): Conv1D runs gemv per position";
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const uint32_t seed = test_seed();
  std::mt19937 rng(seed);
  for (int K : {1, 2, 7, 30, 96, 129}) {
    for (int N : {5, 8, 15, 16, 17, 32, 33, 48, 64, 65, 100}) {
      const auto w = random_vector(rng, K * N, -1.0f, 1.0f);
      const auto pw = packed(w, K, N);
      const auto init = random_vector(rng, N, -1.0f, 1.0f);
      for (int rows : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 23}) {
        const size_t ldx = static_cast<size_t>(K) + 3, ldy = static_cast<size_t>(N) + 5;
        auto x = random_vector(rng, static_cast<int>(ldx) * rows, -2.0f, 2.0f);
        if (rows == 7) x[static_cast<size_t>(2) * ldx] = std::numeric_limits<float>::quiet_NaN();  // row 2
        const float lo = rows % 2 ? -kInf : 0.0f, hi = rows % 3 ? kInf : 1.5f;
        const float* in = rows % 4 == 1 ? nullptr : init.data();
        std::vector<float> y(ldy * rows, 777.0f), want(ldy * rows, 777.0f);
        ks.gemm_chain(x.data(), rows, ldx, 1, 0, K, pw.data(), N, in, y.data(), ldy, lo, hi);
        ref.gemm_chain(x.data(), rows, ldx, 1, 0, K, pw.data(), N, in, want.data(), ldy, lo, hi);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(std::memcmp(&y[i], &want[i], sizeof(float)), 0)
              << ks.name << " K=" << K << " N=" << N << " rows=" << rows << " row " << i / ldy << " col " << i % ldy
              << ": " << y[i] << " vs " << want[i] << ", " << seed_note(seed);
        }
        if (rows == 7) {
          ASSERT_TRUE(std::isnan(y[2 * ldy])) << "NaN input did not propagate";
        }
      }
    }
  }
}

// A dilated Conv1D's taps read in place: row r, tap j at x + r ldx + j tap_stride, the same as
// gathering each row's taps into one contiguous row first (the scalar reference on the gathered
// rows is the oracle), for every ISA that has the kernel and the scalar set itself.
TEST_P(KernelsGemmChainIsa, TapsReadInPlaceEqualGatheredRows) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const KernelSet& ks = kernel_set(isa);
  if (!ks.gemm_chain) GTEST_SKIP() << ks.name << " has no gemm_chain";
  const KernelSet& ref = kernel_set(Isa::Scalar);
  std::mt19937 rng(test_seed());
  for (int ch : {1, 10, 32}) {
    for (int taps : {1, 2, 3, 5}) {
      for (int dilation : {1, 2, 8}) {
        for (int stride : {1, 2}) {
          const int N = 32, rows = 11, K = taps * ch;
          const int len = (rows - 1) * stride + (taps - 1) * dilation + 1;
          const auto x = random_vector(rng, len * ch, -2.0f, 2.0f);
          const auto pw = packed(random_vector(rng, K * N, -1.0f, 1.0f), K, N);
          const auto init = random_vector(rng, N, -1.0f, 1.0f);
          std::vector<float> gathered(static_cast<size_t>(rows) * K);
          for (int r = 0; r < rows; ++r)
            for (int j = 0; j < taps; ++j)
              std::memcpy(&gathered[static_cast<size_t>(r) * K + j * ch], &x[(r * stride + j * dilation) * ch], sizeof(float) * ch);
          std::vector<float> y(static_cast<size_t>(rows) * N), want(y.size());
          ks.gemm_chain(x.data(), rows, static_cast<size_t>(stride) * ch, taps, static_cast<size_t>(dilation) * ch, ch,
                        pw.data(), N, init.data(), y.data(), N, 0.0f, kInf);
          ref.gemm_chain(gathered.data(), rows, K, 1, 0, K, pw.data(), N, init.data(), want.data(), N, 0.0f, kInf);
          std::vector<float> in_place(y.size());
          ref.gemm_chain(x.data(), rows, static_cast<size_t>(stride) * ch, taps, static_cast<size_t>(dilation) * ch, ch,
                         pw.data(), N, init.data(), in_place.data(), N, 0.0f, kInf);
          ASSERT_EQ(std::memcmp(in_place.data(), want.data(), sizeof(float) * y.size()), 0) << "scalar reference, in place";
          ASSERT_EQ(std::memcmp(y.data(), want.data(), sizeof(float) * y.size()), 0)
              << ks.name << " ch=" << ch << " taps=" << taps << " dilation=" << dilation << " stride=" << stride;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsGemmChainIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
