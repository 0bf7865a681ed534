// Plan::run_rows: several inputs of a feed-forward plan in one call must give, row for row,
// exactly (bitwise) what run() gives, on every kernel set this CPU has; plans that are not
// row-wise are refused by reserve_rows with the offending layer named.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"


namespace tickinfer {
namespace {

const std::string kSrc = ::tickinfer::test::source_dir();

void expect_rows_equal_runs(const std::string& path, const std::string& isa) {
  const Model model = Model::load(path);
  CompileOptions o;
  o.isa = isa;
  Plan plan = compile(model, o);
  Plan single = plan.clone();
  ASSERT_NO_THROW(plan.reserve_rows(9)) << path;
  ASSERT_EQ(plan.reserved_rows(), 9);
  const size_t in = plan.input_size(0), out = plan.output_size(0);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (int rows = 1; rows <= 9; ++rows) {
    std::vector<float> x(in * rows), y(out * rows), want(out);
    for (float& v : x) v = nd(rng);
    plan.run_rows(x.data(), rows, y.data());
    for (int r = 0; r < rows; ++r) {
      single.run(x.data() + r * in, want.data());
      ASSERT_EQ(std::memcmp(y.data() + r * out, want.data(), out * sizeof(float)), 0)
          << path << " isa " << isa << " rows " << rows << " row " << r;
    }
  }
}

class RunRows : public ::testing::TestWithParam<const char*> {};

TEST_P(RunRows, EveryRowEqualsItsRunBitForBit) {
  const std::string isa = GetParam();
  if (!kernels::isa_supported(kernels::parse_isa(isa.c_str()))) GTEST_SKIP() << isa << " not on this CPU";
  for (const char* m : {"/bench/models/mlp_small/model.keras", "/bench/models/mlp_large/model.keras",
                        "/tests/fixtures/batchnorm_k3/model.keras", "/tests/fixtures/layernorm_k3/model.keras",
                        "/tests/fixtures/relu_layers_k3/model.keras",
                        "/tests/fixtures/inference_noops_k3/model.keras"}) {
    SCOPED_TRACE(m);
    expect_rows_equal_runs(kSrc + m, isa);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, RunRows, ::testing::Values("scalar", "portable", "avx2", "avx512"),
                         [](const auto& info) { return std::string(info.param); });

// More rows than reserved run in slices; a plan with none reserved (here a fresh clone) runs
// them one run() at a time: the same numbers either way.
TEST(RunRows, MoreRowsThanReservedAndNoneReservedGiveTheSameRows) {
  Plan plan = compile(Model::load(kSrc + "/bench/models/mlp_small/model.keras"));
  Plan bare = plan.clone();
  plan.reserve_rows(4);
  EXPECT_EQ(bare.reserved_rows(), 0);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  std::vector<float> x(11 * 10), y(11), y_bare(11), want(1);
  for (float& v : x) v = nd(rng);
  plan.run_rows(x.data(), 11, y.data());
  bare.run_rows(x.data(), 11, y_bare.data());
  for (int r = 0; r < 11; ++r) {
    plan.run(x.data() + r * 10, want.data());
    EXPECT_EQ(std::memcmp(&y[r], &want[0], sizeof(float)), 0) << r;
    EXPECT_EQ(std::memcmp(&y_bare[r], &want[0], sizeof(float)), 0) << r;
  }
}

// reserve_rows throws an Error containing `why`; try_reserve_rows says no and reserves nothing.
void expect_refused(const std::string& path, const std::string& why, const LoadOptions& load = {}) {
  Plan plan = compile(Model::load(kSrc + path, load));
  try {
    plan.reserve_rows(4);
    ADD_FAILURE() << path << " was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
  EXPECT_FALSE(plan.try_reserve_rows(4)) << path;
  EXPECT_EQ(plan.reserved_rows(), 0) << path;
}

TEST(RunRowsRefusals, SequenceModelsBranchesAndTfliteAreRefusedByName) {
  expect_refused("/bench/models/lstm_window/model.keras", "is LSTM");
  expect_refused("/bench/models/tcn/model.keras", "is Conv1D");
  expect_refused("/tests/fixtures/dense_activations_k3/model.keras", "not a single chain");
  // On the interpreter (a lifted one runs on the graph engine).
  expect_refused("/tests/fixtures/tflite/mlp_small/float.tflite", "TFLite", LoadOptions{TfliteEngine::Interpreter});
  Plan mlp = compile(Model::load(kSrc + "/bench/models/mlp_small/model.keras"));
  EXPECT_THROW(mlp.reserve_rows(0), Error);
  EXPECT_FALSE(mlp.try_reserve_rows(0));
  EXPECT_EQ(mlp.reserved_rows(), 0);
  EXPECT_TRUE(mlp.try_reserve_rows(3));
  EXPECT_EQ(mlp.reserved_rows(), 3);
}

}  // namespace
}  // namespace tickinfer
