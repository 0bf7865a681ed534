// The device-neutral lowering on its own (engine/lowering/): what each rewrite produces, checked
// against the layers' definitions computed here directly, and the tensors' lifetimes; then the
// CPU plan's arena, planned from those lifetimes: a deep chain fits in two tensors' room and still
// computes what its layers compute one by one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/graph_plan.hpp"
#include "engine/lowering/lowered_graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {
namespace {

Node input(Shape shape) {
  Node n;
  n.name = "x";
  n.kind = OpKind::Input;
  n.shape = std::move(shape);
  return n;
}

std::vector<float> seeded(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

Node dense(const std::string& name, int in, int units, int from, ActKind act, unsigned seed) {
  Node d;
  d.name = name;
  d.kind = OpKind::Dense;
  d.units = units;
  d.inputs = {from};
  d.activation.kind = act;
  d.weights = {{{in, units}, seeded(static_cast<size_t>(in) * units, seed)}, {{units}, seeded(units, seed + 1)}};
  return d;
}

Node batch_norm(int channels, int from) {
  Node bn;
  bn.name = "bn";
  bn.kind = OpKind::BatchNorm;
  bn.inputs = {from};
  bn.epsilon = 1e-3f;
  std::vector<float> var = seeded(channels, 13);
  for (float& v : var) v = v * v + 0.1f;  // variances are positive
  bn.weights = {{{channels}, seeded(channels, 10)}, {{channels}, seeded(channels, 11)},
                {{channels}, seeded(channels, 12)}, {{channels}, var}};
  return bn;
}

Graph graph_of(std::vector<Node> nodes, std::vector<int> outputs) {
  Graph g;
  g.nodes = std::move(nodes);
  g.inputs = {0};
  g.outputs = std::move(outputs);
  infer_shapes(g);
  return g;
}

CompileOptions window_options() {
  CompileOptions o;
  o.mode = RecurrentMode::Window;
  return o;
}

// x . kernel + bias for one row, from a lowered Dense op.
std::vector<float> apply_dense(const LoweredOp& op, const std::vector<float>& x) {
  std::vector<float> y(op.out_width);
  for (int j = 0; j < op.out_width; ++j) {
    double acc = op.bias[j];
    for (int k = 0; k < op.in_width; ++k) acc += double{x[k]} * op.kernel.data[static_cast<size_t>(k) * op.out_width + j];
    y[j] = static_cast<float>(acc);
  }
  return y;
}

TEST(Lowering, BatchNormFoldsIntoTheLinearDenseBeforeIt) {
  const Graph g = graph_of({input({3}), dense("d", 3, 4, 0, ActKind::Linear, 1), batch_norm(4, 1)}, {2});
  const LoweredGraph L = lower_for_plan(g, window_options());
  ASSERT_EQ(L.ops.size(), 1u);
  const LoweredOp& op = L.ops[0];
  EXPECT_EQ(op.kind, StepKind::Dense);
  EXPECT_EQ(L.outputs[0], op.out);
  // BatchNorm's definition applied to the Dense's output, against the folded op.
  const std::vector<float> x = {0.5f, -1.25f, 2.0f};
  const Node& d = g.nodes[1];
  const Node& bn = g.nodes[2];
  const std::vector<float> y = apply_dense(op, x);
  for (int j = 0; j < 4; ++j) {
    double z = d.weights[1].data[j];
    for (int k = 0; k < 3; ++k) z += double{x[k]} * d.weights[0].data[static_cast<size_t>(k) * 4 + j];
    const double want = bn.weights[0].data[j] * (z - bn.weights[2].data[j]) /
                            std::sqrt(double{bn.weights[3].data[j]} + bn.epsilon) +
                        bn.weights[1].data[j];
    EXPECT_NEAR(y[j], want, 1e-5) << j;
  }
}

TEST(Lowering, BatchNormStaysAnAffineWhenItCannotFold) {
  // After a relu the fold would change the numbers; with a second consumer it would change theirs.
  const Graph relu = graph_of({input({3}), dense("d", 3, 4, 0, ActKind::Relu, 1), batch_norm(4, 1)}, {2});
  const LoweredGraph a = lower_for_plan(relu, window_options());
  ASSERT_EQ(a.ops.size(), 2u);
  EXPECT_EQ(a.ops[0].kind, StepKind::Dense);
  EXPECT_EQ(a.ops[0].clamp_lo, 0.0f);  // the relu, fused
  EXPECT_EQ(a.ops[1].kind, StepKind::Affine);
  EXPECT_EQ(a.ops[1].in, a.ops[0].out);

  const Graph shared = graph_of({input({3}), dense("d", 3, 4, 0, ActKind::Linear, 1), batch_norm(4, 1)}, {2, 1});
  const LoweredGraph b = lower_for_plan(shared, window_options());
  ASSERT_EQ(b.ops.size(), 2u);
  EXPECT_EQ(b.ops[1].kind, StepKind::Affine);
  EXPECT_EQ(b.ops[0].kernel.data, shared.nodes[1].weights[0].data);  // not folded
}

TEST(Lowering, ReluFusesAndOtherActivationsFollowInPlace) {
  const Graph g = graph_of({input({3}), dense("r", 3, 4, 0, ActKind::Relu, 1), dense("s", 4, 2, 1, ActKind::Sigmoid, 3)},
                           {2});
  const LoweredGraph L = lower_for_plan(g, window_options());
  ASSERT_EQ(L.ops.size(), 3u);
  EXPECT_EQ(L.ops[0].clamp_lo, 0.0f);
  EXPECT_TRUE(std::isinf(L.ops[0].clamp_hi));
  EXPECT_TRUE(std::isinf(L.ops[1].clamp_lo));
  EXPECT_EQ(L.ops[2].kind, StepKind::Activation);
  EXPECT_EQ(L.ops[2].act.kind, ActKind::Sigmoid);
  EXPECT_EQ(L.ops[2].in, L.ops[1].out);
  EXPECT_EQ(L.ops[2].out, L.ops[1].out);  // in place
}

TEST(Lowering, ReshapeIdentityAndLinearActivationAreNoOps) {
  Node reshape;
  reshape.name = "reshape";
  reshape.kind = OpKind::Reshape;
  reshape.inputs = {1};
  reshape.target_shape = {2, 2};
  Node drop;
  drop.name = "dropout";
  drop.kind = OpKind::Identity;
  drop.inputs = {2};
  Node flat;
  flat.name = "flatten";
  flat.kind = OpKind::Flatten;
  flat.inputs = {3};
  const Graph g = graph_of({input({3}), dense("a", 3, 4, 0, ActKind::Linear, 1), reshape, drop, flat,
                            dense("b", 4, 2, 4, ActKind::Linear, 5)},
                           {5});
  const LoweredGraph L = lower_for_plan(g, window_options());
  ASSERT_EQ(L.ops.size(), 2u);
  EXPECT_EQ(L.ops[1].in, L.ops[0].out);
}

Node lstm(int in, int units, bool sequences) {
  Node n;
  n.name = "lstm";
  n.kind = OpKind::LSTM;
  n.units = units;
  n.inputs = {0};
  n.return_sequences = sequences;
  n.activation.kind = ActKind::Tanh;
  n.recurrent_activation.kind = ActKind::Sigmoid;
  n.weights = {{{in, 4 * units}, seeded(static_cast<size_t>(in) * 4 * units, 21)},
               {{units, 4 * units}, seeded(static_cast<size_t>(units) * 4 * units, 22)},
               {{4 * units}, seeded(4 * static_cast<size_t>(units), 23)}};
  return n;
}

TEST(Lowering, StreamLstmStacksWAboveUAndWindowKeepsThemApart) {
  const Graph g = graph_of({input({5, 3}), lstm(3, 2, false)}, {1});
  const Node& n = g.nodes[1];
  CompileOptions stream;
  stream.mode = RecurrentMode::Stream;
  const LoweredGraph s = lower_for_plan(g, stream);
  ASSERT_EQ(s.ops.size(), 1u);
  EXPECT_EQ(s.ops[0].kind, StepKind::Lstm);
  EXPECT_EQ(s.ops[0].kernel.rows, 5);
  EXPECT_EQ(s.ops[0].kernel.cols, 8);
  std::vector<float> wu = n.weights[0].data;
  wu.insert(wu.end(), n.weights[1].data.begin(), n.weights[1].data.end());
  EXPECT_EQ(s.ops[0].kernel.data, wu);
  EXPECT_EQ(s.input_shapes[0], (Shape{3}));  // one step per run
  EXPECT_FALSE(s.ops[0].zero_state);

  const LoweredGraph w = lower_for_plan(g, window_options());
  EXPECT_EQ(w.ops[0].kind, StepKind::LstmWindow);
  EXPECT_EQ(w.ops[0].kernel.data, n.weights[0].data);
  EXPECT_EQ(w.ops[0].recurrent_kernel.data, n.weights[1].data);
  EXPECT_EQ(w.ops[0].steps, 5);
  EXPECT_TRUE(w.ops[0].zero_state);
}

// An ONNX file reading an LSTM's Y and Y_h lowers to the layer twice (the sequence, and its last
// step): window mode runs the recurrence once and takes the last row (or, for two last steps,
// the first one's); a layer with other weights or options is not a twin; stream mode keeps both
// (a slice of the time axis does not stream).
TEST(Lowering, RecurrentTwinsShareOneRecurrenceInWindowMode) {
  Node seq = lstm(3, 2, true), last = lstm(3, 2, false), other = lstm(3, 2, false);
  seq.name = "seq", last.name = "last", other.name = "other";
  other.weights[2].data[0] += 0.5f;
  Node clipped = lstm(3, 2, false), gate = lstm(3, 2, false);  // the same weights, other options
  clipped.name = "clipped", gate.name = "gate";
  clipped.cell_clip = 10.0f;
  gate.recurrent_activation = {ActKind::HardSigmoid, 0.25f, 0.5f};
  const Graph g = graph_of({input({5, 3}), seq, last, other}, {1, 2, 3});
  const Graph w = resolve_for_mode(g, window_options());
  EXPECT_EQ(w.nodes[2].kind, OpKind::SliceRows);
  EXPECT_EQ(w.nodes[2].name, "last");
  EXPECT_EQ(w.nodes[2].inputs, (std::vector<int>{1}));
  EXPECT_EQ(w.nodes[2].shape, (Shape{2}));
  EXPECT_EQ(w.nodes[3].kind, OpKind::LSTM);
  const Graph options = resolve_for_mode(graph_of({input({5, 3}), seq, clipped, gate}, {1, 2, 3}), window_options());
  EXPECT_EQ(options.nodes[2].kind, OpKind::LSTM);
  EXPECT_EQ(options.nodes[3].kind, OpKind::LSTM);
  // The same last step twice (PyTorch's y[:, -1] and h_n of one layer): the second is the first.
  Node again = last;
  again.name = "again";
  const Graph repeated = resolve_for_mode(graph_of({input({5, 3}), last, again}, {1, 2}), window_options());
  EXPECT_EQ(repeated.nodes[2].kind, OpKind::Identity);
  EXPECT_EQ(repeated.nodes[2].inputs, (std::vector<int>{1}));
  // A last step before the sequence gives nothing to the sequence.
  const Graph reversed = resolve_for_mode(graph_of({input({5, 3}), last, seq}, {1, 2}), window_options());
  EXPECT_EQ(reversed.nodes[2].kind, OpKind::LSTM);
  CompileOptions stream;
  stream.mode = RecurrentMode::Stream;
  const Graph s = resolve_for_mode(graph_of({input({5, 3}), lstm(3, 2, true), lstm(3, 2, false)}, {1, 2}), stream);
  EXPECT_EQ(s.nodes[2].kind, OpKind::LSTM);

  CompileOptions opt = window_options();
  opt.isa = "scalar";
  auto plan = compile_graph(g, opt);
  std::vector<float> x = seeded(15, 9), ys(10), yl(2), yo(2);
  const float* in[] = {x.data()};
  float* out[] = {ys.data(), yl.data(), yo.data()};
  plan->run(in, out);
  EXPECT_EQ(yl[0], ys[8]);  // the sequence's last row, bit for bit
  EXPECT_EQ(yl[1], ys[9]);
  EXPECT_NE(yo[0], yl[0]);
  // The same value the unshared layer computes on its own.
  auto alone = compile_graph(graph_of({input({5, 3}), lstm(3, 2, false)}, {1}), opt);
  std::vector<float> y_alone(2);
  float* out_alone[] = {y_alone.data()};
  alone->run(in, out_alone);
  EXPECT_NEAR(yl[0], y_alone[0], 1e-6f);
  EXPECT_NEAR(yl[1], y_alone[1], 1e-6f);
}

TEST(Lowering, ClassicGruSplitsUIntoItsZrAndHColumns) {
  Node n;
  n.name = "gru";
  n.kind = OpKind::GRU;
  n.units = 2;
  n.reset_after = false;
  n.inputs = {0};
  n.activation.kind = ActKind::Tanh;
  n.recurrent_activation.kind = ActKind::Sigmoid;
  n.weights = {{{3, 6}, seeded(18, 31)}, {{2, 6}, seeded(12, 32)}, {{6}, seeded(6, 33)}};
  const Graph g = graph_of({input({4, 3}), n}, {1});
  const LoweredGraph L = lower_for_plan(g, window_options());
  ASSERT_EQ(L.ops.size(), 1u);
  const LoweredOp& op = L.ops[0];
  EXPECT_EQ(op.kind, StepKind::GruClassic);
  const std::vector<float>& u = g.nodes[1].weights[1].data;
  ASSERT_EQ(op.recurrent_kernel.cols, 4);
  ASSERT_EQ(op.recurrent_kernel_h.cols, 2);
  for (int k = 0; k < 2; ++k) {
    for (int j = 0; j < 6; ++j) {
      const float got = j < 4 ? op.recurrent_kernel.data[static_cast<size_t>(k) * 4 + j]
                              : op.recurrent_kernel_h.data[static_cast<size_t>(k) * 2 + (j - 4)];
      EXPECT_EQ(got, u[static_cast<size_t>(k) * 6 + j]) << k << "," << j;
    }
  }
}

TEST(Lowering, EachTensorLivesFromItsProducerToItsLastReader) {
  // x -> a -> b -> c (output), and a also feeds the Add at the end: a lives to the last op.
  Node add;
  add.name = "add";
  add.kind = OpKind::Add;
  add.inputs = {3, 1};
  const Graph g = graph_of({input({4}), dense("a", 4, 4, 0, ActKind::Linear, 1), dense("b", 4, 4, 1, ActKind::Linear, 3),
                            dense("c", 4, 4, 2, ActKind::Linear, 5), add},
                           {4});
  const LoweredGraph L = lower_for_plan(g, window_options());
  ASSERT_EQ(L.ops.size(), 4u);
  const LoweredTensor& x = L.tensors[L.ops[0].in];
  EXPECT_EQ(x.input, 0);
  const LoweredTensor& a = L.tensors[L.ops[0].out];
  const LoweredTensor& b = L.tensors[L.ops[1].out];
  const LoweredTensor& c = L.tensors[L.ops[2].out];
  const LoweredTensor& sum = L.tensors[L.ops[3].out];
  EXPECT_EQ(a.first, 0);
  EXPECT_EQ(a.last, 3);
  EXPECT_EQ(b.first, 1);
  EXPECT_EQ(b.last, 2);
  EXPECT_EQ(c.first, 2);
  EXPECT_EQ(c.last, 3);
  EXPECT_EQ(sum.first, 3);
  EXPECT_EQ(sum.last, 4);  // an output: to the end
}

// A deep chain of equal Dense layers needs two tensors' room at a time, however deep; the plan's
// arena holds about that, and its outputs are the outputs of the same layers run one by one here.
TEST(CpuPlanArena, DeadTensorsMemoryIsReused) {
  const int width = 64, depth = 12;
  std::vector<Node> nodes = {input({width})};
  for (int i = 0; i < depth; ++i) {
    nodes.push_back(dense("d" + std::to_string(i), width, width, i, ActKind::Tanh, 100 + 2 * i));
  }
  const Graph g = graph_of(nodes, {depth});
  CompileOptions opt = window_options();
  opt.isa = "scalar";
  auto plan = compile_graph(g, opt);
  const size_t tensor_bytes = width * sizeof(float);
  EXPECT_LE(plan->arena_bytes(), 2 * tensor_bytes);
  EXPECT_LT(plan->arena_bytes(), depth * tensor_bytes / 4);

  std::vector<float> x = seeded(width, 7), y(width);
  const float* in[] = {x.data()};
  float* out[] = {y.data()};
  plan->run(in, out);
  std::vector<float> want = x;
  for (int i = 0; i < depth; ++i) {
    const Node& d = g.nodes[1 + i];
    std::vector<float> next(width);
    for (int j = 0; j < width; ++j) {
      double acc = d.weights[1].data[j];
      for (int k = 0; k < width; ++k) acc += double{want[k]} * d.weights[0].data[static_cast<size_t>(k) * width + j];
      next[j] = static_cast<float>(std::tanh(acc));
    }
    want = next;
  }
  for (int j = 0; j < width; ++j) EXPECT_NEAR(y[j], want[j], 1e-4) << j;
}

}  // namespace
}  // namespace tickinfer::engine
