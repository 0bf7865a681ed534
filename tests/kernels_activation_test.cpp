// Activations and softmax: the scalar set against closed forms for known values, and every
// optimized set against the scalar set over random and special inputs.
//
// Tolerances (per element, want = scalar result):
//   * default: |got - want| <= 4 ulp(want) (exp, sigmoid, tanh, elu, softplus...); 8 ulp for
//     the products swish, selu, gelu, gelu_tanh (the scalar reference itself is ~3 ulp off there)
//   * exp, sigmoid, tanh are also checked against double precision: <= 3 ulp.
//   * gelu / gelu_tanh: 4 ulp(want) + 1.2e-7 |x|, since 0.5 x (1 + erf) cancels for negative x
//     (TensorFlow computes it in the same form) and an error of one ulp of 1 in erf/tanh
//     becomes 0.5 |x| 2^-23 in the result.
//   * hard_sigmoid: 4 ulp(want) + 6e-8 |slope x| (a fused multiply-add may round once less).
//   * softmax: 1e-6 relative + 1e-9 absolute (sums are ordered differently).
// NaN must map to NaN, +-inf to the same value as the scalar set.
#include <cmath>
#include <limits>

#include "kernels/kernel_set.hpp"
#include "kernels_test_support.hpp"

namespace tickinfer::kernels {
namespace {

using namespace tickinfer::kernels::testing;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

ActivationSpec spec(ActKind kind, float alpha = 0.0f, float beta = 0.0f, float max_value = kInf,
                    float threshold = 0.0f) {
  ActivationSpec a;
  a.kind = kind;
  a.alpha = alpha;
  a.beta = beta;
  a.max_value = max_value;
  a.threshold = threshold;
  return a;
}

float scalar_act(const ActivationSpec& a, float x) {
  float y;
  kernel_set(Isa::Scalar).activation(a, &x, &y, 1);
  return y;
}

TEST(KernelsActivationScalar, KnownValues) {
  const double e = std::exp(1.0);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Linear), -3.5f), -3.5f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Relu), -2.0f), 0.0f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Relu), 2.5f), 2.5f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Relu, 0, 0, 6.0f), 7.0f), 6.0f);          // relu6
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Relu, 0.1f, 0, kInf, 1.0f), -1.0f), -0.2f);  // 0.1 * (-1 - 1)
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::LeakyRelu, 0.3f), -2.0f), -0.6f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Elu, 1.0f), -1.0f), static_cast<float>(1.0 / e - 1.0));
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Elu, 1.0f), 2.0f), 2.0f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Selu), 1.0f), 1.0507009873554805f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Selu), -1.0f),
                  static_cast<float>(1.0507009873554805 * 1.6732632423543772 * (1.0 / e - 1.0)));
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Sigmoid), 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Sigmoid), 2.0f), static_cast<float>(1.0 / (1.0 + 1.0 / (e * e))));
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::HardSigmoid, 0.2f, 0.5f), 1.0f), 0.7f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::HardSigmoid, 0.2f, 0.5f), 5.0f), 1.0f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::HardSigmoid, 1.0f / 6, 0.5f), -4.0f), 0.0f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Tanh), 0.5f), static_cast<float>(std::tanh(0.5)));
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Gelu), 1.0f), 0.8413447460685429f);   // Phi(1)
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Gelu), -1.0f), -0.15865525393145707f);
  EXPECT_NEAR(scalar_act(spec(ActKind::GeluTanh), 1.0f), 0.8411919906082768f, 1e-7);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Swish), 1.0f), 0.7310585786300049f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Softplus), 0.0f), 0.6931471805599453f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Softplus), 100.0f), 100.0f);  // no overflow
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Softplus), -50.0f), static_cast<float>(std::exp(-50.0)));
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Softsign), 1.0f), 0.5f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Softsign), -3.0f), -0.75f);
  EXPECT_FLOAT_EQ(scalar_act(spec(ActKind::Exponential), 1.0f), static_cast<float>(e));
}

// Every elementwise kind with the parameters Keras uses (relu variants included).
std::vector<std::pair<std::string, ActivationSpec>> all_specs() {
  return {
      {"linear", spec(ActKind::Linear)},
      {"relu", spec(ActKind::Relu)},
      {"relu6", spec(ActKind::Relu, 0.0f, 0.0f, 6.0f)},
      {"relu_general", spec(ActKind::Relu, 0.1f, 0.0f, 3.0f, 0.5f)},
      {"leaky_relu", spec(ActKind::LeakyRelu, 0.2f)},
      {"elu", spec(ActKind::Elu, 1.0f)},
      {"selu", spec(ActKind::Selu)},
      {"sigmoid", spec(ActKind::Sigmoid)},
      {"hard_sigmoid_k2", spec(ActKind::HardSigmoid, 0.2f, 0.5f)},
      {"hard_sigmoid_k3", spec(ActKind::HardSigmoid, 1.0f / 6.0f, 0.5f)},
      {"tanh", spec(ActKind::Tanh)},
      {"gelu", spec(ActKind::Gelu)},
      {"gelu_tanh", spec(ActKind::GeluTanh)},
      {"swish", spec(ActKind::Swish)},
      {"softplus", spec(ActKind::Softplus)},
      {"softsign", spec(ActKind::Softsign)},
      {"exponential", spec(ActKind::Exponential)},
  };
}

double tolerance(const ActivationSpec& a, float x, float want) {
  const double ulp = std::fabs(std::nextafter(want, kInf) - want);
  // Composites round a product of two already-rounded results: allow twice the ulps.
  const bool composite = a.kind == ActKind::Swish || a.kind == ActKind::Gelu ||
                         a.kind == ActKind::GeluTanh || a.kind == ActKind::Selu;
  double tol = (composite ? 8.0 : 4.0) * ulp;
  if (a.kind == ActKind::Gelu || a.kind == ActKind::GeluTanh) tol += 1.2e-7 * std::fabs(x);
  // slope * x + offset cancels near 0; a compiler may fuse it into one FMA (one rounding fewer).
  if (a.kind == ActKind::HardSigmoid) tol += 6e-8 * std::fabs(a.alpha * x);
  return tol;
}

// Random values at several scales plus values that stress range reduction and special cases.
std::vector<float> test_inputs(std::mt19937& rng, int n, int round) {
  static const float scales[] = {0.01f, 0.7f, 3.0f, 12.0f, 95.0f};
  auto v = random_vector(rng, n, -scales[round % 5], scales[round % 5]);
  static const float specials[] = {0.0f, -0.0f, kNaN, kInf, -kInf, 88.7f, 88.73f, -87.4f,
                                   -103.0f, -110.0f, 1e-30f, -1e-30f, 0.625f, -0.6249f,
                                   0.7071f, 3.92f, -5.6f, 1e-45f, 20.0f, -20.0f};
  if (round % 2 == 1) {
    for (int i = 0; i < n; i += 3) v[i] = specials[(i / 3 + round) % 20];
  }
  return v;
}

const char* activation_name_for_test(ActKind k) {
  return k == ActKind::Exponential ? "exp" : k == ActKind::Sigmoid ? "sigmoid" : "tanh";
}

class KernelsActivationIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(KernelsActivationIsa, EveryKindMatchesScalar) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const uint32_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937 rng(seed);
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const KernelSet& ks = kernel_set(isa);
  for (const auto& [label, act] : all_specs()) {
    int round = 0;
    for (int n : kSizes) {
      for (bool in_place : {false, true}) {
        ++round;
        const auto xv = test_inputs(rng, n, round);
        GuardedBuffer x(n, round % 4), y(n, (round + 1) % 4);
        x.fill(xv);
        std::vector<float> want(n);
        ref.activation(act, xv.data(), want.data(), n);
        float* out = in_place ? x.data() : y.data();
        ks.activation(act, x.data(), out, n);
        for (int i = 0; i < n; ++i) {
          ASSERT_TRUE(close_or_same_special(out[i], want[i], tolerance(act, xv[i], want[i])))
              << ks.name << " " << label << " x=" << xv[i] << " got " << out[i] << " want "
              << want[i] << " (" << ulp_distance(out[i], want[i]) << " ulp) n=" << n
              << (in_place ? " in place" : "");
        }
        ASSERT_TRUE(x.guards_intact() && y.guards_intact()) << ks.name << " " << label << " n=" << n;
      }
    }
  }
}

// Dense sweep of the transcendental kinds over the ranges where the polynomial pieces switch.
TEST_P(KernelsActivationIsa, DenseSweepWithinUlpBounds) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const KernelSet& ref = kernel_set(Isa::Scalar);
  const KernelSet& ks = kernel_set(isa);
  const int n = 200001;
  std::vector<float> x(n), want(n), got(n);
  for (int i = 0; i < n; ++i) x[i] = -20.0f + 40.0f * static_cast<float>(i) / (n - 1);
  for (const auto& [label, act] : all_specs()) {
    ref.activation(act, x.data(), want.data(), n);
    ks.activation(act, x.data(), got.data(), n);
    int64_t worst = 0;
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(close_or_same_special(got[i], want[i], tolerance(act, x[i], want[i])))
          << ks.name << " " << label << " x=" << x[i] << " got " << got[i] << " want " << want[i];
      if (act.kind != ActKind::Gelu && act.kind != ActKind::GeluTanh)
        worst = std::max(worst, ulp_distance(got[i], want[i]));
    }
    RecordProperty(label + "_max_ulp", static_cast<int>(worst));
  }
}

TEST_P(KernelsActivationIsa, ExpSigmoidTanhWithinThreeUlpOfDouble) {
  const Isa isa = GetParam();
  TICKINFER_SKIP_UNSUPPORTED(isa);
  const int n = 400001;
  std::vector<float> x(n), got(n);
  for (int i = 0; i < n; ++i) x[i] = -100.0f + 190.0f * static_cast<float>(i) / (n - 1);
  const struct {
    ActKind kind;
    double (*exact)(double);
  } cases[] = {{ActKind::Exponential, [](double v) { return std::exp(v); }},
               {ActKind::Sigmoid, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
               {ActKind::Tanh, [](double v) { return std::tanh(v); }}};
  for (const auto& c : cases) {
    kernel_set(isa).activation(spec(c.kind), x.data(), got.data(), n);
    for (int i = 0; i < n; ++i) {
      const float want = static_cast<float>(c.exact(x[i]));
      if (got[i] == want) continue;  // covers +-inf and 0
      if (std::fpclassify(want) == FP_SUBNORMAL) {
        // 1 / (1 + e^-x) is 0 once e^-x overflows (x < -88.7), like the scalar form; exp
        // itself keeps subnormal results (checked by the ulp bound when not flushed).
        ASSERT_LE(std::fabs(got[i] - want), std::numeric_limits<float>::min()) << "x=" << x[i];
        if (c.kind != ActKind::Exponential) continue;
      }
      ASSERT_LE(ulp_distance(got[i], want), 3) << activation_name_for_test(c.kind) << " x=" << x[i]
                                               << " got " << got[i] << " want " << want;
    }
  }
}

TEST_P(KernelsActivationIsa, SoftmaxMatchesScalarAndSumsToOne) {
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
      for (bool via_activation : {false, true}) {
        ++round;
        const auto xv = random_vector(rng, n, -30.0f, 30.0f);
        GuardedBuffer x(n, round % 4), y(n, (round + 2) % 4);
        x.fill(xv);
        std::vector<float> want(n);
        ref.softmax(xv.data(), want.data(), n);
        float* out = in_place ? x.data() : y.data();
        if (via_activation) {
          ks.activation(spec(ActKind::Softmax), x.data(), out, n);
        } else {
          ks.softmax(x.data(), out, n);
        }
        double sum = 0.0;
        for (int i = 0; i < n; ++i) {
          ASSERT_NEAR(out[i], want[i], 1e-6 * want[i] + 1e-9) << ks.name << " n=" << n << " i=" << i;
          sum += out[i];
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
        ASSERT_TRUE(x.guards_intact() && y.guards_intact()) << ks.name << " n=" << n;
      }
    }
  }
}

TEST(KernelsActivationScalar, SoftmaxOfKnownValues) {
  const float x[3] = {1.0f, 2.0f, 3.0f};
  float y[3];
  kernel_set(Isa::Scalar).softmax(x, y, 3);
  const double d = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(std::exp(1.0) / d));
  EXPECT_FLOAT_EQ(y[1], static_cast<float>(std::exp(2.0) / d));
  EXPECT_FLOAT_EQ(y[2], static_cast<float>(std::exp(3.0) / d));
}

INSTANTIATE_TEST_SUITE_P(Optimized, KernelsActivationIsa, ::testing::ValuesIn(kOptimizedIsas),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace tickinfer::kernels
