// Stream mode of the recurrent TFLite fixtures lifted to the graph engine: the output after step
// t of a stream equals the window output over the first t steps (the lifted graph with its input
// shortened to t steps), and at the full window the TFLite reference (expected_ref). The tf_keras
// fused LSTM clips its cell state at 10; on inputs large enough that the clip acts, the lifted
// stream follows the interpreter's stream (TFLite's arithmetic, checked against TFLite by
// quant_tflite_reference_test), and without the clip it would not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "formats/tflite/tflite_graph_lift.hpp"
#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

const std::string kDir = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/";

std::shared_ptr<const tfl::Program> load_program(const std::string& model) {
  const std::string path = kDir + model + "/float.tflite";
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  return std::make_shared<const tfl::Program>(formats::load_tflite(bytes.data(), bytes.size(), path));
}

Graph lifted(const tfl::Program& p) {
  formats::TfliteLift lift = formats::lift_tflite_program(p);
  if (!lift.graph) throw Error("not lifted: " + lift.refusal);
  return *lift.graph;
}

// The lifted graph with its sequence input `steps` long, run in window mode over x[0, steps).
std::vector<float> window_over_prefix(const Graph& g, const float* x, int steps) {
  Graph prefix = g;
  prefix.nodes[prefix.inputs[0]].shape[0] = steps;
  Plan plan = compile(Model::from_graph(prefix));
  std::vector<float> y(plan.output_size(0));
  plan.run(x, y.data());
  return y;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

double max_abs(const std::vector<float>& a) {
  double m = 1e-6;
  for (float v : a) m = std::max(m, std::fabs(static_cast<double>(v)));
  return m;
}

TEST(TfliteLiftStream, WindowModelStepsMatchPrefixWindowsAndTheReference) {
  const auto program = load_program("lstm_window");
  const Graph g = lifted(*program);
  const Shape in = g.nodes[g.inputs[0]].shape;  // [T, F]
  const int T = in[0], F = in[1];
  const formats::NpyArray x = formats::read_npy(kDir + "lstm_window/inputs_float_0.npy");
  const formats::NpyArray want = formats::read_npy(kDir + "lstm_window/expected_ref_float_0.npy");
  CompileOptions opt;
  opt.mode = RecurrentMode::Stream;
  Plan stream = compile(Model::from_graph(g), opt);
  ASSERT_EQ(stream.input_size(0), static_cast<size_t>(F));
  const size_t out = stream.output_size(0);
  for (int r = 0; r < 3; ++r) {
    const float* row = x.data.data() + static_cast<size_t>(r) * T * F;
    stream.reset_state();
    std::vector<float> y(out);
    for (int t = 1; t <= T; ++t) {
      stream.run(row + static_cast<size_t>(t - 1) * F, y.data());
      if (t == 1 || t == 5 || t == T / 2 || t == T) {
        const std::vector<float> w = window_over_prefix(g, row, t);
        EXPECT_LE(max_abs_diff(y, w), 1e-5 * max_abs(w)) << "row " << r << " step " << t;
      }
    }
    const std::vector<float> ref(want.data.begin() + static_cast<ptrdiff_t>(r * out),
                                 want.data.begin() + static_cast<ptrdiff_t>((r + 1) * out));
    EXPECT_LE(max_abs_diff(y, ref), 1e-5 * max_abs(ref)) << "row " << r << " against TFLite";
  }
}

// lstm_tiny is a one-step model ([1, 128] per run) made for streaming: rows of the fixture
// inputs are consecutive steps.
TEST(TfliteLiftStream, StreamModelMatchesPrefixWindowsAndTheInterpreterStream) {
  const auto program = load_program("lstm_tiny");
  const Graph g = lifted(*program);
  const formats::NpyArray x = formats::read_npy(kDir + "lstm_tiny/inputs_float_0.npy");
  const size_t F = 128;
  const int steps = std::min<int>(40, static_cast<int>(x.data.size() / F));
  CompileOptions opt;
  opt.mode = RecurrentMode::Stream;
  Plan stream = compile(Model::from_graph(g), opt);
  Plan interp = compile(Model::from_program(program), opt);
  ASSERT_EQ(interp.input_size(0), F);
  std::vector<float> y(stream.output_size(0)), yi(interp.output_size(0));
  for (int t = 1; t <= steps; ++t) {
    const float* step = x.data.data() + static_cast<size_t>(t - 1) * F;
    stream.run(step, y.data());
    interp.run(step, yi.data());
    EXPECT_LE(max_abs_diff(y, yi), 1e-5 * max_abs(yi)) << "step " << t;
    if (t == 1 || t == 7 || t == steps) {
      const std::vector<float> w = window_over_prefix(g, x.data.data(), t);
      EXPECT_LE(max_abs_diff(y, w), 1e-5 * max_abs(w)) << "step " << t;
    }
  }
}

// The largest |difference| between a graph stream and the interpreter's over `steps` steps of
// inputs scaled by `gain`.
double stream_gap(const Graph& g, const std::shared_ptr<const tfl::Program>& program, float gain, int steps,
                  double* scale) {
  CompileOptions opt;
  opt.mode = RecurrentMode::Stream;
  Plan stream = compile(Model::from_graph(g), opt);
  Plan interp = compile(Model::from_program(program), opt);
  const formats::NpyArray x = formats::read_npy(kDir + "lstm_tiny/inputs_float_0.npy");
  const size_t F = 128, rows = x.data.size() / F;
  std::vector<float> step(F), y(stream.output_size(0)), yi(interp.output_size(0));
  double gap = 0;
  *scale = 1e-6;
  for (int t = 0; t < steps; ++t) {
    // One row held at a high gain for the first half pushes saturated cells the same way each
    // step (|c| grows by up to 1 per step, far past the clip, where tanh(c) is 1 either way);
    // then ordinary rows let the cells decay, and a clipped cell gets back into tanh's range
    // sooner than an unclipped one.
    const bool held = t < steps / 2;
    const float* src = x.data.data() + static_cast<size_t>(held ? 0 : t % rows) * F;
    for (size_t k = 0; k < F; ++k) step[k] = (held ? gain : 1.0f) * src[k];
    stream.run(step.data(), y.data());
    interp.run(step.data(), yi.data());
    gap = std::max(gap, max_abs_diff(y, yi));
    *scale = std::max(*scale, max_abs(yi));
  }
  return gap;
}

TEST(TfliteLiftStream, CellClipIsAppliedAsTfliteDoes) {
  const auto program = load_program("lstm_tiny");
  Graph g = lifted(*program);
  int clipped = 0;
  for (const Node& n : g.nodes) {
    if (n.kind == OpKind::LSTM) {
      EXPECT_EQ(n.cell_clip, 10.0f) << n.name;  // tf_keras writes 10
      ++clipped;
    }
  }
  ASSERT_EQ(clipped, 2);
  double scale = 0;
  const double with_clip = stream_gap(g, program, 100.0f, 200, &scale);
  EXPECT_LE(with_clip, 1e-5 * scale);
  for (Node& n : g.nodes) n.cell_clip = 0.0f;
  const double without_clip = stream_gap(g, program, 100.0f, 200, &scale);
  EXPECT_GT(without_clip, 1e-3 * scale) << "these inputs never reach the clip, so the test shows nothing";
  RecordProperty("gap_with_clip", std::to_string(with_clip / scale));
  RecordProperty("gap_without_clip", std::to_string(without_clip / scale));
}

}  // namespace
}  // namespace tickinfer
