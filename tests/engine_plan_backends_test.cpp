// Plan forwards to one of two backends (engine/plan_backend.hpp): the Keras graph plan and the
// tensor-program plan (TFLite, .tkq). Both must answer the interface the same way: shapes that
// match the Model's, a description, costs, clones that compute what the original does, run_rows
// without a reservation equal to run() per row, and a rows reservation that is either granted or
// refused with a reason and nothing reserved.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"


namespace tickinfer {
namespace {

const std::string kFixtures = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/";

struct Case {
  const char* path;   // under tests/fixtures/
  bool row_wise;      // reserve_rows accepts the plan
  bool interpreter;   // a float TFLite file forced onto the interpreter (LoadOptions::tflite_engine)
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.path << (c.interpreter ? " (interpreter)" : ""); }

// A float TFLite file that lifts runs on the graph backend; the escape hatch keeps it on the
// program backend, so both backends are covered by the same file.
const Case kCases[] = {
    {"tflite/mlp_small/model.h5", true, false},
    {"tflite/mlp_small/float.tflite", false, true},
    {"tflite/mlp_small/float.tflite", true, false},
    {"tflite/mlp_small/int8.tflite", false, false},
    {"tkq/mlp_small_int8.tkq", false, false},
};

Model load(const Case& c) {
  return Model::load(kFixtures + c.path, LoadOptions{c.interpreter ? TfliteEngine::Interpreter : TfliteEngine::Auto});
}
bool is_program(const Case& c) {
  const std::string path = c.path;
  return path.find(".tkq") != std::string::npos || path.find("int8") != std::string::npos || c.interpreter;
}

std::vector<float> random_rows(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  std::vector<float> x(n);
  for (float& v : x) v = nd(rng);
  return x;
}

class EnginePlanBackends : public ::testing::TestWithParam<Case> {};

TEST_P(EnginePlanBackends, ShapesAndDescriptionMatchTheModel) {
  const Model model = load(GetParam());
  const Plan plan = compile(model);
  ASSERT_EQ(plan.num_inputs(), model.inputs().size());
  ASSERT_EQ(plan.num_outputs(), model.outputs().size());
  for (size_t i = 0; i < plan.num_inputs(); ++i) EXPECT_EQ(plan.input_shape(i), model.inputs()[i].shape);
  for (size_t i = 0; i < plan.num_outputs(); ++i) EXPECT_EQ(plan.output_shape(i), model.outputs()[i].shape);
  EXPECT_EQ(plan.mode(), RecurrentMode::Window);
  ASSERT_NE(plan.isa(), nullptr);
  EXPECT_GT(std::strlen(plan.isa()), 0u);
  EXPECT_GT(plan.arena_bytes(), 0u);
  EXPECT_GT(plan.flops(), 0);
  EXPECT_GT(plan.weight_bytes(), 0);
  EXPECT_GT(plan.weight_footprint_bytes(), 0);
  EXPECT_EQ(plan.describe().rfind("plan: ", 0), 0u) << plan.describe();
  EXPECT_EQ(model.program() != nullptr, is_program(GetParam()));
}

TEST_P(EnginePlanBackends, CloneComputesWhatTheOriginalDoes) {
  const Model model = load(GetParam());
  Plan plan = compile(model);
  Plan copy = plan.clone();
  EXPECT_EQ(copy.input_shape(0), plan.input_shape(0));
  EXPECT_EQ(copy.weight_footprint_bytes(), plan.weight_footprint_bytes());
  EXPECT_STREQ(copy.isa(), plan.isa());
  const std::vector<float> x = random_rows(plan.input_size(0), 3);
  std::vector<float> a(plan.output_size(0)), b(plan.output_size(0));
  plan.run(x.data(), a.data());
  copy.run(x.data(), b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  plan.reset_state();  // window mode: nothing to reset, and the next run is unchanged
  plan.run(x.data(), b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST_P(EnginePlanBackends, RowsAreRunsWithOrWithoutAReservation) {
  const Model model = load(GetParam());
  Plan plan = compile(model);
  EXPECT_EQ(plan.reserved_rows(), 0);
  EXPECT_FALSE(plan.try_reserve_rows(0));
  EXPECT_EQ(plan.try_reserve_rows(4), GetParam().row_wise);
  if (GetParam().row_wise) {
    EXPECT_EQ(plan.reserved_rows(), 4);
    EXPECT_EQ(plan.clone().reserved_rows(), 0);  // a clone starts with none
  } else {
    EXPECT_EQ(plan.reserved_rows(), 0);
    EXPECT_THROW(plan.reserve_rows(4), Error);
  }
  const size_t in = plan.input_size(0), out = plan.output_size(0);
  constexpr int kRows = 7;  // more than reserved: two slices
  const std::vector<float> x = random_rows(in * kRows, 5);
  std::vector<float> y(out * kRows), want(out);
  plan.run_rows(x.data(), kRows, y.data());
  for (int r = 0; r < kRows; ++r) {
    plan.run(x.data() + r * in, want.data());
    ASSERT_EQ(std::memcmp(y.data() + r * out, want.data(), out * sizeof(float)), 0) << "row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EnginePlanBackends, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = std::string(info.param.path) + (info.param.interpreter ? "_interpreter" : "");
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// The same network through both backends: the Keras file and its float TFLite conversion, on the
// interpreter and lifted to the graph engine, agree to float rounding.
TEST(EnginePlanBackendsAgree, KerasAndFloatTfliteGiveTheSameOutputs) {
  Plan keras = compile(Model::load(kFixtures + "tflite/mlp_small/model.h5"));
  for (const char* engine : {"interpreter", "graph"}) {
    Plan tflite = compile(Model::load(kFixtures + "tflite/mlp_small/float.tflite", LoadOptions{parse_tflite_engine(engine)}));
    ASSERT_EQ(keras.input_size(0), tflite.input_size(0));
    ASSERT_EQ(keras.output_size(0), tflite.output_size(0));
    const std::vector<float> x = random_rows(keras.input_size(0), 9);
    std::vector<float> a(keras.output_size(0)), b(keras.output_size(0));
    keras.run(x.data(), a.data());
    tflite.run(x.data(), b.data());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4f * (1.0f + std::fabs(a[i]))) << engine << " " << i;
  }
}

}  // namespace
}  // namespace tickinfer
