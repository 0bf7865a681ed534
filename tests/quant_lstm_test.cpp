// UNIDIRECTIONAL_SEQUENCE_LSTM against TFLite's reference kernels (fixtures from
// tools/make_lstm_fixtures.py): float within 1e-5 of max |y|; hybrid bit for bit (the input
// quantization and the gate activations are TFLite's own arithmetic, docs/quant-lstm.md); int8
// (8x8_16) bit for bit in both rounding modes' builds where the fixture applies; on every ISA.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "quant_lstm_fixture.hpp"
#include "tickinfer/error.hpp"

namespace {

using namespace tickinfer::tfl;
using lstm_fixture::LstmFixture;

std::vector<const char*> isas() {
  std::vector<const char*> r = {"scalar", "portable"};
  if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx2)) r.push_back("avx2");
  if (tickinfer::kernels::isa_supported(tickinfer::kernels::Isa::Avx512)) r.push_back("avx512");
  return r;
}

// max |got - want| / max |want| over all samples.
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double max_ref = 0.0, max_diff = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(want[i])));
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(got[i]) - want[i]));
  }
  return max_diff / std::max(max_ref, 1e-30);
}

void expect_close(const std::string& name, double tolerance) {
  LstmFixture f = lstm_fixture::load(name);
  const std::vector<float> want = lstm_fixture::as_floats(f.outputs);
  for (const char* isa : isas()) {
    InterpreterOptions options;
    auto op = lstm_fixture::prepare(f.program, options, isa);
    const std::vector<float> got = lstm_fixture::as_floats(lstm_fixture::run_all(f, *op));
    ASSERT_EQ(got.size(), want.size());
    const double err = relative_error(got, want);
    std::printf("%s isa %s: relative error %.3g\n", name.c_str(), isa, err);
    EXPECT_LE(err, tolerance) << name << " isa " << isa << ": " << op->describe();
  }
}

TEST(QuantLstmFloat, MatchesTfliteOneLayerLastStep) { expect_close("small_float", 1e-5); }
TEST(QuantLstmFloat, MatchesTfliteReturnSequences) { expect_close("small_seq_float", 1e-5); }
TEST(QuantLstmFloat, MatchesTfliteLongSequence) { expect_close("big_float", 1e-5); }
TEST(QuantLstmFloat, MatchesTfliteWideInput) { expect_close("wide_float", 1e-5); }

}  // namespace

namespace {

// Number of output bytes that differ from TFLite's; prints the first few.
size_t int8_mismatches(const std::string& name, Rounding rounding, const char* isa, int* max_lsb) {
  LstmFixture f = lstm_fixture::load(name);
  InterpreterOptions options;
  options.rounding = rounding;
  auto op = lstm_fixture::prepare(f.program, options, isa);
  const std::vector<uint8_t> got = lstm_fixture::run_all(f, *op);
  size_t bad = 0;
  *max_lsb = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const int d = std::abs(static_cast<int>(static_cast<int8_t>(got[i])) - static_cast<int8_t>(f.outputs[i]));
    if (d == 0) continue;
    if (bad < 5) {
      std::printf("%s %s: byte %zu got %d want %d\n", name.c_str(), isa, i, static_cast<int8_t>(got[i]),
                  static_cast<int8_t>(f.outputs[i]));
    }
    ++bad;
    *max_lsb = std::max(*max_lsb, d);
  }
  return bad;
}

// Both rounding modes: the matmuls round twice in either (as TFLite's LSTM does), and the
// elementwise requantizations agree with TFLite's PyPI build (single) and a default build (double).
void expect_bit_exact(const std::string& name) {
  for (const char* isa : isas()) {
    for (Rounding r : {Rounding::Double, Rounding::Single}) {
      int max_lsb = 0;
      EXPECT_EQ(int8_mismatches(name, r, isa, &max_lsb), 0u)
          << name << " isa " << isa << (r == Rounding::Double ? " double" : " single") << " rounding";
    }
  }
}

TEST(QuantLstmInt8, BitExactOneLayerLastStep) { expect_bit_exact("small_int8"); }
TEST(QuantLstmInt8, BitExactReturnSequences) { expect_bit_exact("small_seq_int8"); }
TEST(QuantLstmInt8, BitExactLongSequence) { expect_bit_exact("big_int8"); }
TEST(QuantLstmInt8, BitExactLongSequenceAllSteps) { expect_bit_exact("big_seq_int8"); }

}  // namespace

namespace {

TEST(QuantLstmHybrid, MatchesTfliteDynamicRange) { expect_close("wide_dynamic", 0.0); }
TEST(QuantLstmHybrid, MatchesTfliteDynamicRangeAllSteps) { expect_close("wide_seq_dynamic", 0.0); }

}  // namespace

namespace {

// bf16 weights: the fixture's float model has bf16-rounded weights, so TFLite's float output is
// exactly what fp32 math on the widened bf16 weights computes.
void expect_bf16_close(const std::string& name) {
  LstmFixture f = lstm_fixture::load(name);
  ASSERT_TRUE(f.bf16_weights);
  lstm_fixture::make_weights_bf16(f);
  const std::vector<float> want = lstm_fixture::as_floats(f.outputs);
  for (const char* isa : isas()) {
    InterpreterOptions options;
    auto op = lstm_fixture::prepare(f.program, options, isa);
    EXPECT_NE(op->describe().find("bf16"), std::string::npos) << op->describe();
    const double err = relative_error(lstm_fixture::as_floats(lstm_fixture::run_all(f, *op)), want);
    std::printf("%s isa %s: relative error %.3g\n", name.c_str(), isa, err);
    EXPECT_LE(err, 1e-5) << name << " isa " << isa;
  }
}

TEST(QuantLstmBf16, MatchesTfliteOnBf16Weights) { expect_bf16_close("small_seq_bf16"); }
TEST(QuantLstmBf16, MatchesTfliteOnBf16WeightsLongSequence) { expect_bf16_close("big_bf16"); }

}  // namespace

// Operand configurations the converter never emits for Keras (tools/make_lstm_fixtures.py edits a
// converted model and lets TFLite run it): CIFG, peepholes, projection with clipping, layer norm.
namespace {

TEST(QuantLstmVariants, FloatCifg) { expect_close("cifg_float", 1e-5); }
TEST(QuantLstmVariants, FloatPeepholeWithCellClip) { expect_close("peephole_float", 1e-5); }
TEST(QuantLstmVariants, FloatProjectionWithClip) { expect_close("projection_float", 1e-5); }
TEST(QuantLstmVariants, FloatLayerNorm) { expect_close("layer_norm_float", 1e-5); }
TEST(QuantLstmVariants, FloatEverything) { expect_close("all_float", 1e-5); }
TEST(QuantLstmVariants, HybridEverything) { expect_close("all_dynamic", 0.0); }
TEST(QuantLstmVariants, HybridSymmetricInputsWithPeephole) { expect_close("symmetric_dynamic", 0.0); }
TEST(QuantLstmVariants, Int8Cifg) { expect_bit_exact("cifg_int8"); }
TEST(QuantLstmVariants, Int8Peephole) { expect_bit_exact("peephole_int8"); }
TEST(QuantLstmVariants, Int8ProjectionWithClip) { expect_bit_exact("projection_int8"); }

}  // namespace
