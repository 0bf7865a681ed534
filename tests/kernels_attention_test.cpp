// KernelSet::attend_head: the scalar set against a softmax and weighted sum computed here in
// double from the definition (which keys each query sees: all, causal, a sliding span, both),
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
  int queries, keys, value_dim;
  bool causal;
  int span;
};

bool sees(const Case& c, int i, int j) {
  if (j < 0 || j >= c.keys) return false;
  if (c.causal && j > i) return false;
  if (c.span > 0 && std::abs(i - j) >= c.span) return false;
  return true;
}

// The problem's data: scores (keys x ld), values (keys x ldv), with the padding columns of the
// scores holding NaN (a kernel may read them but must not let them into a stored result).
struct Problem {
  Case c;
  size_t ld, ldv, ldo;
  std::vector<float> scores_t, values;
  Problem(const Case& cs, std::mt19937& rng) : c(cs) {
    ld = static_cast<size_t>(round_up(c.queries, kPanel));
    ldv = static_cast<size_t>(c.value_dim) + 2;
    ldo = static_cast<size_t>(c.value_dim) + 3;
    scores_t.assign(static_cast<size_t>(c.keys) * ld, std::nanf(""));
    std::uniform_real_distribution<float> score(-6.0f, 6.0f), value(-2.0f, 2.0f);
    for (int j = 0; j < c.keys; ++j) {
      for (int i = 0; i < c.queries; ++i) scores_t[j * ld + i] = score(rng);
    }
    values.resize(static_cast<size_t>(c.keys) * ldv);
    for (float& v : values) v = value(rng);
  }
  // Runs `ks` on a fresh copy of the scores; out has guard values between and after the rows.
  std::vector<float> run(const KernelSet& ks) const {
    std::vector<float> s = scores_t, out(static_cast<size_t>(c.queries) * ldo + kGuardCount, kGuard);
    ks.attend_head({s.data(), ld, c.queries, c.keys, values.data(), ldv, c.value_dim, out.data(), ldo, c.causal,
                    c.span});
    return out;
  }
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int t : {1, 3, 8, 15, 16, 17, 33, 64}) {
    for (int vd : {1, 3, 8, 9, 16, 19}) {
      all.push_back({t, t, vd, false, 0});
      all.push_back({t, t, vd, true, 0});
      all.push_back({t, t, vd, true, 5});
      all.push_back({t, t, vd, false, 4});
    }
    all.push_back({t, 7, 8, false, 0});      // cross attention: fewer keys than queries
    all.push_back({t, 40, 5, false, 0});     // more keys than queries
    all.push_back({t, 4, 3, false, 2});      // queries past the keys' reach see none: zeros
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
        if (sees(c, i, j)) m = std::max(m, static_cast<double>(p.scores_t[j * p.ld + i]));
      }
      std::vector<double> want(c.value_dim, 0.0);
      for (int j = 0; j < c.keys; ++j) {
        if (!sees(c, i, j)) continue;
        const double e = std::exp(p.scores_t[j * p.ld + i] - m);
        sum += e;
        for (int d = 0; d < c.value_dim; ++d) want[d] += e * p.values[j * p.ldv + d];
      }
      for (int d = 0; d < c.value_dim; ++d) {
        const double w = sum > 0.0 ? want[d] / sum : 0.0;
        ASSERT_NEAR(out[i * p.ldo + d], w, 2e-6) << "T=" << c.queries << " S=" << c.keys << " vd=" << c.value_dim
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

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsAttentionIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
