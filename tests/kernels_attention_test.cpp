// KernelSet::attend_head: the scalar set against scores, a base-2 softmax and a weighted sum computed
// here in double from the definition (which keys each query sees: all, causal, a sliding span, both),
// and every optimized set against the scalar set, over shapes below, at and above the vector
// widths, with guards around the outputs. Tolerance: the exponential's few ulps and the sums'
// order (2e-6 relative to the magnitude of the values).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "kernels_test_support.hpp"

namespace tickinfer::kernels {
namespace {

using namespace tickinfer::kernels::testing;

struct Case {
  int queries, keys, key_dim, value_dim;
  bool causal;
  int span;
};

bool sees(const Case& c, int i, int j) {
  if (j < 0 || j >= c.keys) return false;
  if (c.causal && j > i) return false;
  if (c.span > 0 && std::abs(i - j) >= c.span) return false;
  return true;
}

// The problem's data: queries (T x key_dim, also packed as Q^T in panel form with the padding
// columns holding NaN: a kernel may compute them but must not let them into a stored result),
// keys (S x ldk) and values (S x ldv).
struct Problem {
  Case c;
  size_t columns, ldk, ldv, ldo;
  std::vector<float> q, queries_t, key_rows, values;
  Problem(const Case& cs, std::mt19937& rng) : c(cs) {
    columns = static_cast<size_t>(round_up(c.queries, kPanel));
    ldk = static_cast<size_t>(c.key_dim) + 1;
    ldv = static_cast<size_t>(c.value_dim) + 2;
    ldo = static_cast<size_t>(c.value_dim) + 3;
    std::uniform_real_distribution<float> feature(-1.5f, 1.5f), value(-2.0f, 2.0f);
    q.resize(static_cast<size_t>(c.queries) * c.key_dim);
    for (float& x : q) x = feature(rng);
    queries_t.assign(static_cast<size_t>(c.key_dim) * columns, std::nanf(""));
    for (int i = 0; i < c.queries; ++i) {
      for (int d = 0; d < c.key_dim; ++d) queries_t[((i / kPanel) * c.key_dim + d) * kPanel + i % kPanel] = q[i * c.key_dim + d];
    }
    key_rows.resize(static_cast<size_t>(c.keys) * ldk);
    for (float& x : key_rows) x = feature(rng);
    values.resize(static_cast<size_t>(c.keys) * ldv);
    for (float& v : values) v = value(rng);
  }
  double score(int i, int j) const {
    double s = 0.0;
    for (int d = 0; d < c.key_dim; ++d) s += static_cast<double>(q[i * c.key_dim + d]) * key_rows[j * ldk + d];
    return s;
  }
  // Runs `ks` with fresh scratch; out has guard values between and after the rows.
  std::vector<float> run(const KernelSet& ks) const {
    std::vector<float> scratch(static_cast<size_t>(c.keys) * columns, kGuard);
    std::vector<float> out(static_cast<size_t>(c.queries) * ldo + kGuardCount, kGuard);
    ks.attend_head({queries_t.data(), key_rows.data(), ldk, c.key_dim, scratch.data(), columns, c.queries, c.keys,
                    values.data(), ldv, c.value_dim, out.data(), ldo, c.causal, c.span});
    return out;
  }
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int t : {1, 3, 8, 15, 16, 17, 33, 64}) {
    for (int vd : {1, 3, 8, 9, 16, 19}) {
      const int kd = vd % 2 ? vd : 13 - vd % 13;  // key widths in and past the register-held range
      all.push_back({t, t, kd, vd, false, 0});
      all.push_back({t, t, kd, vd, true, 0});
      all.push_back({t, t, kd, vd, true, 5});
      all.push_back({t, t, kd, vd, false, 4});
    }
    all.push_back({t, 7, 8, 8, false, 0});   // cross attention: fewer keys than queries
    all.push_back({t, 40, 5, 5, false, 0});  // more keys than queries
    all.push_back({t, 4, 2, 3, false, 2});   // queries past the keys' reach see none: zeros
  }
  return all;
}

void expect_guards(const Problem& p, const std::vector<float>& out, const char* who) {
  for (int i = 0; i < p.c.queries; ++i) {
    for (size_t d = static_cast<size_t>(p.c.value_dim); d < p.ldo; ++d) {
      ASSERT_EQ(out[i * p.ldo + d], kGuard) << who << " wrote past value_dim, query " << i;
    }
  }
  for (int g = 0; g < kGuardCount; ++g) ASSERT_EQ(out[p.c.queries * p.ldo + g], kGuard) << who << " wrote past the rows";
}

TEST(KernelsAttentionScalar, MatchesTheDefinitionInDouble) {
  std::mt19937 rng(test_seed());
  SCOPED_TRACE(seed_note(test_seed()));
  for (const Case& c : cases()) {
    const Problem p(c, rng);
    const std::vector<float> out = p.run(kernel_set(Isa::Scalar));
    expect_guards(p, out, "scalar");
    for (int i = 0; i < c.queries; ++i) {
      double m = -INFINITY, sum = 0.0;
      for (int j = 0; j < c.keys; ++j) {
        if (sees(c, i, j)) m = std::max(m, p.score(i, j));
      }
      std::vector<double> want(c.value_dim, 0.0);
      for (int j = 0; j < c.keys; ++j) {
        if (!sees(c, i, j)) continue;
        const double e = std::exp2(p.score(i, j) - m);
        sum += e;
        for (int d = 0; d < c.value_dim; ++d) want[d] += e * p.values[j * p.ldv + d];
      }
      for (int d = 0; d < c.value_dim; ++d) {
        const double w = sum > 0.0 ? want[d] / sum : 0.0;
        ASSERT_NEAR(out[i * p.ldo + d], w, 2e-6) << "T=" << c.queries << " S=" << c.keys << " kd=" << c.key_dim << " vd=" << c.value_dim
                                                 << " causal=" << c.causal << " span=" << c.span << " i=" << i;
      }
    }
  }
}

class KernelsAttentionIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(KernelsAttentionIsa, MatchesScalar) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  std::mt19937 rng(test_seed());
  SCOPED_TRACE(seed_note(test_seed()));
  for (const Case& c : cases()) {
    const Problem p(c, rng);
    const std::vector<float> want = p.run(kernel_set(Isa::Scalar));
    const std::vector<float> got = p.run(kernel_set(isa));
    expect_guards(p, got, isa_name(isa));
    for (int i = 0; i < c.queries; ++i) {
      for (int d = 0; d < c.value_dim; ++d) {
        ASSERT_NEAR(got[i * p.ldo + d], want[i * p.ldo + d], 2e-6)
            << "T=" << c.queries << " S=" << c.keys << " vd=" << c.value_dim << " causal=" << c.causal
            << " span=" << c.span << " i=" << i << " d=" << d;
      }
    }
  }
}

// The softmax's exponential (base 2), seen through the kernel: query i (key_dim 1, q_i = x_i <= 0)
// against keys 0 and 1 with one-hot values gives (1, 2^x_i) / (1 + 2^x_i), so the ratio of its two
// outputs is the kernel's 2^x_i (the 1 / sum scales both alike). x runs over [-125, 0], denser
// near 0 where a softmax's terms matter most. Bound: 3.6e-7 relative (the exponential's 1.94 ulp
// and one rounding of each output).
TEST_P(KernelsAttentionIsa, ExponentialWithinAFewUlp) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  constexpr int kQueries = 4096;
  std::vector<float> x(kQueries);
  for (int i = 0; i < kQueries; ++i) {
    const double t = static_cast<double>(i) / (kQueries - 1);
    x[i] = static_cast<float>(-125.0 * t * t * t);
  }
  std::vector<float> queries_t(x);  // key_dim 1: Q^T in panel form is the queries in order
  const std::vector<float> keys = {0.0f, 1.0f}, values = {1.0f, 0.0f, 0.0f, 1.0f};
  std::vector<float> scratch(static_cast<size_t>(2) * kQueries), out(static_cast<size_t>(2) * kQueries);
  kernel_set(isa).attend_head({queries_t.data(), keys.data(), 1, 1, scratch.data(), kQueries, kQueries, 2, values.data(), 2, 2,
                               out.data(), 2, false, 0});
  double worst = 0.0;
  for (int i = 0; i < kQueries; ++i) {
    const double want = std::exp2(static_cast<double>(x[i]));
    const double got = static_cast<double>(out[2 * i + 1]) / out[2 * i];
    worst = std::max(worst, std::abs(got - want) / want);
    ASSERT_LE(std::abs(got - want), 3.6e-7 * want) << isa_name(isa) << " x=" << x[i];
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsAttentionIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
