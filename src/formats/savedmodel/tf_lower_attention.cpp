// The steps of an attention chain as TensorFlow graphs spell them (see tf_lowering.hpp), lowered
// one by one into generic Graph nodes that formats::fuse_attention folds into one
// MultiHeadAttention node:
//   Keras 3 projections: Reshape(kernel) + BatchMatMulV2 (a Dense) + Reshape into heads + AddV2
//     of the [heads, features] bias (an Add of a Constant); tf_keras: Einsum 'abc,cde->abde'.
//   scores and context: Einsum 'BTNH,BSNH->BNTS' / 'BNTS,BSNH->BTNH' (ops.dot_product_attention)
//     or 'aecd,abcd->acbe' / 'acbe,aecd->abcd' (the dropout path; Keras 3 writes these as
//     Transposes around BatchMatMulV2): Permute + MatMul + Permute nodes.
//   the causal mask: SelectV2(constant mask, scores, large negative) -> an Add of a Constant.
#include <algorithm>
#include <cctype>
#include <numeric>
#include <stdexcept>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_eval.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

bool is_const(const TfValue& v) { return v.kind == TfValue::Kind::Const; }
bool is_node(const TfValue& v) { return v.kind == TfValue::Kind::Node; }

Shape graph_shape(const std::vector<int64_t>& tf_shape) {
  Shape s;
  for (size_t i = 1; i < tf_shape.size(); ++i) s.push_back(graph_dim(tf_shape[i]));
  return s;
}

// The permutation of `rank` axes that swaps the last two.
std::vector<int64_t> swap_last_two(size_t rank) {
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  if (rank >= 2) std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

// `c` repeated along its unit (or missing leading) axes to `shape` (which it broadcasts to).
std::vector<float> broadcast_to(const TfTensor& c, const std::vector<int64_t>& shape) {
  const size_t r = shape.size();
  if (c.shape.size() > r) throw std::logic_error("broadcast_to: the constant has the larger rank");
  std::vector<int64_t> cs(r - c.shape.size(), 1);
  cs.insert(cs.end(), c.shape.begin(), c.shape.end());
  std::vector<int64_t> stride(r, 0);
  for (int64_t s = 1, i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
    stride[static_cast<size_t>(i)] = cs[static_cast<size_t>(i)] == 1 ? 0 : s;
    s *= cs[static_cast<size_t>(i)];
  }
  std::vector<float> out(static_cast<size_t>(tf_element_count(shape)));
  std::vector<int64_t> idx(r, 0);
  for (float& v : out) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src += idx[d] * stride[d];
    v = static_cast<float>(c.values[static_cast<size_t>(src)]);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// "lhs,rhs->out" of an Einsum with two operands, each label a letter used once per term.
struct Equation {
  std::string a, b, out;
};

Equation parse_equation(const std::string& eq, const std::string& where) {
  const size_t comma = eq.find(','), arrow = eq.find("->");
  Equation e;
  if (comma != std::string::npos && arrow != std::string::npos && comma < arrow) {
    e = {eq.substr(0, comma), eq.substr(comma + 1, arrow - comma - 1), eq.substr(arrow + 2)};
  }
  for (const std::string* term : {&e.a, &e.b, &e.out}) {
    std::string sorted = *term;
    std::sort(sorted.begin(), sorted.end());
    const bool letters = std::all_of(term->begin(), term->end(), [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) != 0; });
    if (term->empty() || !letters || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      throw Error(where + ": Einsum equation '" + eq + "' is not supported (two operands of distinct letter labels, no ellipsis)");
    }
  }
  return e;
}

// The equation with its labels renamed a, b, c, ... in order of first appearance, so that
// equations differing only in their letters compare equal.
std::string canonical(const std::string& eq) {
  std::string out, seen;
  for (char ch : eq) {
    if (!std::isalpha(static_cast<unsigned char>(ch))) {
      out += ch;
      continue;
    }
    size_t k = seen.find(ch);
    if (k == std::string::npos) k = seen.size(), seen += ch;
    out += static_cast<char>('a' + k);
  }
  return out;
}

// The products of two computed tensors Keras' MultiHeadAttention writes (scores, then context),
// in its fast form and in its dropout form.
bool is_attention_einsum(const std::string& eq) {
  static const char* const forms[] = {"BTNH,BSNH->BNTS", "BNTS,BSNH->BTNH", "aecd,abcd->acbe", "acbe,aecd->abcd"};
  return std::any_of(std::begin(forms), std::end(forms), [&](const char* f) { return canonical(f) == canonical(eq); });
}

int64_t label_size(const std::string& labels, const std::vector<int64_t>& shape, char l) {
  return shape[labels.find(l)];
}

}  // namespace

int TfLowering::add_permute(int input, const std::vector<int>& permutation, const std::string& name, const std::string& origin) {
  const Shape& in = graph_.nodes[static_cast<size_t>(input)].shape;
  Node n;
  n.name = name;
  n.keras_class = "Permute";
  n.kind = OpKind::Permute;
  n.origin = origin;
  n.permutation = permutation;
  for (int p : permutation) n.shape.push_back(in.at(static_cast<size_t>(p)));
  n.inputs = {input};
  return add_node(std::move(n));
}

TfValue TfLowering::permuted(const Op& op, const TfValue& x, const std::vector<int64_t>& perm, const std::string& name) {
  const size_t r = x.shape.size();
  std::vector<int64_t> shape, moved;
  std::vector<bool> used(r, false);
  if (perm.size() != r) throw Error(op.where + ": permutation of " + std::to_string(perm.size()) + " axes for " + tf_shape_str(x.shape));
  for (int64_t p : perm) {
    if (p < 0) p += static_cast<int64_t>(r);
    if (p < 0 || p >= static_cast<int64_t>(r) || used[static_cast<size_t>(p)]) {
      throw Error(op.where + ": the permutation is not one of the " + std::to_string(r) + " axes of " + tf_shape_str(x.shape));
    }
    used[static_cast<size_t>(p)] = true;
    moved.push_back(p);
    shape.push_back(x.shape[static_cast<size_t>(p)]);
  }
  std::vector<int64_t> kept;  // the axes that hold data, in their new order
  for (int64_t p : moved) if (x.shape[static_cast<size_t>(p)] != 1) kept.push_back(p);
  if (std::is_sorted(kept.begin(), kept.end())) {
    TfValue v = x;
    v.shape = shape;
    v.fresh = sole_user(op, x);
    return v;
  }
  if (moved[0] != 0) throw Error(op.where + ": a transpose that moves the batch axis is not supported");
  const Node& src = graph_.nodes[static_cast<size_t>(x.node)];
  if (moved == swap_last_two(r) && src.kind == OpKind::MatMul && sole_user(op, x) && src.shape == graph_shape(x.shape)) {
    // (A B)^T = B^T A^T: the product is made in the transposed order, so the scores always come
    // out as q k^T, whichever operand the exporter put first (Keras' dropout path has k first).
    // The product first made is then unused and pruned.
    std::vector<int> swap(src.shape.size());
    std::iota(swap.begin(), swap.end(), 0);
    std::swap(swap[swap.size() - 1], swap[swap.size() - 2]);
    Node m = src;  // a copy: add_permute moves the graph's nodes
    const std::string origin = "Transpose '" + op.def.name() + "' of " + m.origin;
    const int b_t = add_permute(m.inputs[1], swap, name + "/rhs_t", origin);
    const int a_t = add_permute(m.inputs[0], swap, name + "/lhs_t", origin);
    m.inputs = {b_t, a_t};
    m.name = name;
    m.origin = origin;
    std::swap(m.shape[m.shape.size() - 1], m.shape[m.shape.size() - 2]);
    return node_value(add_node(std::move(m)), shape, "");
  }
  std::vector<int> perm_unbatched;
  for (size_t i = 1; i < r; ++i) perm_unbatched.push_back(static_cast<int>(moved[i] - 1));
  const int in = materialize(x, op.where);
  return node_value(add_permute(in, perm_unbatched, name, op.def.op() + " '" + op.def.name() + "'"), shape, "");
}

TfValue TfLowering::product(const Op& op, const TfValue& a, const TfValue& b, const std::string& name) {
  const size_t r = a.shape.size();
  if (r < 3 || b.shape.size() != r) {
    throw Error(op.where + ": product of " + tf_shape_str(a.shape) + " and " + tf_shape_str(b.shape) +
                " (operands of one rank, at least 3 with the batch axis, are supported)");
  }
  if (!std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin())) {
    throw Error(op.where + ": product of " + tf_shape_str(a.shape) + " and " + tf_shape_str(b.shape) + " broadcasts (not supported)");
  }
  if (a.shape[r - 1] != b.shape[r - 2]) throw Error(op.where + ": inner dimensions of " + tf_shape_str(a.shape) + " and " + tf_shape_str(b.shape) + " differ");
  Node n;
  n.name = name;
  n.keras_class = "MatMul";
  n.kind = OpKind::MatMul;
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  n.inputs = {materialize(a, op.where), materialize(b, op.where)};
  std::vector<int64_t> shape = a.shape;
  shape.back() = b.shape.back();
  n.shape = graph_shape(shape);
  return node_value(add_node(std::move(n)), shape, "");
}

TfValue TfLowering::add_constant_operand(const Op& op, const TfValue& x, const TfTensor& c, OpKind kind) {
  if (!is_node(x)) throw Error(op.where + ": expects a computed tensor and a constant");
  if (tf_broadcast_shape(x.shape, c.shape, op.where) != x.shape) {
    throw Error(op.where + ": constant " + tf_shape_str(c.shape) + " broadcasts the tensor " + tf_shape_str(x.shape) + " to a larger shape");
  }
  for (size_t a = 1; a < x.shape.size(); ++a) {
    if (x.shape[a] == kUnknownDim) throw Error(op.where + ": a constant " + tf_shape_str(c.shape) + " over a variable-length axis is not supported");
  }
  if (x.shape.empty() || tf_element_count(x.shape) < 0) throw Error(op.where + ": tensor of shape " + tf_shape_str(x.shape) + " is too large for a constant operand");
  Node k;
  k.name = op.def.name() + "/constant";
  k.keras_class = "Constant";
  k.kind = OpKind::Constant;
  k.origin = "constant operand of " + op.def.op() + " '" + op.def.name() + "'";
  k.shape = graph_shape(x.shape);
  k.weights = {Weight{k.shape, broadcast_to(c, x.shape)}};  // the batch axis is 1: the same data
  const int in = materialize(x, op.where);
  const int constant = add_node(std::move(k));
  Node n;
  n.name = op.def.name();
  n.kind = kind;
  n.keras_class = op_name(kind);
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  n.inputs = {in, constant};
  n.shape = graph_shape(x.shape);
  return node_value(add_node(std::move(n)), x.shape, "");
}

std::vector<TfValue> TfLowering::lower_batch_matmul(Op& op) {
  if (op.in.size() != 2) throw Error(op.where + ": expects two operands");
  const bool adj_x = attr_bool(op.def, "adj_x", false), adj_y = attr_bool(op.def, "adj_y", false);
  const TfValue &x = op.in[0], &y = op.in[1];
  if (is_node(x) && is_const(y)) {
    // A projection (Keras 3 EinsumDense, MultiHeadAttention's): a Dense over x's last axis.
    if (adj_x) throw Error(op.where + ": adj_x on the tensor of a tensor x constant product is not supported");
    TfTensor w = y.tensor;
    while (w.shape.size() > 2 && w.shape[0] == 1) w.shape.erase(w.shape.begin());
    if (w.shape.size() != 2) throw Error(op.where + ": constant operand " + tf_shape_str(y.tensor.shape) + " is not a matrix");
    if (adj_y) w = tf_transpose_matrix(w, op.where);
    return {add_dense(op, x, w, op.def.op() + " '" + op.def.name() + "'")};
  }
  if (!is_node(x) || !is_node(y)) throw Error(op.where + ": only tensor x constant and tensor x tensor products are supported");
  const TfValue a = adj_x ? permuted(op, x, swap_last_two(x.shape.size()), op.def.name() + "/adj_x") : x;
  const TfValue b = adj_y ? permuted(op, y, swap_last_two(y.shape.size()), op.def.name() + "/adj_y") : y;
  return {product(op, a, b, op.def.name())};
}

std::vector<TfValue> TfLowering::lower_einsum(Op& op) {
  const std::string eq = attr_string(op.def, "equation", "");
  if (op.in.size() != 2) throw Error(op.where + ": Einsum '" + eq + "' of " + std::to_string(op.in.size()) + " operands is not supported");
  if (is_node(op.in[0]) && is_const(op.in[1])) return {einsum_dense(op, eq)};
  if (is_node(op.in[0]) && is_node(op.in[1])) return {einsum_product(op, eq)};
  throw Error(op.where + ": Einsum '" + eq + "' of these operand kinds is not supported");
}

// x [free..., contracted...] by a constant [contracted..., out...] -> [free..., out...]: a Dense
// over the contracted axes flattened (tf_keras' EinsumDense, e.g. 'abc,cde->abde', 'abcd,cde->abe').
TfValue TfLowering::einsum_dense(const Op& op, const std::string& eq) {
  const Equation e = parse_equation(eq, op.where);
  const TfValue& x = op.in[0];
  const TfTensor& k = op.in[1].tensor;
  if (e.a.size() != x.shape.size() || e.b.size() != k.shape.size()) throw Error(op.where + ": Einsum '" + eq + "' does not match its operands' ranks");
  size_t free = 0;
  while (free < e.a.size() && e.b.find(e.a[free]) == std::string::npos) ++free;
  const std::string contracted = e.a.substr(free);
  const bool dense_shaped = !contracted.empty() && e.b.compare(0, contracted.size(), contracted) == 0 &&
                            e.out == e.a.substr(0, free) + e.b.substr(contracted.size());
  if (!dense_shaped) throw Error(op.where + ": Einsum '" + eq + "' of a tensor and a constant is not a Dense over the tensor's last axes (not supported)");
  int64_t in = 1;
  for (size_t i = 0; i < contracted.size(); ++i) {
    if (x.shape[free + i] != k.shape[i]) throw Error(op.where + ": Einsum '" + eq + "': operand dimensions differ");
    in *= k.shape[i];
  }
  TfTensor w = k;
  w.shape = {in, k.size() / std::max<int64_t>(in, 1)};
  TfValue rows = x;
  rows.shape.assign(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(free));
  rows.shape.push_back(in);
  rows.fresh = sole_user(op, x);
  TfValue v = add_dense(op, rows, w, "Einsum '" + eq + "' '" + op.def.name() + "'");
  v.shape.pop_back();
  v.shape.insert(v.shape.end(), k.shape.begin() + static_cast<std::ptrdiff_t>(contracted.size()), k.shape.end());
  return v;
}

// An attention product: the operands permuted to [batch..., rows, inner] and [batch..., inner,
// cols] (batch labels in the output's order), one MatMul, and the result permuted to the output's
// order. The operand whose free label comes first in the output is the MatMul's left one.
TfValue TfLowering::einsum_product(const Op& op, const std::string& eq) {
  const Equation e = parse_equation(eq, op.where);
  if (!is_attention_einsum(eq)) {
    throw Error(op.where + ": Einsum '" + eq + "' of two computed tensors is not a product of attention (supported: the forms Keras' "
                "MultiHeadAttention writes, such as BTNH,BSNH->BNTS and BNTS,BSNH->BTNH)");
  }
  const TfValue* va = &op.in[0];
  const TfValue* vb = &op.in[1];
  if (e.a.size() != va->shape.size() || e.b.size() != vb->shape.size()) throw Error(op.where + ": Einsum '" + eq + "' does not match its operands' ranks");
  std::string batch;
  char free_a = 0, free_b = 0, inner = 0;
  for (char l : e.out) {
    const bool in_a = e.a.find(l) != std::string::npos, in_b = e.b.find(l) != std::string::npos;
    if (in_a && in_b) batch += l;
    else if (in_a) free_a = l;
    else free_b = l;
  }
  for (char l : e.a) if (e.b.find(l) != std::string::npos && e.out.find(l) == std::string::npos) inner = l;
  std::string la = e.a, lb = e.b;
  if (e.out.find(free_b) < e.out.find(free_a)) std::swap(va, vb), std::swap(la, lb), std::swap(free_a, free_b);
  for (char l : batch + inner) {
    if (label_size(la, va->shape, l) != label_size(lb, vb->shape, l)) throw Error(op.where + ": Einsum '" + eq + "': operand dimensions differ");
  }
  auto order = [](const std::string& from, const std::string& to) {
    std::vector<int64_t> p;
    for (char l : to) p.push_back(static_cast<int64_t>(from.find(l)));
    return p;
  };
  const std::string name = op.def.name();
  const TfValue lhs = permuted(op, *va, order(la, batch + free_a + inner), name + "/lhs");
  const TfValue rhs = permuted(op, *vb, order(lb, batch + inner + free_b), name + "/rhs");
  const std::string made = batch + free_a + free_b;
  TfValue p = product(op, lhs, rhs, made == e.out ? name : name + "/product");
  if (made == e.out) return p;
  return permuted(op, p, order(made, e.out), name);
}

std::vector<TfValue> TfLowering::lower_select(Op& op) {
  if (op.in.size() != 3) throw Error(op.where + ": expects a condition and two values");
  const TfValue &cond = op.in[0], &x = op.in[1], &y = op.in[2];
  if (!is_const(cond)) throw Error(op.where + ": a condition computed from the input is not supported (only a constant mask)");
  const bool x_kept = is_node(x) && is_const(y), y_kept = is_const(x) && is_node(y);
  if (!x_kept && !y_kept) throw Error(op.where + ": selects between these operand kinds (only a tensor and a constant are supported)");
  const TfValue& kept = x_kept ? x : y;
  const TfTensor& fill = x_kept ? y.tensor : x.tensor;
  if (fill.values.size() != 1) throw Error(op.where + ": the constant operand " + tf_shape_str(fill.shape) + " is not a scalar");
  const double f = fill.values[0];
  // kept + f stands for f only where f swamps any score: the mask before a softmax, whose
  // masked entries then vanish exactly as the selected f's do.
  if (!(f <= -1e9)) throw Error(op.where + ": selecting the constant " + std::to_string(f) + " (only a large negative mask value before a softmax is supported)");
  if (tf_broadcast_shape(kept.shape, cond.tensor.shape, op.where) != kept.shape) {
    throw Error(op.where + ": the condition " + tf_shape_str(cond.tensor.shape) + " broadcasts the tensor " + tf_shape_str(kept.shape) + " to a larger shape");
  }
  TfTensor add = cond.tensor;
  add.dtype = kTfFloat;
  for (double& v : add.values) v = ((v != 0) == x_kept) ? 0.0 : f;
  if (std::all_of(add.values.begin(), add.values.end(), [](double v) { return v == 0.0; })) {
    TfValue same = kept;
    same.fresh = sole_user(op, kept);
    return {same};
  }
  return {add_constant_operand(op, kept, add, OpKind::Add)};
}

}  // namespace tickinfer::formats
