// What the TFLite -> graph lift refuses (each form by op and reason: the model then stays on the
// interpreter), the folds it makes, and how Model::load picks the engine for a TFLite file
// (LoadOptions::tflite_engine: auto, interpreter, graph).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/tflite/tflite_graph_lift.hpp"
#include "model/graph.hpp"
#include "tflite/program_builder.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"


namespace tickinfer {
namespace {

using tfl::DType;
using tfl::OpCode;

const std::string kDir = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/";

std::vector<float> ramp(size_t n, float step = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = step * static_cast<float>(i % 17) - 0.05f;
  return v;
}

// A program with input x [1, in_shape...]; `body` appends ops and returns the output tensor.
template <class Body>
tfl::Program make(const tfl::Shape& input_shape, Body body) {
  tfl::Program p;
  p.source_format = "tflite";
  tfl::ProgramBuilder b(p);
  const int x = b.activation("x", DType::F32, input_shape);
  p.inputs = {x};
  p.outputs = {body(b, x)};
  return p;
}

int fc(tfl::ProgramBuilder& b, int x, int in, int units, const std::string& name) {
  const int w = b.constant(name + "/w", DType::F32, {units, in}, ramp(static_cast<size_t>(units) * in));
  const int bias = b.constant(name + "/b", DType::F32, {units}, ramp(static_cast<size_t>(units), 0.1f));
  const int y = b.activation(name, DType::F32, {1, units});
  b.op(OpCode::FullyConnected, {x, w, bias}, {y}, name);
  return y;
}

void expect_refused(const tfl::Program& p, const std::string& op, const std::string& why) {
  const formats::TfliteLift lift = formats::lift_tflite_program(p);
  ASSERT_FALSE(lift.graph) << "lifted, but expected a refusal naming " << op << " and '" << why << "'";
  EXPECT_NE(lift.refusal.find(op), std::string::npos) << lift.refusal;
  EXPECT_NE(lift.refusal.find(why), std::string::npos) << lift.refusal;
}

TEST(TfliteLiftFolds, HardSwishAsXTimesHardSigmoid) {
  const formats::TfliteLift lift = formats::lift_tflite_program(make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
    const int h = fc(b, x, 8, 4, "dense");
    const int y = b.activation("hs", DType::F32, {1, 4});
    b.op(OpCode::HardSwish, {h}, {y}, "hs");
    return y;
  }));
  ASSERT_TRUE(lift.graph) << lift.refusal;
  const std::vector<Node>& n = lift.graph->nodes;
  ASSERT_EQ(n.size(), 4u);  // input, Dense, hard_sigmoid, Multiply
  EXPECT_EQ(n[2].activation.kind, ActKind::HardSigmoid);
  EXPECT_FLOAT_EQ(n[2].activation.alpha, 1.0f / 6.0f);
  EXPECT_FLOAT_EQ(n[2].activation.beta, 0.5f);
  EXPECT_EQ(n[3].kind, OpKind::Multiply);
  EXPECT_EQ(n[3].inputs, (std::vector<int>{1, 2}));
  EXPECT_EQ(lift.graph->outputs, (std::vector<int>{3}));
}

// REVERSE_V2 of a unit axis is a view of its input: an activation after it must not fold into
// the Dense that wrote the input when another op also reads that Dense's output.
TEST(TfliteLiftFolds, NothingFoldsThroughAReversalOfAUnitAxis) {
  tfl::Program p = make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
    const int d = fc(b, x, 8, 4, "dense");
    const int axis = b.constant("axis", DType::I32, {1}, std::vector<int32_t>{0});
    const int r = b.activation("reversed", DType::F32, {1, 4});
    b.op(OpCode::ReverseV2, {d, axis}, {r}, "reverse");
    const int y = b.activation("relu", DType::F32, {1, 4});
    b.op(OpCode::Relu, {r}, {y}, "relu");
    return y;
  });
  p.outputs.push_back(p.ops[0].outputs[0]);  // the Dense's output read as it is, too
  const formats::TfliteLift lift = formats::lift_tflite_program(p);
  ASSERT_TRUE(lift.graph) << lift.refusal;
  for (const Node& n : lift.graph->nodes) {
    if (n.kind == OpKind::Dense) EXPECT_EQ(n.activation.kind, ActKind::Linear) << n.name;
  }
}

TEST(TfliteLiftRefuses, AReversalOfTwoAxesOrOneListedTwice) {
  for (const std::vector<int32_t>& axes : {std::vector<int32_t>{1, 2}, std::vector<int32_t>{1, -2}}) {
    expect_refused(make({1, 3, 4}, [&](tfl::ProgramBuilder& b, int x) {
                     const int axis = b.constant("axis", DType::I32, {static_cast<int>(axes.size())}, axes);
                     const int r = b.activation("reversed", DType::F32, {1, 3, 4});
                     b.op(OpCode::ReverseV2, {x, axis}, {r}, "reverse");
                     return r;
                   }),
                   "REVERSE_V2", axes[1] == 2 ? "reverses an axis other than a sequence's time axis" : "lists an axis twice");
  }
}

TEST(TfliteLiftRefuses, AFusedActivationTheGraphLacks) {
  expect_refused(make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
                   const int h = fc(b, x, 8, 4, "dense");
                   b.program().ops.back().options.activation = tfl::FusedActivation::ReluN1To1;
                   return h;
                 }),
                 "FULLY_CONNECTED", "RELU_N1_TO_1");
}

TEST(TfliteLiftRefuses, BroadcastingBetweenActivations) {
  expect_refused(make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
                   const int a = fc(b, x, 8, 4, "a");
                   const int c = fc(b, x, 8, 1, "c");
                   const int y = b.activation("sum", DType::F32, {1, 4});
                   b.op(OpCode::Add, {a, c}, {y}, "sum");
                   return y;
                 }),
                 "ADD", "broadcasting");
}

TEST(TfliteLiftRefuses, ConstantMinusActivation) {
  expect_refused(make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
                   const int a = fc(b, x, 8, 4, "a");
                   const int c = b.constant("c", DType::F32, {4}, ramp(4));
                   const int y = b.activation("d", DType::F32, {1, 4});
                   b.op(OpCode::Sub, {c, a}, {y}, "d");
                   return y;
                 }),
                 "SUB", "constant minus activation");
}

TEST(TfliteLiftRefuses, ConcatenationOnTheBatchAxis) {
  expect_refused(make({1, 3, 4}, [](tfl::ProgramBuilder& b, int x) {
                   const int y = b.activation("cat", DType::F32, {2, 3, 4});
                   b.op(OpCode::Concatenation, {x, x}, {y}, "cat").options.axis = 0;
                   return y;
                 }),
                 "CONCATENATION", "batch axis");
}

TEST(TfliteLiftRefuses, WeightsThatAreNotConstants) {
  // A matmul of two activations: the second input, reshaped, as the weights.
  expect_refused(make({1, 16}, [](tfl::ProgramBuilder& b, int x) {
                   const int x2 = b.activation("x2", DType::F32, {1, 4});
                   b.program().inputs.push_back(x2);
                   const int w = b.activation("w", DType::F32, {4, 4});
                   b.op(OpCode::Reshape, {x}, {w}, "w");
                   const int y = b.activation("y", DType::F32, {1, 4});
                   b.op(OpCode::FullyConnected, {x2, w, -1}, {y}, "y");
                   return y;
                 }),
                 "FULLY_CONNECTED", "weights 'w' is not a constant");
}

TEST(TfliteLiftRefuses, APadThatNoConvolutionConsumes) {
  expect_refused(make({1, 4, 3}, [](tfl::ProgramBuilder& b, int x) {
                   const int pads = b.constant("pads", DType::I32, {3, 2}, std::vector<int32_t>{0, 0, 2, 0, 0, 0});
                   const int padded = b.activation("padded", DType::F32, {1, 6, 3});
                   b.op(OpCode::Pad, {x, pads}, {padded}, "pad");
                   const int y = b.activation("t", DType::F32, {1, 6, 3});
                   b.op(OpCode::Tanh, {padded}, {y}, "t");
                   return y;
                 }),
                 "TANH", "PAD feeds an op other than CONV_2D");
}

TEST(TfliteLiftRefuses, AMeanOverChannels) {
  expect_refused(make({1, 4, 3}, [](tfl::ProgramBuilder& b, int x) {
                   const int axes = b.int32_constant("axes", {2});
                   const int y = b.activation("m", DType::F32, {1, 4});
                   b.op(OpCode::Mean, {x, axes}, {y}, "m");
                   return y;
                 }),
                 "MEAN", "only the mean over time");
}

// A 2-D convolution lifts (tflite_lift fixtures k3_conv2d_book, k3_deeplob_tiny); one whose
// filter does not match the input's channels stays on the interpreter, named.
TEST(TfliteLiftRefuses, AConvolutionWhoseFilterMissesTheChannels) {
  expect_refused(make({1, 2, 5, 3}, [](tfl::ProgramBuilder& b, int x) {
                   const int f = b.constant("f", DType::F32, {2, 1, 3, 4}, ramp(24));
                   const int y = b.activation("c", DType::F32, {1, 2, 3, 2});
                   b.op(OpCode::Conv2D, {x, f, -1}, {y}, "c");
                   return y;
                 }),
                 "CONV_2D", "filter is not [filters, height, width, channels]");
}

TEST(TfliteLiftRefuses, SoftmaxWithABeta) {
  expect_refused(make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
                   const int y = b.activation("s", DType::F32, {1, 8});
                   b.op(OpCode::Softmax, {x}, {y}, "s").options.beta = 2.0f;
                   return y;
                 }),
                 "SOFTMAX", "beta");
}

TEST(TfliteLiftRefuses, AnOpWithNoGraphForm) {
  expect_refused(make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
                   const int y = b.activation("e", DType::F32, {1, 8});
                   b.op(OpCode::Exp, {x}, {y}, "e");
                   return y;
                 }),
                 "op 0 (EXP 'e')", "no graph equivalent");
}

// UNIDIRECTIONAL_SEQUENCE_LSTM over [1, 3, 2] with 2 units; `edit` changes operands/options.
template <class Edit>
tfl::Program lstm_program(Edit edit) {
  return make({1, 3, 2}, [&](tfl::ProgramBuilder& b, int x) {
    std::vector<int> in(24, -1);
    in[0] = x;
    for (int g = 0; g < 4; ++g) {
      in[1 + g] = b.constant("wx" + std::to_string(g), DType::F32, {2, 2}, ramp(4));
      in[5 + g] = b.constant("wh" + std::to_string(g), DType::F32, {2, 2}, ramp(4));
      in[12 + g] = b.constant("b" + std::to_string(g), DType::F32, {2}, ramp(2));
    }
    in[18] = b.activation("h", DType::F32, {1, 2});
    in[19] = b.activation("c", DType::F32, {1, 2});
    b.tensor(in[18]).is_variable = b.tensor(in[19]).is_variable = true;
    const int y = b.activation("lstm", DType::F32, {1, 3, 2});
    tfl::Op& op = b.op(OpCode::SequenceLstm, in, {y}, "lstm");
    op.options.activation = tfl::FusedActivation::Tanh;
    edit(b, op);
    return y;
  });
}

TEST(TfliteLiftRefuses, LstmFormsKerasHasNot) {
  // The plain form lifts; each variation is refused by name.
  EXPECT_TRUE(formats::lift_tflite_program(lstm_program([](tfl::ProgramBuilder&, tfl::Op&) {})).graph);
  expect_refused(lstm_program([](tfl::ProgramBuilder& b, tfl::Op& op) {
                   op.inputs[10] = b.constant("peep", DType::F32, {2}, ramp(2));
                 }),
                 "UNIDIRECTIONAL_SEQUENCE_LSTM", "peepholes");
  expect_refused(lstm_program([](tfl::ProgramBuilder&, tfl::Op& op) { op.inputs[1] = op.inputs[5] = op.inputs[12] = -1; }),
                 "UNIDIRECTIONAL_SEQUENCE_LSTM", "CIFG");
  expect_refused(lstm_program([](tfl::ProgramBuilder& b, tfl::Op& op) {
                   op.inputs[16] = b.constant("proj", DType::F32, {2, 2}, ramp(4));
                 }),
                 "UNIDIRECTIONAL_SEQUENCE_LSTM", "projection");
  expect_refused(lstm_program([](tfl::ProgramBuilder& b, tfl::Op& op) {
                   for (int k = 20; k < 24; ++k) op.inputs[k] = b.constant("ln" + std::to_string(k), DType::F32, {2}, ramp(2));
                 }),
                 "UNIDIRECTIONAL_SEQUENCE_LSTM", "layer-norm");
  expect_refused(lstm_program([](tfl::ProgramBuilder&, tfl::Op& op) { op.options.time_major = true; }),
                 "UNIDIRECTIONAL_SEQUENCE_LSTM", "time-major");
}

TEST(TfliteLiftRefuses, ASliceOtherThanTheLastStep) {
  expect_refused(make({1, 3, 2}, [](tfl::ProgramBuilder& b, int x) {
                   const int begin = b.int32_constant("begin", {0, 0, 0});
                   const int end = b.int32_constant("end", {1, 1, 2});
                   const int strides = b.int32_constant("strides", {1, 1, 1});
                   const int y = b.activation("first", DType::F32, {1, 2});
                   b.op(OpCode::StridedSlice, {x, begin, end, strides}, {y}, "first").options.shrink_axis_mask = 2;
                   return y;
                 }),
                 "STRIDED_SLICE", "last time step");
}

TEST(TfliteLiftFolds, AConstantBiasAndScaleIntoTheDense) {
  const tfl::Program p = make({1, 8}, [](tfl::ProgramBuilder& b, int x) {
    const int h = fc(b, x, 8, 4, "dense");
    const int c = b.constant("c", DType::F32, {4}, std::vector<float>{1, 2, 3, 4});
    const int shifted = b.activation("shifted", DType::F32, {1, 4});
    b.op(OpCode::Add, {h, c}, {shifted}, "shifted");
    const int s = b.constant("s", DType::F32, {1}, std::vector<float>{2});
    const int y = b.activation("scaled", DType::F32, {1, 4});
    b.op(OpCode::Mul, {shifted, s}, {y}, "scaled");
    return y;
  });
  const formats::TfliteLift lift = formats::lift_tflite_program(p);
  ASSERT_TRUE(lift.graph) << lift.refusal;
  ASSERT_EQ(lift.graph->nodes.size(), 2u);  // input, one Dense
  const Node& dense = lift.graph->nodes[1];
  EXPECT_EQ(dense.origin, "FULLY_CONNECTED #0 + ADD #1 + MUL #2");
  const std::vector<float> b0 = ramp(4, 0.1f);
  for (int u = 0; u < 4; ++u) EXPECT_FLOAT_EQ(dense.weights[1].data[u], (b0[u] + (u + 1)) * 2) << u;
  EXPECT_FLOAT_EQ(dense.weights[0].data[4 + 1], ramp(32)[1 * 8 + 1] * 2);  // (k=1, unit 1) from [unit 1][k 1]
}

TEST(TfliteLiftFixtureRefusals, IntegerProgramsStayOnTheInterpreter) {
  for (const char* mode : {"int8", "dynamic"}) {
    const Model m = Model::load(kDir + "mlp_small/" + mode + ".tflite");
    EXPECT_NE(m.program(), nullptr) << mode;
  }
}

TEST(TfliteLiftEngineChoice, FloatFilesLiftUnlessTheEscapeHatchIsSet) {
  const std::string mlp = kDir + "mlp_small/float.tflite";
  {
    const Model m = Model::load(mlp);
    EXPECT_EQ(m.program(), nullptr);
    EXPECT_EQ(m.graph().source_format, "tflite");
    EXPECT_EQ(m.inputs()[0].name, "serving_default_x:0");
    EXPECT_EQ(m.outputs()[0].name, "StatefulPartitionedCall:0");
  }
  EXPECT_NE(Model::load(mlp, LoadOptions{TfliteEngine::Interpreter}).program(), nullptr);
  {
    const LoadOptions graph{TfliteEngine::Graph};
    EXPECT_EQ(Model::load(mlp, graph).program(), nullptr);
    try {
      Model::load(kDir + "lnorm/float.tflite", graph);
      ADD_FAILURE() << "lnorm lifted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("lnorm/float.tflite"), std::string::npos) << what;
      EXPECT_NE(what.find("SQUARED_DIFFERENCE"), std::string::npos) << what;
    }
  }
  try {
    (void)parse_tflite_engine("fastest");
    ADD_FAILURE() << "'fastest' accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'fastest'"), std::string::npos) << e.what();  // names the value
  }
  EXPECT_NE(Model::load(kDir + "lnorm/float.tflite").program(), nullptr);  // auto: not liftable
}

}  // namespace
}  // namespace tickinfer
