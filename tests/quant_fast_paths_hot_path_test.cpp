// eval() of the fast FULLY_CONNECTED / CONV_2D paths (bf16 gemv, hybrid quad blocks, float conv
// 4-pixel blocks with a partial last group, hybrid conv) allocates nothing and takes no lock.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "support/counting_allocator.hpp"
#include "support/quant_program_builder.hpp"

using namespace tickinfer::tfl;
using tickinfer::tfl::testing::ProgramBuilder;

namespace {

// Ten evals of every op, counted: no allocation, no lock.
void expect_evals_allocate_and_lock_nothing(std::vector<std::unique_ptr<PreparedOp>>& ops, const TensorMemory& m,
                                            const char* isa) {
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  for (int it = 0; it < 10; ++it)
    for (auto& op : ops) op->eval(m);
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0) << isa;
  EXPECT_EQ(g_locks.load(), 0) << isa;
}

}  // namespace

TEST(QuantFastPathsHotPath, EvalAllocatesAndLocksNothing) {
  for (const char* isa : {"avx2", "portable", "scalar"}) {
    ProgramBuilder b;
    const int x = b.tensor("x", DType::F32, {1, 24});
    const int wb = b.constant("wb", DType::BF16, {20, 24}, std::vector<uint16_t>(480, 0x3c00));
    const int wq = b.constant("wq", DType::I8, {20, 24}, std::vector<int8_t>(480, 5), {0.01f}, {0});
    const int y1 = b.tensor("y1", DType::F32, {1, 20});
    const int y2 = b.tensor("y2", DType::F32, {1, 20});
    b.op(OpCode::FullyConnected, {x, wb, -1}, {y1});
    b.op(OpCode::FullyConnected, {x, wq, -1}, {y2});
    // 1 x 7 x 3 image (7 pixels: one group of 4 and a partial group), 3x1 filter, SAME padding.
    const int img = b.tensor("img", DType::F32, {1, 7, 1, 3});
    const int fc = b.constant("fc", DType::F32, {9, 3, 1, 3}, std::vector<float>(81, 0.25f));
    const int fq = b.constant("fq", DType::I8, {9, 3, 1, 3}, std::vector<int8_t>(81, 3), {0.02f}, {0});
    const int c1 = b.tensor("c1", DType::F32, {1, 7, 1, 9});
    const int c2 = b.tensor("c2", DType::F32, {1, 7, 1, 9});
    b.op(OpCode::Conv2D, {img, fc, -1}, {c1}).options.padding = PaddingMode::Same;
    b.op(OpCode::Conv2D, {img, fq, -1}, {c2}).options.padding = PaddingMode::Same;
    std::vector<std::unique_ptr<PreparedOp>> ops;
    for (size_t i = 0; i < b.program.ops.size(); ++i) ops.push_back(b.prepare(i, isa));
    std::vector<float> xb(24, 0.5f), y1b(20), y2b(20), imgb(21, 1.0f), c1b(63), c2b(63);
    TensorMemory m = b.memory();
    m.addr[x] = xb.data();
    m.addr[y1] = y1b.data();
    m.addr[y2] = y2b.data();
    m.addr[img] = imgb.data();
    m.addr[c1] = c1b.data();
    m.addr[c2] = c2b.data();
    expect_evals_allocate_and_lock_nothing(ops, m, isa);
    // Hand-derived values: bf16 0x3c00 = 2^-7; 24 inputs of 0.5 -> 24 * 0.5 / 128 = 0.09375.
    EXPECT_EQ(y1b[0], 0.09375f) << isa;
    // Float conv, middle pixel: 3 taps x 3 channels x 1.0 x 0.25 = 2.25; edge pixel (one tap
    // outside, zero): 1.5.
    EXPECT_EQ(c1b[9 * 3], 2.25f) << isa;
    EXPECT_EQ(c1b[0], 1.5f) << isa;
    EXPECT_EQ(c1b[9 * 6 + 8], 1.5f) << isa;
  }
}

// The block-sparse int8, hybrid and float FULLY_CONNECTED (a filter pruned in 1x16 blocks, 3 of 4
// blocks zero; the sparse form forced, fused requantization and not; the float one over two rows,
// the second holding an Inf, which goes through the reference loop).
TEST(QuantFastPathsHotPath, SparseFcEvalAllocatesAndLocksNothing) {
  for (const char* isa : {"avx2", "portable", "scalar"}) {
    ProgramBuilder b;
    b.options.sparse = SparseChoice::Sparse;
    std::vector<int8_t> w(40 * 24, 0);
    for (int r = 0; r < 40; ++r)
      for (int c = 0; c < 24; c += 4) w[static_cast<size_t>(r) * 24 + c] = static_cast<int8_t>(r % 7 - 3);
    const int xq = b.tensor("xq", DType::I8, {1, 24}, {0.05f}, {3});
    const int xf = b.tensor("xf", DType::F32, {1, 24});
    const int wq = b.constant("wq", DType::I8, {40, 24}, w, {0.01f}, {0});
    const int y1 = b.tensor("y1", DType::I8, {1, 40}, {0.1f}, {-2});
    const int y2 = b.tensor("y2", DType::F32, {1, 40});
    b.op(OpCode::FullyConnected, {xq, wq, -1}, {y1});
    b.op(OpCode::FullyConnected, {xf, wq, -1}, {y2});
    std::vector<float> wfv(w.begin(), w.end());
    for (float& v : wfv) v *= 0.25f;
    const int xf2 = b.tensor("xf2", DType::F32, {2, 24});
    const int wf = b.constant("wf", DType::F32, {40, 24}, wfv);
    const int y3 = b.tensor("y3", DType::F32, {2, 40});
    b.op(OpCode::FullyConnected, {xf2, wf, -1}, {y3});
    std::vector<std::unique_ptr<PreparedOp>> ops;
    for (Rounding r : {Rounding::Single, Rounding::Double})
      for (size_t i = 0; i < b.program.ops.size(); ++i) ops.push_back(b.prepare(i, isa, r));
    if (std::string(isa) != "scalar") {
      EXPECT_NE(ops[2]->describe().find("block-sparse sequential"), std::string::npos) << ops[2]->describe();
    }
    if (std::string(isa) == "avx2" && tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) {
      EXPECT_NE(ops[0]->describe().find("-> sparse 1x16"), std::string::npos) << ops[0]->describe();
      EXPECT_NE(ops[1]->describe().find("-> sparse 1x16"), std::string::npos) << ops[1]->describe();
    }
    std::vector<int8_t> xqb(24, 9), y1b(40);
    std::vector<float> xfb(24, 0.5f), y2b(40), xf2b(48, 0.5f), y3b(80);
    xf2b[24 + 5] = std::numeric_limits<float>::infinity();
    TensorMemory m = b.memory();
    m.addr[xq] = xqb.data();
    m.addr[xf] = xfb.data();
    m.addr[y1] = y1b.data();
    m.addr[y2] = y2b.data();
    m.addr[xf2] = xf2b.data();
    m.addr[y3] = y3b.data();
    expect_evals_allocate_and_lock_nothing(ops, m, isa);
    // Hand-derived: row r has weight (r % 7 - 3) / 4 at 6 of 24 inputs, each 0.5; the second row's
    // Inf meets a zero weight of every row (column 5): NaN, as TFLite's loop gives.
    for (int r = 0; r < 40; ++r) {
      EXPECT_EQ(y3b[r], 6 * 0.5f * static_cast<float>(r % 7 - 3) * 0.25f) << isa << " row " << r;
      EXPECT_TRUE(std::isnan(y3b[40 + r])) << isa << " row " << r << ": " << y3b[40 + r];
    }
  }
}
