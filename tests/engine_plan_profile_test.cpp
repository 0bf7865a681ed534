// Plan::profile (tickinfer.hpp): one entry per step of a graph plan and per op of a TFLite
// program, the graph steps' FLOPs adding up to the plan's, the clock advancing, and the run it
// profiles being a real run (the outputs of the profiled runs equal run()'s). No time is
// asserted: timings are the benchmark's business.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "support/source_paths.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

const std::string kRoot = ::tickinfer::test::source_dir();

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.01f * static_cast<float>(i % 23) - 0.1f;
  return v;
}

size_t described_steps(const Plan& plan) {
  const std::string d = plan.describe();
  return static_cast<size_t>(std::count(d.begin(), d.end(), '\n')) - 1;  // the header line
}

TEST(PlanProfile, OneEntryPerGraphStepWithTheStepsFlops) {
  const Model model = Model::load(kRoot + "/bench/book_models/tiny_transformer/model.keras");
  Plan plan = compile(model);
  const std::vector<float> x = ramp(plan.input_size(0));
  const std::vector<Plan::StepProfile> steps = plan.profile({x.data()}, 20);
  EXPECT_EQ(steps.size(), described_steps(plan));
  int64_t flops = 0;
  double total = 0;
  for (const auto& s : steps) {
    EXPECT_FALSE(s.step.empty());
    EXPECT_GE(s.p50_ns, 0.0);
    flops += s.flops;
    total += s.p50_ns;
  }
  EXPECT_EQ(flops, plan.flops());
  EXPECT_GT(total, 0.0);
  EXPECT_NE(steps[2].step.find("attention"), std::string::npos) << steps[2].step;
}

TEST(PlanProfile, ProfiledRunsAreRealRunsInStreamMode) {
  // Stream mode carries state: a profile of n runs advances it as n run() calls would.
  const Model model = Model::load(kRoot + "/tests/fixtures/attention_stream_k3/model.keras");
  CompileOptions opt;
  opt.mode = RecurrentMode::Stream;
  Plan profiled = compile(model, opt), plain = compile(model, opt);
  const std::vector<float> x = ramp(plain.input_size(0));
  const int runs = 7;  // + runs / 10 + 1 untimed ones first
  profiled.profile({x.data()}, runs);
  std::vector<float> want(plain.output_size(0)), got(plain.output_size(0));
  for (int r = 0; r < runs + runs / 10 + 1 + 1; ++r) plain.run(x.data(), want.data());
  profiled.run(x.data(), got.data());
  EXPECT_EQ(got, want);
}

TEST(PlanProfile, OneEntryPerProgramOp) {
  const Model model = Model::load(kRoot + "/tests/fixtures/tflite/lnorm/int8.tflite");
  Plan plan = compile(model);
  const std::vector<float> x = ramp(plan.input_size(0));
  const std::vector<Plan::StepProfile> ops = plan.profile({x.data()}, 5);
  ASSERT_FALSE(ops.empty());
  int fc = 0;
  for (const auto& s : ops) {
    EXPECT_FALSE(s.step.empty());
    fc += s.step.rfind("FULLY_CONNECTED", 0) == 0;
  }
  EXPECT_EQ(fc, 2);  // lnorm: Dense, LayerNormalization, Dense (its tanh a TANH op of its own)
  EXPECT_EQ(ops.back().step.rfind("TANH", 0), 0u) << ops.back().step;
}

TEST(PlanProfile, BadArgumentsAreRefused) {
  const Model model = Model::load(kRoot + "/bench/book_models/tiny_transformer/model.keras");
  Plan plan = compile(model);
  const std::vector<float> x = ramp(plan.input_size(0));
  EXPECT_THROW(plan.profile({}, 3), Error);
  EXPECT_THROW(plan.profile({x.data()}, 0), Error);
}

}  // namespace
}  // namespace tickinfer
