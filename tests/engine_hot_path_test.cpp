// The run path's promises, checked rather than assumed:
//  * no heap allocation: global operator new and malloc/calloc/realloc are replaced by counters;
//  * no lock: pthread_mutex_lock is interposed and counted;
//  * no syscall: a forked child enters seccomp strict mode (only read/write/exit allowed; any
//    other syscall kills it) and then runs every plan many times.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <random>

#include "engine/cuda_plan.hpp"
#include "kernels/kernel_set.hpp"
#include "tickinfer/tickinfer.hpp"

#include "support/bench_quantize.hpp"
#include "support/counting_allocator.hpp"
#include "model/magnitude_prune.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

struct Subject {
  std::string label;
  Plan plan;
  std::vector<std::vector<float>> in, out;
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
};

std::vector<Subject> make_subjects() {
  const std::string dir = std::string(::tickinfer::test::source_dir()) + "/bench/models/";
  std::vector<Subject> out;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  // A subject: the plan, random inputs and output buffers of its sizes.
  auto add = [&](std::string label, Plan plan) {
    Subject s{std::move(label), std::move(plan), {}, {}, {}, {}};
    for (size_t i = 0; i < s.plan.num_inputs(); ++i) {
      s.in.emplace_back(s.plan.input_size(i));
      for (float& v : s.in.back()) v = nd(rng);
    }
    for (size_t o = 0; o < s.plan.num_outputs(); ++o) s.out.emplace_back(s.plan.output_size(o));
    out.push_back(std::move(s));
  };
  for (const char* name : {"mlp_small", "mlp_large", "lstm_window", "gru_window", "tcn", "lstm_tiny"}) {
    const Model model = Model::load(dir + name + "/model.keras");
    for (kernels::Isa isa : {kernels::Isa::Scalar, kernels::Isa::Portable, kernels::Isa::Avx2,
                              kernels::Isa::Avx512}) {
      if (!kernels::isa_supported(isa)) continue;
      for (RecurrentMode mode : {RecurrentMode::Window, RecurrentMode::Stream}) {
        const bool recurrent = std::string(name).find("lstm") == 0 || std::string(name).find("gru") == 0;
        if (mode == RecurrentMode::Stream && !recurrent) continue;
        CompileOptions opt;
        opt.isa = kernels::isa_name(isa);
        opt.mode = mode;
        add(std::string(name) + "/" + opt.isa + (mode == RecurrentMode::Stream ? "/stream" : ""), compile(model, opt));
      }
    }
  }
  // A Conv2D stack (patches gathered with padding, dilation, a folded BatchNorm), 2-D pooling,
  // depthwise and separable convolutions, a small DeepLOB (Conv2D blocks, an Inception module, an
  // LSTM), attention (self with a causal mask, cross, a key apart; a TransLOB whose attention
  // layer is called twice), padding and axis moves, Keras 3 operations with array arguments, and
  // the multi-horizon DeepLOBs (LSTMs started from other LSTMs' states, Dot products), on each
  // kernel set.
  for (const char* name :
       {"conv2d_k3", "pool2d_k3", "depthwise_k3", "deeplob_tiny_k3", "attention_k3", "translob_tiny_k3", "layout_k3",
        "array_operations_k3", "attention_window_k3", "attention_stream_k3", "deeplob_seq2seq_tiny_k3",
        "deeplob_attention_tiny_k3"}) {
    const Model model =
        Model::load(std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/" + name + "/model.keras");
    for (kernels::Isa isa : {kernels::Isa::Scalar, kernels::Isa::Portable, kernels::Isa::Avx2, kernels::Isa::Avx512}) {
      if (!kernels::isa_supported(isa)) continue;
      CompileOptions opt;
      opt.isa = kernels::isa_name(isa);
      add(std::string(name) + "/" + opt.isa, compile(model, opt));
      if (std::string(name) == "attention_stream_k3") {  // the key/value cache, one tick per run
        opt.mode = RecurrentMode::Stream;
        add(std::string(name) + "/" + opt.isa + "/stream", compile(model, opt));
      }
    }
  }
  // Pruned models on their block-sparse kernels (window and stream).
  for (const char* name : {"mlp_large", "lstm_tiny"}) {
    const Model model = Model::from_graph(magnitude_pruned(Model::load(dir + name + "/model.keras").graph(), 0.8, true));
    for (RecurrentMode mode : {RecurrentMode::Window, RecurrentMode::Stream}) {
      if (mode == RecurrentMode::Stream && std::string(name) != "lstm_tiny") continue;
      CompileOptions opt;
      opt.sparse = SparseMode::Sparse;
      opt.mode = mode;
      add(std::string(name) + "/pruned80-sparse" + (mode == RecurrentMode::Stream ? "/stream" : ""), compile(model, opt));
    }
  }
  // Pruned models quantized by the CLI (when built), on the block-sparse int8 FULLY_CONNECTED and
  // LSTM gates (forced, and the measured choice); the LSTM streamed.
  struct Quantized {
    const char* model;
    const char* mode;
    RecurrentMode recurrent;
    bool stream_file = false;  // quantize --stream: one step per call
  };
  for (const Quantized q : {Quantized{"mlp_large_pruned80", "int8", RecurrentMode::Window},
                            Quantized{"lstm_tiny_pruned80", "int8", RecurrentMode::Stream},
                            Quantized{"lstm_tiny_pruned80", "dynamic", RecurrentMode::Stream},
                            Quantized{"gru_window", "dynamic", RecurrentMode::Window},  // SEQUENCE_GRU, exact
                            Quantized{"gru_window", "int8", RecurrentMode::Window},     // own arithmetic
                            Quantized{"gru_window", "int8", RecurrentMode::Stream, true},  // tick by tick
                            Quantized{"gru_window", "bf16", RecurrentMode::Window}}) {  // own arithmetic
    const std::string tkq = test::quantize_bench_model(q.model, q.mode, "engine_hot_path", q.stream_file);
    if (tkq.empty()) continue;  // no CLI; a failed quantize is caught by the subject count below
    const Model model = Model::load(tkq);
    for (SparseMode sm : {SparseMode::Sparse, SparseMode::Auto}) {
      CompileOptions opt;
      opt.sparse = sm;
      opt.mode = q.recurrent;
      Subject s{std::string(q.model) + ".tkq/" + q.mode + (q.stream_file ? "-stream-" : "-") +
                    (sm == SparseMode::Sparse ? "sparse" : "auto"),
                compile(model, opt), {}, {}, {}, {}};
      s.in.emplace_back(s.plan.input_size(0));
      for (float& v : s.in.back()) v = nd(rng);
      s.out.emplace_back(s.plan.output_size(0));
      out.push_back(std::move(s));
    }
    std::filesystem::remove(tkq);
  }
  // TFLite models (float, dynamic-range, full int8) run behind the same Plan API: through the
  // tensor-program interpreter, or lifted to the graph engine. Every fixture must compile; the
  // GRUs' WHILE loops run as SEQUENCE_GRU (int8 conversion of a GRU crashes the converter).
  const std::string tfl = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/";
  for (const char* name : {"mlp_small", "lstm_window", "lstm_tiny", "tcn", "conv_pool", "lnorm", "merge", "gru", "gru_wide",
                           "gru_wide_before"}) {
    // "float" lifts to the graph engine where it can; "float-interpreter" keeps it on the
    // interpreter (LoadOptions::tflite_engine).
    for (const std::string variant : {"float", "float-interpreter", "dynamic", "int8"}) {
      const std::string mode = variant.substr(0, variant.find('-'));
      if (mode == "int8" && std::string(name).rfind("gru", 0) == 0) continue;
      const Model model = [&] {
        const LoadOptions load{variant == "float-interpreter" ? TfliteEngine::Interpreter : TfliteEngine::Auto};
        return Model::load(tfl + name + "/" + mode + ".tflite", load);
      }();
      for (const char* isa : {"scalar", ""}) {
        CompileOptions opt;
        opt.isa = isa;
        add(std::string(name) + "/" + variant + ".tflite/" + (*isa ? isa : "best"), compile(model, opt));
      }
    }
  }
  for (Subject& s : out) {  // pointers taken after the vector stops moving
    for (auto& v : s.in) s.in_ptrs.push_back(v.data());
    for (auto& v : s.out) s.out_ptrs.push_back(v.data());
  }
  return out;
}

TEST(HotPath, RunNeverAllocatesOrLocks) {
  std::vector<Subject> subjects = make_subjects();
  ASSERT_GE(subjects.size(), 6u + 42u);
  if (test::cli_built()) {  // the quantized pruned subjects are there
    EXPECT_EQ(6, std::count_if(subjects.begin(), subjects.end(),
                               [](const Subject& s) { return s.label.find("_pruned80.tkq/") != std::string::npos; }));
    EXPECT_EQ(8, std::count_if(subjects.begin(), subjects.end(),
                               [](const Subject& s) { return s.label.find("gru_window.tkq/") != std::string::npos; }));
  }
  for (Subject& s : subjects) {
    s.plan.run(s.in_ptrs.data(), s.out_ptrs.data());  // first run outside the counted region
    g_allocs = 0;
    g_locks = 0;
    g_counting = true;
    for (int i = 0; i < 200; ++i) {
      s.plan.run(s.in_ptrs.data(), s.out_ptrs.data());
      s.plan.reset_state();
    }
    g_counting = false;
    EXPECT_EQ(g_allocs.load(), 0) << s.label;
    EXPECT_EQ(g_locks.load(), 0) << s.label;
  }
}

#if TICKINFER_CUDA_BACKEND  // a build without nvcc has no CUDA backend to check
// The CUDA backend's integer program (int8 TFLite files) behind a ProgramPlan: its host executor
// here, with the host's share of a GPU run around it (the conversions, a float input's QUANTIZE).
// The GPU runner's own promise is checked where a GPU is (cuda_integer_program_test).
TEST(HotPath, IntegerProgramRunNeverAllocatesOrLocks) {
  const std::string tfl = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/";
  int checked = 0;
  const std::string tkq = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tkq/mlp_small_int8.tkq";
  for (const std::string name : {tfl + "mlp_small/int8.tflite", tfl + "tcn/int8.tflite", tfl + "merge/int8.tflite",
                                 tfl + "lnorm/int8.tflite", tfl + "lstm_window/int8.tflite", tkq}) {
    const Model model = Model::load(name);
    auto plan = engine::compile_cuda_integer_on_host(model.shared_program(), CompileOptions{}, false);
    std::vector<std::vector<float>> in, out;
    std::vector<const float*> in_ptrs;
    std::vector<float*> out_ptrs;
    for (const Shape& shape : plan->input_shapes()) in.emplace_back(size_t(shape_size(shape)), 0.5f);
    for (const Shape& shape : plan->output_shapes()) out.emplace_back(size_t(shape_size(shape)), 0.0f);
    for (auto& v : in) in_ptrs.push_back(v.data());
    for (auto& v : out) out_ptrs.push_back(v.data());
    plan->run(in_ptrs.data(), out_ptrs.data());
    g_allocs = 0;
    g_locks = 0;
    g_counting = true;
    for (int i = 0; i < 50; ++i) plan->run(in_ptrs.data(), out_ptrs.data());
    g_counting = false;
    EXPECT_EQ(g_allocs.load(), 0) << name;
    EXPECT_EQ(g_locks.load(), 0) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}
#endif

TEST(HotPath, CountersSeeAllocationsAndLocks) {
  // The instruments themselves work: without this, the test above could pass vacuously.
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  auto* p = new std::vector<int>(100);
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  g_counting = false;
  delete p;
  EXPECT_GE(g_allocs.load(), 1);
  EXPECT_EQ(g_locks.load(), 1);
}

// Runs fn in a forked child under seccomp strict mode; true if it finished without being
// killed for a forbidden syscall.
template <class Fn>
bool runs_without_syscalls(Fn fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) _exit(3);
    fn();
    syscall(SYS_exit, 0);  // plain _exit uses exit_group, which strict mode forbids
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Plan::run_rows, the batched form of run() for feed-forward plans: the same guarantees, and
// no syscall (strict seccomp).
TEST(HotPath, RunRowsNeverAllocatesLocksOrMakesSyscalls) {
  for (const char* m : {"/bench/models/mlp_small/model.keras", "/bench/models/mlp_large/model.keras"}) {
    Plan plan = compile(Model::load(std::string(::tickinfer::test::source_dir()) + m));
    plan.reserve_rows(8);
    std::vector<float> x(8 * plan.input_size(0), 0.25f), y(8 * plan.output_size(0));
    plan.run_rows(x.data(), 8, y.data());  // first call outside the counted region
    g_allocs = 0;
    g_locks = 0;
    g_counting = true;
    for (int i = 0; i < 200; ++i) plan.run_rows(x.data(), 1 + i % 8, y.data());
    g_counting = false;
    EXPECT_EQ(g_allocs.load(), 0) << m;
    EXPECT_EQ(g_locks.load(), 0) << m;
    EXPECT_TRUE(runs_without_syscalls([&] {
      for (int i = 0; i < 100; ++i) plan.run_rows(x.data(), 1 + i % 8, y.data());
    })) << m;
  }
}

// Incremental window updates: windows sliding one row per run (every slide, and the copies back
// to the top of each kept tensor's room every T slides), then a window that did not slide.
TEST(HotPath, IncrementalSlidesNeverAllocateLockOrMakeSyscalls) {
  const std::string root = ::tickinfer::test::source_dir();
  for (const std::string& m : {root + "/bench/book_models/deeplob/model.keras", root + "/tests/fixtures/deeplob_tiny_k3/model.keras",
                              root + "/tests/fixtures/conv2d_k3/model.keras"}) {
    CompileOptions opt;
    opt.incremental = true;
    Plan plan = compile(Model::load(m), opt);
    const size_t T = static_cast<size_t>(plan.input_shape(0)[0]), row = plan.input_size(0) / T;
    std::vector<float> seq((T + 400) * row), y(plan.output_size(0));
    for (size_t k = 0; k < seq.size(); ++k) seq[k] = static_cast<float>((k * 2654435761u) % 1000) / 500.0f - 1.0f;
    const auto window = [&](size_t start) { plan.run(seq.data() + start * row, y.data()); };
    window(0);  // the first (whole) run outside the counted region
    g_allocs = 0;
    g_locks = 0;
    g_counting = true;
    for (size_t i = 1; i <= 250; ++i) window(i);
    window(7);
    g_counting = false;
    EXPECT_EQ(g_allocs.load(), 0) << m;
    EXPECT_EQ(g_locks.load(), 0) << m;
    EXPECT_TRUE(runs_without_syscalls([&] {
      for (size_t i = 251; i <= 400; ++i) window(i);
    })) << m;
  }
}

TEST(HotPath, RunMakesNoSyscalls) {
  std::vector<Subject> subjects = make_subjects();
  EXPECT_TRUE(runs_without_syscalls([&] {
    for (Subject& s : subjects) {
      for (int i = 0; i < 100; ++i) s.plan.run(s.in_ptrs.data(), s.out_ptrs.data());
    }
  }));
  // And the harness does catch one.
  EXPECT_FALSE(runs_without_syscalls([] { (void)syscall(SYS_getpid); }));
}

}  // namespace
}  // namespace tickinfer
