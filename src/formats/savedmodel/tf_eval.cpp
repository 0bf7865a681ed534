#include "formats/savedmodel/tf_eval.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "formats/savedmodel/tf_attr.hpp"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

using Unary = double (*)(double);
using Binary = double (*)(double, double);

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const std::map<std::string, Unary>& unary_ops() {
  static const std::map<std::string, Unary> ops = {
      {"Identity", [](double x) { return x; }},
      {"StopGradient", [](double x) { return x; }},
      {"Snapshot", [](double x) { return x; }},
      {"Neg", [](double x) { return -x; }},
      {"Rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Square", [](double x) { return x * x; }},
      {"Reciprocal", [](double x) { return 1.0 / x; }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Sigmoid", sigmoid},
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"Relu6", [](double x) { return std::min(std::max(x, 0.0), 6.0); }},
      {"Softplus", [](double x) { return std::log1p(std::exp(x)); }},
      {"Softsign", [](double x) { return x / (1.0 + std::fabs(x)); }},
      {"Erf", [](double x) { return std::erf(x); }},
      {"Erfc", [](double x) { return std::erfc(x); }},
      {"Abs", [](double x) { return std::fabs(x); }},
      {"Sign", [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }},
      {"ZerosLike", [](double) { return 0.0; }},
      {"OnesLike", [](double) { return 1.0; }},
      {"LogicalNot", [](double x) { return x == 0 ? 1.0 : 0.0; }},
  };
  return ops;
}

const std::map<std::string, Binary>& binary_ops() {
  static const std::map<std::string, Binary> ops = {
      {"Add", [](double a, double b) { return a + b; }},
      {"AddV2", [](double a, double b) { return a + b; }},
      {"BiasAdd", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"RealDiv", [](double a, double b) { return a / b; }},
      {"Maximum", [](double a, double b) { return std::max(a, b); }},
      {"Minimum", [](double a, double b) { return std::min(a, b); }},
      {"SquaredDifference", [](double a, double b) { return (a - b) * (a - b); }},
      {"Less", [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"LessEqual", [](double a, double b) { return a <= b ? 1.0 : 0.0; }},
      {"Greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }},
      {"GreaterEqual", [](double a, double b) { return a >= b ? 1.0 : 0.0; }},
      {"LogicalAnd", [](double a, double b) { return (a != 0 && b != 0) ? 1.0 : 0.0; }},
      {"LogicalOr", [](double a, double b) { return (a != 0 || b != 0) ? 1.0 : 0.0; }},
      {"Equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }},
      {"NotEqual", [](double a, double b) { return a != b ? 1.0 : 0.0; }},
  };
  return ops;
}

const char* const kStructural[] = {"Shape", "StridedSlice", "Pack", "Fill", "Prod", "Max", "Min", "Sum", "Mean",
                                   "GatherV2", "ConcatV2", "Reshape", "ExpandDims", "Squeeze", "Transpose",
                                   "Cast", "Range", "MatMul", "Split", "SplitV", "Unpack", "Const", "ClipByValue", "Select", "SelectV2",
                                   "MatrixBandPart", "Cumsum"};

int64_t norm_axis(int64_t axis, size_t rank, const std::string& where) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= std::max<int64_t>(r, 1)) throw Error(where + ": axis " + std::to_string(axis) + " out of range");
  return axis < 0 ? axis + r : axis;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

TfTensor broadcast_binary(const TfTensor& a, const TfTensor& b, Binary f, const std::string& where) {
  TfTensor out;
  out.dtype = a.dtype;
  out.shape = tf_broadcast_shape(a.shape, b.shape, where);
  const int64_t n = tf_element_count(out.shape);
  if (n < 0) throw Error(where + ": result of shape " + tf_shape_str(out.shape) + " is too large");
  out.values.resize(static_cast<size_t>(n));
  const size_t r = out.shape.size();
  auto padded = [&](const std::vector<int64_t>& s) {
    std::vector<int64_t> p(r - s.size(), 1);
    p.insert(p.end(), s.begin(), s.end());
    return p;
  };
  const auto sa = padded(a.shape), sb = padded(b.shape);
  const auto sta = strides_of(sa), stb = strides_of(sb), sto = strides_of(out.shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = 0, ib = 0, rem = i;
    for (size_t d = 0; d < r; ++d) {
      const int64_t c = rem / sto[d];
      rem %= sto[d];
      if (sa[d] != 1) ia += c * sta[d];
      if (sb[d] != 1) ib += c * stb[d];
    }
    out.values[static_cast<size_t>(i)] = f(a.values[static_cast<size_t>(ia)], b.values[static_cast<size_t>(ib)]);
  }
  return out;
}

TfTensor reduce(const TfTensor& x, const TfTensor& axes, bool keep, const std::string& kind, const std::string& where) {
  std::vector<bool> red(x.shape.size(), false);
  for (double a : axes.values) red[static_cast<size_t>(norm_axis(tf_to_int(a), x.shape.size(), where))] = true;
  TfTensor out;
  out.dtype = x.dtype;
  std::vector<int64_t> kept_shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    kept_shape.push_back(red[d] ? 1 : x.shape[d]);
    if (!red[d]) out.shape.push_back(x.shape[d]);
    else if (keep) out.shape.push_back(1);
  }
  const int64_t n = tf_element_count(kept_shape);
  const double init = kind == "Prod" ? 1.0 : kind == "Max" ? -INFINITY : kind == "Min" ? INFINITY : 0.0;
  std::vector<double> acc(static_cast<size_t>(n), init);
  const auto st = strides_of(x.shape), sk = strides_of(kept_shape);
  int64_t count = x.size() / std::max<int64_t>(n, 1);
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t o = 0, rem = i;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      const int64_t c = rem / st[d];
      rem %= st[d];
      if (!red[d]) o += c * sk[d];
    }
    double& a = acc[static_cast<size_t>(o)];
    const double v = x.values[static_cast<size_t>(i)];
    if (kind == "Prod") a *= v;
    else if (kind == "Max") a = std::max(a, v);
    else if (kind == "Min") a = std::min(a, v);
    else a += v;
  }
  if (kind == "Mean") for (double& a : acc) a /= static_cast<double>(std::max<int64_t>(count, 1));
  out.values = std::move(acc);
  return out;
}

TfTensor transpose(const TfTensor& x, const std::vector<int64_t>& perm, const std::string& where) {
  if (perm.size() != x.shape.size()) throw Error(where + ": permutation rank differs from the tensor's");
  TfTensor out;
  out.dtype = x.dtype;
  for (int64_t p : perm) out.shape.push_back(x.shape[static_cast<size_t>(norm_axis(p, x.shape.size(), where))]);
  out.values.resize(x.values.size());
  const auto si = strides_of(x.shape), so = strides_of(out.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t src = 0, rem = i;
    for (size_t d = 0; d < out.shape.size(); ++d) {
      const int64_t c = rem / so[d];
      rem %= so[d];
      src += c * si[static_cast<size_t>(norm_axis(perm[d], x.shape.size(), where))];
    }
    out.values[static_cast<size_t>(i)] = x.values[static_cast<size_t>(src)];
  }
  return out;
}

std::vector<int64_t> as_ints(const TfTensor& t) {
  std::vector<int64_t> v;
  for (double d : t.values) v.push_back(tf_to_int(d));
  return v;
}

TfTensor make_vector(const std::vector<int64_t>& v, int dtype) {
  TfTensor t;
  t.dtype = dtype;
  t.shape = {static_cast<int64_t>(v.size())};
  for (int64_t x : v) t.values.push_back(static_cast<double>(x));
  return t;
}

std::vector<int64_t> reshape_target(const std::vector<int64_t>& want, int64_t count, const std::string& where) {
  std::vector<int64_t> s = want;
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (unknown >= 0) throw Error(where + ": reshape target has two -1 dimensions");
      unknown = static_cast<int>(i);
    } else if (s[i] < 0) {
      throw Error(where + ": negative reshape dimension");
    } else {
      known *= s[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || count % known != 0) throw Error(where + ": cannot infer the -1 dimension");
    s[static_cast<size_t>(unknown)] = count / known;
  } else if (known != count) {
    throw Error(where + ": reshape of " + std::to_string(count) + " elements to " + tf_shape_str(want));
  }
  return s;
}

// MatrixBandPart(x [..., M, N], num_lower, num_upper): x where the element (m, n) lies in the
// band (m - n <= num_lower and n - m <= num_upper, a negative bound keeping that whole triangle),
// 0 elsewhere.
TfTensor matrix_band_part(const TfTensor& x, const TfTensor& lower, const TfTensor& upper, const std::string& where) {
  if (x.shape.size() < 2 || lower.values.size() != 1 || upper.values.size() != 1) throw Error(where + ": expects a matrix and two scalar bounds");
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  const int64_t lo = tf_to_int(lower.values[0]), hi = tf_to_int(upper.values[0]);
  if (lo > rows || hi > cols) throw Error(where + ": band bounds exceed the matrix");
  TfTensor out = x;
  for (size_t i = 0; i < out.values.size(); ++i) {
    const auto m = static_cast<int64_t>(i / static_cast<size_t>(cols)) % rows, n = static_cast<int64_t>(i % static_cast<size_t>(cols));
    if ((lo >= 0 && m - n > lo) || (hi >= 0 && n - m > hi)) out.values[i] = 0.0;
  }
  return out;
}

}  // namespace

TfTensor tf_transpose_matrix(const TfTensor& w, const std::string& where) {
  if (w.shape.size() != 2) throw Error(where + ": constant operand " + tf_shape_str(w.shape) + " is not a matrix");
  return transpose(w, {1, 0}, where);
}

std::vector<int64_t> tf_broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& where) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) throw Error(where + ": shapes " + tf_shape_str(a) + " and " + tf_shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool tf_op_is_foldable(const std::string& op) {
  if (unary_ops().count(op) || binary_ops().count(op)) return true;
  return std::find(std::begin(kStructural), std::end(kStructural), op) != std::end(kStructural);
}

std::vector<TfTensor> eval_tf_op_structural(const tensorflow::NodeDef& node, const std::vector<TfTensor>& in,
                                            const std::string& where);

std::vector<TfTensor> eval_tf_op(const tensorflow::NodeDef& node, const std::vector<TfTensor>& in, const std::string& where) {
  const std::string& op = node.op();
  for (const TfTensor& t : in) {
    if (tf_element_count(t.shape) < 0) throw Error(where + ": operand of unknown shape " + tf_shape_str(t.shape));
  }
  if (auto u = unary_ops().find(op); u != unary_ops().end()) {
    if (in.size() != 1) throw Error(where + ": expects one input");
    TfTensor out = in[0];
    for (double& v : out.values) v = u->second(v);
    if (op == "LogicalNot") out.dtype = kTfBool;
    return {out};
  }
  if (auto b = binary_ops().find(op); b != binary_ops().end()) {
    if (in.size() != 2) throw Error(where + ": expects two inputs");
    if (op == "BiasAdd" && (in[1].shape.size() != 1 || in[0].shape.empty() || in[0].shape.back() != in[1].shape[0])) {
      throw Error(where + ": bias shape " + tf_shape_str(in[1].shape) + " does not match " + tf_shape_str(in[0].shape));
    }
    TfTensor out = broadcast_binary(in[0], in[1], b->second, where);
    static const char* const predicates[] = {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr"};
    if (std::find(std::begin(predicates), std::end(predicates), op) != std::end(predicates)) out.dtype = kTfBool;
    return {out};
  }
  return eval_tf_op_structural(node, in, where);
}

// The ops that move or combine values (MatMul, Split, SplitV, Unpack, ConcatV2, GatherV2,
// StridedSlice); false if `node` is none of them.
static bool eval_data_op(const tensorflow::NodeDef& node, const std::vector<TfTensor>& in, const std::string& where,
                  std::vector<TfTensor>& result) {
  const std::string& op = node.op();
  auto need = [&](size_t n) {
    if (in.size() != n) throw Error(where + ": expects " + std::to_string(n) + " inputs, has " + std::to_string(in.size()));
  };
  if (op == "MatMul") {
    need(2);
    TfTensor a = in[0], b = in[1];
    if (a.shape.size() != 2 || b.shape.size() != 2) throw Error(where + ": MatMul operands must be matrices");
    if (attr_bool(node, "transpose_a", false)) a = transpose(a, {1, 0}, where);
    if (attr_bool(node, "transpose_b", false)) b = transpose(b, {1, 0}, where);
    const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    if (m * k > 0 && n > (int64_t{1} << 28) / (m * k)) throw Error(where + ": MatMul too large to evaluate at load time");
    if (b.shape[0] != k) throw Error(where + ": MatMul inner dimensions " + std::to_string(k) + " and " + std::to_string(b.shape[0]));
    TfTensor out;
    out.dtype = a.dtype;
    out.shape = {m, n};
    out.values.assign(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) out.values[static_cast<size_t>(i * n + j)] += a.values[static_cast<size_t>(i * k + p)] * b.values[static_cast<size_t>(p * n + j)];
    { result = {out}; return true; }
  }
  if (op == "Split") {
    need(2);
    const TfTensor& x = in[1];
    const int64_t axis = norm_axis(tf_to_int(in[0].values.at(0)), x.shape.size(), where);
    const int64_t parts = attr_int(node, "num_split", 1);
    if (parts < 1 || x.shape[static_cast<size_t>(axis)] % parts != 0) throw Error(where + ": dimension does not split evenly");
    std::vector<TfTensor> out;
    const int64_t len = x.shape[static_cast<size_t>(axis)] / parts;
    const auto st = strides_of(x.shape);
    for (int64_t p = 0; p < parts; ++p) {
      TfTensor t;
      t.dtype = x.dtype;
      t.shape = x.shape;
      t.shape[static_cast<size_t>(axis)] = len;
      const auto so = strides_of(t.shape);
      for (int64_t i = 0; i < t.size(); ++i) {
        int64_t src = 0, rem = i;
        for (size_t d = 0; d < t.shape.size(); ++d) {
          int64_t c = rem / so[d];
          rem %= so[d];
          if (static_cast<int64_t>(d) == axis) c += p * len;
          src += c * st[d];
        }
        t.values.push_back(x.values[static_cast<size_t>(src)]);
      }
      out.push_back(std::move(t));
    }
    { result = std::move(out); return true; }
  }
  if (op == "SplitV" || op == "Unpack") {
    // SplitV(x, size_splits, axis); Unpack(x) along attr axis, dropping it.
    const TfTensor& x = in.at(0);
    const int64_t axis = norm_axis(op == "Unpack" ? attr_int(node, "axis", 0) : tf_to_int(in.at(2).values.at(0)), x.shape.size(), where);
    const int64_t dim = x.shape[static_cast<size_t>(axis)];
    std::vector<int64_t> sizes = op == "Unpack" ? std::vector<int64_t>(static_cast<size_t>(dim), 1) : as_ints(in.at(1));
    int64_t known = 0, unknown = -1;
    for (size_t i = 0; i < sizes.size(); ++i) sizes[i] < 0 ? unknown = static_cast<int64_t>(i) : known += sizes[i];
    if (unknown >= 0) sizes[static_cast<size_t>(unknown)] = dim - known;
    std::vector<TfTensor> out;
    int64_t start = 0;
    for (int64_t len : sizes) {
      if (len < 0 || start + len > dim) throw Error(where + ": split sizes exceed the dimension");
      std::vector<int64_t> perm;  // move the axis first, take rows [start, start + len), move back
      perm.push_back(axis);
      for (int64_t d = 0; d < static_cast<int64_t>(x.shape.size()); ++d) if (d != axis) perm.push_back(d);
      TfTensor t = transpose(x, perm, where);
      const int64_t row = t.size() / std::max<int64_t>(dim, 1);
      TfTensor part;
      part.dtype = x.dtype;
      part.shape = t.shape;
      part.shape[0] = len;
      part.values.assign(t.values.begin() + start * row, t.values.begin() + (start + len) * row);
      std::vector<int64_t> inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
      part = transpose(part, inv, where);
      if (op == "Unpack") part.shape.erase(part.shape.begin() + axis);
      out.push_back(std::move(part));
      start += len;
    }
    { result = std::move(out); return true; }
  }
  if (op == "ConcatV2") {
    if (in.size() < 2) throw Error(where + ": no inputs");
    const size_t n = in.size() - 1;
    const int64_t axis = norm_axis(tf_to_int(in[n].values.at(0)), in[0].shape.size(), where);
    std::vector<int64_t> perm;  // move the axis first, concatenate, move it back
    perm.push_back(axis);
    for (int64_t d = 0; d < static_cast<int64_t>(in[0].shape.size()); ++d) if (d != axis) perm.push_back(d);
    TfTensor cat;
    cat.dtype = in[0].dtype;
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      if (in[i].shape.size() != in[0].shape.size()) throw Error(where + ": concatenated ranks differ");
      TfTensor t = transpose(in[i], perm, where);
      total += t.shape[0];
      cat.values.insert(cat.values.end(), t.values.begin(), t.values.end());
      cat.shape = t.shape;
    }
    cat.shape[0] = total;
    if (static_cast<int64_t>(cat.values.size()) != tf_element_count(cat.shape)) throw Error(where + ": concatenated shapes differ");
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    result = {transpose(cat, inv, where)};
    return true;
  }
  if (op == "GatherV2") {
    need(3);
    const int64_t axis = norm_axis(tf_to_int(in[2].values.at(0)), in[0].shape.size(), where);
    if (axis != 0 || in[0].shape.size() != 1) throw Error(where + ": only gathers from a vector are supported");
    TfTensor out;
    out.dtype = in[0].dtype;
    out.shape = in[1].shape;
    for (double idx : in[1].values) {
      const auto i = tf_to_int(idx);
      if (i < 0 || i >= in[0].shape[0]) throw Error(where + ": gather index out of range");
      out.values.push_back(in[0].values[static_cast<size_t>(i)]);
    }
    { result = {out}; return true; }
  }
  if (op == "StridedSlice") {
    need(4);
    result = {tf_strided_slice(node, in[0], as_ints(in[1]), as_ints(in[2]), as_ints(in[3]), where)};
    return true;
  }
  return false;
}

std::vector<TfTensor> eval_tf_op_structural(const tensorflow::NodeDef& node, const std::vector<TfTensor>& in,
                                            const std::string& where) {
  const std::string& op = node.op();
  auto need = [&](size_t n) {
    if (in.size() != n) throw Error(where + ": expects " + std::to_string(n) + " inputs, has " + std::to_string(in.size()));
  };
  if (op == "Shape") {
    need(1);
    return {make_vector(in[0].shape, static_cast<int>(attr_int(node, "out_type", kTfInt32)))};
  }
  if (op == "Cast") {
    need(1);
    TfTensor out = in[0];
    out.dtype = static_cast<int>(attr_int(node, "DstT", kTfFloat));
    if (out.is_integer()) for (double& v : out.values) v = std::trunc(v);
    else if (out.dtype == kTfFloat) for (double& v : out.values) v = static_cast<float>(v);
    return {out};
  }
  if (op == "Pack") {
    if (in.empty()) throw Error(where + ": no inputs");
    const int64_t axis = norm_axis(attr_int(node, "axis", 0), in[0].shape.size() + 1, where);
    TfTensor stacked;
    stacked.dtype = in[0].dtype;
    stacked.shape = in[0].shape;
    stacked.shape.insert(stacked.shape.begin(), static_cast<int64_t>(in.size()));
    for (const TfTensor& t : in) {
      if (t.shape != in[0].shape) throw Error(where + ": packed tensors differ in shape");
      stacked.values.insert(stacked.values.end(), t.values.begin(), t.values.end());
    }
    std::vector<int64_t> perm;
    for (int64_t d = 1; d <= static_cast<int64_t>(in[0].shape.size()); ++d) perm.push_back(d);
    perm.insert(perm.begin() + axis, 0);
    return {transpose(stacked, perm, where)};
  }
  if (op == "Fill") {
    need(2);
    TfTensor out;
    out.dtype = in[1].dtype;
    out.shape = as_ints(in[0]);
    const int64_t n = tf_element_count(out.shape);
    if (n < 0 || in[1].values.size() != 1) throw Error(where + ": bad Fill shape or value");
    out.values.assign(static_cast<size_t>(n), in[1].values[0]);
    return {out};
  }
  if (op == "Prod" || op == "Max" || op == "Min" || op == "Sum" || op == "Mean") {
    need(2);
    return {reduce(in[0], in[1], attr_bool(node, "keep_dims", false), op, where)};
  }
  if (op == "Range") {
    need(3);
    TfTensor out;
    out.dtype = in[0].dtype;
    const double start = in[0].values.at(0), limit = in[1].values.at(0), delta = in[2].values.at(0);
    if (delta == 0 || std::fabs((limit - start) / delta) > 1e7) throw Error(where + ": bad range");
    for (double v = start; delta > 0 ? v < limit : v > limit; v += delta) out.values.push_back(v);
    out.shape = {static_cast<int64_t>(out.values.size())};
    return {out};
  }
  if (op == "Reshape") {
    need(2);
    TfTensor out = in[0];
    out.shape = reshape_target(as_ints(in[1]), in[0].size(), where);
    return {out};
  }
  if (op == "ExpandDims") {
    need(2);
    TfTensor out = in[0];
    const int64_t axis = norm_axis(tf_to_int(in[1].values.at(0)), in[0].shape.size() + 1, where);
    out.shape.insert(out.shape.begin() + axis, 1);
    return {out};
  }
  if (op == "Squeeze") {
    need(1);
    TfTensor out = in[0];
    const std::vector<int64_t> dims = attr_ints(node, "squeeze_dims");
    out.shape.clear();
    for (size_t d = 0; d < in[0].shape.size(); ++d) {
      bool listed = dims.empty() && in[0].shape[d] == 1;
      for (int64_t s : dims) listed |= norm_axis(s, in[0].shape.size(), where) == static_cast<int64_t>(d);
      if (listed && in[0].shape[d] != 1) throw Error(where + ": squeezes a dimension of size " + std::to_string(in[0].shape[d]));
      if (!listed) out.shape.push_back(in[0].shape[d]);
    }
    return {out};
  }
  if (op == "Transpose") {
    need(2);
    return {transpose(in[0], as_ints(in[1]), where)};
  }
  if (op == "Select" || op == "SelectV2") {
    need(3);
    const TfTensor* shaped = &in[0];
    for (const TfTensor& t : in) if (t.values.size() > shaped->values.size()) shaped = &t;
    for (const TfTensor& t : in) {
      if (t.values.size() != 1 && t.shape != shaped->shape) throw Error(where + ": Select operands must have one shape or be scalars");
    }
    TfTensor out = *shaped;
    out.dtype = in[1].dtype;
    for (size_t i = 0; i < out.values.size(); ++i) {
      auto v = [&](const TfTensor& t) { return t.values[t.values.size() == 1 ? 0 : i]; };
      out.values[i] = v(in[0]) != 0 ? v(in[1]) : v(in[2]);
    }
    return {out};
  }
  if (op == "ClipByValue") {
    need(3);
    TfTensor lo = broadcast_binary(in[0], in[1], [](double a, double b) { return std::max(a, b); }, where);
    return {broadcast_binary(lo, in[2], [](double a, double b) { return std::min(a, b); }, where)};
  }
  if (op == "MatrixBandPart") {
    need(3);
    return {matrix_band_part(in[0], in[1], in[2], where)};
  }
  if (op == "Cumsum") {  // Keras' ops.arange for a sliding-window mask: ones summed along an axis
    need(2);
    const TfTensor& x = in[0];
    if (x.shape.empty()) throw Error(where + ": Cumsum of a scalar");
    const auto axis = static_cast<size_t>(norm_axis(tf_to_int(in[1].values.at(0)), x.shape.size(), where));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.shape[d];
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    const int64_t n = x.shape[axis];
    const bool exclusive = attr_bool(node, "exclusive", false), reverse = attr_bool(node, "reverse", false);
    TfTensor out = x;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0;
        for (int64_t s = 0; s < n; ++s) {
          const auto at = static_cast<size_t>((o * n + (reverse ? n - 1 - s : s)) * inner + i);
          const double v = x.values[at];
          out.values[at] = exclusive ? sum : sum + v;
          sum += v;
        }
      }
    }
    return {out};
  }
  std::vector<TfTensor> out;
  if (eval_data_op(node, in, where, out)) return out;
  throw Error(where + ": op " + op + " cannot be evaluated");
}

}  // namespace tickinfer::formats
