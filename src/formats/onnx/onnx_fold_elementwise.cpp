// Constant folding of the elementwise ops exporters apply to constants, with ONNX's
// multidirectional (numpy) broadcasting: arithmetic, Max / Min, comparisons, logic, Where and
// Expand. Shape arithmetic needs them (tf2onnx's einsum reshapes take the Max of two Gathered
// shapes), and so do constant masks: tf2onnx writes a Keras causal attention mask as
// Expand / And / Not / Cast / Mul of a constant bool table, which folds to the constant the
// scores are multiplied by and the one added to them; torch computes its head split with Mod,
// its attention scale with Sqrt / Div of the head width and an is_causal mask with Trilu /
// Equal / Where.
//
// Values are computed in double and stored as the result's type: for float inputs one operation
// rounds exactly as float32 arithmetic does (double holds every float product and quotient
// closely enough). Integer Div truncates toward zero, as onnxruntime does.
#include <algorithm>
#include <cmath>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// Larger than any mask or table a model carries; bounds the work a hostile file can ask for.
constexpr int64_t kMaxFoldElements = int64_t{1} << 22;

enum class Kind { Arithmetic, Compare, Logic, Select, Expand };
enum class Op {
  Add, Sub, Mul, Div, Mod, Max, Min, Neg, Sqrt, Reciprocal,
  Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor, Not, Where, Expand
};

struct OpInfo {
  const char* name;
  Op op;
  Kind kind;
  int arity;  // 0: one or more (Max, Min)
};

constexpr OpInfo kOps[] = {
    {"Add", Op::Add, Kind::Arithmetic, 2},
    {"Sub", Op::Sub, Kind::Arithmetic, 2},
    {"Mul", Op::Mul, Kind::Arithmetic, 2},
    {"Div", Op::Div, Kind::Arithmetic, 2},
    {"Mod", Op::Mod, Kind::Arithmetic, 2},
    {"Max", Op::Max, Kind::Arithmetic, 0},
    {"Min", Op::Min, Kind::Arithmetic, 0},
    {"Neg", Op::Neg, Kind::Arithmetic, 1},
    {"Sqrt", Op::Sqrt, Kind::Arithmetic, 1},
    {"Reciprocal", Op::Reciprocal, Kind::Arithmetic, 1},
    {"Equal", Op::Equal, Kind::Compare, 2},
    {"Less", Op::Less, Kind::Compare, 2},
    {"Greater", Op::Greater, Kind::Compare, 2},
    {"LessOrEqual", Op::LessOrEqual, Kind::Compare, 2},
    {"GreaterOrEqual", Op::GreaterOrEqual, Kind::Compare, 2},
    {"And", Op::And, Kind::Logic, 2},
    {"Or", Op::Or, Kind::Logic, 2},
    {"Xor", Op::Xor, Kind::Logic, 2},
    {"Not", Op::Not, Kind::Logic, 1},
    {"Where", Op::Where, Kind::Select, 3},
    {"Expand", Op::Expand, Kind::Expand, 2},
};

// The dims all of `dims` broadcast to; false when they do not.
bool broadcast(const std::vector<std::vector<int64_t>>& dims, std::vector<int64_t>& out) {
  size_t r = 0;
  for (const auto& d : dims) r = std::max(r, d.size());
  out.assign(r, 1);
  for (const auto& d : dims) {
    const size_t off = r - d.size();
    for (size_t k = 0; k < d.size(); ++k) {
      int64_t& o = out[off + k];
      if (d[k] < 0) return false;
      if (d[k] == o || d[k] == 1) continue;
      if (o != 1) return false;
      o = d[k];
    }
  }
  return true;
}

// The flat index in a tensor of `dims` of the output element at `coord` (a size-1 axis reads 0).
int64_t source_index(const std::vector<int64_t>& dims, const std::vector<int64_t>& coord) {
  const size_t off = coord.size() - dims.size();
  int64_t idx = 0;
  for (size_t k = 0; k < dims.size(); ++k)
    idx = idx * dims[k] + (dims[k] == 1 ? 0 : coord[off + k]);
  return idx;
}

// `op` on one element's operands. Mod: `fmod` is the attribute (C's fmod, the sign of the
// dividend); without it the result takes the divisor's sign, as Python's %.
double apply(Lowerer& L, const onnx::NodeProto& n, Op op, const std::vector<double>& a,
             bool integer, bool fmod) {
  switch (op) {
    case Op::Add: return a[0] + a[1];
    case Op::Sub: return a[0] - a[1];
    case Op::Mul: return a[0] * a[1];
    case Op::Div:
      if (!integer) return a[0] / a[1];
      if (a[1] == 0.0) L.fail(n, "integer division by zero");
      return std::trunc(a[0] / a[1]);
    case Op::Mod:
      if (integer && a[1] == 0.0) L.fail(n, "integer modulo by zero");
      return fmod ? std::fmod(a[0], a[1]) : a[0] - std::floor(a[0] / a[1]) * a[1];
    case Op::Max: return *std::max_element(a.begin(), a.end());
    case Op::Min: return *std::min_element(a.begin(), a.end());
    case Op::Neg: return -a[0];
    case Op::Sqrt: return std::sqrt(a[0]);
    case Op::Reciprocal: return 1.0 / a[0];
    case Op::Equal: return a[0] == a[1];
    case Op::Less: return a[0] < a[1];
    case Op::Greater: return a[0] > a[1];
    case Op::LessOrEqual: return a[0] <= a[1];
    case Op::GreaterOrEqual: return a[0] >= a[1];
    case Op::And: return a[0] != 0.0 && a[1] != 0.0;
    case Op::Or: return a[0] != 0.0 || a[1] != 0.0;
    case Op::Xor: return (a[0] != 0.0) != (a[1] != 0.0);
    case Op::Not: return a[0] == 0.0;
    case Op::Where: return a[0] != 0.0 ? a[1] : a[2];
    case Op::Expand: return a[0];  // the input's element
  }
  return a[0];
}

// Trilu of a constant: the triangle of the last two axes that torch's causal masks start from
// (element (i, j) kept where j - i >= k for the upper one, j - i <= k for the lower one).
bool fold_trilu(Lowerer& L, const onnx::NodeProto& n, Value& result) {
  const Value& x = L.value(n.input(0));
  if (!x.is_const || (L.has_input(n, 1) && !L.value(n.input(1)).is_const)) return false;
  const int64_t k = L.has_input(n, 1) ? static_cast<int64_t>(L.scalar(n, 1)) : 0;
  const bool upper = L.attr_i(n, "upper", 1) != 0;
  Tensor t = x.c;
  if (t.dims.size() < 2) L.fail(n, "the input must have rank 2 or more");
  const int64_t rows = t.dims[t.dims.size() - 2], cols = t.dims.back();
  for (int64_t e = 0; e < t.size(); ++e) {
    const int64_t i = (e / cols) % rows, j = e % cols;
    if (upper ? j - i >= k : j - i <= k) continue;
    if (t.is_float)
      t.f[static_cast<size_t>(e)] = 0.0f;
    else
      t.i[static_cast<size_t>(e)] = 0;
  }
  result = Value{};
  result.is_const = true;
  result.c = std::move(t);
  return true;
}

}  // namespace

bool fold_elementwise(Lowerer& L, const onnx::NodeProto& n, int out, Value& result) {
  if (n.op_type() == "Trilu" && out == 0 && L.has_input(n, 0)) return fold_trilu(L, n, result);
  const auto* info = std::find_if(std::begin(kOps), std::end(kOps),
                                  [&](const OpInfo& o) { return n.op_type() == o.name; });
  if (info == std::end(kOps) || out != 0 || n.input_size() < 1) return false;
  if (info->arity != 0 && n.input_size() != info->arity) return false;
  std::vector<const Tensor*> ins;
  for (int k = 0; k < n.input_size(); ++k) {
    if (n.input(k).empty()) return false;
    const Value& v = L.value(n.input(k));
    if (!v.is_const) return false;
    ins.push_back(&v.c);
  }
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor* t : ins) dims.push_back(t->dims);
  if (info->kind == Kind::Expand) {
    // Expand's second input is the shape the first broadcasts with (both ways), not data.
    const Tensor& shape = *ins[1];
    if (shape.is_float || shape.dims.size() != 1)
      L.fail(n, "the shape must be a 1-D integer tensor");
    dims[1] = shape.i;
    ins.pop_back();
  }
  std::vector<int64_t> out_dims;
  if (!broadcast(dims, out_dims)) L.fail(n, "the constant operands' shapes do not broadcast");
  int64_t count = 1;
  for (int64_t d : out_dims) {
    count *= d;
    if (count > kMaxFoldElements)
      L.fail(n, "the folded constant would hold more than " + std::to_string(kMaxFoldElements) +
                    " values");
  }
  // The data inputs (Where's condition is not one) decide the result's type.
  const size_t first_data = info->kind == Kind::Select ? 1 : 0;
  bool is_float = false;
  for (size_t k = first_data; k < ins.size(); ++k) is_float = is_float || ins[k]->is_float;
  if (info->kind == Kind::Compare || info->kind == Kind::Logic) is_float = false;  // BOOL

  const bool fmod = L.attr_i(n, "fmod", 0) != 0;
  Tensor t;
  t.dims = out_dims;
  t.is_float = is_float;
  std::vector<int64_t> coord(out_dims.size(), 0);
  std::vector<double> args(ins.size());
  for (int64_t e = 0; e < count; ++e) {
    for (size_t k = 0; k < ins.size(); ++k) args[k] = ins[k]->at(source_index(ins[k]->dims, coord));
    const double v = apply(L, n, info->op, args, !is_float, fmod);
    if (is_float) {
      t.f.push_back(static_cast<float>(v));
    } else {
      t.i.push_back(std::isfinite(v) ? static_cast<int64_t>(std::clamp(v, -9.0e18, 9.0e18)) : 0);
    }
    for (size_t a = coord.size(); a-- > 0;) {
      if (++coord[a] < out_dims[a]) break;
      coord[a] = 0;
    }
  }
  result = Value{};
  result.is_const = true;
  result.c = std::move(t);
  return true;
}

}  // namespace tickinfer::formats::onnx_import
