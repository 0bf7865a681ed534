// LSTM and GRU cell updates: the scalar set against hand-derived values, and every optimized set
// against the scalar set for the fused (sigmoid/tanh) path and the generic path.
// Tolerance: |got - want| <= 2e-6 * (1 + |want|) per element (a few ulp of values that are
// products and sums of activations in [-1, 1]).
#include <cmath>

#include "kernels/kernel_set.hpp"
#include "kernels_test_support.hpp"

namespace tickinfer::kernels {
namespace {

using namespace tickinfer::kernels::testing;

ActivationSpec kind(ActKind k, float alpha = 0.0f, float beta = 0.0f) {
  ActivationSpec a;
  a.kind = k;
  a.alpha = alpha;
  a.beta = beta;
  return a;
}

TEST(KernelsCellsScalar, LstmWithZeroPreactivationsHalvesTheCell) {
  // z = 0: i = f = o = 0.5, g = tanh(0) = 0, so c' = 0.5 c and h = 0.5 tanh(c').
  float z[4] = {0, 0, 0, 0}, c = 2.0f, h = 7.0f;
  kernel_set(Isa::Scalar).lstm_cell(z, &c, &h, 1, kind(ActKind::Sigmoid), kind(ActKind::Tanh));
  EXPECT_FLOAT_EQ(c, 1.0f);
  EXPECT_FLOAT_EQ(h, 0.5f * std::tanh(1.0f));
}

TEST(KernelsCellsScalar, GruFollowsTheResetAfterEquations) {
  // zx = (z, r, h) = (0, 0, 0.5), zh = (0, 0, 1): z = r = 0.5, hh = tanh(0.5 + 0.5 * 1).
  float zx[3] = {0.0f, 0.0f, 0.5f};
  const float zh[3] = {0.0f, 0.0f, 1.0f};
  float h = 3.0f;
  kernel_set(Isa::Scalar).gru_cell(zx, zh, &h, 1, kind(ActKind::Sigmoid), kind(ActKind::Tanh));
  EXPECT_FLOAT_EQ(h, 0.5f * 3.0f + 0.5f * std::tanh(1.0f));
}

struct ActPair {
  const char* label;
  ActivationSpec rec, act;
};
const ActPair kPairs[] = {
    {"sigmoid_tanh", kind(ActKind::Sigmoid), kind(ActKind::Tanh)},        // fused path
    {"hard_sigmoid_relu", kind(ActKind::HardSigmoid, 0.2f, 0.5f), kind(ActKind::Relu)},
    {"sigmoid_linear", kind(ActKind::Sigmoid), kind(ActKind::Linear)},
};

bool close(float got, float want) { return std::fabs(got - want) <= 2e-6f * (1.0f + std::fabs(want)); }

class KernelsCellsIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(KernelsCellsIsa, LstmMatchesScalar) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ks = kernel_set(isa);
  int round = 0;
  for (const ActPair& pair : kPairs) {
    for (int u : kSizes) {
      ++round;
      const auto z0 = random_vector(rng, 4 * u, -6.0f, 6.0f);
      const auto c0 = random_vector(rng, u, -3.0f, 3.0f);
      const auto h0 = random_vector(rng, u, -1.0f, 1.0f);
      std::vector<float> z_ref = z0, c_ref = c0, h_ref = h0;
      kernel_set(Isa::Scalar).lstm_cell(z_ref.data(), c_ref.data(), h_ref.data(), u, pair.rec, pair.act);
      GuardedBuffer z(4 * u, round % 4), c(u, (round + 1) % 4), h(u, (round + 2) % 4);
      z.fill(z0);
      c.fill(c0);
      h.fill(h0);
      ks.lstm_cell(z.data(), c.data(), h.data(), u, pair.rec, pair.act);
      for (int j = 0; j < u; ++j) {
        ASSERT_TRUE(close(c[j], c_ref[j]) && close(h[j], h_ref[j]))
            << ks.name << " " << pair.label << " u=" << u << " j=" << j << " c " << c[j] << " vs "
            << c_ref[j] << ", h " << h[j] << " vs " << h_ref[j];
      }
      ASSERT_TRUE(z.guards_intact() && c.guards_intact() && h.guards_intact())
          << ks.name << " " << pair.label << " u=" << u;
    }
  }
}

TEST_P(KernelsCellsIsa, GruMatchesScalar) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ks = kernel_set(isa);
  int round = 0;
  for (const ActPair& pair : kPairs) {
    for (int u : kSizes) {
      ++round;
      const auto zx0 = random_vector(rng, 3 * u, -4.0f, 4.0f);
      const auto zh0 = random_vector(rng, 3 * u, -4.0f, 4.0f);
      const auto h0 = random_vector(rng, u, -1.0f, 1.0f);
      std::vector<float> zx_ref = zx0, h_ref = h0;
      kernel_set(Isa::Scalar).gru_cell(zx_ref.data(), zh0.data(), h_ref.data(), u, pair.rec, pair.act);
      GuardedBuffer zx(3 * u, round % 4), zh(3 * u, (round + 1) % 4), h(u, (round + 3) % 4);
      zx.fill(zx0);
      zh.fill(zh0);
      h.fill(h0);
      ks.gru_cell(zx.data(), zh.data(), h.data(), u, pair.rec, pair.act);
      for (int j = 0; j < u; ++j) {
        ASSERT_TRUE(close(h[j], h_ref[j]))
            << ks.name << " " << pair.label << " u=" << u << " j=" << j << " h " << h[j] << " vs " << h_ref[j];
      }
      ASSERT_EQ(zh.values(), zh0) << "zh is input only";
      ASSERT_TRUE(zx.guards_intact() && zh.guards_intact() && h.guards_intact())
          << ks.name << " " << pair.label << " u=" << u;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsCellsIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
