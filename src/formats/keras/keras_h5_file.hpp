#pragma once
// Legacy Keras 2 full-model `.h5` files (written by tf.keras / tf_keras, and by Keras 3's legacy
// writer): root attribute `model_config` (JSON) and weights under `model_weights/<layer name>`.
#include <cstddef>
#include <string>

#include "model/graph.hpp"

namespace tickinfer::formats {

// Builds the graph of a legacy .h5 model held in memory. `label` names the file in errors.
// Throws tickinfer::Error on any malformed, unsupported or inconsistent content, including a
// weights-only file (no model_config).
Graph load_keras_h5(const void* data, size_t size, const std::string& label);

}  // namespace tickinfer::formats
