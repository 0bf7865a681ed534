#pragma once
// Keras activation spellings -> ActivationSpec.
#include <string>

#include <nlohmann/json.hpp>

#include "formats/keras/keras_config.hpp"
#include "model/graph.hpp"

namespace tickinfer::formats {

// Converts a layer's `activation` config value: a name ("relu", "hard_sigmoid", null = linear) or
// a serialized dict ({"class_name": "function", "config": "relu"}, or an activation layer such as
// {"class_name": "LeakyReLU", "config": {...}}). The dialect decides Keras-version-dependent
// meanings (hard_sigmoid). Throws Error "<ctx>: activation 'x' is not supported".
// `input_rank` is the un-batched rank of the tensor it applies to (checks Softmax's axis).
ActivationSpec activation_from_keras(const nlohmann::json& value, KerasDialect dialect, int input_rank,
                                     const std::string& ctx);

// The activation computed by an activation *layer* (ReLU, LeakyReLU, ELU, Softmax, Activation)
// from its config. Returns false if `keras_class` is not one of those.
bool activation_layer_spec(const std::string& keras_class, const nlohmann::json& config,
                           KerasDialect dialect, int input_rank, const std::string& ctx,
                           ActivationSpec& out);

// True if a Keras `axis` value (int or 1-element list, counting the batch dimension) names the
// last axis of a tensor whose un-batched rank is `input_rank`: -1 or input_rank.
bool keras_axis_is_last(const nlohmann::json& axis, int input_rank);

}  // namespace tickinfer::formats
