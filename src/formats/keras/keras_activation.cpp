#include "formats/keras/keras_activation.hpp"

#include <limits>

#include "formats/keras/keras_json.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

static ActivationSpec spec(ActKind kind, float alpha = 0.0f, float beta = 0.0f) {
  ActivationSpec s;
  s.kind = kind;
  s.alpha = alpha;
  s.beta = beta;
  return s;
}

static ActivationSpec activation_from_name(const std::string& name, KerasDialect dialect,
                                           const std::string& ctx) {
  if (name == "linear" || name.empty()) return spec(ActKind::Linear);
  if (name == "relu") return spec(ActKind::Relu);
  if (name == "relu6") {
    ActivationSpec s = spec(ActKind::Relu);
    s.max_value = 6.0f;
    return s;
  }
  // The activation *function* defaults to slope 0.2 in both Keras 2 (tf.nn.leaky_relu) and 3;
  // only the LeakyReLU *layer* defaults to 0.3.
  if (name == "leaky_relu") return spec(ActKind::LeakyRelu, 0.2f);
  if (name == "elu") return spec(ActKind::Elu, 1.0f);
  if (name == "selu") return spec(ActKind::Selu);
  if (name == "sigmoid") return spec(ActKind::Sigmoid);
  if (name == "hard_sigmoid") {
    // Keras 2: clip(0.2 x + 0.5). Keras 3: relu6(x + 3) / 6 == clip(x / 6 + 0.5).
    return dialect == KerasDialect::Keras2 ? spec(ActKind::HardSigmoid, 0.2f, 0.5f)
                                           : spec(ActKind::HardSigmoid, 1.0f / 6.0f, 0.5f);
  }
  if (name == "tanh") return spec(ActKind::Tanh);
  if (name == "softmax") return spec(ActKind::Softmax);
  if (name == "gelu") return spec(ActKind::Gelu);
  if (name == "gelu_approximate" || name == "approximate_gelu") return spec(ActKind::GeluTanh);
  if (name == "swish" || name == "silu") return spec(ActKind::Swish);
  if (name == "softplus") return spec(ActKind::Softplus);
  if (name == "softsign") return spec(ActKind::Softsign);
  if (name == "exponential") return spec(ActKind::Exponential);
  throw Error(ctx + ": activation '" + name + "' is not supported");
}

// Keras 3 may serialize gelu with its argument: {"config": {"name": "gelu", "approximate": true}}.
static ActivationSpec activation_from_function_dict(const json& value, KerasDialect dialect,
                                                    const std::string& ctx) {
  const json& config = value.contains("config") ? value["config"] : json();
  if (config.is_string()) return activation_from_name(config.get<std::string>(), dialect, ctx);
  if (config.is_object()) {
    std::string name = json_string(config, "name", "", ctx + ": activation");
    ActivationSpec s = activation_from_name(name, dialect, ctx);
    if (s.kind == ActKind::Gelu && json_bool(config, "approximate", false, ctx + ": activation")) {
      s.kind = ActKind::GeluTanh;
    }
    return s;
  }
  std::string class_name = json_string(value, "class_name", "", ctx + ": activation");
  return activation_from_name(class_name, dialect, ctx);
}

ActivationSpec activation_from_keras(const json& value, KerasDialect dialect, int input_rank,
                                     const std::string& ctx) {
  if (value.is_null()) return spec(ActKind::Linear);
  if (value.is_string()) return activation_from_name(value.get<std::string>(), dialect, ctx);
  if (!value.is_object()) {
    throw Error(ctx + ": activation must be a name or a serialized object, got " + json_brief(value));
  }
  std::string class_name = json_string(value, "class_name", "", ctx + ": activation");
  ActivationSpec s;
  const json& config = value.contains("config") ? value["config"] : json();
  if (config.is_object() && activation_layer_spec(class_name, config, dialect, input_rank, ctx, s)) {
    return s;
  }
  return activation_from_function_dict(value, dialect, ctx);
}

bool keras_axis_is_last(const json& axis, int input_rank) {
  const json& a = (axis.is_array() && axis.size() == 1) ? axis[0] : axis;
  if (!a.is_number_integer()) return false;
  int64_t v = a.get<int64_t>();
  return v == -1 || (input_rank > 0 && v == input_rank);
}

bool activation_layer_spec(const std::string& keras_class, const json& config, KerasDialect dialect,
                           int input_rank, const std::string& ctx, ActivationSpec& out) {
  if (keras_class == "Activation") {
    out = activation_from_keras(config.contains("activation") ? config["activation"] : json(),
                                dialect, input_rank, ctx);
    return true;
  }
  if (keras_class == "ReLU") {
    out = spec(ActKind::Relu);
    if (config.contains("max_value") && !config["max_value"].is_null()) {
      out.max_value = json_float(config, "max_value", 0.0f, ctx);
      if (out.max_value < 0.0f) throw Error(ctx + ": max_value must be >= 0");
    }
    out.alpha = json_float(config, "negative_slope", 0.0f, ctx);
    out.threshold = json_float(config, "threshold", 0.0f, ctx);
    return true;
  }
  if (keras_class == "LeakyReLU") {
    // Keras 2 names the slope `alpha`, Keras 3 `negative_slope`; both default to 0.3.
    const char* key = config.contains("negative_slope") ? "negative_slope" : "alpha";
    out = spec(ActKind::LeakyRelu, json_float(config, key, 0.3f, ctx));
    return true;
  }
  if (keras_class == "ELU") {
    out = spec(ActKind::Elu, json_float(config, "alpha", 1.0f, ctx));
    return true;
  }
  if (keras_class == "Softmax") {
    const json axis = config.contains("axis") ? config["axis"] : json(-1);
    if (!keras_axis_is_last(axis, input_rank)) {
      throw Error(ctx + ": axis=" + json_brief(axis) + " is not supported (only -1)");
    }
    out = spec(ActKind::Softmax);
    return true;
  }
  return false;
}

}  // namespace tickinfer::formats
