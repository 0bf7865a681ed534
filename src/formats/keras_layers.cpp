#include "formats/keras_layers.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "formats/keras_activation.hpp"
#include "formats/keras_json.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 6> kIdentityClasses = {
    "Dropout",      "SpatialDropout1D", "GaussianNoise",
    "GaussianDropout", "AlphaDropout",  "ActivityRegularization"};

constexpr std::array<std::string_view, 22> kSupportedClasses = {
    "Dense",      "Activation",         "ReLU",          "LeakyReLU",
    "ELU",        "Softmax",            "BatchNormalization", "LayerNormalization",
    "LSTM",       "GRU",                "Conv1D",        "MaxPooling1D",
    "AveragePooling1D", "GlobalAveragePooling1D", "GlobalMaxPooling1D", "Flatten",
    "Reshape",    "Add",                "Subtract",      "Multiply",
    "Concatenate", "Identity"};

bool in_list(std::string_view name, auto const& list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

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

Node conv1d(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
            KerasDialect dialect, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Conv1D;
  n.units = required_positive(c, "filters", ctx);
  n.kernel_size = json_int_or_single_list(c, "kernel_size", 0, 1, kMaxKerasDim, ctx);
  if (n.kernel_size == 0) throw Error(ctx + ": missing 'kernel_size'");
  n.stride = json_int_or_single_list(c, "strides", 1, 1, kMaxKerasDim, ctx);
  n.dilation = json_int_or_single_list(c, "dilation_rate", 1, 1, kMaxKerasDim, ctx);
  int groups = json_int(c, "groups", 1, 1, kMaxKerasDim, ctx);
  if (groups != 1) throw Error(ctx + ": groups=" + std::to_string(groups) + " is not supported");
  require_channels_last(c, ctx);
  n.padding = parse_padding(c, /*allow_causal=*/true, ctx);
  if (!config_value(c, "lora_rank").is_null() && json_int(c, "lora_rank", 0, 0, kMaxKerasDim, ctx) > 0) {
    throw Error(ctx + ": lora_rank is not supported");
  }
  n.activation = activation_from_keras(config_value(c, "activation"), dialect, ranks[0], ctx);
  bool use_bias = json_bool(c, "use_bias", true, ctx);
  n.weights = fetch_weights(ref, ws, use_bias ? 2 : 1, use_bias ? "kernel, bias" : "kernel", ctx);
  expect_shape(n.weights[0], {n.kernel_size, -1, n.units}, "kernel", ctx);
  if (use_bias) {
    expect_shape(n.weights[1], {n.units}, "bias", ctx);
  } else {
    n.weights.push_back(filled({n.units}, 0.0f));
  }
  return n;
}

void check_recurrent_options(const json& c, const std::string& ctx) {
  reject_if_true(c, "go_backwards", ctx);
  reject_if_true(c, "stateful", ctx);
  reject_if_true(c, "return_state", ctx);
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

}  // namespace

bool is_supported_layer_class(const std::string& keras_class) {
  return in_list(keras_class, kSupportedClasses) || in_list(keras_class, kIdentityClasses);
}

bool layer_weights_in_cell(const std::string& keras_class) {
  return keras_class == "LSTM" || keras_class == "GRU";
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
  const bool is_merge = cls == "Add" || cls == "Subtract" || cls == "Multiply" || cls == "Concatenate";
  if (ranks.empty()) throw Error(ctx + ": layer has no inputs");
  if (!is_merge && ranks.size() != 1) {
    throw Error(ctx + ": expected 1 input, got " + std::to_string(ranks.size()));
  }
  if (is_merge && (ranks.size() < 2 || (cls == "Subtract" && ranks.size() != 2))) {
    throw Error(ctx + ": " + (cls == "Subtract" ? std::string("needs exactly 2 inputs")
                                                : std::string("needs at least 2 inputs")) +
                ", got " + std::to_string(ranks.size()));
  }

  Node n;
  ActivationSpec act;
  if (cls == "Dense") {
    n = dense(ref, c, ranks, ws, dialect, ctx);
  } else if (cls == "Conv1D") {
    n = conv1d(ref, c, ranks, ws, dialect, ctx);
  } else if (cls == "LSTM" || cls == "GRU") {
    n = recurrent(ref, c, ranks, ws, dialect, cls == "LSTM", ctx);
  } else if (cls == "BatchNormalization" || cls == "LayerNormalization") {
    n = normalization(ref, c, ranks, ws, cls == "BatchNormalization", ctx);
  } else if (activation_layer_spec(cls, c, dialect, ranks[0], ctx, act)) {
    n.kind = OpKind::Activation;
    n.activation = act;
  } else if (cls == "MaxPooling1D") {
    n = pooling(c, OpKind::MaxPool1D, ctx);
  } else if (cls == "AveragePooling1D") {
    n = pooling(c, OpKind::AvgPool1D, ctx);
  } else if (cls == "GlobalAveragePooling1D" || cls == "GlobalMaxPooling1D") {
    require_channels_last(c, ctx);
    n.kind = cls == "GlobalMaxPooling1D" ? OpKind::GlobalMaxPool1D : OpKind::GlobalAvgPool1D;
    n.keepdims = json_bool(c, "keepdims", false, ctx);
  } else if (cls == "Flatten") {
    require_channels_last(c, ctx);
    n.kind = OpKind::Flatten;
  } else if (cls == "Reshape") {
    n = reshape(c, ctx);
  } else if (cls == "Add") {
    n.kind = OpKind::Add;
  } else if (cls == "Subtract") {
    n.kind = OpKind::Subtract;
  } else if (cls == "Multiply") {
    n.kind = OpKind::Multiply;
  } else if (cls == "Concatenate") {
    n = concatenate(c, ranks, ctx);
  } else if (cls == "Identity" || in_list(cls, kIdentityClasses)) {
    n.kind = OpKind::Identity;
  } else {
    throw Error(ctx + ": layer class is not supported");
  }
  // Layers without variables must not have saved any (a mismatch means the config and weights
  // file disagree, e.g. a wrongly numbered weight path).
  const bool has_weights = cls == "Dense" || cls == "Conv1D" || cls == "LSTM" || cls == "GRU" ||
                           cls == "BatchNormalization" || cls == "LayerNormalization";
  if (!has_weights) fetch_weights(ref, ws, 0, "none", ctx);
  n.name = ref.name;
  n.keras_class = cls;
  return n;
}

int output_rank(const Node& node, const std::vector<int>& input_ranks) {
  const int in = input_ranks.empty() ? 0 : input_ranks[0];
  switch (node.kind) {
    case OpKind::Input: return static_cast<int>(node.shape.size());
    case OpKind::LSTM:
    case OpKind::GRU: return node.return_sequences ? 2 : 1;
    case OpKind::GlobalAvgPool1D:
    case OpKind::GlobalMaxPool1D: return node.keepdims ? in : std::max(in - 1, 0);
    case OpKind::Flatten: return 1;
    case OpKind::Reshape: return static_cast<int>(node.target_shape.size());
    default: return in;
  }
}

}  // namespace tickinfer::formats
