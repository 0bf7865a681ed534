// Layer norm and the binary elementwise ops: scalar against known values, optimized sets
// against scalar. add/sub/mul are exact (one IEEE operation per element) and must match bit for
// bit; affine may be fused (tolerance 1 ulp-ish: 2e-7 relative); layer norm 2e-6 * (1 + |want|).
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/kernel_set.hpp"
#include "kernels_test_support.hpp"

namespace tickinfer::kernels {
namespace {

using namespace tickinfer::kernels::testing;

TEST(KernelsElementwiseScalar, LayerNormOfKnownValues) {
  const float x[4] = {1, 2, 3, 4};  // mean 2.5, population variance 1.25
  const float gamma[4] = {1, 1, 2, 1}, beta[4] = {0, 0, 0, 10};
  float y[4];
  kernel_set(Isa::Scalar).layer_norm(x, 4, 1, gamma, beta, 0.0f, y, 4, 4);
  const float s = 1.0f / std::sqrt(1.25f);
  EXPECT_FLOAT_EQ(y[0], -1.5f * s);
  EXPECT_FLOAT_EQ(y[1], -0.5f * s);
  EXPECT_FLOAT_EQ(y[2], 2.0f * 0.5f * s);
  EXPECT_FLOAT_EQ(y[3], 1.5f * s + 10.0f);
}

class KernelsElementwiseIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(KernelsElementwiseIsa, BinaryOpsMatchScalarExactlyIncludingInPlace) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const KernelSet& ks = kernel_set(isa);
  using Op = void (*)(const float*, const float*, float*, int) noexcept;
  const struct { const char* name; Op opt, scalar; } ops[] = {
      {"add", ks.add, ref.add}, {"sub", ks.sub, ref.sub}, {"mul", ks.mul, ref.mul}};
  int round = 0;
  for (const auto& op : ops) {
    for (int n : kSizes) {
      for (int alias = 0; alias < 3; ++alias) {  // 0: separate y, 1: y == a, 2: y == b
        ++round;
        const auto av = random_vector(rng, n, -5.0f, 5.0f), bv = random_vector(rng, n, -5.0f, 5.0f);
        std::vector<float> want(n);
        op.scalar(av.data(), bv.data(), want.data(), n);
        GuardedBuffer a(n, round % 4), b(n, (round + 1) % 4), y(n, (round + 2) % 4);
        a.fill(av);
        b.fill(bv);
        float* out = alias == 0 ? y.data() : alias == 1 ? a.data() : b.data();
        op.opt(a.data(), b.data(), out, n);
        for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], want[i]) << op.name << " n=" << n << " i=" << i;
        ASSERT_TRUE(a.guards_intact() && b.guards_intact() && y.guards_intact()) << op.name << " n=" << n;
      }
    }
  }
}

TEST_P(KernelsElementwiseIsa, AffineAndLayerNormMatchScalar) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const KernelSet& ks = kernel_set(isa);
  int round = 0;
  for (int n : kSizes) {
    for (bool in_place : {false, true}) {
      ++round;
      const auto xv = random_vector(rng, n, -3.0f, 5.0f);
      const auto g = random_vector(rng, n, 0.5f, 2.0f), bt = random_vector(rng, n, -1.0f, 1.0f);
      std::vector<float> want(n);
      GuardedBuffer x(n, round % 4), y(n, (round + 1) % 4);
      float* out = in_place ? x.data() : y.data();

      ref.affine(xv.data(), g.data(), bt.data(), want.data(), n);
      x.fill(xv);
      ks.affine(x.data(), g.data(), bt.data(), out, n);
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(out[i], want[i], 2e-7 * (std::fabs(xv[i] * g[i]) + std::fabs(bt[i])))
            << "affine n=" << n << " i=" << i;

      ref.layer_norm(xv.data(), n, 1, g.data(), bt.data(), 1e-3f, want.data(), n, n);
      x.fill(xv);
      ks.layer_norm(x.data(), n, 1, g.data(), bt.data(), 1e-3f, out, n, n);
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(out[i], want[i], 2e-6 * (1.0 + std::fabs(want[i]))) << "layer_norm n=" << n << " i=" << i;
      ASSERT_TRUE(x.guards_intact() && y.guards_intact()) << "n=" << n;
    }
  }
}

// scale_sums (int32 dot products back to float, the own-arithmetic GRU's) against the same sum in
// double, every set (scalar included) and every tail length: one fused rounding, or two where the
// set has no FMA (portable), so within 2 ulps of the larger term; int32 extremes convert exactly
// as a float conversion rounds them. y outside [0, n) untouched.
TEST_P(KernelsElementwiseIsa, ScaleSumsMatchesDoubleArithmetic) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> sums_of(-400000, 400000);
  for (const KernelSet* ks : {&kernel_set(Isa::Scalar), &kernel_set(isa)}) {
    int round = 0;
    for (int n : kSizes) {
      ++round;
      std::vector<int32_t> sums(static_cast<size_t>(n));
      for (int32_t& v : sums) v = sums_of(rng);
      if (n > 2) {
        sums[0] = std::numeric_limits<int32_t>::min();
        sums[1] = std::numeric_limits<int32_t>::max();
      }
      const auto scale = random_vector(rng, n, 1e-4f, 2e-2f), bias = random_vector(rng, n, -2.0f, 2.0f);
      const float s = 0.0071f;
      GuardedBuffer y(n, round % 4);
      ks->scale_sums(sums.data(), scale.data(), s, bias.data(), y.data(), n);
      for (int i = 0; i < n; ++i) {
        const double term = static_cast<double>(static_cast<float>(sums[i])) * static_cast<double>(s * scale[i]);
        const double want = term + bias[i];
        ASSERT_NEAR(y.data()[i], want, 2.4e-7 * (std::fabs(term) + std::fabs(bias[i])))
            << ks->name << " n=" << n << " i=" << i;
      }
      ASSERT_TRUE(y.guards_intact()) << ks->name << " n=" << n;
    }
  }
}

// Several rows per call, strided (a layer over a window's rows, and the row blocks the SIMD
// sets interleave): each row equals the scalar reference's single-row result.
TEST_P(KernelsElementwiseIsa, LayerNormOverStridedRowsMatchesEachRowAlone) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const KernelSet& ks = kernel_set(isa);
  for (int n : {1, 7, 15, 16, 17, 32, 64}) {
    for (int rows : {1, 3, 4, 5, 9, 16, 17, 33, 64}) {
      const size_t ldx = static_cast<size_t>(n) + 3, ldy = static_cast<size_t>(n) + 1;
      const auto xv = random_vector(rng, static_cast<int>(ldx) * rows, -3.0f, 5.0f);
      const auto g = random_vector(rng, n, 0.5f, 2.0f), bt = random_vector(rng, n, -1.0f, 1.0f);
      GuardedBuffer y(static_cast<int>(ldy) * rows, 1);
      for (int i = 0; i < y.size(); ++i) y[i] = kGuard;
      ks.layer_norm(xv.data(), ldx, rows, g.data(), bt.data(), 1e-3f, y.data(), ldy, n);
      std::vector<float> want(n);
      for (int r = 0; r < rows; ++r) {
        ref.layer_norm(xv.data() + r * ldx, ldx, 1, g.data(), bt.data(), 1e-3f, want.data(), ldy, n);
        for (int i = 0; i < n; ++i) {
          ASSERT_NEAR(y[static_cast<int>(r * ldy) + i], want[i], 2e-6 * (1.0 + std::fabs(want[i])))
              << "n=" << n << " rows=" << rows << " r=" << r << " i=" << i;
        }
        for (int i = n; i < static_cast<int>(ldy) && r * ldy + i < static_cast<size_t>(y.size()); ++i) {
          ASSERT_EQ(y[static_cast<int>(r * ldy) + i], kGuard) << "wrote past n: n=" << n << " r=" << r;
        }
      }
      ASSERT_TRUE(y.guards_intact()) << "n=" << n << " rows=" << rows;
    }
  }
}

// The SIMD sets read a row's last partial vector whole when its extra lanes lie in the next row,
// and mask it in registers: the tensor here ends where an unreadable page begins (a read past
// its last element faults), the columns between n and ldx hold NaN (a lane that leaks gives NaN),
// and the call runs in place as well as out of place.
TEST_P(KernelsElementwiseIsa, LayerNormReadsNothingPastTheLastRowAndNoPadding) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  std::mt19937 rng(test_seed());
  SCOPED_TRACE(seed_note(test_seed()));
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mem = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(mem) + 3 * page, page, PROT_NONE), 0);
  float* const end = reinterpret_cast<float*>(static_cast<char*>(mem) + 3 * page);
  for (int n : {1, 5, 7, 9, 15, 17, 23}) {
    for (int rows : {1, 4, 5, 8, 13, 16, 17, 32, 33}) {
      for (bool in_place : {false, true}) {
        const size_t ldx = static_cast<size_t>(n) + 1;
        const size_t floats = ldx * (rows - 1) + n;  // the last row has no padding after it
        float* x = end - floats;
        const auto values = random_vector(rng, static_cast<int>(floats), -3.0f, 5.0f);
        for (size_t i = 0; i < floats; ++i) x[i] = i % ldx < static_cast<size_t>(n) ? values[i] : std::nanf("");
        const auto g = random_vector(rng, n, 0.5f, 2.0f), bt = random_vector(rng, n, -1.0f, 1.0f);
        std::vector<float> want(floats), out(floats, kGuard);
        ref.layer_norm(x, ldx, rows, g.data(), bt.data(), 1e-3f, want.data(), ldx, n);
        float* y = in_place ? x : out.data();
        kernel_set(isa).layer_norm(x, ldx, rows, g.data(), bt.data(), 1e-3f, y, ldx, n);
        for (int r = 0; r < rows; ++r) {
          for (int i = 0; i < n; ++i) {
            const size_t k = r * ldx + i;
            ASSERT_NEAR(y[k], want[k], 2e-6 * (1.0 + std::fabs(want[k])))
                << "n=" << n << " rows=" << rows << " in_place=" << in_place << " r=" << r << " i=" << i;
          }
        }
      }
    }
  }
  munmap(mem, 4 * page);
}

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsElementwiseIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
