// LSTM and GRU with direction "reverse" or "bidirectional", and ReverseSequence. The backward
// direction runs forwards over the window reversed in time, between two engine ReverseTime
// nodes (as the Keras importer writes go_backwards and Bidirectional), so every kernel set and
// the GPU backend run it with the forward layer's code.
#include <algorithm>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// Lowerer::shared_node slots of one recurrent ONNX node.
constexpr int kReversedInputSlot = 1;
constexpr int kSequenceSlot = 2;  // + direction
constexpr int kLastSlot = 4;      // + direction

int reverse_time(Lowerer& L, const onnx::NodeProto& n, int from, const char* name) {
  Node r;
  r.kind = OpKind::ReverseTime;  // its class stays the ONNX op's (stream mode's refusal names it)
  r.name = name;
  return L.add(std::move(r), n, {from});
}

// Direction `d`'s output: its sequence in the window's time order, or its final h. With one
// cell (direction "reverse") that cell runs backwards; with two, the second.
int direction_output(Lowerer& L, const onnx::NodeProto& n, const std::vector<Node>& cells, const Value& x, int d,
                     bool sequences) {
  const int slot = (sequences ? kSequenceSlot : kLastSlot) + d;
  if (const int made = L.shared_node(n, slot); made >= 0) return made;
  const bool backward = cells.size() == 1 || d == 1;
  // Where Y is read too, the final state's cell and Y's read the same (shared) input with the
  // same weights: window mode runs that recurrence once (share_recurrent_twins).
  int in = x.node;
  if (backward) {
    in = L.shared_node(n, kReversedInputSlot);
    if (in < 0) {
      in = reverse_time(L, n, x.node, "backward/reversed_input");
      L.set_shared_node(n, in, kReversedInputSlot);
    }
  }
  Node cell = cells[static_cast<size_t>(d)];
  cell.return_sequences = sequences;
  cell.name = backward ? "backward" : "forward";
  int out = L.add(std::move(cell), n, {in});
  // ONNX keeps the backward direction's Y at the time steps it read (Keras' Bidirectional
  // reverses it back the same way).
  if (backward && sequences) out = reverse_time(L, n, out, "backward/in_time_order");
  L.set_shared_node(n, out, slot);
  return out;
}

// Both directions' [..., H] outputs joined into [..., 2, H] (ONNX's direction axis just before
// the hidden one at batch 1), with the two nodes recorded for a Slice or Gather of one of them.
int join_directions(Lowerer& L, const onnx::NodeProto& n, int forward, int backward, int H) {
  const Shape one = L.eshape(forward);
  Node c;
  c.kind = OpKind::Concatenate;
  c.name = "directions";
  c.axis = static_cast<int>(one.size());  // the last axis, counting the batch as Keras does
  const int cat = L.add(std::move(c), n, {forward, backward});
  Node r;
  r.kind = OpKind::Reshape;
  r.name = "direction_axis";
  r.target_shape = one;
  r.target_shape.back() = 2;
  r.target_shape.push_back(H);
  if (one.size() == 2) r.target_shape[0] = -1;  // the sequence's: any window length
  const int joined = L.add(std::move(r), n, {cat});
  Lowerer::DirectionParts parts;
  parts.axis = static_cast<int>(one.size()) - 1;
  parts.parts[0] = forward;
  parts.parts[1] = backward;
  L.set_direction_parts(joined, parts);
  return joined;
}

// Whether `name` is the window length of the sequence engine node `x_node` holds: Gather of its
// time axis out of its Shape, through Expand / Cast / Unsqueeze / Squeeze / Reshape / Identity
// (tf2onnx's ReverseSequence lengths for a Keras 3 layer over a window of free length:
// Expand(Gather(Shape(x), 0), [batch])), so it holds for any length.
bool is_window_length(Lowerer& L, const std::string& name, int x_node, int depth = 0) {
  const onnx::NodeProto* p = L.producer(name);
  if (p == nullptr || p->input_size() < 1 || depth > 16) return false;
  const std::string& op = p->op_type();
  if (op == "Expand" || op == "Cast" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Identity") {
    return is_window_length(L, p->input(0), x_node, depth + 1);
  }
  if (op != "Gather" || p->input_size() != 2 || L.attr_i(*p, "axis", 0) != 0) return false;
  const onnx::NodeProto* shape = L.producer(p->input(0));
  while (shape != nullptr && shape->op_type() == "Cast" && shape->input_size() == 1) shape = L.producer(shape->input(0));
  if (shape == nullptr || shape->op_type() != "Shape" || shape->input_size() != 1 || L.has_attr(*shape, "start") ||
      L.has_attr(*shape, "end")) {
    return false;
  }
  const Value& index = L.value(p->input(1));
  const Value& seq = L.value(shape->input(0));
  if (!index.is_const || index.c.is_float || index.c.size() != 1 || seq.is_const) return false;
  const int64_t rank = static_cast<int64_t>(seq.axes.size());
  const int64_t k = index.c.i[0] < 0 ? index.c.i[0] + rank : index.c.i[0];
  return seq.node == x_node && k >= 0 && k < rank && seq.axes[static_cast<size_t>(k)] == 0;
}

}  // namespace

Value directed_rnn_output(Lowerer& L, const onnx::NodeProto& n, std::vector<Node> cells, const Value& x, int out,
                          int layout) {
  const std::string dir = L.attr_s(n, "direction", "forward");
  if (out == 2) L.fail(n, "output 2 (the final cell state) is not supported with direction '" + dir + "'");
  if (out < 0 || out > 2) L.fail(n, "has no output " + std::to_string(out));
  for (int k : {5, 6}) {
    if (n.op_type() == "LSTM" && L.has_input(n, k) && !known_zero(L, n.input(k))) {
      L.fail(n, "input " + std::to_string(k) + " ('" + n.input(k) + "') is not a known all-zero initial state; direction '" +
                    dir + "' starts from zero states only");
    }
  }
  const bool sequences = out == 0;
  const int H = cells[0].units;
  Value v;
  if (cells.size() == 1) {
    v.node = direction_output(L, n, cells, x, 0, sequences);
    v.axes = !sequences ? std::vector<int>{kUnit, kUnit, 0}
             : layout == 0 ? std::vector<int>{0, kUnit, kUnit, 1} : std::vector<int>{kUnit, 0, kUnit, 1};
    return v;
  }
  const int forward = direction_output(L, n, cells, x, 0, sequences);
  const int backward = direction_output(L, n, cells, x, 1, sequences);
  v.node = join_directions(L, n, forward, backward, H);
  // Y: [T, 2, batch, H] (layout 0) or [batch, T, 2, H]; Y_h: [2, batch, H] or [batch, 2, H].
  if (sequences) v.axes = layout == 0 ? std::vector<int>{0, 1, kUnit, 2} : std::vector<int>{kUnit, 0, 1, 2};
  else v.axes = layout == 0 ? std::vector<int>{0, kUnit, 1} : std::vector<int>{kUnit, 0, 1};
  return v;
}

Value lower_reverse_sequence(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  if (x.axes.size() < 2) L.fail(n, "the input must have a batch and a time axis");
  const int t = L.norm_axis(n, L.attr_i(n, "time_axis", 0), x.axes.size());
  const int b = L.norm_axis(n, L.attr_i(n, "batch_axis", 1), x.axes.size());
  if (t == b || std::min(t, b) != 0 || std::max(t, b) != 1) L.fail(n, "time_axis and batch_axis must be 0 and 1 in some order");
  const std::vector<int> d = L.dims(x);
  if (d[t] < 0) {
    if (x.axes[t] != 0 || !is_window_length(L, n.input(1), x.node)) {
      L.fail(n, "over a window of free length, sequence_lens must be that length (Gather of the time axis from Shape)");
    }
    Value v = x;
    v.node = reverse_time(L, n, x.node, "");
    return v;
  }
  const Tensor& lens = L.constant(n, 1);
  if (lens.is_float || lens.size() != 1) L.fail(n, "sequence_lens must be one integer (batch 1)");
  if (lens.i[0] != d[t]) {
    L.fail(n, "sequence_lens " + std::to_string(lens.i[0]) + " is not the window length " + std::to_string(d[t]) +
                  "; only reversing the whole window is supported");
  }
  if (d[t] == 1) return x;  // one step: reversed it is itself
  if (x.axes[t] != 0) L.fail(n, "the time axis is not the engine tensor's first axis");
  Value v = x;
  v.node = reverse_time(L, n, x.node, "");
  return v;
}

}  // namespace tickinfer::formats::onnx_import
