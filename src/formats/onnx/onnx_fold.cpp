// Constant folding of the small shape computations exporters emit (Shape -> Cast -> Slice ->
// Concat -> Reshape targets, Constant nodes) and the reshapes of constant tables (Cast, Reshape,
// Unsqueeze, Squeeze of any rank; Slice, Gather and Concat of rank 1 only). The elementwise ops
// are onnx_fold_elementwise.cpp's; anything else lowers as a runtime op or is refused there.
#include <algorithm>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

constexpr int64_t kMaxFoldElements = int64_t{1} << 20;

// Float to integer as a Cast would, without undefined behaviour on NaN or out-of-range values.
int64_t to_i64(double v) {
  if (!(v == v)) return 0;
  return static_cast<int64_t>(std::clamp(v, -9.0e18, 9.0e18));
}

Tensor from_values(const std::vector<int64_t>& dims, bool is_float, const std::vector<double>& vals) {
  Tensor t;
  t.dims = dims;
  t.is_float = is_float;
  for (double v : vals) {
    if (is_float) t.f.push_back(static_cast<float>(v)); else t.i.push_back(to_i64(v));
  }
  return t;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t k = 0; k < t.size(); ++k) v.push_back(t.at(k));
  return v;
}

// A constant input, or nullptr when it is computed at run time.
const Tensor* const_input(Lowerer& L, const onnx::NodeProto& n, int k) {
  if (!L.has_input(n, k)) return nullptr;
  const Value& v = L.value(n.input(k));
  return v.is_const ? &v.c : nullptr;
}

bool fold_constant_node(Lowerer& L, const onnx::NodeProto& n, Tensor& t) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") {
      t = decode_tensor(a.t(), L.source(), "Constant '" + n.name() + "' value");
    } else if (a.name() == "value_float") {
      t = from_values({}, true, {a.f()});
    } else if (a.name() == "value_floats") {
      t = from_values({a.floats_size()}, true, std::vector<double>(a.floats().begin(), a.floats().end()));
    } else if (a.name() == "value_int") {
      t = from_values({}, false, {static_cast<double>(a.i())});
    } else if (a.name() == "value_ints") {
      t.dims = {a.ints_size()};
      t.i.assign(a.ints().begin(), a.ints().end());
    } else {
      L.fail(n, "attribute '" + a.name() + "' is not supported");
    }
    return true;
  }
  L.fail(n, "has no value");
}

bool fold_shape(Lowerer& L, const onnx::NodeProto& n, Tensor& t) {
  const Value& x = L.value(n.input(0));
  const std::vector<int> d = L.dims(x);  // a padded value's dims include its padding
  const int64_t r = static_cast<int64_t>(d.size());
  int64_t start = L.attr_i(n, "start", 0), end = L.attr_i(n, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r), end = std::clamp<int64_t>(end, start, r);
  t.dims = {end - start};
  for (int64_t k = start; k < end; ++k) {
    if (d[k] < 0) L.fail(n, "the shape depends on a variable dimension");
    t.i.push_back(d[k]);
  }
  return true;
}

bool fold_slice(Lowerer& L, const onnx::NodeProto& n, const Tensor& x, Tensor& t) {
  const Tensor* s = const_input(L, n, 1);
  const Tensor* e = const_input(L, n, 2);
  if (x.dims.size() != 1 || !s || !e || s->size() != 1 || e->size() != 1) return false;
  if (const Tensor* ax = const_input(L, n, 3); ax && (ax->size() != 1 || (ax->at(0) != 0 && ax->at(0) != -1))) return false;
  if (const Tensor* st = const_input(L, n, 4); st && (st->size() != 1 || st->at(0) != 1)) return false;
  const int64_t len = x.size();
  auto clampi = [&](double v) {
    int64_t i = v < -1e18 ? -len : v > 1e18 ? len : to_i64(v);
    if (i < 0) i += len;
    return std::clamp<int64_t>(i, 0, len);
  };
  const int64_t b = clampi(s->at(0)), en = std::max(b, clampi(e->at(0)));
  std::vector<double> v = values(x);
  t = from_values({en - b}, x.is_float, std::vector<double>(v.begin() + b, v.begin() + en));
  return true;
}

bool fold_gather(Lowerer& L, const onnx::NodeProto& n, const Tensor& x, Tensor& t) {
  const Tensor* idx = const_input(L, n, 1);
  if (x.dims.size() != 1 || !idx || idx->is_float || idx->dims.size() > 1 || L.attr_i(n, "axis", 0) != 0) return false;
  std::vector<double> out;
  for (int64_t k : idx->i) {
    if (k < 0) k += x.size();
    if (k < 0 || k >= x.size()) L.fail(n, "index out of range");
    out.push_back(x.at(k));
  }
  t = from_values(idx->dims, x.is_float, out);
  return true;
}

bool fold_concat(Lowerer& L, const onnx::NodeProto& n, Tensor& t) {
  std::vector<double> out;
  bool is_float = false;
  for (int k = 0; k < n.input_size(); ++k) {
    const Tensor* c = const_input(L, n, k);
    if (!c || c->dims.size() != 1) return false;
    is_float = c->is_float;
    for (double v : values(*c)) out.push_back(v);
  }
  if (out.size() > static_cast<size_t>(kMaxFoldElements)) return false;
  t = from_values({static_cast<int64_t>(out.size())}, is_float, out);
  return true;
}

// Unsqueeze inserts axes of size 1 at `axes` (of the output); Squeeze drops `axes` (each of
// size 1), or every axis of size 1 when none are given (a constant mask's unit axes, a scalar
// shape value made a vector).
void fold_squeeze(Lowerer& L, const onnx::NodeProto& n, const Tensor& x, const std::vector<int64_t>& axes, bool unsqueeze,
                  Tensor& t) {
  const int64_t r = static_cast<int64_t>(x.dims.size());
  const int64_t nr = unsqueeze ? r + static_cast<int64_t>(axes.size()) : r;
  std::vector<bool> listed(static_cast<size_t>(nr), false);
  for (int64_t a : axes) {
    if (a < -nr || a >= nr) L.fail(n, "axis " + std::to_string(a) + " is out of range");
    const auto k = static_cast<size_t>(a < 0 ? a + nr : a);
    if (listed[k]) L.fail(n, "an axis is listed twice");
    listed[k] = true;
  }
  t = x;
  t.dims.clear();
  size_t next = 0;
  for (size_t k = 0; k < listed.size(); ++k) {
    if (unsqueeze) {
      t.dims.push_back(listed[k] ? 1 : x.dims[next++]);
    } else if (axes.empty() ? x.dims[k] != 1 : !listed[k]) {
      t.dims.push_back(x.dims[k]);
    } else if (x.dims[k] != 1) {
      L.fail(n, "axis " + std::to_string(k) + " has size " + std::to_string(x.dims[k]) + ", not 1");
    }
  }
}

}  // namespace

bool fold_constant(Lowerer& L, const onnx::NodeProto& n, int out, Value& result) {
  const std::string& op = n.op_type();
  static const char* const kFoldable[] = {"Constant", "Shape", "Cast", "Slice", "Gather", "Concat",
                                          "Unsqueeze", "Squeeze", "Reshape", "ConstantOfShape", "ReduceProd"};
  if (std::none_of(std::begin(kFoldable), std::end(kFoldable), [&](const char* s) { return op == s; })) return false;
  if (out != 0) return false;
  Tensor t;
  if (op == "Constant") {
    fold_constant_node(L, n, t);
  } else if (op == "Shape") {
    if (!L.has_input(n, 0)) L.fail(n, "input 0 is missing");
    fold_shape(L, n, t);
  } else if (op == "Concat") {
    if (!fold_concat(L, n, t)) return false;
  } else if (op == "ConstantOfShape") {
    const Tensor* shape = const_input(L, n, 0);
    if (!shape || shape->is_float) return false;
    int64_t count = 1;
    for (int64_t d : shape->i) {
      if (d < 0 || d > kMaxFoldElements || (count *= d) > kMaxFoldElements) L.fail(n, "shape too large to fold");
    }
    Tensor fill = from_values({}, true, {0.0});
    if (const auto* v = L.attr(n, "value")) fill = decode_tensor(v->t(), L.source(), "ConstantOfShape value");
    if (fill.size() != 1) L.fail(n, "value must hold one element");
    t = from_values(shape->i, fill.is_float, std::vector<double>(static_cast<size_t>(count), fill.at(0)));
  } else {
    const Tensor* x = const_input(L, n, 0);
    if (x == nullptr || x->size() > kMaxFoldElements) return false;
    if (op == "Cast") {
      const int64_t to = L.attr_i(n, "to", 1);
      const bool f = to == 1 || to == 10 || to == 11 || to == 16;
      std::vector<double> v = values(*x);
      if (to == 9) for (double& e : v) e = e != 0.0;
      t = from_values(x->dims, f, v);
    } else if (op == "ReduceProd") {
      // The element count tf2onnx computes from a Shape: a 1-D input reduced to one value.
      if (x->dims.size() != 1 || L.has_input(n, 1)) return false;
      double p = 1;
      for (double v : values(*x)) p *= v;
      t = from_values(L.attr_i(n, "keepdims", 1) ? std::vector<int64_t>{1} : std::vector<int64_t>{}, x->is_float, {p});
    } else if (op == "Slice") {
      if (!fold_slice(L, n, *x, t)) return false;
    } else if (op == "Gather") {
      if (!fold_gather(L, n, *x, t)) return false;
    } else if (op == "Reshape") {  // the data stays (tf2onnx reshapes Keras' gamma and beta)
      const Tensor* shape = const_input(L, n, 1);
      if (!shape || shape->is_float) return false;
      std::vector<int64_t> dims = shape->i;
      int64_t known = 1;
      int infer = -1;
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == 0 && L.attr_i(n, "allowzero", 0) == 0) {
          if (k >= x->dims.size()) L.fail(n, "shape copies a dimension the input does not have");
          dims[k] = x->dims[k];
        }
        if (dims[k] == -1 && infer < 0) infer = static_cast<int>(k);
        else if (dims[k] < 0 || dims[k] > kMaxFoldElements || (known *= std::max<int64_t>(dims[k], 1)) > kMaxFoldElements) L.fail(n, "invalid shape");
      }
      if (infer >= 0) {
        if (known == 0 || x->size() % known != 0) L.fail(n, "cannot infer the -1 dimension");
        dims[static_cast<size_t>(infer)] = x->size() / known;
      } else if (known != x->size()) {
        L.fail(n, "cannot reshape " + std::to_string(x->size()) + " values to the shape");
      }
      t = *x;
      t.dims = dims;
    } else {  // Unsqueeze, Squeeze: the data stays, the dims change
      std::vector<int64_t> axes = L.attr_ints(n, "axes");
      if (const Tensor* a = const_input(L, n, 1); a && !a->is_float) axes = a->i;
      fold_squeeze(L, n, *x, axes, op == "Unsqueeze", t);
    }
  }
  result = Value{};
  result.is_const = true;
  result.c = std::move(t);
  return true;
}

}  // namespace tickinfer::formats::onnx_import
