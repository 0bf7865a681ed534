#pragma once
// The importer's notices about a model file (Graph::warnings, e.g. tfmot pruning wrappers left
// in), printed once at load by every command that loads a model for the user.
#include <cstdio>
#include <string>

#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

inline void print_load_warnings(const Model& model, const std::string& path) {
  for (const std::string& w : model.graph().warnings) std::fprintf(stderr, "tickinfer: warning: %s: %s\n", path.c_str(), w.c_str());
}

}  // namespace tickinfer::cli
