// The interpreter's block-sparse float FULLY_CONNECTED (tflite/kernels/gemv_sparse_sequential.hpp,
// ops/fully_connected_float_sparse.cpp) equals TFLite's reference loop bit for bit: each kernel
// variant against the plain loop over the dense filter (total += x * w, k ascending, one rounding
// per product and per sum) on seeded filters with 1x16 block zeros and unstructured zeros, inputs
// with exact and negative zeros, every panel-group size; a row holding Inf or NaN is declined
// untouched; and the op, under SparseChoice::Sparse and Auto, against Dense and the scalar
// reference op, a row with Inf included (the reference's NaNs, not the skipped zeros' numbers).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/sparse_panels.hpp"
#include "support/quant_program_builder.hpp"
#include "tflite/kernels/gemv_sparse_sequential.hpp"

namespace {

using namespace tickinfer::tfl;
using tickinfer::kernels::Isa;
using tickinfer::tfl::testing::ProgramBuilder;

// Row-major filter [units x depth] (TFLite's layout); each (input column, 16-unit group) block
// zeroed with probability block_p, each remaining weight with probability unstructured_p.
std::vector<float> pruned_filter(std::mt19937& rng, int units, int depth, double block_p, double unstructured_p) {
  std::uniform_real_distribution<float> w(-1.5f, 1.5f);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<float> f(static_cast<size_t>(units) * depth);
  for (auto& v : f) v = w(rng);
  for (int g = 0; g * 16 < units; ++g)
    for (int d = 0; d < depth; ++d)
      if (u(rng) < block_p)
        for (int o = g * 16; o < std::min(units, g * 16 + 16); ++o) f[static_cast<size_t>(o) * depth + d] = 0.0f;
  for (auto& v : f)
    if (u(rng) < unstructured_p) v = 0.0f;
  return f;
}

std::vector<float> transposed(const std::vector<float>& f, int units, int depth) {  // W[k][n]
  std::vector<float> wt(f.size());
  for (int n = 0; n < units; ++n)
    for (int k = 0; k < depth; ++k) wt[static_cast<size_t>(k) * units + n] = f[static_cast<size_t>(n) * depth + k];
  return wt;
}

float reference(const float* x, const float* f, int depth, int o, const float* init, float lo, float hi) {
  volatile float total = 0.0f;  // volatile: one rounding per product and per sum, whatever the flags
  for (int d = 0; d < depth; ++d) {
    volatile float prod = x[d] * f[static_cast<size_t>(o) * depth + d];
    total = total + prod;
  }
  const float v = (init ? init[o] : 0.0f) + total;
  return std::min(std::max(v, lo), hi);
}

std::vector<kernels::GemvSparseSequentialFn> variants() {
  std::vector<kernels::GemvSparseSequentialFn> v{&kernels::scalar::gemv_sparse_sequential};
#if defined(__x86_64__)
  if (tickinfer::kernels::isa_supported(Isa::Avx2)) v.push_back(kernels::gemv_sparse_sequential_for(Isa::Avx2));
#endif
  return v;
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

TEST(QuantSparseFloatFc, KernelsEqualTheReferenceLoopBitForBit) {
  std::mt19937 rng(41);
  std::normal_distribution<float> xd(0.0f, 2.0f);
  const int kShapes[][2] = {{5, 1}, {16, 3}, {17, 10}, {33, 37}, {64, 64}, {65, 129}, {100, 7}, {128, 256}, {200, 50}};
  unsigned trial = 0;
  for (const auto& s : kShapes)
    for (double bp : {0.0, 0.5, 0.8, 0.97, 1.0})
      for (double up : {0.0, 0.3}) {
        ++trial;
        const int units = s[0], depth = s[1];
        const auto f = pruned_filter(rng, units, depth, bp, up);
        const auto wt = transposed(f, units, depth);
        const tickinfer::kernels::SparsePanels sp = tickinfer::kernels::pack_sparse_panels(wt.data(), depth, units);
        std::vector<float> x(static_cast<size_t>(depth)), init(static_cast<size_t>(units));
        for (auto& v : x) v = xd(rng);
        if (depth > 2) x[1] = 0.0f, x[2] = -0.0f;  // zeros times kept weights: signed zeros in the sums
        for (auto& v : init) v = xd(rng);
        const bool with_init = trial % 2 == 0;
        const float lo = trial % 3 == 0 ? -1.0f : -std::numeric_limits<float>::infinity();
        const float hi = trial % 3 == 0 ? 2.0f : std::numeric_limits<float>::infinity();
        for (auto fn : variants()) {
          std::vector<float> y(static_cast<size_t>(units) + 3, -777.0f);
          ASSERT_TRUE(fn(x.data(), sp.view(), with_init ? init.data() : nullptr, y.data(), lo, hi));
          for (int o = 0; o < units; ++o) {
            const float want = reference(x.data(), f.data(), depth, o, with_init ? init.data() : nullptr, lo, hi);
            ASSERT_EQ(bits(y[static_cast<size_t>(o)]), bits(want))
                << units << "x" << depth << " bp " << bp << " up " << up << " o " << o << ": " << y[o] << " vs " << want;
          }
          for (size_t g = static_cast<size_t>(units); g < y.size(); ++g) ASSERT_EQ(y[g], -777.0f) << "wrote past N";
        }
      }
}

TEST(QuantSparseFloatFc, ARowWithInfOrNanIsDeclinedUntouched) {
  std::mt19937 rng(5);
  const int units = 48, depth = 21;
  const auto f = pruned_filter(rng, units, depth, 0.8, 0.0);
  const auto wt = transposed(f, units, depth);
  const auto sp = tickinfer::kernels::pack_sparse_panels(wt.data(), depth, units);
  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()})
    for (int at : {0, 7, 8, 20}) {  // in the vector part and in the tail of the check
      std::vector<float> x(static_cast<size_t>(depth), 0.5f), y(static_cast<size_t>(units), -777.0f);
      x[static_cast<size_t>(at)] = bad;
      for (auto fn : variants()) {
        EXPECT_FALSE(fn(x.data(), sp.view(), nullptr, y.data(), -1e30f, 1e30f)) << bad << " at " << at;
        for (float v : y) ASSERT_EQ(v, -777.0f);
      }
    }
}

// One float FC op on a pruned filter; returns the outputs' bits. Row 1 of a batch of 3 holds an
// Inf when `with_inf`.
std::vector<uint32_t> run_fc(unsigned seed, int batch, int depth, int units, const char* isa, SparseChoice mode,
                             bool with_inf, std::string* describe = nullptr) {
  std::mt19937 rng(seed);
  ProgramBuilder b;
  b.options.sparse = mode;
  std::normal_distribution<float> n(0.0f, 1.0f);
  const int in = b.tensor("x", DType::F32, {batch, depth});
  const int f = b.constant("w", DType::F32, {units, depth}, pruned_filter(rng, units, depth, 0.8, seed % 2 ? 0.2 : 0.0));
  std::vector<float> bv(static_cast<size_t>(units));
  for (auto& v : bv) v = n(rng);
  const int bias = b.constant("b", DType::F32, {units}, bv);
  const int out = b.tensor("y", DType::F32, {batch, units});
  Op& o = b.op(OpCode::FullyConnected, {in, f, seed % 4 == 3 ? -1 : bias}, {out});
  o.options.activation = seed % 3 == 0 ? FusedActivation::Relu : FusedActivation::None;
  auto op = b.prepare(0, isa);
  if (describe) *describe = op->describe();
  std::vector<float> x(static_cast<size_t>(batch) * depth), y(static_cast<size_t>(batch) * units);
  for (auto& v : x) v = n(rng);
  if (with_inf && batch > 1) x[static_cast<size_t>(depth) + depth / 2] = std::numeric_limits<float>::infinity();
  TensorMemory m = b.memory();
  m.addr[in] = reinterpret_cast<uint8_t*>(x.data());
  m.addr[out] = reinterpret_cast<uint8_t*>(y.data());
  op->eval(m);
  std::vector<uint32_t> out_bits;
  for (float v : y) out_bits.push_back(bits(v));
  return out_bits;
}

TEST(QuantSparseFloatFc, OpSparseEqualsDenseAndTheReferenceOp) {
  const int kShapes[][3] = {{1, 10, 256}, {1, 256, 128}, {3, 33, 65}, {1, 128, 64}, {3, 64, 17}, {2, 100, 129}};
  const char* isas[] = {"portable", "avx2"};
  unsigned seed = 70;
  for (const auto& s : kShapes)
    for (bool with_inf : {false, true})
      for (const char* isa : isas) {
        if (std::string(isa) == "avx2" && !tickinfer::kernels::isa_supported(Isa::Avx2)) continue;
        ++seed;
        std::string d;
        const auto ref = run_fc(seed, s[0], s[1], s[2], "scalar", SparseChoice::Dense, with_inf);
        const auto dense = run_fc(seed, s[0], s[1], s[2], isa, SparseChoice::Dense, with_inf);
        const auto sparse = run_fc(seed, s[0], s[1], s[2], isa, SparseChoice::Sparse, with_inf, &d);
        const auto autom = run_fc(seed, s[0], s[1], s[2], isa, SparseChoice::Auto, with_inf);
        const std::string what = std::string(isa) + " seed " + std::to_string(seed) + " " + std::to_string(s[0]) + "x" +
                                 std::to_string(s[1]) + "->" + std::to_string(s[2]) + (with_inf ? " with Inf" : "");
        EXPECT_NE(d.find("block-sparse sequential"), std::string::npos) << what << ": " << d;
        ASSERT_EQ(dense, ref) << what;
        ASSERT_EQ(sparse, ref) << what;
        ASSERT_EQ(autom, ref) << what;
      }
}

TEST(QuantSparseFloatFc, DenseModeScalarAndUnprunedStayDense) {
  std::string d;
  run_fc(3, 1, 64, 32, "avx2", SparseChoice::Dense, false, &d);
  EXPECT_EQ(d.find("sparse"), std::string::npos) << d;
  run_fc(3, 1, 64, 32, "scalar", SparseChoice::Sparse, false, &d);  // the reference stays the reference
  EXPECT_EQ(d.find("sparse"), std::string::npos) << d;
}

}  // namespace
