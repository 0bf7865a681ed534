// A Keras layer list's calls and references (keras_calls.hpp).
#include "formats/keras/keras_calls.hpp"

#include <algorithm>
#include <functional>

#include "formats/keras/keras_json.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

// obj[key] by reference (a JSON null if absent). A `cond ? obj[key] : json()` expression would
// copy, and pointers into the copy would dangle.
const json& member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// Reads a [name, node_index, tensor_index(, kwargs)] reference.
TensorRef tensor_ref(const json& ref, const std::string& ctx) {
  if (!ref.is_array() || ref.size() < 3 || ref.size() > 4 || !ref[0].is_string()) {
    throw Error(ctx + ": malformed tensor reference " + json_brief(ref));
  }
  TensorRef t;
  t.layer = ref[0].get<std::string>();
  t.call = json_value_int(ref[1], 0, kMaxCallsPerLayer - 1, ctx + ": node index");
  t.tensor = json_value_int(ref[2], 0, 1 << 20, ctx + ": tensor index");
  if (ref.size() == 4 && ref[3].is_object() && json_bool(ref[3], "training", false, ctx)) {
    // tf_keras applies such a layer as in training at every inference (Dropout: a random output).
    throw Error(ctx + ": training=true call argument is not supported (tf_keras runs the layer in training mode "
                      "at inference too)");
  }
  return t;
}

namespace {

bool is_keras3_tensor(const json& v) {
  return v.is_object() && v.contains("class_name") && v["class_name"] == "__keras_tensor__";
}

// Collects Keras 3 tensor arguments ({"class_name": "__keras_tensor__", ...}) in order. Depth is
// bounded by parse_json_bounded.
void collect_keras3_tensors(const json& v, std::vector<TensorRef>& out, const std::string& ctx) {
  if (is_keras3_tensor(v)) {
    const json& config = member(v, "config");
    if (!config.is_object() || !config.contains("keras_history")) {
      throw Error(ctx + ": tensor argument without keras_history");
    }
    out.push_back(tensor_ref(config["keras_history"], ctx));
  } else if (v.is_array()) {
    for (const json& item : v) collect_keras3_tensors(item, out, ctx);
  } else if (v.is_object()) {
    for (const auto& item : v.items()) collect_keras3_tensors(item.value(), out, ctx);
  }
}

// The keyword names under which MultiHeadAttention-like layers (layer_takes_keyword_inputs) may
// be handed their inputs, in input order.
constexpr const char* kKeywordInputs[] = {"query", "value", "key"};

// One inbound node (one call of the layer) -> its input tensors and keywords, for either dialect:
//   Keras 3: {"args": [tensor | [tensor, ...]], "kwargs": {...}}
//   Keras 2: [[name, node_index, tensor_index, kwargs], ...]
// Tensors passed by keyword are taken (after the positional ones, in kKeywordInputs' order) only
// by layers that name their inputs so; anywhere else they are refused.
LayerCall parse_call(const json& node, bool noop_layer, bool keyword_inputs, bool op_node, bool& training,
                     const std::string& ctx) {
  LayerCall call;
  std::vector<TensorRef>& refs = call.tensors;
  if (node.is_object()) {
    const json& args = member(node, "args");
    if (op_node && args.is_array()) {
      // An operation's arguments in order: tensors, and arrays or numbers as constants.
      for (const json& arg : args) {
        const bool array = arg.is_object() && member(arg, "class_name") == "__numpy__";
        if (array || arg.is_number()) {
          call.constants.emplace_back(refs.size() + call.constants.size(), &arg);
        } else {
          collect_keras3_tensors(arg, refs, ctx);
        }
      }
    } else {
      collect_keras3_tensors(args, refs, ctx);
    }
    const json& kwargs = member(node, "kwargs");
    if (kwargs.is_object()) {
      call.kwargs = &kwargs;
      for (const auto& item : kwargs.items()) {
        std::vector<TensorRef> in_kwarg;
        collect_keras3_tensors(item.value(), in_kwarg, ctx);
        const bool input_name = std::find_if(std::begin(kKeywordInputs), std::end(kKeywordInputs), [&](const char* k) {
                                  return item.key() == k;
                                }) != std::end(kKeywordInputs);
        if (item.key() == "initial_state") continue;  // taken below; layers without a state refuse it by count
        if (!in_kwarg.empty() && !(keyword_inputs && input_name && in_kwarg.size() == 1)) {
          throw Error(ctx + ": tensor keyword argument '" + item.key() + "' is not supported");
        }
      }
      // A recurrent layer's starting state (Keras 3 passes it by keyword; tf_keras writes it
      // as further inputs of the call), after the positional input.
      if (kwargs.contains("initial_state")) collect_keras3_tensors(kwargs["initial_state"], refs, ctx);
      if (keyword_inputs) {
        for (const char* name : kKeywordInputs) {
          if (kwargs.contains(name)) collect_keras3_tensors(kwargs[name], refs, ctx);
        }
      }
      if (json_bool(kwargs, "training", false, ctx)) {
        if (!noop_layer) {
          throw Error(ctx + ": training=true call argument is not supported (only layers that are the identity at "
                            "inference, such as Dropout, accept it)");
        }
        training = true;
      }
    }
  } else if (node.is_array()) {
    for (const json& ref : node) {
      refs.push_back(tensor_ref(ref, ctx));
      if (ref.size() == 4 && ref[3].is_object() && !call.kwargs) call.kwargs = &ref[3];
    }
    if (keyword_inputs && call.kwargs) {
      for (const char* name : kKeywordInputs) {
        if (call.kwargs->contains(name)) refs.push_back(tensor_ref((*call.kwargs)[name], ctx + ": keyword '" + name + "'"));
      }
    }
  } else {
    throw Error(ctx + ": malformed inbound node " + json_brief(node));
  }
  if (refs.empty()) throw Error(ctx + ": a call of the layer has no input tensors");
  return call;
}

}  // namespace

std::vector<LayerCall> parse_inbound(const json& inbound, bool noop_layer, bool keyword_inputs, bool op_node,
                                     bool& training, const std::string& ctx) {
  std::vector<LayerCall> calls;
  if (inbound.is_null()) return calls;
  if (!inbound.is_array()) throw Error(ctx + ": inbound_nodes must be a list");
  if (inbound.size() > static_cast<size_t>(kMaxCallsPerLayer)) throw Error(ctx + ": too many calls");
  for (const json& node : inbound) calls.push_back(parse_call(node, noop_layer, keyword_inputs, op_node, training, ctx));
  return calls;
}

// input_layers / output_layers: a single [name, node_index, 0] or a list of them.
std::vector<TensorRef> parse_endpoint_list(const json& v, const std::string& ctx) {
  std::vector<TensorRef> refs;
  if (!v.is_array() || v.empty()) throw Error(ctx + " must be a non-empty list");
  if (v[0].is_string()) {
    refs.push_back(tensor_ref(v, ctx));
  } else {
    for (const json& ref : v) refs.push_back(tensor_ref(ref, ctx));
  }
  return refs;
}

// The array (nested lists, float dtype) or number of an operation's argument, broadcast to the
// un-batched `target` shape.
Weight constant_argument(const json& value, const Shape& target, const std::string& ctx) {
  const json* v = &value;
  if (value.is_object()) {
    const std::string dtype = json_string(member(value, "config"), "dtype", "float32", ctx + ": constant");
    if (dtype != "float32" && dtype != "float64") throw Error(ctx + ": a " + dtype + " constant is not supported");
    v = &member(member(value, "config"), "value");
  }
  Shape shape;
  for (const json* d = v; d->is_array(); d = &(*d)[0]) {
    if (d->empty() || shape.size() > 9) throw Error(ctx + ": constant of an unsupported shape");
    shape.push_back(static_cast<int>(d->size()));
  }
  std::vector<float> flat;
  flat.reserve(static_cast<size_t>(shape_size(shape)));
  std::function<void(const json&, size_t)> walk = [&](const json& node, size_t axis) {
    if (axis == shape.size()) {
      if (!node.is_number()) throw Error(ctx + ": constant holds a non-number");
      flat.push_back(node.get<float>());
      return;
    }
    if (!node.is_array() || static_cast<int>(node.size()) != shape[axis]) throw Error(ctx + ": ragged constant");
    for (const json& item : node) walk(item, axis + 1);
  };
  walk(*v, 0);
  // numpy alignment against [batch, target...]: a leading axis beyond the target's is the batch's.
  if (shape.size() == target.size() + 1) {
    if (shape[0] != 1) throw Error(ctx + ": a constant with a batch axis of " + std::to_string(shape[0]) + " is not supported");
    shape.erase(shape.begin());
  }
  if (shape.size() > target.size()) throw Error(ctx + ": constant " + shape_str(shape) + " does not broadcast to " + shape_str(target));
  const size_t offset = target.size() - shape.size();
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] != 1 && shape[a] != target[offset + a]) {
      throw Error(ctx + ": constant " + shape_str(shape) + " does not broadcast to " + shape_str(target));
    }
  }
  // The constant's stride along each target axis: 0 where it broadcasts (absent or of size 1).
  std::vector<size_t> stride(target.size(), 0);
  for (size_t a = shape.size(), s = 1; a-- > 0; s *= static_cast<size_t>(shape[a])) {
    if (shape[a] != 1) stride[offset + a] = s;
  }
  Weight w;
  w.shape = target;
  w.data.resize(static_cast<size_t>(shape_size(target)));
  for (size_t i = 0; i < w.data.size(); ++i) {
    size_t rest = i, from = 0;
    for (size_t a = target.size(); a-- > 0;) {
      from += rest % static_cast<size_t>(target[a]) * stride[a];
      rest /= static_cast<size_t>(target[a]);
    }
    w.data[i] = flat[from];
  }
  return w;
}

}  // namespace tickinfer::formats
