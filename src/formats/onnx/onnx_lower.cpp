#include "formats/onnx/onnx_lower.hpp"

#include <algorithm>
#include <utility>

#include "formats/attention_fusion.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// Deeper dependency chains are refused rather than risking the stack on hostile input; real
// exported models are a few hundred nodes deep at most.
constexpr size_t kMaxDepth = 2000;

int window_length(int in, int span, int stride, Padding p) {
  if (in < 0) return -1;
  if (p == Padding::Same) return (in + stride - 1) / stride;
  if (p == Padding::Causal) return (in - 1) / stride + 1;
  return in < span ? 0 : (in - span) / stride + 1;
}

// The output shape of an engine node the lowering builds; -1 (unknown length) propagates.
// infer_shapes validates the whole graph again once the window length is known.
Shape node_shape(const Graph& g, const Node& n) {
  if (n.inputs.empty()) return n.shape;
  const Shape& in = g.nodes[n.inputs[0]].shape;
  switch (n.kind) {
    case OpKind::Dense: { Shape s = in; s.back() = n.units; return s; }
    case OpKind::LSTM:
    case OpKind::GRU:
      if (n.return_state) return {n.return_sequences ? (in[0] < 0 ? -1 : in[0] + 1) : 2, n.units};
      return n.return_sequences ? Shape{in[0], n.units} : Shape{n.units};
    case OpKind::SliceRows: {
      // Rows counted from the end keep their count when the length is unknown.
      int rows = -1;
      if (in[0] >= 0) {
        const auto [begin, end] = slice_rows_bounds(n, in[0]);
        rows = static_cast<int>(end - begin);
      } else if ((n.slice_begin < 0 && n.slice_end <= 0) || (n.slice_begin >= 0 && n.slice_end > 0)) {
        rows = std::max(0, n.slice_end - n.slice_begin);  // both from the end, or both from the start
      }
      Shape s = in;
      s[0] = rows;
      if (!n.keepdims && rows == 1) s.erase(s.begin());
      return s;
    }
    case OpKind::Conv1D:
      return {window_length(in[0], (n.kernel_size - 1) * n.dilation + 1, n.stride, n.padding), n.units};
    case OpKind::MaxPool1D:
    case OpKind::AvgPool1D: return {window_length(in[0], n.pool_size, n.pool_stride, n.padding), in[1]};
    case OpKind::Conv2D:
    case OpKind::DepthwiseConv2D:
      return {window_length(in[0], (n.kernel_size - 1) * n.dilation + 1, n.stride, n.padding),
              window_length(in[1], (n.kernel_w - 1) * n.dilation_w + 1, n.stride_w, n.padding),
              n.kind == OpKind::Conv2D ? n.units : in[2] * n.depth_multiplier};
    case OpKind::MaxPool2D:
    case OpKind::AvgPool2D:
      return {window_length(in[0], n.pool_size, n.pool_stride, n.padding),
              window_length(in[1], n.pool_w, n.pool_stride_w, n.padding), in[2]};
    case OpKind::Pad: {
      Shape s = in;
      for (size_t a = 0; a < s.size() && 2 * a + 1 < n.pads.size(); ++a) {
        if (s[a] >= 0) s[a] += n.pads[2 * a] + n.pads[2 * a + 1];
      }
      return s;
    }
    case OpKind::GlobalAvgPool1D:
    case OpKind::GlobalMaxPool1D: return n.keepdims ? Shape{1, in[1]} : Shape{in[1]};
    case OpKind::Flatten: {
      int64_t p = shape_size(in);
      return {p < 0 ? -1 : static_cast<int>(p)};
    }
    case OpKind::Reshape: {
      // A -1 in the target (a length left free so the graph holds for any window) is resolved
      // where the input's size is known.
      Shape s = n.target_shape;
      const auto free = std::find(s.begin(), s.end(), -1);
      const int64_t have = shape_size(in);
      int64_t rest = 1;
      for (int d : s) rest *= d == -1 ? 1 : d;
      if (free != s.end() && have >= 0 && rest > 0 && have % rest == 0) *free = static_cast<int>(have / rest);
      return s;
    }
    case OpKind::Permute: {
      Shape s;
      for (int p : n.permutation) s.push_back(in[p]);
      return s;
    }
    case OpKind::MatMul: {
      Shape s = in;
      s.back() = g.nodes[n.inputs[1]].shape.back();
      return s;
    }
    case OpKind::Concatenate: {
      Shape s = in;
      const int a = n.axis - 1;
      s[a] = 0;
      for (int i : n.inputs) {
        const int d = g.nodes[i].shape[a];
        s[a] = (s[a] < 0 || d < 0) ? -1 : s[a] + d;
      }
      return s;
    }
    default: return in;
  }
}

}  // namespace

Lowerer::Lowerer(const onnx::GraphProto& graph, std::map<std::string, Tensor> initializers, int64_t opset,
                 TensorSource src)
    : proto_(graph), inits_(std::move(initializers)), opset_(opset), src_(std::move(src)) {
  for (const auto& n : proto_.node()) {
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      if (!producers_.emplace(n.output(k), std::make_pair(&n, k)).second || inits_.count(n.output(k))) {
        throw Error(src_.label + ": value '" + n.output(k) + "' is produced twice (" + where(n) + ")");
      }
    }
    for (const auto& in : n.input()) {
      if (!in.empty()) ++uses_[in];
    }
  }
  for (const auto& o : proto_.output()) ++uses_[o.name()];
}

std::string Lowerer::where(const onnx::NodeProto& n) const {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

void Lowerer::fail(const onnx::NodeProto& n, const std::string& why) const {
  throw Error(src_.label + ": " + where(n) + ": " + why);
}

const onnx::NodeProto* Lowerer::producer(const std::string& name) const {
  auto it = producers_.find(name);
  return it == producers_.end() ? nullptr : it->second.first;
}

int Lowerer::uses(const std::string& name) const {
  auto it = uses_.find(name);
  return it == uses_.end() ? 0 : it->second;
}

bool Lowerer::has_input(const onnx::NodeProto& n, int input) const {
  return input < n.input_size() && !n.input(input).empty();
}

const Value& Lowerer::value(const std::string& name) {
  if (auto it = memo_.find(name); it != memo_.end()) return it->second;
  Value v;
  if (auto it = inits_.find(name); it != inits_.end()) {
    v.is_const = true;
    v.c = it->second;
  } else if (auto pit = producers_.find(name); pit != producers_.end()) {
    if (std::find(active_.begin(), active_.end(), name) != active_.end()) {
      throw Error(src_.label + ": value '" + name + "' depends on itself (the graph has a cycle)");
    }
    if (active_.size() >= kMaxDepth) {
      throw Error(src_.label + ": the graph is deeper than " + std::to_string(kMaxDepth) + " nodes");
    }
    active_.push_back(name);
    v = lower_output(*pit->second.first, pit->second.second);
    active_.pop_back();
  } else {
    const onnx::ValueInfoProto* vi = nullptr;
    for (const auto& in : proto_.input()) {
      if (in.name() == name) vi = &in;
    }
    if (vi == nullptr) throw Error(src_.label + ": value '" + name + "' is neither a graph input, an initializer nor a node output");
    v = make_input(*vi);
  }
  return memo_.emplace(name, std::move(v)).first->second;
}

const Value& Lowerer::runtime(const onnx::NodeProto& n, int input) {
  if (!has_input(n, input)) fail(n, "input " + std::to_string(input) + " is missing");
  const Value& v = value(n.input(input));
  if (v.is_const) fail(n, "input " + std::to_string(input) + " ('" + n.input(input) + "') is a constant where the engine needs a computed tensor");
  const std::string& op = n.op_type();
  if (op != "Transpose" && op != "Squeeze" && op != "Unsqueeze" && op != "Conv") require_unpadded(n, v);
  return v;
}

void Lowerer::require_unpadded(const onnx::NodeProto& n, const Value& v) const {
  if (v.padded()) fail(n, "the input is zero-padded by a Pad; only a Conv can take a padded input");
}

const Tensor& Lowerer::constant(const onnx::NodeProto& n, int input) {
  if (!has_input(n, input)) fail(n, "input " + std::to_string(input) + " is missing");
  const Value& v = value(n.input(input));
  if (!v.is_const) {
    fail(n, "input " + std::to_string(input) + " ('" + n.input(input) + "') must be a constant (an initializer), it is computed");
  }
  return v.c;
}

double Lowerer::scalar(const onnx::NodeProto& n, int input) {
  const Tensor& t = constant(n, input);
  if (t.size() != 1) fail(n, "input " + std::to_string(input) + " must hold exactly one value");
  return t.at(0);
}

Value Lowerer::make_input(const onnx::ValueInfoProto& vi) {
  const std::string ctx = src_.label + ": graph input '" + vi.name() + "'";
  if (!vi.type().has_tensor_type()) throw Error(ctx + ": not a tensor");
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() != 1) throw Error(ctx + ": element type " + std::string(dtype_name(tt.elem_type())) + " is not supported (only FLOAT)");
  if (!tt.has_shape() || tt.shape().dim_size() < 2) {
    throw Error(ctx + ": needs a shape of rank >= 2 (a batch axis first, then the features)");
  }
  const auto& d0 = tt.shape().dim(0);
  if (d0.has_dim_value() && d0.dim_value() != 1) {
    throw Error(ctx + ": the batch axis (axis 0) is fixed at " + std::to_string(d0.dim_value()) + "; only 1 or a symbolic batch is supported");
  }
  Node node;
  node.kind = OpKind::Input;
  node.name = vi.name();
  node.keras_class = "InputLayer";
  node.origin = "graph input '" + vi.name() + "'";
  for (int a = 1; a < tt.shape().dim_size(); ++a) {
    const auto& d = tt.shape().dim(a);
    if (d.has_dim_value() && (d.dim_value() < 1 || d.dim_value() > (int64_t{1} << 28))) {
      throw Error(ctx + ": dimension " + std::to_string(a) + " is " + std::to_string(d.dim_value()));
    }
    node.shape.push_back(d.has_dim_value() ? static_cast<int>(d.dim_value()) : -1);  // symbolic: a variable length
  }
  const int idx = static_cast<int>(graph_.nodes.size());
  graph_.nodes.push_back(std::move(node));
  graph_.inputs.push_back(idx);
  return view(idx, 1);
}

std::vector<int> Lowerer::dims(const Value& v) const {
  if (v.is_const) return std::vector<int>(v.c.dims.begin(), v.c.dims.end());
  std::vector<int> d;
  for (int a : v.axes) {
    int size = a == kUnit ? 1 : eshape(v.node)[a];
    if (a == 0 && size >= 0) size += v.pad_begin + v.pad_end;
    d.push_back(size);
  }
  return d;
}

bool Lowerer::in_order(const Value& v) const {
  int last = -1;
  for (int a : v.axes) {
    if (a == kUnit) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

int Lowerer::norm_axis(const onnx::NodeProto& n, int64_t axis, size_t rank) const {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) fail(n, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

int Lowerer::engine_axis(const onnx::NodeProto& n, const Value& v, int64_t axis) const {
  return v.axes[norm_axis(n, axis, v.axes.size())];
}

Value Lowerer::view(int node, int leading_units) const {
  Value v;
  v.node = node;
  v.axes.assign(static_cast<size_t>(leading_units), kUnit);
  for (size_t a = 0; a < eshape(node).size(); ++a) v.axes.push_back(static_cast<int>(a));
  return v;
}

int Lowerer::add(Node node, const onnx::NodeProto& src, const std::vector<int>& inputs) {
  std::string base = src.name().empty() ? src.op_type() : src.name();
  if (!node.name.empty()) base += "/" + node.name;
  const int k = name_count_[base]++;
  node.name = k == 0 ? base : base + "#" + std::to_string(k);
  if (node.keras_class.empty()) node.keras_class = src.op_type();
  if (!node.origin.empty()) node.origin += " + ";
  node.origin += src.op_type() + " '" + src.name() + "'";
  node.inputs = inputs;
  node.shape = node_shape(graph_, node);
  graph_.nodes.push_back(std::move(node));
  return static_cast<int>(graph_.nodes.size()) - 1;
}

int Lowerer::reshape(const onnx::NodeProto& n, const Value& v, const Shape& target) {
  const int from = in_engine_order(*this, n, v).node;
  if (eshape(from) == target) return from;
  // One free (window) length on each side with the same known remainder is one length.
  auto free_and_rest = [](const Shape& s) {
    int free = 0;
    int64_t rest = 1;
    for (int d : s) {
      if (d < 0) ++free;
      else rest *= d;
    }
    return std::pair{free, rest};
  };
  const auto [free_have, rest_have] = free_and_rest(eshape(from));
  const auto [free_want, rest_want] = free_and_rest(target);
  if (free_have > 1 || free_have != free_want || rest_have != rest_want) {
    fail(n, "cannot reshape " + shape_str(eshape(from)) + " to " + shape_str(target) + " (unknown or different sizes)");
  }
  Node r;
  r.kind = OpKind::Reshape;
  r.keras_class = "Reshape";
  r.target_shape = target;
  return add(std::move(r), n, {from});
}

// --- attributes ---

const onnx::AttributeProto* Lowerer::attr(const onnx::NodeProto& n, const char* name) const {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
bool Lowerer::has_attr(const onnx::NodeProto& n, const char* name) const { return attr(n, name) != nullptr; }

int64_t Lowerer::attr_i(const onnx::NodeProto& n, const char* name, int64_t def) const {
  const auto* a = attr(n, name);
  return a ? a->i() : def;
}
float Lowerer::attr_f(const onnx::NodeProto& n, const char* name, float def) const {
  const auto* a = attr(n, name);
  return a ? a->f() : def;
}
std::string Lowerer::attr_s(const onnx::NodeProto& n, const char* name, const std::string& def) const {
  const auto* a = attr(n, name);
  return a ? a->s() : def;
}
std::vector<int64_t> Lowerer::attr_ints(const onnx::NodeProto& n, const char* name) const {
  const auto* a = attr(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}
std::vector<std::string> Lowerer::attr_strings(const onnx::NodeProto& n, const char* name) const {
  const auto* a = attr(n, name);
  if (!a) return {};
  return {a->strings().begin(), a->strings().end()};
}

// --- dispatch ---

Value Lowerer::lower_output(const onnx::NodeProto& n, int out) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") {
    fail(n, "operator domain '" + n.domain() + "' is not supported (only the default ONNX domain)");
  }
  const std::string& op = n.op_type();
  if (op == "Identity" || (op == "Dropout" && out == 0)) {
    if (!has_input(n, 0)) fail(n, "input 0 is missing");
    return value(n.input(0));
  }
  Value result;
  if (fold_constant(*this, n, out, result)) return result;
  if (op == "Cast" && out == 0) {  // a computed tensor is FLOAT already (inputs are checked)
    if (attr_i(n, "to", 0) != 1) fail(n, "a computed tensor can only be cast to FLOAT");
    return runtime(n, 0);
  }
  if (op == "Add" && match_layer_norm(*this, n, result)) return result;
  if (fold_elementwise(*this, n, out, result)) return result;  // after the match: it lowers the inputs
  if (lower_math_op(*this, n, out, result) || lower_layout_op(*this, n, out, result) ||
      lower_conv_op(*this, n, out, result) || lower_rnn_op(*this, n, out, result)) {
    return result;
  }
  if (op == "Loop") return lower_rnn_loop(*this, n, out);
  if (op == "Scan" || op == "If") fail(n, "control flow other than a recurrent layer's Loop is not supported");
  fail(n, "operator " + op + " is not supported");
}

// The exporter's own shape for a graph output must agree with the lowering's (batch 1, symbolic
// dimensions free): a cross-check of the layout bookkeeping.
void Lowerer::check_declared_shape(const onnx::ValueInfoProto& o, const Value& v) const {
  if (!o.type().has_tensor_type() || !o.type().tensor_type().has_shape()) return;
  const auto& shape = o.type().tensor_type().shape();
  const std::vector<int> got = dims(v);
  bool ok = shape.dim_size() == static_cast<int>(got.size());
  for (int a = 0; ok && a < shape.dim_size(); ++a) {
    const auto& d = shape.dim(a);
    if (d.has_dim_value() && got[a] >= 0 && d.dim_value() != got[a] && !(a == 0 && got[a] == 1)) ok = false;
  }
  if (!ok) {
    std::string want = "[";
    for (int a = 0; a < shape.dim_size(); ++a) {
      want += (a ? ", " : "") + (shape.dim(a).has_dim_value() ? std::to_string(shape.dim(a).dim_value()) : std::string("?"));
    }
    throw Error(src_.label + ": graph output '" + o.name() + "' is declared " + want + "] but lowers to " +
                shape_str(Shape(got.begin(), got.end())));
  }
}

Graph Lowerer::run() {
  if (proto_.output_size() == 0) throw Error(src_.label + ": the graph has no outputs");
  if (proto_.sparse_initializer_size() > 0) throw Error(src_.label + ": sparse initializers are not supported");
  // Inputs first, in the graph's order (initializers listed as inputs, as old exporters do, are constants).
  for (const auto& in : proto_.input()) {
    if (!inits_.count(in.name())) value(in.name());
  }
  for (const auto& o : proto_.output()) {
    const Value& v = value(o.name());
    if (v.is_const) throw Error(src_.label + ": graph output '" + o.name() + "' is a constant");
    if (v.padded()) throw Error(src_.label + ": graph output '" + o.name() + "' is the output of a Pad");
    if (!in_order(v)) {
      throw Error(src_.label + ": graph output '" + o.name() + "' is a transposed view of the engine tensor "
                  "(the engine has no transpose to produce it)");
    }
    check_declared_shape(o, v);
    graph_.outputs.push_back(v.node);
    graph_.output_names.push_back(o.name());
  }
  graph_.source_format = "onnx";
  graph_.name = proto_.name();
  simplify_graph(graph_);
  // After the clean-up, so the projections' biases are inside their Dense nodes.
  formats::fuse_attention(graph_);
  return std::move(graph_);
}

}  // namespace tickinfer::formats::onnx_import
