#pragma once
// Test models with pruned weights, made from a committed model by the library's one-shot
// magnitude pruning (model/magnitude_prune.hpp): block 1 x 16 or unstructured.
#include "model/magnitude_prune.hpp"

namespace tickinfer::testing {

inline Graph pruned_graph(Graph g, double share, bool blocks, size_t min_size = 1024) {
  return magnitude_pruned(std::move(g), share, blocks, min_size);
}

}  // namespace tickinfer::testing
