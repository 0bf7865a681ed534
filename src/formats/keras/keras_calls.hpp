#pragma once
// How a Keras model config says which tensors each layer call reads: tensor references in both
// dialects, a call's inputs and keywords, an operation's array arguments, and the model's input
// and output lists. Internal to keras_config.cpp; each parser throws Error "<ctx>: <problem>".
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/graph.hpp"

namespace tickinfer::formats {

inline constexpr int kMaxCallsPerLayer = 1024;

// Output `tensor` of call `call` (Keras' node_index) of layer `layer` (tensor > 0: a layer with
// several outputs, such as an LSTM's return_state).
struct TensorRef {
  std::string layer;
  int call = 0;
  int tensor = 0;
};

// One call of a layer: the tensors it was called on, in argument order (a recurrent layer's
// initial_state after its input), and its keyword arguments (nullptr if none).
struct LayerCall {
  std::vector<TensorRef> tensors;
  const nlohmann::json* kwargs = nullptr;
  // A Keras 3 operation's array or number arguments ({"class_name": "__numpy__", ...} or a plain
  // number): (position among the call's inputs, value), in order.
  std::vector<std::pair<size_t, const nlohmann::json*>> constants;
};

// obj[key] by reference (a JSON null if absent). A `cond ? obj[key] : json()` expression would
// copy, and pointers into the copy would dangle.
const nlohmann::json& member(const nlohmann::json& obj, const char* key);

// Reads a [name, node_index, tensor_index(, kwargs)] reference.
TensorRef tensor_ref(const nlohmann::json& ref, const std::string& ctx);

// One entry of `inbound_nodes` per call of the layer. noop_layer: the class is an inference
// no-op (training=True is accepted and reported through `training`); keyword_inputs: value and
// key may arrive as keywords (MultiHeadAttention); op_node: a Keras 3 operation, whose array
// and number arguments become LayerCall::constants.
std::vector<LayerCall> parse_inbound(const nlohmann::json& inbound, bool noop_layer, bool keyword_inputs,
                                     bool op_node, bool& training, const std::string& ctx);

// input_layers / output_layers: a single [name, node_index, 0] or a list of them.
std::vector<TensorRef> parse_endpoint_list(const nlohmann::json& v, const std::string& ctx);

// An operation's array argument (nested lists of a float dtype) or number, broadcast by numpy's
// rules (a leading axis beyond the target's is the batch's, of 1) to the un-batched `target`.
Weight constant_argument(const nlohmann::json& value, const Shape& target, const std::string& ctx);

}  // namespace tickinfer::formats
