// LoopBody (onnx_loop_body.hpp): the body's values, its constants and the trip-count check.
#include "formats/onnx/onnx_loop_body.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tickinfer/error.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

constexpr int kMaxDepth = 64;      // body constants and counter programs are a few nodes deep
constexpr size_t kMaxCounter = 64; // a counter program's values are shapes and scalars
constexpr int kMaxSteps = 1 << 20;  // the check walks every iteration

int64_t clamp_index(int64_t x, int64_t dim) {
  if (x < 0) x += dim;
  return std::clamp<int64_t>(x, 0, dim);
}

// Elements [b, e) of axis `axis` of t.
Tensor slice_axis(const Tensor& t, size_t axis, int64_t b, int64_t e) {
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= t.dims[a];
  for (size_t a = axis + 1; a < t.dims.size(); ++a) inner *= t.dims[a];
  const int64_t n = t.dims[axis];
  Tensor r;
  r.is_float = t.is_float;
  r.dims = t.dims;
  r.dims[axis] = e - b;
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t from = (o * n + b) * inner, to = (o * n + e) * inner;
    if (t.is_float) r.f.insert(r.f.end(), t.f.begin() + from, t.f.begin() + to);
    else r.i.insert(r.i.end(), t.i.begin() + from, t.i.begin() + to);
  }
  return r;
}

std::vector<int64_t> ints_of(const std::optional<Tensor>& t) {
  if (!t || t->is_float) return {};
  return t->i;
}

// Why a value is not part of a counter program (the refusal says which).
struct NotCounter {
  std::string why;
};
using Nums = std::vector<double>;

// Evaluates the integer programs around a Loop: its trip count, its initial condition, its
// counters and its body's condition. `len` stands for the window length where a shape is free.
class CounterProgram {
 public:
  CounterProgram(const LoopBody& b, int len) : b_(b), len_(len) {}
  std::unordered_map<std::string, Nums> env;  // body inputs bound for this iteration

  Nums eval(const std::string& name, int depth = 0) const {
    if (depth > kMaxDepth) throw NotCounter{"too deep"};
    if (auto it = env.find(name); it != env.end()) return it->second;
    if (const onnx::NodeProto* p = b_.producer(name)) return node(*p, name, depth);
    if (b_.input_index(name) >= 0) throw NotCounter{"'" + name + "' is not a counter"};
    if (auto c = b_.constant(name)) return numbers(*c, name);
    if (const onnx::NodeProto* p = b_.L.producer(name)) return node(*p, name, depth);
    throw NotCounter{"'" + name + "' is a graph input"};
  }

 private:
  static Nums numbers(const Tensor& t, const std::string& name) {
    if (static_cast<size_t>(t.size()) > kMaxCounter) throw NotCounter{"'" + name + "' is not a counter"};
    Nums v;
    for (int64_t k = 0; k < t.size(); ++k) v.push_back(t.at(k));
    if (!std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); })) throw NotCounter{"'" + name + "' is not finite"};
    return v;
  }

  Nums in(const onnx::NodeProto& n, int k, int depth) const {
    if (k >= n.input_size() || n.input(k).empty()) throw NotCounter{n.op_type() + " without input " + std::to_string(k)};
    return eval(n.input(k), depth + 1);
  }

  Nums node(const onnx::NodeProto& n, const std::string& name, int depth) const {
    const std::string& op = n.op_type();
    if (op == "Identity" || op == "Squeeze" || op == "Unsqueeze" || op == "Reshape" || op == "Flatten") {
      return in(n, 0, depth);
    }
    if (op == "Constant") {
      if (auto c = b_.constant(name)) return numbers(*c, name);
      throw NotCounter{"an unreadable Constant"};
    }
    if (op == "Cast") {
      Nums v = in(n, 0, depth);
      const int64_t to = b_.L.attr_i(n, "to", 0);
      for (double& x : v) {
        if (to == 9) x = x != 0;                   // BOOL
        else if (to != 1 && to != 10 && to != 11) x = std::trunc(x);  // integer types
      }
      return v;
    }
    if (op == "Shape") {
      if (n.input_size() < 1) throw NotCounter{"a Shape without input"};
      const std::string& x = n.input(0);
      if (b_.producer(x) || b_.input_index(x) >= 0) throw NotCounter{"the Shape of a body value"};
      Nums v;
      for (int d : b_.L.dims(b_.L.value(x))) v.push_back(d < 0 ? len_ : d);
      const int64_t r = static_cast<int64_t>(v.size());
      const int64_t s = clamp_index(b_.L.attr_i(n, "start", 0), r), e = clamp_index(b_.L.attr_i(n, "end", r), r);
      return Nums(v.begin() + s, v.begin() + std::max(s, e));
    }
    if (op == "Slice" || op == "Gather") return pick(n, depth);
    if (op == "Concat") {
      Nums v;
      for (int k = 0; k < n.input_size(); ++k) {
        Nums p = in(n, k, depth);
        v.insert(v.end(), p.begin(), p.end());
      }
      return v;
    }
    if (op == "Not") {
      Nums v = in(n, 0, depth);
      for (double& x : v) x = x == 0;
      return v;
    }
    return binary(n, depth);
  }

  // Slice / Gather of a 1-D counter value.
  Nums pick(const onnx::NodeProto& n, int depth) const {
    const Nums v = in(n, 0, depth);
    const int64_t dim = static_cast<int64_t>(v.size());
    if (n.op_type() == "Gather") {
      const Nums k = in(n, 1, depth);
      if (k.size() != 1 || b_.L.attr_i(n, "axis", 0) != 0) throw NotCounter{"a Gather of more than one element"};
      if (!(std::abs(k[0]) <= static_cast<double>(dim))) throw NotCounter{"a Gather out of range"};
      const int64_t at = static_cast<int64_t>(k[0]) < 0 ? static_cast<int64_t>(k[0]) + dim : static_cast<int64_t>(k[0]);
      if (at < 0 || at >= dim) throw NotCounter{"a Gather out of range"};
      return {v[static_cast<size_t>(at)]};
    }
    const Nums s = in(n, 1, depth), e = in(n, 2, depth);
    if (s.size() != 1 || e.size() != 1) throw NotCounter{"a Slice along more than one axis"};
    if (n.input_size() > 3 && !n.input(3).empty() && in(n, 3, depth) != Nums{0} && in(n, 3, depth) != Nums{-1}) {
      throw NotCounter{"a Slice along another axis"};
    }
    if (n.input_size() > 4 && !n.input(4).empty() && in(n, 4, depth) != Nums{1}) throw NotCounter{"a strided Slice"};
    const auto bound = [dim](double x) -> int64_t {
      if (std::isnan(x)) throw NotCounter{"a Slice bound that is not a number"};
      if (x >= static_cast<double>(dim)) return dim;
      if (x <= -static_cast<double>(dim)) return 0;
      return clamp_index(static_cast<int64_t>(x), dim);
    };
    const int64_t b = bound(s[0]), en = bound(e[0]);
    return Nums(v.begin() + b, v.begin() + std::max(b, en));
  }

  Nums binary(const onnx::NodeProto& n, int depth) const {
    const std::string& op = n.op_type();
    static const char* const kOps[] = {"Add", "Sub", "Mul", "Min", "Max", "Less", "Greater", "LessOrEqual",
                                       "GreaterOrEqual", "Equal", "And", "Or"};
    if (std::find_if(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; }) == std::end(kOps)) {
      throw NotCounter{"operator " + op};
    }
    const Nums a = in(n, 0, depth), c = in(n, 1, depth);
    if (a.size() != c.size() && a.size() != 1 && c.size() != 1) throw NotCounter{op + " of mismatched sizes"};
    Nums r(std::max(a.size(), c.size()));
    for (size_t k = 0; k < r.size(); ++k) {
      const double x = a[a.size() == 1 ? 0 : k], y = c[c.size() == 1 ? 0 : k];
      if (op == "Add") r[k] = x + y;
      else if (op == "Sub") r[k] = x - y;
      else if (op == "Mul") r[k] = x * y;
      else if (op == "Min") r[k] = std::min(x, y);
      else if (op == "Max") r[k] = std::max(x, y);
      else if (op == "Less") r[k] = x < y;
      else if (op == "Greater") r[k] = x > y;
      else if (op == "LessOrEqual") r[k] = x <= y;
      else if (op == "GreaterOrEqual") r[k] = x >= y;
      else if (op == "Equal") r[k] = x == y;
      else if (op == "And") r[k] = x != 0 && y != 0;
      else r[k] = x != 0 || y != 0;
    }
    return r;
  }

  const LoopBody& b_;
  int len_;
};

}  // namespace

LoopBody::LoopBody(Lowerer& lowerer, const onnx::NodeProto& n) : L(lowerer), loop(n), g([&]() -> const onnx::GraphProto& {
  const auto* body = lowerer.attr(n, "body");
  if (body == nullptr || !body->has_g()) lowerer.fail(n, "has no body graph");
  return body->g();
}()) {
  carried = n.input_size() - 2;
  if (carried < 1) refuse("it carries no values");
  if (g.input_size() != carried + 2) refuse("its body takes " + std::to_string(g.input_size()) + " inputs, not " + std::to_string(carried + 2));
  if (g.output_size() < carried + 1) refuse("its body returns fewer values than it carries");
  for (const auto& t : g.initializer()) {
    inits_.emplace(t.name(), decode_tensor(t, L.source(), "body initializer '" + t.name() + "'"));
  }
  for (int k = 0; k < g.input_size(); ++k) inputs_.emplace(g.input(k).name(), k);
  for (const auto& node : g.node()) {
    for (int k = 0; k < node.output_size(); ++k) {
      if (!node.output(k).empty() && !producers_.emplace(node.output(k), std::make_pair(&node, k)).second) {
        refuse("its body produces '" + node.output(k) + "' twice");
      }
    }
  }
}

void LoopBody::refuse(const std::string& why) const {
  L.fail(loop, "not a Keras GRU or LSTM loop (tf2onnx's form of a recurrent layer it could not rewrite): " + why);
}

const onnx::NodeProto* LoopBody::producer(const std::string& name) const {
  auto it = producers_.find(name);
  return it == producers_.end() ? nullptr : it->second.first;
}

std::string LoopBody::skip_identity(std::string name) const {
  for (int k = 0; k < kMaxDepth; ++k) {
    const onnx::NodeProto* p = producer(name);
    if (p == nullptr || p->op_type() != "Identity" || p->input_size() < 1) return name;
    name = p->input(0);
  }
  return name;
}

const onnx::NodeProto* LoopBody::made(const std::string& name, const char* op) const {
  const onnx::NodeProto* p = producer(skip_identity(name));
  return p != nullptr && p->op_type() == op && p->domain().empty() ? p : nullptr;
}

int LoopBody::input_index(const std::string& name) const {
  auto it = inputs_.find(name);
  return it == inputs_.end() ? -1 : it->second;
}

std::optional<Tensor> LoopBody::constant(const std::string& name, int depth) const {
  if (depth > kMaxDepth) return std::nullopt;
  if (auto it = inits_.find(name); it != inits_.end()) return it->second;
  const int k = input_index(name);
  if (k >= 2) {  // carried: constant when passed through unchanged from a constant start
    if (g.output(k - 1).name() != name || !L.has_input(loop, k)) return std::nullopt;
    const std::string& outer = loop.input(k);
    const onnx::NodeProto* op = L.producer(outer);
    if (L.is_initializer(outer) || (op && op->op_type() == "Constant")) return L.value(outer).c;
    return std::nullopt;
  }
  if (k >= 0) return std::nullopt;
  const onnx::NodeProto* p = producer(name);
  if (p == nullptr) {  // the outer scope
    const onnx::NodeProto* op = L.producer(name);
    if (L.is_initializer(name) || (op && op->op_type() == "Constant")) return L.value(name).c;
    return std::nullopt;
  }
  const std::string& op = p->op_type();
  if (op == "Constant") {
    const auto* v = L.attr(*p, "value");
    if (v == nullptr) return std::nullopt;
    return decode_tensor(v->t(), L.source(), "body Constant '" + p->name() + "'");
  }
  if (p->input_size() < 1) return std::nullopt;
  std::optional<Tensor> x = constant(p->input(0), depth + 1);
  if (!x) return std::nullopt;
  if (op == "Identity") return x;
  if (op == "Squeeze") {
    std::vector<int64_t> axes = L.attr_ints(*p, "axes");
    if (axes.empty() && p->input_size() > 1) axes = ints_of(constant(p->input(1), depth + 1));
    std::vector<int64_t> dims;
    const int64_t r = static_cast<int64_t>(x->dims.size());
    for (int64_t a = 0; a < r; ++a) {
      const bool named = std::find_if(axes.begin(), axes.end(), [&](int64_t s) { return (s < 0 ? s + r : s) == a; }) != axes.end();
      if ((named || axes.empty()) && x->dims[a] == 1) continue;
      if (named) return std::nullopt;
      dims.push_back(x->dims[a]);
    }
    x->dims = dims;
    return x;
  }
  if (op == "Slice") {
    if (L.has_attr(*p, "starts")) return std::nullopt;  // opset < 10: not written by current exporters
    const std::vector<int64_t> s = ints_of(p->input_size() > 1 ? constant(p->input(1), depth + 1) : std::nullopt);
    const std::vector<int64_t> e = ints_of(p->input_size() > 2 ? constant(p->input(2), depth + 1) : std::nullopt);
    std::vector<int64_t> axes = p->input_size() > 3 && !p->input(3).empty() ? ints_of(constant(p->input(3), depth + 1)) : std::vector<int64_t>{};
    if (axes.empty()) for (size_t a = 0; a < s.size(); ++a) axes.push_back(static_cast<int64_t>(a));
    if (p->input_size() > 4 && !p->input(4).empty()) {
      for (int64_t st : ints_of(constant(p->input(4), depth + 1))) if (st != 1) return std::nullopt;
    }
    if (s.empty() || s.size() != e.size() || s.size() != axes.size()) return std::nullopt;
    const int64_t r = static_cast<int64_t>(x->dims.size());
    for (size_t j = 0; j < s.size(); ++j) {
      const int64_t a = axes[j] < 0 ? axes[j] + r : axes[j];
      if (a < 0 || a >= r) return std::nullopt;
      const int64_t b = clamp_index(s[j], x->dims[a]), en = clamp_index(e[j], x->dims[a]);
      *x = slice_axis(*x, static_cast<size_t>(a), b, std::max(b, en));
    }
    return x;
  }
  if (op == "Split") {
    const int64_t r = static_cast<int64_t>(x->dims.size());
    int64_t a = L.attr_i(*p, "axis", 0);
    if (a < 0) a += r;
    if (a < 0 || a >= r) return std::nullopt;
    std::vector<int64_t> sizes = L.attr_ints(*p, "split");
    if (sizes.empty() && p->input_size() > 1 && !p->input(1).empty()) sizes = ints_of(constant(p->input(1), depth + 1));
    if (sizes.empty()) sizes.assign(static_cast<size_t>(p->output_size()), x->dims[a] / std::max(p->output_size(), 1));
    if (std::any_of(sizes.begin(), sizes.end(), [](int64_t z) { return z < 0; })) return std::nullopt;
    int64_t from = 0;
    for (int j = 0; j < p->output_size() && j < static_cast<int>(sizes.size()); ++j) {
      if (p->output(j) == name) return from + sizes[j] <= x->dims[a] ? std::optional(slice_axis(*x, a, from, from + sizes[j])) : std::nullopt;
      from += sizes[j];
    }
  }
  return std::nullopt;
}

void LoopBody::check_runs_once_per_step(const std::string& index, int steps) const {
  std::vector<int> lengths;
  if (steps > kMaxSteps) refuse("its sequence is longer than " + std::to_string(kMaxSteps) + " steps");
  if (steps >= 0) {
    lengths = {steps};
  } else {
    for (int t = 1; t <= 64; ++t) lengths.push_back(t);
    lengths.insert(lengths.end(), {100, 128, 256, 1000});
  }
  for (int len : lengths) {
    CounterProgram prog(*this, len);
    const auto scalar = [&](const std::string& name, const std::string& what) -> double {
      try {
        const Nums v = prog.eval(name);
        if (v.size() != 1) refuse(what + " is not a scalar");
        return v[0];
      } catch (const NotCounter& e) {
        refuse(what + " is not a counter the lift can follow (" + e.why + ")");
      }
    };
    const double trips = L.has_input(loop, 0) ? scalar(loop.input(0), "the trip count") : std::numeric_limits<double>::infinity();
    bool cond = L.has_input(loop, 1) ? scalar(loop.input(1), "the initial condition") != 0 : true;
    std::vector<std::optional<Nums>> state(static_cast<size_t>(carried));
    for (int k = 0; k < carried; ++k) {
      try {
        if (L.has_input(loop, k + 2)) state[k] = prog.eval(loop.input(k + 2));
      } catch (const NotCounter&) {
      }
    }
    int i = 0;
    for (; i < trips && cond; ++i) {
      if (i >= len) refuse("it runs more iterations than the sequence's " + std::to_string(len) + " steps");
      prog.env.clear();
      prog.env[g.input(0).name()] = {static_cast<double>(i)};
      prog.env[g.input(1).name()] = {cond ? 1.0 : 0.0};
      for (int k = 0; k < carried; ++k) {
        if (state[k]) prog.env[g.input(k + 2).name()] = *state[k];
      }
      const double at = scalar(index, "the step it reads");
      if (at != i) {
        const bool whole = std::abs(at) < 1e15 && at == std::trunc(at);
        refuse("iteration " + std::to_string(i) + " reads step " + (whole ? std::to_string(static_cast<long long>(at)) : std::string("that is not a step")) + " of the sequence");
      }
      cond = scalar(g.output(0).name(), "the body's condition") != 0;
      for (int k = 0; k < carried; ++k) {
        try {
          if (state[k]) state[k] = prog.eval(g.output(k + 1).name());
        } catch (const NotCounter&) {
          state[k].reset();
        }
      }
    }
    if (i != len) refuse("it runs " + std::to_string(i) + " iterations over a " + std::to_string(len) + "-step sequence");
  }
}

}  // namespace tickinfer::formats::onnx_import
