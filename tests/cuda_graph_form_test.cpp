// The CUDA graph form, on any machine: every Keras fixture model (the CPU plan's, tools/
// make_fixtures.py and the bench suites) is lowered into the graph form's program and run by the
// host executor, which calls the very step bodies the GPU kernels are instantiated from
// (cuda/device_step_dispatch.cuh). Each must reproduce the outputs TensorFlow/Keras computed,
// in window mode and, where the case has a stream fixture, tick by tick; and running every step's
// items backwards must give the same bits, since the GPU runs them in any order (a step whose
// items read what other items of the same pass write would differ). Where a GPU is visible,
// compile(device = "cuda") runs the same programs on it and is held to the same outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "cuda/device_program.hpp"
#include "cuda/device_runner.hpp"
#include "cuda/devices.hpp"
#include "engine/cuda_graph_plan.hpp"
#include "engine/cuda_program_lowering.hpp"
#include "engine/lowering/lowered_graph.hpp"
#include "formats/npy.hpp"
#include "support/expect_close.hpp"
#include "support/fixture_manifest.hpp"
#include "support/lowered_fixture.hpp"
#include "support/source_paths.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

using testing::FixtureCase;

}  // namespace
namespace testing {
void PrintTo(const FixtureCase& c, std::ostream* os) { *os << c.name; }
}  // namespace testing
namespace {

// The source tree as built, or $TICKINFER_SOURCE_DIR where the binary runs from another checkout
// (tools/gpu_check.sh on a GPU machine; support/source_paths.cpp reads it).
std::string source() { return ::tickinfer::test::source_dir(); }

std::vector<FixtureCase> all_cases() {
  std::vector<FixtureCase> out;
  const std::string src = source();
  for (const std::string& d : {testing::fixtures_dir(), src + "/bench/models", src + "/bench/book_models",
                               src + "/bench/book_models_multi_horizon"})
    for (const FixtureCase& c : testing::load_manifest(d)) out.push_back(c);
  return out;
}

std::vector<FixtureCase> stream_cases() {
  std::vector<FixtureCase> out;
  for (const FixtureCase& c : all_cases())
    if (!c.stream_in.empty()) out.push_back(c);
  return out;
}

// Rows checked per case: enough to cover the model, few enough that the host executor (one item
// at a time) keeps the suite short on the book models.
constexpr int64_t kMaxRows = 6;

std::unique_ptr<Plan::Impl> on_host(const Model& m, const CompileOptions& opt, bool backwards) {
  return engine::compile_cuda_graph_on_host(m.graph(), opt, backwards);
}

// Window mode: each row one run; every output of every runner within the case's tolerance of
// Keras, and the two host orders identical.
// on_gpu: also the plan on the GPU, as the graph form or (program) the resident program kernel.
void check_window(const FixtureCase& c, bool on_gpu, bool program = false) {
  const Model model = Model::load(c.file);
  CompileOptions opt;
  opt.window_length = c.window_length;
  std::vector<formats::NpyArray> ins, wants;
  for (const auto& f : c.inputs) ins.push_back(formats::read_npy(f));
  for (const auto& f : c.outputs) wants.push_back(formats::read_npy(f));
  std::unique_ptr<Plan::Impl> fwd = on_host(model, opt, false);
  std::unique_ptr<Plan::Impl> bwd = on_host(model, opt, true);
  std::unique_ptr<Plan> gpu;
  std::unique_ptr<Plan::Impl> gpu_program;
  if (on_gpu && program) {
    gpu_program = engine::compile_cuda_program(model.graph(), opt, 0, 8);
  } else if (on_gpu) {
    CompileOptions o = opt;
    o.device = "cuda";
    o.cuda_form = "graph";  // the timed choice of form has its own test (cuda_form_choice_test)
    gpu = std::make_unique<Plan>(compile(model, o));
  }
  ASSERT_EQ(fwd->input_shapes().size(), ins.size());
  ASSERT_EQ(fwd->output_shapes().size(), wants.size());
  const int64_t rows = std::min<int64_t>(ins[0].shape[0], kMaxRows);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<const float*> in_ptrs;
    for (size_t i = 0; i < ins.size(); ++i) {
      const size_t n = static_cast<size_t>(shape_size(fwd->input_shapes()[i]));
      ASSERT_EQ(ins[i].data.size(), static_cast<size_t>(ins[i].shape[0]) * n) << c.name << " input " << i;
      in_ptrs.push_back(ins[i].data.data() + r * n);
    }
    const size_t n_out = wants.size();
    std::vector<std::vector<float>> a(n_out), b(n_out), g(n_out);
    std::vector<float*> pa, pb, pg;
    for (size_t o = 0; o < n_out; ++o) {
      const size_t n = static_cast<size_t>(shape_size(fwd->output_shapes()[o]));
      a[o].assign(n, -12345.0f), b[o].assign(n, -12345.0f), g[o].assign(n, -12345.0f);
      pa.push_back(a[o].data()), pb.push_back(b[o].data()), pg.push_back(g[o].data());
    }
    fwd->run(in_ptrs.data(), pa.data());
    bwd->run(in_ptrs.data(), pb.data());
    if (gpu) gpu->run(in_ptrs.data(), pg.data());
    if (gpu_program) gpu_program->run(in_ptrs.data(), pg.data());
    for (size_t o = 0; o < n_out; ++o) {
      const size_t n = a[o].size();
      std::ostringstream what;
      what << c.name << " row " << r << " output " << o;
      testing::expect_close(a[o].data(), wants[o].data.data() + r * n, n, c.rtol, c.atol, what.str());
      EXPECT_EQ(std::memcmp(a[o].data(), b[o].data(), n * sizeof(float)), 0) << what.str() << ": items backwards differ";
      if (gpu || gpu_program)
        testing::expect_close(g[o].data(), wants[o].data.data() + r * n, n, c.rtol, c.atol,
                              what.str() + (gpu ? " (GPU)" : " (GPU, resident program)"));
    }
  }
}

class GraphFormWindow : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(GraphFormWindow, HostExecutorMatchesKerasInEitherItemOrder) { check_window(GetParam(), false); }

TEST_P(GraphFormWindow, GpuMatchesKeras) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the graph form runs on the host above";
  check_window(GetParam(), true);
}

// The resident program kernel (one cluster of 8 blocks) on the same fixtures. Named *ResidentProgram* so
// tools/gpu_check.sh runs these apart, after the graph form's: this kernel had not run on a GPU
// when it was written.
TEST_P(GraphFormWindow, GpuResidentProgramMatchesKeras) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the step bodies run on the host above";
  check_window(GetParam(), true, true);
}

// Batched rows (Plan::run_rows on a reservation): each row of a batch bit-identical to run() on
// that row, on the host in either item and row order, and on a GPU where one is visible. Two
// rows reserved and three run: a full batch, then a slice of one.
void check_batched(const FixtureCase& c, bool on_gpu) {
  const Model model = Model::load(c.file);
  CompileOptions opt;
  opt.window_length = c.window_length;
  std::unique_ptr<Plan::Impl> one = on_host(model, opt, false);
  if (one->input_shapes().size() != 1 || one->output_shapes().size() != 1) {
    EXPECT_NE(on_host(model, opt, false)->reserve_rows(2), "") << c.name << ": several inputs or outputs batched";
    return;
  }
  std::vector<std::unique_ptr<Plan::Impl>> batched;
  if (on_gpu) {
    opt.device = "cuda";
    opt.cuda_form = "graph";
    batched.push_back(engine::compile_cuda_graph(model.graph(), opt, 0));
    one = engine::compile_cuda_graph(model.graph(), opt, 0);
  } else {
    batched.push_back(on_host(model, opt, false));
    batched.push_back(on_host(model, opt, true));
  }
  const formats::NpyArray x = formats::read_npy(c.inputs[0]);
  const size_t in = static_cast<size_t>(shape_size(one->input_shapes()[0]));
  const size_t out = static_cast<size_t>(shape_size(one->output_shapes()[0]));
  const int rows = static_cast<int>(std::min<int64_t>(x.shape[0], 3));
  std::vector<float> want(rows * out);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x.data.data() + r * in;
    float* yr = want.data() + r * out;
    one->run(&xr, &yr);
  }
  for (auto& plan : batched) {
    ASSERT_EQ(plan->reserve_rows(2), "") << c.name;
    EXPECT_EQ(plan->reserved_rows(), 2);
    std::vector<float> got(rows * out, -12345.0f);
    plan->run_rows(x.data.data(), rows, got.data());
    for (int r = 0; r < rows; ++r)
      EXPECT_EQ(std::memcmp(got.data() + r * out, want.data() + r * out, out * sizeof(float)), 0)
          << c.name << " row " << r << (on_gpu ? " (GPU)" : "") << ": batched differs from run()";
  }
}

class GraphFormBatched : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(GraphFormBatched, HostRowsEqualRunBitForBit) { check_batched(GetParam(), false); }

TEST_P(GraphFormBatched, GpuRowsEqualRunBitForBit) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the batched form runs on the host above";
  check_batched(GetParam(), true);
}

// The Dense as tiles (device_dense_tiles.cuh: the GPU's batched tile variants, and run()'s where
// they time faster): every row of a 34-row batch (a second row tile, partly filled) and run() as tiles
// bit-identical to run() per row, tiles forwards and backwards, with fp32 tensors and 16-bit ones.
// The host executor is slow, so the book models' heavier programs are left to the card
// (GpuEveryBatchSizeEqualsRunBitForBit runs whichever variant the card keeps).
TEST_P(GraphFormBatched, HostTilesEqualRunBitForBit) {
  const FixtureCase& c = GetParam();
  const engine::LoweredGraph lowered = testing::lower_fixture(c);
  constexpr int kRows = 34;
  for (const char* spec : {"fp32", "bf16/fp16"}) {
    auto p = std::make_shared<const cuda::DeviceProgram>(
        engine::device_program_from(lowered, c.name, engine::parse_cuda_precision(spec)));
    if (!cuda::why_not_batched(*p).empty()) GTEST_SKIP() << "rows take one input and one output";
    if (std::none_of(p->steps.begin(), p->steps.end(), [](const cuda::DeviceStep& s) { return s.kind == cuda::DevKind::Dense; }))
      GTEST_SKIP() << "no Dense step";
    if (engine::device_program_macs(*p) > 2'000'000) GTEST_SKIP() << "too heavy for the host executor at 34 rows";
    const formats::NpyArray x = formats::read_npy(c.inputs[0]);
    const size_t in = size_t(p->inputs[0].floats), out = size_t(p->outputs[0].floats);
    std::vector<float> rows(kRows * in), want(kRows * out);
    for (int r = 0; r < kRows; ++r)  // the fixture's rows, again from the first as needed
      std::copy_n(x.data.data() + (r % x.shape[0]) * in, in, rows.data() + r * in);
    auto one = cuda::host_program_runner(p, false);
    for (int r = 0; r < kRows; ++r) {
      const float* xr = rows.data() + r * in;
      float* yr = want.data() + r * out;
      ASSERT_TRUE(one->run(&xr, &yr, true));
    }
    for (bool backwards : {false, true}) {
      auto tiled = cuda::host_program_runner(p, backwards, true);
      std::vector<float> y(out);
      for (int r = 0; r < kRows; r += 11) {  // run(): one request's rows as tiles
        const float* xr = rows.data() + r * in;
        float* yr = y.data();
        ASSERT_TRUE(tiled->run(&xr, &yr, true));
        ASSERT_EQ(std::memcmp(y.data(), want.data() + r * out, out * sizeof(float)), 0) << c.name << " run() as tiles";
      }
      ASSERT_EQ(tiled->reserve_rows(kRows), "");
      std::vector<float> got(kRows * out, -1.0f);
      ASSERT_TRUE(tiled->run_rows(rows.data(), kRows, got.data()));
      for (int r = 0; r < kRows; ++r)
        ASSERT_EQ(std::memcmp(got.data() + r * out, want.data() + r * out, out * sizeof(float)), 0)
            << c.name << " " << spec << " row " << r << (backwards ? " (tiles backwards)" : "");
    }
  }
}

// On a card, batches of 2, 40 and 300 rows over a 512-row reservation: each batch size runs the
// variant its timing kept (per row or the Dense steps as tiles, with or without dependent launch),
// and every row equals run().
TEST_P(GraphFormBatched, GpuEveryBatchSizeEqualsRunBitForBit) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the tiles run on the host above";
  const FixtureCase& c = GetParam();
  const Model model = Model::load(c.file);
  CompileOptions opt;
  opt.window_length = c.window_length;
  opt.device = "cuda";
  opt.cuda_form = "graph";
  auto plan = engine::compile_cuda_graph(model.graph(), opt, 0);
  if (plan->input_shapes().size() != 1 || plan->output_shapes().size() != 1) GTEST_SKIP() << "one input and one output";
  ASSERT_EQ(plan->reserve_rows(512), "") << c.name;
  const formats::NpyArray x = formats::read_npy(c.inputs[0]);
  const size_t in = size_t(shape_size(plan->input_shapes()[0])), out = size_t(shape_size(plan->output_shapes()[0]));
  std::vector<float> rows(300 * in), want(300 * out);
  for (int r = 0; r < 300; ++r) std::copy_n(x.data.data() + (r % x.shape[0]) * in, in, rows.data() + r * in);
  for (int r = 0; r < 300; ++r) {
    const float* xr = rows.data() + r * in;
    float* yr = want.data() + r * out;
    plan->run(&xr, &yr);
  }
  for (int n : {2, 40, 300}) {
    std::vector<float> got(n * out, -1.0f);
    plan->run_rows(rows.data(), n, got.data());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << c.name << ", " << n << " rows";
  }
}

// A stream plan carries one sequence's state: its rows cannot run side by side, and it says so.
TEST(GraphFormBatchedRefusals, StreamPlansRefuseRows) {
  const Model model = Model::load(source() + "/bench/models/lstm_tiny/model.keras");
  CompileOptions opt;
  opt.mode = RecurrentMode::Stream;
  const std::string why = on_host(model, opt, false)->reserve_rows(4);
  EXPECT_NE(why.find("stream"), std::string::npos) << why;
}

class GraphFormStream : public ::testing::TestWithParam<FixtureCase> {};

// Tick by tick from a reset, each tick's output against Keras on the prefix window: the host
// executor in both item orders (identical bits), or the plan on the GPU.
void check_stream(const FixtureCase& c, bool on_gpu, bool program = false) {
  const Model model = Model::load(c.file);
  CompileOptions opt;
  opt.mode = RecurrentMode::Stream;
  std::unique_ptr<Plan::Impl> fwd, bwd;
  if (on_gpu) {
    opt.device = "cuda";
    fwd = program ? engine::compile_cuda_program(model.graph(), opt, 0, 8) : engine::compile_cuda_graph(model.graph(), opt, 0);
  } else {
    fwd = engine::compile_cuda_graph_on_host(model.graph(), opt, false);
    bwd = engine::compile_cuda_graph_on_host(model.graph(), opt, true);
  }
  const formats::NpyArray in = formats::read_npy(c.stream_in);
  const formats::NpyArray want = formats::read_npy(c.stream_out);
  const int64_t N = std::min<int64_t>(in.shape[0], 3), T = in.shape[1], F = in.shape[2];
  ASSERT_EQ(static_cast<size_t>(F), static_cast<size_t>(shape_size(fwd->input_shapes()[0])));
  const size_t out_n = static_cast<size_t>(shape_size(fwd->output_shapes()[0]));
  std::vector<float> y(out_n), z(out_n);
  for (int64_t s = 0; s < N; ++s) {
    fwd->reset_state();
    if (bwd) bwd->reset_state();
    for (int64_t t = 0; t < T; ++t) {
      const float* x = in.data.data() + (s * T + t) * F;
      float* py = y.data();
      float* pz = z.data();
      fwd->run(&x, &py);
      std::ostringstream what;
      what << c.name << (on_gpu ? " (GPU)" : "") << " stream " << s << " tick " << t;
      // The stream fixture's own tolerance (the manifest's), as the other stream tests hold it.
      testing::expect_close(y.data(), want.data.data() + (s * T + t) * out_n, out_n, c.rtol, c.stream_atol, what.str());
      if (!bwd) continue;
      bwd->run(&x, &pz);
      EXPECT_EQ(std::memcmp(y.data(), z.data(), out_n * sizeof(float)), 0) << what.str() << ": items backwards differ";
    }
  }
}

TEST_P(GraphFormStream, HostExecutorMatchesKerasOnEveryPrefix) { check_stream(GetParam(), false); }

TEST_P(GraphFormStream, GpuMatchesKerasOnEveryPrefix) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the graph form runs on the host above";
  check_stream(GetParam(), true);
}

TEST_P(GraphFormStream, GpuResidentProgramMatchesKerasOnEveryPrefix) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the step bodies run on the host above";
  check_stream(GetParam(), true, true);
}

std::string case_name(const ::testing::TestParamInfo<FixtureCase>& info) { return testing::case_test_name(info.param); }

INSTANTIATE_TEST_SUITE_P(Fixtures, GraphFormWindow, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, GraphFormBatched, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, GraphFormStream, ::testing::ValuesIn(stream_cases()), case_name);

// The suite cannot pass vacuously: the fixtures are there, and between them they hold every
// step kind the graph form has.
TEST(GraphFormCoverage, TheFixturesHoldEveryStepKind) {
  ASSERT_GE(all_cases().size(), 30u);
  std::vector<bool> seen(size_t(cuda::DevKind::Count), false);
  for (const FixtureCase& c : all_cases()) {
    const Model model = Model::load(c.file);
    CompileOptions opt;
    opt.window_length = c.window_length;
    for (RecurrentMode mode : {RecurrentMode::Window, RecurrentMode::Stream}) {
      if (mode == RecurrentMode::Stream && c.stream_in.empty()) continue;
      opt.mode = mode;
      const cuda::DeviceProgram p = engine::device_program_from(engine::lower_for_plan(model.graph(), opt), c.name);
      EXPECT_EQ(cuda::program_error(p), "") << c.name;
      for (const cuda::DeviceStep& s : p.steps) seen[size_t(s.kind)] = true;
    }
  }
  for (size_t k = 0; k < seen.size(); ++k) EXPECT_TRUE(seen[k]) << "no fixture has step kind " << k;
}

TEST(GraphFormProgram, OffsetsOutsideTheArenaAreCaught) {
  const Model model = Model::load(source() + "/bench/models/mlp_small/model.keras");
  cuda::DeviceProgram p = engine::device_program_from(engine::lower_for_plan(model.graph(), {}), "mlp_small");
  ASSERT_EQ(cuda::program_error(p), "");
  p.steps[0].out = p.arena_floats;
  EXPECT_NE(cuda::program_error(p).find("outside the arena"), std::string::npos);
  p.steps[0].out = 0;
  p.steps[0].kernel = int64_t(p.weights.size());
  EXPECT_NE(cuda::program_error(p).find("outside the weights"), std::string::npos);
}

// A resident program learns that the kernel took a request only from its reply units: a program
// with none is refused before anything is started (no device needed for the refusal).
TEST(GraphFormProgram, ResidentProgramRefusesAProgramWithNoOutputValues) {
  const Model model = Model::load(source() + "/bench/models/mlp_small/model.keras");
  cuda::DeviceProgram p = engine::device_program_from(engine::lower_for_plan(model.graph(), {}), "mlp_small");
  ASSERT_FALSE(p.outputs.empty());
  for (cuda::DeviceRegion& r : p.outputs) r.floats = 0;
  ASSERT_EQ(cuda::program_error(p), "");
  try {
    cuda::start_resident_program(std::make_shared<const cuda::DeviceProgram>(p), 0, 1);
    FAIL() << "started a resident program that could never show it took a request";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no output values"), std::string::npos) << e.what();
  }
}

// Without a GPU (CI, the development machines), every model is still refused with the reason.
TEST(GraphFormDevice, NoGpuIsAClearError) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is visible";
  const Model model = Model::load(source() + "/bench/models/tcn/model.keras");
  CompileOptions opt;
  opt.device = "cuda";
  try {
    compile(model, opt);
    FAIL() << "compiled onto a GPU that is not there";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device cuda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tickinfer
