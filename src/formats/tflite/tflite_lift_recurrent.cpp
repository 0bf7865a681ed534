// Lift of TFLite's recurrent forms: UNIDIRECTIONAL_SEQUENCE_LSTM as tf_keras conversions write
// it (a Keras LSTM: no peepholes, projection, layer norm or CIFG; batch-major), and the
// STRIDED_SLICE that takes its last time step (return_sequences=False).
//
// The fused op clips the cell state to [-cell_clip, cell_clip] after each update (tf_keras
// writes 10); the graph LSTM applies the same clip (Node::cell_clip). Its state tensors are
// TFLite variables, zero at the start of a window and carried between steps in stream mode,
// which is what the graph LSTM's state does.
//
// A recognised recurrent loop (a WHILE whose body is a Keras LSTM or GRU cell) lifts the same
// way: one more case that maps the loop's sequence output to an LSTM/GRU node with
// return_sequences=true; lift_strided_slice then turns a last-step slice of it into
// return_sequences=false, whatever op produced the sequence.
//
// REVERSE_V2 of the time axis (Keras' go_backwards and Bidirectional's backward layer: the
// time-major input reversed before the loop, the backward outputs reversed back) is a
// ReverseTime node.
#include <cstring>

#include "formats/tflite/tflite_lift_context.hpp"
#include "tflite/rewrite/gru_loop.hpp"
#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer::formats::lift {

namespace {

// TFLite operand indices of UNIDIRECTIONAL_SEQUENCE_LSTM.
constexpr int kInputToGate = 1, kRecurrentToGate = 5, kGateBias = 12;
constexpr int kOutputState = 18, kCellState = 19;
constexpr int kOptionalAbsent[] = {9, 10, 11, 16, 17, 20, 21, 22, 23};  // peepholes, projection, layer norm

void require_zero_variable(Lifter& l, int t, const char* what) {
  if (t < 0) l.refuse(std::string(what) + " is missing");
  const tfl::Tensor& x = l.tensor(t);
  if (!x.is_variable) l.refuse(std::string(what) + " is not a variable tensor");
  for (uint8_t b : x.data) {
    if (b != 0) l.refuse(std::string(what) + " starts from a non-zero value");
  }
}

// Keras layout from UNIDIRECTIONAL_SEQUENCE_LSTM's per-gate operands: kernel (F, 4u), recurrent
// (u, 4u), bias (4u), gate blocks i, f, c, o; TFLite keeps one [u, F] / [u, u] matrix and one [u]
// bias per gate.
std::vector<Weight> keras_lstm_weights(Lifter& l, const tfl::Op& o, int F, int u) {
  Weight kernel{{F, 4 * u}, std::vector<float>(static_cast<size_t>(F) * 4 * u)};
  Weight recurrent{{u, 4 * u}, std::vector<float>(static_cast<size_t>(u) * 4 * u)};
  Weight bias{{4 * u}, std::vector<float>(static_cast<size_t>(4 * u))};
  for (int g = 0; g < 4; ++g) {
    const std::vector<float> w = l.constant_f32(o.inputs[static_cast<size_t>(kInputToGate + g)], "input weights");
    const std::vector<float> r = l.constant_f32(o.inputs[static_cast<size_t>(kRecurrentToGate + g)], "recurrent weights");
    const std::vector<float> b = l.constant_f32(o.inputs[static_cast<size_t>(kGateBias + g)], "gate bias");
    if (w.size() != static_cast<size_t>(u) * F || r.size() != static_cast<size_t>(u) * u || b.size() != static_cast<size_t>(u)) {
      l.refuse("gate " + std::to_string(g) + " weights do not match " + std::to_string(u) + " units");
    }
    for (int c = 0; c < u; ++c) {
      const size_t col = static_cast<size_t>(g) * u + c;
      for (int k = 0; k < F; ++k) kernel.data[static_cast<size_t>(k) * 4 * u + col] = w[static_cast<size_t>(c) * F + k];
      for (int k = 0; k < u; ++k) recurrent.data[static_cast<size_t>(k) * 4 * u + col] = r[static_cast<size_t>(c) * u + k];
      bias.data[col] = b[static_cast<size_t>(c)];
    }
  }
  return {std::move(kernel), std::move(recurrent), std::move(bias)};
}

// The graph LSTM for a UNIDIRECTIONAL_SEQUENCE_LSTM `o` over `in` ([T, F] elements), mapped to
// the op's (or loop's) output tensor `out`.
void add_lstm_node(Lifter& l, const tfl::Op& o, int in, int T, int F, int u, bool sequences, int out) {
  Node n;
  n.kind = OpKind::LSTM;
  n.keras_class = "LSTM";
  n.units = u;
  n.return_sequences = sequences;
  n.activation = l.fused(o.options.activation);
  n.recurrent_activation.kind = ActKind::Sigmoid;
  n.cell_clip = o.options.cell_clip;  // a Keras 3 loop's cell has none (0)
  n.weights = keras_lstm_weights(l, o, F, u);
  n.inputs = {l.as_shape(in, {T, F})};
  n.shape = sequences ? Shape{T, u} : Shape{u};
  n.name = l.node_name(out);
  const int idx = l.add_node(std::move(n), {in});
  l.set_value(out, own_value(idx));
}

}  // namespace

void lift_sequence_lstm(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 24 || o.outputs.size() != 1) l.refuse("expects 24 operands and one output");
  for (int k : kOptionalAbsent) {
    if (o.inputs[static_cast<size_t>(k)] >= 0) {
      l.refuse(k >= 20 ? "has layer-norm coefficients (no Keras LSTM form)"
                       : k >= 16 ? "has a projection (no Keras LSTM form)" : "has peepholes (no Keras LSTM form)");
    }
  }
  if (o.inputs[kInputToGate] < 0) l.refuse("has no input gate (CIFG; no Keras LSTM form)");
  if (o.options.time_major) l.refuse("is time-major");
  if (o.options.cell_clip < 0) l.refuse("has a negative cell_clip");
  require_zero_variable(l, o.inputs[kOutputState], "output_state");
  require_zero_variable(l, o.inputs[kCellState], "cell_state");

  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  if (s.size() != 3 || s[0] != 1) l.refuse("input is not [1, steps, features]");
  const int T = s[1], F = s[2];
  const tfl::Shape& wshape = l.tensor(o.inputs[kInputToGate]).shape;
  if (wshape.size() != 2 || wshape[1] != F) l.refuse("input_to_input_weights is not [units, features]");
  const int u = wshape[0];

  const tfl::Shape& os = l.tensor(o.outputs[0]).shape;
  if (os.size() != 3 || os[0] != 1 || os[1] != T || os[2] != u) l.refuse("output is not [1, steps, units]");
  add_lstm_node(l, o, in, T, F, u, true, o.outputs[0]);
}

namespace {

std::vector<int32_t> slice_operand(Lifter& l, int t, size_t rank, const char* what) {
  if (t < 0) l.refuse(std::string(what) + " is missing");
  const tfl::Tensor& x = l.tensor(t);
  if (!x.is_constant() || x.type != tfl::DType::I32) l.refuse(std::string(what) + " is not an int32 constant");
  std::vector<int32_t> v(x.data.size() / sizeof(int32_t));
  std::memcpy(v.data(), x.data.data(), v.size() * sizeof(int32_t));
  if (v.size() != rank) l.refuse(std::string(what) + " does not have one value per axis");
  return v;
}

// [begin, end) of axis d after TFLite's masks and negative indices (stride 1).
std::pair<int, int> slice_range(const tfl::OpOptions& opt, int d, int dim, int begin, int end) {
  const auto clampi = [dim](int x) { return x < 0 ? std::max(x + dim, 0) : std::min(x, dim); };
  int b = (opt.begin_mask >> d) & 1 ? 0 : clampi(begin);
  int e = (opt.end_mask >> d) & 1 ? dim : clampi(end);
  if ((opt.shrink_axis_mask >> d) & 1) {
    b = begin < 0 ? begin + dim : begin;
    e = b + 1;
  }
  return {b, e};
}

}  // namespace

// STRIDED_SLICE of [1, T, U] taking step T - 1: the sequence's producer stops returning
// sequences (when nothing else reads them); a one-step sequence is a copy.
void lift_strided_slice(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 4 || o.outputs.size() != 1) l.refuse("expects input, begin, end, strides and one output");
  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  const tfl::OpOptions& opt = o.options;
  if (s.size() != 3 || s[0] != 1) l.refuse("input is not [1, steps, units]");
  if (opt.ellipsis_mask || opt.new_axis_mask || opt.offset) l.refuse("ellipsis, new-axis or offset slicing");
  const auto begin = slice_operand(l, o.inputs[1], 3, "begin");
  const auto end = slice_operand(l, o.inputs[2], 3, "end");
  const auto strides = slice_operand(l, o.inputs[3], 3, "strides");
  for (int32_t st : strides) {
    if (st != 1) l.refuse("strides other than 1");
  }
  const int T = s[1];
  const bool last_step = slice_range(opt, 0, 1, begin[0], end[0]) == std::pair<int, int>{0, 1} &&
                         slice_range(opt, 1, T, begin[1], end[1]) == std::pair<int, int>{T - 1, T} &&
                         slice_range(opt, 2, s[2], begin[2], end[2]) == std::pair<int, int>{0, s[2]};
  if (!last_step) l.refuse("only the slice of the last time step of a sequence has a graph form");
  Value v = l.value(in);
  if (v.padded()) l.refuse("slices a PAD result");
  Node& producer = l.node(v.node);
  const bool recurrent = producer.kind == OpKind::LSTM || producer.kind == OpKind::GRU;
  if (recurrent && producer.return_sequences && v.own_output && l.consumers(in) == 1 && !l.is_output(in)) {
    producer.return_sequences = false;
    producer.shape = {producer.units};
    producer.origin += " + " + l.op_origin();
    return l.set_value(o.outputs[0], std::move(v));
  }
  if (T != 1) l.refuse("the sliced sequence does not come from an LSTM/GRU read only by this slice");
  v.pending_origin += (v.pending_origin.empty() ? "" : " + ") + l.op_origin();
  v.own_output = false;
  l.set_value(o.outputs[0], std::move(v));
}

namespace {

void require_zero_constant(Lifter& l, int t, const char* what) {
  const tfl::Tensor& x = l.tensor(t);
  if (!x.is_constant()) l.refuse(std::string(what) + " is not a constant (a loop that does not start from zero)");
  for (uint8_t b : x.data) {
    if (b != 0) l.refuse(std::string(what) + " starts from a non-zero value");
  }
}

bool zero_constant(Lifter& l, int t) {
  const tfl::Tensor& x = l.tensor(t);
  if (!x.is_constant()) return false;
  for (uint8_t b : x.data) {
    if (b != 0) return false;
  }
  return true;
}

// A loop that starts from computed h and c (a decoder fed its encoder's final state) or whose
// final h and c are read: one LSTM node with return_state over every step ([T h rows | c]), the
// loop's buffer, h and c outputs SliceRows of it.
void lift_stateful_lstm_loop(Lifter& l, const tfl::Op& o, const tfl::LstmLoopVars& v, int T, int F, int u, bool sequences) {
  const tfl::Op& w = l.op();
  const int h0 = w.inputs[static_cast<size_t>(v.h)], c0 = w.inputs[static_cast<size_t>(v.c)];
  const int h_out = w.outputs[static_cast<size_t>(v.h)], c_out = w.outputs[static_cast<size_t>(v.c)];
  const bool from_zero = zero_constant(l, h0) && zero_constant(l, c0);
  Node n;
  n.kind = OpKind::LSTM;
  n.keras_class = "LSTM";
  n.units = u;
  n.return_sequences = true;
  n.return_state = true;
  n.activation = l.fused(o.options.activation);
  n.recurrent_activation.kind = ActKind::Sigmoid;
  n.cell_clip = o.options.cell_clip;
  n.weights = keras_lstm_weights(l, o, F, u);
  n.inputs = {l.as_shape(o.inputs[0], {T, F})};
  std::vector<int> tensors = {o.inputs[0]};
  if (!from_zero) {
    n.inputs.push_back(l.as_shape(h0, {u}));
    n.inputs.push_back(l.as_shape(c0, {u}));
    tensors.insert(tensors.end(), {h0, c0});
  }
  n.shape = {T + 1, u};
  n.name = l.node_name(v.buffer >= 0 ? w.outputs[static_cast<size_t>(v.buffer)] : h_out);
  const std::string base = n.name;
  const int full = l.add_node(std::move(n), tensors);
  auto rows = [&](int out, const char* what, LstmOutput which, Shape shape) {
    if (l.consumers(out) == 0 && !l.is_output(out)) return;
    Node r = lstm_output_slice(which, sequences);
    r.keras_class = "LSTM";
    r.name = l.unique_name(base + "/" + what);
    r.inputs = {full};
    r.shape = std::move(shape);
    l.set_value(out, own_value(l.add_node(std::move(r), {})));
  };
  if (v.buffer >= 0) {
    rows(w.outputs[static_cast<size_t>(v.buffer)], "output", LstmOutput::Output, sequences ? Shape{T, u} : Shape{u});
  }
  rows(h_out, "state_h", LstmOutput::StateH, {u});
  rows(c_out, "state_c", LstmOutput::StateC, {u});
}

// A Keras 3 LSTM as the converter writes it: WHILE over [step, t, buffer, h, c, x] with x
// time-major [T, 1, F], which tfl::lower_lstm_loops recognised (its body checked op by op) and
// gave a subgraph of one time-major UNIDIRECTIONAL_SEQUENCE_LSTM over x. With a batch of 1,
// time-major and batch-major hold the same elements in the same order. From zero states with
// only the buffer read (every h_t, or the last h), one plain LSTM node; otherwise the stateful
// form above. The counters and x after the loop stay unmapped, so an op reading them is refused.
void lift_lstm_loop(Lifter& l) {
  const tfl::Op& w = l.op();
  const tfl::Subgraph* sg = l.program().subgraph(w.options.lowered_subgraph);
  if (!sg || sg->ops.size() != 1 || sg->ops[0].code != tfl::OpCode::SequenceLstm ||
      (w.inputs.size() != 6 && w.inputs.size() != 5) || w.outputs.size() != w.inputs.size()) {
    l.refuse("the lowered loop is not one UNIDIRECTIONAL_SEQUENCE_LSTM over five or six loop variables");
  }
  const tfl::LstmLoopVars v = tfl::lstm_loop_vars(w.inputs.size());
  const tfl::Op& o = sg->ops[0];
  if (o.inputs.size() != 24 || o.inputs[0] != w.inputs[static_cast<size_t>(v.x)] || !o.options.time_major) {
    l.refuse("the lowered LSTM does not read the loop's time-major input");
  }
  const tfl::Shape& s = l.tensor(o.inputs[0]).shape;
  if (s.size() != 3 || s[1] != 1) l.refuse("input is not [steps, 1, features]");
  const int T = s[0], F = s[2];
  const tfl::Shape& wshape = l.tensor(o.inputs[1]).shape;
  if (wshape.size() != 2 || wshape[1] != F) l.refuse("input weights are not [units, features]");
  const int u = wshape[0];
  const bool sequences = v.buffer >= 0 && o.outputs[0] == w.outputs[static_cast<size_t>(v.buffer)];
  const int h_out = w.outputs[static_cast<size_t>(v.h)], c_out = w.outputs[static_cast<size_t>(v.c)];
  const bool states_read = l.consumers(h_out) > 0 || l.consumers(c_out) > 0 || l.is_output(h_out) || l.is_output(c_out);
  if (v.buffer < 0 || states_read || !zero_constant(l, w.inputs[static_cast<size_t>(v.h)]) ||
      !zero_constant(l, w.inputs[static_cast<size_t>(v.c)])) {
    return lift_stateful_lstm_loop(l, o, v, T, F, u, sequences);
  }
  add_lstm_node(l, o, o.inputs[0], T, F, u, sequences, w.outputs[2]);
}

// Keras layout (kernel (F, 3u), recurrent (u, 3u), bias (2, 3u) or (3u); gates z, r, h) from the
// matched loop's FULLY_CONNECTED filters ([out, in]) and the gate blocks the match read.
std::vector<Weight> keras_gru_weights(Lifter& l, const tfl::GruLoop& m) {
  const int F = m.F, u = m.H;
  const std::vector<float> w = l.constant_f32(m.w, "input weights");
  const std::vector<float> r = l.constant_f32(m.u, "recurrent weights");
  const std::vector<float> rh = m.reset_after ? std::vector<float>{} : l.constant_f32(m.u_h, "candidate recurrent weights");
  const std::vector<float> bi = m.b_in >= 0 ? l.constant_f32(m.b_in, "input bias") : std::vector<float>(3 * u, 0.0f);
  const std::vector<float> br = m.b_rec >= 0 ? l.constant_f32(m.b_rec, "recurrent bias") : std::vector<float>(3 * u, 0.0f);
  Weight kernel{{F, 3 * u}, std::vector<float>(static_cast<size_t>(F) * 3 * u)};
  Weight recurrent{{u, 3 * u}, std::vector<float>(static_cast<size_t>(u) * 3 * u)};
  Weight bias{m.reset_after ? Shape{2, 3 * u} : Shape{3 * u}, std::vector<float>(static_cast<size_t>(m.reset_after ? 6 : 3) * u)};
  for (int g = 0; g < 3; ++g) {
    const bool from_u_h = g == 2 && !m.reset_after;
    for (int c = 0; c < u; ++c) {
      const size_t col = static_cast<size_t>(g) * u + c;
      const size_t wrow = static_cast<size_t>(m.w_block[g]) * u + c;
      for (int k = 0; k < F; ++k) kernel.data[static_cast<size_t>(k) * 3 * u + col] = w[wrow * F + k];
      const size_t urow = from_u_h ? static_cast<size_t>(c) : static_cast<size_t>(m.u_block[g]) * u + c;
      const std::vector<float>& src = from_u_h ? rh : r;
      for (int k = 0; k < u; ++k) recurrent.data[static_cast<size_t>(k) * 3 * u + col] = src[urow * u + k];
      bias.data[col] = bi[wrow];
      if (m.reset_after) bias.data[static_cast<size_t>(3 * u) + col] = br[urow];
    }
  }
  return {std::move(kernel), std::move(recurrent), std::move(bias)};
}

// A Keras 3 GRU as the converter writes it: WHILE over [step, t, buffer, h, x], matched op by op
// by tfl::match_gru_loop. As for the LSTM loop, only the buffer output has a graph form.
void lift_gru_loop(Lifter& l, const tfl::GruLoop& m) {
  const tfl::Op& w = l.op();
  require_zero_constant(l, w.inputs[3], "the loop's initial h");
  Node n;
  n.kind = OpKind::GRU;
  n.keras_class = "GRU";
  n.units = m.H;
  n.return_sequences = m.sequences;
  n.reset_after = m.reset_after;
  n.activation.kind = ActKind::Tanh;
  n.recurrent_activation.kind = ActKind::Sigmoid;
  n.weights = keras_gru_weights(l, m);
  n.inputs = {l.as_shape(w.inputs[4], {m.T, m.F})};
  n.shape = m.sequences ? Shape{m.T, m.H} : Shape{m.H};
  n.name = l.node_name(w.outputs[2]);
  const int idx = l.add_node(std::move(n), {w.inputs[4]});
  l.set_value(w.outputs[2], own_value(idx));
}

}  // namespace

void lift_loop(Lifter& l) {
  const tfl::Op& w = l.op();
  const tfl::Subgraph* lowered = l.program().subgraph(w.options.lowered_subgraph);
  if (w.options.lowered_subgraph > 0 && !(lowered && lowered->ops.size() == 1 && lowered->ops[0].code == tfl::OpCode::SequenceGru)) {
    return lift_lstm_loop(l);
  }
  // A dynamic-range GRU (int8 weights) has no graph form: the interpreter runs it.
  if (const auto gru = tfl::match_gru_loop(l.program(), w); gru && !gru->hybrid) return lift_gru_loop(l, *gru);
  l.refuse("is a loop that is not a recognised float Keras LSTM or GRU (the interpreter runs it: op by op, or a "
           "dynamic-range LSTM or GRU as one fused op)");
}

void lift_reverse(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 2 || o.outputs.size() != 1) l.refuse("expects input, axes and one output");
  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  // Lifted values hold their elements in the tensor's row-major order, so reversing axis k is
  // reversing the rows of a [s[k], rest] matrix where every axis before k has size 1: the time
  // axis of a batch-1 sequence, time-major or not. A unit axis reversed is itself.
  int axis = -1;
  std::vector<bool> listed(s.size(), false);
  for (int32_t a : int_constant(l, o.inputs[1], "axis")) {
    const int k = a < 0 ? a + static_cast<int>(s.size()) : a;
    if (k < 0 || k >= static_cast<int>(s.size())) l.refuse("axis out of range");
    if (listed[static_cast<size_t>(k)]) l.refuse("lists an axis twice");
    listed[static_cast<size_t>(k)] = true;
    if (s[static_cast<size_t>(k)] == 1) continue;
    for (int b = 0; b < k; ++b) {
      if (s[static_cast<size_t>(b)] != 1) l.refuse("reverses an axis other than a sequence's time axis");
    }
    if (axis >= 0 && axis != k) l.refuse("reverses two axes");
    axis = k;
  }
  if (axis < 0) {  // a view of the input, as RESHAPE is: nothing may fold into its producer
    Value v = l.value(in);
    v.pending_origin += (v.pending_origin.empty() ? "" : " + ") + l.op_origin();
    v.own_output = false;
    l.set_value(o.outputs[0], std::move(v));
    return;
  }
  int rest = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) rest *= s[d];
  Node n;
  n.kind = OpKind::ReverseTime;
  n.keras_class = "REVERSE_V2";
  n.shape = {s[static_cast<size_t>(axis)], rest};
  n.inputs = {l.as_shape(in, n.shape)};
  n.name = l.node_name(o.outputs[0]);
  l.set_value(o.outputs[0], own_value(l.add_node(std::move(n), {in})));
}

}  // namespace tickinfer::formats::lift
