// The quantizer's one-step-per-call lowering (`tickinfer quantize --stream`,
// quantizer::LowerOptions::one_step_per_call) keeps only programs stream mode runs and that equal
// the model tick by tick: a non-sequence input, a model without recurrent state, and a layer that
// joins time steps (a Concatenate along time, spelled axis 1 or -2) are refused by name. Through
// quantize_model, the error table carries the state from tick to tick: on the first sequence of a
// fixture's stream file the float program's outputs are Keras' stateful ones (their largest
// magnitude is the table's reference), which a state reset at every tick would not give.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "model/graph.hpp"
#include "quantizer/lower_graph.hpp"
#include "quantizer/quantize_session.hpp"
#include "support/fixture_manifest.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

std::vector<float> seeded(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

Node input(const std::string& name, Shape shape) {
  Node n;
  n.name = name;
  n.kind = OpKind::Input;
  n.shape = std::move(shape);
  return n;
}

Node lstm(const std::string& name, int from, int in, int units, bool sequences) {
  Node n;
  n.name = name;
  n.kind = OpKind::LSTM;
  n.units = units;
  n.inputs = {from};
  n.return_sequences = sequences;
  n.activation.kind = ActKind::Tanh;
  n.recurrent_activation.kind = ActKind::Sigmoid;
  n.weights = {{{in, 4 * units}, seeded(static_cast<size_t>(in) * 4 * units, 1)},
               {{units, 4 * units}, seeded(static_cast<size_t>(units) * 4 * units, 2)},
               {{4 * units}, seeded(4 * static_cast<size_t>(units), 3)}};
  return n;
}

Node dense(const std::string& name, int from, int in, int units) {
  Node n;
  n.name = name;
  n.kind = OpKind::Dense;
  n.units = units;
  n.inputs = {from};
  n.weights = {{{in, units}, seeded(static_cast<size_t>(in) * units, 4)}, {{units}, seeded(units, 5)}};
  return n;
}

void expect_refused(const Graph& g, const std::string& fragment) {
  quantizer::LowerOptions o;
  o.one_step_per_call = true;
  try {
    quantizer::lower_graph(g, o);
    FAIL() << "lowered one step per call; expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(OneStepPerCall, RefusesWhatStreamModeCannotRunOrWouldRunDifferently) {
  Graph ok;  // [5, 3] -> LSTM(4) -> Dense(2): lowers, input [1, 1, 3]
  ok.nodes = {input("x", {5, 3}), lstm("lstm", 0, 3, 4, false), dense("head", 1, 4, 2)};
  ok.inputs = {0};
  ok.outputs = {2};
  quantizer::LowerOptions o;
  o.one_step_per_call = true;
  const tfl::Program p = quantizer::lower_graph(ok, o);
  EXPECT_EQ(p.tensors[static_cast<size_t>(p.inputs.at(0))].shape, (tfl::Shape{1, 1, 3}));

  Graph vector_input = ok;  // a second input of features: not one tick per call
  vector_input.nodes.push_back(input("v", {4}));
  vector_input.inputs.push_back(3);
  expect_refused(vector_input, "input 'v' is [4], not a sequence [timesteps, features]");

  Graph dense_only;  // no state to carry
  dense_only.nodes = {input("x", {5, 3}), dense("head", 0, 3, 2)};
  dense_only.inputs = {0};
  dense_only.outputs = {1};
  expect_refused(dense_only, "the model has no recurrent layer");

  for (const int axis : {1, -2}) {  // two sequences joined along time
    Graph joined;
    Node cat;
    cat.name = "cat";
    cat.kind = OpKind::Concatenate;
    cat.inputs = {1, 2};
    cat.axis = axis;
    joined.nodes = {input("x", {5, 3}), lstm("a", 0, 3, 4, true), lstm("b", 0, 3, 4, true), cat,
                    lstm("c", 3, 4, 4, false)};
    joined.inputs = {0};
    joined.outputs = {4};
    expect_refused(joined, "layer 'cat' (");
  }
}

TEST(OneStepPerCall, TheErrorTableCarriesTheStateFromTickToTick) {
  std::vector<testing::FixtureCase> cases = testing::load_manifest(testing::fixtures_dir());
  const auto it = std::find_if(cases.begin(), cases.end(), [](const auto& c) { return c.name == "gru_reset_after_k3"; });
  ASSERT_NE(it, cases.end());
  ASSERT_FALSE(it->stream_in.empty());
  quantizer::LowerOptions lo;
  lo.one_step_per_call = true;
  const tfl::Program f = quantizer::lower_graph(formats::load_any_model_file(it->file).graph, lo);
  const formats::NpyArray in = formats::read_npy(it->stream_in), want = formats::read_npy(it->stream_out);
  const size_t ticks = static_cast<size_t>(in.shape.at(1)), features = static_cast<size_t>(in.shape.at(2));
  const size_t outs = want.data.size() / (static_cast<size_t>(in.shape.at(0)) * ticks);
  quantizer::SampleSet first;  // the first sequence's ticks, from a zero state as Keras ran them
  first.count = ticks;
  first.per_sample = features;
  first.values.assign(in.data.begin(), in.data.begin() + static_cast<std::ptrdiff_t>(ticks * features));
  double keras_max = 0.0, first_tick_max = 0.0;
  for (size_t i = 0; i < ticks * outs; ++i) keras_max = std::max(keras_max, std::fabs(static_cast<double>(want.data[i])));
  for (size_t i = 0; i < outs; ++i) first_tick_max = std::max(first_tick_max, std::fabs(static_cast<double>(want.data[i])));
  ASSERT_GT(std::fabs(keras_max - first_tick_max), 1e-3) << "the fixture cannot tell a carried state from a reset one";
  quantizer::QuantizeRequest req;
  req.mode = quantizer::QuantizeMode::Int8;
  req.one_step_per_call = true;
  req.timing_runs = 0;
  const quantizer::QuantizeReport r = quantizer::quantize_model(f, {first}, {first}, req);
  EXPECT_NEAR(r.evaluation.output.max_ref, keras_max, 1e-5 + 1e-5 * keras_max);
  EXPECT_LT(r.evaluation.output.max_rel(), 0.1);
}

}  // namespace
}  // namespace tickinfer
