#include "formats/keras/keras_layers.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "formats/keras/keras_activation.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_layer_parts.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

namespace layer_parts {

const json& config_value(const json& config, const char* key) {
  static const json kNull;
  auto it = config.find(key);
  return it == config.end() ? kNull : *it;
}

// A required positive integer parameter (units, filters).
int required_positive(const json& config, const char* key, const std::string& ctx) {
  int v = json_int(config, key, 0, 1, kMaxKerasDim, ctx);
  if (v == 0) throw Error(ctx + ": missing '" + key + "'");
  return v;
}

void reject_if_true(const json& config, const char* key, const std::string& ctx) {
  if (json_bool(config, key, false, ctx)) throw Error(ctx + ": " + key + "=true is not supported");
}

void require_channels_last(const json& config, const std::string& ctx) {
  std::string format = json_string(config, "data_format", "channels_last", ctx);
  if (format != "channels_last") {
    throw Error(ctx + ": data_format='" + format + "' is not supported (only channels_last)");
  }
}

Padding parse_padding(const json& config, bool allow_causal, const std::string& ctx) {
  std::string p = json_string(config, "padding", "valid", ctx);
  if (p == "valid") return Padding::Valid;
  if (p == "same") return Padding::Same;
  if (p == "causal" && allow_causal) return Padding::Causal;
  throw Error(ctx + ": padding='" + p + "' is not supported");
}

Weight filled(Shape shape, float value) {
  Weight w;
  w.data.assign(static_cast<size_t>(shape_size(shape)), value);
  w.shape = std::move(shape);
  return w;
}

// Fetches the layer's variables and checks their count against the configuration.
std::vector<Weight> fetch_weights(const KerasLayerRef& ref, WeightSource& source, size_t expected,
                                  const std::string& what, const std::string& ctx) {
  std::vector<Weight> w = source.layer_weights(ref);
  if (w.size() != expected) {
    throw Error(ctx + ": expected " + std::to_string(expected) + " weights (" + what + "), found " +
                std::to_string(w.size()));
  }
  return w;
}

void expect_shape(const Weight& w, const Shape& expected, const char* what, const std::string& ctx) {
  // A dimension of -1 in `expected` matches anything (the importer cannot know input sizes).
  bool ok = w.shape.size() == expected.size();
  for (size_t i = 0; ok && i < expected.size(); ++i) ok = expected[i] < 0 || expected[i] == w.shape[i];
  if (!ok) {
    Shape shown = expected;
    throw Error(ctx + ": " + what + " has shape " + shape_str(w.shape) + ", expected " +
                shape_str(shown) + " (-1 = any)");
  }
}

// A 2-D parameter as Keras writes it: [h, w] (an int means both; absent: fallback for both).
void json_int_pair(const json& c, const char* key, int fallback, int& h, int& w, const std::string& ctx) {
  const json& v = config_value(c, key);
  if (v.is_null()) {
    h = w = fallback;
  } else if (v.is_array()) {
    if (v.size() != 2) throw Error(ctx + ": '" + key + "' must have two elements, got " + json_brief(v));
    h = json_value_int(v[0], 1, kMaxKerasDim, ctx + ": '" + key + "'");
    w = json_value_int(v[1], 1, kMaxKerasDim, ctx + ": '" + key + "'");
  } else {
    h = w = json_value_int(v, 1, kMaxKerasDim, ctx + ": '" + key + "'");
  }
}

// kernel_size, strides and dilation_rate of a 2-D convolution into the node's window fields.
void read_window2d(const json& c, Node& n, const std::string& ctx) {
  if (config_value(c, "kernel_size").is_null()) throw Error(ctx + ": missing 'kernel_size'");
  json_int_pair(c, "kernel_size", 1, n.kernel_size, n.kernel_w, ctx);
  json_int_pair(c, "strides", 1, n.stride, n.stride_w, ctx);
  json_int_pair(c, "dilation_rate", 1, n.dilation, n.dilation_w, ctx);
  if ((n.stride > 1 || n.stride_w > 1) && (n.dilation > 1 || n.dilation_w > 1)) {
    throw Error(ctx + ": strides > 1 with dilation_rate > 1 is not supported (Keras refuses it too)");
  }
}

}  // namespace layer_parts

namespace {

using namespace layer_parts;

Node dense(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
           KerasDialect dialect, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Dense;
  n.units = required_positive(c, "units", ctx);
  if (!config_value(c, "lora_rank").is_null() && json_int(c, "lora_rank", 0, 0, kMaxKerasDim, ctx) > 0) {
    throw Error(ctx + ": lora_rank is not supported");
  }
  if (!config_value(c, "quantization_config").is_null()) {
    throw Error(ctx + ": quantization_config is not supported");
  }
  n.activation = activation_from_keras(config_value(c, "activation"), dialect, ranks[0], ctx);
  bool use_bias = json_bool(c, "use_bias", true, ctx);
  n.weights = fetch_weights(ref, ws, use_bias ? 2 : 1, use_bias ? "kernel, bias" : "kernel", ctx);
  expect_shape(n.weights[0], {-1, n.units}, "kernel", ctx);
  if (use_bias) {
    expect_shape(n.weights[1], {n.units}, "bias", ctx);
  } else {
    n.weights.push_back(filled({n.units}, 0.0f));
  }
  return n;
}

// What Conv1D and Conv2D read alike after their window sizes: groups, data format, padding, LoRA,
// activation, and the kernel (of `kernel_shape`, -1 for the input channels) and bias.
void conv_common(Node& n, const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
                 KerasDialect dialect, bool allow_causal, const Shape& kernel_shape, const std::string& ctx) {
  int groups = json_int(c, "groups", 1, 1, kMaxKerasDim, ctx);
  if (groups != 1) throw Error(ctx + ": groups=" + std::to_string(groups) + " is not supported");
  require_channels_last(c, ctx);
  n.padding = parse_padding(c, allow_causal, ctx);
  if (!config_value(c, "lora_rank").is_null() && json_int(c, "lora_rank", 0, 0, kMaxKerasDim, ctx) > 0) {
    throw Error(ctx + ": lora_rank is not supported");
  }
  n.activation = activation_from_keras(config_value(c, "activation"), dialect, ranks[0], ctx);
  bool use_bias = json_bool(c, "use_bias", true, ctx);
  n.weights = fetch_weights(ref, ws, use_bias ? 2 : 1, use_bias ? "kernel, bias" : "kernel", ctx);
  expect_shape(n.weights[0], kernel_shape, "kernel", ctx);
  if (use_bias) {
    expect_shape(n.weights[1], {n.units}, "bias", ctx);
  } else {
    n.weights.push_back(filled({n.units}, 0.0f));
  }
}

Node conv1d(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
            KerasDialect dialect, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Conv1D;
  n.units = required_positive(c, "filters", ctx);
  n.kernel_size = json_int_or_single_list(c, "kernel_size", 0, 1, kMaxKerasDim, ctx);
  if (n.kernel_size == 0) throw Error(ctx + ": missing 'kernel_size'");
  n.stride = json_int_or_single_list(c, "strides", 1, 1, kMaxKerasDim, ctx);
  n.dilation = json_int_or_single_list(c, "dilation_rate", 1, 1, kMaxKerasDim, ctx);
  conv_common(n, ref, c, ranks, ws, dialect, /*allow_causal=*/true, {n.kernel_size, -1, n.units}, ctx);
  return n;
}

Node conv2d(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
            KerasDialect dialect, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Conv2D;
  n.units = required_positive(c, "filters", ctx);
  read_window2d(c, n, ctx);
  conv_common(n, ref, c, ranks, ws, dialect, /*allow_causal=*/false, {n.kernel_size, n.kernel_w, -1, n.units}, ctx);
  return n;
}

void check_recurrent_options(const json& c, const std::string& ctx) {
  reject_if_true(c, "go_backwards", ctx);
  reject_if_true(c, "stateful", ctx);
  reject_if_true(c, "time_major", ctx);
}

// LSTM (gates = 4) and GRU (gates = 3) share the kernel / recurrent_kernel / bias layout.
Node recurrent(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
               KerasDialect dialect, bool is_lstm, const std::string& ctx) {
  Node n;
  n.kind = is_lstm ? OpKind::LSTM : OpKind::GRU;
  check_recurrent_options(c, ctx);
  n.units = required_positive(c, "units", ctx);
  if (n.units > kMaxKerasDim / 4) throw Error(ctx + ": units is too large");
  n.return_sequences = json_bool(c, "return_sequences", false, ctx);
  // An LSTM's return_state needs its final c, which the node hands out as one more row; a GRU's
  // state is its last output, which the caller takes from the output (keras_config.cpp).
  n.return_state = is_lstm && json_bool(c, "return_state", false, ctx);
  n.activation = activation_from_keras(
      c.contains("activation") ? c["activation"] : json("tanh"), dialect, ranks[0], ctx);
  n.recurrent_activation = activation_from_keras(
      c.contains("recurrent_activation") ? c["recurrent_activation"] : json("sigmoid"), dialect,
      ranks[0], ctx);
  if (n.activation.kind == ActKind::Softmax || n.recurrent_activation.kind == ActKind::Softmax) {
    throw Error(ctx + ": softmax as a recurrent activation is not supported");
  }
  n.reset_after = !is_lstm && json_bool(c, "reset_after", true, ctx);
  const int gates = is_lstm ? 4 : 3;
  const int cols = gates * n.units;
  bool use_bias = json_bool(c, "use_bias", true, ctx);
  n.weights = fetch_weights(ref, ws, use_bias ? 3 : 2,
                            use_bias ? "kernel, recurrent_kernel, bias" : "kernel, recurrent_kernel",
                            ctx);
  expect_shape(n.weights[0], {-1, cols}, "kernel", ctx);
  expect_shape(n.weights[1], {n.units, cols}, "recurrent_kernel", ctx);
  Shape bias_shape = n.reset_after ? Shape{2, cols} : Shape{cols};
  if (use_bias) {
    expect_shape(n.weights[2], bias_shape, "bias", ctx);
  } else {
    n.weights.push_back(filled(bias_shape, 0.0f));
  }
  return n;
}

// BatchNormalization and LayerNormalization: the variables present depend on center/scale.
Node normalization(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks,
                   WeightSource& ws, bool is_batch, const std::string& ctx) {
  Node n;
  n.kind = is_batch ? OpKind::BatchNorm : OpKind::LayerNorm;
  const json& axis = c.contains("axis") ? c["axis"] : json(-1);
  if (!keras_axis_is_last(axis, ranks[0])) {
    throw Error(ctx + ": axis=" + json_brief(axis) + " is not supported (only the last axis)");
  }
  n.epsilon = json_float(c, "epsilon", 1e-3f, ctx);
  if (!(n.epsilon >= 0.0f)) throw Error(ctx + ": epsilon must be >= 0");
  reject_if_true(c, "renorm", ctx);
  reject_if_true(c, "rms_scaling", ctx);
  const bool center = json_bool(c, "center", true, ctx);
  const bool scale = json_bool(c, "scale", true, ctx);
  const size_t expected = (center ? 1 : 0) + (scale ? 1 : 0) + (is_batch ? 2 : 0);
  if (expected == 0) {
    // LayerNormalization without center and scale saves no variable, so the channel count is not
    // known here: the caller fills gamma = 1, beta = 0 once the input shape is known.
    fetch_weights(ref, ws, 0, "none (center=false, scale=false)", ctx);
    return n;
  }
  std::string what = is_batch ? "gamma/beta as configured, moving_mean, moving_variance"
                              : "gamma/beta as configured";
  std::vector<Weight> saved = fetch_weights(ref, ws, expected, what, ctx);
  const int channels = saved[0].shape.empty() ? 0 : saved[0].shape[0];
  for (const Weight& w : saved) expect_shape(w, {channels}, "normalization parameter", ctx);
  size_t next = 0;
  n.weights.push_back(scale ? std::move(saved[next++]) : filled({channels}, 1.0f));
  n.weights.push_back(center ? std::move(saved[next++]) : filled({channels}, 0.0f));
  while (next < saved.size()) n.weights.push_back(std::move(saved[next++]));
  return n;
}

Node pooling(const json& c, OpKind kind, const std::string& ctx) {
  Node n;
  n.kind = kind;
  require_channels_last(c, ctx);
  n.pool_size = json_int_or_single_list(c, "pool_size", 2, 1, kMaxKerasDim, ctx);
  n.pool_stride = json_int_or_single_list(c, "strides", n.pool_size, 1, kMaxKerasDim, ctx);
  n.padding = parse_padding(c, /*allow_causal=*/false, ctx);
  return n;
}

// MaxPooling2D / AveragePooling2D: [h, w] pool_size (default 2 x 2), strides (null = pool_size).
Node pooling2d(const json& c, OpKind kind, const std::string& ctx) {
  Node n;
  n.kind = kind;
  require_channels_last(c, ctx);
  json_int_pair(c, "pool_size", 2, n.pool_size, n.pool_w, ctx);
  json_int_pair(c, "strides", 0, n.pool_stride, n.pool_stride_w, ctx);
  if (n.pool_stride == 0) {  // null: the pool size
    n.pool_stride = n.pool_size;
    n.pool_stride_w = n.pool_w;
  }
  n.padding = parse_padding(c, /*allow_causal=*/false, ctx);
  return n;
}

Node global_pooling(const json& c, OpKind kind, const std::string& ctx) {
  require_channels_last(c, ctx);
  Node n;
  n.kind = kind;
  n.keepdims = json_bool(c, "keepdims", false, ctx);
  return n;
}

Node reshape(const json& c, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Reshape;
  const json& target = config_value(c, "target_shape");
  if (!target.is_array() || target.empty() || target.size() > 8) {
    throw Error(ctx + ": target_shape must be a list of 1 to 8 dimensions, got " + json_brief(target));
  }
  int unknown = 0;
  for (const json& d : target) {
    int v = json_value_int(d, -1, kMaxKerasDim, ctx + ": target_shape");
    if (v == 0) throw Error(ctx + ": target_shape has a zero dimension");
    unknown += v == -1;
    n.target_shape.push_back(v);
  }
  if (unknown > 1) throw Error(ctx + ": target_shape may contain at most one -1");
  return n;
}

Node concatenate(const json& c, const std::vector<int>& ranks, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Concatenate;
  const int rank = ranks[0];
  // Keras counts the batch axis: axis 1 is the first un-batched axis, -1 the last. The Keras
  // value is kept (infer_shapes resolves it); only what can never be valid is rejected here.
  n.axis = json_int(c, "axis", -1, -rank, rank, ctx);
  if (n.axis == 0) throw Error(ctx + ": axis=0 (the batch axis) is not supported");
  return n;
}

Node activation_layer(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource&,
                      KerasDialect dialect, const std::string& ctx) {
  Node n;
  if (!activation_layer_spec(ref.keras_class, c, dialect, ranks[0], ctx, n.activation)) {
    throw Error(ctx + ": layer class is not supported");
  }
  n.kind = OpKind::Activation;
  return n;
}

Node of_kind(OpKind kind) {
  Node n;
  n.kind = kind;
  return n;
}

// How many inputs a class takes (OneOrThree: an LSTM's input, then initial_state h and c).
enum class Arity : uint8_t { One, TwoOrMore, Two, TwoOrThree, OneOrThree };

// Keras' Dot: a product of two computed tensors; the caller (keras_config.cpp) writes the
// transposes its axes call for around the MatMul.
Node dot(const json& c, const std::string& ctx) {
  reject_if_true(c, "normalize", ctx);
  return of_kind(OpKind::MatMul);
}

// One row per Keras class this importer converts: its inputs, whether it saves variables (and on
// its cell, as RNN layers do: "<path>/cell/vars" in .keras files), and its conversion. The one
// list: the supported-class check, the dispatch and the weight checks all read it.
struct KerasClass {
  std::string_view name;
  Arity arity;
  bool has_weights;
  bool weights_in_cell;
  Node (*convert)(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
                  KerasDialect dialect, const std::string& ctx);
  // Keras 3 keeps some layers' variables on named sublayers ("<path>/<sublayer>/vars"), read in
  // this order; empty: the layer's own vars.
  std::array<std::string_view, 4> sublayers = {};
  // Takes its second and third inputs (value, key) as call keywords too (tf_keras writes them so).
  bool keyword_inputs = false;
};

using WS = WeightSource;
using KD = KerasDialect;
using Ranks = std::vector<int>;
using Ref = KerasLayerRef;
using Ctx = std::string;

Node identity(const Ref&, const json&, const Ranks&, WS&, KD, const Ctx&) { return of_kind(OpKind::Identity); }

constexpr KerasClass kClasses[] = {
    {"Dense", Arity::One, true, false, dense},
    {"Conv1D", Arity::One, true, false, conv1d},
    {"Conv2D", Arity::One, true, false, conv2d},
    {"LSTM", Arity::OneOrThree, true, true,
     [](const Ref& r, const json& c, const Ranks& k, WS& w, KD d, const Ctx& x) { return recurrent(r, c, k, w, d, true, x); }},
    {"GRU", Arity::One, true, true,
     [](const Ref& r, const json& c, const Ranks& k, WS& w, KD d, const Ctx& x) { return recurrent(r, c, k, w, d, false, x); }},
    {"BatchNormalization", Arity::One, true, false,
     [](const Ref& r, const json& c, const Ranks& k, WS& w, KD, const Ctx& x) { return normalization(r, c, k, w, true, x); }},
    {"LayerNormalization", Arity::One, true, false,
     [](const Ref& r, const json& c, const Ranks& k, WS& w, KD, const Ctx& x) { return normalization(r, c, k, w, false, x); }},
    {"Activation", Arity::One, false, false, activation_layer},
    {"ReLU", Arity::One, false, false, activation_layer},
    {"LeakyReLU", Arity::One, false, false, activation_layer},
    {"ELU", Arity::One, false, false, activation_layer},
    {"Softmax", Arity::One, false, false, activation_layer},
    {"MaxPooling1D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return pooling(c, OpKind::MaxPool1D, x); }},
    {"AveragePooling1D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return pooling(c, OpKind::AvgPool1D, x); }},
    {"MaxPooling2D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return pooling2d(c, OpKind::MaxPool2D, x); }},
    {"AveragePooling2D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return pooling2d(c, OpKind::AvgPool2D, x); }},
    {"GlobalAveragePooling1D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return global_pooling(c, OpKind::GlobalAvgPool1D, x); }},
    {"GlobalMaxPooling1D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return global_pooling(c, OpKind::GlobalMaxPool1D, x); }},
    {"Flatten", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) {
       require_channels_last(c, x);
       return of_kind(OpKind::Flatten);
     }},
    {"Reshape", Arity::One, false, false, [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return reshape(c, x); }},
    {"Add", Arity::TwoOrMore, false, false, [](const Ref&, const json&, const Ranks&, WS&, KD, const Ctx&) { return of_kind(OpKind::Add); }},
    {"Subtract", Arity::Two, false, false,
     [](const Ref&, const json&, const Ranks&, WS&, KD, const Ctx&) { return of_kind(OpKind::Subtract); }},
    {"Multiply", Arity::TwoOrMore, false, false,
     [](const Ref&, const json&, const Ranks&, WS&, KD, const Ctx&) { return of_kind(OpKind::Multiply); }},
    {"Concatenate", Arity::TwoOrMore, false, false,
     [](const Ref&, const json& c, const Ranks& k, WS&, KD, const Ctx& x) { return concatenate(c, k, x); }},
    {"MultiHeadAttention", Arity::TwoOrThree, true, false, multi_head_attention,
     {{"query_dense", "key_dense", "value_dense", "output_dense"}}, true},
    {"ZeroPadding1D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks& k, WS&, KD, const Ctx& x) { return zero_padding(c, k, 1, x); }},
    {"ZeroPadding2D", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks& k, WS&, KD, const Ctx& x) { return zero_padding(c, k, 2, x); }},
    {"DepthwiseConv2D", Arity::One, true, false,
     [](const Ref& r, const json& c, const Ranks& k, WS& w, KD d, const Ctx& x) { return depthwise_conv2d(r, c, k, w, d, false, x); }},
    {"SeparableConv2D", Arity::One, true, false,
     [](const Ref& r, const json& c, const Ranks& k, WS& w, KD d, const Ctx& x) { return depthwise_conv2d(r, c, k, w, d, true, x); }},
    {"Dot", Arity::Two, false, false, [](const Ref&, const json& c, const Ranks&, WS&, KD, const Ctx& x) { return dot(c, x); }},
    {"Permute", Arity::One, false, false,
     [](const Ref&, const json& c, const Ranks& k, WS&, KD, const Ctx& x) { return permute(c, k, x); }},
    // Keras 3 operations on functional tensors (module keras.src.ops.numpy), saved as nodes of the
    // layer list; an array or number argument arrives as a Constant input (keras_config.cpp).
    {"ops.Pad", Arity::One, false, false,
     [](const Ref& r, const json& c, const Ranks& k, WS&, KD, const Ctx& x) { return ops_pad(r, c, k, x); }},
    {"ops.Add", Arity::Two, false, false, [](const Ref&, const json&, const Ranks&, WS&, KD, const Ctx&) { return of_kind(OpKind::Add); }},
    {"ops.Subtract", Arity::Two, false, false,
     [](const Ref&, const json&, const Ranks&, WS&, KD, const Ctx&) { return of_kind(OpKind::Subtract); }},
    {"ops.Multiply", Arity::Two, false, false,
     [](const Ref&, const json&, const Ranks&, WS&, KD, const Ctx&) { return of_kind(OpKind::Multiply); }},
    // Inference no-ops.
    {"Identity", Arity::One, false, false, identity},
    {"Dropout", Arity::One, false, false, identity},
    {"SpatialDropout1D", Arity::One, false, false, identity},
    {"GaussianNoise", Arity::One, false, false, identity},
    {"GaussianDropout", Arity::One, false, false, identity},
    {"AlphaDropout", Arity::One, false, false, identity},
    {"ActivityRegularization", Arity::One, false, false, identity},
};

const KerasClass* find_class(std::string_view name) {
  for (const KerasClass& k : kClasses) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace

bool is_supported_layer_class(const std::string& keras_class) { return find_class(keras_class) != nullptr; }

bool is_inference_noop_class(const std::string& keras_class) {
  const KerasClass* k = find_class(keras_class);
  return k != nullptr && k->convert == identity;
}

bool layer_weights_in_cell(const std::string& keras_class) {
  const KerasClass* k = find_class(keras_class);
  return k && k->weights_in_cell;
}

std::vector<std::string> layer_weight_sublayers(const std::string& keras_class) {
  const KerasClass* k = find_class(keras_class);
  std::vector<std::string> out;
  if (k) {
    for (std::string_view s : k->sublayers) {
      if (!s.empty()) out.emplace_back(s);
    }
  }
  return out;
}

bool layer_takes_keyword_inputs(const std::string& keras_class) {
  const KerasClass* k = find_class(keras_class);
  return k && k->keyword_inputs;
}

void check_float32_policy(const json& layer_config, const std::string& ctx) {
  const json& dtype = config_value(layer_config, "dtype");
  std::string name;
  if (dtype.is_null()) return;
  if (dtype.is_string()) {
    name = dtype.get<std::string>();
  } else if (dtype.is_object()) {
    // {"class_name": "DTypePolicy" | "Policy" | ..., "config": {"name": "float32"}}
    const json& cfg = config_value(dtype, "config");
    name = cfg.is_object() ? json_string(cfg, "name", "", ctx + ": dtype") : "";
    if (name.empty()) name = json_string(dtype, "class_name", "?", ctx + ": dtype");
  } else {
    throw Error(ctx + ": dtype must be a string or a dtype policy, got " + json_brief(dtype));
  }
  if (name != "float32") {
    throw Error(ctx + ": dtype policy '" + name + "' is not supported (only float32)");
  }
}

Node node_from_keras_layer(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks,
                           WeightSource& ws, KerasDialect dialect, const std::string& ctx) {
  const std::string& cls = ref.keras_class;
  if (!c.is_object()) throw Error(ctx + ": layer config must be an object");
  check_float32_policy(c, ctx);
  const KerasClass* k = find_class(cls);
  const Arity arity = k ? k->arity : Arity::One;
  if (ranks.empty()) throw Error(ctx + ": layer has no inputs");
  if (arity == Arity::One && ranks.size() != 1) {
    throw Error(ctx + ": expected 1 input, got " + std::to_string(ranks.size()) +
                (cls == "GRU" ? " (an initial_state is supported for LSTM only)" : ""));
  }
  if (arity == Arity::OneOrThree && ranks.size() != 1 && ranks.size() != 3) {
    throw Error(ctx + ": expected its input and, optionally, an initial_state of two tensors (h, c); got " +
                std::to_string(ranks.size()) + " tensors");
  }
  if (arity != Arity::One && arity != Arity::OneOrThree && (ranks.size() < 2 || (arity == Arity::Two && ranks.size() != 2) ||
                              (arity == Arity::TwoOrThree && ranks.size() > 3))) {
    const char* need = arity == Arity::Two ? "needs exactly 2 inputs"
                       : arity == Arity::TwoOrThree ? "needs 2 or 3 inputs (query, value, key)"
                                                    : "needs at least 2 inputs";
    throw Error(ctx + ": " + need + ", got " + std::to_string(ranks.size()));
  }
  if (!k) throw Error(ctx + ": layer class is not supported");
  Node n = k->convert(ref, c, ranks, ws, dialect, ctx);
  // Layers without variables must not have saved any (a mismatch means the config and weights
  // file disagree, e.g. a wrongly numbered weight path).
  // (An operation node is no layer: the weights file has no entry for it at all.)
  const bool operation = k->name.rfind("ops.", 0) == 0;
  if (!k->has_weights && !operation) fetch_weights(ref, ws, 0, "none", ctx);
  n.name = ref.name;
  n.keras_class = cls;
  return n;
}

int output_rank(const Node& node, const std::vector<int>& input_ranks) {
  const int in = input_ranks.empty() ? 0 : input_ranks[0];
  switch (node.kind) {
    case OpKind::Input: return static_cast<int>(node.shape.size());
    case OpKind::LSTM:
    case OpKind::GRU: return node.return_sequences || node.return_state ? 2 : 1;
    case OpKind::MatMul: return std::max(in, input_ranks.size() > 1 ? input_ranks[1] : 0);
    case OpKind::GlobalAvgPool1D:
    case OpKind::GlobalMaxPool1D: return node.keepdims ? in : std::max(in - 1, 0);
    case OpKind::Flatten: return 1;
    case OpKind::Reshape: return static_cast<int>(node.target_shape.size());
    case OpKind::MultiHeadAttention: return 2;
    case OpKind::Constant: return static_cast<int>(node.shape.size());
    default: return in;
  }
}

}  // namespace tickinfer::formats
