// The lift of tf2onnx's Keras GRU and LSTM Loops onto the engine's GRU and LSTM, on edited
// copies of an exporter's files (tests/fixtures/onnx/gru_loop_k3: Keras 3 GRU(5,
// return_sequences) -> GRU(4) -> Dense, T = 6; lstm_loop_batch1_k3: the same with LSTMs,
// converted at batch 1). The numerical agreement with onnxruntime is engine_onnx_reference_test's; here: what
// the lift builds, and that a loop differing from a GRU cell step in any way the outputs depend
// on is refused, naming the Loop and what differs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "formats/model_file.hpp"
#include "onnx/onnx.pb.h"
#include "support/source_paths.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

namespace fs = std::filesystem;

onnx::ModelProto fixture(const std::string& name = "gru_loop_k3") {
  const std::string src = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/onnx/" + name + "/model.onnx";
  std::ifstream in(src, std::ios::binary);
  onnx::ModelProto m;
  EXPECT_TRUE(in && m.ParseFromIstream(&in)) << src;
  return m;
}

std::string write(const onnx::ModelProto& m) {
  static int counter = 0;
  const fs::path p = fs::temp_directory_path() / ("onnx_loop_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p.string();
}

// Loads `m` edited by `edit`, expecting an Error naming the file and containing each of `what`.
void expect_refused(const std::function<void(onnx::ModelProto&)>& edit, std::vector<std::string> what,
                    const std::string& name = "gru_loop_k3") {
  onnx::ModelProto m = fixture(name);
  edit(m);
  const std::string path = write(m);
  try {
    (void)formats::load_any_model_file(path);
    ADD_FAILURE() << "the edited model loaded; expected an error containing '" << what.back() << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
    for (const auto& w : what) EXPECT_NE(msg.find(w), std::string::npos) << msg;
  }
  fs::remove(path);
}

onnx::NodeProto& first_loop(onnx::ModelProto& m) {
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() == "Loop") return n;
  }
  throw std::runtime_error("no Loop in the fixture");
}

onnx::GraphProto& body(onnx::ModelProto& m) { return *first_loop(m).mutable_attribute(0)->mutable_g(); }

onnx::NodeProto& body_node(onnx::ModelProto& m, const std::string& op, int nth = 0) {
  for (auto& n : *body(m).mutable_node()) {
    if (n.op_type() == op && nth-- == 0) return n;
  }
  throw std::runtime_error("no " + op + " in the body");
}

onnx::TensorProto& initializer(onnx::GraphProto& g, const std::string& suffix) {
  for (auto& t : *g.mutable_initializer()) {
    if (t.name().size() >= suffix.size() && t.name().compare(t.name().size() - suffix.size(), suffix.size(), suffix) == 0) return t;
  }
  throw std::runtime_error("no initializer ending in " + suffix);
}

// A [1, 5] initializer `name` filled with `value` (an initial state for the first loop, 5 units).
void add_state(onnx::ModelProto& m, const std::string& name, float value) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(1);
  t->add_dims(1), t->add_dims(5);
  const std::vector<float> v(5, value);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

TEST(OnnxGruLoop, LiftsBothLayersOntoGruNodes) {
  const Graph g = formats::load_any_model_file(write(fixture())).graph;
  std::vector<const Node*> grus;
  for (const Node& n : g.nodes) {
    if (n.kind == OpKind::GRU) grus.push_back(&n);
  }
  ASSERT_EQ(grus.size(), 2u);
  EXPECT_EQ(grus[0]->units, 5);
  EXPECT_TRUE(grus[0]->return_sequences);  // the scan output, read by the next loop
  EXPECT_EQ(grus[1]->units, 4);
  EXPECT_FALSE(grus[1]->return_sequences);  // the scan output's last step
  for (const Node* n : grus) {
    EXPECT_TRUE(n->reset_after);
    EXPECT_EQ(n->weights[2].shape, (Shape{2, 3 * n->units}));
    EXPECT_NE(n->origin.find("Loop '"), std::string::npos) << n->origin;
  }
}

TEST(OnnxGruLoop, ATripCountShortOfTheWindowIsRefused) {
  expect_refused([](onnx::ModelProto& m) {
    onnx::TensorProto& t = initializer(*m.mutable_graph(), "gru_1_2/Max:0");  // both loops' M (6)
    const int64_t five = 5;
    t.set_raw_data(std::string(reinterpret_cast<const char*>(&five), sizeof five));
  }, {"(Loop)", "not a Keras GRU or LSTM loop", "runs 5 iterations over a 6-step sequence"});
}

TEST(OnnxGruLoop, ReadingAnotherStepIsRefused) {
  expect_refused([](onnx::ModelProto& m) {
    onnx::NodeProto& gather = body_node(m, "Gather");
    onnx::NodeProto& next = body_node(m, "Add");  // t + 1, the counter's next value
    ASSERT_EQ(next.input(0), gather.input(1));
    gather.set_input(1, next.output(0));
  }, {"(Loop)", "iteration 0 reads step 1"});
}

TEST(OnnxGruLoop, ANonZeroInitialStateIsRefused) {
  expect_refused([](onnx::ModelProto& m) {
    add_state(m, "h0", 1.0f);
    first_loop(m).set_input(3, "h0");
  }, {"(Loop)", "a state does not start at zero"});
}

TEST(OnnxGruLoop, OtherActivationsAreRefusedByName) {
  expect_refused([](onnx::ModelProto& m) { body_node(m, "Tanh").set_op_type("Relu"); },
                 {"(Loop)", "the candidate's activation is Relu, not Tanh"});
  expect_refused([](onnx::ModelProto& m) { body_node(m, "Sigmoid", 1).set_op_type("HardSigmoid"); },
                 {"(Loop)", "the update gate's activation is HardSigmoid, not Sigmoid"});
}

TEST(OnnxGruLoop, AStateUpdateThatIsNotAGruIsRefused) {
  // h' = z * h + z * candidate: the Sub (1 - z) replaced by z itself.
  expect_refused([](onnx::ModelProto& m) {
    onnx::NodeProto& sub = body_node(m, "Sub");
    for (auto& n : *body(m).mutable_node()) {
      for (auto& in : *n.mutable_input()) {
        if (in == sub.output(0)) in = sub.input(1);
      }
    }
  }, {"(Loop)", "not z * h + (1 - z) * candidate"});
}

TEST(OnnxGruLoop, ReadingACarriedWeightAsAnOutputIsRefused) {
  expect_refused([](onnx::ModelProto& m) {
    onnx::NodeProto& loop = first_loop(m);
    auto* g = m.mutable_graph();
    g->mutable_output(0)->set_name(loop.output(3));  // the kernel the loop passes through
    g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  }, {"(Loop)", "output 3 is neither the layer's sequence nor its last state"});
}

TEST(OnnxLstmLoop, LiftsBothLayersOntoLstmNodes) {
  const Graph g = formats::load_any_model_file(write(fixture("lstm_loop_batch1_k3"))).graph;
  std::vector<const Node*> lstms;
  for (const Node& n : g.nodes) {
    if (n.kind == OpKind::LSTM) lstms.push_back(&n);
  }
  ASSERT_EQ(lstms.size(), 2u);
  EXPECT_EQ(lstms[0]->units, 5);
  EXPECT_TRUE(lstms[0]->return_sequences);
  EXPECT_EQ(lstms[1]->units, 4);
  EXPECT_FALSE(lstms[1]->return_sequences);
  for (const Node* n : lstms) {
    EXPECT_EQ(n->weights[2].shape, (Shape{4 * n->units}));
    EXPECT_NE(n->origin.find("Loop '"), std::string::npos) << n->origin;
  }
}

// A malformed file's activation with no input (or two) is refused by name, not read past its
// inputs (the ONNX fuzzer's find: a Tanh without inputs).
TEST(OnnxGruLoop, AnActivationWithoutItsInputIsRefusedByName) {
  expect_refused([](onnx::ModelProto& m) { body_node(m, "Tanh").clear_input(); }, {"(Loop)", "Tanh", "has 0 inputs, not 1"});
  expect_refused([](onnx::ModelProto& m) { body_node(m, "Sigmoid", 1).clear_input(); },
                 {"(Loop)", "Sigmoid", "has 0 inputs, not 1"});
  expect_refused(
      [](onnx::ModelProto& m) {
        onnx::NodeProto& t = body_node(m, "Tanh");
        t.add_input(t.input(0));
      },
      {"(Loop)", "Tanh", "has 2 inputs, not 1"});
}

TEST(OnnxLstmLoop, AnActivationWithoutItsInputIsRefusedByName) {
  expect_refused([](onnx::ModelProto& m) { body_node(m, "Tanh", 1).clear_input(); }, {"(Loop)", "Tanh", "has 0 inputs, not 1"},
                 "lstm_loop_batch1_k3");
}

TEST(OnnxLstmLoop, AnotherCellCandidateActivationIsRefusedByName) {
  // The body's first Tanh is the candidate g (its second is Tanh(c')).
  expect_refused([](onnx::ModelProto& m) { body_node(m, "Tanh").set_op_type("Relu"); },
                 {"(Loop)", "not a Keras GRU or LSTM loop", "the cell candidate's activation is Relu, not Tanh"},
                 "lstm_loop_batch1_k3");
}

TEST(OnnxLstmLoop, AForgetGateOnTheHiddenStateIsRefused) {
  // f * h instead of f * c: the cell state read would then be h itself.
  expect_refused([](onnx::ModelProto& m) {
    onnx::NodeProto& fc = body_node(m, "Mul");
    const onnx::GraphProto& g = body(m);
    ASSERT_EQ(fc.input(1), g.input(4).name());  // c
    fc.set_input(1, g.input(3).name());          // h
  }, {"(Loop)", "the gates do not read a hidden state apart from the cell state"}, "lstm_loop_batch1_k3");
}

TEST(OnnxLstmLoop, ANonZeroInitialCellStateIsRefused) {
  expect_refused([](onnx::ModelProto& m) {
    add_state(m, "c0", 0.5f);
    first_loop(m).set_input(4, "c0");
  }, {"(Loop)", "a state does not start at zero"}, "lstm_loop_batch1_k3");
}

}  // namespace
}  // namespace tickinfer
