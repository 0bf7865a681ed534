// Pruned models through the compiler's dense-or-sparse choice (engine/sparse_choice.hpp): the
// sparse plan computes what the dense plan computes (within float rounding: the sums are
// ordered differently), run_rows gives run()'s bits row by row, stream-mode LSTM state carries
// the same way, the choice follows the options, and describe() says per layer what was chosen and why.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/magnitude_prune.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

Model bench_model(const char* name) {
  return Model::load(std::string(::tickinfer::test::source_dir()) + "/bench/models/" + name + "/model.keras");
}

Plan compiled(const Model& m, SparseMode sparse, RecurrentMode mode = RecurrentMode::Window) {
  CompileOptions o;
  o.sparse = sparse;
  o.mode = mode;
  return compile(m, o);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << what << " [" << i << "]";
  }
}

TEST(EngineSparsePlan, PrunedMlpRunsSparseAndComputesWhatDenseComputes) {
  for (double share : {0.5, 0.8, 0.9}) {
    const Model m = Model::from_graph(magnitude_pruned(bench_model("mlp_large").graph(), share, true));
    Plan dense = compiled(m, SparseMode::Dense), sparse = compiled(m, SparseMode::Sparse);
    EXPECT_EQ(dense.describe().find("sparse 1x16"), std::string::npos);
    EXPECT_NE(sparse.describe().find("-> sparse 1x16"), std::string::npos) << sparse.describe();
    EXPECT_LT(sparse.weight_bytes(), dense.weight_bytes());
    std::mt19937 rng(3);
    std::normal_distribution<float> nd;
    const int rows = 13;
    std::vector<float> x(static_cast<size_t>(rows) * 10), yd(rows), ys(rows), yr(rows);
    for (float& v : x) v = nd(rng);
    for (int r = 0; r < rows; ++r) {
      dense.run(x.data() + 10 * r, yd.data() + r);
      sparse.run(x.data() + 10 * r, ys.data() + r);
    }
    expect_close(ys, yd, "share " + std::to_string(share));
    ASSERT_TRUE(sparse.try_reserve_rows(rows));
    sparse.run_rows(x.data(), rows, yr.data());
    for (int r = 0; r < rows; ++r) EXPECT_EQ(yr[r], ys[r]) << "run_rows must give run()'s bits, row " << r;
  }
}

TEST(EngineSparsePlan, PrunedLstmStreamCarriesStateLikeDense) {
  const Model m = Model::from_graph(magnitude_pruned(bench_model("lstm_tiny").graph(), 0.8, true));
  Plan dense = compiled(m, SparseMode::Dense, RecurrentMode::Stream);
  Plan sparse = compiled(m, SparseMode::Sparse, RecurrentMode::Stream);
  EXPECT_NE(sparse.describe().find("[kernel; recurrent_kernel]: 80% zero weights"), std::string::npos)
      << sparse.describe();
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  std::vector<float> x(dense.input_size(0)), yd(dense.output_size(0)), ys(yd.size());
  for (int t = 0; t < 50; ++t) {
    for (float& v : x) v = nd(rng);
    dense.run(x.data(), yd.data());
    sparse.run(x.data(), ys.data());
    expect_close(ys, yd, "tick " + std::to_string(t));
  }
}

TEST(EngineSparsePlan, UnstructuredPruningStaysDenseAndSaysWhy) {
  const Model m = Model::from_graph(magnitude_pruned(bench_model("mlp_large").graph(), 0.8, false));
  const std::string d = compiled(m, SparseMode::Auto).describe();
  EXPECT_NE(d.find("80% zero weights"), std::string::npos) << d;
  EXPECT_NE(d.find("-> dense (too few zero blocks"), std::string::npos) << d;
  EXPECT_EQ(d.find("-> sparse"), std::string::npos) << d;
}

TEST(EngineSparsePlan, AutoTimesBothFormsAndDenseModelsSayNothing) {
  const Model pruned = Model::from_graph(magnitude_pruned(bench_model("mlp_large").graph(), 0.9, true));
  const std::string d = compiled(pruned, SparseMode::Auto).describe();
  EXPECT_NE(d.find("measured sparse"), std::string::npos) << d;  // the choice itself is the machine's
  const std::string plain = compiled(bench_model("mlp_large"), SparseMode::Auto).describe();
  EXPECT_EQ(plain.find("zero weights"), std::string::npos) << plain;
}

}  // namespace
}  // namespace tickinfer
