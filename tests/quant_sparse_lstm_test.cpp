// The block-sparse gate matrices of the integer and hybrid LSTM (tflite/ops/lstm/lstm_s8_gates.hpp)
// give the dense gemv's sums bit for bit, so the op's outputs equal the dense op's byte for byte:
// TFLite's own LSTM fixtures (every int8 and dynamic-range variant: CIFG, peephole, projection,
// sequences) with their gate weights pruned in 1x16 blocks by a seeded draw, sparse forced
// against dense and the scalar reference; and the pruned bench LSTM quantized by the CLI (full
// int8 and dynamic), streamed step by step, sparse against dense.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "quant_lstm_fixture.hpp"
#include "support/bench_quantize.hpp"
#include "tickinfer/tickinfer.hpp"

namespace {

using namespace tickinfer::tfl;

bool have_avx2() { return tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2); }

// Zeroes each (16-row group, column) block of the 8 gate weight tensors ([n_cell x depth],
// TFLite's layout) and of the projection (operand 16, [n_output x n_cell]) with probability p;
// returns how many blocks it zeroed.
int prune_gate_blocks(lstm_fixture::LstmFixture& f, double p, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  int zeroed = 0;
  for (int operand : {1, 2, 3, 4, 5, 6, 7, 8, 16}) {
    if (static_cast<size_t>(operand) >= f.op().inputs.size()) continue;
    const int t = f.op().inputs[static_cast<size_t>(operand)];
    if (t < 0) continue;
    Tensor& w = f.program.tensors[static_cast<size_t>(t)];
    const int rows = w.shape.at(0), cols = w.shape.at(1);
    const size_t elem = dtype_size(w.type);
    for (int g = 0; g * 16 < rows; ++g) {
      for (int c = 0; c < cols; ++c) {
        if (u(rng) >= p) continue;
        ++zeroed;
        for (int r = g * 16; r < std::min(rows, g * 16 + 16); ++r) {
          std::memset(w.data.data() + (static_cast<size_t>(r) * cols + c) * elem, 0, elem);
        }
      }
    }
  }
  return zeroed;
}

std::vector<uint8_t> run_fixture(lstm_fixture::LstmFixture& f, SparseChoice mode, const char* isa, std::string* describe) {
  InterpreterOptions options;
  options.sparse = mode;
  auto op = lstm_fixture::prepare(f.program, options, isa);
  if (describe) *describe = op->describe();
  return lstm_fixture::run_all(f, *op);
}

class SparseLstmFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(SparseLstmFixture, SparseGatesEqualDenseAndReference) {
  if (!have_avx2()) GTEST_SKIP() << "CPU lacks AVX2: the sparse kernels here are its";
  lstm_fixture::LstmFixture f = lstm_fixture::load(GetParam());
  ASSERT_GT(prune_gate_blocks(f, 0.8, 11), 0);
  std::string d_sparse, d_dense;
  const auto reference = run_fixture(f, SparseChoice::Dense, "scalar", nullptr);
  const auto dense = run_fixture(f, SparseChoice::Dense, "avx2", &d_dense);
  const auto sparse = run_fixture(f, SparseChoice::Sparse, "avx2", &d_sparse);
  const auto autom = run_fixture(f, SparseChoice::Auto, "avx2", nullptr);
  EXPECT_NE(d_sparse.find("W_x sparsity"), std::string::npos) << d_sparse;
  EXPECT_NE(d_sparse.find("-> sparse 1x16"), std::string::npos) << d_sparse;
  if (f.op().inputs[16] >= 0) {
    EXPECT_NE(d_sparse.find("W_proj sparsity"), std::string::npos) << d_sparse;
  }
  EXPECT_EQ(d_dense.find("sparsity"), std::string::npos) << d_dense;
  EXPECT_EQ(dense, reference);
  EXPECT_EQ(sparse, reference);
  EXPECT_EQ(autom, reference);
}

INSTANTIATE_TEST_SUITE_P(Int8AndHybrid, SparseLstmFixture,
                         ::testing::Values("small_int8", "big_int8", "cifg_int8", "peephole_int8", "projection_int8",
                                           "small_seq_int8", "big_seq_int8", "all_dynamic", "symmetric_dynamic",
                                           "wide_dynamic", "wide_seq_dynamic"),
                         [](const auto& info) { return std::string(info.param); });

// An unpruned LSTM (a few weights quantized to 0, no zero block) keeps its dense gemv even with
// the sparse form forced.
TEST(SparseLstm, UnprunedStaysDense) {
  lstm_fixture::LstmFixture f = lstm_fixture::load("big_int8");
  std::string d;
  run_fixture(f, SparseChoice::Sparse, "avx2", &d);
  EXPECT_EQ(d.find("-> sparse"), std::string::npos) << d;
  EXPECT_NE(d.find("0% zero 1x16 blocks -> dense"), std::string::npos) << d;
}

// The pruned bench LSTM (tickinfer.pruning, 1x16 blocks at 80%) quantized by the CLI, streamed:
// the sparse plan's outputs equal the dense plan's at every step, and its inspect text names the
// sparse gates.
TEST(SparseLstm, PrunedBenchModelStreamsLikeDense) {
  if (!tickinfer::test::cli_built()) GTEST_SKIP() << "the CLI is not built";
  for (const char* mode : {"int8", "dynamic"}) {
    SCOPED_TRACE(mode);
    const std::string tkq = tickinfer::test::quantize_bench_model("lstm_tiny_pruned80", mode, "quant_sparse_lstm_test");
    ASSERT_FALSE(tkq.empty()) << "tickinfer quantize failed on lstm_tiny_pruned80";
    const tickinfer::Model model = tickinfer::Model::load(tkq);
    tickinfer::CompileOptions sparse_o, dense_o;
    sparse_o.sparse = tickinfer::SparseMode::Sparse;
    dense_o.sparse = tickinfer::SparseMode::Dense;
    sparse_o.mode = dense_o.mode = tickinfer::RecurrentMode::Stream;
    tickinfer::Plan sparse = tickinfer::compile(model, sparse_o), dense = tickinfer::compile(model, dense_o);
    if (have_avx2()) {
      EXPECT_NE(sparse.describe().find("W_h sparsity 80%"), std::string::npos) << sparse.describe();
    }
    EXPECT_EQ(dense.describe().find("sparse 1x16"), std::string::npos) << dense.describe();
    std::mt19937 rng(5);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> x(sparse.input_size(0)), ys(sparse.output_size(0)), yd(dense.output_size(0));
    for (int t = 0; t < 300; ++t) {
      for (float& v : x) v = n(rng);
      sparse.run(x.data(), ys.data());
      dense.run(x.data(), yd.data());
      ASSERT_EQ(0, std::memcmp(ys.data(), yd.data(), ys.size() * sizeof(float))) << "step " << t;
    }
    std::filesystem::remove(tkq);
  }
}

}  // namespace
