// CellReader (onnx_loop_cell.hpp): linear forms of a Loop body's values.
#include "formats/onnx/onnx_loop_cell.hpp"

#include <algorithm>

namespace tickinfer::formats::onnx_import {

Linear Linear::columns(int c0, int c1) const {
  Linear r = *this;
  r.cols = c1 - c0;
  for (int s = 0; s < 3; ++s) {
    if (w[s].empty()) continue;
    r.w[s].clear();
    for (int i = 0; i < rows[s]; ++i) {
      const auto row = w[s].begin() + static_cast<std::ptrdiff_t>(i) * cols;
      r.w[s].insert(r.w[s].end(), row + c0, row + c1);
    }
  }
  r.b.assign(b.begin() + c0, b.begin() + c1);
  return r;
}

namespace {

// [rows, cols] row-major transposed.
std::vector<float> transposed(const std::vector<float>& m, int rows, int cols) {
  std::vector<float> t(m.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[static_cast<size_t>(j) * rows + i] = m[static_cast<size_t>(i) * cols + j];
  return t;
}

}  // namespace

std::string CellReader::op_of(const std::string& name) const {
  const onnx::NodeProto* p = b_.producer(b_.skip_identity(name));
  return p ? p->op_type() : std::string("an input");
}

bool CellReader::is_one(const std::string& name) const {
  const std::optional<Tensor> c = b_.constant(b_.skip_identity(name));
  return c && c->size() == 1 && c->at(0) == 1.0;
}

bool CellReader::is_linear_op(const std::string& name) const {
  const std::string op = op_of(name);
  return op == "MatMul" || op == "Gemm" || op == "Slice" || op == "Split" || op == "Add" || op == "Squeeze";
}

std::array<std::string, 2> CellReader::operands(const std::string& name, const char* op, const std::string& what) const {
  const onnx::NodeProto* p = b_.made(name, op);
  if (!p || p->input_size() != 2) b_.refuse(what + " is " + op_of(name) + " where " + op + " was expected");
  return {b_.skip_identity(p->input(0)), b_.skip_identity(p->input(1))};
}

// The left operand of a product: the sequence's step, the state, or r * state (and its r).
std::pair<Source, std::string> CellReader::source(const std::string& name) {
  const std::string s = b_.skip_identity(name);
  if (const onnx::NodeProto* gth = b_.made(s, "Gather")) {
    if (b_.L.attr_i(*gth, "axis", 0) != 0 || gth->input_size() != 2) b_.refuse("the sequence is not read one step at a time");
    const std::string x = gth->input(0), idx = b_.skip_identity(gth->input(1));
    if (b_.producer(x) || b_.input_index(x) >= 0) b_.refuse("the sequence it reads is computed in the body");
    if ((!x_name.empty() && x != x_name) || (!index_name.empty() && idx != index_name)) {
      b_.refuse("it reads more than one sequence or index");
    }
    x_name = x, index_name = idx;
    return {kX, ""};
  }
  if (b_.input_index(s) >= 2) {
    if (h_name.empty()) h_name = s;  // the first carried value a projection reads is h
    if (s != h_name) b_.refuse("a gate reads a carried value other than the state");
    return {kH, ""};
  }
  if (b_.made(s, "Mul")) {
    const auto ops = operands(s, "Mul", "a product's left operand");
    const int k = ops[0] == h_name ? 0 : ops[1] == h_name ? 1 : -1;
    if (k < 0) b_.refuse("a projection reads a product that is not r * h");
    return {kResetH, ops[1 - k]};
  }
  b_.refuse("a projection reads " + op_of(s) + " (neither the sequence's step nor the state)");
}

Linear CellReader::linear(const std::string& raw, int depth) {
  if (depth > 16) b_.refuse("a projection is nested too deeply");
  const std::string name = b_.skip_identity(raw);
  const onnx::NodeProto* p = b_.producer(name);
  if (p == nullptr) b_.refuse("'" + name + "' is read where a projection was expected");
  const std::string& op = p->op_type();
  if (op == "MatMul" || op == "Gemm") {
    if (p->input_size() < 2) b_.refuse("a " + op + " lacks an operand");
    std::optional<Tensor> w = b_.constant(p->input(1));
    if (!w || !w->is_float || w->dims.size() != 2) b_.refuse("a " + op + "'s right operand is not a constant matrix");
    int K = static_cast<int>(w->dims[0]), N = static_cast<int>(w->dims[1]);
    if (op == "Gemm") {
      if (b_.L.attr_i(*p, "transA", 0) != 0 || b_.L.attr_f(*p, "alpha", 1.0f) != 1.0f || b_.L.attr_f(*p, "beta", 1.0f) != 1.0f) {
        b_.refuse("a Gemm with transA, alpha or beta");
      }
      if (b_.L.attr_i(*p, "transB", 0) != 0) {
        w->f = transposed(w->f, K, N);
        std::swap(K, N);
      }
    }
    const auto [s, reset] = source(p->input(0));
    Linear r;
    r.cols = N;
    r.rows[s] = K;
    r.w[s] = std::move(w->f);
    r.reset = reset;
    r.b.assign(static_cast<size_t>(N), 0.0f);
    if (op == "Gemm" && p->input_size() > 2 && !p->input(2).empty()) {  // + C: a bias or the state's product
      if (const std::optional<Tensor> c = b_.constant(p->input(2))) {
        if (!c->is_float || c->size() != N) b_.refuse("a Gemm's C does not have one value per column");
        for (int j = 0; j < N; ++j) r.b[j] += c->f[j];
        return r;
      }
      Linear other = linear(p->input(2), depth + 1);
      if (other.cols != N) b_.refuse("a Gemm's C is not as wide as its product");
      for (int s2 = 0; s2 < 3; ++s2) {
        if (!other.has(static_cast<Source>(s2))) continue;
        if (r.has(static_cast<Source>(s2))) b_.refuse("a Gemm adds a second product of the same source");
        r.w[s2] = std::move(other.w[s2]), r.rows[s2] = other.rows[s2];
        if (s2 == kResetH) r.reset = other.reset;
      }
      for (int j = 0; j < N; ++j) r.b[j] += other.b[j];
    }
    return r;
  }
  if (op == "Add" && p->input_size() == 2) {
    for (int k = 0; k < 2; ++k) {
      const std::optional<Tensor> c = b_.constant(p->input(k));
      if (!c) continue;
      Linear r = linear(p->input(1 - k), depth + 1);
      const bool row = c->dims.size() == 1 || (c->dims.size() == 2 && c->dims[0] == 1);
      if (!c->is_float || !row || c->size() != r.cols) b_.refuse("a bias does not have one value per column");
      for (int j = 0; j < r.cols; ++j) r.b[j] += c->f[j];
      return r;
    }
    Linear a = linear(p->input(0), depth + 1), c = linear(p->input(1), depth + 1);
    if (a.cols != c.cols) b_.refuse("a sum of projections of different widths");
    for (int s = 0; s < 3; ++s) {
      if (!c.has(static_cast<Source>(s))) continue;
      if (a.has(static_cast<Source>(s))) {
        if (a.rows[s] != c.rows[s] || (s == kResetH && a.reset != c.reset)) b_.refuse("a sum of mismatched projections");
        for (size_t k = 0; k < a.w[s].size(); ++k) a.w[s][k] += c.w[s][k];
      } else {
        a.w[s] = std::move(c.w[s]), a.rows[s] = c.rows[s];
        if (s == kResetH) a.reset = c.reset;
      }
    }
    for (int j = 0; j < a.cols; ++j) a.b[j] += c.b[j];
    return a;
  }
  if (op == "Squeeze" && p->input_size() >= 1) {  // [1, n] -> [n]: the batch axis of one row
    std::vector<int64_t> axes = b_.L.attr_ints(*p, "axes");
    if (axes.empty() && p->input_size() > 1 && !p->input(1).empty()) {
      const std::optional<Tensor> a = b_.constant(p->input(1));
      if (!a || a->is_float) b_.refuse("a Squeeze's axes are not constant");
      axes = a->i;
    }
    if (axes.size() > 1 || (axes.size() == 1 && axes[0] != 0)) b_.refuse("a Squeeze of an axis other than the batch");
    return linear(p->input(0), depth + 1);
  }
  if (op == "Split" && p->input_size() >= 1) {
    Linear r = linear(p->input(0), depth + 1);
    const int64_t axis = b_.L.attr_i(*p, "axis", 0);
    if (axis != 1 && axis != -1) b_.refuse("a Split is not along the columns");
    std::vector<int64_t> sizes = b_.L.attr_ints(*p, "split");
    if (sizes.empty() && p->input_size() > 1 && !p->input(1).empty()) {
      const std::optional<Tensor> s = b_.constant(p->input(1));
      if (!s || s->is_float) b_.refuse("a Split's sizes are not constant");
      sizes = s->i;
    }
    if (sizes.empty()) sizes.assign(static_cast<size_t>(p->output_size()), r.cols / std::max(p->output_size(), 1));
    if (std::any_of(sizes.begin(), sizes.end(), [](int64_t z) { return z < 0; })) b_.refuse("a Split has a negative size");
    int64_t from = 0;
    for (int j = 0; j < p->output_size() && j < static_cast<int>(sizes.size()); ++j) {
      if (p->output(j) == name && from + sizes[j] <= r.cols) {
        return r.columns(static_cast<int>(from), static_cast<int>(from + sizes[j]));
      }
      from += sizes[j];
    }
    b_.refuse("a Split's sizes do not cover its input");
  }
  if (op == "Slice" && p->input_size() >= 3) {
    Linear r = linear(p->input(0), depth + 1);
    const auto ints = [&](int k) {
      const std::optional<Tensor> t = k < p->input_size() && !p->input(k).empty() ? b_.constant(p->input(k)) : std::nullopt;
      if (!t || t->is_float) b_.refuse("a Slice's bounds are not constant");
      return t->i;
    };
    const std::vector<int64_t> s = ints(1), e = ints(2);
    std::vector<int64_t> axes = p->input_size() > 3 && !p->input(3).empty() ? ints(3) : std::vector<int64_t>{};
    if (axes.empty()) {
      for (size_t a = 0; a < s.size(); ++a) axes.push_back(static_cast<int64_t>(a));
    }
    if (p->input_size() > 4 && !p->input(4).empty()) {
      for (int64_t st : ints(4)) {
        if (st != 1) b_.refuse("a Slice has a step other than 1");
      }
    }
    if (s.size() != e.size() || s.size() != axes.size()) b_.refuse("a Slice's bounds do not match its axes");
    int c0 = 0, c1 = r.cols;
    for (size_t j = 0; j < s.size(); ++j) {
      const int64_t a = axes[j] < 0 ? axes[j] + 2 : axes[j];
      const auto clampc = [&](int64_t x) { return static_cast<int>(std::clamp<int64_t>(x < 0 ? x + r.cols : x, 0, r.cols)); };
      if (a == 0) {
        if (s[j] != 0 || e[j] < 1) b_.refuse("a Slice cuts the batch");
      } else if (a == 1) {
        c0 = clampc(s[j]), c1 = std::max(c0, clampc(e[j]));
      } else {
        b_.refuse("a Slice of a projection is along a third axis");
      }
    }
    return r.columns(c0, c1);
  }
  b_.refuse("'" + name + "' (" + op + ") is not a column range of a projection");
}

}  // namespace tickinfer::formats::onnx_import
