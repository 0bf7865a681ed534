// Slice and Gather along one axis of a computed tensor: how exporters take one direction of a
// bidirectional recurrent output, the last time step of a sequence, or rows of one.
#include <algorithm>
#include <limits>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// What a Slice or Gather selects along its one axis.
struct AxisSelection {
  int axis = 0;          // ONNX axis of the input
  bool keeps_axis = true;  // Slice keeps the axis; Gather of a scalar index drops it
  int64_t begin = 0, end = 0;  // Slice: starts, ends (ONNX's clamping not yet applied); Gather: index, index + 1
};

AxisSelection read_selection(Lowerer& L, const onnx::NodeProto& n, const Value& x) {
  AxisSelection s;
  int64_t axis = 0;
  if (n.op_type() == "Slice") {
    const Tensor& starts = L.constant(n, 1);
    const Tensor& ends = L.constant(n, 2);
    if (starts.size() != 1 || ends.size() != 1 || starts.is_float || ends.is_float) L.fail(n, "only a slice along one axis is supported");
    if (L.has_input(n, 3)) axis = static_cast<int64_t>(std::clamp(L.scalar(n, 3), -64.0, 64.0));
    if (L.has_input(n, 4) && L.scalar(n, 4) != 1) L.fail(n, "only step 1 is supported");
    s.begin = starts.i[0], s.end = ends.i[0];
  } else {
    const Tensor& idx = L.constant(n, 1);
    if (idx.size() != 1 || idx.is_float || !idx.dims.empty()) L.fail(n, "only gathering one index (a scalar) is supported");
    axis = L.attr_i(n, "axis", 0);
    s.keeps_axis = false;
    s.begin = idx.i[0], s.end = idx.i[0] == -1 ? std::numeric_limits<int64_t>::max() : idx.i[0] + 1;
  }
  s.axis = L.norm_axis(n, axis, x.axes.size());
  return s;
}

// [begin, end) over an axis of `size` elements as ONNX clamps a Slice (a Gather's index must
// be in range); false when the length is unknown and the bounds depend on it.
bool resolve(const AxisSelection& s, int64_t size, int64_t& begin, int64_t& end) {
  if (size < 0) return false;
  begin = s.begin < 0 ? s.begin + size : s.begin;
  end = s.end < 0 ? s.end + size : std::min(s.end, size);
  begin = std::clamp<int64_t>(begin, 0, size);
  end = std::clamp<int64_t>(end, 0, size);
  return true;
}

// The view of a selection's result: ONNX axis `axis` kept as a unit axis or dropped, engine
// axes above `removed` (an engine axis the result no longer has, or -1) one lower.
std::vector<int> selected_axes(const std::vector<int>& axes, int axis, bool keeps_axis, int removed) {
  std::vector<int> out;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int e = axes[k];
    if (static_cast<int>(k) == axis) {
      if (keeps_axis) out.push_back(removed >= 0 ? kUnit : e);
    } else {
      out.push_back(e == kUnit || removed < 0 || e < removed ? e : e - 1);
    }
  }
  return out;
}

// The recurrent layer (with its sequence output) a time-step selection of `node` reads through
// a ReverseTime, or -1; `reversed` tells whether it did.
int recurrent_source(Lowerer& L, int node, bool& reversed) {
  reversed = false;
  const Node* src = &L.node(node);
  if (src->kind == OpKind::ReverseTime) {
    reversed = true;
    node = src->inputs[0];
    src = &L.node(node);
  }
  const bool rnn = (src->kind == OpKind::LSTM || src->kind == OpKind::GRU) && src->return_sequences && !src->return_state;
  return rnn ? node : -1;
}

// The last time step of sequence `node`, without the time axis, computed without the rest of
// the sequence where that is possible; -1 otherwise. A recurrent layer's is the layer without
// return_sequences; a backward layer's (reversed back into time order) is its first step, which
// read only the window's last tick; PyTorch's merged bidirectional Y ([T, 2H], a Reshape of the
// joined directions) is both of those side by side. So `y[:, -1]` of a bidirectional LSTM runs the
// backward layer for one step, not the whole window.
int last_step_only(Lowerer& L, const onnx::NodeProto& n, int node) {
  const Node& s = L.node(node);
  bool reversed = false;
  if (const int rnn = recurrent_source(L, node, reversed); rnn >= 0) {
    Node cell = L.node(rnn);  // copied: add() may move the graph's nodes
    if (!reversed) {
      cell.return_sequences = false;
      cell.name = "last_step";
      const std::vector<int> inputs = cell.inputs;
      return L.add(std::move(cell), n, inputs);
    }
    const Node& in = L.node(cell.inputs[0]);
    if (cell.inputs.size() != 1 || in.kind != OpKind::ReverseTime) return -1;
    Node row;
    row.kind = OpKind::SliceRows;
    row.name = "backward/last_tick";
    row.keras_class = cell.keras_class;  // stream mode's refusal names the recurrent layer
    row.slice_begin = -1;
    row.slice_end = 0;
    row.keepdims = true;
    const int tick = L.add(std::move(row), n, {in.inputs[0]});
    cell.return_sequences = false;
    cell.name = "last_step";
    return L.add(std::move(cell), n, {tick});
  }
  if (s.kind != OpKind::Reshape) return -1;
  const Lowerer::DirectionParts* p = L.direction_parts(s.inputs[0]);
  const Shape& joined = L.eshape(s.inputs[0]);
  const Shape& merged = L.eshape(node);
  if (p == nullptr || p->axis != 1 || joined.size() != 3 || merged.size() != 2 || merged[1] != 2 * joined[2]) return -1;
  const int forward = last_step_only(L, n, p->parts[0]);
  const int backward = forward < 0 ? -1 : last_step_only(L, n, p->parts[1]);
  if (backward < 0) return -1;
  Node c;
  c.kind = OpKind::Concatenate;
  c.name = "last_step";
  c.axis = 1;  // [H] and [H]: the only axis, counting the batch as Keras does
  return L.add(std::move(c), n, {forward, backward});
}

// Selection `s` of `x` (take_last_step's work, after reading the Slice or Gather).
Value select(Lowerer& L, const onnx::NodeProto& n, const Value& x, const AxisSelection& s) {
  const bool slice = s.keeps_axis;
  const int e = x.axes[s.axis];
  if (e == kUnit) {
    // Along an axis of size 1 (a direction or layer axis of Y_h, the batch): the element is
    // the tensor, at index 0 or -1.
    if (s.begin != 0 && s.begin != -1) L.fail(n, "index out of range for an axis of size 1");
    if (slice && s.end < 1) L.fail(n, "the slice is empty");
    Value v = x;
    if (!slice) v.axes.erase(v.axes.begin() + s.axis);
    return v;
  }
  const Shape es = L.eshape(x.node);  // a copy: the shortcuts below add nodes
  int64_t begin = 0, end = 0;
  // One direction of a bidirectional output: that direction's own node.
  if (const Lowerer::DirectionParts* p = L.direction_parts(x.node); p != nullptr && e == p->axis) {
    if (!resolve(s, 2, begin, end) || end <= begin) L.fail(n, "the slice is empty");
    if (end - begin == 2) return x;  // both directions
    Value v;
    v.node = p->parts[begin];
    v.axes = selected_axes(x.axes, s.axis, slice, p->axis);
    return v;
  }
  if (e != 0) L.fail(n, "only a slice of the first engine axis (time) is supported");
  const bool known = resolve(s, es[0], begin, end);
  // The last time step of a recurrent layer's sequence, or the first of one run backwards and
  // reversed back: the layer without return_sequences (no sequence is written).
  bool reversed = false;
  const int rnn = recurrent_source(L, x.node, reversed);
  const int64_t big = std::numeric_limits<int32_t>::max();
  const bool last = known ? (begin == es[0] - 1 && end == es[0]) : (s.begin == -1 && s.end >= big);
  const bool first = known ? (begin == 0 && end == 1) : (s.begin == 0 && s.end == 1);
  if (rnn >= 0 && reversed && first) {
    Node last_only = L.node(rnn);  // copied: add() may move the graph's nodes
    last_only.return_sequences = false;
    const std::vector<int> inputs = last_only.inputs;
    Value v;
    v.node = L.add(std::move(last_only), n, inputs);
    v.axes = selected_axes(x.axes, s.axis, slice, 0);
    return v;
  }
  if (const int only = last ? last_step_only(L, n, x.node) : -1; only >= 0) {
    Value v;
    v.node = only;
    v.axes = selected_axes(x.axes, s.axis, slice, 0);
    return v;
  }
  // Rows that lie within one input of a concatenation along the first axis (PyTorch's h_n of
  // stacked layers is one; h_n[-1] reads the last layer's): taken from that input, so what only
  // the others would have needed goes unused.
  if (const Node& c = L.node(x.node); known && c.kind == OpKind::Concatenate && c.axis == 1) {
    const std::vector<int> inputs = c.inputs;
    int64_t offset = 0;
    for (int in : inputs) {
      const int64_t rows = L.eshape(in)[0];
      if (begin >= offset && end <= offset + rows && end > begin) {
        AxisSelection inner = s;
        inner.begin = begin - offset;
        inner.end = end - offset;
        Value part = x;
        part.node = in;
        return select(L, n, part, inner);
      }
      offset += rows;
    }
  }
  // Rows of the first axis: an engine SliceRows (its bounds hold for any window length where
  // they count from the end).
  if (es.size() < 2 && !slice) L.fail(n, "gathering one element of a vector is not supported");
  Node rows;
  rows.kind = OpKind::SliceRows;
  rows.keras_class = n.op_type();
  rows.keepdims = slice;
  const int64_t lim = int64_t{1} << 20;
  if (known) {  // (a Gather's index is one row by construction)
    if (end <= begin) L.fail(n, "the slice is empty");
    if (slice && begin == 0 && end == es[0]) return x;
    rows.slice_begin = static_cast<int>(begin);
    rows.slice_end = end == es[0] ? 0 : static_cast<int>(end);
  } else if (s.begin > -lim && s.begin < lim && (s.end >= big || (s.end > s.begin && s.end < lim && (s.begin >= 0 || s.end < 0)))) {
    // From the start, or counted from the end (SliceRows' end <= 0 is that many rows before it).
    rows.slice_begin = static_cast<int>(s.begin);
    rows.slice_end = s.end >= big ? 0 : static_cast<int>(s.end);
  } else {
    L.fail(n, "the slice's bounds depend on the unknown window length");
  }
  Value v;
  v.node = L.add(std::move(rows), n, {x.node});
  v.axes = selected_axes(x.axes, s.axis, slice, slice ? -1 : 0);
  return v;
}

}  // namespace

Value take_last_step(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  return select(L, n, x, read_selection(L, n, x));
}

}  // namespace tickinfer::formats::onnx_import
