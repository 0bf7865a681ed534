// gemv and weight packing: the scalar gemv against an unpacked triple loop written here (an
// oracle independent of the packed layout), and every optimized gemv against the scalar one.
// Tolerance: |got - want| <= 1e-5 * (|init| + sum_k |x_k| |W_kn|) per output, i.e. relative to the
// magnitude of the terms summed, since summation order differs between variants.
#include <cmath>
#include <limits>

#include "kernels/kernel_set.hpp"
#include "kernels_test_support.hpp"

namespace tickinfer::kernels {
namespace {

using namespace tickinfer::kernels::testing;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> packed(const std::vector<float>& w, int K, int N) {
  std::vector<float> p(packed_floats(K, N), kGuard);
  pack_weights(w.data(), K, N, p.data());
  return p;
}

TEST(KernelsPack, PanelLayoutAndZeroPadding) {
  const int K = 3, N = 18;  // two panels, the second holding 2 real columns
  std::vector<float> w(K * N);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) w[k * N + n] = static_cast<float>(100 * k + n + 1);
  const std::vector<float> p = packed(w, K, N);
  ASSERT_EQ(p.size(), 2u * K * kPanel);
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < kPanel; ++j) {
      EXPECT_EQ(p[(0 * K + k) * kPanel + j], w[k * N + j]);
      const float want = j < 2 ? w[k * N + 16 + j] : 0.0f;
      EXPECT_EQ(p[(1 * K + k) * kPanel + j], want) << "k=" << k << " j=" << j;
    }
  }
}

// Plain y = clamp(init + x W) with W unpacked row-major (K x N), accumulated in double.
std::vector<double> triple_loop(const std::vector<float>& x, const std::vector<float>& w,
                                const float* init, int K, int N, float lo, float hi) {
  std::vector<double> y(N);
  for (int n = 0; n < N; ++n) {
    double acc = init ? init[n] : 0.0;
    for (int k = 0; k < K; ++k) acc += static_cast<double>(x[k]) * w[k * N + n];
    y[n] = std::fmin(std::fmax(acc, lo), hi);
  }
  return y;
}

double magnitude(const std::vector<float>& x, const std::vector<float>& w, const float* init,
                 int K, int N, int n) {
  double m = init ? std::fabs(init[n]) : 0.0;
  for (int k = 0; k < K; ++k) m += std::fabs(static_cast<double>(x[k]) * w[k * N + n]);
  return m;
}

TEST(KernelsGemv, ScalarMatchesUnpackedTripleLoop) {
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ks = kernel_set(Isa::Scalar);
  for (int K : kSizes) {
    for (int N : kSizes) {
      const auto x = random_vector(rng, K, -1.0f, 1.0f);
      const auto w = random_vector(rng, K * N, -1.0f, 1.0f);
      const auto b = random_vector(rng, N, -1.0f, 1.0f);
      const auto pw = packed(w, K, N);
      GuardedBuffer y(N, 0);
      ks.gemv(x.data(), K, pw.data(), N, b.data(), y.data(), -kInf, kInf);
      const auto want = triple_loop(x, w, b.data(), K, N, -kInf, kInf);
      for (int n = 0; n < N; ++n) {
        ASSERT_NEAR(y[n], want[n], 1e-5 * magnitude(x, w, b.data(), K, N, n) + 1e-30)
            << "K=" << K << " N=" << N << " n=" << n;
      }
      ASSERT_TRUE(y.guards_intact()) << "K=" << K << " N=" << N;
    }
  }
}

TEST(KernelsGemv, ScalarClampIsReluAndRelu6) {
  const int K = 2, N = 3;
  const std::vector<float> x = {1.0f, 2.0f};
  const std::vector<float> w = {1.0f, -4.0f, 5.0f,   // k = 0
                                0.5f, 1.0f, 1.0f};   // k = 1
  const auto pw = packed(w, K, N);
  float y[N];
  kernel_set(Isa::Scalar).gemv(x.data(), K, pw.data(), N, nullptr, y, 0.0f, 6.0f);
  EXPECT_EQ(y[0], 2.0f);   // 1 + 1
  EXPECT_EQ(y[1], 0.0f);   // -4 + 2 clamped at 0
  EXPECT_EQ(y[2], 6.0f);   // 5 + 2 clamped at 6
}

enum class InitMode { None, Separate, AliasesY };

class KernelsGemvIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(KernelsGemvIsa, MatchesScalarAcrossSizesOffsetsInitAndClamp) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const KernelSet& ks = kernel_set(isa);
  const struct { float lo, hi; } clamps[] = {{-kInf, kInf}, {0.0f, kInf}, {0.0f, 6.0f}};
  int variant = 0;
  for (int K : kSizes) {
    for (int N : kSizes) {
      const auto w = random_vector(rng, K * N, -1.0f, 1.0f);
      const auto pw = packed(w, K, N);
      for (InitMode mode : {InitMode::None, InitMode::Separate, InitMode::AliasesY}) {
        ++variant;
        const int offset = variant % 4;  // 0..3 floats of misalignment, varied per case
        const auto& clamp = clamps[variant % 3];
        GuardedBuffer x(K, (offset + 1) % 4), init(N, (offset + 2) % 4);
        GuardedBuffer y(N, offset), y_ref(N, 0);
        x.fill(random_vector(rng, K, -2.0f, 2.0f));
        init.fill(random_vector(rng, N, -1.0f, 1.0f));
        const float* init_ptr = nullptr;
        const float* init_ref = nullptr;
        if (mode == InitMode::Separate) init_ptr = init_ref = init.data();
        if (mode == InitMode::AliasesY) {
          y.fill(init.values());
          init_ptr = y.data();
          init_ref = init.data();
        }
        ref.gemv(x.data(), K, pw.data(), N, init_ref, y_ref.data(), clamp.lo, clamp.hi);
        ks.gemv(x.data(), K, pw.data(), N, init_ptr, y.data(), clamp.lo, clamp.hi);
        const auto xv = x.values();
        for (int n = 0; n < N; ++n) {
          const double tol = 1e-5 * magnitude(xv, w, init_ref, K, N, n) + 1e-30;
          ASSERT_NEAR(y[n], y_ref[n], tol) << ks.name << " K=" << K << " N=" << N << " n=" << n
                                           << " init mode " << static_cast<int>(mode)
                                           << " clamp [" << clamp.lo << ", " << clamp.hi << "]";
        }
        ASSERT_TRUE(y.guards_intact()) << ks.name << " wrote outside y: K=" << K << " N=" << N;
        ASSERT_TRUE(x.guards_intact() && init.guards_intact());
      }
    }
  }
}

TEST_P(KernelsGemvIsa, NanInInputPropagatesThroughClamp) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const int K = 5, N = 20;
  std::vector<float> w(K * N, 0.5f);
  const auto pw = packed(w, K, N);
  std::vector<float> x(K, 1.0f);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> y(N);
  kernel_set(isa).gemv(x.data(), K, pw.data(), N, nullptr, y.data(), 0.0f, 6.0f);
  for (int n = 0; n < N; ++n) EXPECT_TRUE(std::isnan(y[n])) << "n=" << n;
}

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsGemvIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
