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

// W[k][n] = 100 k + n + 1, so every packed value names its source element.
std::vector<float> numbered(int K, int N) {
  std::vector<float> w(K * N);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) w[k * N + n] = static_cast<float>(100 * k + n + 1);
  return w;
}

TEST(KernelsPack, PanelLayoutAndZeroPadding) {
  const int K = 3, N = 18;  // two panels, the second holding 2 real columns
  const std::vector<float> w = numbered(K, N);
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

TEST(KernelsPack, SmallNUsesZeroPaddedDotRows) {
  for (int N = 1; N <= kDotMaxN; ++N) {
    const int K = 19;  // rows padded to 32
    const std::vector<float> w = numbered(K, N);
    const std::vector<float> p = packed(w, K, N);
    ASSERT_EQ(dot_row_floats(K), 32);
    ASSERT_EQ(p.size(), static_cast<size_t>(32 * N));
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < 32; ++k)
        EXPECT_EQ(p[n * 32 + k], k < K ? w[k * N + n] : 0.0f) << "N=" << N << " n=" << n << " k=" << k;
  }
  EXPECT_FALSE(is_dot_form(kDotMaxN + 1));
  EXPECT_EQ(packed_floats(16, kDotMaxN + 1), static_cast<size_t>(16 * kPanel));
}

// N on both sides of the dot-form threshold and of each panel-block size (1-3 trailing panels
// after blocks of 4); K around the 8/16-float vectors and the K-split unrolls of the dot kernels
// (up to 8 vectors per step).
const int kLayoutK[] = {1, 5, 8, 9, 16, 23, 24, 31, 32, 40, 47, 48, 63, 64, 65, 95, 96, 97, 130, 200};
const int kLayoutN[] = {1, 2, 3, 4, 5, 6, 47, 48, 49, 79, 80, 96, 112, 113, 191, 192, 193};

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

// Checks the scalar gemv (both packed forms) against the unpacked triple loop.
template <size_t NK, size_t NN>
void expect_scalar_matches_triple_loop(const int (&k_sizes)[NK], const int (&n_sizes)[NN]) {
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ks = kernel_set(Isa::Scalar);
  for (int K : k_sizes) {
    for (int N : n_sizes) {
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

TEST(KernelsGemv, ScalarMatchesUnpackedTripleLoop) {
  expect_scalar_matches_triple_loop(kSizes, kSizes);
  expect_scalar_matches_triple_loop(kLayoutK, kLayoutN);
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

// Compares ks.gemv with the scalar gemv for every (K, N) in the two lists, cycling through init
// modes, clamps and misalignments.
template <size_t NK, size_t NN>
void expect_matches_scalar(const KernelSet& ks, const int (&k_sizes)[NK], const int (&n_sizes)[NN]) {
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const struct { float lo, hi; } clamps[] = {{-kInf, kInf}, {0.0f, kInf}, {0.0f, 6.0f}};
  int variant = 0;
  for (int K : k_sizes) {
    for (int N : n_sizes) {
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

TEST_P(KernelsGemvIsa, MatchesScalarAcrossSizesOffsetsInitAndClamp) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  expect_matches_scalar(kernel_set(isa), kSizes, kSizes);
}

// Sizes chosen around the layout thresholds (kLayoutK / kLayoutN above).
TEST_P(KernelsGemvIsa, MatchesScalarAroundLayoutThresholds) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  expect_matches_scalar(kernel_set(isa), kLayoutK, kLayoutN);
}

TEST_P(KernelsGemvIsa, NanInInputPropagatesThroughClamp) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const int K = 5;
  for (int N : {1, kDotMaxN, 20, 70}) {  // dot form; panel form with 2 and 5 panels
    std::vector<float> w(K * N, 0.5f);
    const auto pw = packed(w, K, N);
    std::vector<float> x(K, 1.0f);
    x[3] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> y(N);
    kernel_set(isa).gemv(x.data(), K, pw.data(), N, nullptr, y.data(), 0.0f, 6.0f);
    for (int n = 0; n < N; ++n) EXPECT_TRUE(std::isnan(y[n])) << "N=" << N << " n=" << n;
  }
}

// The dot form reads x[K..] only through a masked load: values past x[K-1] (here NaN, which
// would poison any sum they entered) must not reach the result.
TEST_P(KernelsGemvIsa, DotFormIgnoresFloatsPastTheEndOfX) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  for (int K : {1, 7, 9, 15, 17, 33}) {
    for (int N = 1; N <= kDotMaxN; ++N) {
      std::vector<float> w(K * N, 1.0f);
      const auto pw = packed(w, K, N);
      std::vector<float> x(K + 32, std::numeric_limits<float>::quiet_NaN());
      for (int k = 0; k < K; ++k) x[k] = 1.0f;
      std::vector<float> y(N);
      kernel_set(isa).gemv(x.data(), K, pw.data(), N, nullptr, y.data(), -kInf, kInf);
      for (int n = 0; n < N; ++n) EXPECT_EQ(y[n], static_cast<float>(K)) << "K=" << K << " N=" << N;
    }
  }
}

// gemm_rows: every row's output bit-identical to that row's gemv, for row counts around the
// groups the AVX2 and AVX-512 kernels form (4, 2, 1 rows per panel), every block shape of the panel form,
// the dot form, strided rows, and an init and clamp; nothing written past a row's N outputs.
TEST_P(KernelsGemvIsa, GemmRowsEqualsGemvPerRowBitForBit) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const KernelSet& ks = kernel_set(isa);
  const uint32_t seed = test_seed();
  std::mt19937 rng(seed);
  for (int K : {1, 3, 10, 17, 64, 128}) {
    for (int N : {1, 4, 5, 16, 17, 32, 33, 48, 64, 65, 80, 96, 112, 128, 129}) {
      const auto w = random_vector(rng, K * N, -1.0f, 1.0f);
      const auto pw = packed(w, K, N);
      const auto init = random_vector(rng, N, -1.0f, 1.0f);
      for (int rows : {1, 2, 3, 4, 5, 7, 8, 9}) {
        const size_t ldx = static_cast<size_t>(K) + 3, ldy = static_cast<size_t>(N) + 5;
        const auto x = random_vector(rng, static_cast<int>(ldx) * rows, -2.0f, 2.0f);
        std::vector<float> y(ldy * rows, 777.0f), want(N);
        const float lo = rows % 2 ? -kInf : 0.0f, hi = rows % 3 ? kInf : 1.5f;
        ks.gemm_rows(x.data(), rows, ldx, K, pw.data(), N, init.data(), y.data(), ldy, lo, hi);
        for (int r = 0; r < rows; ++r) {
          ks.gemv(x.data() + r * ldx, K, pw.data(), N, init.data(), want.data(), lo, hi);
          for (int n = 0; n < N; ++n) {
            ASSERT_EQ(std::memcmp(&y[r * ldy + n], &want[n], sizeof(float)), 0)
                << ks.name << " K=" << K << " N=" << N << " rows=" << rows << " r=" << r << " n=" << n << ": "
                << y[r * ldy + n] << " vs " << want[n] << ", " << seed_note(seed);
          }
          for (size_t g = static_cast<size_t>(N); g < ldy; ++g) ASSERT_EQ(y[r * ldy + g], 777.0f) << "wrote past N";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsGemvIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
