// The CUDA backend on a GPU: every reply of the resident kernel (both forms, through the engine's
// Plan and directly) against Keras's outputs (bench/models' *.npy), and the run path's promise:
// no allocation and no lock per request. Skipped with a message where no device is visible (CI
// and most development machines); tools/gpu_check.sh runs it on a machine with one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/devices.hpp"
#include "cuda/graph_lstm_stack.hpp"
#include "cuda/kernel_loading.hpp"
#include "cuda/resident_lstm.hpp"
#include "formats/npy.hpp"
#include "tickinfer/tickinfer.hpp"

#include "support/counting_allocator.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

// The source tree as built, or $TICKINFER_SOURCE_DIR where the binary runs from another checkout
// (tools/gpu_check.sh on a GPU machine).
const std::string kModels =
    std::string(::tickinfer::test::source_dir()) +
    "/bench/models/";

#define SKIP_WITHOUT_GPU()                                                                                    \
  if (cuda::device_count() == 0)                                                                              \
  GTEST_SKIP() << (cuda::built_with_cuda() ? "no CUDA device visible: tools/gpu_check.sh runs this on a GPU" \
                                           : "built without CUDA (no nvcc at configure time)")

struct Case {
  const char* model;
  const char* x;
  const char* y;
  bool stream;
  double atol;
};
const Case kCases[] = {
    {"lstm_tiny", "stream_in.npy", "stream_out.npy", true, 1.41e-6},
    {"lstm_tiny", "in0.npy", "out0.npy", false, 1.2e-6},
    {"lstm_window", "in0.npy", "out0.npy", false, 6.88e-7},
    {"lstm_window", "stream_in.npy", "stream_out.npy", true, 8.01e-7},
};

// Feeds every request of a case to `run(x, reset, y)` and checks each reply against Keras.
template <class Run>
void expect_matches_keras(const Case& c, const std::string& label, Run run) {
  const formats::NpyArray X = formats::read_npy(kModels + c.model + "/" + c.x);
  const formats::NpyArray Y = formats::read_npy(kModels + c.model + "/" + c.y);
  const int rows = int(X.shape[0]), steps = int(X.shape[1]), width = int(X.shape[2]);
  const int per = c.stream ? 1 : steps, requests = rows * steps / per;
  const size_t out = Y.data.size() / size_t(requests);
  std::vector<float> y(out);
  for (int k = 0; k < requests; ++k) {
    std::fill(y.begin(), y.end(), std::nanf(""));  // poisoned: every output must be written
    run(X.data.data() + size_t(k) * per * width, (k * per) % steps == 0, y.data());
    for (size_t o = 0; o < out; ++o) {
      const double want = Y.data[size_t(k) * out + o];
      EXPECT_LE(std::fabs(y[o] - want), c.atol + 1e-5 * std::fabs(want))
          << label << " " << c.model << " " << c.x << " reply " << k << " output " << o;
    }
  }
}

// A plan of a bench model on the GPU, in `mode` and `form` ("": the timed choice).
Plan compile_on_gpu(const std::string& model, RecurrentMode mode, const std::string& form = "") {
  CompileOptions opt;
  opt.device = "cuda";
  opt.mode = mode;
  opt.cuda_form = form;
  return compile(Model::load(kModels + model + "/model.keras"), opt);
}

// The first row of a bench model's in0.npy through `plan`, against Keras's out0.npy.
void expect_first_row_matches_keras(Plan& plan, const std::string& model, double atol) {
  const formats::NpyArray X = formats::read_npy(kModels + model + "/in0.npy");
  const formats::NpyArray Y = formats::read_npy(kModels + model + "/out0.npy");
  std::vector<float> y(plan.output_size(0), std::nanf(""));
  plan.run(X.data.data(), y.data());
  for (size_t o = 0; o < y.size(); ++o)
    EXPECT_NEAR(y[o], Y.data[o], atol + 1e-5 * std::fabs(Y.data[o])) << model << " output " << o;
}

// First in this file, so these are the process's first plans (tools/gpu_check.sh also runs it
// alone): a resident kernel runs, and only then do plans whose kernels a lazily loading CUDA
// would load now (and wait forever for the device to drain) start: a resident LSTM of another
// shape (its tuner starting a kernel per shape) and a graph-form plan. The program form is not
// tried here: it has its own gate in gpu_check.sh. load_every_kernel loaded them all with the
// first plan.
TEST(CudaResident, AaPlansOfOtherFormsStartBesideARunningResidentKernel) {
  SKIP_WITHOUT_GPU();
  Plan resident = compile_on_gpu("lstm_tiny", RecurrentMode::Stream);
  ASSERT_STREQ(resident.isa(), "cuda-resident");
  const cuda::KernelLoading k = cuda::kernel_loading_on_this_device();
  EXPECT_GE(k.kernels, 40) << "kernels given to " << k.how;
  if (k.loaded >= 0) {
    EXPECT_EQ(k.loaded, k.kernels) << "kernels the driver reports loaded after " << k.how;
  }
  Plan other_shape = compile_on_gpu("lstm_window", RecurrentMode::Window);
  ASSERT_STREQ(other_shape.isa(), "cuda-resident");
  expect_first_row_matches_keras(other_shape, "lstm_window", 6.88e-7);  // kCases' atol
  Plan graph = compile_on_gpu("tcn", RecurrentMode::Window, "graph");
  expect_first_row_matches_keras(graph, "tcn", 2.86e-6);  // the manifest's atol
  std::vector<float> x(resident.input_size(0), 0.25f), y(resident.output_size(0), std::nanf(""));
  resident.run(x.data(), y.data());
  for (float v : y) EXPECT_TRUE(std::isfinite(v)) << "the resident plan still answers";
}

TEST(CudaResident, EnginePlanMatchesKerasInBothModes) {
  SKIP_WITHOUT_GPU();
  for (const Case& c : kCases) {
    Plan plan = compile_on_gpu(c.model, c.stream ? RecurrentMode::Stream : RecurrentMode::Window);
    EXPECT_STREQ(plan.isa(), "cuda-resident");
    expect_matches_keras(c, "plan", [&](const float* x, bool reset, float* y) {
      if (reset) plan.reset_state();
      plan.run(x, y);
    });
  }
}

// A case's LSTM stack and the options that start it in `form` (steps from the case's mode).
struct CaseStack {
  cuda::StackFromGraph s;
  cuda::ResidentOptions opt;
};
CaseStack case_stack(const Case& c, const std::string& form) {
  CaseStack k{cuda::lstm_stack_from_graph(Model::load(kModels + c.model + "/model.keras").graph()), {}};
  k.opt.form = form;
  k.opt.steps = c.stream ? 1 : k.s.window;
  return k;
}

// Every reply of a started kernel to the case's requests, against Keras.
void expect_kernel_matches_keras(const Case& c, const std::string& label, cuda::ResidentLstm& kernel) {
  expect_matches_keras(c, label, [&](const float* x, bool reset, float* y) {
    ASSERT_TRUE(kernel.run(x, reset, y, 1'000'000'000)) << "no reply";
  });
}

TEST(CudaResident, BothFormsMatchKeras) {
  SKIP_WITHOUT_GPU();
  for (const char* form : {"registers", "shared"})
    for (const Case& c : kCases) {
      const CaseStack k = case_stack(c, form);
      ASSERT_EQ(k.s.error, "");
      auto kernel = cuda::ResidentLstm::start(k.s.stack, k.opt);
      EXPECT_EQ(kernel->layout().form, form);
      expect_kernel_matches_keras(c, form, *kernel);
    }
}

TEST(CudaResident, ClonesKeepTheirOwnState) {
  SKIP_WITHOUT_GPU();
  Plan a = compile_on_gpu("lstm_tiny", RecurrentMode::Stream);
  Plan b = a.clone();
  std::vector<float> x(a.input_size(0), 0.25f), ya(a.output_size(0)), fresh(ya.size()), fourth(ya.size());
  for (int i = 0; i < 3; ++i) a.run(x.data(), ya.data());  // a's state moves on; b's stays at zero
  b.run(x.data(), fresh.data());                            // b's first tick, from zero
  a.run(x.data(), ya.data());                               // a's fourth tick: b's run left a's state alone
  // The fourth tick as a plan of its own gives it (and it is not the first tick's reply).
  Plan c = a.clone();
  for (int i = 0; i < 4; ++i) c.run(x.data(), fourth.data());
  EXPECT_EQ(ya, fourth);
  EXPECT_NE(ya, fresh);
  a.reset_state();
  a.run(x.data(), ya.data());
  EXPECT_EQ(ya, fresh);
}

// `runs` runs of `model` compiled in `form` (resets every 100): the allocations and lock calls
// they made, counted while the runs go, and whether the last output is a number.
struct RunPathCounts {
  long allocs = 0, locks = 0;
  bool finite = true;
};
RunPathCounts count_run_path(const std::string& model, RecurrentMode mode, const std::string& form, const char* isa,
                             int runs) {
  CompileOptions opt;
  opt.device = "cuda";
  opt.cuda_form = form;
  opt.mode = mode;
  // A bench model by name, or a file (the int8 programs).
  const bool file = model.find('/') != std::string::npos;
  Plan plan = compile(Model::load(file ? model : kModels + model + "/model.keras"), opt);
  EXPECT_STREQ(plan.isa(), isa) << model;
  std::vector<float> x(plan.input_size(0), 0.5f), y(plan.output_size(0));
  plan.run(x.data(), y.data());
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  for (int i = 0; i < runs; ++i) {
    if (i % 100 == 0) plan.reset_state();
    plan.run(x.data(), y.data());
  }
  g_counting = false;
  return {g_allocs.load(), g_locks.load(), !std::isnan(y[0])};
}

TEST(CudaResident, RunNeverAllocatesOrLocks) {
  SKIP_WITHOUT_GPU();
  const RunPathCounts c = count_run_path("lstm_tiny", RecurrentMode::Stream, "auto", "cuda-resident", 10000);
  EXPECT_EQ(c.allocs, 0);
  EXPECT_EQ(c.locks, 0);
  EXPECT_TRUE(c.finite);
}

// The CUDA graph form's run path (engine/cuda_graph_plan.hpp): a copy into pinned memory, one
// cudaGraphLaunch, one cudaStreamSynchronize, a copy out; and the integer program's of an int8
// TFLite file (cuda/integer_runner.hpp), the same with the host's conversions around it. They
// allocate nothing; the two driver calls may take the driver's own locks, so those are counted
// and printed, not held to zero.
TEST(CudaResident, GraphFormRunNeverAllocates) {
  SKIP_WITHOUT_GPU();
  const std::string int8 = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/tcn/int8.tflite";
  struct Subject {
    std::string model;
    RecurrentMode mode;
    const char* isa;
  };
  for (const Subject& t : {Subject{"tcn", RecurrentMode::Window, "cuda-graph"},
                           Subject{"gru_window", RecurrentMode::Stream, "cuda-graph"},
                           Subject{int8, RecurrentMode::Window, "cuda-int8"}}) {
    const RunPathCounts c = count_run_path(t.model, t.mode, t.isa == std::string("cuda-int8") ? "" : "graph", t.isa, 2000);
    EXPECT_EQ(c.allocs, 0) << t.model;
    std::printf("%s: %ld lock calls in 2000 runs (the driver's)\n", t.model.c_str(), c.locks);
    EXPECT_TRUE(c.finite) << t.model;
  }
}

// The resident program kernel's run path (any model, here tcn and a GRU stream): stores and loads
// to pinned memory only: no allocation, no lock, not even the driver's. Before the tagged form, after
// the rest: it had not run on a GPU when it was written.
TEST(CudaResident, ZyProgramFormRunNeverAllocatesOrLocks) {
  SKIP_WITHOUT_GPU();
  for (const auto& [model, mode] : {std::pair{"tcn", RecurrentMode::Window}, std::pair{"gru_window", RecurrentMode::Stream}}) {
    const RunPathCounts c = count_run_path(model, mode, "program", "cuda-program", 2000);
    EXPECT_EQ(c.allocs, 0) << model;
    EXPECT_EQ(c.locks, 0) << model;
    EXPECT_TRUE(c.finite) << model;
  }
}

// The register form's wide shape (kWideLanes weights per thread) holds lstm_window's one layer in
// a single block, so its steps take block barriers; a two-layer stack is refused it (its weights
// would spill out of the registers). Written after the 2026-12-04 run, so late in this file.
TEST(CudaResident, ZxWideShapeHoldsOneLayerInOneBlock) {
  SKIP_WITHOUT_GPU();
  for (const Case& c : kCases) {
    CaseStack k = case_stack(c, "registers");
    ASSERT_EQ(k.s.error, "");
    k.opt.lanes = cuda::kWideLanes;
    if (k.s.stack.lstm.size() != 1) {
      EXPECT_THROW(cuda::ResidentLstm::start(k.s.stack, k.opt), std::runtime_error) << c.model;
      continue;
    }
    auto kernel = cuda::ResidentLstm::start(k.s.stack, k.opt);
    EXPECT_EQ(kernel->layout().lanes, cuda::kWideLanes);
    EXPECT_EQ(kernel->layout().cluster, 1) << "lstm_window's 256 rows of 74 columns fit one block at 40 lanes";
    expect_kernel_matches_keras(c, "wide", *kernel);
  }
}

// The tagged form (no cluster barrier per layer and step) has not run on a GPU yet; last in this
// file so that, should it hang, every other test has already reported.
TEST(CudaResident, ZzTaggedFormMatchesKeras) {
  SKIP_WITHOUT_GPU();
  for (const Case& c : kCases) {
    const CaseStack k = case_stack(c, "tagged");
    ASSERT_EQ(k.s.error, "");
    auto kernel = cuda::ResidentLstm::start(k.s.stack, k.opt);
    EXPECT_EQ(kernel->layout().form, "tagged");
    expect_kernel_matches_keras(c, "tagged", *kernel);
  }
}

}  // namespace
}  // namespace tickinfer
