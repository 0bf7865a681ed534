// LSTM and GRU onto the engine's Keras-layout recurrent layers: one engine node per direction
// (the reverse and bidirectional outputs are assembled in onnx_rnn_directions.cpp).

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

ActivationSpec rnn_activation(Lowerer& L, const onnx::NodeProto& n, const std::vector<std::string>& names, size_t k,
                              bool gate) {
  ActivationSpec s;
  const std::string& a = names[k];
  if (a == "Sigmoid") {
    s.kind = ActKind::Sigmoid;
  } else if (a == "Tanh" && !gate) {
    s.kind = ActKind::Tanh;
  } else if (a == "Relu" && !gate) {
    s.kind = ActKind::Relu;
  } else if (a == "HardSigmoid" && gate) {
    // activation_alpha / _beta are handed out in order to the functions that take them (of the
    // ones accepted here, HardSigmoid alone), every direction's in turn; missing ones default.
    int taker = 0;
    for (size_t j = 0; j < k; ++j) taker += names[j] == "HardSigmoid" ? 1 : 0;
    const auto* aa = L.attr(n, "activation_alpha");
    const auto* bb = L.attr(n, "activation_beta");
    s.kind = ActKind::HardSigmoid;
    s.alpha = 0.2f, s.beta = 0.5f;
    if (aa && aa->floats_size() > taker) s.alpha = aa->floats(taker);
    if (bb && bb->floats_size() > taker) s.beta = bb->floats(taker);
  } else {
    L.fail(n, "activation " + a + " at position " + std::to_string(k) + " is not supported");
  }
  return s;
}

// The number of directions `n` runs (1: forward or reverse, 2: bidirectional).
int rnn_directions(Lowerer& L, const onnx::NodeProto& n) {
  const std::string dir = L.attr_s(n, "direction", "forward");
  if (dir == "forward" || dir == "reverse") return 1;
  if (dir == "bidirectional") return 2;
  L.fail(n, "direction '" + dir + "' is not one of forward, reverse, bidirectional");
}

// The checks LSTM and GRU share; returns the hidden size. `zero_inputs`: the inputs that must be
// known all-zero (initial states, peepholes) where given.
int check_rnn(Lowerer& L, const onnx::NodeProto& n, int gates, const std::vector<int>& zero_inputs) {
  const int64_t D = rnn_directions(L, n);
  if (L.has_attr(n, "clip")) L.fail(n, "clip is not supported");
  if (L.has_input(n, 4)) L.fail(n, "sequence_lens is not supported (every sequence runs the full window)");
  for (int k : zero_inputs) {
    if (L.has_input(n, k) && !known_zero(L, n.input(k))) {
      L.fail(n, "input " + std::to_string(k) + " ('" + n.input(k) + "') is not a known all-zero " +
                    (k == 7 ? "peephole; peepholes are not supported" : "initial state; only an LSTM starts from a computed one"));
    }
  }
  const int64_t H = L.attr_i(n, "hidden_size", 0);
  const Tensor& w = L.constant(n, 1);
  const std::string d = std::to_string(D);
  if (!w.is_float || w.dims.size() != 3 || w.dims[0] != D || w.dims[1] != gates * H || H < 1 || H > (1 << 20)) {
    L.fail(n, "W must be a float [" + d + ", " + std::to_string(gates) + "*hidden_size, input] tensor");
  }
  const Tensor& r = L.constant(n, 2);
  if (!r.is_float || r.dims != std::vector<int64_t>{D, gates * H, H}) L.fail(n, "R must be a float [" + d + ", gates*H, H] tensor");
  if (L.has_input(n, 3)) {
    const Tensor& b = L.constant(n, 3);
    if (!b.is_float || b.dims != std::vector<int64_t>{D, 2 * gates * H}) L.fail(n, "B must be a float [" + d + ", 2*gates*H] tensor");
  }
  return static_cast<int>(H);
}

}  // namespace

// X must be [T, batch, I] (layout 0) or [batch, T, I] (layout 1) over an engine [T, I] tensor.
Value rnn_sequence(Lowerer& L, const onnx::NodeProto& n, const Value& x, int layout, int I) {
  const int t_axis = layout == 0 ? 0 : 1, b_axis = layout == 0 ? 1 : 0;
  // A one-step window ([1, batch, I]) arrives as an engine [I] tensor, its time axis a unit
  // axis like the batch: the recurrent layer needs the [1, I] sequence back.
  if (x.axes.size() == 3 && L.eshape(x.node).size() == 1 && x.axes[t_axis] == kUnit && x.axes[b_axis] == kUnit &&
      x.axes[2] == 0) {
    Value seq;
    seq.node = L.reshape(n, x, Shape{1, L.eshape(x.node)[0]});
    seq.axes = {kUnit, kUnit, 1};
    seq.axes[t_axis] = 0;
    if (L.eshape(seq.node)[1] != I) L.fail(n, "W's input size does not match X's features");
    return seq;
  }
  // A view that leaves size-1 engine axes unnamed (tf2onnx's Reshape of DeepLOB's [T, 1, C]
  // features to [T, C] is one): the [T, I] sequence made explicit.
  const Shape& es = L.eshape(x.node);
  if (x.axes.size() == 3 && es.size() > 2 && x.axes[b_axis] == kUnit && x.axes[t_axis] != kUnit &&
      x.axes[2] != kUnit && x.axes[t_axis] < x.axes[2]) {
    bool units_only = true;
    for (size_t a = 0; a < es.size(); ++a) {
      const int ai = static_cast<int>(a);
      if (ai != x.axes[t_axis] && ai != x.axes[2] && es[a] != 1) units_only = false;
    }
    if (units_only) {
      Value seq;
      seq.node = L.reshape(n, x, Shape{es[x.axes[t_axis]], es[x.axes[2]]});
      seq.axes = {kUnit, kUnit, 1};
      seq.axes[t_axis] = 0;
      return rnn_sequence(L, n, seq, layout, I);
    }
  }
  // A one-step window whose batch axis, not its time axis, the engine tensor carries (a decoder
  // step fed a concatenation at batch 1): the same I values as the [1, I] sequence.
  if (x.axes.size() == 3 && shape_size(L.eshape(x.node)) == I && x.axes[t_axis] == kUnit && x.axes[2] != kUnit) {
    const std::vector<int> d = L.dims(x);
    if (d[0] == 1 && d[1] == 1 && d[2] == I && (es.size() != 2 || x.axes[b_axis] != kUnit)) {
      Value seq;
      seq.node = L.reshape(n, x, Shape{1, I});
      seq.axes = {kUnit, kUnit, 1};
      seq.axes[t_axis] = 0;
      return seq;
    }
  }
  // The time axis of a one-step window may be a unit axis of the view like the batch.
  const bool time_ok = x.axes.size() == 3 && L.eshape(x.node).size() == 2 &&
                       (x.axes[t_axis] == 0 || (x.axes[t_axis] == kUnit && L.eshape(x.node)[0] == 1));
  if (!time_ok || x.axes[2] != 1 || x.axes[b_axis] != kUnit) {
    std::string axes;
    for (int a : x.axes) {
      if (!axes.empty()) axes += ',';
      axes += a == kUnit ? std::string("unit") : std::to_string(a);
    }
    L.fail(n, "X is not a [time, features] sequence in the layout the engine runs (layout " + std::to_string(layout) +
                  "; its axes are engine axes [" + axes + "] of a rank-" + std::to_string(L.eshape(x.node).size()) +
                  " engine tensor)");
  }
  if (L.eshape(x.node)[1] != I) L.fail(n, "W's input size does not match X's features");
  return x;
}

namespace {

Value rnn_input(Lowerer& L, const onnx::NodeProto& n, int layout, int I) {
  return rnn_sequence(L, n, L.runtime(n, 0), layout, I);
}

// ONNX packs gate blocks of H rows, per direction; `order[g]` is the ONNX block of engine gate g.
// Returns direction `dir`'s engine [in, gates*H] matrix, transposed from ONNX's [gates*H, in].
std::vector<float> gate_matrix(const Tensor& t, int H, int in, const std::vector<int>& order, int dir) {
  const int G = static_cast<int>(order.size());
  std::vector<float> m(static_cast<size_t>(in) * G * H);
  const float* base = t.f.data() + static_cast<size_t>(dir) * G * H * in;
  for (int g = 0; g < G; ++g) {
    for (int j = 0; j < H; ++j) {
      const float* row = base + static_cast<size_t>(order[g] * H + j) * in;
      for (int i = 0; i < in; ++i) m[static_cast<size_t>(i) * G * H + g * H + j] = row[i];
    }
  }
  return m;
}

Value finish(Lowerer& L, const onnx::NodeProto& n, Node node, const Value& x, int out, int layout) {
  if (out == 0) {
    node.return_sequences = true;
    Value v;
    v.node = L.add(std::move(node), n, {x.node});
    v.axes = layout == 0 ? std::vector<int>{0, kUnit, kUnit, 1} : std::vector<int>{kUnit, 0, kUnit, 1};
    return v;
  }
  if (out == 1) {
    node.return_sequences = false;
    Value v;
    v.node = L.add(std::move(node), n, {x.node});
    v.axes = {kUnit, kUnit, 0};
    return v;
  }
  L.fail(n, "output " + std::to_string(out) + " (the final cell state) is not supported");
}

int rnn_layout(Lowerer& L, const onnx::NodeProto& n) {
  const int64_t layout = L.attr_i(n, "layout", 0);
  if (layout != 0 && layout != 1) L.fail(n, "layout must be 0 or 1");
  return static_cast<int>(layout);
}

// Whether input k of `n` is a computed initial state (given and not known to be zero).
bool computed_state(Lowerer& L, const onnx::NodeProto& n, int k) { return L.has_input(n, k) && !known_zero(L, n.input(k)); }

// An initial state ([1, batch, H]) as the engine's [H] vector.
int state_vector(Lowerer& L, const onnx::NodeProto& n, int k, int H) {
  const Value& v = L.runtime(n, k);
  if (shape_size(L.eshape(v.node)) != H) {
    L.fail(n, "input " + std::to_string(k) + " ('" + n.input(k) + "') is not a [1, 1, hidden_size] state at batch 1");
  }
  return L.reshape(n, v, Shape{H});
}

// An LSTM that starts from computed states or whose final cell state Y_c is read (an encoder
// handing its state to a decoder): one engine node computes the h rows (every step's when Y is
// read, else the last) and c, and each output is a SliceRows of it, so the recurrence runs once
// for all three.
Value stateful_lstm_output(Lowerer& L, const onnx::NodeProto& n, Node node, const Value& x, int out, int layout) {
  int full = L.shared_node(n);
  if (full < 0) {
    const int H = node.units;
    std::vector<int> inputs = {x.node};
    if (computed_state(L, n, 5) || computed_state(L, n, 6)) {
      if (!computed_state(L, n, 5) || !computed_state(L, n, 6)) {
        L.fail(n, "initial_h and initial_c must both be computed states (one of them is zero or absent)");
      }
      inputs.push_back(state_vector(L, n, 5, H));
      inputs.push_back(state_vector(L, n, 6, H));
    }
    node.return_sequences = n.output_size() > 0 && !n.output(0).empty() && L.uses(n.output(0)) > 0;
    node.return_state = true;
    full = L.add(std::move(node), n, inputs);
    L.set_shared_node(n, full);
  }
  const char* what[] = {"Y", "Y_h", "Y_c"};
  Node rows = lstm_output_slice(static_cast<LstmOutput>(out), L.node(full).return_sequences);
  rows.name = what[out];
  Value v;
  v.node = L.add(std::move(rows), n, {full});
  v.axes = out != 0 ? std::vector<int>{kUnit, kUnit, 0}
           : layout == 0 ? std::vector<int>{0, kUnit, kUnit, 1} : std::vector<int>{kUnit, 0, kUnit, 1};
  return v;
}

// Every direction's activations, `per_dir` names each, listed direction after direction as the
// attribute lists them; ONNX's defaults when absent.
std::vector<std::string> rnn_activations(Lowerer& L, const onnx::NodeProto& n, size_t per_dir, int dirs,
                                         const std::vector<std::string>& defaults) {
  std::vector<std::string> acts = L.attr_strings(n, "activations");
  if (acts.empty()) {
    for (int d = 0; d < dirs; ++d) acts.insert(acts.end(), defaults.begin(), defaults.end());
  }
  if (acts.size() != per_dir * dirs) {
    L.fail(n, "activations must name " + std::to_string(per_dir) + " functions per direction");
  }
  return acts;
}

Value lower_lstm(Lowerer& L, const onnx::NodeProto& n, int out) {
  if (L.attr_i(n, "input_forget", 0) != 0) L.fail(n, "input_forget=1 is not supported");
  if (out < 0 || out > 2) L.fail(n, "has no output " + std::to_string(out));
  const int H = check_rnn(L, n, 4, {7});
  const int dirs = rnn_directions(L, n);
  const std::vector<std::string> acts = rnn_activations(L, n, 3, dirs, {"Sigmoid", "Tanh", "Tanh"});
  const int layout = rnn_layout(L, n);
  const Tensor& w = L.constant(n, 1);
  const int I = static_cast<int>(w.dims[2]);
  const Value x = rnn_input(L, n, layout, I);
  // Engine (Keras) gates i, f, c, o; ONNX blocks i, o, f, c.
  const std::vector<int> order = {0, 2, 3, 1};
  std::vector<Node> cells;
  for (int d = 0; d < dirs; ++d) {
    const size_t a0 = 3 * static_cast<size_t>(d);
    if (acts[a0 + 1] != acts[a0 + 2]) L.fail(n, "different cell (g) and output (h) activations are not supported");
    Node node;
    node.kind = OpKind::LSTM;
    node.units = H;
    node.recurrent_activation = rnn_activation(L, n, acts, a0, true);
    node.activation = rnn_activation(L, n, acts, a0 + 1, false);
    std::vector<float> bias(static_cast<size_t>(4 * H), 0.0f);
    if (L.has_input(n, 3)) {
      const float* b = L.constant(n, 3).f.data() + static_cast<size_t>(d) * 8 * H;
      for (int g = 0; g < 4; ++g) {
        for (int j = 0; j < H; ++j) bias[g * H + j] = b[order[g] * H + j] + b[4 * H + order[g] * H + j];
      }
    }
    node.weights = {{{I, 4 * H}, gate_matrix(w, H, I, order, d)},
                    {{H, 4 * H}, gate_matrix(L.constant(n, 2), H, H, order, d)},
                    {{4 * H}, std::move(bias)}};
    cells.push_back(std::move(node));
  }
  if (L.attr_s(n, "direction", "forward") != "forward") return directed_rnn_output(L, n, std::move(cells), x, out, layout);
  const bool reads_c = n.output_size() > 2 && !n.output(2).empty() && L.uses(n.output(2)) > 0;
  if (reads_c || computed_state(L, n, 5) || computed_state(L, n, 6)) {
    return stateful_lstm_output(L, n, std::move(cells[0]), x, out, layout);
  }
  return finish(L, n, std::move(cells[0]), x, out, layout);
}

Value lower_gru(Lowerer& L, const onnx::NodeProto& n, int out) {
  const int H = check_rnn(L, n, 3, {5});
  const int dirs = rnn_directions(L, n);
  const std::vector<std::string> acts = rnn_activations(L, n, 2, dirs, {"Sigmoid", "Tanh"});
  const int layout = rnn_layout(L, n);
  const Tensor& w = L.constant(n, 1);
  const int I = static_cast<int>(w.dims[2]);
  const Value x = rnn_input(L, n, layout, I);
  const std::vector<int> order = {0, 1, 2};  // z, r, h in both
  std::vector<Node> cells;
  for (int d = 0; d < dirs; ++d) {
    Node node;
    node.kind = OpKind::GRU;
    node.units = H;
    node.recurrent_activation = rnn_activation(L, n, acts, 2 * static_cast<size_t>(d), true);
    node.activation = rnn_activation(L, n, acts, 2 * static_cast<size_t>(d) + 1, false);
    // linear_before_reset=1 applies the reset gate after the recurrent matmul: Keras reset_after.
    node.reset_after = L.attr_i(n, "linear_before_reset", 0) != 0;
    std::vector<float> wb(static_cast<size_t>(3 * H), 0.0f), rb(static_cast<size_t>(3 * H), 0.0f);
    if (L.has_input(n, 3)) {
      const float* b = L.constant(n, 3).f.data() + static_cast<size_t>(d) * 6 * H;
      wb.assign(b, b + 3 * H);
      rb.assign(b + 3 * H, b + 6 * H);
    }
    Weight bias;
    if (node.reset_after) {
      bias = {{2, 3 * H}, wb};
      bias.data.insert(bias.data.end(), rb.begin(), rb.end());
    } else {
      // Without reset_after both biases sit inside the same activation argument: one sum.
      for (int k = 0; k < 3 * H; ++k) wb[k] += rb[k];
      bias = {{3 * H}, wb};
    }
    node.weights = {{{I, 3 * H}, gate_matrix(w, H, I, order, d)},
                    {{H, 3 * H}, gate_matrix(L.constant(n, 2), H, H, order, d)}, std::move(bias)};
    cells.push_back(std::move(node));
  }
  if (L.attr_s(n, "direction", "forward") != "forward") return directed_rnn_output(L, n, std::move(cells), x, out, layout);
  return finish(L, n, std::move(cells[0]), x, out, layout);
}

}  // namespace

bool known_fill(Lowerer& L, const std::string& name, double fill) {
  auto all_fill = [fill](const Tensor& t) {
    for (int64_t k = 0; k < t.size(); ++k) {
      if (t.at(k) != fill) return false;
    }
    return true;
  };
  if (L.is_initializer(name)) return all_fill(L.value(name).c);
  const onnx::NodeProto* p = L.producer(name);
  if (p == nullptr) return false;  // a graph input: fed by the caller
  const std::string& op = p->op_type();
  if (op == "Expand" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Identity" ||
      op == "Cast" || op == "Tile" || op == "Transpose" || op == "Slice" || op == "Gather") {
    return p->input_size() > 0 && known_fill(L, p->input(0), fill);  // every element comes from input 0
  }
  if (op == "Concat") {
    for (const auto& in : p->input()) {
      if (!known_fill(L, in, fill)) return false;
    }
    return p->input_size() > 0;
  }
  if (op == "ConstantOfShape") {
    const auto* v = L.attr(*p, "value");
    if (v == nullptr) return fill == 0.0;  // the default fill is 0
    return all_fill(decode_tensor(v->t(), L.source(), "ConstantOfShape value"));
  }
  if (op == "Constant") {
    const Value& v = L.value(name);
    return v.is_const && all_fill(v.c);
  }
  return false;
}

bool known_zero(Lowerer& L, const std::string& name) { return known_fill(L, name, 0.0); }

bool lower_rnn_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result) {
  if (n.op_type() == "LSTM") result = lower_lstm(L, n, out);
  else if (n.op_type() == "GRU") result = lower_gru(L, n, out);
  else if (n.op_type() == "ReverseSequence") result = lower_reverse_sequence(L, n);
  else return false;
  return true;
}

}  // namespace tickinfer::formats::onnx_import
