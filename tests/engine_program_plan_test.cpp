// A Plan over a tensor program does an opening QUANTIZE and a closing DEQUANTIZE itself (while it
// copies inputs and outputs) instead of running those ops: its outputs must equal, bit for bit,
// those of the interpreter running every op, on inputs that stress the conversions (rounding
// ties, values far outside the int8 range, NaN, infinities) as well as ordinary ones. A program
// whose first op's input is read again later is not folded, and still agrees.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "tflite/interpreter.hpp"
#include "support/quant_program_builder.hpp"
#include "tickinfer/tickinfer.hpp"

namespace {

using namespace tickinfer;
using namespace tickinfer::tfl;
using tickinfer::tfl::testing::ProgramBuilder;

constexpr int kIn = 12, kOut = 7;
constexpr float kInScale = 0.03f;
constexpr int64_t kInZp = -5;

// x -> QUANTIZE -> FULLY_CONNECTED int8 (per-channel, relu) -> DEQUANTIZE -> y. With
// `reuse_input`, a second output reads x again (an ADD of x with itself, before the FC), so the
// QUANTIZE cannot be folded.
std::shared_ptr<Program> make_program(bool reuse_input) {
  ProgramBuilder b;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> w8(-127, 127);
  std::vector<int8_t> w(static_cast<size_t>(kIn * kOut));
  for (auto& v : w) v = static_cast<int8_t>(w8(rng));
  std::vector<int32_t> bias(kOut);
  for (int o = 0; o < kOut; ++o) bias[static_cast<size_t>(o)] = (o - 3) * 200;
  std::vector<float> wscale;
  for (int o = 0; o < kOut; ++o) wscale.push_back(0.002f + 0.0005f * static_cast<float>(o));
  std::vector<float> bscale;
  for (float s : wscale) bscale.push_back(s * kInScale);
  const int x = b.tensor("x", DType::F32, {1, kIn});
  const int q = b.tensor("q", DType::I8, {1, kIn}, {kInScale}, {kInZp});
  const int wt = b.constant("w", DType::I8, {kOut, kIn}, w, wscale, std::vector<int64_t>(kOut, 0), 0);
  const int bt = b.constant("b", DType::I32, {kOut}, bias, bscale, std::vector<int64_t>(kOut, 0), 0);
  const int h = b.tensor("h", DType::I8, {1, kOut}, {0.05f}, {-128});
  const int y = b.tensor("y", DType::F32, {1, kOut});
  b.op(OpCode::Quantize, {x}, {q});
  b.program.inputs = {x};
  b.program.outputs = {y};
  if (reuse_input) {
    const int x2 = b.tensor("x2", DType::F32, {1, kIn});
    b.op(OpCode::Add, {x, x}, {x2});
    b.program.outputs.push_back(x2);
  }
  b.op(OpCode::FullyConnected, {q, wt, bt}, {h}).options.activation = FusedActivation::Relu;
  b.op(OpCode::Dequantize, {h}, {y});
  b.program.name = "fold_test";
  b.program.source_format = "test";
  return std::make_shared<Program>(b.program);
}

std::vector<std::vector<float>> stress_inputs() {
  std::vector<std::vector<float>> rows;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (int r = 0; r < 500; ++r) {
    std::vector<float> v(kIn);
    for (auto& e : v) e = normal(rng);
    rows.push_back(v);
  }
  std::vector<float> ties(kIn), edges(kIn);
  for (int i = 0; i < kIn; ++i) ties[static_cast<size_t>(i)] = (static_cast<float>(i) - 6.0f + 0.5f) * kInScale;
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 1e30f, -1e30f, 0.0f, -0.0f,
                            127.5f * kInScale, -128.5f * kInScale, 3.8f, -3.9f, 1e-30f};
  for (int i = 0; i < kIn; ++i) edges[static_cast<size_t>(i)] = specials[i];
  rows.push_back(ties);
  rows.push_back(edges);
  return rows;
}

void expect_plan_equals_interpreter(bool reuse_input, bool expect_fold_first) {
  const std::shared_ptr<Program> program = make_program(reuse_input);
  Plan plan = compile(Model::from_program(program));
  EXPECT_EQ(plan.describe().find("the first QUANTIZE") != std::string::npos, expect_fold_first) << plan.describe();
  EXPECT_NE(plan.describe().find("the last DEQUANTIZE"), std::string::npos) << plan.describe();
  Interpreter reference(program);
  for (const auto& x : stress_inputs()) {
    std::vector<float> got(kOut), got2(kIn);
    std::vector<float*> outs = {got.data(), got2.data()};
    const float* ins[] = {x.data()};
    plan.run(ins, outs.data());
    std::memcpy(reference.input_data(0), x.data(), sizeof(float) * kIn);
    reference.invoke();
    const auto* want = static_cast<const float*>(reference.output_data(0));
    ASSERT_EQ(std::memcmp(got.data(), want, sizeof(float) * kOut), 0) << "first input " << x[0];
  }
}

TEST(EngineProgramPlan, FoldedEdgeConversionsEqualTheOpsBitForBit) { expect_plan_equals_interpreter(false, true); }

TEST(EngineProgramPlan, AnInputReadAgainIsNotFoldedAndStillAgrees) { expect_plan_equals_interpreter(true, false); }

}  // namespace
