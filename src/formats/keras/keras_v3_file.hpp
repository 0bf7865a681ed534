#pragma once
// Keras 3 `.keras` archives: ZIP with config.json, metadata.json and model.weights.h5.
#include <cstddef>
#include <string>

#include "model/graph.hpp"

namespace tickinfer::formats {

// Builds the graph of a .keras archive held in memory. `label` names the file in errors.
// Throws tickinfer::Error on any malformed, unsupported or inconsistent content.
Graph load_keras3_archive(const void* data, size_t size, const std::string& label);

}  // namespace tickinfer::formats
