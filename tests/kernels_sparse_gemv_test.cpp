// Block-sparse gemv (kernels/sparse_panels.hpp): the packed format against the matrix it came
// from, the scalar reference against an unpacked triple loop over the dense matrix (an oracle that
// knows nothing of the format), and every SIMD variant against the scalar reference, on random
// block-pruned and unstructured-pruned matrices of awkward sizes, with init, aliasing, clamps
// and guard bytes. Tolerance as kernels_gemv_test: |got - want| <= 1e-5 (|init| + sum |x W|).
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/sparse_panels.hpp"
#include "kernels_test_support.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::kernels {
namespace {

using namespace tickinfer::kernels::testing;

constexpr float kInf = std::numeric_limits<float>::infinity();

// A (K x N) matrix with `zero_blocks` of its 1 x 16 panel rows zeroed and, within kept rows,
// `zero_weights` of the weights zeroed as well (unstructured on top of blocks).
std::vector<float> pruned(std::mt19937& rng, int K, int N, double zero_blocks, double zero_weights) {
  std::vector<float> w = random_vector(rng, K * N, -1.0f, 1.0f);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < K; ++k) {
    for (int p = 0; p * kSparseBlock < N; ++p) {
      const bool drop = u(rng) < zero_blocks;
      for (int n = p * kSparseBlock; n < N && n < (p + 1) * kSparseBlock; ++n) {
        if (drop || u(rng) < zero_weights) w[static_cast<size_t>(k) * N + n] = 0.0f;
      }
    }
  }
  return w;
}

// The oracle: y[n] = clamp(init[n] + sum_k x[k] W[k][n]) over the dense matrix, in double.
void oracle(const std::vector<float>& x, const std::vector<float>& w, int K, int N, const float* init, float lo,
            float hi, std::vector<double>& y, std::vector<double>& mag) {
  y.assign(N, 0.0);
  mag.assign(N, 0.0);
  for (int n = 0; n < N; ++n) {
    double acc = init ? init[n] : 0.0, m = init ? std::fabs(init[n]) : 0.0;
    for (int k = 0; k < K; ++k) {
      acc += static_cast<double>(x[k]) * w[static_cast<size_t>(k) * N + n];
      m += std::fabs(static_cast<double>(x[k]) * w[static_cast<size_t>(k) * N + n]);
    }
    y[n] = std::min<double>(hi, std::max<double>(lo, acc));
    mag[n] = m;
  }
}

TEST(KernelsSparsePanels, PackKeepsExactlyTheNonzeroPanelRows) {
  std::mt19937 rng(test_seed());
  const int K = 37, N = 45;  // 3 panels, the last with 13 real columns
  const std::vector<float> w = pruned(rng, K, N, 0.6, 0.2);
  const SparsePanels s = pack_sparse_panels(w.data(), K, N);
  ASSERT_EQ(s.panels, 3);
  ASSERT_EQ(s.start.size(), 4u);
  // Every block one whole cache line: a 64-byte load of a block never straddles two.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.view().values) % 64, 0u);
  size_t kept = 0;
  for (int p = 0; p < 3; ++p) {
    std::vector<int> want;
    for (int k = 0; k < K; ++k) {
      bool any = false;
      for (int n = 16 * p; n < std::min(N, 16 * p + 16); ++n) any = any || w[static_cast<size_t>(k) * N + n] != 0.0f;
      if (any) want.push_back(k);
    }
    ASSERT_EQ(s.start[p + 1] - s.start[p], want.size()) << "panel " << p;
    for (size_t i = 0; i < want.size(); ++i) {
      const uint32_t b = s.start[p] + static_cast<uint32_t>(i);
      EXPECT_EQ(s.rows[b], want[i]);
      for (int j = 0; j < 16; ++j) {
        const int n = 16 * p + j;
        EXPECT_EQ(s.values[b * 16 + j], n < N ? w[static_cast<size_t>(want[i]) * N + n] : 0.0f);
      }
    }
    kept += want.size();
  }
  const SparsityStats st = sparsity_stats(w.data(), K, N);
  EXPECT_DOUBLE_EQ(st.zero_blocks, 1.0 - static_cast<double>(kept) / (3.0 * K));
  size_t zeros = 0;
  for (float v : w) zeros += v == 0.0f;
  EXPECT_DOUBLE_EQ(st.zero_weights, static_cast<double>(zeros) / (K * N));
}

TEST(KernelsSparsePanels, RefusesMoreInputsThanTheIndexHolds) {
  std::vector<float> w(65537 * 5, 1.0f);
  EXPECT_THROW(pack_sparse_panels(w.data(), 65537, 5), tickinfer::Error);
}

// Every variant (the scalar reference included) against the dense oracle.
TEST(KernelsSparsePanels, EveryVariantMatchesTheDenseOracle) {
  const uint32_t seed = test_seed();
  std::mt19937 rng(seed);
  const Isa isas[] = {Isa::Scalar, Isa::Avx2, Isa::Avx512};
  const int shapes[][2] = {{1, 5}, {10, 256}, {256, 128}, {128, 64}, {64, 32}, {32, 16}, {37, 45}, {256, 512},
                           {7, 17}, {300, 100}};
  const double patterns[][2] = {{0.0, 0.0}, {0.5, 0.0}, {0.8, 0.0}, {0.9, 0.0}, {1.0, 0.0}, {0.0, 0.8}, {0.7, 0.5}};
  for (Isa isa : isas) {
    if (!isa_supported(isa) && isa != Isa::Scalar) {
      std::printf("[ SKIPPED  ] %s sparse gemv: not supported by this CPU\n", isa_name(isa));
      continue;
    }
    const SparseGemvFn f = sparse_gemv_for(isa);
    for (const auto& sh : shapes) {
      for (const auto& pat : patterns) {
        const int K = sh[0], N = sh[1];
        SCOPED_TRACE(std::string(isa_name(isa)) + " K=" + std::to_string(K) + " N=" + std::to_string(N) +
                     " blocks=" + std::to_string(pat[0]) + " weights=" + std::to_string(pat[1]) + " " +
                     seed_note(seed));
        const std::vector<float> w = pruned(rng, K, N, pat[0], pat[1]);
        const SparsePanels s = pack_sparse_panels(w.data(), K, N);
        const std::vector<float> x = random_vector(rng, K, -2.0f, 2.0f);
        const std::vector<float> b = random_vector(rng, N, -0.5f, 0.5f);
        for (int variant = 0; variant < 3; ++variant) {  // no init, init + relu, init aliasing y
          const float lo = variant == 1 ? 0.0f : -kInf, hi = variant == 1 ? 6.0f : kInf;
          GuardedBuffer y(N, 3);
          if (variant == 2) y.fill(b);
          const float* init = variant == 0 ? nullptr : (variant == 2 ? y.data() : b.data());
          std::vector<double> want, mag;
          oracle(x, w, K, N, variant == 0 ? nullptr : b.data(), lo, hi, want, mag);
          f(x.data(), s.view(), init, y.data(), lo, hi);
          ASSERT_TRUE(y.guards_intact()) << "wrote past y[N-1]";
          for (int n = 0; n < N; ++n) {
            ASSERT_NEAR(y[n], want[n], 1e-5 * (mag[n] + 1e-30)) << "n=" << n << " variant " << variant;
          }
        }
      }
    }
  }
}

TEST(KernelsSparsePanels, NanInTheInputReachesTheOutputsItFeeds) {
  std::mt19937 rng(test_seed());
  const int K = 20, N = 40;
  std::vector<float> w = pruned(rng, K, N, 0.5, 0.0);
  // Row 3 kept in panel 0 only.
  for (int n = 0; n < N; ++n) w[3 * N + n] = n < 16 ? 1.0f : 0.0f;
  const SparsePanels s = pack_sparse_panels(w.data(), K, N);
  std::vector<float> x(K, 1.0f);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (!isa_supported(isa) && isa != Isa::Scalar) continue;
    std::vector<float> y(N);
    sparse_gemv_for(isa)(x.data(), s.view(), nullptr, y.data(), 0.0f, kInf);  // relu keeps NaN
    for (int n = 0; n < N; ++n) EXPECT_EQ(std::isnan(y[n]), n < 16) << isa_name(isa) << " n=" << n;
  }
}

}  // namespace
}  // namespace tickinfer::kernels
