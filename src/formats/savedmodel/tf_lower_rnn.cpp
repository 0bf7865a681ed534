// Recurrent layers: a While / StatelessWhile whose loop variables are the unstacked input
// sequence (TensorListFromTensor of the time-major input), a reserved output list, one or two zero
// states and the weights. The body is identified as an LSTM or GRU cell by tf_rnn_cell.cpp; the
// loop becomes one Graph LSTM / GRU node, with return_sequences chosen by how its output is used
// (TensorListStack + Transpose: the sequence; StridedSlice [-1] or the final h: the last step).
// Keras' go_backwards and Bidirectional's backward layer reverse the time-major input before the
// loop unstacks it, and Bidirectional reverses the backward sequence back: ReverseV2 along the
// time axis, an engine ReverseTime.
#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/graph.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

bool zero_row_state(const TfTensor& t) {
  if (t.shape.size() != 2 || t.shape[0] != 1 || t.dtype != kTfFloat) return false;
  for (double v : t.values) if (v != 0.0) return false;
  return true;
}

// Whether any node of the frame reads output `index` of node `name` (through Identity nodes), or
// the frame returns it and its caller reads that result (tf_keras returns a layer's final states
// from its standard_lstm function whether or not the model uses them; the signature's own results
// count).
bool output_read(const TfFrame& frame, const std::string& name, int index, int depth = 0) {
  auto reads = [&](const std::string& ref, const std::string& op_of_node) {
    if (ref.empty() || ref[0] == '^') return false;
    const TfRef r = parse_tf_ref(ref, op_of_node);
    return r.node == name && r.index == index;
  };
  const std::string op = frame.nodes.count(name) ? frame.nodes.at(name)->op() : "";
  for (const auto& [n, def] : frame.nodes) {
    for (const std::string& ref : def->input()) {
      if (!reads(ref, op)) continue;
      // An Identity passes it on (tf_keras returns its states through them): read if its output is.
      if (def->op() != "Identity" || depth > 64 || output_read(frame, n, 0, depth + 1)) return true;
    }
  }
  if (!frame.def) return false;
  const auto& outs = frame.def->signature().output_arg();
  for (int j = 0; j < outs.size(); ++j) {
    auto r = frame.def->ret().find(outs[j].name());
    if (r == frame.def->ret().end() || !reads(r->second, op)) continue;
    if (!frame.caller || depth > 64 || output_read(*frame.caller, frame.call_node, j, depth + 1)) return true;
  }
  return false;
}

}  // namespace

std::vector<TfValue> TfLowering::lower_while(Op& op) {
  const std::string body_name = attr_func(op.def, "body");
  auto body = functions_.find(body_name);
  if (body == functions_.end()) throw Error(op.where + ": loop body '" + body_name + "' is not in the function library");
  if (functions_.find(attr_func(op.def, "cond")) == functions_.end()) throw Error(op.where + ": loop condition is not in the function library");
  std::vector<LoopVar> vars(op.in.size());
  int input = -1;
  int64_t steps = 0, features = 0;
  for (size_t i = 0; i < op.in.size(); ++i) {
    const TfValue& v = op.in[i];
    LoopVar& lv = vars[i];
    if (v.kind == TfValue::Kind::Const) {
      lv.tensor = v.tensor;
      lv.role = v.tensor.shape.empty() ? LoopVar::Role::Scalar : zero_row_state(v.tensor) ? LoopVar::Role::State : LoopVar::Role::Weight;
    } else if (v.kind == TfValue::Kind::Resource) {
      lv.tensor = v.tensor;
      lv.role = LoopVar::Role::Weight;
      lv.resource = true;
    } else if (v.kind == TfValue::Kind::List && v.rnn == -1 && v.node >= 0) {
      if (input >= 0) throw Error(op.where + ": loop reads two input sequences (not supported)");
      input = static_cast<int>(i);
      steps = v.shape[0];
      features = v.shape[2];
      lv.role = LoopVar::Role::Input;
    } else if (v.kind == TfValue::Kind::List && v.rnn == -1 && v.node < 0) {
      lv.role = LoopVar::Role::Output;
    } else if (v.kind == TfValue::Kind::Node && v.shape.size() == 2 && v.shape[0] == 1 && v.shape[1] > 0) {
      // A state computed before the loop (a decoder starting from its encoder's final state):
      // zeros stand in while the cell is recognised, which runs the body on random states anyway.
      lv.role = LoopVar::Role::State;
      lv.tensor = TfTensor{kTfFloat, {1, v.shape[1]}, std::vector<double>(static_cast<size_t>(v.shape[1]), 0.0)};
    } else {
      throw Error(op.where + ": loop variable " + std::to_string(i) + " is not a constant, variable or TensorList (not a supported recurrent layer)");
    }
  }
  if (input < 0 || steps < 1) throw Error(op.where + ": loop has no input sequence of known length (not a supported recurrent layer)");
  for (LoopVar& lv : vars) {
    if (lv.role == LoopVar::Role::Input) lv.items.assign(static_cast<size_t>(steps), TfTensor{kTfFloat, {1, features}, std::vector<double>(static_cast<size_t>(features), 0.0)});
    if (lv.role == LoopVar::Role::Output) lv.items.assign(static_cast<size_t>(steps), TfTensor{});
  }
  auto rec = std::make_unique<RnnRecord>();
  rec->cell = recognise_cell(*body->second, vars, features, op.where + ": body '" + body_name + "'");
  rec->name = op.def.name();
  rec->origin = op.def.op() + " '" + op.def.name() + "' (body '" + body_name + "')";
  rec->input_node = op.in[static_cast<size_t>(input)].node;
  rec->steps = steps;
  const bool lstm = rec->cell.kind == OpKind::LSTM;
  const TfValue& h_in = op.in[static_cast<size_t>(rec->cell.h_var)];
  const bool h_computed = h_in.kind == TfValue::Kind::Node;
  const bool c_computed = lstm && op.in[static_cast<size_t>(rec->cell.c_var)].kind == TfValue::Kind::Node;
  if (h_computed || c_computed) {
    if (!lstm) throw Error(op.where + ": a GRU starting from a computed state is not supported (an LSTM's is)");
    if (!h_computed || !c_computed) throw Error(op.where + ": one initial state is computed and the other is not (not supported)");
    rec->h0 = materialize(h_in, op.where);
    rec->c0 = materialize(op.in[static_cast<size_t>(rec->cell.c_var)], op.where);
  }
  rec->reads_c = lstm && output_read(op.frame, op.def.name(), rec->cell.c_var);
  rnns_.push_back(std::move(rec));
  const int id = static_cast<int>(rnns_.size()) - 1;
  std::vector<TfValue> out(op.in.size());
  for (size_t i = 0; i < op.in.size(); ++i) {
    TfValue& v = out[i];
    v.kind = TfValue::Kind::List;
    v.rnn = id;
    if (vars[i].role == LoopVar::Role::Output) v.rnn_output = 0;
    else if (static_cast<int>(i) == rnns_[static_cast<size_t>(id)]->cell.h_var) v.rnn_output = 1;
    else if (static_cast<int>(i) == rnns_[static_cast<size_t>(id)]->cell.c_var) v.rnn_output = 2;
    else if (vars[i].role == LoopVar::Role::Weight) v = op.in[i];
    else v.rnn_output = 3;  // counters and the input list after the loop: not used by Keras
  }
  return out;
}

int TfLowering::rnn_node(int rnn, bool sequences, const std::string& where) {
  (void)where;
  RnnRecord& r = *rnns_.at(static_cast<size_t>(rnn));
  int& cached = sequences ? r.sequence_node : r.last_node;
  if (cached >= 0) return cached;
  if (r.stateful()) return cached = rnn_rows(rnn, sequences ? LstmOutput::Output : LstmOutput::StateH);
  Node n;
  n.name = r.name;
  n.kind = r.cell.kind;
  n.keras_class = n.kind == OpKind::LSTM ? "LSTM" : "GRU";
  n.units = r.cell.units;
  n.activation = r.cell.activation;
  n.recurrent_activation = r.cell.recurrent_activation;
  n.reset_after = r.cell.reset_after;
  n.return_sequences = sequences;
  n.weights = r.cell.weights;
  n.origin = r.origin;
  n.inputs = {r.input_node};
  n.shape = sequences ? Shape{graph_dim(r.steps), r.cell.units} : Shape{r.cell.units};
  cached = add_node(std::move(n));
  return cached;
}

// Output `which` of a stateful LSTM, as a SliceRows of its one node computing [every h | c].
int TfLowering::rnn_rows(int rnn, LstmOutput which) {
  RnnRecord& r = *rnns_.at(static_cast<size_t>(rnn));
  const int u = r.cell.units;
  if (r.full_node < 0) {
    Node n;
    n.name = r.name;
    n.kind = OpKind::LSTM;
    n.keras_class = "LSTM";
    n.units = u;
    n.activation = r.cell.activation;
    n.recurrent_activation = r.cell.recurrent_activation;
    n.return_sequences = true;
    n.return_state = true;
    n.weights = r.cell.weights;
    n.origin = r.origin;
    n.inputs = {r.input_node};
    if (r.h0 >= 0) n.inputs.insert(n.inputs.end(), {r.h0, r.c0});
    n.shape = {graph_dim(r.steps) < 0 ? -1 : graph_dim(r.steps) + 1, u};
    r.full_node = add_node(std::move(n));
  }
  const char* names[] = {"sequence", "state_h", "state_c"};
  Node s = lstm_output_slice(which, /*sequences=*/true);
  s.name = r.name + "/" + names[static_cast<int>(which)];
  s.keras_class = "LSTM";
  s.origin = r.origin;
  s.inputs = {r.full_node};
  s.shape = which == LstmOutput::Output ? Shape{graph_dim(r.steps), u} : Shape{u};
  return add_node(std::move(s));
}

TfValue TfLowering::rnn_final_state(const TfValue& list, const std::string& where) {
  if (list.rnn >= 0 && list.rnn_output == 2 && rnns_[static_cast<size_t>(list.rnn)]->cell.kind == OpKind::LSTM) {
    RnnRecord& r = *rnns_[static_cast<size_t>(list.rnn)];
    if (!r.stateful()) throw Error(where + ": reads a recurrent loop's final cell state, which the importer did not see read");
    if (r.cell_node < 0) r.cell_node = rnn_rows(list.rnn, LstmOutput::StateC);
    TfValue v = node_value(r.cell_node, {1, r.cell.units}, "");
    v.fresh = false;
    return v;
  }
  if (list.rnn < 0 || list.rnn_output != 1) {
    throw Error(where + ": uses a recurrent loop's " + (list.rnn_output == 2 ? "final cell state" : "loop counters or lists") + " (not supported)");
  }
  const int node = rnn_node(list.rnn, false, where);
  TfValue v = node_value(node, {1, rnns_[static_cast<size_t>(list.rnn)]->cell.units}, "");
  v.fresh = false;
  return v;
}

std::vector<TfValue> TfLowering::lower_list_op(Op& op) {
  const std::string& t = op.def.op();
  TfValue v;
  v.kind = TfValue::Kind::List;
  if (t == "TensorListReserve") return {v};
  const TfValue& x = op.in.at(0);
  if (t == "TensorListFromTensor") {
    if (x.kind != TfValue::Kind::Node || x.shape.size() != 3 || x.shape[1] != 1) {
      throw Error(op.where + ": unstacks something other than a time-major [time, 1, features] sequence");
    }
    const Node& src = graph_.nodes[static_cast<size_t>(x.node)];
    const Shape seq{graph_dim(x.shape[0]), graph_dim(x.shape[2])};
    v.node = x.node;
    if (src.shape != seq) {
      // The same values with unit axes between (DeepLOB's [T, 1, C] Conv2D output reshaped to
      // [T, C] and made time-major): an engine Reshape to [T, F].
      Shape a, b;
      for (int d : src.shape) if (d != 1) a.push_back(d);
      for (int d : seq) if (d != 1) b.push_back(d);
      if (a != b || shape_size(seq) < 0) throw Error(op.where + ": sequence layout not understood");
      TfValue batch_major = x;
      batch_major.shape = {1, x.shape[0], x.shape[2]};
      v.node = materialize(batch_major, op.where);
    }
    v.shape = x.shape;
    return {v};
  }
  if (x.kind != TfValue::Kind::List || x.rnn < 0) throw Error(op.where + ": op " + t + " on this value is not supported");
  const RnnRecord& r = *rnns_[static_cast<size_t>(x.rnn)];
  const int64_t u = r.cell.units;
  if (t == "TensorListStack" && x.rnn_output == 0 && !x.stacked) {
    v = x;
    v.stacked = true;
    v.shape = {r.steps, 1, u};
    return {v};
  }
  if (t == "StridedSlice" && x.stacked && op.in.size() == 4) {
    const auto& b = op.in[1].tensor.values;
    const auto& e = op.in[2].tensor.values;
    const auto& s = op.in[3].tensor.values;
    const bool last = b.size() == 1 && b[0] == -1 && e.size() == 1 && e[0] == 0 && s.size() == 1 && s[0] == 1 &&
                      attr_int(op.def, "shrink_axis_mask", 0) == 1 && attr_int(op.def, "begin_mask", 0) == 0;
    if (!last) throw Error(op.where + ": slice of a recurrent layer's outputs other than the last step is not supported");
    TfValue n = node_value(rnn_node(x.rnn, false, op.where), {1, u}, "");
    n.fresh = false;
    return {n};
  }
  if (t == "Transpose" && x.stacked && op.in.size() == 2) {
    const auto& p = op.in[1].tensor.values;
    if (p != std::vector<double>{1, 0, 2}) throw Error(op.where + ": transpose of a recurrent layer's outputs other than to batch-major");
    TfValue n = node_value(rnn_node(x.rnn, true, op.where), {1, r.steps, u}, "");
    n.fresh = false;
    return {n};
  }
  throw Error(op.where + ": op " + t + " on a recurrent layer's outputs is not supported");
}

std::vector<TfValue> TfLowering::lower_reverse(Op& op) {
  if (op.in.size() != 2) throw Error(op.where + ": expects a tensor and its axes");
  const TfValue& x = op.in[0];
  if (x.kind != TfValue::Kind::Node) throw Error(op.where + ": reversing this value is not supported (only a computed sequence)");
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t time = -1;
  for (int64_t a : const_ints(op.in[1], op.where, "axis")) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) throw Error(op.where + ": axis outside the input's shape " + tf_shape_str(x.shape));
    if (x.shape[static_cast<size_t>(a)] == 1) continue;  // a unit axis reversed is itself
    // The batch is 1, so the first axis holding data (time-major or not) is the time axis: the
    // engine tensor's first.
    for (int64_t b = 0; b < a; ++b) {
      if (x.shape[static_cast<size_t>(b)] != 1) throw Error(op.where + ": reversing an axis other than the sequence's time axis is not supported");
    }
    time = a;
  }
  if (x.pad_left != 0 || x.pad_right != 0 || x.conv >= 0 || x.conv2 >= 0) {
    throw Error(op.where + ": reversing a tensor still awaiting its convolution is not supported");
  }
  TfValue v = x;
  v.fresh = sole_user(op, x);
  if (time < 0) return {v};
  const Shape& es = graph_.nodes[static_cast<size_t>(x.node)].shape;
  if (es.size() < 2 || es[0] != graph_dim(x.shape[static_cast<size_t>(time)])) {
    throw Error(op.where + ": the reversed axis is not the first axis of a [time, features] sequence");
  }
  Node n;
  n.name = op.def.name();
  n.keras_class = "ReverseV2";
  n.kind = OpKind::ReverseTime;
  n.origin = "ReverseV2 '" + op.def.name() + "'";
  n.shape = es;
  n.inputs = {x.node};
  return {node_value(add_node(std::move(n)), x.shape, "")};
}

}  // namespace tickinfer::formats
