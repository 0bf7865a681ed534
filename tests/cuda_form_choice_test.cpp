// The timed choice of execution form (CompileOptions::cuda_form = "auto" on a GPU, for a model
// the resident LSTM kernel does not run): the graph form and the program form are started in turn,
// held to agree on a probe request, timed, and the faster kept. On machines without a GPU the rule
// is checked with the host executor in the forms' places (one of them slowed by a known amount,
// so which is faster is known), and with forms that do not start, do not answer, or answer
// wrongly; on a GPU, the real choice is held to Keras's outputs.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "cuda/device_runner.hpp"
#include "cuda/devices.hpp"
#include "cuda/form_choice.hpp"
#include "engine/cuda_graph_plan.hpp"
#include "engine/cuda_program_lowering.hpp"
#include "formats/npy.hpp"
#include "support/expect_close.hpp"
#include "support/fixture_manifest.hpp"
#include "support/lowered_fixture.hpp"
#include "support/source_paths.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

using engine::FormStart;
using engine::ProgramStart;

std::string models() { return std::string(::tickinfer::test::source_dir()) + "/bench/models"; }

// A bench model or a Keras fixture, by name.
testing::FixtureCase bench_case(const std::string& name) {
  for (const std::string& dir : {models(), testing::fixtures_dir()})
    for (const testing::FixtureCase& c : testing::load_manifest(dir))
      if (c.name == name) return c;
  throw std::runtime_error("no fixture " + name);
}

// A runner that hands everything to another; the forms below change only its run().
class WrappedRunner : public cuda::ProgramRunner {
 public:
  explicit WrappedRunner(std::unique_ptr<cuda::ProgramRunner> inner) : inner_(std::move(inner)) {}
  bool run(const float* const* in, float* const* out, bool reset) noexcept override { return inner_->run(in, out, reset); }
  std::string reserve_rows(int n) override { return inner_->reserve_rows(n); }
  bool run_rows(const float* x, int rows, float* y) noexcept override { return inner_->run_rows(x, rows, y); }
  std::string describe() const override { return inner_->describe(); }

 protected:
  std::unique_ptr<cuda::ProgramRunner> inner_;
};

// The host executor, each request made `extra_us` slower by a spin: a form whose speed is known.
class SlowedRunner final : public WrappedRunner {
 public:
  SlowedRunner(std::unique_ptr<cuda::ProgramRunner> inner, int extra_us) : WrappedRunner(std::move(inner)), extra_us_(extra_us) {}
  bool run(const float* const* in, float* const* out, bool reset) noexcept override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(extra_us_);
    const bool ok = inner_->run(in, out, reset);
    while (std::chrono::steady_clock::now() < until) {
    }
    return ok;
  }
  std::string describe() const override { return "slowed " + inner_->describe(); }

 private:
  int extra_us_;
};

// A form whose kernel never replies (what the plans see of a lost resident kernel).
class SilentRunner final : public cuda::ProgramRunner {
 public:
  bool run(const float* const*, float* const*, bool) noexcept override { return false; }
  std::string reserve_rows(int) override { return "silent"; }
  bool run_rows(const float*, int, float*) noexcept override { return false; }
  std::string describe() const override { return "silent"; }
};

ProgramStart host(bool backwards, int extra_us = 0, std::shared_ptr<int> starts = nullptr) {
  return [=](std::shared_ptr<const cuda::DeviceProgram> p) -> std::unique_ptr<cuda::ProgramRunner> {
    if (starts) ++*starts;
    auto r = cuda::host_program_runner(std::move(p), backwards);
    if (extra_us == 0) return r;
    return std::make_unique<SlowedRunner>(std::move(r), extra_us);
  };
}

// A form that cannot start (what the program form says on a card without clusters, say).
ProgramStart refusing(const std::string& why) {
  return [why](std::shared_ptr<const cuda::DeviceProgram>) -> std::unique_ptr<cuda::ProgramRunner> {
    throw std::runtime_error(why);
  };
}

ProgramStart silent() {
  return [](std::shared_ptr<const cuda::DeviceProgram>) -> std::unique_ptr<cuda::ProgramRunner> {
    return std::make_unique<SilentRunner>();
  };
}

// Every row of the case's Keras fixture (window mode) through the plan (a backend or a Plan).
template <class P>
void expect_matches_keras(P& plan, const testing::FixtureCase& c, size_t in, size_t out, int max_rows = 4) {
  const formats::NpyArray x = formats::read_npy(c.inputs[0]), want = formats::read_npy(c.outputs[0]);
  std::vector<float> y(out);
  for (int64_t r = 0; r < std::min<int64_t>(x.shape[0], max_rows); ++r) {
    const float* px = x.data.data() + size_t(r) * in;
    float* py = y.data();
    plan.run(&px, &py);
    testing::expect_close(y.data(), want.data.data() + size_t(r) * out, out, c.rtol, c.atol,
                          c.name + " row " + std::to_string(r));
  }
}

void expect_matches_keras(Plan::Impl& plan, const testing::FixtureCase& c) {
  expect_matches_keras(plan, c, size_t(shape_size(plan.input_shapes()[0])), size_t(shape_size(plan.output_shapes()[0])));
}

std::unique_ptr<Plan::Impl> choose(const testing::FixtureCase& c, std::vector<FormStart> forms,
                                   RecurrentMode mode = RecurrentMode::Window) {
  CompileOptions opt;
  opt.mode = mode;
  return engine::compile_cuda_choosing(Model::load(c.file).graph(), opt, std::move(forms));
}

TEST(FormChoice, KeepsTheFasterFormWhicheverComesFirst) {
  const testing::FixtureCase c = bench_case("tcn");
  // The program form 3 ms slower per request: the graph form is kept.
  auto a = choose(c, {{"graph", "cuda-graph", host(false)}, {"program", "cuda-program", host(true, 3000)}});
  EXPECT_STREQ(a->isa(), "cuda-graph");
  EXPECT_NE(a->describe().find("form chosen by timing on this card: graph"), std::string::npos) << a->describe();
  EXPECT_NE(a->describe().find(" us (kept), program "), std::string::npos) << a->describe();
  expect_matches_keras(*a, c);
  // The graph form 3 ms slower: the program form is kept, and runs.
  auto b = choose(c, {{"graph", "cuda-graph", host(false, 3000)}, {"program", "cuda-program", host(true)}});
  EXPECT_STREQ(b->isa(), "cuda-program");
  const std::string d = b->describe();
  EXPECT_NE(d.find("program "), std::string::npos) << d;
  EXPECT_LT(d.find("graph "), d.find(" us (kept)")) << d;  // graph's time first, then program's, kept
  expect_matches_keras(*b, c);
}

TEST(FormChoice, ClonesStartTheKeptFormWithoutTimingAgain) {
  const testing::FixtureCase c = bench_case("tcn");
  auto graph_starts = std::make_shared<int>(0), program_starts = std::make_shared<int>(0);
  auto plan = choose(c, {{"graph", "cuda-graph", host(false, 3000, graph_starts)},
                         {"program", "cuda-program", host(true, 0, program_starts)}});
  EXPECT_EQ(*graph_starts, 1);
  EXPECT_EQ(*program_starts, 1);
  auto clone = plan->clone();
  EXPECT_EQ(*graph_starts, 1);
  EXPECT_EQ(*program_starts, 2);
  EXPECT_STREQ(clone->isa(), "cuda-program");
  EXPECT_NE(clone->describe().find("form chosen by timing"), std::string::npos);
  expect_matches_keras(*clone, c);
}

// A form whose replies differ from the reference's is never kept, however fast: here the
// program's first weight moved by one (every other weight and step the same).
TEST(FormChoice, RefusesAFormThatAnswersDifferently) {
  const testing::FixtureCase c = bench_case("tcn");
  ProgramStart wrong = [](std::shared_ptr<const cuda::DeviceProgram> p) {
    auto changed = std::make_shared<cuda::DeviceProgram>(*p);
    changed->weights.at(0) += 1.0f;
    return cuda::host_program_runner(std::move(changed), false);
  };
  auto plan = choose(c, {{"graph", "cuda-graph", host(false, 3000)}, {"program", "cuda-program", wrong}});
  EXPECT_STREQ(plan->isa(), "cuda-graph");
  const std::string d = plan->describe();
  EXPECT_NE(d.find("program refused: output 0 element "), std::string::npos) << d;
  EXPECT_NE(d.find("where the graph form gives"), std::string::npos) << d;
  expect_matches_keras(*plan, c);
}

TEST(FormChoice, RefusesAFormThatDoesNotStartOrDoesNotAnswer) {
  const testing::FixtureCase c = bench_case("tcn");
  auto plan = choose(c, {{"graph", "cuda-graph", host(false, 3000)},
                         {"program", "cuda-program", refusing("resident program: needs thread-block clusters (sm_90)")},
                         {"tagged", "cuda-tagged", silent()}});
  EXPECT_STREQ(plan->isa(), "cuda-graph");
  const std::string d = plan->describe();
  EXPECT_NE(d.find("program refused: resident program: needs thread-block clusters (sm_90)"), std::string::npos) << d;
  EXPECT_NE(d.find("tagged refused: no reply to the probe request"), std::string::npos) << d;
  expect_matches_keras(*plan, c);
}

// The reference form (the graph form) failing is the plan failing, with its reason.
TEST(FormChoice, AReferenceThatFailsIsTheCompileError) {
  const testing::FixtureCase c = bench_case("tcn");
  for (const ProgramStart& bad : {refusing("out of memory"), silent()}) {
    try {
      choose(c, {{"graph", "cuda-graph", bad}, {"program", "cuda-program", host(false)}});
      FAIL() << "a plan without its reference form";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--device cuda: "), std::string::npos) << e.what();
    }
  }
}

// A form that faults spoils the device for every form in the process: here the program form's
// start "faults" (throws, and from then the graph form's runner fails every request). The graph
// form, timed before, would be kept; its last probe fails, and so does the compile, saying why.
class SpoilableRunner final : public WrappedRunner {
 public:
  SpoilableRunner(std::unique_ptr<cuda::ProgramRunner> inner, std::shared_ptr<bool> spoiled)
      : WrappedRunner(std::move(inner)), spoiled_(std::move(spoiled)) {}
  bool run(const float* const* in, float* const* out, bool reset) noexcept override {
    return !*spoiled_ && inner_->run(in, out, reset);
  }

 private:
  std::shared_ptr<bool> spoiled_;
};

TEST(FormChoice, AKeptFormSpoiledByAFaultingFormIsTheCompileError) {
  const testing::FixtureCase c = bench_case("tcn");
  auto spoiled = std::make_shared<bool>(false);
  ProgramStart graph = [spoiled](std::shared_ptr<const cuda::DeviceProgram> p) -> std::unique_ptr<cuda::ProgramRunner> {
    return std::make_unique<SpoilableRunner>(cuda::host_program_runner(std::move(p), false), spoiled);
  };
  ProgramStart faulting = [spoiled](std::shared_ptr<const cuda::DeviceProgram>) -> std::unique_ptr<cuda::ProgramRunner> {
    *spoiled = true;
    throw std::runtime_error("resident program: no reply to the first request (stream: an illegal memory access)");
  };
  try {
    choose(c, {{"graph", "cuda-graph", graph}, {"program", "cuda-program", faulting}});
    FAIL() << "a plan whose kept form no longer answers";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph form, kept, no longer answers the probe"), std::string::npos)
        << e.what();
  }
  // Unspoiled, the same graph form is kept.
  *spoiled = false;
  auto plan = choose(c, {{"graph", "cuda-graph", graph}, {"program", "cuda-program", refusing("no clusters")}});
  EXPECT_STREQ(plan->isa(), "cuda-graph");
  expect_matches_keras(*plan, c);
}

// Programs that store 16-bit tensors are held to agree within 8 of their format's steps (a
// rounding to 16 bits turns a last-bit difference into a whole step); fp32 ones within agrees()'s.
TEST(FormChoice, MarginsFollowTheProgramsStorage) {
  const engine::LoweredGraph g = testing::lower_fixture(bench_case("tcn"));
  const auto margins = [&](const std::string& spec) {
    return cuda::agree_margins(engine::device_program_from(g, "tcn", engine::parse_cuda_precision(spec)));
  };
  EXPECT_EQ(margins("").rel, cuda::kAgreeRel);
  EXPECT_EQ(margins("").abs, cuda::kAgreeAbs);
  EXPECT_EQ(margins("fp16/fp16").rel, 8.0 / 1024);
  EXPECT_EQ(margins("bf16/bf16").rel, 8.0 / 128);
  EXPECT_EQ(margins("fp16/bf16").rel, 8.0 / 128);  // the coarser format decides
  // What the margins let through: a relative difference of 1e-3 passes fp16's, not fp32's.
  EXPECT_TRUE(margins("fp16/fp16")(1.001, 1.0));
  EXPECT_FALSE(margins("")(1.001, 1.0));
}

// The timing runs a stream plan's ticks; the plan it leaves still starts from zero state: every
// tick of a fresh sequence equals Keras on the prefix.
TEST(FormChoice, AStreamPlanStartsFromZeroStateAfterTheTiming) {
  const testing::FixtureCase c = bench_case("gru_stacked_k3");
  ASSERT_FALSE(c.stream_in.empty());
  auto plan = choose(c, {{"graph", "cuda-graph", host(false)}, {"program", "cuda-program", host(true)}},
                     RecurrentMode::Stream);
  const formats::NpyArray in = formats::read_npy(c.stream_in), want = formats::read_npy(c.stream_out);
  const int64_t T = in.shape[1], F = in.shape[2];
  const size_t out = size_t(shape_size(plan->output_shapes()[0]));
  std::vector<float> y(out);
  for (int pass = 0; pass < 2; ++pass) {  // the second after reset_state()
    for (int64_t t = 0; t < T; ++t) {
      const float* x = in.data.data() + t * F;
      float* py = y.data();
      plan->run(&x, &py);
      testing::expect_close(y.data(), want.data.data() + size_t(t) * out, out, c.rtol, c.atol,
                            "pass " + std::to_string(pass) + " tick " + std::to_string(t));
    }
    plan->reset_state();
  }
}

// On a card: compile(device = "cuda") times the two real forms; whichever it keeps matches Keras,
// and describe() shows both times (or why the program form was refused).
TEST(FormChoice, GpuKeepsAFormThatMatchesKeras) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the choice's rule is checked on the host above";
  for (const char* name : {"tcn", "mlp_small"}) {
    const testing::FixtureCase c = bench_case(name);
    CompileOptions opt;
    opt.device = "cuda";
    Plan plan = compile(Model::load(c.file), opt);
    const std::string d = plan.describe();
    std::printf("%s: %s\n", name, d.substr(0, d.find('\n', d.find("form chosen"))).c_str());
    EXPECT_NE(d.find("form chosen by timing on this card: graph "), std::string::npos) << d;
    EXPECT_NE(d.find("program"), std::string::npos) << d;
    expect_matches_keras(plan, c, plan.input_size(0), plan.output_size(0));
  }
}

}  // namespace
}  // namespace tickinfer
