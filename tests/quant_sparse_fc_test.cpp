// The block-sparse int8 FULLY_CONNECTED (tflite/kernels/s8_sparse.hpp, ops/fc_sparse_choice.hpp)
// equals the dense int8 FC bit for bit: the kernels against the scalar dense gemv on seeded random
// filters with 1x16 block zeros and unstructured zeros at awkward sizes; the op (int8 with input
// zero points, biases, per-tensor and per-channel scales, activations, both roundings; hybrid
// symmetric and asymmetric) with SparseChoice::Sparse against Dense and the reference loops; and
// a pruned bench model quantized by the CLI, SparseMode::Sparse against Dense.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "support/bench_quantize.hpp"
#include "support/quant_program_builder.hpp"
#include "tflite/fixed_point.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/s8_sparse.hpp"
#include "tickinfer/tickinfer.hpp"

namespace {

using namespace tickinfer::tfl;
using namespace tickinfer::tfl::kernels;
using tickinfer::tfl::testing::ProgramBuilder;

bool have_avx2() { return tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2); }

// Row-major [rows x cols] in [w_min, 127]; then each (16-row group, column) block zeroed with
// probability block_p, each remaining weight with probability unstructured_p.
std::vector<int8_t> pruned_s8(std::mt19937& rng, int rows, int cols, double block_p, double unstructured_p,
                              int w_min = -127) {
  std::uniform_int_distribution<int> w8(w_min, 127);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<int8_t> w(static_cast<size_t>(rows) * cols);
  for (auto& v : w) v = static_cast<int8_t>(w8(rng));
  for (int g = 0; g * 16 < rows; ++g)
    for (int c = 0; c < cols; ++c)
      if (u(rng) < block_p)
        for (int r = g * 16; r < std::min(rows, g * 16 + 16); ++r) w[static_cast<size_t>(r) * cols + c] = 0;
  for (auto& v : w)
    if (u(rng) < unstructured_p) v = 0;
  return w;
}

std::vector<int32_t> dense_sums(const std::vector<int8_t>& w, int rows, int cols, const std::vector<int8_t>& x) {
  const int stride = s8_row_stride(cols);
  std::vector<int8_t> wp(static_cast<size_t>(rows) * stride), xp(static_cast<size_t>(stride), 0);
  pack_s8_rows(w.data(), rows, cols, wp.data());
  std::copy(x.begin(), x.end(), xp.begin());
  std::vector<int32_t> acc(static_cast<size_t>(rows));
  gemv_s8s8_s32_scalar(wp.data(), rows, stride, xp.data(), acc.data());
  return acc;
}

const int kSizes[][2] = {{1, 1}, {5, 3}, {16, 10}, {17, 37}, {33, 4}, {48, 129}, {130, 300}, {256, 10}, {7, 1000}};

TEST(QuantSparseFc, KernelsEqualDenseGemv) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> s8(-128, 127);
  for (const auto& sz : kSizes)
    for (double bp : {0.0, 0.5, 0.8, 0.95, 1.0})
      for (double up : {0.0, 0.3}) {
        const int rows = sz[0], cols = sz[1];
        const bool m128 = bp == 0.5;  // the scalar kernel takes -128 too
        const auto w = pruned_s8(rng, rows, cols, bp, up, m128 ? -128 : -127);
        std::vector<int8_t> x(static_cast<size_t>(cols));
        for (auto& v : x) v = static_cast<int8_t>(s8(rng));
        const auto want = dense_sums(w, rows, cols, x);
        const S8Sparse s = pack_s8_sparse(w.data(), rows, cols);
        const size_t n = static_cast<size_t>(s.groups) * kS8SparseRows;
        std::vector<GemvS8SparseFn> fns{gemv_s8_sparse_scalar};
#if defined(__x86_64__)
        if (have_avx2() && !m128) fns.push_back(gemv_s8_sparse_avx2);
#endif
        for (GemvS8SparseFn f : fns) {
          std::vector<int32_t> got(n, 12345);
          f(s.view(), x.data(), got.data());
          for (int r = 0; r < rows; ++r) ASSERT_EQ(got[r], want[r]) << rows << "x" << cols << " bp " << bp << " r " << r;
          for (size_t r = rows; r < n; ++r) ASSERT_EQ(got[r], 0);
        }
        const S8SparsityStats st = s8_sparsity_stats(w.data(), rows, cols);
        if (bp == 1.0) {
          EXPECT_EQ(st.zero_blocks, 1.0);
          EXPECT_EQ(s.quads(), 0u);
        }
      }
}

#if defined(__x86_64__)
TEST(QuantSparseFc, MinusOneTwentyEightGetsTheScalarKernel) {
  using tickinfer::kernels::Isa;
  EXPECT_EQ(gemv_s8_sparse_for(Isa::Avx2, true), &gemv_s8_sparse_scalar);
  EXPECT_EQ(gemv_s8_sparse_requant_single_for(Isa::Avx2, true), nullptr);
  EXPECT_EQ(gemv_s8_sparse_requant_single_for(Isa::Scalar, false), nullptr);
  if (have_avx2()) {
    EXPECT_EQ(gemv_s8_sparse_for(Isa::Avx2, false), &gemv_s8_sparse_avx2);
    EXPECT_EQ(gemv_s8_sparse_for(Isa::Avx512, false), &gemv_s8_sparse_avx2);  // the fallback rule
  }
}

TEST(QuantSparseFc, FusedRequantEqualsReference) {
  if (!have_avx2()) GTEST_SKIP() << "CPU lacks AVX2";
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> s8(-128, 127), zp(-128, 127);
  std::uniform_int_distribution<int32_t> bias_d(-30000, 30000);
  std::uniform_real_distribution<double> scale(1e-6, 0.9);
  for (int trial = 0; trial < 120; ++trial) {
    const int rows = 1 + (trial * 13) % 70, cols = 1 + (trial * 7) % 90;
    const auto w = pruned_s8(rng, rows, cols, 0.8, 0.1);
    std::vector<int8_t> x(static_cast<size_t>(cols));
    for (auto& v : x) v = static_cast<int8_t>(s8(rng));
    std::vector<int32_t> bias(rows), mult(rows), shift(rows);
    for (int r = 0; r < rows; ++r) {
      bias[r] = bias_d(rng);
      const double m = trial % 2 ? scale(rng) * 0.5 : scale(rng) * 3.0;  // high word, then general
      const QuantizedMultiplier q = quantize_multiplier(m, Rounding::Single);
      mult[r] = q.multiplier;
      shift[r] = q.shift;
    }
    const int32_t z = zp(rng), lo = trial % 3 == 0 ? z : -128;
    RequantParams p;
    p.bias = bias.data();
    p.multiplier = mult.data();
    p.shift = shift.data();
    p.output_zero_point = z;
    p.act_min = lo;
    std::vector<int8_t> want(rows + 8, 0x5A), got(rows + 8, 0x5A);
    const auto acc = dense_sums(w, rows, cols, x);
    requantize_s32_to_s8_scalar<Rounding::Single>(acc.data(), rows, p, want.data());
    const S8Sparse s = pack_s8_sparse(w.data(), rows, cols);
    const BlockRequantSingle q = pack_block_requant_single(rows, bias.data(), mult.data(), shift.data(), z, lo, 127);
    gemv_s8_sparse_requant_single_avx2(s.view(), x.data(), q, got.data());
    ASSERT_EQ(got, want) << "trial " << trial << " rows " << rows << " cols " << cols;
  }
}
#endif

// One FC op on a pruned filter, prepared for isa under `mode`; returns the outputs as bytes.
std::vector<uint8_t> run_fc(bool hybrid, unsigned seed, int batch, int depth, int units, bool per_channel,
                            const char* isa, SparseChoice mode, Rounding rounding, std::string* describe = nullptr) {
  std::mt19937 rng(seed);
  ProgramBuilder b;
  b.options.sparse = mode;
  std::uniform_real_distribution<float> u(0, 1);
  const int in = hybrid ? b.tensor("x", DType::F32, {batch, depth})
                        : b.tensor("x", DType::I8, {batch, depth}, {0.05f}, {static_cast<int64_t>(seed % 40) - 20});
  std::vector<float> scales(per_channel ? static_cast<size_t>(units) : 1u);
  for (auto& s : scales) s = 0.001f + 0.01f * u(rng);
  const int f = b.constant("w", DType::I8, {units, depth}, pruned_s8(rng, units, depth, 0.8, seed % 2 ? 0.2 : 0.0),
                           scales, std::vector<int64_t>(scales.size(), 0), 0);
  int bias;
  if (hybrid) {
    std::vector<float> bv(static_cast<size_t>(units));
    for (auto& v : bv) v = u(rng) - 0.5f;
    bias = b.constant("b", DType::F32, {units}, bv);
  } else {
    std::vector<int32_t> bv(static_cast<size_t>(units));
    for (auto& v : bv) v = static_cast<int32_t>(rng() % 20001) - 10000;
    bias = b.constant("b", DType::I32, {units}, bv);
  }
  const int out = hybrid ? b.tensor("y", DType::F32, {batch, units})
                         : b.tensor("y", DType::I8, {batch, units}, {0.02f + 0.1f * u(rng)}, {static_cast<int64_t>(seed % 7) - 3});
  Op& o = b.op(OpCode::FullyConnected, {in, f, seed % 4 == 3 ? -1 : bias}, {out});
  o.options.asymmetric_quantize_inputs = hybrid && seed % 2;
  o.options.activation = seed % 3 == 0 ? FusedActivation::Relu : seed % 3 == 1 ? FusedActivation::Relu6 : FusedActivation::None;
  auto op = b.prepare(0, isa, rounding);
  if (describe) *describe = op->describe();
  const size_t n_in = static_cast<size_t>(batch) * depth, n_out = static_cast<size_t>(batch) * units;
  std::vector<uint8_t> x(n_in * (hybrid ? 4 : 1)), y(n_out * (hybrid ? 4 : 1));
  if (hybrid) {
    auto* xf = reinterpret_cast<float*>(x.data());
    for (size_t i = 0; i < n_in; ++i) xf[i] = 6.0f * (u(rng) - 0.5f);
  } else {
    for (auto& v : x) v = static_cast<uint8_t>(rng());
  }
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  return y;
}

const int kFcShapes[][3] = {{1, 1, 1}, {1, 10, 5}, {1, 17, 16}, {2, 31, 17}, {1, 10, 256}, {3, 33, 65},
                            {1, 256, 128}, {1, 100, 129}, {2, 7, 3}};

TEST(QuantSparseFc, OpSparseEqualsDenseAndReference) {
  if (!have_avx2()) GTEST_SKIP() << "CPU lacks AVX2";
  unsigned seed = 300;
  for (const auto& s : kFcShapes)
    for (bool hybrid : {false, true})
      for (bool pc : {false, true})
        for (Rounding r : {Rounding::Single, Rounding::Double}) {
          ++seed;
          std::string d;
          const auto ref = run_fc(hybrid, seed, s[0], s[1], s[2], pc, "scalar", SparseChoice::Dense, r);
          const auto dense = run_fc(hybrid, seed, s[0], s[1], s[2], pc, "avx2", SparseChoice::Dense, r);
          const auto sparse = run_fc(hybrid, seed, s[0], s[1], s[2], pc, "avx2", SparseChoice::Sparse, r, &d);
          const auto autom = run_fc(hybrid, seed, s[0], s[1], s[2], pc, "avx2", SparseChoice::Auto, r);
          const std::string what = "seed " + std::to_string(seed) + " shape " + std::to_string(s[0]) + "x" +
                                   std::to_string(s[1]) + "->" + std::to_string(s[2]) + " hybrid " + std::to_string(hybrid);
          // (The smallest filters may hold no zero block at all.)
          if (s[1] * s[2] >= 64) {
            EXPECT_NE(d.find("-> sparse 1x16"), std::string::npos) << what << ": " << d;
          }
          if (!hybrid) {  // hybrid: the reference's float epilogue may round apart from the vector one
            ASSERT_EQ(dense, ref) << what;
          }
          ASSERT_EQ(sparse, dense) << what;
          ASSERT_EQ(autom, dense) << what;
        }
}

TEST(QuantSparseFc, DenseModeAndUnprunedStayDense) {
  std::string d;
  run_fc(false, 5, 1, 64, 32, false, "avx2", SparseChoice::Dense, Rounding::Single, &d);
  EXPECT_EQ(d.find("sparse 1x16"), std::string::npos) << d;
}

// A real pruned model: the CLI's int8 .tkq, compiled with the sparse kernels forced and with none.
TEST(QuantSparseFc, PrunedBenchModelSparseEqualsDense) {
  if (!tickinfer::test::cli_built()) GTEST_SKIP() << "the CLI is not built";
  const std::string tkq = tickinfer::test::quantize_bench_model("mlp_large_pruned80", "int8", "quant_sparse_fc_test");
  ASSERT_FALSE(tkq.empty()) << "tickinfer quantize failed on mlp_large_pruned80";
  const tickinfer::Model model = tickinfer::Model::load(tkq);
  tickinfer::CompileOptions sparse_o, dense_o;
  sparse_o.sparse = tickinfer::SparseMode::Sparse;
  dense_o.sparse = tickinfer::SparseMode::Dense;
  tickinfer::Plan sparse = tickinfer::compile(model, sparse_o), dense = tickinfer::compile(model, dense_o);
  if (have_avx2()) {
    EXPECT_NE(sparse.describe().find("-> sparse 1x16"), std::string::npos) << sparse.describe();
  }
  EXPECT_EQ(dense.describe().find("sparse 1x16"), std::string::npos) << dense.describe();
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.0f, 1.5f);
  std::vector<float> x(sparse.input_size(0)), ys(sparse.output_size(0)), yd(dense.output_size(0));
  for (int t = 0; t < 200; ++t) {
    for (float& v : x) v = n(rng);
    sparse.run(x.data(), ys.data());
    dense.run(x.data(), yd.data());
    ASSERT_EQ(0, std::memcmp(ys.data(), yd.data(), ys.size() * sizeof(float))) << "input " << t;
  }
  std::filesystem::remove(tkq);
}

}  // namespace
