// The Keras GRU loop recogniser (tflite/rewrite/gru_loop.hpp) and its lift to the graph GRU: the
// converter's loops (Keras 3: tests/fixtures/tflite_k3, tools/make_tflite_k3_fixtures.py;
// tf_keras: tests/fixtures/tflite/gru, tools/make_tflite_fixtures.py) are matched with
// reset_after read from the body; gate roles are read from where each part is
// used, so a body whose split parts or recurrent slices are permuted still lifts and runs like
// TFLite's interpreter running the same permuted body; and any change to the cell's arithmetic
// (an activation, the 1 - z constant, the step count, a non-zero start) is refused, leaving the
// loop to the interpreter, never lifted to a wrong GRU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "formats/tflite/tflite_graph_lift.hpp"
#include "tflite/rewrite/gru_loop.hpp"
#include "tickinfer/tickinfer.hpp"

#include "support/tflite_file.hpp"
#include "support/source_paths.hpp"
#include "tflite/interpreter.hpp"

namespace tickinfer {
namespace {

using tfl::OpCode;

struct Fixture {
  const char* name;
  const char* file;  // under tests/fixtures/
  bool reset_after;
  int T, F, H;
};
const Fixture kFixtures[] = {{"k3_gru_after", "tflite_k3/gru_after/keras_float.tflite", true, 6, 4, 7},
                             {"k3_gru_before", "tflite_k3/gru_before/keras_float.tflite", false, 6, 4, 7},
                             {"tf_keras_gru", "tflite/gru/float.tflite", true, 8, 4, 16},
                             // reset_after=False: the recurrent projection split by a SPLIT_V {H, H, -1}
                             {"tf_keras_gru_before", "tflite/gru_wide_before/float.tflite", false, 16, 40, 32}};

tfl::Program load_fixture(const Fixture& fx) {
  return test::load_tflite_file(std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/" + fx.file);
}

tfl::Op& the_loop(tfl::Program& p) {
  for (tfl::Op& op : p.ops)
    if (op.code == OpCode::While) return op;
  throw std::runtime_error("no WHILE in the fixture");
}

tfl::Subgraph& body(tfl::Program& p) { return p.subgraphs[static_cast<size_t>(the_loop(p).options.body_subgraph - 1)]; }
tfl::Subgraph& cond(tfl::Program& p) { return p.subgraphs[static_cast<size_t>(the_loop(p).options.cond_subgraph - 1)]; }

std::vector<tfl::Op*> ops_of(tfl::Subgraph& sg, OpCode code) {
  std::vector<tfl::Op*> out;
  for (tfl::Op& op : sg.ops)
    if (op.code == code) out.push_back(&op);
  return out;
}

void set_float(tfl::Program& p, int t, float v) {
  auto& d = p.tensors[static_cast<size_t>(t)].data;
  ASSERT_EQ(d.size(), 4u);
  std::memcpy(d.data(), &v, 4);
}

// Lifted graph vs the interpreter running the loop op by op (the oracle: the permuted bodies are
// read by the same matcher the lift and the lowering use), over random windows; and the
// interpreter's own lowering of the loop to SEQUENCE_GRU against the same op-by-op run, bit for bit.
void expect_lift_matches_interpreter(const tfl::Program& p) {
  const formats::TfliteLift lift = formats::lift_tflite_program(p);
  ASSERT_TRUE(lift.graph) << lift.refusal;
  Plan graph = compile(Model::from_graph(*lift.graph));
  const auto shared = std::make_shared<const tfl::Program>(p);
  tfl::InterpreterOptions by_op, lowered;
  by_op.lower_recurrent_loops = false;
  by_op.reset_variables_each_invoke = lowered.reset_variables_each_invoke = true;
  tfl::Interpreter loop(shared, by_op), fused(shared, lowered);
  ASSERT_NE(fused.describe().find("SEQUENCE_GRU"), std::string::npos) << fused.describe();
  ASSERT_EQ(loop.describe().find("SEQUENCE_GRU"), std::string::npos);
  const size_t n_in = static_cast<size_t>(tfl::element_count(loop.input_tensor(0).shape));
  const size_t n_out = static_cast<size_t>(tfl::element_count(loop.output_tensor(0).shape));
  ASSERT_EQ(graph.input_size(0), n_in);
  ASSERT_EQ(graph.output_size(0), n_out);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> x(n_in), a(n_out), b(n_out), c(n_out);
  for (int rep = 0; rep < 8; ++rep) {
    for (float& v : x) v = d(rng);
    graph.run(x.data(), a.data());
    for (tfl::Interpreter* i : {&loop, &fused}) {
      std::memcpy(i->input_data(0), x.data(), n_in * sizeof(float));
      i->invoke();
    }
    std::memcpy(b.data(), loop.output_data(0), n_out * sizeof(float));
    std::memcpy(c.data(), fused.output_data(0), n_out * sizeof(float));
    EXPECT_EQ(b, c) << "SEQUENCE_GRU against the loop op by op";
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-5f * std::max(1.0f, std::fabs(b[k]))) << "output " << k;
  }
}

void expect_refused(const tfl::Program& p, const std::string& why) {
  const formats::TfliteLift lift = formats::lift_tflite_program(p);
  ASSERT_FALSE(lift.graph) << "lifted a loop that is not a Keras GRU";
  EXPECT_NE(lift.refusal.find("WHILE"), std::string::npos) << lift.refusal;
  EXPECT_NE(lift.refusal.find(why), std::string::npos) << lift.refusal;
  // The interpreter still runs it.
  EXPECT_NO_THROW(compile(Model::from_program(std::make_shared<const tfl::Program>(p))));
}

class GruLoop : public ::testing::TestWithParam<Fixture> {
 protected:
  tfl::Program p = load_fixture(GetParam());
  bool reset_after() const { return GetParam().reset_after; }
};

TEST_P(GruLoop, IsMatchedWithItsResetPlacement) {
  const auto m = tfl::match_gru_loop(p, the_loop(p));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->reset_after, reset_after());
  EXPECT_EQ(m->T, GetParam().T);
  EXPECT_EQ(m->F, GetParam().F);
  EXPECT_EQ(m->H, GetParam().H);
  EXPECT_FALSE(m->sequences);
  EXPECT_EQ(m->b_rec >= 0, reset_after()) << "only reset_after has a recurrent bias";
  EXPECT_EQ(m->u_h >= 0, !reset_after()) << "only reset_before has the candidate's own recurrent matrix";
}

TEST_P(GruLoop, LiftsLikeTheInterpreter) { expect_lift_matches_interpreter(p); }

// The SPLIT of the input projection (the one whose FULLY_CONNECTED reads GATHER(x, t)), and the
// recurrent projection's SPLIT or SPLIT_V (tf_keras) if there is one.
tfl::Op* split_reading(tfl::Program& p, bool of_input) {
  tfl::Subgraph& sg = body(p);
  auto splits = ops_of(sg, OpCode::Split);
  for (tfl::Op* v : ops_of(sg, OpCode::SplitV)) splits.push_back(v);
  for (tfl::Op* s : splits) {
    const int data = s->code == OpCode::SplitV ? s->inputs[0] : s->inputs[1];
    for (tfl::Op& fc : sg.ops) {
      if (fc.code != OpCode::FullyConnected || fc.outputs[0] != data) continue;
      bool gathered = false;
      for (tfl::Op& g : sg.ops) gathered = gathered || (g.code == OpCode::Gather && g.outputs[0] == fc.inputs[0]);
      if (gathered == of_input) return s;
    }
  }
  return nullptr;
}

// The split parts in another order: every gate reads other rows of W, and the lift follows.
TEST_P(GruLoop, PermutedInputPartsStillLiftExactly) {
  tfl::Op* split = split_reading(p, true);
  ASSERT_NE(split, nullptr);
  std::rotate(split->outputs.begin(), split->outputs.begin() + 1, split->outputs.end());
  const auto m = tfl::match_gru_loop(p, the_loop(p));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->w_block[0], 2) << "z now reads the third part";
  expect_lift_matches_interpreter(p);
}

// The recurrent projection's column slices (Keras 3) or split parts (tf_keras) exchanged between
// the first two gates.
TEST_P(GruLoop, PermutedRecurrentSlicesStillLiftExactly) {
  auto slices = ops_of(body(p), OpCode::StridedSlice);
  if (tfl::Op* split = split_reading(p, false)) {
    std::swap(split->outputs[0], split->outputs[1]);
  } else {
    ASSERT_GE(slices.size(), 2u);
    std::swap(slices[0]->inputs[1], slices[1]->inputs[1]);
    std::swap(slices[0]->inputs[2], slices[1]->inputs[2]);
    std::swap(slices[0]->options, slices[1]->options);
  }
  const auto m = tfl::match_gru_loop(p, the_loop(p));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->u_block[0], 1);
  EXPECT_EQ(m->u_block[1], 0);
  expect_lift_matches_interpreter(p);
}

TEST_P(GruLoop, AnotherGateActivationIsRefused) {
  auto sig = ops_of(body(p), OpCode::Logistic);
  ASSERT_EQ(sig.size(), 2u);
  sig[0]->code = OpCode::Tanh;
  EXPECT_FALSE(tfl::match_gru_loop(p, the_loop(p)));
  expect_refused(p, "not a recognised float Keras LSTM or GRU");
}

TEST_P(GruLoop, AnotherCandidateActivationIsRefused) {
  auto th = ops_of(body(p), OpCode::Tanh);
  ASSERT_EQ(th.size(), 1u);
  th[0]->code = OpCode::Logistic;
  expect_refused(p, "not a recognised");
}

TEST_P(GruLoop, OneMinusZWithAnotherConstantIsRefused) {
  auto sub = ops_of(body(p), OpCode::Sub);
  ASSERT_EQ(sub.size(), 1u);
  set_float(p, sub[0]->inputs[0], 0.5f);
  expect_refused(p, "not a recognised");
}

TEST_P(GruLoop, AnotherStepCountIsRefused) {
  auto less = ops_of(cond(p), OpCode::Less);
  ASSERT_GE(less.size(), 1u);
  // The LESS ops (two in Keras 3, one in tf_keras) read one shared limit constant; give them a
  // copy at 5 so the loop would stop early.
  tfl::Tensor five = p.tensors[static_cast<size_t>(less[0]->inputs[1])];
  const int32_t k = 5;
  std::memcpy(five.data.data(), &k, 4);
  p.tensors.push_back(five);
  for (tfl::Op* op : less) op->inputs[1] = static_cast<int>(p.tensors.size() - 1);
  expect_refused(p, "not a recognised");
}

TEST_P(GruLoop, ANonZeroInitialStateIsRefused) {
  tfl::Tensor h = p.tensors[static_cast<size_t>(the_loop(p).inputs[3])];
  ASSERT_TRUE(h.is_constant());
  const float one = 1.0f;
  std::memcpy(h.data.data(), &one, 4);
  p.tensors.push_back(h);
  the_loop(p).inputs[3] = static_cast<int>(p.tensors.size() - 1);
  expect_refused(p, "initial h");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GruLoop, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tickinfer
