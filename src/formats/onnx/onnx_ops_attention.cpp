// The generic ops the exporters write attention in, as engine nodes formats::fuse_attention
// folds back into one MultiHeadAttention (onnx_lower.cpp calls it after the lowering):
//   MatMul of two computed tensors (Q K^T, P V)        -> an engine MatMul over laid-out operands
//   Add / Sub / Mul / Div by a constant that varies along more than the channel axis (a [h, k]
//   bias after the split into heads, a causal mask, a position table)
//                                                      -> the op with an engine Constant node
//   zero padding of an axis other than a Conv's time axis -> an engine Pad node
//   Gather of one of torch's stacked q / k / v projections -> a Dense of that part
// The shapes are a batch of 1's: axes of size 1 (the batch among them) are dropped from the
// engine tensors where the ops allow it.
#include <algorithm>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// Bounds the table a constant operand is spread into (the engine holds it whole).
constexpr int64_t kMaxTableElements = int64_t{1} << 24;

// The engine node holding `v` as exactly the ONNX axes `keep` (sizes `d`), in that order; every
// other axis of `v` has size 1.
int laid_out(Lowerer& L, const onnx::NodeProto& n, const Value& v, const std::vector<int>& keep,
             const std::vector<int>& d) {
  Value sub = v;
  sub.axes.clear();
  Shape target;
  for (int k : keep) {
    sub.axes.push_back(v.axes[k]);
    target.push_back(d[k]);
  }
  return L.reshape(n, sub, target);
}

}  // namespace

// ONNX MatMul broadcasts the leading axes like numpy; the engine's MatMul multiplies equal
// stacks, so the leading axes must agree (those of size 1 in both, the batch among them, are
// dropped). The last two axes are kept whatever their size (a single query row is [1, K]).
Value lower_matmul_computed(Lowerer& L, const onnx::NodeProto& n) {
  Value a = L.runtime(n, 0), b = L.runtime(n, 1);
  if (a.axes.size() < 2 || b.axes.size() < 2)
    L.fail(n, "a product of computed tensors of rank 1 is not supported");
  const size_t r = std::max(a.axes.size(), b.axes.size());
  a.axes.insert(a.axes.begin(), r - a.axes.size(), kUnit);
  b.axes.insert(b.axes.begin(), r - b.axes.size(), kUnit);
  const std::vector<int> da = L.dims(a), db = L.dims(b);
  for (size_t k = 0; k < r; ++k) {
    if (da[k] < 0 || db[k] < 0)
      L.fail(n,
             "a product of computed tensors with an unknown (variable) dimension is not supported");
  }
  for (size_t k = 0; k + 2 < r; ++k) {
    if (da[k] != db[k]) {
      L.fail(n, "the operands' leading axes differ (" + shape_str(Shape(da.begin(), da.end())) +
                    " x " + shape_str(Shape(db.begin(), db.end())) +
                    "); broadcasting them is not supported");
    }
  }
  if (da[r - 1] != db[r - 2]) {
    L.fail(n, "the operands do not multiply: " + shape_str(Shape(da.begin(), da.end())) + " x " +
                  shape_str(Shape(db.begin(), db.end())));
  }
  std::vector<int> keep;
  for (size_t k = 0; k + 2 < r; ++k) {
    if (da[k] != 1) keep.push_back(static_cast<int>(k));
  }
  keep.push_back(static_cast<int>(r) - 2);
  keep.push_back(static_cast<int>(r) - 1);
  const int ia = laid_out(L, n, a, keep, da);
  const int ib = laid_out(L, n, b, keep, db);
  Node m;
  m.kind = OpKind::MatMul;
  m.keras_class = "MatMul";
  Value out;
  out.node = L.add(std::move(m), n, {ia, ib});
  int next = 0;
  for (size_t k = 0; k < r; ++k) out.axes.push_back(k + 2 < r && da[k] == 1 ? kUnit : next++);
  return out;
}

// A scalar, or one value per channel along the ONNX axis that is x's last engine axis: the
// per-channel affine the engine merges into its producer. Anything else needs a Constant node.
bool varies_per_channel_only(Lowerer& L, const Value& x, const Tensor& c) {
  const size_t rx = x.axes.size(), rc = c.dims.size();
  if (rc > rx) return false;
  const int last = static_cast<int>(L.eshape(x.node).size()) - 1;
  int varying = 0;
  for (size_t k = 0; k < rc; ++k) {
    if (c.dims[k] == 1) continue;
    if (++varying > 1 || x.axes[k + rx - rc] != last) return false;
  }
  return true;
}

Value lower_binary_table(Lowerer& L, const onnx::NodeProto& n, const Value& x, const Tensor& c,
                         bool const_first) {
  const std::string& op = n.op_type();
  if (!c.is_float) L.fail(n, "the constant operand is not a float tensor");
  if (op == "Div" && const_first)
    L.fail(n, "a constant divided by a computed tensor is not supported");
  const Shape& e = L.eshape(x.node);
  const int64_t count = shape_size(e);
  if (count < 0)
    L.fail(n,
           "a constant varying along several axes needs the computed operand's shape fixed (it has "
           "a variable length)");
  if (count > kMaxTableElements)
    L.fail(n, "the constant operand spread over the computed operand would be too large");
  const std::vector<int> xd = L.dims(x);
  const size_t rx = xd.size(), rc = c.dims.size(), r = std::max(rx, rc);
  // Which engine axis gives each constant axis its index (-1: the axis has size 1 in c); the
  // engine computes x's shape only, so c must not enlarge it.
  std::vector<int> from(rc, -1);
  std::vector<int64_t> stride(rc, 1);
  for (size_t k = rc; k-- > 0;) {
    if (k + 1 < rc) stride[k] = stride[k + 1] * c.dims[k + 1];
    if (c.dims[k] == 1) continue;
    const size_t o = k + r - rc;  // the output axis
    if (o < r - rx || c.dims[k] != xd[o - (r - rx)] || x.axes[o - (r - rx)] == kUnit) {
      L.fail(n, "the constant operand's shape does not broadcast against the computed operand " +
                    shape_str(Shape(xd.begin(), xd.end())) + " without enlarging it");
    }
    from[k] = x.axes[o - (r - rx)];
  }
  std::vector<float> table(static_cast<size_t>(count));
  std::vector<int> coord(e.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t ci = 0;
    for (size_t k = 0; k < rc; ++k) {
      if (from[k] >= 0) ci += coord[from[k]] * stride[k];
    }
    // x / c as x * (1 / c): within 1 ulp of the division, as the per-channel path.
    table[static_cast<size_t>(i)] = op == "Div" ? 1.0f / c.f[ci] : c.f[ci];
    for (size_t a = coord.size(); a-- > 0;) {
      if (++coord[a] < e[a]) break;
      coord[a] = 0;
    }
  }
  Node k;
  k.kind = OpKind::Constant;
  k.keras_class = "Constant";
  k.name = "const";
  k.shape = e;
  k.weights = {{e, std::move(table)}};
  const int table_node = L.add(std::move(k), n, {});
  Node m;
  m.kind = op == "Add" ? OpKind::Add : op == "Sub" ? OpKind::Subtract : OpKind::Multiply;
  m.keras_class = op == "Add" ? "Add" : op == "Sub" ? "Subtract" : "Multiply";
  Value out = x;
  out.node = L.add(
      std::move(m), n,
      const_first ? std::vector<int>{table_node, x.node} : std::vector<int>{x.node, table_node});
  out.axes.insert(out.axes.begin(), r - rx, kUnit);
  return out;
}

bool split_projection(Lowerer& L, const onnx::NodeProto& n, Value& result) {
  if (n.op_type() != "Gather" || n.input_size() != 2) return false;
  const Value x = L.value(n.input(0));  // copies: add() may move what value() refers to
  const Value iv = L.value(n.input(1));
  if (x.is_const || x.padded() || !iv.is_const || iv.c.is_float || !iv.c.dims.empty()) return false;
  const int a = L.norm_axis(n, L.attr_i(n, "axis", 0), x.axes.size());
  const int e = x.axes[a];
  const Node reshape = L.node(x.node);
  if (e == kUnit || reshape.kind != OpKind::Reshape || reshape.inputs.size() != 1) return false;
  // Back from the reshape: per-channel BatchNorms (the bias Add's affine), then the Dense.
  std::vector<Node> chain;
  int at = reshape.inputs[0];
  while (L.node(at).kind == OpKind::BatchNorm && L.node(at).inputs.size() == 1) {
    chain.insert(chain.begin(), L.node(at));
    at = L.node(at).inputs[0];
  }
  if (L.node(at).kind != OpKind::Dense || L.node(at).activation.kind != ActKind::Linear)
    return false;
  chain.insert(chain.begin(), L.node(at));
  // The reshape must keep the Dense's leading axes and split only its channels.
  const Shape in = L.eshape(reshape.inputs[0]), out = reshape.shape;
  const size_t lead = in.size() - 1;
  if (out.size() <= lead || static_cast<size_t>(e) < lead ||
      !std::equal(in.begin(), in.end() - 1, out.begin()))
    return false;
  const int len = out[static_cast<size_t>(e)];
  int64_t idx = iv.c.i[0] < 0 ? iv.c.i[0] + len : iv.c.i[0];
  if (idx < 0 || idx >= len) L.fail(n, "index out of range");
  int64_t outer = 1, inner = 1;
  for (size_t k = lead; k < static_cast<size_t>(e); ++k) outer *= out[k];
  for (size_t k = static_cast<size_t>(e) + 1; k < out.size(); ++k) inner *= out[k];
  std::vector<int64_t> cols;  // the channels whose coordinate along axis e is idx
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) cols.push_back((o * len + idx) * inner + j);
  }
  const int width = static_cast<int>(cols.size());
  const std::string part = "part" + std::to_string(idx);
  Node d = chain[0];
  const int K = d.weights[0].shape[0], N = d.units;
  std::vector<float> kernel(static_cast<size_t>(K) * width), bias;
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < width; ++j)
      kernel[static_cast<size_t>(k) * width + j] =
          d.weights[0].data[static_cast<size_t>(k) * N + cols[j]];
  }
  for (int64_t c : cols) bias.push_back(d.weights[1].data[c]);
  d.units = width;
  d.weights = {{{K, width}, std::move(kernel)}, {{width}, std::move(bias)}};
  d.name = part;
  int prev = L.add(std::move(d), n, chain[0].inputs);
  for (size_t k = 1; k < chain.size(); ++k) {
    Node bn = chain[k];
    for (Weight& w : bn.weights) {
      std::vector<float> picked;
      for (int64_t c : cols) picked.push_back(w.data[c]);
      w = {{width}, std::move(picked)};
    }
    bn.name = part + "_bias";
    prev = L.add(std::move(bn), n, {prev});
  }
  Shape target = out;
  target.erase(target.begin() + e);
  result = x;
  result.axes.erase(result.axes.begin() + a);
  for (int& ax : result.axes) {
    if (ax != kUnit && ax > e) --ax;
  }
  result.node = L.eshape(prev) == target ? prev : L.reshape(n, L.view(prev), target);
  return true;
}

Value pad_node(Lowerer& L, const onnx::NodeProto& n, const Value& x,
               const std::vector<int64_t>& pads) {
  L.require_unpadded(n, x);
  const size_t r = x.axes.size();
  Node p;
  p.kind = OpKind::Pad;
  p.keras_class = "Pad";
  p.pads.assign(2 * L.eshape(x.node).size(), 0);
  for (size_t a = 0; a < r; ++a) {
    const int64_t b = pads[a], e = pads[a + r];
    if (b == 0 && e == 0) continue;
    if (b < 0 || e < 0 || b > 4096 || e > 4096)
      L.fail(n, "only zero padding of up to 4096 values per side (no cropping) is supported");
    if (x.axes[a] == kUnit) {
      L.fail(n, "padding ONNX axis " + std::to_string(a) +
                    ", which the engine tensor does not have (the batch or a unit axis), is not "
                    "supported");
    }
    p.pads[2 * x.axes[a]] = static_cast<int>(b);
    p.pads[2 * x.axes[a] + 1] = static_cast<int>(e);
  }
  Value out = x;
  out.node = L.add(std::move(p), n, {x.node});
  return out;
}

}  // namespace tickinfer::formats::onnx_import
