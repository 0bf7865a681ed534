// Transpose, Squeeze, Unsqueeze, Flatten, Reshape, Concat, and the Slice / Gather that take the
// last time step of a recurrent layer's sequence output.
#include <algorithm>
#include <limits>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

std::vector<int64_t> int_list(Lowerer& L, const onnx::NodeProto& n, int input) {
  const Tensor& t = L.constant(n, input);
  if (t.is_float) L.fail(n, "input " + std::to_string(input) + " must be an integer tensor");
  return t.i;
}

// Squeeze/Unsqueeze axes: an attribute up to opset 12, an optional input from 13.
std::vector<int64_t> squeeze_axes(Lowerer& L, const onnx::NodeProto& n) {
  if (L.has_attr(n, "axes")) return L.attr_ints(n, "axes");
  if (L.has_input(n, 1)) return int_list(L, n, 1);
  return {};
}

Value lower_transpose(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  const size_t r = x.axes.size();
  std::vector<int64_t> perm = L.attr_ints(n, "perm");
  if (perm.empty()) {
    for (size_t a = 0; a < r; ++a) perm.push_back(static_cast<int64_t>(r - 1 - a));
  }
  std::vector<bool> seen(r, false);
  if (perm.size() != r) L.fail(n, "perm has the wrong length");
  Value out = x;
  for (size_t a = 0; a < r; ++a) {
    if (perm[a] < 0 || perm[a] >= static_cast<int64_t>(r) || seen[perm[a]]) L.fail(n, "perm is not a permutation");
    seen[perm[a]] = true;
    out.axes[a] = x.axes[perm[a]];
  }
  return out;
}

Value lower_squeeze(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  const std::vector<int> d = L.dims(x);
  std::vector<bool> drop(x.axes.size(), false);
  std::vector<int64_t> axes = squeeze_axes(L, n);
  if (axes.empty()) {
    for (size_t a = 0; a < d.size(); ++a) drop[a] = d[a] == 1;
  }
  for (int64_t a : axes) {
    const int k = L.norm_axis(n, a, x.axes.size());
    if (d[k] != 1) L.fail(n, "axis " + std::to_string(a) + " has size " + std::to_string(d[k]) + ", not 1");
    drop[k] = true;
  }
  Value out = x;
  out.axes.clear();
  // A dropped engine axis of size 1 stays in the engine tensor, unnamed by the view.
  for (size_t a = 0; a < x.axes.size(); ++a) {
    if (!drop[a]) out.axes.push_back(x.axes[a]);
  }
  return out;
}

Value lower_unsqueeze(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  std::vector<int64_t> axes = squeeze_axes(L, n);
  if (axes.empty()) L.fail(n, "axes are missing");
  const size_t r = x.axes.size() + axes.size();
  std::vector<bool> unit(r, false);
  for (int64_t a : axes) {
    const int k = L.norm_axis(n, a, r);
    if (unit[k]) L.fail(n, "an axis is listed twice");
    unit[k] = true;
  }
  Value out = x;
  out.axes.clear();
  size_t next = 0;
  for (size_t a = 0; a < r; ++a) out.axes.push_back(unit[a] ? kUnit : x.axes[next++]);
  return out;
}

Value lower_flatten(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  const int axis = L.norm_axis(n, L.attr_i(n, "axis", 1), x.axes.size() + 1);
  const std::vector<int> d = L.dims(x);
  for (int a = 0; a < axis; ++a) {
    if (d[a] != 1) L.fail(n, "flattening into the batch axis (axis " + std::to_string(a) + " has size " + std::to_string(d[a]) + ") is not supported");
  }
  const Value ordered = in_engine_order(L, n, x);
  Value out;
  if (L.eshape(ordered.node).size() == 1) {
    out.node = ordered.node;
  } else {
    Node f;
    f.kind = OpKind::Flatten;
    out.node = L.add(std::move(f), n, {ordered.node});
  }
  out.axes = {kUnit, 0};
  return out;
}

Value lower_reshape(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  const std::vector<int64_t> shape = int_list(L, n, 1);
  const std::vector<int> d = L.dims(x);
  // One unknown (variable-length) dimension is allowed where the shape's -1 takes it whole
  // (tf2onnx's [-1, 1, F] transpose of a batch-1 [1, T, F] sequence): `total` then counts the
  // known dimensions and -1 stands for the unknown one.
  int64_t total = 1;
  int unknown = 0;
  for (int v : d) {
    if (v < 0) ++unknown;
    else total *= v;
  }
  if (unknown > 1) L.fail(n, "the input has more than one unknown (variable) dimension");
  const bool allowzero = L.attr_i(n, "allowzero", 0) != 0;
  std::vector<int64_t> out_dims;
  int infer = -1;
  int64_t known = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t v = shape[k];
    if (v == 0 && !allowzero) {
      if (k >= d.size()) L.fail(n, "shape copies a dimension the input does not have");
      v = d[k];
    }
    if (v == -1) {
      if (infer >= 0) L.fail(n, "shape has more than one -1");
      infer = static_cast<int>(k);
    } else if (v < 1 || v > (int64_t{1} << 28)) {
      L.fail(n, "shape has an invalid dimension " + std::to_string(v));
    } else {
      known *= v;
      if (known > (int64_t{1} << 28)) L.fail(n, "shape is too large");
    }
    out_dims.push_back(v);
  }
  if (unknown) {
    if (infer < 0 || known != total) L.fail(n, "the input has an unknown (variable) dimension the shape does not keep whole");
    out_dims[infer] = -1;
  } else if (infer >= 0) {
    if (total % known != 0) L.fail(n, "cannot infer the -1 dimension");
    out_dims[infer] = total / known;
  }
  // The dims are those of a batch of 1 (Shape folds the batch axis as 1), and the engine always
  // runs a batch of 1, so ONNX axis 0 need not stay the batch: tf2onnx's einsum chains reshape
  // [B, N, T, H] to [B*N, T, H], which at B = 1 is the un-batched [N, T, H] here (axis 0 an engine
  // axis, the batch a unit axis nowhere in the view). Such a reshape would be wrong for B > 1.
  Shape target;
  Value out;
  for (int64_t v : out_dims) {
    out.axes.push_back(v == 1 ? kUnit : static_cast<int>(target.size()));
    if (v != 1) target.push_back(static_cast<int>(v));
  }
  if (!unknown && shape_size(target.empty() ? Shape{1} : target) != total) {
    L.fail(n, "cannot reshape the input's " + std::to_string(total) + " values");
  }
  // A reshape that only adds, drops or moves axes of size 1 (tf2onnx writes the transpose of a
  // one-step window that way) is a view: no engine op, so stream mode still sees the sequence.
  std::vector<int> kept;  // engine axes of x's dimensions other than 1, in ONNX order
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] != 1) kept.push_back(x.axes[i]);
  }
  bool view = !x.padded() && kept.size() == target.size();
  for (size_t k = 0; view && k < kept.size(); ++k) {
    view = kept[k] != kUnit && (k == 0 || kept[k] > kept[k - 1]) && L.eshape(x.node)[kept[k]] == target[k];
  }
  if (view) {
    for (int& a : out.axes) {
      if (a != kUnit) a = kept[static_cast<size_t>(a)];
    }
    out.node = x.node;
    return out;
  }
  if (target.empty()) target.push_back(1);
  out.node = L.reshape(n, x, target);
  return out;
}

// Zero padding of the time axis alone is left for the Conv that consumes it (Value::pad_begin/
// end); padding of other axes (TransLOB pads its channels before adding a position table) is
// an engine Pad node.
Value lower_pad(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  if (L.attr_s(n, "mode", "constant") != "constant") L.fail(n, "only constant (zero) padding is supported");
  if (L.has_input(n, 2) && L.scalar(n, 2) != 0.0) L.fail(n, "only zero padding is supported");
  if (L.has_input(n, 3)) L.fail(n, "the axes input is not supported");
  const std::vector<int64_t> pads = int_list(L, n, 1);
  if (is_nchw_view(L, x)) return pad_nchw_view(L, n, x, pads);  // PyTorch's asymmetric 'same' Conv2d padding
  const size_t r = x.axes.size();
  if (pads.size() != 2 * r) L.fail(n, "pads must have two values per axis");
  for (size_t a = 0; a < r; ++a) {
    const int64_t b = pads[a], e = pads[a + r];
    if (b == 0 && e == 0) continue;
    if (b < 0 || e < 0 || b > 4096 || e > 4096 || x.axes[a] != 0 || L.eshape(x.node).size() != 2) return pad_node(L, n, x, pads);
  }
  Value out = x;
  for (size_t a = 0; a < r; ++a) out.pad_begin += static_cast<int>(pads[a]), out.pad_end += static_cast<int>(pads[a + r]);
  return out;
}

// `v` viewed by `axes` (per ONNX axis: an engine axis, increasing, or kUnit) over an engine
// tensor of `rank` axes: its data, in ONNX order, reshaped. False when v's dims do not fit.
bool to_layout(Lowerer& L, const onnx::NodeProto& n, const Value& v, const std::vector<int>& axes, size_t rank,
               Value& out) {
  if (v.axes.size() != axes.size() || v.padded()) return false;
  const std::vector<int> d = L.dims(v);
  Shape target(rank, 1);
  int64_t size = 1;
  int last = -1;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (d[a] < 0) return false;
    if (axes[a] == kUnit) {
      if (d[a] != 1) return false;
    } else {
      if (axes[a] <= last) return false;
      last = axes[a];
      target[static_cast<size_t>(axes[a])] = d[a];
    }
    size *= d[a];
  }
  if (size != shape_size(L.eshape(v.node))) return false;
  const int node = L.reshape(n, v, target);
  out = v;  // (out may be v)
  out.axes = axes;
  out.node = node;
  return true;
}

Value lower_concat(Lowerer& L, const onnx::NodeProto& n) {
  if (n.input_size() < 1) L.fail(n, "needs inputs");
  // The inputs in one layout: the first's, or where they differ (an exporter's Reshape of a
  // recurrent state beside a model input) the layout of the input with the most engine axes;
  // joined along an axis that layout leaves out (a unit axis: horizons stacked), every input
  // gets that axis as an engine axis of its own.
  Value first = L.runtime(n, 0);
  for (int k = 1; k < n.input_size(); ++k) {
    const Value& v = L.runtime(n, k);
    if (L.eshape(v.node).size() > L.eshape(first.node).size()) first = v;
  }
  const int onnx_axis = L.norm_axis(n, L.attr_i(n, "axis", 0), first.axes.size());
  std::vector<int> axes = first.axes;
  size_t rank = L.eshape(first.node).size();
  if (axes[static_cast<size_t>(onnx_axis)] == kUnit) {
    if (!L.in_order(first)) L.fail(n, "concatenation along an axis the engine tensor does not have is not supported");
    rank = 0;
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a] != kUnit || static_cast<int>(a) == onnx_axis) axes[a] = static_cast<int>(rank++);
    }
  }
  const int e = axes[static_cast<size_t>(onnx_axis)];
  std::vector<int> ins;
  for (int k = 0; k < n.input_size(); ++k) {
    Value v = L.runtime(n, k);
    if ((v.axes != axes || L.eshape(v.node).size() != rank) && !to_layout(L, n, v, axes, rank, v)) {
      L.fail(n, "the inputs' layouts differ");
    }
    if (k == 0) first = v;
    ins.push_back(v.node);
  }
  if (ins.size() == 1) return first;
  Node c;
  c.kind = OpKind::Concatenate;
  c.axis = e + 1;  // Keras convention: counting the batch axis
  Value out = first;
  out.node = L.add(std::move(c), n, ins);
  return out;
}

}  // namespace

Value in_engine_order(Lowerer& L, const onnx::NodeProto& n, const Value& v) {
  const Shape& e = L.eshape(v.node);
  std::vector<int> named, moving;  // engine axes in the view's order; those of them that hold data
  std::vector<bool> seen(e.size(), false);
  for (int a : v.axes) {
    if (a == kUnit) continue;
    if (seen[a]) L.fail(n, "the operand's view names an engine axis twice");
    seen[a] = true;
    named.push_back(a);
    if (e[a] != 1) moving.push_back(a);
  }
  if (std::is_sorted(moving.begin(), moving.end())) return v;
  L.require_unpadded(n, v);  // the pending padding belongs to engine axis 0, which moves
  std::vector<int> perm = named;
  for (size_t a = 0; a < e.size(); ++a) {
    if (!seen[a]) perm.push_back(static_cast<int>(a));  // axes of size 1 the view does not name
  }
  Node p;
  p.kind = OpKind::Permute;
  p.keras_class = "Permute";
  p.permutation = perm;
  Value out = v;
  out.node = L.add(std::move(p), n, {v.node});
  for (int& a : out.axes) {
    if (a != kUnit) a = static_cast<int>(std::find(perm.begin(), perm.end(), a) - perm.begin());
  }
  return out;
}

bool lower_layout_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result) {
  const std::string& op = n.op_type();
  if (op == "Transpose") result = lower_transpose(L, n);
  else if (op == "Squeeze") result = lower_squeeze(L, n);
  else if (op == "Unsqueeze") result = lower_unsqueeze(L, n);
  else if (op == "Flatten") result = lower_flatten(L, n);
  else if (op == "Reshape") result = lower_reshape(L, n);
  else if (op == "Concat") result = lower_concat(L, n);
  else if (op == "Pad") result = lower_pad(L, n);
  else if (op == "Slice" || op == "Gather") {
    if (op == "Slice" || !split_projection(L, n, result)) result = take_last_step(L, n);
  }
  else return false;
  if (out != 0) L.fail(n, "only output 0 is supported");
  return true;
}

}  // namespace tickinfer::formats::onnx_import
