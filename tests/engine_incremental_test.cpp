// Incremental window updates (CompileOptions::incremental): over windows that slide one row at a
// time, the incremental plan must give what Keras gives on each window (fixtures with a "slide"
// sequence, tools/make_fixtures.py), and what the whole-window plan gives on every kernel set;
// a window that did not slide runs whole; the slide counter counts exactly the slid runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/graph_plan.hpp"
#include "formats/npy.hpp"
#include "kernels/kernel_set.hpp"
#include "support/expect_close.hpp"
#include "support/fixture_manifest.hpp"
#include "support/source_paths.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

using testing::FixtureCase;

constexpr kernels::Isa kIsas[] = {kernels::Isa::Scalar, kernels::Isa::Portable, kernels::Isa::Avx2, kernels::Isa::Avx512};

std::unique_ptr<engine::GraphPlan> graph_plan(const Model& m, kernels::Isa isa, bool incremental, int window = 0) {
  CompileOptions opt;
  opt.isa = kernels::isa_name(isa);
  opt.incremental = incremental;
  opt.window_length = window;
  return engine::compile_graph(m.graph(), opt);
}

// One output of `plan` on the window starting at row `start` of `seq` (rows of `row` floats).
std::vector<float> run_at(engine::GraphPlan& plan, const std::vector<float>& seq, size_t row, int start) {
  const size_t n = static_cast<size_t>(shape_size(plan.output_shapes()[0]));
  std::vector<float> y(n);
  const float* in = seq.data() + static_cast<size_t>(start) * row;
  float* out = y.data();
  plan.run(&in, &out);
  return y;
}

// Relative agreement with a floor: |a - b| <= 1e-5 (|b| + max|b|) elementwise.
void expect_same_window(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  float scale = 0;
  for (float v : want) scale = std::max(scale, std::fabs(v));
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_LE(std::fabs(got[k] - want[k]), 1e-5f * (std::fabs(want[k]) + scale)) << what << " element " << k;
  }
}

// --- Keras on every window of a sliding sequence ---

struct Param {
  FixtureCase c;
  kernels::Isa isa;
};
void PrintTo(const Param& p, std::ostream* os) { *os << p.c.name << "/" << kernels::isa_name(p.isa); }

std::vector<Param> slide_params() {
  std::vector<Param> out;
  for (const FixtureCase& c : testing::load_manifest(testing::fixtures_dir())) {
    if (c.slide_in.empty()) continue;
    for (kernels::Isa isa : kIsas) out.push_back({c, isa});
  }
  return out;
}

class SlideReference : public ::testing::TestWithParam<Param> {};

TEST_P(SlideReference, EveryWindowMatchesKerasAndTheWholeRun) {
  const Param& p = GetParam();
  if (!kernels::isa_supported(p.isa)) GTEST_SKIP() << kernels::isa_name(p.isa) << " not supported here";
  const Model model = Model::load(p.c.file);
  auto inc = graph_plan(model, p.isa, true, p.c.window_length);
  auto whole = graph_plan(model, p.isa, false, p.c.window_length);
  const formats::NpyArray x = formats::read_npy(p.c.slide_in);    // [N, T + S, features...]
  const formats::NpyArray want = formats::read_npy(p.c.slide_out);  // [N, S + 1, out...]
  const int64_t T = inc->input_shapes()[0][0];
  const size_t row = static_cast<size_t>(shape_size(inc->input_shapes()[0]) / T);
  const int64_t N = x.shape[0], windows = want.shape[1];
  ASSERT_EQ(x.shape[1], T + windows - 1);
  const size_t out_n = static_cast<size_t>(shape_size(inc->output_shapes()[0]));
  for (int64_t n = 0; n < N; ++n) {
    const std::vector<float> seq(x.data.begin() + n * (T + windows - 1) * row, x.data.begin() + (n + 1) * (T + windows - 1) * row);
    inc->reset_state();
    const uint64_t before = inc->slides();
    for (int64_t w = 0; w < windows; ++w) {
      const std::vector<float> got = run_at(*inc, seq, row, static_cast<int>(w));
      const std::vector<float> keras(want.data.begin() + (n * windows + w) * out_n, want.data.begin() + (n * windows + w + 1) * out_n);
      testing::expect_close(got.data(), keras.data(), out_n, p.c.rtol, p.c.slide_atol, "window " + std::to_string(w));
      expect_same_window(got, run_at(*whole, seq, row, static_cast<int>(w)), "window " + std::to_string(w));
    }
    EXPECT_EQ(inc->slides() - before, static_cast<uint64_t>(windows - 1)) << "the first window runs whole, every other slides";
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SlideReference, ::testing::ValuesIn(slide_params()),
                         [](const auto& info) { return info.param.c.name + "_" + kernels::isa_name(info.param.isa); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SlideReference);

// --- DeepLOB at its published sizes against its own whole-window plan ---

std::string deeplob() { return std::string(::tickinfer::test::source_dir()) + "/bench/book_models/deeplob/model.keras"; }

TEST(IncrementalWindow, DeepLobSlidesJumpsAndResets) {
  const Model model = Model::load(deeplob());
  const kernels::Isa isa = kernels::resolve_isa("");
  auto inc = graph_plan(model, isa, true);
  auto whole = graph_plan(model, isa, false);
  const int T = inc->input_shapes()[0][0];
  const size_t row = static_cast<size_t>(shape_size(inc->input_shapes()[0]) / T);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> seq(static_cast<size_t>(T + 40) * row);
  for (float& v : seq) v = normal(rng);
  // Slides 0..19, a jump back to 5 (runs whole), slides 6..9, a reset, then 10 (runs whole).
  std::vector<int> starts;
  for (int s = 0; s < 20; ++s) starts.push_back(s);
  for (int s = 5; s < 10; ++s) starts.push_back(s);
  starts.push_back(-1);  // reset_state
  for (int s = 10; s < 13; ++s) starts.push_back(s);
  uint64_t want_slides = 0;
  int last = -2;
  for (int s : starts) {
    if (s < 0) {
      inc->reset_state();
      last = -2;
      continue;
    }
    const uint64_t before = inc->slides();
    expect_same_window(run_at(*inc, seq, row, s), run_at(*whole, seq, row, s), "start " + std::to_string(s));
    const uint64_t slid = s == last + 1 ? 1 : 0;
    EXPECT_EQ(inc->slides() - before, slid) << "start " << s;
    want_slides += slid;
    last = s;
  }
  EXPECT_EQ(inc->slides(), want_slides);
  // The convolution block updates; the LSTM and what follows run whole, saying why.
  const std::string d = inc->describe();
  EXPECT_NE(d.find("mode window, incremental"), std::string::npos) << d;
  EXPECT_NE(d.find("conv2d_12  out=100x1 taps=5x1x64 filters=64 stride=1x1 dilation=1x1  [slide: recomputes 8 + 15 of 100 rows]"),
            std::string::npos) << d;
  EXPECT_NE(d.find("lstm  steps=100 in=192 units=64  [slide: whole, a recurrent layer's state runs from the window's first row]"),
            std::string::npos) << d;
}

TEST(IncrementalWindow, AChangeAnywhereInTheOldRowsRunsWhole) {
  const Model model = Model::load(deeplob());
  auto inc = graph_plan(model, kernels::resolve_isa(""), true);
  auto whole = graph_plan(model, kernels::resolve_isa(""), false);
  const int T = inc->input_shapes()[0][0];
  const size_t row = static_cast<size_t>(shape_size(inc->input_shapes()[0]) / T);
  std::vector<float> seq(static_cast<size_t>(T + 2) * row, 0.25f);
  for (size_t k = 0; k < seq.size(); ++k) seq[k] = static_cast<float>((k * 7919) % 1000) / 500.0f - 1.0f;
  (void)run_at(*inc, seq, row, 0);
  seq[row * 50 + 3] += 1.0f;  // an old row edited: window 1 is no longer window 0 moved by one
  const uint64_t before = inc->slides();
  expect_same_window(run_at(*inc, seq, row, 1), run_at(*whole, seq, row, 1), "edited");
  EXPECT_EQ(inc->slides(), before);
}

TEST(IncrementalWindow, StreamModeAndTensorProgramsAreRefused) {
  const Model model = Model::load(deeplob());
  CompileOptions opt;
  opt.incremental = true;
  opt.mode = RecurrentMode::Stream;
  try {
    (void)compile(model, opt);
    ADD_FAILURE() << "stream mode compiled incrementally";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("window-mode option"), std::string::npos) << e.what();
  }
  const std::string tfl = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/mlp_small/int8.tflite";
  CompileOptions o2;
  o2.incremental = true;
  try {
    (void)compile(Model::load(tfl), o2);
    ADD_FAILURE() << "an int8 TFLite program compiled incrementally";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run on graph plans"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tickinfer
